/* ss-cuda-cpadmm.cuh: the per-value arithmetic of a CPADMM iteration, shared
 * by the single solve (ss-cuda-cpadmm.cu) and the batched one
 * (ss-cuda-batch.cu), so that both compute every value the same way. */
#pragma once

#include "ss-cuda-device.cuh"
#include "ss-cuda-internal.h"

#include <type_traits>

typedef struct {
  float rho, sigma, thresh, tau, d_obs, d_off, inv_n;
  bool nonneg;
} CpadmmConstants;

/* The x-update in Fourier space for one frequency: FW = F(w) and FQ =
 * F(z - nu) in, x^/n and c^ x^/n out (in their places). */
__device__ __forceinline__ void
cpadmm_spectral_at (float2 &fw_xh, float2 &fq_cxh, float2 c, const CpadmmConstants &k)
{
  float2 fw = fw_xh, fq = fq_cxh;
  float scale = k.inv_n / (k.rho * (c.x * c.x + c.y * c.y) + k.sigma);
  float2 cw = ss_cmulc (c, fw); /* conj(c) F(w) */
  float2 xh = make_float2 ((k.rho * cw.x + k.sigma * fq.x) * scale,
                           (k.rho * cw.y + k.sigma * fq.y) * scale);
  fw_xh = xh;
  fq_cxh = ss_cmul (c, xh);
}

/* One pixel of the CPADMM update. X_W holds x on entry and w on exit; U_Q
 * holds u on entry and z - nu on exit. */
template <unsigned FLAGS>
__device__ __forceinline__ void
cpadmm_pixel (float &x_w, float &u_q, float &nu, float &mu, float &z, float y, bool observed,
              const CpadmmConstants &k, double &delta)
{
  float x = x_w, u = u_q;
  float d = observed ? k.d_obs : k.d_off;
  float v = d * (k.rho * (u - mu) + y);
  float znew = ss_soft (x + nu, k.thresh, k.nonneg);
  mu = mu + k.tau * (v - u);
  nu = nu + k.tau * (x - znew);
  x_w = v + mu;
  u_q = znew - nu;
  if (FLAGS & SS_ITER_DELTA)
    {
      float dz = znew - z;
      delta += (double) dz * dz;
    }
  z = znew;
}

/* The constants of PARAMS for an N-pixel problem. */
static inline CpadmmConstants
cpadmm_constants (const SsSolveParams *params, size_t n)
{
  CpadmmConstants k;
  k.rho = (float) params->rho;
  k.sigma = (float) params->sigma;
  k.thresh = (float) (params->alpha / params->sigma);
  k.tau = (float) params->tau;
  k.d_obs = (float) (1.0 / (1.0 + params->rho));
  k.d_off = (float) (1.0 / params->rho);
  k.inv_n = (float) (1.0 / (double) n);
  k.nonneg = params->nonneg != FALSE;
  return k;
}

/* Calls LAUNCH with the iteration's flags as a compile-time constant
 * (std::integral_constant), so that each pixel kernel is compiled for the
 * three flag sets an iteration uses: plain, writing the estimate, and
 * writing it with its change. */
template <typename Launch>
static inline void
cpadmm_with_flags (unsigned flags, Launch launch)
{
  switch (flags)
    {
    case 0:
      launch (std::integral_constant<unsigned, 0> ());
      break;
    case SS_ITER_WRITE_ESTIMATE:
      launch (std::integral_constant<unsigned, SS_ITER_WRITE_ESTIMATE> ());
      break;
    default:
      launch (std::integral_constant<unsigned, SS_ITER_WRITE_ESTIMATE | SS_ITER_DELTA> ());
      break;
    }
}
