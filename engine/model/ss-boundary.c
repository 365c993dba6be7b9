/* ss-boundary.c: padding real images for the circulant solvers, and cropping back.
 * What the modes mean and how the border enters the data term: ss-boundary.h. */
#include "ss-boundary.h"
#include "ss-error.h"
#include "ss-mem.h"

#include <math.h>
#include <string.h>

/* Share of the PSF's sum that the margin must hold. */
#define MARGIN_ENERGY 0.995

static const char *const boundary_names[] = {
  [SS_BOUNDARY_PERIODIC] = "periodic",
  [SS_BOUNDARY_MIRROR] = "mirror",
  [SS_BOUNDARY_TAPER] = "taper",
};

gboolean
ss_boundary_from_string (const char *text, SsBoundary *mode, GError **error)
{
  for (guint i = 0; i < G_N_ELEMENTS (boundary_names); i++)
    if (text != NULL && g_ascii_strcasecmp (text, boundary_names[i]) == 0)
      {
        *mode = (SsBoundary) i;
        return TRUE;
      }
  g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT,
               "unknown boundary “%s” (expected periodic, mirror or taper)",
               text != NULL ? text : "");
  return FALSE;
}

const char *
ss_boundary_to_string (SsBoundary mode)
{
  if ((guint) mode < G_N_ELEMENTS (boundary_names))
    return boundary_names[mode];
  return "unknown";
}

/* Whether M has no prime factor above 5. */
static gboolean
is_5_smooth (int m)
{
  static const int primes[] = { 2, 3, 5 };
  for (guint i = 0; i < G_N_ELEMENTS (primes); i++)
    while (m % primes[i] == 0)
      m /= primes[i];
  return m == 1;
}

int
ss_fft_good_size (int n)
{
  if (n < 1)
    return -1;
  /* 5-smooth numbers are dense (gaps of a few percent at these sizes), so a
   * linear walk is short. Factors of 7 are left out though FFTW and cuFFT
   * take them: measured on the H100, the sample padded to 1008×882
   * (2^4 3^2 7 × 2 3^2 7^2) iterated CPADMM in 0.083 ms, to 1024×900 in
   * 0.043 ms; 4116² took 1.42 ms against 0.90 ms for 4096² (the CPU: 175
   * against 85 ms on 16 cores). */
  gint64 smooth = -1;
  for (gint64 m = n; m <= G_MAXINT && smooth < 0; m++)
    if (is_5_smooth ((int) m))
      smooth = m;
  if (smooth < 0)
    return -1;
  /* Powers of two are faster still: 4096² iterated in 0.90 ms, the smaller
   * 4050² (2 3^4 5^2) in 1.27 ms. Within 10% of the 5-smooth size, take the
   * power of two (1024 over 900 is 14% more: 900 stays, and was faster). */
  gint64 power = 1;
  while (power < n)
    power *= 2;
  return (int) (power * 10 <= smooth * 11 && power <= G_MAXINT ? power : smooth);
}

/* Wrapped distance of index I from 0 on a circle of N. */
static int
wrapped_distance (int i, int n)
{
  return MIN (i, n - i);
}

int
ss_boundary_margin_for_psf (const SsPsfSpec *spec, int width, int height, GError **error)
{
  /* Only pixels within the PSF's reach of (0,0) are non-zero: a canvas of
   * 2 reach + 3 holds them at the same wrapped distances and sums them in the
   * same order, so the margin is the one the full image gives, without
   * rendering (and reading) 26 megapixels of zeros. A PSF that does not fit
   * is rendered at full size, to be refused as before. */
  int psf_reach = ss_psf_reach (spec);
  if (psf_reach >= 0 && 2 * psf_reach + 1 <= width && 2 * psf_reach + 1 <= height)
    {
      width = MIN (width, 2 * psf_reach + 3);
      height = MIN (height, 2 * psf_reach + 3);
    }
  g_autoptr (SsImage) psf = ss_psf_render (spec, width, height, error);
  if (psf == NULL)
    return -1;
  return ss_boundary_margin_for_kernel (psf->data, width, height);
}

int
ss_boundary_margin_for_kernel (const float *kernel, int width, int height)
{
  int reach = MAX (width, height) / 2 + 1;
  double *energy = g_new0 (double, reach + 1);
  double total = 0.0;
  for (int y = 0; y < height; y++)
    for (int x = 0; x < width; x++)
      {
        double v = fabs (kernel[(gsize) y * width + x]);
        int d = MAX (wrapped_distance (x, width), wrapped_distance (y, height));
        energy[d] += v;
        total += v;
      }
  int margin = 1;
  double inside = 0.0;
  for (int r = 0; r <= reach; r++)
    {
      inside += energy[r];
      if (inside >= MARGIN_ENERGY * total)
        {
          margin = MAX (r, 1);
          break;
        }
    }
  g_free (energy);
  return margin;
}

/* Index I (any integer) reflected into [0, N) with the edge sample repeated:
 * ... 2 1 0 | 0 1 2 ... N-1 | N-1 N-2 ... */
static int
reflect_index (int i, int n)
{
  int period = 2 * n;
  int r = i % period;
  if (r < 0)
    r += period;
  return r < n ? r : period - 1 - r;
}

/* Raised cosine from 0 (U = 0) to 1 (U = 1), with zero slope at both ends. */
static double
raised_cosine (double u)
{
  return 0.5 * (1.0 - cos (G_PI * u));
}

/* Pads one line: LINE[o .. o+n-1] (stride STRIDE) holds the data, the rest of
 * the P samples is the border. The border is one gap of G = P - n samples
 * running from just right of the last sample, across the wrap-around, to just
 * left of the first; gap position t = 1..G. Both modes blend a value seen from
 * the right edge with a value seen from the left edge by a raised cosine, so
 * the padded line is periodic and continuous. */
static void
pad_line (float *line, gsize stride, int p, int o, int n, SsBoundary mode)
{
  int gap = p - n;
  const float *data = line + (gsize) o * stride;
  for (int t = 1; t <= gap; t++)
    {
      int from_left = gap + 1 - t;   /* 1 for the sample just left of the data */
      double from_right_value, from_left_value;
      if (mode == SS_BOUNDARY_MIRROR)
        {
          from_right_value = data[(gsize) reflect_index (n - 1 + t, n) * stride];
          from_left_value = data[(gsize) reflect_index (-from_left, n) * stride];
        }
      else
        {
          from_right_value = data[(gsize) (n - 1) * stride];
          from_left_value = data[0];
        }
      double s = raised_cosine ((double) t / (gap + 1));
      int index = (o + n - 1 + t) % p;
      line[(gsize) index * stride] = (float) ((1.0 - s) * from_right_value + s * from_left_value);
    }
}

gboolean
ss_boundary_padded_size (int w, int h, SsBoundary mode, int margin, int *pw, int *ph,
                         GError **error)
{
  if (w <= 0 || h <= 0 || margin < 0 || (guint) mode > SS_BOUNDARY_TAPER)
    {
      g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT,
                   "cannot pad a %d×%d image with a margin of %d", w, h, margin);
      return FALSE;
    }
  int width = w, height = h;
  if (mode != SS_BOUNDARY_PERIODIC)
    {
      gint64 want_w = (gint64) w + 2 * (gint64) margin;
      gint64 want_h = (gint64) h + 2 * (gint64) margin;
      width = want_w <= G_MAXINT ? ss_fft_good_size ((int) want_w) : -1;
      height = want_h <= G_MAXINT ? ss_fft_good_size ((int) want_h) : -1;
    }
  gsize count = width > 0 && height > 0 ? (gsize) width * (gsize) height : 0;
  if (count == 0 || count > G_MAXSIZE / sizeof (float))
    {
      g_set_error (error, SS_ERROR, SS_ERROR_TOO_LARGE,
                   "a %d×%d image padded by %d pixels is too large", w, h, margin);
      return FALSE;
    }
  *pw = width;
  *ph = height;
  return TRUE;
}

gboolean
ss_boundary_pad (const float *in, int w, int h, SsBoundary mode, int margin,
                 float **out, int *pw, int *ph, int *x0, int *y0, GError **error)
{
  int width, height;
  if (!ss_boundary_padded_size (w, h, mode, margin, &width, &height, error))
    return FALSE;
  g_return_val_if_fail (in != NULL, FALSE);
  gsize count = (gsize) width * (gsize) height;
  float *padded = g_try_new (float, count);
  if (padded == NULL)
    {
      g_set_error (error, SS_ERROR, SS_ERROR_OUT_OF_MEMORY,
                   "out of memory padding a %d×%d image to %d×%d", w, h, width, height);
      return FALSE;
    }

  /* Centred: the left (top) border gets the smaller half. */
  int left = (width - w) / 2, top = (height - h) / 2;
  /* Rows, then columns, are independent: spread over the cores. */
  gboolean parallel = count > SS_PARALLEL_PIXELS;
#pragma omp parallel for schedule(static) if (parallel)
  for (int y = 0; y < h; y++)
    {
      memcpy (padded + (gsize) (y + top) * width + left, in + (gsize) y * w, w * sizeof (float));
      if (width > w)
        pad_line (padded + (gsize) (y + top) * width, 1, width, left, w, mode);
    }
  /* Then every column, borders included, so the corners blend both ways. */
  if (height > h)
    {
#pragma omp parallel for schedule(static) if (parallel)
      for (int x = 0; x < width; x++)
        pad_line (padded + x, width, height, top, h, mode);
    }

  *out = padded;
  *pw = width;
  *ph = height;
  *x0 = left;
  *y0 = top;
  return TRUE;
}

void
ss_boundary_exclude_border (float *padded, int pw, int ph, int x0, int y0, int w, int h)
{
  for (int y = 0; y < ph; y++)
    for (int x = 0; x < pw; x++)
      if (y < y0 || y >= y0 + h || x < x0 || x >= x0 + w)
        padded[(gsize) y * pw + x] = NAN;
}

gboolean
ss_boundary_crop (const float *in, int pw, int ph, int x0, int y0, int w, int h,
                  float *out, GError **error)
{
  if (in == NULL || out == NULL || w <= 0 || h <= 0 || x0 < 0 || y0 < 0
      || (gint64) x0 + w > pw || (gint64) y0 + h > ph)
    {
      g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT,
                   "cannot crop %d×%d at (%d, %d) from a %d×%d image", w, h, x0, y0, pw, ph);
      return FALSE;
    }
#pragma omp parallel for schedule(static) if ((gsize) w * h > SS_PARALLEL_PIXELS)
  for (int y = 0; y < h; y++)
    memcpy (out + (gsize) y * w, in + (gsize) (y + y0) * pw + x0, w * sizeof (float));
  return TRUE;
}
