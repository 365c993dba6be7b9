/* ss-tv.c: periodic differences and TV's grouped shrinkage. See ss-tv.h. */
#include "ss-tv.h"

#include <math.h>

float *
ss_tv_spectra (int width, int height)
{
  int sw = width / 2 + 1;
  gsize count = (gsize) height * sw;
  float *out = g_new (float, 4 * count);
  float *dx = out, *dy = out + 2 * count;
  for (int ky = 0; ky < height; ky++)
    for (int kx = 0; kx < sw; kx++)
      {
        gsize k = (gsize) ky * sw + kx;
        /* The forward difference x[i+1] − x[i] multiplies the DFT by e^{2πik/N} − 1. */
        double ax = 2.0 * G_PI * kx / width, ay = 2.0 * G_PI * ky / height;
        dx[2 * k] = (float) (cos (ax) - 1.0);
        dx[2 * k + 1] = (float) sin (ax);
        dy[2 * k] = height > 1 ? (float) (cos (ay) - 1.0) : 0.0f;
        dy[2 * k + 1] = height > 1 ? (float) sin (ay) : 0.0f;
      }
  return out;
}

void
ss_tv_shrink (float *gx, float *gy, gsize n, float t)
{
  for (gsize i = 0; i < n; i++)
    ss_tv_shrink_pair (&gx[i], &gy[i], t);
}

double
ss_tv_value (const float *x, int width, int height)
{
  double total = 0;
  for (int y = 0; y < height; y++)
    for (int i = 0; i < width; i++)
      {
        double v = x[(gsize) y * width + i];
        double gx = x[(gsize) y * width + (i + 1) % width] - v;
        double gy = x[(gsize) ((y + 1) % height) * width + i] - v;
        total += sqrt (gx * gx + gy * gy);
      }
  return total;
}
