/* ss-cuda-cs-bench.cu: the compressed-sensing benchmarks (ss_cuda_cs_bench):
 * NIHT on the subsampled DCT against its transform pair, FISTA and ALM on
 * seed 004's dense matrices against their products, and the device's copy
 * bandwidth for the floors. */
#include "ss-cuda-cs-private.cuh"
#include "ss-cs-bench.h"

/* ---- benchmarks -------------------------------------------------------------- */

static double
elapsed (SsCudaContext *ctx, cudaEvent_t a, cudaEvent_t b)
{
  float ms = 0;
  cudaEventElapsedTime (&ms, a, b);
  return ms * 1e-3;
}

typedef gboolean (*DevWork) (gpointer data, GError **error);

/* Median of 5 timings of WORK (after one untimed run), between events;
 * NAN with the error once BP->stop is set (looked at between runs). */
static double
time_device (SsCudaContext *ctx, const SsCsBenchParams *bp, DevWork work, gpointer data,
             GError **error)
{
  cudaEvent_t a, b;
  if (!CUDA_OK (cudaEventCreate (&a)) || !CUDA_OK (cudaEventCreate (&b)))
    return NAN;
  double times[5];
  gboolean ok = work (data, error) && CUDA_OK (cudaStreamSynchronize (ctx->stream));
  for (int r = 0; ok && r < 5; r++)
    {
      ok = !ss_cs_bench_stopped (bp, error) && CUDA_OK (cudaEventRecord (a, ctx->stream))
           && work (data, error)
           && CUDA_OK (cudaEventRecord (b, ctx->stream)) && CUDA_OK (cudaEventSynchronize (b));
      times[r] = elapsed (ctx, a, b);
    }
  cudaEventDestroy (a);
  cudaEventDestroy (b);
  if (!ok)
    return NAN;
  for (int i = 1; i < 5; i++)
    for (int j = i; j > 0 && times[j] < times[j - 1]; j--)
      {
        double t = times[j];
        times[j] = times[j - 1];
        times[j - 1] = t;
      }
  return times[2];
}

typedef struct {
  CsDevice *s;
  int iterations;
} NihtWork;

static gboolean
niht_work (gpointer data, GError **error)
{
  NihtWork *w = (NihtWork *) data;
  Niht h = niht_of (w->s);
  return niht_run (&h, w->iterations, error);
}

/* The transform pair ITERATIONS times: timed over as long a run as the
 * iterations it is the floor of, so that one pair's launch jitter (a few µs
 * on 40) does not move the floor from run to run. */
typedef struct {
  DevLinop *L;
  int iterations;
} PairWork;

static gboolean
fft_pair_work (gpointer data, GError **error)
{
  PairWork *w = (PairWork *) data;
  DevLinop *L = w->L;
  for (int i = 0; i < w->iterations; i++)
    if (!CUFFT_OK (cufftExecR2C (L->r2c, L->perm, (cufftComplex *) L->spec))
        || !CUFFT_OK (cufftExecC2R (L->c2r, (cufftComplex *) L->spec, L->perm)))
      return FALSE;
  return TRUE;
}

typedef struct {
  CsDevice *s;
  int iterations;
} FistaWork;

static gboolean
fista_work (gpointer data, GError **error)
{
  FistaWork *w = (FistaWork *) data;
  Fista f = fista_of (w->s);
  return fista_run (&f, w->s->y, w->iterations, error);
}

static gboolean
products_work (gpointer data, GError **error)
{
  CsDevice *s = (CsDevice *) data;
  return dev_apply (&s->L, s->d, s->ad, s->batch, error)
         && dev_adjoint (&s->L, s->ad, s->g, s->batch, error);
}

static gboolean
alm_work (gpointer data, GError **error)
{
  return alm_run ((CsDevice *) data, error);
}

/* The device's copy bandwidth (read + write), as ss-cuda-bench.cu measures it. */
static double
device_bandwidth (SsCudaContext *ctx, GError **error)
{
  size_t bytes = 512u << 20;
  void *a = NULL, *b = NULL;
  if (!ss_cuda_alloc (ctx, &a, bytes, "bandwidth test", error)
      || !ss_cuda_alloc (ctx, &b, bytes, "bandwidth test", error))
    {
      ss_cuda_free (ctx, a, bytes);
      return NAN;
    }
  cudaEvent_t e0, e1;
  cudaEventCreate (&e0);
  cudaEventCreate (&e1);
  double best = 0;
  for (int r = 0; r < 5; r++)
    {
      cudaEventRecord (e0, ctx->stream);
      cudaMemcpyAsync (b, a, bytes, cudaMemcpyDeviceToDevice, ctx->stream);
      cudaEventRecord (e1, ctx->stream);
      cudaEventSynchronize (e1);
      double t = elapsed (ctx, e0, e1);
      best = MAX (best, 2.0 * bytes / t);
    }
  cudaEventDestroy (e0);
  cudaEventDestroy (e1);
  ss_cuda_free (ctx, a, bytes);
  ss_cuda_free (ctx, b, bytes);
  return CUDA_OK (cudaGetLastError ()) ? best : NAN;
}

static gboolean
bench_niht (SsCudaContext *ctx, const SsCsBenchParams *bp, double bandwidth, SsCsBenchRow *row,
            GError **error)
{
  gsize n = bp->dct_n, m = (gsize) round (bp->delta * n), k = (gsize) round (bp->rho * m);
  g_autoptr (SsLinop) A = ss_linop_new (SS_ENSEMBLE_DCT, m, n, 0, bp->seed, 0, error);
  if (A == NULL)
    return FALSE;
  g_autofree float *truth = NULL, *y = NULL;
  ss_cs_random_problems (A, k, SS_CS_VALUES_GAUSSIAN, 0, bp->seed + 1, 1, &truth, &y);
  g_autofree float *x0 = g_new0 (float, n);
  SsCsParams p;
  ss_cs_params_init (&p);
  p.algorithm = SS_CS_NIHT;
  p.k = k;
  CsDevice s;
  gboolean ok = cs_device_init (&s, ctx, &p, A, y, x0, 1, error);
  if (ok)
    {
      /* The steady state: 100 iterations find the support first. */
      Niht h = niht_of (&s);
      ok = niht_start (&h, error) && niht_run (&h, 100, error);
    }
  NihtWork work = { &s, bp->niht_iterations };
  double t = ok ? time_device (ctx, bp, niht_work, &work, error) : NAN;
  PairWork pairs = { &s.L, bp->niht_iterations };
  double pair = ok && !isnan (t)
                ? time_device (ctx, bp, fft_pair_work, &pairs, error) / bp->niht_iterations : NAN;
  if (ok && !isnan (t) && !isnan (pair))
    {
      g_autofree float *x = g_new (float, n);
      ok = dev_signal_download (&s.L, s.x, x, 1, error);
      ss_cs_bench_row_niht (row, bp, t / bp->niht_iterations, pair, bandwidth,
                            ss_cs_relative_error (x, truth, n));
    }
  cs_device_free (&s);
  return ok && !isnan (t) && !isnan (pair);
}

static gboolean
bench_fista_alm (SsCudaContext *ctx, const SsCsBenchParams *bp, double bandwidth,
                 SsCsBenchResult *result, GError **error)
{
  g_autoptr (SsLinop) A = ss_cs_bench_seed_matrix (bp, error);
  if (A == NULL)
    return FALSE;
  gboolean ok = TRUE;
  if (bp->which & SS_CS_BENCH_FISTA)
    {
      g_autofree float *truth = NULL, *y = NULL;
      ss_cs_random_problems (A, MIN ((gsize) bp->nonzeros, A->cols), SS_CS_VALUES_GAUSSIAN, 0,
                             bp->seed + 2, bp->batch, &truth, &y);
      g_autofree float *x0 = g_new0 (float, A->cols * bp->batch);
      SsCsParams p;
      ss_cs_params_init (&p);
      p.algorithm = SS_CS_FISTA;
      p.alpha = 1e-2;
      CsDevice s;
      ok = cs_device_init (&s, ctx, &p, A, y, x0, bp->batch, error);
      if (ok)
        {
          Fista f = fista_of (&s);
          set_threshold_kernel<<<small_blocks (bp->batch), SS_CUDA_THREADS, 0, ctx->stream>>> (
            s.col, bp->batch, (float) (p.alpha / f.lipschitz));
          ok = LAUNCH_OK ("set_threshold_kernel");
        }
      FistaWork work = { &s, bp->fista_iterations };
      double t = ok ? time_device (ctx, bp, fista_work, &work, error) : NAN;
      double products = ok && !isnan (t) ? time_device (ctx, bp, products_work, &s, error) : NAN;
      ok = ok && !isnan (t) && !isnan (products);
      if (ok)
        {
          ss_cs_bench_row_fista (&result->rows[result->n_rows], bp, t / bp->fista_iterations,
                                 products, bandwidth);
          ss_cs_bench_add_row (bp, result);
        }
      cs_device_free (&s);
    }
  if (ok && (bp->which & SS_CS_BENCH_ALM) && !ss_cs_bench_stopped (bp, error))
    {
      g_autofree float *truth = NULL, *y = NULL;
      ss_cs_random_problems (A, MIN ((gsize) bp->nonzeros, A->cols), SS_CS_VALUES_GAUSSIAN, 0,
                             bp->seed + 3, 1, &truth, &y);
      g_autofree float *x0 = g_new0 (float, A->cols);
      SsCsParams p;
      ss_cs_params_init (&p);
      p.algorithm = SS_CS_ALM;
      p.iterations = bp->alm_outer;
      p.inner_iterations = bp->alm_inner;
      CsDevice s;
      ok = cs_device_init (&s, ctx, &p, A, y, x0, 1, error);
      double t = ok ? time_device (ctx, bp, alm_work, &s, error) : NAN;
      double products = ok && !isnan (t) ? time_device (ctx, bp, products_work, &s, error) : NAN;
      ok = ok && !isnan (t) && !isnan (products);
      if (ok)
        {
          ss_cs_bench_row_alm (&result->rows[result->n_rows], bp, t, products, bandwidth);
          ss_cs_bench_add_row (bp, result);
        }
      cs_device_free (&s);
    }
  return ok;
}

gboolean
ss_cuda_cs_bench (SsCudaContext *ctx, const SsCsBenchParams *bp, SsCsBenchResult *result,
                  GError **error)
{
  memset (result, 0, sizeof *result);
  result->backend = g_strdup ("cuda");
  result->device = g_strdup (ss_cuda_context_get_device_name (ctx));
  result->bandwidth = device_bandwidth (ctx, error);
  if (isnan (result->bandwidth))
    return FALSE;
  ss_cs_bench_device_measured (bp, result);
  if (bp->which & SS_CS_BENCH_NIHT)
    {
      if (ss_cs_bench_stopped (bp, error)
          || !bench_niht (ctx, bp, result->bandwidth, &result->rows[result->n_rows], error))
        return FALSE;
      ss_cs_bench_add_row (bp, result);
    }
  if ((bp->which & (SS_CS_BENCH_FISTA | SS_CS_BENCH_ALM))
      && (ss_cs_bench_stopped (bp, error)
          || !bench_fista_alm (ctx, bp, result->bandwidth, result, error)))
    return FALSE;
  return TRUE;
}
