/* ss-data-weights.h: the per-pixel weights ω of ADMM's data term
 * 1/2 Σ ω_i (PCx − y)_i², shared by both backends (ss-cpu-admm-prior.c,
 * ss-cuda-admm-tv.cu).
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

/* Fills WEIGHT (n floats) for PARAMS's data term. */
void ss_data_weights_fill (const SsProblem *problem, const SsSolveParams *params, float *weight);

G_END_DECLS
