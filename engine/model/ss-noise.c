/* ss-noise.c: robust noise estimate (MAD of a high-pass) and the automatic alpha.
 * The derivation of the constants is in ss-noise.h. */
#include "ss-noise.h"
#include "ss-error.h"
#include "ss-mem.h"
#include "ss-scaling.h"

#include <math.h>

/* Phi^-1(3/4): the MAD of a unit Gaussian. */
#define MAD_OF_UNIT_GAUSSIAN 0.6744897501960817

/* sqrt of the sum of squares of the 3x3 kernel (1 -2 1) x (1 -2 1): sqrt(36). */
#define KERNEL_2D_NORM 6.0
/* The same for the 1-D kernel (1 -2 1): sqrt(6). */
#define KERNEL_1D_NORM 2.449489742783178

/* Fills OUT, (w-2) x (h-2), with the 3x3 high-pass of every interior window;
 * a window with a NaN or Inf anywhere gives NaN, which the statistics skip.
 * Rows are independent: every core takes some. */
static gsize
high_pass_2d (const float *data, int w, int h, float *out)
{
  static const float k[3] = { 1.f, -2.f, 1.f };
  const int ow = w - 2;
#pragma omp parallel for schedule(static) if ((gsize) w * h > 65536)
  for (int y = 1; y < h - 1; y++)
    for (int x = 1; x + 1 < w; x++)
      {
        float acc = 0.f;
        for (int dy = -1; dy <= 1; dy++)
          {
            const float *row = data + (gsize) (y + dy) * w + x;
            acc += k[dy + 1] * (k[0] * row[-1] + k[1] * row[0] + k[2] * row[1]);
          }
        out[(gsize) (y - 1) * ow + (x - 1)] = isfinite (acc) ? acc : NAN;
      }
  return (gsize) ow * (gsize) (h - 2);
}

/* The same along rows only, for images less than 3 rows high. */
static gsize
high_pass_rows (const float *data, int w, int h, float *out)
{
  gsize count = 0;
  for (int y = 0; y < h; y++)
    for (int x = 1; x + 1 < w; x++)
      {
        const float *p = data + (gsize) y * w + x;
        float acc = p[-1] - 2.f * p[0] + p[1];
        if (isfinite (acc))
          out[count++] = acc;
      }
  return count;
}

/* Robust standard deviation of the finite values: MAD / Phi^-1(3/4), falling
 * back on the mean absolute deviation when more than half of them are equal
 * (as with quantised data whose noise is under one count). VALUES is read,
 * never reordered. */
static double
robust_sigma (const float *values, gsize count)
{
  double centre = ss_median (values, count);
  if (!isfinite (centre))
    return NAN;
  double mad = ss_mad (values, count, centre);
  if (mad > 0.0)
    return mad / MAD_OF_UNIT_GAUSSIAN;
  /* E|X| = sigma sqrt(2/pi) for a centred Gaussian. */
  double sum_abs = 0.0;
  gsize finite = 0;
  /* One thread: a parallel sum would differ in its last bits from run to
   * run, and so would alpha. A rare path (quantised, nearly noiseless data). */
  for (gsize i = 0; i < count; i++)
    if (isfinite (values[i]))
      {
        sum_abs += fabsf (values[i] - (float) centre);
        finite++;
      }
  return sum_abs / (double) finite * sqrt (G_PI / 2.0);
}

double
ss_noise_estimate (const float *data, int width, int height)
{
  if (data == NULL || width <= 0 || height <= 0)
    return NAN;
  gsize n = (gsize) width * (gsize) height;
  float *filtered = g_try_new (float, n);
  if (filtered == NULL)
    return NAN;

  gsize count;
  double norm;
  if (height >= 3 && width >= 3)
    {
      count = high_pass_2d (data, width, height, filtered);
      norm = KERNEL_2D_NORM;
    }
  else if (width >= 3)
    {
      count = high_pass_rows (data, width, height, filtered);
      norm = KERNEL_1D_NORM;
    }
  else
    {
      /* A column (width < 3): treat it as a row of its transpose. */
      float *column = g_try_new (float, n);
      if (column == NULL)
        {
          g_free (filtered);
          return NAN;
        }
      for (int x = 0; x < width; x++)
        for (int y = 0; y < height; y++)
          column[(gsize) x * height + y] = data[(gsize) y * width + x];
      count = height >= 3 ? high_pass_rows (column, height, width, filtered) : 0;
      norm = KERNEL_1D_NORM;
      g_free (column);
    }

  double sigma = count > 0 ? robust_sigma (filtered, count) / norm : NAN;
  g_free (filtered);
  return sigma;
}

/* Sum of |c^_k|^2 over the FULL spectrum from FFTW's half-spectrum: the
 * columns other than 0 (and width/2 when width is even) stand for their
 * Hermitian mirror too. */
static double
full_spectrum_energy (const SsOperator *op)
{
  int sw = op->spec_width;
  /* Rows summed in parallel, then the row sums in order: the same total on
   * any number of threads (a reduction clause adds in arrival order, and
   * alpha auto, hence the result, would change in its last bits). */
  double *rows = g_new (double, op->height);
#pragma omp parallel for schedule(static) if ((gsize) op->height * sw > SS_PARALLEL_PIXELS)
  for (int y = 0; y < op->height; y++)
    {
      double row = 0.0;
      for (int x = 0; x < sw; x++)
        {
          const float *c = op->chat + 2 * ((gsize) y * sw + x);
          double p = (double) c[0] * c[0] + (double) c[1] * c[1];
          row += ss_half_spectrum_weight (x, op->width) * p;
        }
      rows[y] = row;
    }
  double total = 0.0;
  for (int y = 0; y < op->height; y++)
    total += rows[y];
  g_free (rows);
  return total;
}

/* Σ k² of a deferred operator's kernel: what Parseval gives from c^. Rows
 * summed in parallel, then in order, as above. */
static double
kernel_energy (const SsOperator *op)
{
  double *rows = g_new (double, op->height);
#pragma omp parallel for schedule(static) if ((gsize) op->height * op->width > SS_PARALLEL_PIXELS)
  for (int y = 0; y < op->height; y++)
    {
      double row = 0.0;
      for (int x = 0; x < op->width; x++)
        {
          double k = op->kernel[(gsize) y * op->width + x];
          row += k * k;
        }
      rows[y] = row;
    }
  double total = 0.0;
  for (int y = 0; y < op->height; y++)
    total += rows[y];
  g_free (rows);
  return total;
}

double
ss_operator_column_norm (const SsOperator *op)
{
  if (op == NULL || (op->chat == NULL && op->kernel == NULL) || op->width <= 0
      || op->height <= 0)
    return NAN;
  double n = (double) op->width * (double) op->height;
  /* Parseval for the unnormalised DFT: ||c||^2 = (1/n) sum_k |c^_k|^2. */
  double column_sq = op->chat ? full_spectrum_energy (op) / n : kernel_energy (op);
  double observed = op->mask != NULL ? (double) op->m / n : 1.0;
  return sqrt (column_sq * observed);
}

double
ss_alpha_auto (double noise_sigma, const SsOperator *op)
{
  if (op == NULL || !isfinite (noise_sigma) || noise_sigma < 0.0)
    return NAN;
  double n = (double) op->width * (double) op->height;
  double column = ss_operator_column_norm (op);
  if (!isfinite (column))
    return NAN;
  double universal = sqrt (2.0 * log (MAX (n, 2.0)));
  return SS_ALPHA_AUTO_FACTOR * noise_sigma * column * universal;
}

gboolean
ss_alpha_auto_from_data (const float *data, int width, int height, double scale,
                         const SsOperator *op, double *alpha, double *noise_scaled,
                         GError **error)
{
  if (!(scale > 0.0) || !isfinite (scale) || op == NULL)
    {
      g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT,
                   "automatic alpha needs a positive data scale and an operator");
      return FALSE;
    }
  double sigma = ss_noise_estimate (data, width, height);
  if (!isfinite (sigma))
    {
      g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT,
                   "cannot estimate the noise for automatic alpha: the image (%d×%d) "
                   "has too few finite pixels", width, height);
      return FALSE;
    }
  double sigma_scaled = sigma / scale;
  double value = ss_alpha_auto (sigma_scaled, op);
  if (!isfinite (value))
    {
      g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT,
                   "automatic alpha is not finite (noise %g)", sigma_scaled);
      return FALSE;
    }
  *alpha = value;
  if (noise_scaled != NULL)
    *noise_scaled = sigma_scaled;
  return TRUE;
}

SsDataStats
ss_data_stats_from_estimates (double noise, SsSkyMode sky_mode)
{
  return (SsDataStats) { .noise = noise, .median = sky_mode == SS_SKY_MEDIAN ? 0.0 : NAN };
}

void
ss_problem_noise_and_median (const SsProblem *problem, double *noise, double *median)
{
  const SsOperator *op = problem->op;
  gsize n = (gsize) op->width * op->height;
  const SsDataStats *known = problem->stats;
  gboolean noise_known = known && isfinite (known->noise) && known->noise > 0;
  gboolean median_known = known && isfinite (known->median);
  if (noise && noise_known)
    *noise = known->noise;
  if (median && median_known)
    *median = known->median;
  if ((noise == NULL || noise_known) && (median == NULL || median_known))
    return;
  /* Unobserved pixels are 0 in y; as NaN the estimates skip them. */
  g_autofree float *observed = g_memdup2 (problem->y, n * sizeof (float));
  if (op->mask)
    for (gsize i = 0; i < n; i++)
      if (!op->mask[i])
        observed[i] = NAN;
  if (noise && !noise_known)
    *noise = ss_noise_estimate (observed, op->width, op->height);
  if (median && !median_known)
    *median = ss_median (observed, n);
}
