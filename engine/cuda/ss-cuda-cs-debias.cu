/* ss-cuda-cs-debias.cu: ss_cs_debias on the device, after a block solve.
 *
 * The LASSO's estimate (FISTA, ALM with α > 0) is judged after a least-
 * squares fit on the support it found (ss-cs-phase.h says why). On the
 * host that fit was a CGLS over the whole block after the solve's copy
 * back; here it runs where the block already is, with HTP's and CoSaMP's
 * CGLS (cg_begin, cg_step: device scalars, the host's stopping test of
 * γ <= 1e-14 γ0), and the block is copied back once, at the end.
 *
 * The support is where the estimate is nonzero (soft thresholding makes
 * exact zeros); its size is counted on the device, and a problem with an
 * empty support or more than m entries (no unique fit) gets an empty mask:
 * its CGLS is inactive from the start and its estimate is left as it is,
 * as on the host. */
#include "ss-cuda-cs-private.cuh"

/* CGLS steps between two looks at whether any problem still moves: one
 * copy of a word and one wait per this many steps, none per step. The
 * result does not depend on it (an inactive problem does not move). */
#define FIT_CHECK_EVERY 16

__global__ void
fit_reset_kernel (Column *col, int batch)
{
  int b = blockIdx.x * blockDim.x + threadIdx.x;
  if (b < batch)
    col[b].fit_size = 0;
}

/* The nonzeros of each problem's estimate, into its fit_size. */
__global__ void
fit_count_kernel (const float *__restrict__ x, size_t n, Column *__restrict__ col)
{
  size_t off = blockIdx.y * n;
  double v[1] = { 0.0 };
  COLUMN_LOOP (i, n)
    v[0] += x[off + i] != 0.0f;
  ss_block_sum_to<1> (v, &col[blockIdx.y].fit_size);
}

/* Whether problem C has a fit: a support of 1..m entries. */
static __device__ __forceinline__ bool
fit_wanted (const Column *c, size_t m)
{
  return c->fit_size >= 1.0 && c->fit_size <= (double) m;
}

/* The mask of the fit: x != 0, and nothing for a problem without a fit. */
__global__ void
fit_mask_kernel (const float *__restrict__ x, unsigned char *__restrict__ mask, size_t n,
                 size_t m, const Column *__restrict__ col)
{
  bool wanted = fit_wanted (&col[blockIdx.y], m);
  size_t off = blockIdx.y * n;
  COLUMN_LOOP (i, n)
    mask[off + i] = wanted && x[off + i] != 0.0f;
}

/* x >= 0 after the fit, on the problems fitted only (as the host). */
__global__ void
fit_clamp_kernel (float *__restrict__ x, size_t n, size_t m, const Column *__restrict__ col)
{
  if (!fit_wanted (&col[blockIdx.y], m))
    return;
  size_t off = blockIdx.y * n;
  COLUMN_LOOP (i, n)
    x[off + i] = fmaxf (x[off + i], 0.0f);
}

__global__ void
count_active_kernel (const Column *__restrict__ col, int batch, unsigned *__restrict__ count)
{
  int b = blockIdx.x * blockDim.x + threadIdx.x;
  if (b < batch && col[b].cg_active)
    atomicAdd (count, 1u);
}

/* The masks of the fit from the estimate X (sizes counted first). */
static gboolean
fit_masks (CsDevice *s, GError **error)
{
  SsCudaContext *ctx = s->ctx;
  size_t n = s->L.n;
  dim3 gn = column_grid (ctx, n, s->batch);
  fit_reset_kernel<<<small_blocks (s->batch), SS_CUDA_THREADS, 0, ctx->stream>>> (s->col,
                                                                                 s->batch);
  fit_count_kernel<<<gn, SS_CUDA_THREADS, 0, ctx->stream>>> (s->x, n, s->col);
  fit_mask_kernel<<<gn, SS_CUDA_THREADS, 0, ctx->stream>>> (s->x, s->mask, n, s->L.m, s->col);
  return LAUNCH_OK ("fit mask kernels");
}

/* *ANY: whether some problem's CGLS is still active; COUNT is a device
 * word. The one wait of a check. */
static gboolean
any_active (CsDevice *s, unsigned *count, gboolean *any, GError **error)
{
  SsCudaContext *ctx = s->ctx;
  unsigned host = 0;
  if (!CUDA_OK (cudaMemsetAsync (count, 0, sizeof (unsigned), ctx->stream)))
    return FALSE;
  count_active_kernel<<<small_blocks (s->batch), SS_CUDA_THREADS, 0, ctx->stream>>> (
    s->col, s->batch, count);
  if (!LAUNCH_OK ("count_active_kernel")
      || !CUDA_OK (cudaMemcpyAsync (&host, count, sizeof host, cudaMemcpyDeviceToHost,
                                    ctx->stream))
      || !CUDA_OK (cudaStreamSynchronize (ctx->stream)))
    return FALSE;
  *any = host > 0;
  return TRUE;
}

/* At most ITERATIONS CGLS steps on the masks, stopping early once no
 * problem moves (the host's loop breaks there too); the first look also
 * spares a block where nothing is to be fitted its steps. */
static gboolean
fit_run (CsDevice *s, Niht *h, int iterations, GError **error)
{
  unsigned *count = NULL;
  gboolean any = TRUE;
  gboolean ok = ss_cuda_alloc (s->ctx, (void **) &count, sizeof (unsigned), "the fit's count",
                               error);
  for (int it = 0; ok && any && it < iterations; it++)
    {
      if (it % FIT_CHECK_EVERY == 0)
        ok = any_active (s, count, &any, error);
      if (ok && any)
        ok = cg_step (h, s->mask, error);
    }
  ss_cuda_free (s->ctx, count, sizeof (unsigned));
  return ok;
}

gboolean
cs_device_fit (CsDevice *s, int iterations, GError **error)
{
  SsCudaContext *ctx = s->ctx;
  size_t n = s->L.n;
  /* The fit lives in trial, from a copy of x: the caller keeps the solver's
   * own estimate (its error is reported beside the fit's). */
  Niht h = niht_of (s);
  h.x = s->trial;
  if (!CUDA_OK (cudaMemcpyAsync (s->trial, s->x, n * s->batch * 4, cudaMemcpyDeviceToDevice,
                                 ctx->stream)))
    return FALSE;
  if (iterations < 1)
    return TRUE;
  if (!fit_masks (s, error) || !cg_begin (&h, s->mask, error)
      || !fit_run (s, &h, iterations, error))
    return FALSE;
  if (!s->params->nonneg)
    return TRUE;
  fit_clamp_kernel<<<column_grid (ctx, n, s->batch), SS_CUDA_THREADS, 0, ctx->stream>>> (
    s->trial, n, s->L.m, s->col);
  return LAUNCH_OK ("fit_clamp_kernel");
}
