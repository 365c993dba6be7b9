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

/* The 3x3 high-pass of the window of DATA (W wide) centred on (X, Y). */
static inline float
window_high_pass (const float *data, int w, int x, int y)
{
  static const float k[3] = { 1.f, -2.f, 1.f };
  float acc = 0.f;
  for (int dy = -1; dy <= 1; dy++)
    {
      const float *row = data + (gsize) (y + dy) * w + x;
      acc += k[dy + 1] * (k[0] * row[-1] + k[1] * row[0] + k[2] * row[1]);
    }
  return acc;
}

/* At most this many 3x3 windows enter the 2-D estimate: past it, every
 * stride-th row of windows (all of a row's, so the reads stay contiguous),
 * the smallest stride that keeps the count under it (so half of it or more).
 * The MAD of 2^22 values is within a few 1e-4 of the whole frame's (its
 * relative standard error is about 1/sqrt(count)), while the selection over
 * a 26-megapixel frame's 26 million took 0.34 s of a deblur on two cores. */
#define NOISE_SAMPLES 4194304

/* Every how many rows of windows the 2-D high-pass takes one: 1 up to
 * NOISE_SAMPLES interior windows (every frame of 2050 x 2050 or less). */
static int
high_pass_row_stride (int w, int h)
{
  gsize windows = (gsize) (w - 2) * (gsize) (h - 2);
  return windows > NOISE_SAMPLES ? (int) ((windows + NOISE_SAMPLES - 1) / NOISE_SAMPLES) : 1;
}

/* How many values high_pass_2d writes. */
static gsize
high_pass_2d_count (int w, int h)
{
  int stride = high_pass_row_stride (w, h);
  return (gsize) (w - 2) * (gsize) ((h - 2 + stride - 1) / stride);
}

/* Fills OUT (high_pass_2d_count values) with the 3x3 high-pass of every
 * interior window of the rows high_pass_row_stride takes; a window with a
 * NaN or Inf anywhere gives NaN, which the statistics skip. *WHOLE: how
 * many windows are finite. Rows are independent: every core takes some. */
static gsize
high_pass_2d (const float *data, int w, int h, float *out, gsize *whole)
{
  const int ow = w - 2, stride = high_pass_row_stride (w, h);
  const int rows = (h - 2 + stride - 1) / stride;
  gsize finite = 0;
#pragma omp parallel for schedule(static) reduction(+ : finite) if ((gsize) ow * rows > 65536)
  for (int r = 0; r < rows; r++)
    for (int x = 1; x + 1 < w; x++)
      {
        float acc = window_high_pass (data, w, x, 1 + r * stride);
        out[(gsize) r * ow + (x - 1)] = isfinite (acc) ? acc : NAN;
        finite += isfinite (acc) ? 1 : 0;
      }
  *whole = finite;
  return (gsize) ow * (gsize) rows;
}

/* Fewer whole 3x3 windows than this give no estimate worth the name: with
 * 59% of an image's pixels blank at random one window in 3000 is whole, and
 * on 64² the one there was gave a MAD of 0, so an alpha of 0; with every
 * third column blank none is. The 1-D high-pass along the rows and the
 * columns (high_pass_lines) is whole far more often and takes over. */
#define NOISE_MIN_WINDOWS 256

/* The 1-D high-pass [1 -2 1] along every STRIDE-th row, the finite ones
 * into OUT. */
static gsize
high_pass_rows (const float *data, int w, int h, int stride, float *out)
{
  gsize count = 0;
  for (int y = 0; y < h; y += stride)
    for (int x = 1; x + 1 < w; x++)
      {
        const float *p = data + (gsize) y * w + x;
        float acc = p[-1] - 2.f * p[0] + p[1];
        if (isfinite (acc))
          out[count++] = acc;
      }
  return count;
}

/* Every how many rows and columns high_pass_lines takes one: at most
 * NOISE_SAMPLES values from the two directions (a 61 Mpx frame whose
 * blanks leave few whole windows would otherwise take 2 × 61 million). */
static int
high_pass_lines_stride (int w, int h)
{
  gsize values = 2 * (gsize) w * (gsize) h;
  return values > NOISE_SAMPLES ? (int) ((values + NOISE_SAMPLES - 1) / NOISE_SAMPLES) : 1;
}

/* How many values high_pass_lines may write. */
static gsize
high_pass_lines_count (int w, int h)
{
  int stride = high_pass_lines_stride (w, h);
  return (gsize) w * ((h + stride - 1) / stride) + (gsize) h * ((w + stride - 1) / stride);
}

/* The 1-D high-pass along every high_pass_lines_stride-th row and column
 * of DATA, the finite ones into OUT (high_pass_lines_count values); returns
 * how many. */
static gsize
high_pass_lines (const float *data, int w, int h, float *out)
{
  int stride = high_pass_lines_stride (w, h);
  gsize count = w >= 3 ? high_pass_rows (data, w, h, stride, out) : 0;
  for (int x = 0; x < w; x += stride)
    for (int y = 1; y + 1 < h; y++)
      {
        const float *p = data + (gsize) y * w + x;
        float acc = p[-w] - 2.f * p[0] + p[w];
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
  gsize count = 0, whole = 0;
  double norm = KERNEL_2D_NORM;
  g_autofree float *filtered = NULL;
  if (height >= 3 && width >= 3)
    {
      filtered = g_try_new (float, high_pass_2d_count (width, height));
      if (filtered == NULL)
        return NAN;
      count = high_pass_2d (data, width, height, filtered, &whole);
    }
  /* A line (under 3 pixels across), or too few whole windows among many. */
  if (whole == 0 || whole < MIN (NOISE_MIN_WINDOWS, count / 4))
    {
      g_free (filtered);
      filtered = g_try_new (float, high_pass_lines_count (width, height));
      if (filtered == NULL)
        return NAN;
      count = high_pass_lines (data, width, height, filtered);
      norm = KERNEL_1D_NORM;
    }
  return count > 0 ? robust_sigma (filtered, count) / norm : NAN;
}

/* ---- the noise where the light is ---------------------------------------- */

/* At most this many 3x3 windows are sampled (a regular grid): the estimate
 * then costs a few milliseconds on a 61-megapixel frame. */
#define LEVEL_SAMPLES 262144
/* Equal-count bins of the windows' level. With 64 the top bin of an
 * undersampled star field (FWHM 1.3) held star cores alone, whose
 * high-pass is the star, not noise: its "variance" dominated the mean and
 * raised α until admm lost 3.3 dB there. A bin of 1/16 of the windows keeps
 * cores under half of it (its MAD ignores them) while stars cover under 3%
 * of the frame; the price is that a bin straddling a dark and a bright
 * population counts it at the smaller σ (an estimate up to 7% low in
 * test-noise's two-level frames). */
#define LEVEL_BINS 16

/* How much noisier than every brighter bin a bin must be to count as edges. */
#define EDGE_MARGIN 1.5

typedef struct {
  float level, high_pass;
} LevelSample;

static int
compare_levels (const void *a, const void *b)
{
  float x = ((const LevelSample *) a)->level, y = ((const LevelSample *) b)->level;
  return (x > y) - (x < y);
}

/* The 3x3 window of DATA centred on (X, Y): its high-pass and its mean;
 * FALSE when a value is not finite. */
static gboolean
window_sample (const float *data, int w, int x, int y, LevelSample *out)
{
  float sum = 0.f;
  for (int dy = -1; dy <= 1; dy++)
    {
      const float *row = data + (gsize) (y + dy) * w + x;
      sum += row[-1] + row[0] + row[1];
    }
  out->high_pass = window_high_pass (data, w, x, y);
  out->level = sum / 9.f;
  return isfinite (out->high_pass) && isfinite (sum);
}

double
ss_noise_estimate_mean (const float *data, int width, int height)
{
  if (data == NULL || width < 3 || height < 3)
    return ss_noise_estimate (data, width, height);
  gsize windows = (gsize) (width - 2) * (gsize) (height - 2);
  int stride = (int) ceil (sqrt ((double) windows / LEVEL_SAMPLES));
  gsize room = ((gsize) (width - 3) / stride + 1) * ((gsize) (height - 3) / stride + 1);
  g_autofree LevelSample *samples = g_try_new (LevelSample, room);
  g_autofree float *bin = g_try_new (float, room / LEVEL_BINS + 1);
  if (samples == NULL || bin == NULL)
    return NAN;
  gsize count = 0, tried = 0;
  for (int y = 1; y < height - 1; y += stride)
    for (int x = 1; x < width - 1; x += stride, tried++)
      count += window_sample (data, width, x, y, &samples[count]);
  /* Too few whole windows (many blanks): as ss_noise_estimate, which then
   * takes the lines. */
  if (count < LEVEL_BINS || count < MIN (NOISE_MIN_WINDOWS, tried / 4))
    return ss_noise_estimate (data, width, height);
  qsort (samples, count, sizeof *samples, compare_levels);
  double variances[LEVEL_BINS];
  for (int b = 0; b < LEVEL_BINS; b++)
    {
      gsize first = count * b / LEVEL_BINS, last = count * (b + 1) / LEVEL_BINS;
      for (gsize i = first; i < last; i++)
        bin[i - first] = samples[i].high_pass;
      double sigma = robust_sigma (bin, last - first) / KERNEL_2D_NORM;
      if (!isfinite (sigma))
        return NAN;
      variances[b] = sigma * sigma;
    }
  /* Photon and read noise never fall as the light rises: a bin much noisier
   * than every brighter one holds edges (the windows across a sharp limb
   * have a level between its two sides, and a high-pass that is the step,
   * not noise), so it counts at the brighter bins' least variance. An
   * unblurred disk on a black sky read 55 times its sky's σ without this.
   * Only a bin over EDGE_MARGIN times it is cut: the bins' own scatter (a
   * few percent) would otherwise bias a flat image's estimate low. */
  double variance = 0.0, brighter = INFINITY;
  for (int b = LEVEL_BINS - 1; b >= 0; b--)
    {
      double v = variances[b] > EDGE_MARGIN * brighter ? brighter : variances[b];
      brighter = MIN (brighter, v);
      gsize first = count * b / LEVEL_BINS, last = count * (b + 1) / LEVEL_BINS;
      variance += (double) (last - first) * v;
    }
  return sqrt (variance / (double) count);
}

double
ss_noise_for_alpha (double typical, double mean)
{
  if (!isfinite (typical) || !isfinite (mean) || typical <= 0.0)
    return typical;
  return typical * MAX (1.0, mean / typical - 1.0);
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
ss_alpha_auto_from_data (const float *data, int width, int height, double noise, double scale,
                         const SsOperator *op, double *alpha, double *noise_scaled,
                         double *alpha_noise_scaled, GError **error)
{
  if (!(scale > 0.0) || !isfinite (scale) || op == NULL)
    {
      g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT,
                   "automatic alpha needs a positive data scale and an operator");
      return FALSE;
    }
  double sigma = isnan (noise) ? ss_noise_estimate (data, width, height) : noise;
  if (!isfinite (sigma))
    {
      g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT,
                   "cannot estimate the noise for automatic alpha: the image (%d×%d) "
                   "has too few finite pixels", width, height);
      return FALSE;
    }
  double sigma_scaled = sigma / scale;
  double rule_sigma = ss_noise_for_alpha (sigma, ss_noise_estimate_mean (data, width, height));
  double value = ss_alpha_auto (rule_sigma / scale, op);
  if (!isfinite (value))
    {
      g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT,
                   "automatic alpha is not finite (noise %g)", sigma_scaled);
      return FALSE;
    }
  *alpha = value;
  if (noise_scaled != NULL)
    *noise_scaled = sigma_scaled;
  if (alpha_noise_scaled != NULL)
    *alpha_noise_scaled = rule_sigma / scale;
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
  const SsDataStats *known = problem->stats;
  gboolean noise_known = known && isfinite (known->noise) && known->noise > 0;
  gboolean median_known = known && isfinite (known->median);
  if (noise && noise_known)
    *noise = known->noise;
  if (median && median_known)
    *median = known->median;
  if ((noise == NULL || noise_known) && (median == NULL || median_known))
    return;
  /* A padded image's own pixels only: the border is the image mirrored or
   * blended flat, whose high-pass is smaller (test-noise's image-region
   * test: a 53 × 80 image mirrored into 128 × 144 read 19% low, blended
   * into 90 × 128 read 600 times low, since the median high-pass is the
   * blend's). Unobserved pixels are 0 in y; as NaN the estimates skip them. */
  SsRegion region = problem->image;
  if (region.width <= 0 || region.height <= 0)
    region = (SsRegion) { 0, 0, op->width, op->height };
  gsize count = (gsize) region.width * region.height;
  g_autofree float *observed = g_new (float, count);
  for (int y = 0; y < region.height; y++)
    for (int x = 0; x < region.width; x++)
      {
        gsize i = (gsize) (region.y0 + y) * op->width + region.x0 + x;
        observed[(gsize) y * region.width + x] = op->mask && !op->mask[i] ? NAN : problem->y[i];
      }
  if (noise && !noise_known)
    *noise = ss_noise_estimate (observed, region.width, region.height);
  if (median && !median_known)
    *median = ss_median (observed, count);
}
