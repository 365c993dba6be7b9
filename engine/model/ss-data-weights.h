/* ss-data-weights.h: what both ADMM backends (ss-cpu-admm-prior.c,
 * ss-cuda-admm-tv.cu) share: the stopping rule, and the per-pixel weights ω
 * of the data term 1/2 Σ ω_i (PCx − y)_i².
 *
 * Weighted least squares: ω_i = m / max(y'_i, m), with y' = y + sky the data
 * as measured and m its median over the observed pixels. Poisson plus read
 * noise has a variance that grows with the level, and the typical (sky)
 * pixel, whose noise the estimate measures, gets weight 1, so α keeps the
 * units of the unweighted problem. Plain least squares: ω = 1. Unobserved
 * pixels get ω = 0 either way.
 */
#pragma once

#include "ss-solver.h"

#include <math.h>

G_BEGIN_DECLS

/* ADMM's stopping rule, one value for both backends: converged when the
 * estimate moved less than this, relative, per iteration (averaged over a
 * report interval). Bright star fields need ~800 iterations (quality's
 * stars-bright: 52.07 dB at 200, 58.92 at 800); extended sources stop far
 * earlier. */
#define SS_ADMM_CONVERGED_CHANGE 1e-5

/* TV's weight relative to α in tv+starlet, for both backends. Measured on
 * quality's small cases with --alpha auto, PSNR HDF / stars / Sun: 0.3:
 * 31.10 / 49.64 / 34.07; 0.5: 31.48 / 49.19 / 34.25; 1: 31.79 / 47.88 /
 * 34.23; 2: 31.68 / 46.19 / 33.85. 0.5 gives the best total and is within
 * 0.1 dB of RL at its best on the Sun and 1.5 dB above it on the stars. */
#define SS_ADMM_TV_BESIDE_STARLET 0.5f

/* The Poisson likelihood split (--data-term poisson): the data as measured,
 * y'' = y + o, with o RL's offset (ss-rl.h: the sky, raised so that y'' >= 0),
 * are counts of mean w = v + o, and the data term is
 *
 *   L Σ_i (w_i − y''_i log w_i),   L the median of y'' over the observed pixels,
 *
 * whose curvature at a pixel of the median level is 1, so α keeps the units
 * of the unweighted problem, as with wls. The split's prox, argmin over w of
 * L (w − y'' log w) + ρ/2 (w − a)², is the positive root of
 * ρ w² + (L − ρ a) w − L y'' = 0; unobserved pixels take w = a. */
typedef struct {
  double offset;   /* o, scaled units */
  double level;    /* L */
} SsPoissonTerm;

/* O and L from the observed data (FALSE with an error when no datum is positive). */
gboolean ss_poisson_term_init (const SsProblem *problem, SsPoissonTerm *term, GError **error);

#include "ss-host-device.h"

/* The prox above, in the engine's units: V from A = u − μ, the observed Y
 * (sky subtracted), the offset O and the level L. The root is taken in the
 * form without cancellation. */
SS_HOST_DEVICE_FN float
ss_poisson_prox (float a, float y, float rho, float offset, float level)
{
  float aw = a + offset, yw = fmaxf (y + offset, 0.0f);
  float b = rho * aw - level;
  float d = sqrtf (b * b + 4.0f * rho * level * yw);
  float w = b >= 0 ? (b + d) / (2.0f * rho) : (d > b ? 2.0f * level * yw / (d - b) : 0.0f);
  return w - offset;
}

/* Fills WEIGHT (n floats) for PARAMS's data term. */
void ss_data_weights_fill (const SsProblem *problem, const SsSolveParams *params, float *weight);

G_END_DECLS
