/* ss-rl-tv.h: RL-TV's factor (Dey et al. 2006), one definition compiled for
 * the CPU (ss-cpu-rl.c) and the GPU (ss-cuda-rl.cu), so both backends take
 * the same steps:
 *
 *   1 / max(1 − λ div(∇z/|∇z|), SS_RL_TV_FLOOR)
 *
 * ∇ by forward differences, div by backward ones, both wrapped periodically
 * like the operators; |∇z| = sqrt(|∇z|² + ε²). */
#pragma once

#include <math.h>

#include "ss-host-device.h"

/* The denominator is clamped at this, so that a too-large λ slows RL-TV down
 * instead of flipping signs (Dey et al. need 1 − λ div > 0). */
#define SS_RL_TV_FLOOR 0.1f
/* |∇z| is regularised as sqrt(|∇z|² + eps²), in scaled units. */
#define SS_RL_TV_EPSILON 1e-4f

/* ∇z/|∇z| at (i, j) of the W x H image Z. */
SS_HOST_DEVICE_FN void
ss_rl_unit_gradient (const float *z, int w, int h, int i, int j, float *gx, float *gy)
{
  size_t p = (size_t) j * w + i;
  float dx = z[(size_t) j * w + (i + 1 == w ? 0 : i + 1)] - z[p];
  float dy = z[(size_t) (j + 1 == h ? 0 : j + 1) * w + i] - z[p];
  float norm = sqrtf (dx * dx + dy * dy + SS_RL_TV_EPSILON * SS_RL_TV_EPSILON);
  *gx = dx / norm;
  *gy = dy / norm;
}

SS_HOST_DEVICE_FN float
ss_rl_tv_factor (const float *z, int w, int h, int i, int j, float lambda)
{
  float gx, gy, lx, ly, ux, uy;
  ss_rl_unit_gradient (z, w, h, i, j, &gx, &gy);
  ss_rl_unit_gradient (z, w, h, i == 0 ? w - 1 : i - 1, j, &lx, &ly);
  ss_rl_unit_gradient (z, w, h, i, j == 0 ? h - 1 : j - 1, &ux, &uy);
  float divergence = (gx - lx) + (gy - uy);
  return 1.0f / fmaxf (1.0f - lambda * divergence, SS_RL_TV_FLOOR);
}
