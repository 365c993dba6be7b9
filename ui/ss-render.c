/* ss-render.c: stretch, limits and colour maps for display. */
#include "ss-render.h"
#include "ss-error.h"
#include "ss-report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void
ss_display_init (SsDisplay *display)
{
  display->stretch = SS_STRETCH_ASINH;
  display->limits = SS_LIMITS_99_5;
  display->colormap = SS_COLORMAP_GREY;
}

gboolean
ss_limits_percentiles (SsLimits limits, double *low_percent, double *high_percent)
{
  double kept;
  switch (limits)
    {
    case SS_LIMITS_MINMAX: kept = 100.0; break;
    case SS_LIMITS_99_5: kept = 99.5; break;
    case SS_LIMITS_99: kept = 99.0; break;
    case SS_LIMITS_95: kept = 95.0; break;
    case SS_LIMITS_ZSCALE:
    default:
      return FALSE;
    }
  /* Clip the same share at both ends, as DS9's "99.5 %" does. */
  *low_percent = (100.0 - kept) / 2.0;
  *high_percent = 100.0 - *low_percent;
  return TRUE;
}

/* ---- zscale --------------------------------------------------------------- */

#define ZSCALE_SAMPLES 1000
#define ZSCALE_CONTRAST 0.25
#define ZSCALE_KREJ 2.5
#define ZSCALE_MAX_ITERATIONS 5
#define ZSCALE_MAX_REJECT 0.5
#define ZSCALE_MIN_PIXELS 5

static int
compare_floats (const void *a, const void *b)
{
  float fa = *(const float *) a, fb = *(const float *) b;
  return (fa > fb) - (fa < fb);
}

/* Up to ZSCALE_SAMPLES finite values taken at a regular stride, sorted. */
static float *
zscale_sample (const float *data, gsize n, gsize *count)
{
  gsize stride = MAX ((gsize) 1, n / ZSCALE_SAMPLES);
  float *sample = g_new (float, ZSCALE_SAMPLES + 1);
  gsize k = 0;
  for (gsize i = 0; i < n && k < ZSCALE_SAMPLES; i += stride)
    if (isfinite (data[i]))
      sample[k++] = data[i];
  /* A mostly blank image: fall back to scanning every pixel. */
  if (k < ZSCALE_MIN_PIXELS)
    {
      k = 0;
      for (gsize i = 0; i < n && k < ZSCALE_SAMPLES; i++)
        if (isfinite (data[i]))
          sample[k++] = data[i];
    }
  qsort (sample, k, sizeof (float), compare_floats);
  *count = k;
  return sample;
}

/* Least-squares line value = intercept + slope * index over the unrejected points. */
static gboolean
zscale_fit_line (const float *sample, const gboolean *bad, gsize n, double *intercept,
                 double *slope)
{
  double sx = 0, sy = 0, sxx = 0, sxy = 0, count = 0;
  for (gsize i = 0; i < n; i++)
    if (!bad[i])
      {
        double x = (double) i, y = sample[i];
        sx += x; sy += y; sxx += x * x; sxy += x * y; count += 1;
      }
  double det = count * sxx - sx * sx;
  if (count < 2 || det == 0)
    return FALSE;
  *slope = (count * sxy - sx * sy) / det;
  *intercept = (sy - *slope * sx) / count;
  return TRUE;
}

gboolean
ss_zscale (const float *data, gsize n, double *z1, double *z2)
{
  gsize npix = 0;
  g_autofree float *sample = zscale_sample (data, n, &npix);
  if (npix == 0)
    return FALSE;
  double zmin = sample[0], zmax = sample[npix - 1];
  gsize center = (npix - 1) / 2;
  double median = (npix % 2 == 1) ? sample[center] : 0.5 * (sample[center] + sample[center + 1]);

  gsize min_good = MAX ((gsize) ZSCALE_MIN_PIXELS, (gsize) (npix * ZSCALE_MAX_REJECT));
  gsize grow = MAX ((gsize) 1, (gsize) (npix * 0.01));
  g_autofree gboolean *bad = g_new0 (gboolean, npix);
  g_autofree gboolean *grown = g_new0 (gboolean, npix);
  gsize good = npix, last_good = npix + 1;
  double intercept = median, slope = 0;

  for (int it = 0; it < ZSCALE_MAX_ITERATIONS && good < last_good && good >= min_good; it++)
    {
      if (!zscale_fit_line (sample, bad, npix, &intercept, &slope))
        break;
      /* Reject points further than KREJ standard deviations from the line,
       * and their neighbours (the "grow" of the IRAF task). */
      double sum = 0, sum2 = 0, count = 0;
      for (gsize i = 0; i < npix; i++)
        if (!bad[i])
          {
            double r = sample[i] - (intercept + slope * (double) i);
            sum += r; sum2 += r * r; count += 1;
          }
      double mean = sum / count;
      double sd = sqrt (MAX (sum2 / count - mean * mean, 0.0));
      double threshold = ZSCALE_KREJ * sd;
      memset (grown, 0, npix * sizeof (gboolean));
      for (gsize i = 0; i < npix; i++)
        {
          double r = sample[i] - (intercept + slope * (double) i);
          if (bad[i] || r < -threshold || r > threshold)
            {
              gsize lo = i >= grow / 2 ? i - grow / 2 : 0;
              gsize hi = MIN (npix - 1, i + grow / 2);
              for (gsize j = lo; j <= hi; j++)
                grown[j] = TRUE;
            }
        }
      memcpy (bad, grown, npix * sizeof (gboolean));
      last_good = good;
      good = 0;
      for (gsize i = 0; i < npix; i++)
        good += !bad[i];
    }

  if (good < min_good)
    {
      *z1 = zmin;
      *z2 = zmax;
      return TRUE;
    }
  slope /= ZSCALE_CONTRAST;
  *z1 = MAX (zmin, median - (double) center * slope);
  *z2 = MIN (zmax, median + (double) (npix - 1 - center) * slope);
  if (!(*z2 > *z1))
    {
      *z1 = zmin;
      *z2 = zmax;
    }
  return TRUE;
}

/* ---- normalising ---------------------------------------------------------- */

float *
ss_render_normalise (const SsFrame *frame, const SsDisplay *display, double *low, double *high)
{
  gsize n = ss_frame_n_pixels (frame);
  float *out = g_try_malloc_n (n, sizeof (float));
  if (out == NULL)
    return NULL;
  double lo = 0, hi = 0, low_percent, high_percent;
  if (ss_limits_percentiles (display->limits, &low_percent, &high_percent))
    ss_stretch_apply (frame->data, out, n, display->stretch, low_percent, high_percent, &lo, &hi);
  else
    {
      /* zscale: clamp a copy to [z1, z2], then let the engine's stretch use
       * that copy's min and max, which are z1 and z2 whenever the data reach
       * them (zscale limits never lie outside the data). */
      double z1, z2;
      if (!ss_zscale (frame->data, n, &z1, &z2))
        z1 = z2 = 0;
      for (gsize i = 0; i < n; i++)
        {
          float v = frame->data[i];
          out[i] = isnan (v) ? v : (float) CLAMP (v, z1, z2);
        }
      ss_stretch_apply (out, out, n, display->stretch, 0.0, 100.0, &lo, &hi);
    }
  /* Whatever the stretch does with blanks, keep them blank. */
  for (gsize i = 0; i < n; i++)
    if (isnan (frame->data[i]))
      out[i] = NAN;
  if (low)
    *low = lo;
  if (high)
    *high = hi;
  return out;
}

/* ---- colour maps ---------------------------------------------------------- */

/* Viridis (van der Walt and Smith's perceptually uniform map) at ten evenly
 * spaced stops; linear interpolation between them stays within a few levels
 * of the full 256-entry table. */
static const guint8 viridis_stops[10][3] = {
  { 0x44, 0x01, 0x54 }, { 0x48, 0x28, 0x78 }, { 0x3e, 0x4a, 0x89 }, { 0x31, 0x68, 0x8e },
  { 0x26, 0x82, 0x8e }, { 0x1f, 0x9e, 0x89 }, { 0x35, 0xb7, 0x79 }, { 0x6d, 0xcd, 0x59 },
  { 0xb4, 0xde, 0x2c }, { 0xfd, 0xe7, 0x25 },
};

/* The colour of VALUE as three channels in [0, 1]. */
static void
colormap_channels (SsColormap colormap, float value, double rgb[3])
{
  if (isnan (value))
    {
      /* Blank pixels: a muted blue, unlike any grey level or viridis colour. */
      rgb[0] = 0x26 / 255.0; rgb[1] = 0x30 / 255.0; rgb[2] = 0x4a / 255.0;
      return;
    }
  double v = CLAMP ((double) value, 0.0, 1.0);
  if (colormap == SS_COLORMAP_GREY)
    {
      rgb[0] = rgb[1] = rgb[2] = v;
      return;
    }
  double pos = v * 9.0;
  int i = MIN ((int) pos, 8);
  double t = pos - i;
  for (int c = 0; c < 3; c++)
    rgb[c] = (viridis_stops[i][c] * (1 - t) + viridis_stops[i + 1][c] * t) / 255.0;
}

void
ss_colormap_rgb (SsColormap colormap, float value, guint8 rgb[3])
{
  double channels[3];
  colormap_channels (colormap, value, channels);
  for (int c = 0; c < 3; c++)
    rgb[c] = (guint8) lrint (channels[c] * 255.0);
}

void
ss_colormap_rgb16 (SsColormap colormap, float value, guint16 rgb[3])
{
  double channels[3];
  colormap_channels (colormap, value, channels);
  for (int c = 0; c < 3; c++)
    rgb[c] = (guint16) lrint (channels[c] * 65535.0);
}

/* A box-reduced copy when the frame is larger than MAX_SIDE on a side. */
static SsFrame *
reduce_for_display (const SsFrame *frame, int max_side, GError **error)
{
  if (frame->width <= max_side && frame->height <= max_side)
    return ss_frame_ref ((SsFrame *) frame);
  double f = MIN ((double) max_side / frame->width, (double) max_side / frame->height);
  int w = MAX (1, (int) (frame->width * f)), h = MAX (1, (int) (frame->height * f));
  SsFrame *small = ss_frame_new (w, h, error);
  if (small == NULL)
    return NULL;
  ss_preview_reduce (frame->data, frame->width, frame->height, small->data, w, h);
  ss_frame_set_region (small, frame->x0, frame->y0, frame->logical_width, frame->logical_height);
  return small;
}

cairo_surface_t *
ss_render_surface (const SsFrame *frame, const SsDisplay *display, int max_side,
                   double *low, double *high, GError **error)
{
  g_autoptr (SsFrame) shown = reduce_for_display (frame, max_side, error);
  if (shown == NULL)
    return NULL;
  g_autofree float *norm = ss_render_normalise (shown, display, low, high);
  cairo_surface_t *surface = cairo_image_surface_create (CAIRO_FORMAT_RGB24, shown->width,
                                                         shown->height);
  if (norm == NULL || cairo_surface_status (surface) != CAIRO_STATUS_SUCCESS)
    {
      cairo_surface_destroy (surface);
      g_set_error (error, SS_ERROR, SS_ERROR_OUT_OF_MEMORY,
                   "not enough memory to display a %d×%d image", shown->width, shown->height);
      return NULL;
    }

  /* A 256-entry lookup keeps the per-pixel work to one multiply and a load. */
  guint32 lut[256];
  for (int i = 0; i < 256; i++)
    {
      guint8 rgb[3];
      ss_colormap_rgb (display->colormap, (float) i / 255.0f, rgb);
      lut[i] = 0xff000000u | ((guint32) rgb[0] << 16) | ((guint32) rgb[1] << 8) | rgb[2];
    }
  guint8 nan_rgb[3];
  ss_colormap_rgb (display->colormap, NAN, nan_rgb);
  guint32 nan_pixel = 0xff000000u | ((guint32) nan_rgb[0] << 16) | ((guint32) nan_rgb[1] << 8)
                      | nan_rgb[2];

  cairo_surface_flush (surface);
  guint8 *pixels = cairo_image_surface_get_data (surface);
  int stride = cairo_image_surface_get_stride (surface);
  for (int row = 0; row < shown->height; row++)
    {
      /* Row 0 of the data is the bottom line of the picture. */
      guint32 *line = (guint32 *) (pixels + (gsize) (shown->height - 1 - row) * stride);
      const float *src = norm + (gsize) row * shown->width;
      for (int col = 0; col < shown->width; col++)
        {
          float v = src[col];
          line[col] = isnan (v) ? nan_pixel : lut[(int) lrintf (CLAMP (v, 0.0f, 1.0f) * 255.0f)];
        }
    }
  cairo_surface_mark_dirty (surface);
  return surface;
}
