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

G_BEGIN_DECLS

/* ADMM's stopping rule, one value for both backends: converged when the
 * estimate moved less than this, relative, per iteration (averaged over a
 * report interval). Bright star fields need ~800 iterations (quality's
 * stars-bright: 52.07 dB at 200, 58.92 at 800); extended sources stop far
 * earlier. */
#define SS_ADMM_CONVERGED_CHANGE 1e-5

/* Fills WEIGHT (n floats) for PARAMS's data term. */
void ss_data_weights_fill (const SsProblem *problem, const SsSolveParams *params, float *weight);

G_END_DECLS
