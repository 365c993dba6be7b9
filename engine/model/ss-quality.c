/* ss-quality.c: affine-fitted PSNR and SSIM (see ss-quality.h). */
#include "ss-quality.h"

#include <math.h>

void
ss_affine_fit (const float *x, const float *truth, gsize n, double *a, double *b)
{
  double mx = 0, mt = 0;
  for (gsize i = 0; i < n; i++)
    {
      mx += x[i];
      mt += truth[i];
    }
  mx /= (double) n;
  mt /= (double) n;
  double sxx = 0, sxt = 0;
  for (gsize i = 0; i < n; i++)
    {
      double dx = x[i] - mx;
      sxx += dx * dx;
      sxt += dx * (truth[i] - mt);
    }
  *a = sxx > 0 ? sxt / sxx : 0.0;
  *b = mt - *a * mx;
}

void
ss_affine_apply (const float *x, float *out, gsize n, double a, double b)
{
  for (gsize i = 0; i < n; i++)
    out[i] = (float) (a * x[i] + b);
}

static void
truth_range (const float *truth, gsize n, double *low, double *high)
{
  *low = INFINITY;
  *high = -INFINITY;
  for (gsize i = 0; i < n; i++)
    {
      *low = MIN (*low, truth[i]);
      *high = MAX (*high, truth[i]);
    }
}

double
ss_psnr_affine (const float *x, const float *truth, gsize n)
{
  double a, b, low, high, sum = 0;
  ss_affine_fit (x, truth, n, &a, &b);
  truth_range (truth, n, &low, &high);
  for (gsize i = 0; i < n; i++)
    {
      double d = a * x[i] + b - truth[i];
      sum += d * d;
    }
  double mse = sum / (double) n;
  return 10 * log10 ((high - low) * (high - low) / mse);
}

/* The normalised 1-D Gaussian of the window; the 2-D one is its outer product. */
static void
gaussian_window (double *g)
{
  double sum = 0;
  for (int k = 0; k < SS_SSIM_WINDOW; k++)
    {
      double d = k - SS_SSIM_WINDOW / 2;
      g[k] = exp (-d * d / (2 * SS_SSIM_SIGMA * SS_SSIM_SIGMA));
      sum += g[k];
    }
  for (int k = 0; k < SS_SSIM_WINDOW; k++)
    g[k] /= sum;
}

/* OUT (ow x oh, 'valid') = the window's weighted mean of IN (w x h), separably. */
static void
filter_valid (const double *in, int w, int h, const double *g, double *row, double *out)
{
  int ow = w - SS_SSIM_WINDOW + 1, oh = h - SS_SSIM_WINDOW + 1;
  for (int y = 0; y < h; y++)
    for (int x = 0; x < ow; x++)
      {
        double sum = 0;
        for (int k = 0; k < SS_SSIM_WINDOW; k++)
          sum += g[k] * in[(gsize) y * w + x + k];
        row[(gsize) y * ow + x] = sum;
      }
  for (int y = 0; y < oh; y++)
    for (int x = 0; x < ow; x++)
      {
        double sum = 0;
        for (int k = 0; k < SS_SSIM_WINDOW; k++)
          sum += g[k] * row[(gsize) (y + k) * ow + x];
        out[(gsize) y * ow + x] = sum;
      }
}

double
ss_ssim (const float *x, const float *y, int w, int h)
{
  if (w < SS_SSIM_WINDOW || h < SS_SSIM_WINDOW)
    return NAN;
  const double c1 = 0.01 * 0.01, c2 = 0.03 * 0.03;
  gsize n = (gsize) w * h;
  int ow = w - SS_SSIM_WINDOW + 1, oh = h - SS_SSIM_WINDOW + 1;
  gsize on = (gsize) ow * oh;
  double g[SS_SSIM_WINDOW];
  gaussian_window (g);
  /* The five products, each filtered: means, second moments, cross moment. */
  g_autofree double *product = g_new (double, n);
  g_autofree double *row = g_new (double, (gsize) ow * h);
  g_autofree double *moments = g_new (double, 5 * on);
  for (int m = 0; m < 5; m++)
    {
      for (gsize i = 0; i < n; i++)
        {
          double a = x[i], b = y[i];
          product[i] = m == 0 ? a : m == 1 ? b : m == 2 ? a * a : m == 3 ? b * b : a * b;
        }
      filter_valid (product, w, h, g, row, moments + m * on);
    }
  double sum = 0;
  for (gsize i = 0; i < on; i++)
    {
      double mx = moments[i], my = moments[on + i];
      double vx = moments[2 * on + i] - mx * mx, vy = moments[3 * on + i] - my * my;
      double cov = moments[4 * on + i] - mx * my;
      sum += ((2 * mx * my + c1) * (2 * cov + c2))
             / ((mx * mx + my * my + c1) * (vx + vy + c2));
    }
  return sum / (double) on;
}

double
ss_ssim_affine (const float *x, const float *truth, int w, int h)
{
  gsize n = (gsize) w * h;
  double a, b, low, high;
  ss_affine_fit (x, truth, n, &a, &b);
  truth_range (truth, n, &low, &high);
  if (!(high > low))
    return NAN;
  g_autofree float *fitted = g_new (float, n);
  g_autofree float *reference = g_new (float, n);
  double inv = 1.0 / (high - low);
  for (gsize i = 0; i < n; i++)
    {
      fitted[i] = (float) ((a * x[i] + b - low) * inv);
      reference[i] = (float) ((truth[i] - low) * inv);
    }
  return ss_ssim (fitted, reference, w, h);
}
