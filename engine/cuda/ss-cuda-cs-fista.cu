/* ss-cuda-cs-fista.cu: FISTA on a block of problems (seed 004's concurrent
 * solves: one GEMM a product) and ALM, whose x-step is FISTA, with each
 * problem's threshold and penalty in its state on the device. */
#include "ss-cuda-cs-private.cuh"

/* ---- FISTA and ALM ---------------------------------------------------------- */

__global__ void
fista_prox_kernel (float *__restrict__ x, float *__restrict__ v, const float *__restrict__ grad,
                   size_t n, const Column *__restrict__ col, float step, float beta, bool nonneg)
{
  float th = col[blockIdx.y].threshold;
  size_t off = blockIdx.y * n;
  COLUMN_LOOP (i, n)
    {
      float a = v[off + i] - step * grad[off + i];
      float xn = ss_soft (a, th, nonneg);
      v[off + i] = xn + beta * (xn - x[off + i]);
      x[off + i] = xn;
    }
}

__global__ void
subtract_kernel (float *__restrict__ a, const float *__restrict__ b, size_t count)
{
  for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < count;
       i += (size_t) gridDim.x * blockDim.x)
    a[i] -= b[i];
}

/* ITERATIONS FISTA steps towards TARGET from x (momentum restarted). */
gboolean
fista_run (Fista *s, const float *target, int iterations, GError **error)
{
  SsCudaContext *ctx = s->L->ctx;
  size_t n = s->L->n, m = s->L->m, nb = n * s->batch, mb = m * s->batch;
  if (!CUDA_OK (cudaMemcpyAsync (s->v, s->x, nb * 4, cudaMemcpyDeviceToDevice, ctx->stream)))
    return FALSE;
  double t = 1.0;
  float step = (float) (1.0 / s->lipschitz);
  dim3 gn = column_grid (ctx, n, s->batch);
  for (int it = 0; it < iterations; it++)
    {
      double t_next = 0.5 * (1.0 + sqrt (1.0 + 4.0 * t * t));
      float beta = (float) ((t - 1.0) / t_next);
      t = t_next;
      if (!dev_apply (s->L, s->v, s->av, s->batch, error))
        return FALSE;
      subtract_kernel<<<ss_cuda_blocks (ctx, mb), SS_CUDA_THREADS, 0, ctx->stream>>> (s->av,
                                                                                    target, mb);
      if (!LAUNCH_OK ("subtract_kernel") || !dev_adjoint (s->L, s->av, s->grad, s->batch, error))
        return FALSE;
      fista_prox_kernel<<<gn, SS_CUDA_THREADS, 0, ctx->stream>>> (s->x, s->v, s->grad, n, s->col,
                                                                  step, beta, s->nonneg);
      if (!LAUNCH_OK ("fista_prox_kernel"))
        return FALSE;
    }
  return TRUE;
}

__global__ void
set_threshold_kernel (Column *col, int batch, float threshold)
{
  int b = blockIdx.x * blockDim.x + threadIdx.x;
  if (b < batch)
    col[b].threshold = threshold;
}

/* max |Aᵀy| per problem, into col->high_off (for ALM's first ρ). */
__global__ void
column_max_kernel (const float *__restrict__ v, size_t n, Column *__restrict__ col)
{
  size_t off = blockIdx.y * n;
  float high = 0.0f;
  COLUMN_LOOP (i, n)
    high = fmaxf (high, fabsf (v[off + i]));
  /* Into high_off (zeroed with the rest of the column state). */
  Column *c = &col[blockIdx.y];
  block_min_max (INFINITY, high, &c->low_on, &c->high_off);
}

__global__ void
alm_init_kernel (Column *col, int batch, bool bp)
{
  int b = blockIdx.x * blockDim.x + threadIdx.x;
  if (b < batch)
    {
      float top = __uint_as_float (col[b].high_off);
      col[b].rho = bp ? 2.0 / fmax ((double) top, 1e-30) : 1.0;
    }
}

/* target = y − e + λ/ρ; the threshold w/(ρL). */
__global__ void
alm_target_kernel (float *__restrict__ target, const float *__restrict__ y,
                   const float *__restrict__ e, const float *__restrict__ lambda, size_t m,
                   Column *__restrict__ col, float weight, double lipschitz)
{
  Column *c = &col[blockIdx.y];
  float rho = (float) c->rho;
  if (blockIdx.x == 0 && threadIdx.x == 0)
    c->threshold = (float) (weight / (c->rho * lipschitz));
  size_t off = blockIdx.y * m;
  COLUMN_LOOP (i, m)
    target[off + i] = y[off + i] - e[off + i] + lambda[off + i] / rho;
}

/* r = y − A x given A x in R; e and λ move; ρ grows for basis pursuit. */
__global__ void
alm_multiplier_kernel (float *__restrict__ ax, const float *__restrict__ y, float *__restrict__ e,
                       float *__restrict__ lambda, size_t m, const Column *__restrict__ col,
                       bool bp)
{
  float p = (float) col[blockIdx.y].rho;
  size_t off = blockIdx.y * m;
  COLUMN_LOOP (i, m)
    {
      float r = y[off + i] - ax[off + i];
      float ei = bp ? 0.0f : (p * r + lambda[off + i]) / (1.0f + p);
      e[off + i] = ei;
      lambda[off + i] += p * (r - ei);
    }
}

__global__ void
alm_grow_kernel (Column *col, int batch)
{
  int b = blockIdx.x * blockDim.x + threadIdx.x;
  if (b < batch)
    col[b].rho *= 1.5;
}

/* λ = e = 0 and ρ from max |Aᵀy| (as the CPU). */
gboolean
alm_start (CsDevice *s, GError **error)
{
  SsCudaContext *ctx = s->ctx;
  gboolean bp = !(s->params->alpha > 0);
  size_t n = s->L.n, m = s->L.m;
  dim3 gn = column_grid (ctx, n, s->batch);
  if (!CUDA_OK (cudaMemsetAsync (s->col, 0, sizeof (Column) * s->batch, ctx->stream))
      || !CUDA_OK (cudaMemsetAsync (s->e, 0, m * s->batch * 4, ctx->stream))
      || !CUDA_OK (cudaMemsetAsync (s->lambda, 0, m * s->batch * 4, ctx->stream))
      || !dev_adjoint (&s->L, s->y, s->g, s->batch, error))
    return FALSE;
  column_max_kernel<<<gn, SS_CUDA_THREADS, 0, ctx->stream>>> (s->g, n, s->col);
  alm_init_kernel<<<small_blocks (s->batch), SS_CUDA_THREADS, 0, ctx->stream>>> (s->col, s->batch,
                                                                                bp);
  return LAUNCH_OK ("alm_init_kernel");
}

/* One outer step: FISTA on the x-step, then e, λ and ρ (no host wait). */
gboolean
alm_outer_step (CsDevice *s, GError **error)
{
  SsCudaContext *ctx = s->ctx;
  const SsCsParams *p = s->params;
  gboolean bp = !(p->alpha > 0);
  size_t m = s->L.m;
  dim3 gm = column_grid (ctx, m, s->batch);
  Fista f = fista_of (s);
  alm_target_kernel<<<gm, SS_CUDA_THREADS, 0, ctx->stream>>> (
    s->target, s->y, s->e, s->lambda, m, s->col, bp ? 1.0f : (float) p->alpha, f.lipschitz);
  if (!LAUNCH_OK ("alm_target_kernel") || !fista_run (&f, s->target, p->inner_iterations, error)
      || !dev_apply (&s->L, s->x, s->ad, s->batch, error))
    return FALSE;
  alm_multiplier_kernel<<<gm, SS_CUDA_THREADS, 0, ctx->stream>>> (s->ad, s->y, s->e, s->lambda,
                                                                  m, s->col, bp);
  if (bp)
    alm_grow_kernel<<<small_blocks (s->batch), SS_CUDA_THREADS, 0, ctx->stream>>> (s->col,
                                                                                  s->batch);
  return LAUNCH_OK ("alm kernels");
}

gboolean
alm_run (CsDevice *s, GError **error)
{
  if (!alm_start (s, error))
    return FALSE;
  for (int outer = 0; outer < s->params->iterations; outer++)
    if (!alm_outer_step (s, error))
      return FALSE;
  return TRUE;
}
