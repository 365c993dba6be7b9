/* ss-starlet.c: starlet filters in Fourier space and the spatial reference.
 * See ss-starlet.h. */
#include "ss-starlet.h"
#include "ss-mem.h"
#include "ss-model.h"

#include <math.h>
#include <string.h>

/* The 1-D DFT of the B3 kernel with holes at step STEP (a power of two), at
 * frequency index K of N: (6 + 8 cos(step θ) + 2 cos(2 step θ)) / 16, real
 * because the kernel is symmetric about 0. */
static double
b3_response (int k, int n, int step)
{
  double theta = 2.0 * G_PI * (double) k / (double) n;
  return (6.0 + 8.0 * cos (step * theta) + 2.0 * cos (2.0 * step * theta)) / 16.0;
}

/* The 1-D responses of every scale's B3 kernel along an axis of N, at the
 * first COUNT frequencies: table[j * count + k] (1 for a height-1 image's y). */
static double *
b3_table (int count, int n, int scales, gboolean flat)
{
  double *table = g_new (double, (gsize) scales * count);
  for (int j = 0; j < scales; j++)
    for (int k = 0; k < count; k++)
      table[(gsize) j * count + k] = flat ? 1.0 : b3_response (k, n, 1 << j);
  return table;
}

/* The detail responses ψ^_j (J of them) and the coarse one at half-spectrum
 * row KY, column KX, from the axes' tables. */
static inline void
responses_at (const double *tx, const double *ty, int sw, int height, int scales, int kx, int ky,
              double *detail, double *coarse)
{
  double previous = 1.0;   /* φ_0 = δ */
  for (int j = 0; j < scales; j++)
    {
      double next = previous * tx[(gsize) j * sw + kx] * ty[(gsize) j * height + ky];
      detail[j] = previous - next;
      previous = next;
    }
  *coarse = previous;
}

float *
ss_starlet_spectra (int width, int height, int scales)
{
  g_return_val_if_fail (scales > 0 && scales <= 32, NULL);
  int sw = width / 2 + 1;
  gsize count = (gsize) height * sw;
  float *out = g_new (float, (gsize) (scales + 1) * count);
  g_autofree double *tx = b3_table (sw, width, scales, FALSE);
  /* A height-1 image is a row: no filtering along y. */
  g_autofree double *ty = b3_table (height, height, scales, height == 1);
#pragma omp parallel for schedule(static) if (count > SS_PARALLEL_PIXELS)
  for (int ky = 0; ky < height; ky++)
    for (int kx = 0; kx < sw; kx++)
      {
        gsize k = (gsize) ky * sw + kx;
        double detail[32], coarse;
        responses_at (tx, ty, sw, height, scales, kx, ky, detail, &coarse);
        for (int j = 0; j < scales; j++)
          out[(gsize) j * count + k] = (float) detail[j];
        out[(gsize) scales * count + k] = (float) coarse;
      }
  return out;
}

void
ss_starlet_power_and_norms (int width, int height, int scales, float *power, double *norms)
{
  g_return_if_fail (scales > 0 && scales <= 32);
  int sw = width / 2 + 1;
  g_autofree double *tx = b3_table (sw, width, scales, FALSE);
  g_autofree double *ty = b3_table (height, height, scales, height == 1);
  double total[32] = { 0 };
#pragma omp parallel if ((gsize) height * sw > SS_PARALLEL_PIXELS)
  {
    double mine[32] = { 0 };
#pragma omp for schedule(static)
    for (int ky = 0; ky < height; ky++)
      for (int kx = 0; kx < sw; kx++)
        {
          double detail[32], coarse, sum = 0;
          responses_at (tx, ty, sw, height, scales, kx, ky, detail, &coarse);
          double weight = ss_half_spectrum_weight (kx, width);
          for (int j = 0; j < scales; j++)
            {
              double p = (float) detail[j];   /* as the float filters hold it */
              sum += p * p;
              mine[j] += weight * p * p;
            }
          power[(gsize) ky * sw + kx] = (float) sum;
        }
#pragma omp critical
    for (int j = 0; j < scales; j++)
      total[j] += mine[j];
  }
  for (int j = 0; j < scales; j++)
    norms[j] = sqrt (total[j] / ((double) width * height));
}

/* One à trous smoothing of IN by the B3 kernel at STEP along both axes. */
static void
smooth_b3 (const float *in, int width, int height, int step, float *tmp, float *out)
{
  static const float taps[5] = { 1.f / 16, 4.f / 16, 6.f / 16, 4.f / 16, 1.f / 16 };
  for (int y = 0; y < height; y++)
    for (int x = 0; x < width; x++)
      {
        double acc = 0;
        for (int t = -2; t <= 2; t++)
          {
            int xx = ((x + t * step) % width + width) % width;
            acc += taps[t + 2] * in[(gsize) y * width + xx];
          }
        tmp[(gsize) y * width + x] = (float) acc;
      }
  for (int y = 0; y < height; y++)
    for (int x = 0; x < width; x++)
      {
        double acc = 0;
        for (int t = -2; t <= 2 && height > 1; t++)
          {
            int yy = ((y + t * step) % height + height) % height;
            acc += taps[t + 2] * tmp[(gsize) yy * width + x];
          }
        out[(gsize) y * width + x] = height > 1 ? (float) acc : tmp[(gsize) y * width + x];
      }
}

void
ss_starlet_transform (const float *x, int width, int height, int scales, float *out)
{
  gsize n = (gsize) width * height;
  float *current = g_new (float, n), *next = g_new (float, n), *tmp = g_new (float, n);
  memcpy (current, x, n * sizeof (float));
  for (int j = 0; j < scales; j++)
    {
      smooth_b3 (current, width, height, 1 << j, tmp, next);
      for (gsize i = 0; i < n; i++)
        out[(gsize) j * n + i] = current[i] - next[i];
      float *swap = current;
      current = next;
      next = swap;
    }
  memcpy (out + (gsize) scales * n, current, n * sizeof (float));
  g_free (current);
  g_free (next);
  g_free (tmp);
}

void
ss_starlet_noise_norms (const float *spectra, int width, int height, int scales, double *norms)
{
  int sw = width / 2 + 1;
  gsize count = (gsize) height * sw;
  double n = (double) width * height;
  for (int j = 0; j < scales; j++)
    {
      double total = 0;
      for (int ky = 0; ky < height; ky++)
        for (int kx = 0; kx < sw; kx++)
          {
            double p = spectra[(gsize) j * count + (gsize) ky * sw + kx];
            total += ss_half_spectrum_weight (kx, width) * p * p;
          }
      norms[j] = sqrt (total / n);
    }
}
