/* ss-cold-pixels.c: blanking the pixels far below their neighbours
 * (ss-cold-pixels.h says why and by what rule). */
#include "ss-cold-pixels.h"
#include "ss-mem.h"

#include <math.h>

/* The largest of the 8 neighbours of P (a row STRIDE wide); NaN ones
 * are passed over (fmaxf). */
static inline float
brightest_neighbour (const float *p, int stride)
{
  return fmaxf (fmaxf (fmaxf (p[-stride - 1], p[-stride]), fmaxf (p[-stride + 1], p[-1])),
                fmaxf (fmaxf (p[1], p[stride - 1]), fmaxf (p[stride], p[stride + 1])));
}

/* The third lowest of the finite values among the 8 neighbours of P; NAN
 * when fewer than 6 are finite. */
static float
third_lowest_neighbour (const float *p, int stride)
{
  const float v[8] = { p[-stride - 1], p[-stride], p[-stride + 1], p[-1],
                       p[1],           p[stride - 1], p[stride],   p[stride + 1] };
  float a = INFINITY, b = INFINITY, c = INFINITY;   /* the three lowest, a <= b <= c */
  int finite = 0;
  for (int k = 0; k < 8; k++)
    {
      float x = v[k];
      if (!isfinite (x))
        continue;
      finite++;
      if (x < a)
        {
          c = b;
          b = a;
          a = x;
        }
      else if (x < b)
        {
          c = b;
          b = x;
        }
      else if (x < c)
        c = x;
    }
  return finite >= 6 ? c : NAN;
}

gsize
ss_cold_pixels_blank (const float *data, int width, int height, double sky, double noise,
                      float *scaled)
{
  const float least = (float) (SS_COLD_SIGMAS * MAX (noise, 0.0));
  gsize blanked = 0;
#pragma omp parallel for reduction(+ : blanked) schedule(static) \
  if ((gsize) width * height > SS_PARALLEL_PIXELS)
  for (int y = 1; y < height - 1; y++)
    for (int x = 1; x < width - 1; x++)
      {
        gsize i = (gsize) y * width + x;
        float value = data[i];
        /* Most pixels are above the sky, or within the noise of their
         * brightest neighbour, which the third lowest cannot exceed: no sort
         * for them. */
        if (!(value < sky - least) || !(value < brightest_neighbour (data + i, width) - least)
            || !isfinite (scaled[i]))
          continue;
        float third = third_lowest_neighbour (data + i, width);
        float depth = fmaxf (least, 0.5f * (float) (third - sky));
        if (isfinite (third) && depth > 0.0f && value < third - depth)
          {
            scaled[i] = NAN;
            blanked++;
          }
      }
  return blanked;
}
