/* ss-cuda-cs.cu: compressed sensing on the GPU (seeds 001, 003, 004): the
 * sensing operators (dense with cuBLAS GEMM/GEMV, the subsampled DCT through
 * a real FFT, sparse CSR with cuSPARSE SpMM), and on a block of problems
 * sharing the operator: NIHT and IHT, FISTA (seed 004's concurrent solves as
 * one GEMM per product) and ALM. The same operator and problems as the CPU:
 * the host SsLinop is uploaded.
 *
 * NIHT without a host wait: every iteration is the same enqueued body of
 * exactly two operator applications. A per-problem flag on the device picks
 * what they compute:
 *   step     d = g on the support T (written on T's list only: d is 0 off
 *            it); A d; μ = ||d||²/||A d||²; x += μg on T and the candidate
 *            x + μg everywhere; the support test (min over T of |x + μg| >
 *            max off T of |μg|, two reductions); r −= μ A d; g = Aᵀ r; then
 *            the decision: keep T, or x = H_k(x + μg) by radix selection and
 *            the problem is marked stale;
 *   refresh  (stale) d = x; r = y − A d; x is left alone; g = Aᵀ r.
 * A support change thus costs one refresh iteration (the extra transform),
 * and a steady iteration is the two transforms plus fused elementwise
 * passes: the residual's updates ride in the DCT's gather and adjoint, the
 * decision in the adjoint's first block. The selection kernels act only on
 * problems whose flag asks for them, and in a graph they sit in a
 * conditional node that the decision skips when no problem does. The top-k
 * is a 3-pass radix select on the keys' bits (11, 10, 10 bits, histogram in
 * shared memory): O(n) and no sort, seed 003's binning made exact.
 *
 * This file holds the block solve and the entry points (ss_cuda_cs_solve,
 * with or without the least-squares fit after it, the image solvers of the
 * solver table, the operator check); the operator is in
 * ss-cuda-cs-operator.cu, the radix select in ss-cuda-cs-select.cu,
 * NIHT/IHT/HTP/CoSaMP in ss-cuda-cs-greedy.cu, FISTA and ALM in
 * ss-cuda-cs-fista.cu, the fit (ss_cs_debias's) in ss-cuda-cs-debias.cu
 * and the benchmarks in ss-cuda-cs-bench.cu, with what they share in
 * ss-cuda-cs-private.cuh.
 */
#include "ss-cuda-cs-private.cuh"
#include "ss-report.h"

/* ---- the solve -------------------------------------------------------------- */

typedef struct {
  void *ptr;
  size_t bytes;
} DevBuffer;

static gboolean
alloc_all (SsCudaContext *ctx, DevBuffer *buffers, int count, GError **error)
{
  for (int i = 0; i < count; i++)
    if (buffers[i].bytes
        && !ss_cuda_alloc (ctx, (void **) buffers[i].ptr, buffers[i].bytes, "cs buffers", error))
      return FALSE;
  return TRUE;
}

void
cs_device_free (CsDevice *s)
{
  SsCudaContext *ctx = s->ctx;
  void *buffers[] = { s->borrowed_y ? NULL : s->y, s->x, s->r, s->g, s->d, s->ad, s->trial, s->e,
                      s->lambda, s->target, s->mask, s->merged, s->col, s->hist,
                      s->support };
  for (gsize i = 0; i < G_N_ELEMENTS (buffers); i++)
    ss_cuda_free (ctx, buffers[i], 0);
  if (s->niht_graph)
    cudaGraphExecDestroy (s->niht_graph);
  if (s->L.ctx)
    dev_linop_free (&s->L);
}

/* The work buffers of a block solve on L (already made); Y is given by the
 * caller (uploaded or borrowed). */
static gboolean
cs_device_alloc (CsDevice *s, GError **error)
{
  SsCudaContext *ctx = s->ctx;
  size_t n = s->L.n, m = s->L.m, nb = n * s->batch * 4, mb = m * s->batch * 4;
  gboolean alm = s->params->algorithm == SS_CS_ALM;
  DevBuffer buffers[] = {
    { &s->x, nb }, { &s->r, mb }, { &s->g, nb }, { &s->d, nb }, { &s->ad, mb },
    { &s->trial, nb }, { &s->mask, n * s->batch }, { &s->merged, n * s->batch },
    { &s->col, sizeof (Column) * s->batch },
    { &s->hist, sizeof (unsigned) * RADIX_BINS * s->batch },
    { &s->support, sizeof (unsigned) * MAX (s->params->k, 1) * s->batch },
    { &s->e, alm ? mb : 0 }, { &s->lambda, alm ? mb : 0 }, { &s->target, alm ? mb : 0 },
  };
  /* On the solver's non-blocking stream: a plain cudaMemset runs on the
   * legacy default stream, which that stream's kernels do not wait for. */
  cudaStream_t st = ctx->stream;
  return alloc_all (ctx, buffers, G_N_ELEMENTS (buffers), error)
         && CUDA_OK (cudaMemsetAsync (s->x, 0, nb, st))
         && CUDA_OK (cudaMemsetAsync (s->col, 0, sizeof (Column) * s->batch, st))
         && CUDA_OK (cudaMemsetAsync (s->hist, 0, sizeof (unsigned) * RADIX_BINS * s->batch, st))
         && CUDA_OK (cudaMemsetAsync (s->mask, 0, n * s->batch, st));
}

gboolean
cs_device_init (CsDevice *s, SsCudaContext *ctx, const SsCsParams *params, SsLinop *A,
                const float *y, const float *x, int batch, GError **error)
{
  memset (s, 0, sizeof *s);
  s->ctx = ctx;
  s->params = params;
  s->batch = batch;
  size_t mb = A->rows * batch * 4;
  if (!dev_linop_init (&s->L, ctx, A, batch, error))
    return FALSE;
  s->L.fft_order = s->L.kind == SS_ENSEMBLE_DCT;
  return cs_device_alloc (s, error) && ss_cuda_upload (ctx, (void **) &s->y, y, mb, "y", error)
         && dev_signal_upload (&s->L, x, s->x, batch, error);
}

Niht
niht_of (CsDevice *s)
{
  Niht h = { &s->L, { s->ctx, s->L.n, s->L.m, s->batch, s->params->k, s->params->nonneg, s->col,
                      s->hist, s->support, s->d },
             s->y, s->x, s->r, s->g, s->d, s->ad, s->trial, s->mask, s->merged,
             s->params->inner_iterations, 0.0f, &s->niht_graph };
  if (s->params->algorithm == SS_CS_IHT)
    h.omega = (float) (1.0 / s->L.lipschitz);
  return h;
}

Fista
fista_of (CsDevice *s)
{
  Fista f = { &s->L, s->batch, s->x, s->d, s->ad, s->g, s->y, s->col, s->L.lipschitz,
              s->params->nonneg };
  return f;
}

static gboolean
cs_device_run (CsDevice *s, int iterations, GError **error)
{
  SsCudaContext *ctx = s->ctx;
  const SsCsParams *p = s->params;
  switch (p->algorithm)
    {
    case SS_CS_FISTA:
      {
        Fista f = fista_of (s);
        set_threshold_kernel<<<small_blocks (s->batch), SS_CUDA_THREADS, 0, ctx->stream>>> (
          s->col, s->batch, (float) (p->alpha / f.lipschitz));
        return LAUNCH_OK ("set_threshold_kernel") && fista_run (&f, s->y, iterations, error);
      }
    case SS_CS_ALM:
      return alm_run (s, error);
    case SS_CS_HTP:
    case SS_CS_COSAMP:
      {
        Niht h = niht_of (s);
        gboolean ok = p->algorithm == SS_CS_HTP ? niht_start (&h, error)
                                                : niht_fresh_gradient (&h, error);
        for (int it = 0; ok && it < iterations; it++)
          ok = p->algorithm == SS_CS_HTP ? htp_iteration (&h, error)
                                         : cosamp_iteration (&h, error);
        return ok;
      }
    default:
      {
        Niht h = niht_of (s);
        return niht_start (&h, error) && niht_run (&h, iterations, error);
      }
    }
}

gboolean
ss_cuda_cs_solve_debiased (SsCudaContext *ctx, const SsCsParams *params, SsLinop *A,
                           const float *y, int batch, float *x, float *fitted, int iterations,
                           SsCsStats *stats, GError **error)
{
  double start = ss_now ();
  CsDevice s;
  /* The GPU runs every iteration asked for (no stopping test, so no host
   * wait): a converged NIHT iterate stays put. */
  gboolean ok = cs_device_init (&s, ctx, params, A, y, x, batch, error)
                && cs_device_run (&s, params->iterations, error)
                && dev_signal_download (&s.L, s.x, x, batch, error);
  /* The solve's time, as the CPU's (the fit not included): the download
   * has waited for it. */
  double seconds = ss_now () - start;
  ok = ok
       && (fitted == NULL
           || (cs_device_fit (&s, iterations, error)
               && dev_signal_download (&s.L, s.trial, fitted, batch, error)));
  cs_device_free (&s);
  if (ok && stats)
    {
      memset (stats, 0, sizeof *stats);
      stats->iterations = params->iterations;
      stats->seconds = seconds;
    }
  return ok;
}

gboolean
ss_cuda_cs_solve (SsCudaContext *ctx, const SsCsParams *params, SsLinop *A, const float *y,
                  int batch, float *x, SsCsStats *stats, GError **error)
{
  return ss_cuda_cs_solve_debiased (ctx, params, A, y, batch, x, NULL, 0, stats, error);
}

/* ---- the image solvers of the solver table ------------------------------------ */

typedef struct {
  SsCudaSolver base;
  CsDevice dev;
  SsCsParams cs;
  float *previous;        /* x before the iteration, for the relative change */
  float *report_real;     /* the reporter's scratch image */
  SsCudaReporter *reporter;
} CsImage;

__global__ void
change_kernel (const float *__restrict__ x, const float *__restrict__ previous, size_t n,
               double *__restrict__ acc)
{
  double v[1] = { 0.0 };
  for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < n;
       i += (size_t) gridDim.x * blockDim.x)
    {
      double d = (double) x[i] - previous[i];
      v[0] += d * d;
    }
  ss_block_sum_to<1> (v, acc);
}

static gboolean
cs_image_iterate (gpointer solver, unsigned flags, GError **error)
{
  CsImage *s = (CsImage *) solver;
  SsCudaContext *ctx = s->base.ctx;
  size_t n = s->dev.L.n;
  if ((flags & SS_ITER_DELTA)
      && !CUDA_OK (cudaMemcpyAsync (s->previous, s->dev.x, n * 4, cudaMemcpyDeviceToDevice,
                                    ctx->stream)))
    return FALSE;
  gboolean ok;
  Niht h = niht_of (&s->dev);
  switch (s->cs.algorithm)
    {
    case SS_CS_ALM: ok = alm_outer_step (&s->dev, error); break;
    case SS_CS_HTP: ok = htp_iteration (&h, error); break;
    case SS_CS_COSAMP: ok = cosamp_iteration (&h, error); break;
    default: ok = niht_iteration (&h, error); break;
    }
  if (ok && (flags & SS_ITER_DELTA))
    {
      change_kernel<<<ss_cuda_blocks (ctx, n), SS_CUDA_THREADS, 0, ctx->stream>>> (
        s->dev.x, s->previous, n, s->reporter->block + SS_ACC_DELTA);
      ok = LAUNCH_OK ("change_kernel");
    }
  return ok;
}

static const float *
cs_image_estimate (gpointer solver)
{
  return ((CsImage *) solver)->dev.x;
}

static void
cs_image_destroy (SsCudaSolver *solver)
{
  CsImage *s = (CsImage *) solver;
  ss_cuda_free (solver->ctx, s->previous, 0);
  ss_cuda_free (solver->ctx, s->report_real, 0);
  cs_device_free (&s->dev);
  g_free (s);
}

static SsCudaSolver *
cs_image_new (SsCudaContext *ctx, const SsCudaProblem *p, const SsSolveParams *params,
              SsCudaIterator *it, SsCudaReporter *reporter, GError **error)
{
  if (!(p->lipschitz > 0))
    {
      g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT, "the operator is zero");
      return NULL;
    }
  CsImage *s = g_new0 (CsImage, 1);
  s->base.ctx = ctx;
  s->base.destroy = cs_image_destroy;
  s->reporter = reporter;
  CsDevice *d = &s->dev;
  d->ctx = ctx;
  d->params = &s->cs;
  d->batch = 1;
  d->y = p->y;
  d->borrowed_y = TRUE;
  gboolean ok = ss_cs_params_from_solve (params, p->n, &s->cs, error)
                && dev_circulant_init (&d->L, ctx, p, error) && cs_device_alloc (d, error)
         && ss_cuda_alloc (ctx, (void **) &s->previous, p->n * 4, "the previous estimate", error)
         && ss_cuda_alloc (ctx, (void **) &s->report_real, p->n * 4, "report scratch", error);
  if (ok && s->cs.algorithm == SS_CS_ALM)
    ok = alm_start (d, error);
  else if (ok)
    {
      Niht h = niht_of (d);
      ok = s->cs.algorithm == SS_CS_COSAMP ? niht_fresh_gradient (&h, error)
                                           : niht_start (&h, error);
    }
  if (!ok)
    {
      cs_image_destroy (&s->base);
      return NULL;
    }
  s->base.bytes = ctx->mem_current;
  ss_cuda_reporter_borrow (reporter, d->L.spec, s->report_real, TRUE);
  ss_cuda_iterator_bind (it, s, cs_image_iterate, cs_image_estimate, NULL, TRUE);
  return &s->base;
}

const SsCudaSolverEntry ss_cuda_cs_entry = { cs_image_new, NULL };

gboolean
ss_cuda_linop_check (SsCudaContext *ctx, SsLinop *A, const float *x, float *ax, const float *y,
                     float *aty, int batch, GError **error)
{
  DevLinop L;
  float *dx = NULL, *dax = NULL, *dy = NULL, *daty = NULL;
  size_t nb = A->cols * batch * 4, mb = A->rows * batch * 4;
  gboolean ok = dev_linop_init (&L, ctx, A, batch, error)
                && ss_cuda_upload (ctx, (void **) &dx, x, nb, "x", error)
                && ss_cuda_upload (ctx, (void **) &dy, y, mb, "y", error)
                && ss_cuda_alloc (ctx, (void **) &dax, mb, "Ax", error)
                && ss_cuda_alloc (ctx, (void **) &daty, nb, "Aᵀy", error)
                && dev_apply (&L, dx, dax, batch, error) && dev_adjoint (&L, dy, daty, batch, error)
                && CUDA_OK (cudaStreamSynchronize (ctx->stream))
                && CUDA_OK (cudaMemcpy (ax, dax, mb, cudaMemcpyDeviceToHost))
                && CUDA_OK (cudaMemcpy (aty, daty, nb, cudaMemcpyDeviceToHost));
  ss_cuda_free (ctx, dx, nb);
  ss_cuda_free (ctx, dy, mb);
  ss_cuda_free (ctx, dax, mb);
  ss_cuda_free (ctx, daty, nb);
  if (L.ctx)
    dev_linop_free (&L);
  return ok;
}
