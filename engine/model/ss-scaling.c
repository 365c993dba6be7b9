/* ss-scaling.c: sky level and scale between input units and [0, 1]. */
#include "ss-scaling.h"
#include "ss-error.h"

#include <math.h>

static float
select_kth (float *v, gsize n, gsize k)
{
  /* Hoare-style quickselect: O(n) on average, in place. */
  gsize lo = 0, hi = n - 1;
  while (lo < hi)
    {
      float pivot = v[lo + (hi - lo) / 2];
      gsize i = lo, j = hi;
      while (i <= j)
        {
          while (v[i] < pivot)
            i++;
          while (v[j] > pivot)
            j--;
          if (i <= j)
            {
              float t = v[i];
              v[i] = v[j];
              v[j] = t;
              i++;
              if (j == 0)
                break;
              j--;
            }
        }
      if (k <= j)
        hi = j;
      else if (k >= i)
        lo = i;
      else
        break;
    }
  return v[k];
}

static double
median_of_copy (float *v, gsize count)
{
  if (count == 0)
    return NAN;
  double upper = select_kth (v, count, count / 2);
  if (count % 2)
    return upper;
  /* Even count: the largest of the lower half sits below index count/2. */
  float lower = v[0];
  for (gsize i = 1; i < count / 2; i++)
    lower = MAX (lower, v[i]);
  return 0.5 * (upper + lower);
}

double
ss_median (const float *data, gsize n)
{
  float *copy = g_new (float, MAX (n, 1));
  gsize count = 0;
  for (gsize i = 0; i < n; i++)
    if (isfinite (data[i]))
      copy[count++] = data[i];
  double median = median_of_copy (copy, count);
  g_free (copy);
  return median;
}

/* Median after rejecting values beyond 3 sigma (sigma from the MAD), a few
 * rounds: a sky estimate that bright stars do not pull up. */
static double
clipped_median (const float *data, gsize n)
{
  double centre = ss_median (data, n);
  float *dev = g_new (float, MAX (n, 1));
  float *kept = g_new (float, MAX (n, 1));
  for (int round = 0; round < 5 && isfinite (centre); round++)
    {
      gsize count = 0;
      for (gsize i = 0; i < n; i++)
        if (isfinite (data[i]))
          dev[count++] = fabsf (data[i] - (float) centre);
      double sigma = 1.4826 * median_of_copy (dev, count);
      if (!(sigma > 0))
        break;
      gsize k = 0;
      for (gsize i = 0; i < n; i++)
        if (isfinite (data[i]) && fabs (data[i] - centre) <= 3 * sigma)
          kept[k++] = data[i];
      double next = median_of_copy (kept, k);
      if (next == centre)
        break;
      centre = next;
    }
  g_free (dev);
  g_free (kept);
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
  double top = -INFINITY;
  gsize finite = 0;
  for (gsize i = 0; i < n; i++)
    if (isfinite (data[i]))
      {
        top = MAX (top, data[i]);
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
  scaling->sky = sky;
  scaling->scale = scale;
  return TRUE;
}

void
ss_scaling_apply (const SsScaling *scaling, const float *in, float *out, gsize n,
                  gboolean clamp_negative)
{
  double inv = 1.0 / scaling->scale;
  for (gsize i = 0; i < n; i++)
    {
      float v = (float) ((in[i] - scaling->sky) * inv);
      out[i] = (clamp_negative && v < 0) ? 0.0f : v;
    }
}

void
ss_scaling_unapply (const SsScaling *scaling, const float *in, float *out, gsize n)
{
  for (gsize i = 0; i < n; i++)
    out[i] = (float) (in[i] * scaling->scale + scaling->sky);
}

double
ss_scaling_background (const SsScaling *scaling)
{
  double background = scaling->scale > 0 ? scaling->sky / scaling->scale : 0;
  return isfinite (background) ? MAX (background, 0) : 0;
}
