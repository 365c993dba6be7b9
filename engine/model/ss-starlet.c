/* ss-starlet.c: starlet filters in Fourier space and the spatial reference.
 * See ss-starlet.h. */
#include "ss-starlet.h"

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

float *
ss_starlet_spectra (int width, int height, int scales)
{
  int sw = width / 2 + 1;
  gsize count = (gsize) height * sw;
  float *out = g_new (float, (gsize) (scales + 1) * count);
  for (int ky = 0; ky < height; ky++)
    for (int kx = 0; kx < sw; kx++)
      {
        gsize k = (gsize) ky * sw + kx;
        double previous = 1.0;   /* φ_0 = δ */
        for (int j = 0; j < scales; j++)
          {
            int step = 1 << j;
            /* A height-1 image is a row: no filtering along y. */
            double hy = height > 1 ? b3_response (ky, height, step) : 1.0;
            double next = previous * b3_response (kx, width, step) * hy;
            out[(gsize) j * count + k] = (float) (previous - next);
            previous = next;
          }
        out[(gsize) scales * count + k] = (float) previous;
      }
  return out;
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
            /* Half-spectrum: columns other than 0 and width/2 stand for their mirror. */
            gboolean self_mirrored = kx == 0 || (width % 2 == 0 && kx == width / 2);
            total += (self_mirrored ? 1.0 : 2.0) * p * p;
          }
      norms[j] = sqrt (total / n);
    }
}
