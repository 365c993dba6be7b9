/* ss-cuda-rl-setup.cu: Richardson–Lucy's setup (ss-rl.h) with its transforms
 * on the GPU.
 *
 * The host setup transforms twice at full size: Cᵀ(P y') for the darkest
 * level β and Cᵀ(P1) for the normaliser. On a 27-megapixel camera frame the
 * host's FFTW took about 1.9 s of a 3.5 s run on the H100, against about
 * 2 ms here. What needs no transform stays on the host (ss_rl_setup_data:
 * the blur check, the offset, the mean, the noise and the stop level), so
 * both backends share one definition of every quantity. The reductions end
 * in per-block partials read back once: this runs once per solve, so the
 * one wait costs nothing next to the iterations.
 */
#include "ss-cuda-internal.h"
#include "ss-cuda-device.cuh"
#include "ss-rl.h"
#include "ss-rl-holdout.h"

#include <math.h>

/* out = (y + b)₊ where observed, else 0: y' as the data term sees it. */
template <bool MASK>
__global__ void
rl_shifted_kernel (float *__restrict__ out, const float *__restrict__ y,
                   const unsigned char *__restrict__ mask, size_t n, float b)
{
  for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < n;
       i += (size_t) gridDim.x * blockDim.x)
    out[i] = (!MASK || mask[i]) ? fmaxf (y[i] + b, 0.0f) : 0.0f;
}

__global__ void
rl_constant_kernel (float *__restrict__ x, size_t n, float value)
{
  for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < n;
       i += (size_t) gridDim.x * blockDim.x)
    x[i] = value;
}

/* Block-wide reduction of V with OP, written to partial[blockIdx.x]. */
template <typename Op>
__device__ __forceinline__ void
block_reduce_to (float v, float *partial, Op op)
{
  __shared__ float lanes[32];
  for (int offset = 16; offset > 0; offset >>= 1)
    v = op (v, __shfl_down_sync (0xffffffffu, v, offset));
  int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (lane == 0)
    lanes[warp] = v;
  __syncthreads ();
  if (warp == 0)
    {
      int warps = (blockDim.x + 31) >> 5;
      v = lane < warps ? lanes[lane] : lanes[0];
      for (int offset = 16; offset > 0; offset >>= 1)
        v = op (v, __shfl_down_sync (0xffffffffu, v, offset));
      if (lane == 0)
        partial[blockIdx.x] = v;
    }
}

struct MaxOp { __device__ float operator() (float a, float b) const { return fmaxf (a, b); } };
struct MinOp { __device__ float operator() (float a, float b) const { return fminf (a, b); } };

__global__ void
rl_max_kernel (const float *__restrict__ x, size_t n, float *__restrict__ partial)
{
  float top = 0.0f;
  for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < n;
       i += (size_t) gridDim.x * blockDim.x)
    top = fmaxf (top, x[i]);
  block_reduce_to (top, partial, MaxOp ());
}

/* min of sum/weight over the pixels whose weight exceeds THRESHOLD. */
__global__ void
rl_darkest_kernel (const float *__restrict__ sum, const float *__restrict__ weight, size_t n,
                   float threshold, float *__restrict__ partial)
{
  float low = INFINITY;
  for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < n;
       i += (size_t) gridDim.x * blockDim.x)
    if (weight[i] > threshold)
      low = fminf (low, sum[i] / weight[i]);
  block_reduce_to (low, partial, MinOp ());
}

/* weight ← 1/weight above FLOOR, else 0: ss_rl_weight's normaliser. */
__global__ void
rl_invert_kernel (float *__restrict__ weight, size_t n, float floor)
{
  for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < n;
       i += (size_t) gridDim.x * blockDim.x)
    weight[i] = weight[i] > floor ? 1.0f / weight[i] : 0.0f;
}

/* out = 1 where RL's validation run fits the pixel (observed and in the
 * fitted half of IMAGE), else 0. */
__global__ void
rl_fitted_kernel (float *__restrict__ out, const unsigned char *__restrict__ mask, size_t n,
                  int width, SsRegion image)
{
  for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < n;
       i += (size_t) gridDim.x * blockDim.x)
    out[i] = (mask == NULL || mask[i])
                 && ss_rl_holdout_role (i, width, image) == SS_RL_HOLDOUT_FIT
               ? 1.0f
               : 0.0f;
}

/* Σ over the full spectrum of |c^|² and |c^|⁴, from the half-spectrum (each
 * column weighted by how many full-spectrum entries it stands for), into
 * ACC[0] and ACC[1]. */
__global__ void
rl_spectrum_powers_kernel (const float2 *__restrict__ chat, int spec_width, int height, int width,
                           double *__restrict__ acc)
{
  size_t count = (size_t) spec_width * height;
  double v[2] = { 0.0, 0.0 };
  for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < count;
       i += (size_t) gridDim.x * blockDim.x)
    {
      int kx = (int) (i % spec_width);
      double power = (double) chat[i].x * chat[i].x + (double) chat[i].y * chat[i].y;
      double weight = ss_half_spectrum_weight (kx, width);
      v[0] += weight * power;
      v[1] += weight * power * power;
    }
  ss_block_sum_to<2> (v, acc);
}

/* ss_rl_spectrum_norms from the device's c^ (the host's may be deferred). */
static gboolean
spectrum_norms (SsCudaContext *ctx, const SsCudaProblem *p, double *blur_norm,
                double *smoothing, GError **error)
{
  double *acc = NULL, sums[2] = { 0, 0 };
  if (!ss_cuda_alloc (ctx, (void **) &acc, sizeof sums, "RL's setup", error))
    return FALSE;
  int spec_width = p->width / 2 + 1;
  gboolean ok = CUDA_OK (cudaMemsetAsync (acc, 0, sizeof sums, ctx->stream));
  if (ok)
    {
      rl_spectrum_powers_kernel<<<ss_cuda_blocks (ctx, (size_t) spec_width * p->height),
                                  SS_CUDA_THREADS, 0, ctx->stream>>> (p->chat, spec_width,
                                                                      p->height, p->width, acc);
      ok = LAUNCH_OK ("rl_spectrum_powers_kernel")
           && CUDA_OK (cudaMemcpyAsync (sums, acc, sizeof sums, cudaMemcpyDeviceToHost,
                                        ctx->stream))
           && CUDA_OK (cudaStreamSynchronize (ctx->stream));
    }
  ss_cuda_free (ctx, acc, sizeof sums);
  double dc = ss_operator_dc (p->host->op), n = (double) p->width * p->height;
  *blur_norm = ok && dc > 0 ? sqrt (sums[0] / n) / dc : NAN;
  *smoothing = ok && dc > 0 ? sqrt (sums[1] / n) / (dc * dc) : NAN;
  return ok;
}

/* Over REGION's pixels whose weight exceeds THRESHOLD: how many (ACC[0]),
 * and how many have sum/weight below LEVEL (ACC[1]); ss_rl_sky_tail_of's
 * counts. */
__global__ void
rl_sky_tail_kernel (const float *__restrict__ sum, const float *__restrict__ weight, int width,
                    SsRegion region, float threshold, float level, double *__restrict__ acc)
{
  double v[2] = { 0.0, 0.0 };
  size_t count = (size_t) region.width * region.height;
  for (size_t k = blockIdx.x * (size_t) blockDim.x + threadIdx.x; k < count;
       k += (size_t) gridDim.x * blockDim.x)
    {
      size_t i = (size_t) (region.y0 + (int) (k / region.width)) * width + region.x0
                 + (int) (k % region.width);
      if (weight[i] > threshold)
        {
          v[0] += 1.0;
          v[1] += sum[i] < level * weight[i] ? 1.0 : 0.0;
        }
    }
  ss_block_sum_to<2> (v, acc);
}

/* ss_rl_sky_tail_of on the device's SUM and WEIGHT (whose top is TOP). */
static gboolean
sky_tail (SsCudaContext *ctx, const SsCudaProblem *p, const float *sum, const float *weight,
          float top, SsRegion region, double level, double *tail, GError **error)
{
  *tail = NAN;
  if (isnan (level))
    return TRUE;
  double *acc = NULL, counts[2] = { 0, 0 };
  if (!ss_cuda_alloc (ctx, (void **) &acc, sizeof counts, "RL's setup", error))
    return FALSE;
  gboolean ok = CUDA_OK (cudaMemsetAsync (acc, 0, sizeof counts, ctx->stream));
  if (ok)
    {
      size_t count = (size_t) region.width * region.height;
      rl_sky_tail_kernel<<<ss_cuda_blocks (ctx, count), SS_CUDA_THREADS, 0, ctx->stream>>> (
        sum, weight, p->width, region, 0.5f * top, (float) level, acc);
      ok = LAUNCH_OK ("rl_sky_tail_kernel")
           && CUDA_OK (cudaMemcpyAsync (counts, acc, sizeof counts, cudaMemcpyDeviceToHost,
                                        ctx->stream))
           && CUDA_OK (cudaStreamSynchronize (ctx->stream));
    }
  ss_cuda_free (ctx, acc, sizeof counts);
  if (ok)
    *tail = ss_rl_sky_tail_from_counts (counts[0], counts[1]);
  return ok;
}

/* The blocks' partials, read back and reduced on the host. */
static gboolean
finish_partials (SsCudaContext *ctx, const float *partial, unsigned blocks, gboolean maximum,
                 float *value, GError **error)
{
  g_autofree float *host = g_new (float, blocks);
  if (!CUDA_OK (cudaMemcpyAsync (host, partial, blocks * sizeof (float), cudaMemcpyDeviceToHost,
                                 ctx->stream))
      || !CUDA_OK (cudaStreamSynchronize (ctx->stream)))
    return FALSE;
  float v = host[0];
  for (unsigned b = 1; b < blocks; b++)
    v = maximum ? fmaxf (v, host[b]) : fminf (v, host[b]);
  *value = v;
  return TRUE;
}

/* WEIGHT = Cᵀ(P1): with every pixel observed, c^'s DC term everywhere (see
 * ss-rl.c); else the adjoint of the mask, through SCRATCH and SPEC. */
static gboolean
adjoint_of_mask (SsCudaContext *ctx, const SsCudaProblem *p, float *weight, float *scratch,
                 float2 *spec, GError **error)
{
  unsigned blocks = ss_cuda_blocks (ctx, p->n);
  float dc = (float) ss_operator_dc (p->host->op);
  float *ones = p->mask ? scratch : weight;
  rl_constant_kernel<<<blocks, SS_CUDA_THREADS, 0, ctx->stream>>> (ones, p->n,
                                                                  p->mask ? 1.0f : dc);
  if (!LAUNCH_OK ("rl_constant_kernel"))
    return FALSE;
  return p->mask == NULL || ss_cuda_apply_operator (ctx, p, ones, spec, weight, TRUE, error);
}

/* WEIGHT ← 1/WEIGHT above SS_RL_WEIGHT_FLOOR of its largest value, else 0. */
static gboolean
invert_normaliser (SsCudaContext *ctx, const SsCudaProblem *p, float *weight, float top,
                   GError **error)
{
  rl_invert_kernel<<<ss_cuda_blocks (ctx, p->n), SS_CUDA_THREADS, 0, ctx->stream>>> (
    weight, p->n, (float) SS_RL_WEIGHT_FLOOR * top);
  return LAUNCH_OK ("rl_invert_kernel");
}

/* The largest value of X (n floats), through PARTIAL (one float a block). */
static gboolean
largest (SsCudaContext *ctx, const SsCudaProblem *p, const float *x, float *partial, float *top,
         GError **error)
{
  unsigned blocks = ss_cuda_blocks (ctx, p->n);
  rl_max_kernel<<<blocks, SS_CUDA_THREADS, 0, ctx->stream>>> (x, p->n, partial);
  return LAUNCH_OK ("rl_max_kernel") && finish_partials (ctx, partial, blocks, TRUE, top, error);
}

gboolean
ss_cuda_rl_normaliser (SsCudaContext *ctx, const SsCudaProblem *p, gboolean holdout,
                       SsRegion image, float *weight, float *scratch, float2 *spec,
                       GError **error)
{
  unsigned blocks = ss_cuda_blocks (ctx, p->n);
  float *partial = NULL, top = 0;
  if (!ss_cuda_alloc (ctx, (void **) &partial, blocks * sizeof (float), "RL's normaliser", error))
    return FALSE;
  gboolean ok;
  if (holdout)
    {
      rl_fitted_kernel<<<blocks, SS_CUDA_THREADS, 0, ctx->stream>>> (scratch, p->mask, p->n,
                                                                    p->width, image);
      ok = LAUNCH_OK ("rl_fitted_kernel")
           && ss_cuda_apply_operator (ctx, p, scratch, spec, weight, TRUE, error);
    }
  else
    ok = adjoint_of_mask (ctx, p, weight, scratch, spec, error);
  ok = ok && largest (ctx, p, weight, partial, &top, error)
       && invert_normaliser (ctx, p, weight, top, error);
  ss_cuda_free (ctx, partial, blocks * sizeof (float));
  return ok;
}

gboolean
ss_cuda_rl_setup (SsCudaContext *ctx, const SsCudaProblem *p, const SsSolveParams *params,
                  float *weight, float *scratch, float *sum, float2 *spec, SsRlSetup *setup,
                  GError **error)
{
  if (!ss_rl_setup_data (p->host, params, setup, error))
    return FALSE;
  unsigned blocks = ss_cuda_blocks (ctx, p->n);
  float *partial = NULL;
  if (!ss_cuda_alloc (ctx, (void **) &partial, blocks * sizeof (float), "RL's setup", error))
    return FALSE;
  float b = (float) setup->offset, top = 0, low = INFINITY;
  if (p->mask)
    rl_shifted_kernel<true><<<blocks, SS_CUDA_THREADS, 0, ctx->stream>>> (scratch, p->y,
                                                                          p->mask, p->n, b);
  else
    rl_shifted_kernel<false><<<blocks, SS_CUDA_THREADS, 0, ctx->stream>>> (scratch, p->y, NULL,
                                                                           p->n, b);
  gboolean ok = LAUNCH_OK ("rl_shifted_kernel")
                && ss_cuda_apply_operator (ctx, p, scratch, spec, sum, TRUE, error)
                && adjoint_of_mask (ctx, p, weight, scratch, spec, error);
  ok = ok && largest (ctx, p, weight, partial, &top, error);
  if (ok)
    {
      rl_darkest_kernel<<<blocks, SS_CUDA_THREADS, 0, ctx->stream>>> (sum, weight, p->n,
                                                                     0.5f * top, partial);
      ok = LAUNCH_OK ("rl_darkest_kernel")
           && finish_partials (ctx, partial, blocks, FALSE, &low, error);
    }
  double blur_norm = NAN, smoothing = NAN, tail = NAN;
  ok = ok && spectrum_norms (ctx, p, &blur_norm, &smoothing, error)
       && sky_tail (ctx, p, sum, weight, top, setup->tail_region,
                    ss_rl_sky_tail_level (setup, blur_norm), &tail, error);
  ok = ok && invert_normaliser (ctx, p, weight, top, error);
  ss_cuda_free (ctx, partial, blocks * sizeof (float));
  if (ok)
    ss_rl_setup_finish (setup, isfinite (low) ? MAX (low, 0) : 0, smoothing, tail);
  return ok;
}

gboolean
ss_cuda_rl_floor (SsCudaContext *ctx, const SsProblem *problem, const SsSolveParams *params,
                  double *floor, GError **error)
{
  if (!CUDA_OK (cudaSetDevice (ctx->device)))
    return FALSE;
  ss_cuda_plans_prepare (ctx, problem->op->width, problem->op->height);
  SsCudaProblem p;
  if (!ss_cuda_problem_upload (ctx, problem, &p, error))
    return FALSE;
  float *work = NULL;
  float2 *spec = NULL;
  SsRlSetup setup;
  gboolean ok = ss_cuda_alloc (ctx, (void **) &work, 3 * p.n * sizeof (float), "RL's floor",
                               error)
                && ss_cuda_alloc (ctx, (void **) &spec, p.spec * sizeof (float2), "RL's floor",
                                  error)
                && ss_cuda_rl_setup (ctx, &p, params, work, work + p.n, work + 2 * p.n, spec,
                                     &setup, error);
  ss_cuda_free (ctx, work, 3 * p.n * sizeof (float));
  ss_cuda_free (ctx, spec, p.spec * sizeof (float2));
  ss_cuda_problem_free (ctx, &p);
  if (ok)
    *floor = MIN (setup.background - setup.offset, 0.0);
  return ok;
}
