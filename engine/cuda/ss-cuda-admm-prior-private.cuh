/* ss-cuda-admm-prior-private.cuh: what the circulant ADMM's files share
 * (ss-cuda-admm-prior.cu, the solver, and ss-cuda-admm-prior-pixel.cu, its
 * pixel passes; never C code): the constants and the solver's state, and the
 * functions the solver calls in the pixel passes' file. The design is
 * described at the top of ss-cuda-admm-prior.cu. */
#pragma once

#include "ss-cuda-internal.h"
#include "ss-cuda-device.cuh"

#include <math.h>
#include <string.h>

typedef struct {
  float rho, sigma, tau;
  float threshold;   /* TV's λ/σ */
  float floor;       /* positivity: x >= floor */
  float inv_n;
  int width, height;
  bool tv;           /* the TV pair is on */
  bool tv_merged;    /* its splits kept as b = ∇x + ν alone (dual step 1, no reweighting) */
  bool positive;     /* the positivity split is on */
  bool poisson;      /* the data term is the Poisson likelihood: */
  float offset, level;   /* its constants (ss-data-weights.h) */
} AdmmConstants;

typedef struct {
  SsCudaSolver base;
  const SsCudaProblem *p;
  const SsSolveParams *params;
  AdmmConstants k;
  cufftHandle r2c2, c2r2;
  float *real;        /* 2n: [v + μ | Σ W_kᵀ(z_k − ν_k)] */
  float2 *spec;       /* 2 half-spectra */
  float *out;         /* 2n: [Cx | x] */
  float *denominator; /* half-spectrum */
  float *mu, *z, *nu; /* n, 3n (zx, zy, zp), 3n */
  float *weight;      /* n: ω (weighted least squares), or NULL: 1 where observed */
  float *reweight;    /* n: TV's per-pixel factor on the threshold */
  float *previous;    /* n: x at the previous report point */
  float *estimate;    /* n: x at report iterations (OUT's second half is not aligned
                         for cuFFT when n is odd, and the report transforms x) */
  float noise;        /* ε of TV's reweighting */
  SsCudaStarletSplits starlet;   /* scales 0 without the starlet prior */
  float *starlet_power;          /* half-spectrum: Σ_j |ψ^_j|², or NULL */
  int iteration;      /* counted by iterate(), for the reweighting stages */
  SsCudaReporter *reporter;
} Admm;

/* ---- the pixel passes (ss-cuda-admm-prior-pixel.cu) --------------------------- */

/* Pixel 1 (the data, TV and positivity splits; with FLAGS the estimate and
 * its change), the starlet splits, then pixel 2 (the adjoint, TV's and the
 * starlet scales' shares of the second transform input). */
gboolean ss_cuda_admm_prior_pixels (Admm *s, unsigned flags, GError **error);
/* TV's and the starlet splits' reweighting, at the iterations where a
 * reweighting stage starts. */
gboolean ss_cuda_admm_prior_maybe_reweight (Admm *s, GError **error);
