/* ss-cuda-admm-prior-pixel.cu: the pixel passes of the circulant ADMM's
 * iteration (ss-cuda-admm-prior.cu): the data, TV and positivity splits and
 * their duals, the adjoint of TV's and positivity's splits, the starlet
 * splits' launches around them, and TV's reweighting. */
#include "ss-cuda-admm-prior-private.cuh"
#include "ss-data-weights.h"

/* ---- kernels ------------------------------------------------------------------ */

/* The TV pair's grouped shrinkage of (BX, BY) at T, into (*ZX, *ZY). */
__device__ __forceinline__ void
tv_shrink (float bx, float by, float t, float *zx, float *zy)
{
  float norm = sqrtf (bx * bx + by * by);
  float scale = norm > t ? 1.0f - t / norm : 0.0f;
  *zx = bx * scale;
  *zy = by * scale;
}

/* z − ν' of a merged TV pair's b: 2 S(b) − b (ss-cuda-starlet.cu says why). */
__device__ __forceinline__ float2
tv_merged_u (const float *__restrict__ b, size_t n, size_t i, float t)
{
  float bx = b[i], by = b[n + i], zx, zy;
  tv_shrink (bx, by, t, &zx, &zy);
  return make_float2 (2.0f * zx - bx, 2.0f * zy - by);
}

/* The splits from Cx and x: data (v, μ), TV (zx, zy, νx, νy; merged: bx, by), positivity
 * (zp, νp); with WRITE x into ESTIMATE, with DELTA the squared change of x
 * since the previous report. */
template <bool MASK, bool WEIGHTED, bool WRITE, bool DELTA>
__global__ void
admm_pixel_kernel (float *__restrict__ real, const float *__restrict__ out,
                   float *__restrict__ mu, float *__restrict__ z, float *__restrict__ nu,
                   const float *__restrict__ y, const unsigned char *__restrict__ mask,
                   const float *__restrict__ weight, const float *__restrict__ reweight,
                   float *__restrict__ previous, float *__restrict__ estimate,
                   AdmmConstants k, double *__restrict__ acc)
{
  const int w = k.width, h = k.height;
  const size_t n = (size_t) w * h;
  const float *cx = out, *x = out + n;
  double delta[1] = { 0.0 };
  for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < n;
       i += (size_t) gridDim.x * blockDim.x)
    {
      /* The last report's x, loaded first: issued after the stores below, this
       * load and its store made a reporting pass 5.6 times a plain one
       * (1.75 against 0.31 ms at 4096², H200; either alone, 0.38-0.40). */
      float before = DELTA ? previous[i] : 0.0f;
      int px = (int) (i % w), py = (int) (i / w);
      float om = WEIGHTED ? weight[i] : (!MASK || mask[i]) ? 1.0f : 0.0f;
      float u = cx[i], m = mu[i];
      float v = !k.poisson ? (om * y[i] + k.rho * (u - m)) / (om + k.rho)
                : om > 0 ? ss_poisson_prox (u - m, y[i], k.rho, k.offset, k.level) : u - m;
      m += k.tau * (v - u);
      mu[i] = m;
      real[i] = v + m;

      float xi = x[i];
      if (k.tv)
        {
          float ax = x[(size_t) py * w + (px + 1 == w ? 0 : px + 1)] - xi;
          float ay = x[(size_t) (py + 1 == h ? 0 : py + 1) * w + px] - xi;
          if (k.tv_merged)
            {
              /* The previous b gives ν = b − S(b); the new b = ∇x + ν. */
              float bx = nu[i], by = nu[n + i], sx, sy;
              tv_shrink (bx, by, k.threshold, &sx, &sy);
              nu[i] = ax + (bx - sx);
              nu[n + i] = ay + (by - sy);
            }
          else
            {
              float gx, gy;
              tv_shrink (ax + nu[i], ay + nu[n + i], k.threshold * reweight[i], &gx, &gy);
              nu[i] += k.tau * (ax - gx);
              nu[n + i] += k.tau * (ay - gy);
              z[i] = gx;
              z[n + i] = gy;
            }
        }
      if (k.positive)
        {
          float zp = fmaxf (xi + nu[2 * n + i], k.floor);
          float np = nu[2 * n + i] + k.tau * (xi - zp);
          nu[2 * n + i] = np;
          if (k.tv)
            z[2 * n + i] = zp;
          else
            real[n + i] = zp - np;
        }
      else if (!k.tv)
        real[n + i] = 0.0f;
      /* ADMM's x meets x >= floor only in the limit: the estimate handed out
       * is x projected on it, as the CPU's (ss-cpu-admm-prior.c). */
      float xo = k.positive ? fmaxf (xi, k.floor) : xi;
      if (WRITE)
        estimate[i] = xo;
      if (DELTA)
        {
          float d = xo - before;
          delta[0] += (double) d * d;
          previous[i] = xo;
        }
    }
  if (DELTA)
    ss_block_sum_to<1> (delta, acc + SS_ACC_DELTA);
}

/* real[n + i] = Σ_k W_kᵀ (z_k − ν_k) of TV and positivity: backward
 * differences of the TV pair, plus the positivity split (the starlet
 * scales' share is added after). */
__global__ void
admm_adjoint_kernel (float *__restrict__ real, const float *__restrict__ z,
                     const float *__restrict__ nu, AdmmConstants k)
{
  const int w = k.width, h = k.height;
  const size_t n = (size_t) w * h;
  for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < n;
       i += (size_t) gridDim.x * blockDim.x)
    {
      int px = (int) (i % w), py = (int) (i / w);
      size_t left = (size_t) py * w + (px == 0 ? w - 1 : px - 1);
      size_t up = (size_t) (py == 0 ? h - 1 : py - 1) * w + px;
      float b = 0.0f;
      if (k.tv_merged)
        {
          float2 ui = tv_merged_u (nu, n, i, k.threshold);
          b = tv_merged_u (nu, n, left, k.threshold).x - ui.x
              + tv_merged_u (nu, n, up, k.threshold).y - ui.y;
        }
      else if (k.tv)
        b = (z[left] - nu[left]) - (z[i] - nu[i]) + (z[n + up] - nu[n + up])
            - (z[n + i] - nu[n + i]);
      if (k.positive)
        b += z[2 * n + i] - nu[2 * n + i];
      real[n + i] = b;
    }
}

/* ε/(ε + |(zx, zy)|): ss-cpu-admm-prior.c's update_reweights for TV. */
__global__ void
admm_reweight_kernel (float *__restrict__ reweight, const float *__restrict__ z, size_t n,
                      float eps)
{
  for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < n;
       i += (size_t) gridDim.x * blockDim.x)
    reweight[i] = eps / (eps + hypotf (z[i], z[n + i]));
}

/* ---- launches ----------------------------------------------------------------- */

template <bool MASK, bool WEIGHTED, bool WRITE, bool DELTA>
static void
launch_pixel (Admm *s, unsigned blocks)
{
  const SsCudaProblem *p = s->p;
  admm_pixel_kernel<MASK, WEIGHTED, WRITE, DELTA>
    <<<blocks, SS_CUDA_THREADS, 0, s->base.ctx->stream>>> (
      s->real, s->out, s->mu, s->z, s->nu, p->y, p->mask, s->weight, s->reweight, s->previous,
      s->estimate, s->k, s->reporter->block);
}

template <bool MASK, bool WEIGHTED>
static void
launch_pixel_flags (Admm *s, unsigned flags, unsigned blocks)
{
  if (flags & SS_ITER_DELTA)
    launch_pixel<MASK, WEIGHTED, true, true> (s, blocks);
  else if (flags & SS_ITER_WRITE_ESTIMATE)
    launch_pixel<MASK, WEIGHTED, true, false> (s, blocks);
  else
    launch_pixel<MASK, WEIGHTED, false, false> (s, blocks);
}

gboolean
ss_cuda_admm_prior_pixels (Admm *s, unsigned flags, GError **error)
{
  SsCudaContext *ctx = s->base.ctx;
  unsigned blocks = ss_cuda_blocks (ctx, s->p->n);
  if (s->weight)
    launch_pixel_flags<false, true> (s, flags, blocks);
  else if (s->p->mask)
    launch_pixel_flags<true, false> (s, flags, blocks);
  else
    launch_pixel_flags<false, false> (s, flags, blocks);
  size_t n = s->p->n;
  int w = s->p->width, h = s->p->height;
  if (!LAUNCH_OK ("admm_pixel_kernel")
      || (s->starlet.scales > 0
          && !ss_cuda_starlet_splits (ctx, &s->starlet, s->out + n, w, h, s->k.tau, error)))
    return FALSE;
  if (s->k.tv)
    {
      admm_adjoint_kernel<<<blocks, SS_CUDA_THREADS, 0, ctx->stream>>> (s->real, s->z, s->nu,
                                                                         s->k);
      if (!LAUNCH_OK ("admm_adjoint_kernel"))
        return FALSE;
    }
  return (s->starlet.scales == 0
             || ss_cuda_starlet_adjoint_add (ctx, &s->starlet, s->real + n, w, h, error));
}

/* The reweighting stages split the run evenly, as on the CPU. */
gboolean
ss_cuda_admm_prior_maybe_reweight (Admm *s, GError **error)
{
  int stages = s->params->reweight, length = s->params->iterations / (stages + 1);
  if (stages <= 0 || length <= 0 || s->iteration % length != 0 || s->iteration / length > stages
      || !(s->noise > 0))
    return TRUE;
  SsCudaContext *ctx = s->base.ctx;
  if (s->k.tv)
    {
      admm_reweight_kernel<<<ss_cuda_blocks (ctx, s->p->n), SS_CUDA_THREADS, 0, ctx->stream>>> (
        s->reweight, s->z, s->p->n, s->noise);
      if (!LAUNCH_OK ("admm_reweight_kernel"))
        return FALSE;
    }
  return s->starlet.scales == 0 || ss_cuda_starlet_reweight (ctx, &s->starlet, s->p->n, error);
}
