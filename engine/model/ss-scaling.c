/* ss-scaling.c: sky level and scale between input units and [0, 1]. */
#include "ss-scaling.h"
#include "ss-error.h"
#include "ss-mem.h"
#include "ss-select.h"

#include <math.h>

double
ss_median (const float *data, gsize n)
{
  SsSelectView all;
  ss_select_view_init (&all);
  return ss_select_median (data, n, &all);
}

double
ss_mad (const float *data, gsize n, double centre)
{
  SsSelectView deviations;
  ss_select_view_init (&deviations);
  deviations.absolute = TRUE;
  deviations.centre = (float) centre;
  return isfinite (centre) ? ss_select_median (data, n, &deviations) : NAN;
}

/* The float farthest from CENTRE on SIDE (+1 or -1) with |x - centre| <=
 * RADIUS in double, the test the clipping always used. */
static float
clip_bound (double centre, double radius, int side)
{
  float outward = side > 0 ? INFINITY : -INFINITY;
  float x = (float) (centre + side * radius);
  while (fabs ((double) x - centre) > radius)
    x = nextafterf (x, (float) centre);
  for (float further = nextafterf (x, outward); fabs ((double) further - centre) <= radius;
       further = nextafterf (x, outward))
    x = further;
  return x;
}

/* Median after rejecting values beyond 3 sigma (sigma from the MAD), a few
 * rounds: a sky estimate that bright stars do not pull up. Every round reads
 * the data where they are: nothing is copied. */
static double
clipped_median (const float *data, gsize n)
{
  double centre = ss_median (data, n);
  for (int round = 0; round < 5 && isfinite (centre); round++)
    {
      double sigma = 1.4826 * ss_mad (data, n, centre);
      if (!(sigma > 0))
        break;
      SsSelectView kept;
      ss_select_view_init (&kept);
      kept.low = clip_bound (centre, 3 * sigma, -1);
      kept.high = clip_bound (centre, 3 * sigma, +1);
      double next = ss_select_median (data, n, &kept);
      if (next == centre)
        break;
      centre = next;
    }
  return centre;
}

gboolean
ss_scaling_estimate (const float *data, gsize n, SsSkyMode mode, double sky_value,
                     SsScaling *scaling, GError **error)
{
  double sky = 0;
  switch (mode)
    {
    case SS_SKY_NONE:
      sky = 0;
      break;
    case SS_SKY_MEDIAN:
      sky = ss_median (data, n);
      break;
    case SS_SKY_CLIPPED_MEDIAN:
      sky = clipped_median (data, n);
      break;
    case SS_SKY_VALUE:
      sky = sky_value;
      break;
    }
  double top = -INFINITY, bottom = INFINITY;
  gsize finite = 0;
#pragma omp parallel for reduction(max : top) reduction(min : bottom) reduction(+ : finite) \
  schedule(static) if (n > SS_PARALLEL_PIXELS)
  for (gsize i = 0; i < n; i++)
    if (isfinite (data[i]))
      {
        top = MAX (top, data[i]);
        bottom = MIN (bottom, data[i]);
        finite++;
      }
  if (finite == 0)
    {
      g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT, "the image has no finite pixels");
      return FALSE;
    }
  if (!isfinite (sky))
    {
      g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT, "the sky level %g is not finite", sky);
      return FALSE;
    }
  double scale = top - sky;
  if (!(scale > 0))
    {
      g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT,
                   "nothing above the sky level %g (maximum %g): the image is flat or the sky too high",
                   sky, top);
      return FALSE;
    }
  /* A sky given far below the data (--sky -1e30) leaves them a constant
   * once scaled: float32's 24 bits keep the data's range only while it is
   * more than SS_SKY_MAX_DEPTH⁻¹ of the scale, so the image would come out
   * flat without a word. */
  if (mode == SS_SKY_VALUE && top > bottom && scale > SS_SKY_MAX_DEPTH * (top - bottom))
    {
      g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT,
                   "the sky level %g lies %.3g times the data's range (%g to %g) below their "
                   "top: scaled, the image would be lost to rounding; give a sky within or "
                   "near the data's range", sky, scale / (top - bottom), bottom, top);
      return FALSE;
    }
  scaling->sky = sky;
  scaling->scale = scale;
  return TRUE;
}

void
ss_scaling_apply (const SsScaling *scaling, const float *in, float *out, gsize n,
                  gboolean clamp_negative)
{
  double inv = 1.0 / scaling->scale;
#pragma omp parallel for schedule(static) if (n > SS_PARALLEL_PIXELS)
  for (gsize i = 0; i < n; i++)
    {
      float v = (float) ((in[i] - scaling->sky) * inv);
      out[i] = (clamp_negative && v < 0) ? 0.0f : v;
    }
}

void
ss_scaling_unapply (const SsScaling *scaling, const float *in, float *out, gsize n)
{
#pragma omp parallel for schedule(static) if (n > SS_PARALLEL_PIXELS)
  for (gsize i = 0; i < n; i++)
    out[i] = (float) (in[i] * scaling->scale + scaling->sky);
}

double
ss_scaling_background (const SsScaling *scaling)
{
  double background = scaling->scale > 0 ? scaling->sky / scaling->scale : 0;
  return isfinite (background) ? MAX (background, 0) : 0;
}
