/* ss-cuda-problem.cu: the problem on the device (upload, random benchmark
 * problems) and the small kernels every solver shares. */
#include "ss-cuda-internal.h"
#include "ss-cuda-device.cuh"

#include <math.h>
#include <string.h>

/* ---- shared kernels --------------------------------------------------------- */

template <bool CONJ>
__global__ void
spectrum_multiply_kernel (float2 *__restrict__ s, const float2 *__restrict__ c, size_t count,
                          size_t total, float scale)
{
  for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < total;
       i += (size_t) gridDim.x * blockDim.x)
    {
      float2 cv = c[i % count];
      float2 sv = s[i];
      float2 r = CONJ ? ss_cmulc (cv, sv) : ss_cmul (cv, sv);
      s[i] = make_float2 (r.x * scale, r.y * scale);
    }
}

gboolean
ss_cuda_spectrum_multiply (SsCudaContext *ctx, float2 *s, const float2 *c, size_t count,
                           int batch, gboolean conjugate, float scale, GError **error)
{
  size_t total = count * (size_t) batch;
  unsigned blocks = ss_cuda_blocks (ctx, total);
  if (conjugate)
    spectrum_multiply_kernel<true><<<blocks, SS_CUDA_THREADS, 0, ctx->stream>>> (s, c, count,
                                                                                 total, scale);
  else
    spectrum_multiply_kernel<false><<<blocks, SS_CUDA_THREADS, 0, ctx->stream>>> (s, c, count,
                                                                                  total, scale);
  return LAUNCH_OK ("spectrum_multiply_kernel");
}

__global__ void
apply_mask_kernel (float *__restrict__ x, const unsigned char *__restrict__ mask, size_t n)
{
  for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < n;
       i += (size_t) gridDim.x * blockDim.x)
    if (!mask[i])
      x[i] = 0.0f;
}

gboolean
ss_cuda_apply_operator (SsCudaContext *ctx, const SsCudaProblem *p, const float *x,
                        float2 *spec, float *out, gboolean adjoint, GError **error)
{
  cufftHandle r2c, c2r;
  if (!ss_cuda_plan (ctx, p->width, p->height, 1, CUFFT_R2C, &r2c, error)
      || !ss_cuda_plan (ctx, p->width, p->height, 1, CUFFT_C2R, &c2r, error))
    return FALSE;
  if (adjoint && p->mask)
    {
      /* C^T P^T x: mask first, into OUT, then transform OUT. */
      if (!CUDA_OK (cudaMemcpyAsync (out, x, p->n * sizeof (float), cudaMemcpyDeviceToDevice,
                                     ctx->stream)))
        return FALSE;
      apply_mask_kernel<<<ss_cuda_blocks (ctx, p->n), SS_CUDA_THREADS, 0, ctx->stream>>> (
        out, p->mask, p->n);
      if (!LAUNCH_OK ("apply_mask_kernel"))
        return FALSE;
      x = out;
    }
  if (!CUFFT_OK (cufftExecR2C (r2c, (cufftReal *) x, (cufftComplex *) spec))
      || !ss_cuda_spectrum_multiply (ctx, spec, p->chat, p->spec, 1, adjoint,
                                     (float) (1.0 / (double) p->n), error)
      || !CUFFT_OK (cufftExecC2R (c2r, (cufftComplex *) spec, out)))
    return FALSE;
  if (!adjoint && p->mask)
    {
      apply_mask_kernel<<<ss_cuda_blocks (ctx, p->n), SS_CUDA_THREADS, 0, ctx->stream>>> (
        out, p->mask, p->n);
      return LAUNCH_OK ("apply_mask_kernel");
    }
  return TRUE;
}

__global__ void
fill_random_kernel (float *__restrict__ x, size_t count, unsigned long long seed, float lo,
                    float span)
{
  for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < count;
       i += (size_t) gridDim.x * blockDim.x)
    x[i] = lo + span * ss_uniform ((seed << 40) ^ i);
}

gboolean
ss_cuda_fill_random (SsCudaContext *ctx, float *x, size_t count, guint32 seed, float lo,
                     float hi, GError **error)
{
  fill_random_kernel<<<ss_cuda_blocks (ctx, count), SS_CUDA_THREADS, 0, ctx->stream>>> (
    x, count, seed, lo, hi - lo);
  return LAUNCH_OK ("fill_random_kernel");
}

/* ---- the problem ------------------------------------------------------------ */

void
ss_cuda_problem_free (SsCudaContext *ctx, SsCudaProblem *dev)
{
  ss_cuda_free (ctx, dev->chat, dev->spec * sizeof (float2));
  ss_cuda_free (ctx, dev->y, dev->n * sizeof (float));
  ss_cuda_free (ctx, dev->mask, dev->n);
  ss_cuda_free (ctx, dev->truth, dev->n * sizeof (float));
  ss_cuda_free (ctx, dev->held_y, dev->n * sizeof (float));
  ss_cuda_free (ctx, dev->held_counted, dev->n);
  memset (dev, 0, sizeof *dev);
}

static gboolean
problem_alloc (SsCudaContext *ctx, int width, int height, gboolean mask, gboolean truth,
               gboolean held_out, SsCudaProblem *dev, GError **error)
{
  memset (dev, 0, sizeof *dev);
  dev->width = width;
  dev->height = height;
  dev->n = (size_t) width * height;
  dev->spec = (size_t) height * (width / 2 + 1);
  if (!ss_cuda_alloc (ctx, (void **) &dev->chat, dev->spec * sizeof (float2), "the operator",
                      error)
      || !ss_cuda_alloc (ctx, (void **) &dev->y, dev->n * sizeof (float), "the data", error)
      || (mask && !ss_cuda_alloc (ctx, (void **) &dev->mask, dev->n, "the mask", error))
      || (truth && !ss_cuda_alloc (ctx, (void **) &dev->truth, dev->n * sizeof (float),
                                   "the truth image", error))
      || (held_out && !(ss_cuda_alloc (ctx, (void **) &dev->held_y, dev->n * sizeof (float),
                                       "the held-out data", error)
                        && ss_cuda_alloc (ctx, (void **) &dev->held_counted, dev->n,
                                          "the held-out pixels", error))))
    {
      ss_cuda_problem_free (ctx, dev);
      return FALSE;
    }
  return TRUE;
}

static gboolean
validate_problem (const SsProblem *problem, GError **error)
{
  const SsOperator *op = problem ? problem->op : NULL;
  if (op == NULL || problem->y == NULL || (op->chat == NULL && op->kernel == NULL)
      || op->width <= 0 || op->height <= 0
      || op->spec_width != op->width / 2 + 1 || op->m == 0)
    {
      g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT,
                   "the problem is incomplete (operator, data or size missing)");
      return FALSE;
    }
  return TRUE;
}

gboolean
ss_cuda_problem_upload (SsCudaContext *ctx, const SsProblem *problem, SsCudaProblem *dev,
                        GError **error)
{
  if (!validate_problem (problem, error))
    return FALSE;
  const SsOperator *op = problem->op;
  const SsHeldOut *held = problem->held_out;
  if (!problem_alloc (ctx, op->width, op->height, op->mask != NULL, problem->truth != NULL,
                      held != NULL, dev, error))
    return FALSE;
  dev->m = op->m;
  dev->host = problem;
  dev->lipschitz = op->lipschitz;
  if (!ss_cuda_upload_spectrum (ctx, op, dev->chat, error)
      || !CUDA_OK (cudaMemcpyAsync (dev->y, problem->y, dev->n * sizeof (float),
                                    cudaMemcpyHostToDevice, ctx->stream))
      || (op->mask && !CUDA_OK (cudaMemcpyAsync (dev->mask, op->mask, dev->n,
                                                 cudaMemcpyHostToDevice, ctx->stream)))
      || (problem->truth && !CUDA_OK (cudaMemcpyAsync (dev->truth, problem->truth,
                                                       dev->n * sizeof (float),
                                                       cudaMemcpyHostToDevice, ctx->stream)))
      || (held && !(CUDA_OK (cudaMemcpyAsync (dev->held_y, held->y, dev->n * sizeof (float),
                                              cudaMemcpyHostToDevice, ctx->stream))
                    && CUDA_OK (cudaMemcpyAsync (dev->held_counted, held->counted, dev->n,
                                                 cudaMemcpyHostToDevice, ctx->stream)))))
    {
      ss_cuda_problem_free (ctx, dev);
      return FALSE;
    }
  return TRUE;
}

/* c^ = b^ . s^ with b^ the box:5 row blur (real, depends on the column
 * frequency only) and s^ random with unit-order modulus; mask keeps about
 * half the pixels; y is random where observed. */
__global__ void
random_operator_kernel (float2 *__restrict__ chat, int width, int spec_width, size_t spec,
                        unsigned long long seed)
{
  for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < spec;
       i += (size_t) gridDim.x * blockDim.x)
    {
      int kx = (int) (i % spec_width);
      float phase = 2.0f * 3.14159265358979f * (float) kx / (float) width;
      float b = (1.0f + 2.0f * cosf (phase) + 2.0f * cosf (2.0f * phase)) / 5.0f;
      float re = 2.0f * ss_uniform ((seed << 40) ^ (2 * i)) - 1.0f;
      float im = 2.0f * ss_uniform ((seed << 40) ^ (2 * i + 1)) - 1.0f;
      chat[i] = make_float2 (b * re, b * im);
    }
}

__global__ void
random_data_kernel (float *__restrict__ y, unsigned char *__restrict__ mask, size_t n,
                    unsigned long long seed)
{
  for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < n;
       i += (size_t) gridDim.x * blockDim.x)
    {
      bool keep = ss_uniform ((seed << 40) ^ (3 * i + 7)) < 0.5f;
      mask[i] = keep ? 1 : 0;
      y[i] = keep ? ss_uniform ((seed << 40) ^ (5 * i + 11)) : 0.0f;
    }
}

gboolean
ss_cuda_problem_random (SsCudaContext *ctx, int width, int height, guint32 seed,
                        SsCudaProblem *dev, GError **error)
{
  if (!problem_alloc (ctx, width, height, TRUE, FALSE, FALSE, dev, error))
    return FALSE;
  random_operator_kernel<<<ss_cuda_blocks (ctx, dev->spec), SS_CUDA_THREADS, 0, ctx->stream>>> (
    dev->chat, width, width / 2 + 1, dev->spec, seed);
  random_data_kernel<<<ss_cuda_blocks (ctx, dev->n), SS_CUDA_THREADS, 0, ctx->stream>>> (
    dev->y, dev->mask, dev->n, seed + 1u);
  if (!LAUNCH_OK ("random_problem"))
    {
      ss_cuda_problem_free (ctx, dev);
      return FALSE;
    }
  /* Both factors have modulus <= 1 (|b| <= 1, |s| <= sqrt 2): a safe bound. */
  dev->lipschitz = 2.0;
  dev->m = dev->n / 2; /* expected count; the bench reports speed, not metrics */
  return TRUE;
}

/* ---- an operator's spectrum on the device ----------------------------------- */

gboolean
ss_cuda_upload_spectrum (SsCudaContext *ctx, const SsOperator *op, float2 *chat, GError **error)
{
  size_t spec = (size_t) op->height * op->spec_width;
  if (op->chat != NULL)
    return CUDA_OK (cudaMemcpyAsync (chat, op->chat, spec * sizeof (float2),
                                     cudaMemcpyHostToDevice, ctx->stream));
  /* Deferred (ss_operator_new_deferred): the kernel goes up, the same bytes
   * as c^, and is transformed here instead of by FFTW on the host. */
  size_t n = (size_t) op->width * op->height;
  float *kernel = NULL;
  cufftHandle r2c;
  gboolean ok = ss_cuda_plan (ctx, op->width, op->height, 1, CUFFT_R2C, &r2c, error)
                && ss_cuda_alloc (ctx, (void **) &kernel, n * sizeof (float), "the PSF", error)
                && CUDA_OK (cudaMemcpyAsync (kernel, op->kernel, n * sizeof (float),
                                             cudaMemcpyHostToDevice, ctx->stream))
                && CUFFT_OK (cufftExecR2C (r2c, kernel, (cufftComplex *) chat));
  /* The stream orders the free after the transform; cudaFree waits anyway. */
  ss_cuda_free (ctx, kernel, n * sizeof (float));
  return ok;
}
