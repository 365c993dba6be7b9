/* ss-rl-accel.h: Richardson–Lucy accelerated by extrapolation (Biggs and
 * Andrews 1997, order 1), one definition for the CPU (ss-cpu-rl.c) and the
 * GPU (ss-cuda-rl.cu). Each step starts from the estimate pushed along its
 * last move,
 *
 *   u_k = (z_k + a_k (z_k − z_{k−1}))₊,   z_{k+1} = RL step from u_k,
 *   g_k = z_{k+1} − u_k,   a_{k+1} = clamp(Σ g_k g_{k−1} / Σ g_{k−1}², 0, cap),
 *
 * a_1 = a_2 = 0. The factor says how far the last two steps agree: near 1
 * where RL creeps along one direction (a star field's cores converging
 * for hundreds of iterations), near 0 where it turns.
 *
 * Why a cap and why off by default (`--accel`, SsSolveParams.rl_accel): with
 * the paper's cap of 1 the best iterate came 3–11 times sooner in a numpy
 * prototype, but 0.05–0.4 dB lower, and the PSNR curve past it fell
 * steeply. With 1/2 the engine's default `rl` ran 1.88 times fewer
 * iterations over the 51 of 77 quality cases its plain run ends before the
 * cap, 0.02 dB lower in the median (worst −0.33); on the 26 where the plain
 * run stops at the cap, the accelerated one, which gets further in as many
 * iterations, differed by −1.43 to +2.61 dB (QUALITY.md, "Accelerated RL").
 * So plain RL stays the default and 1/2 is what `--accel` suggests for
 * speed, except where the hold-out rule's validation reached its cap: there
 * the full run is stopped by its count, and runs accelerated
 * (SS_RL_HOLDOUT_CAPPED_ACCEL). */
#pragma once

#include "ss-host-device.h"

/* The cap `--accel` suggests (SsSolveParams.rl_accel; its default is 0,
 * plain RL: QUALITY.md, "Accelerated RL"). */
#define SS_RL_ACCEL_SUGGESTED 0.5

/* a_{k+1} from CROSS = Σ g_k g_{k−1} and LAST = Σ g_{k−1}²: 0 before there
 * are two steps (LAST 0). */
SS_HOST_DEVICE_FN double
ss_rl_accel_factor (double cross, double last, double cap)
{
  if (!(last > 0))
    return 0.0;
  double a = cross / last;
  return a < 0 ? 0.0 : a > cap ? cap : a;
}

/* The point the next step starts from, u = (z + a (z − previous))₊. */
SS_HOST_DEVICE_FN float
ss_rl_accel_point (float z, float previous, float a)
{
  float u = z + a * (z - previous);
  return u > 0.0f ? u : 0.0f;
}
