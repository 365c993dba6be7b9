/* ss-cs-bench.c: the compressed-sensing benchmarks (ss-cs-bench.h), CPU side,
 * and the dispatch to the CUDA ones. */
#include "ss-cs-bench.h"
#include "ss-config.h"
#include "ss-cpu.h"
#include "ss-fft.h"
#include "ss-error.h"
#include "ss-mem.h"
#include "ss-report.h"

#include <cblas.h>
#include <fftw3.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#if SHARPSKY_HAVE_CUDA
#include "cuda/ss-cuda.h"
#endif

/* Seed 004, Table 3 (sizes) and the best of TB and SM in Tables 4 (K40c) and
 * 5 (GTX 1070): 60 problems, 100 iterations, seconds. */
static const SsCsSeedMatrix seed004[SS_CS_SEED004_MATRICES] = {
  { 32, 8388608, 18.84 },  { 50, 5368709, 19.98 },  { 64, 4194304, 16.24 },
  { 100, 2684350, 16.11 }, { 128, 2097152, 14.99 }, { 200, 1342200, 15.02 },
  { 256, 1048576, 14.04 }, { 400, 671100, 14.63 },  { 512, 524288, 13.66 },
  { 800, 335850, 13.61 },  { 1024, 262144, 13.29 }, { 1600, 166900, 13.25 },
};

const SsCsSeedMatrix *
ss_cs_seed004_matrix (int row)
{
  return row >= 1 && row <= SS_CS_SEED004_MATRICES ? &seed004[row - 1] : NULL;
}

double
ss_cs_seed003_niht_dct_seconds (gsize n, double delta)
{
  /* Table 6, GPU rows: Const + α δ, milliseconds. */
  static const struct { gsize n; double c, a; } table[] = {
    { 1 << 10, 0.545, 0 }, { 1 << 12, 0.577, 0 },     { 1 << 14, 0.648, 0.048 },
    { 1 << 16, 0.861, 0.167 }, { 1 << 18, 1.87, 0.816 }, { 1 << 20, 6.05, 4.68 },
  };
  for (gsize i = 0; i < G_N_ELEMENTS (table); i++)
    if (table[i].n == n)
      return 1e-3 * (table[i].c + table[i].a * delta);
  return NAN;
}

void
ss_cs_bench_params_init (SsCsBenchParams *p)
{
  memset (p, 0, sizeof *p);
  p->which = SS_CS_BENCH_ALL;
  p->dct_n = 1 << 20;
  p->delta = 0.5;
  p->rho = 0.1;
  p->niht_iterations = 50;
  p->matrix = 7;
  p->batch = 60;
  p->fista_iterations = 100;
  p->alm_outer = 10;
  p->alm_inner = 50;
  p->nonzeros = 1024;
  p->seed = 1;
}

void
ss_cs_bench_result_clear (SsCsBenchResult *r)
{
  for (int i = 0; i < r->n_rows; i++)
    {
      g_free (r->rows[i].name);
      g_free (r->rows[i].size);
      g_free (r->rows[i].seed_note);
    }
  r->n_rows = 0;
  g_clear_pointer (&r->device, g_free);
  g_clear_pointer (&r->backend, g_free);
}

void
ss_cs_bench_row_finish (SsCsBenchRow *row)
{
  row->ratio = row->floor_seconds > 0 ? row->seconds / row->floor_seconds : NAN;
  double ours = row->seed_per_iteration ? row->seconds : row->total_seconds;
  row->speedup = ours > 0 ? row->seed_seconds / ours : NAN;
}

/* Bytes a fused NIHT iteration must move besides the transforms: read g and
 * the support, write g_T (2n floats + n bytes); update x from x, g and the
 * support with the support test (3n floats + n bytes); r ← r − μ A g_T and
 * ||A g_T||² (3m floats). */
static double
niht_floor_bytes (gsize n, gsize m)
{
  return 4.0 * (5.0 * n + 3.0 * m) + 2.0 * n;
}

/* FISTA's elementwise bytes an iteration: A y − b (3m), the proximal step
 * and momentum (read y, g, x; write y, x: 5n), per problem. */
static double
fista_floor_bytes (gsize n, gsize m, int batch)
{
  return 4.0 * batch * (3.0 * m + 5.0 * n);
}

static void
row_floor (SsCsBenchRow *row, double ops_seconds, double bytes, double bandwidth)
{
  row->floor_ops_seconds = ops_seconds;
  row->floor_bytes = bytes;
  row->floor_seconds = ops_seconds + bytes / bandwidth;
}

void
ss_cs_bench_row_niht (SsCsBenchRow *row, const SsCsBenchParams *bp, double seconds,
                      double pair_seconds, double bandwidth, double error)
{
  gsize n = bp->dct_n, m = (gsize) round (bp->delta * n), k = (gsize) round (bp->rho * m);
  row->name = g_strdup ("niht-dct");
  row->size = g_strdup_printf ("n %" G_GSIZE_FORMAT ", m %" G_GSIZE_FORMAT ", k %" G_GSIZE_FORMAT
                               " (relative error at the end %.2g)", n, m, k, error);
  row->iterations = bp->niht_iterations;
  row->seconds = seconds;
  row_floor (row, pair_seconds, niht_floor_bytes (n, m), bandwidth);
  /* The timed iterations; the seed's figure is an iteration's, so the
   * speed-up compares per iteration (ss_cs_bench_row_finish). */
  row->total_seconds = seconds * bp->niht_iterations;
  row->seed_per_iteration = TRUE;
  row->seed_seconds = ss_cs_seed003_niht_dct_seconds (n, bp->delta);
  row->seed_note = g_strdup ("seed 003 Table 6 (n = 2^10, 2^12, ..., 2^20), NIHT iteration on "
                             "dct, C2050");
  ss_cs_bench_row_finish (row);
}

void
ss_cs_bench_row_fista (SsCsBenchRow *row, const SsCsBenchParams *bp, double seconds,
                       double products_seconds, double bandwidth)
{
  const SsCsSeedMatrix *mat = ss_cs_seed004_matrix (bp->matrix);
  row->name = g_strdup_printf ("fista-%d", bp->batch);
  row->size = g_strdup_printf ("seed 004 matrix %02d: m %d, n %d, %d problems, %d nonzeros each",
                               bp->matrix, mat->m, mat->n, bp->batch, bp->nonzeros);
  row->iterations = bp->fista_iterations;
  row->seconds = seconds;
  row_floor (row, products_seconds, fista_floor_bytes (mat->n, mat->m, bp->batch), bandwidth);
  /* The seed's runs are 100 iterations of 60 problems. */
  row->total_seconds = seconds * 100 * (60.0 / bp->batch);
  row->seed_seconds = mat->best_seconds;
  row->seed_note = g_strdup ("seed 004 Tables 4-5, best of TB/SM on K40c and GTX 1070, "
                             "60 problems x 100 iterations (ours scaled to that)");
  ss_cs_bench_row_finish (row);
}

void
ss_cs_bench_row_alm (SsCsBenchRow *row, const SsCsBenchParams *bp, double total_seconds,
                     double products_seconds, double bandwidth)
{
  const SsCsSeedMatrix *mat = ss_cs_seed004_matrix (bp->matrix);
  int steps = bp->alm_outer * bp->alm_inner;
  row->name = g_strdup ("alm");
  row->size = g_strdup_printf ("m %d, n %d, %d nonzeros, %d outer x %d inner", mat->m, mat->n,
                               bp->nonzeros, bp->alm_outer, bp->alm_inner);
  row->iterations = steps;
  row->total_seconds = total_seconds;
  row->seconds = total_seconds / steps;
  row_floor (row, products_seconds, fista_floor_bytes (mat->n, mat->m, 1), bandwidth);
  row->seed_seconds = NAN;
  row->seed_note = g_strdup ("seed 001 gives speed-ups only (GALM 36-51x over its serial CPU "
                             "ALM; Table 2's times are not in our copy)");
  ss_cs_bench_row_finish (row);
}

gboolean
ss_cs_bench_stopped (const SsCsBenchParams *bp, GError **error)
{
  if (bp->stop == NULL || *bp->stop == 0)
    return FALSE;
  g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_CANCELLED, "the bench was interrupted");
  return TRUE;
}

void
ss_cs_bench_device_measured (const SsCsBenchParams *bp, const SsCsBenchResult *result)
{
  if (bp->progress != NULL)
    bp->progress (result, bp->user_data);
}

SsLinop *
ss_cs_bench_seed_matrix (const SsCsBenchParams *bp, GError **error)
{
  const SsCsSeedMatrix *mat = ss_cs_seed004_matrix (bp->matrix);
  if (mat == NULL)
    {
      g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT,
                   "matrix %d: seed 004's matrices are 1 to 12", bp->matrix);
      return NULL;
    }
  return ss_linop_new (SS_ENSEMBLE_GAUSSIAN, mat->m, mat->n, 0, bp->seed, bp->memory_limit,
                       error);
}

void
ss_cs_bench_add_row (const SsCsBenchParams *bp, SsCsBenchResult *result)
{
  result->n_rows++;
  ss_cs_bench_device_measured (bp, result);
}

/* The median of REPEATS timings of FUNC (after one untimed call); NAN as
 * soon as BP->stop is set (the caller's ss_cs_bench_stopped says so). */
typedef void (*TimedFunc) (gpointer data);

static double
median_time (const SsCsBenchParams *bp, TimedFunc func, gpointer data, int repeats)
{
  double times[9];
  repeats = CLAMP (repeats, 1, 9);
  func (data);
  for (int r = 0; r < repeats; r++)
    {
      if (ss_cs_bench_stopped (bp, NULL))
        return NAN;
      double t0 = ss_now ();
      func (data);
      times[r] = ss_now () - t0;
    }
  return ss_median_of_doubles (times, repeats);
}

/* ---- NIHT on the DCT ------------------------------------------------------ */

typedef struct {
  fftwf_plan plan;
  float *buffer;
} R2rCall;

static void
run_r2r (gpointer data)
{
  R2rCall *c = data;
  fftwf_execute_r2r (c->plan, c->buffer, c->buffer);
}

/* The two transforms an NIHT iteration cannot avoid, timed alone. */
static double
time_dct_pair (const SsCsBenchParams *bp, gsize n)
{
  float *buffer = ss_mem_alloc (NULL, n * sizeof (float), NULL);
  if (buffer == NULL)
    return NAN;
  int threads = ss_fft_threads ();
  ss_fft_plan_lock ();
  fftwf_plan_with_nthreads (n >= 65536 ? threads : 1);
  unsigned flags = ss_fft_planner_flags (SS_FFT_REPEATED);
  R2rCall forward = { fftwf_plan_r2r_1d ((int) n, buffer, buffer, FFTW_REDFT10, flags), buffer };
  R2rCall inverse = { fftwf_plan_r2r_1d ((int) n, buffer, buffer, FFTW_REDFT01, flags), buffer };
  ss_fft_plan_unlock ();
  for (gsize i = 0; i < n; i++)
    buffer[i] = (float) (i % 17) - 8.0f;
  double t = median_time (bp, run_r2r, &forward, 7) + median_time (bp, run_r2r, &inverse, 7);
  ss_fft_plan_lock ();
  fftwf_destroy_plan (forward.plan);
  fftwf_destroy_plan (inverse.plan);
  ss_fft_plan_unlock ();
  ss_mem_free (NULL, buffer, 0);
  return t;
}

typedef struct {
  const SsCsBenchParams *bp;
  int first, last;
  double t_first, t_last;
} IterationClock;

/* Every iteration: a long timed solve (FISTA's 60 problems on a GiB
 * matrix) must stop within an iteration of a Ctrl-C. */
static gboolean
clock_iteration (int iteration, const float *x, gboolean last, gpointer user_data,
                 GError **error)
{
  IterationClock *c = user_data;
  if (ss_cs_bench_stopped (c->bp, error))
    return FALSE;
  if (iteration == c->first)
    c->t_first = ss_now ();
  if (iteration == c->last)
    c->t_last = ss_now ();
  return TRUE;
}

/* Seconds an iteration of one run, from the end of iteration WARMUP to the
 * end of WARMUP + ITERATIONS: no allocation, no start, and (for a greedy
 * solver) not the first iterations that search the support. FISTA is timed
 * whole, as seed 004 times its runs (its setup is small beside a GEMM). */
static double
time_solver_iterations (const SsCsBenchParams *bp, const SsCsParams *base, SsLinop *A,
                        const float *y, int batch, int warmup, int iterations, float *x_out,
                        GError **error)
{
  SsCsParams p = *base;
  IterationClock clock = { bp, warmup, warmup + iterations, NAN, NAN };
  p.iterations = warmup + iterations;
  p.report_every = 1;
  p.progress = clock_iteration;
  p.user_data = &clock;
  g_autofree float *x = g_new0 (float, A->cols * batch);
  double t0 = ss_now ();
  if (!ss_cs_solve (&p, A, y, batch, x, NULL, error))
    return NAN;
  if (x_out)
    memcpy (x_out, x, A->cols * batch * sizeof (float));
  if (base->algorithm == SS_CS_FISTA)
    return (ss_now () - t0) / p.iterations;
  return (clock.t_last - clock.t_first) / iterations;
}

static gboolean
bench_niht (const SsCsBenchParams *bp, double bandwidth, SsCsBenchRow *row, GError **error)
{
  gsize n = bp->dct_n, m = (gsize) round (bp->delta * n), k = (gsize) round (bp->rho * m);
  g_autoptr (SsLinop) A = ss_linop_new (SS_ENSEMBLE_DCT, m, n, 0, bp->seed, 0, error);
  if (A == NULL)
    return FALSE;
  g_autofree float *truth = NULL, *y = NULL;
  ss_cs_random_problems (A, k, SS_CS_VALUES_GAUSSIAN, 0, bp->seed + 1, 1, &truth, &y);
  SsCsParams p;
  ss_cs_params_init (&p);
  p.algorithm = SS_CS_NIHT;
  p.k = k;
  p.tolerance = 0;   /* every iteration timed runs */
  /* The steady state, support found (seed 003's Table 6 times the step and
   * the stopping test, without the support detection, likewise). */
  g_autofree float *x = g_new0 (float, n);
  double seconds = time_solver_iterations (bp, &p, A, y, 1, 100, bp->niht_iterations, x,
                                           error);
  if (isnan (seconds))
    return FALSE;
  double pair_seconds = time_dct_pair (bp, n);
  if (ss_cs_bench_stopped (bp, error))
    return FALSE;
  ss_cs_bench_row_niht (row, bp, seconds, pair_seconds, bandwidth,
                        ss_cs_relative_error (x, truth, n));
  return TRUE;
}

/* ---- concurrent FISTA and ALM on a dense Gaussian A ---------------------- */

typedef struct {
  SsLinop *A;
  float *in_n, *out_m, *in_m, *out_n;
  int batch;
} GemmCall;

static void
run_gemm_pair (gpointer data)
{
  GemmCall *c = data;
  c->A->apply (c->A, c->in_n, c->out_m, c->batch);
  c->A->adjoint (c->A, c->in_m, c->out_n, c->batch);
}

/* The two products of an iteration (A·X and Aᵀ·R for BATCH columns), alone. */
static double
time_products (const SsCsBenchParams *bp, SsLinop *A, int batch)
{
  GemmCall c = { A, g_new0 (float, A->cols * batch), g_new0 (float, A->rows * batch),
                 g_new0 (float, A->rows * batch), g_new0 (float, A->cols * batch), batch };
  for (gsize i = 0; i < A->cols * batch; i++)
    c.in_n[i] = (float) ((i * 7) % 13) - 6.0f;
  for (gsize i = 0; i < A->rows * batch; i++)
    c.in_m[i] = (float) ((i * 5) % 11) - 5.0f;
  double t = median_time (bp, run_gemm_pair, &c, 3);
  g_free (c.in_n);
  g_free (c.out_m);
  g_free (c.in_m);
  g_free (c.out_n);
  return t;
}

static gboolean
bench_fista (const SsCsBenchParams *bp, SsLinop *A, double bandwidth, SsCsBenchRow *row,
             GError **error)
{
  g_autofree float *truth = NULL, *y = NULL;
  ss_cs_random_problems (A, MIN ((gsize) bp->nonzeros, A->cols), SS_CS_VALUES_GAUSSIAN, 0,
                         bp->seed + 2, bp->batch, &truth, &y);
  ss_linop_lipschitz (A);   /* setup, as the seed's timings exclude it */
  if (ss_cs_bench_stopped (bp, error))
    return FALSE;
  SsCsParams p;
  ss_cs_params_init (&p);
  p.algorithm = SS_CS_FISTA;
  p.alpha = 1e-2;
  double seconds = time_solver_iterations (bp, &p, A, y, bp->batch, 1, bp->fista_iterations,
                                           NULL, error);
  if (isnan (seconds))
    return FALSE;
  double products_seconds = time_products (bp, A, bp->batch);
  if (ss_cs_bench_stopped (bp, error))
    return FALSE;
  ss_cs_bench_row_fista (row, bp, seconds, products_seconds, bandwidth);
  return TRUE;
}

/* ALM's report points (its outer steps, 10 by default) are where a
 * Ctrl-C stops it: a call an outer step, too few to weigh on its time. */
static gboolean
check_stop (int iteration, const float *x, gboolean last, gpointer user_data, GError **error)
{
  return !ss_cs_bench_stopped (user_data, error);
}

static gboolean
bench_alm (const SsCsBenchParams *bp, SsLinop *A, double bandwidth, SsCsBenchRow *row,
           GError **error)
{
  g_autofree float *truth = NULL, *y = NULL;
  ss_cs_random_problems (A, MIN ((gsize) bp->nonzeros, A->cols), SS_CS_VALUES_GAUSSIAN, 0,
                         bp->seed + 3, 1, &truth, &y);
  SsCsParams p;
  ss_cs_params_init (&p);
  p.algorithm = SS_CS_ALM;
  p.iterations = bp->alm_outer;
  p.inner_iterations = bp->alm_inner;
  p.report_every = 1;
  p.progress = check_stop;
  p.user_data = (gpointer) bp;
  g_autofree float *x = g_new0 (float, A->cols);
  double t0 = ss_now ();
  if (!ss_cs_solve (&p, A, y, 1, x, NULL, error))
    return FALSE;
  double seconds = ss_now () - t0;
  double products_seconds = time_products (bp, A, 1);
  if (ss_cs_bench_stopped (bp, error))
    return FALSE;
  ss_cs_bench_row_alm (row, bp, seconds, products_seconds, bandwidth);
  return TRUE;
}

/* FISTA and ALM on one dense Gaussian A, made once (a GiB at matrix 7). */
static gboolean
bench_dense (const SsCsBenchParams *bp, SsCsBenchResult *result, GError **error)
{
  g_autoptr (SsLinop) A = ss_cs_bench_seed_matrix (bp, error);
  if (A == NULL || ss_cs_bench_stopped (bp, error))
    return FALSE;
  if (bp->which & SS_CS_BENCH_FISTA)
    {
      if (!bench_fista (bp, A, result->bandwidth, &result->rows[result->n_rows], error))
        return FALSE;
      ss_cs_bench_add_row (bp, result);
    }
  if (bp->which & SS_CS_BENCH_ALM)
    {
      if (ss_cs_bench_stopped (bp, error)
          || !bench_alm (bp, A, result->bandwidth, &result->rows[result->n_rows], error))
        return FALSE;
      ss_cs_bench_add_row (bp, result);
    }
  return TRUE;
}

gboolean
ss_cs_bench_cpu (const SsCsBenchParams *bp, SsCsBenchResult *result, GError **error)
{
  memset (result, 0, sizeof *result);
  result->backend = g_strdup ("cpu");
  result->device = ss_cpu_device_name ();
  result->bandwidth = ss_cpu_copy_bandwidth ();
  ss_cs_bench_device_measured (bp, result);
  if (bp->which & SS_CS_BENCH_NIHT)
    {
      if (ss_cs_bench_stopped (bp, error)
          || !bench_niht (bp, result->bandwidth, &result->rows[result->n_rows], error))
        return FALSE;
      ss_cs_bench_add_row (bp, result);
    }
  if (bp->which & (SS_CS_BENCH_FISTA | SS_CS_BENCH_ALM))
    return !ss_cs_bench_stopped (bp, error) && bench_dense (bp, result, error);
  return TRUE;
}

/* ---- where a run of solves goes --------------------------------------------- */

struct _SsCsSession
{
  SsBackendKind backend;
#if SHARPSKY_HAVE_CUDA
  SsCudaContext *ctx;   /* made at the session's first GPU solve */
#endif
};

SsCsSession *
ss_cs_session_new (SsBackendKind backend)
{
  SsCsSession *session = g_new0 (SsCsSession, 1);
  session->backend = backend;
  return session;
}

void
ss_cs_session_free (SsCsSession *session)
{
  if (session == NULL)
    return;
#if SHARPSKY_HAVE_CUDA
  ss_cuda_context_free (session->ctx);
#endif
  g_free (session);
}

/* Where SESSION runs: TRUE with *GPU set when on the GPU (its context then
 * made), unset for the CPU (AUTO without a device); FALSE (NO_DEVICE) when
 * CUDA was asked for and there is none, or none in this build. */
static gboolean
session_choose (SsCsSession *session, gboolean *gpu, GError **error)
{
  *gpu = FALSE;
#if SHARPSKY_HAVE_CUDA
  gboolean present = session->ctx != NULL || ss_cuda_device_count () > 0;
  if (present && session->backend != SS_BACKEND_CPU)
    {
      if (session->ctx == NULL && (session->ctx = ss_cuda_context_new (0, error)) == NULL)
        return FALSE;
      *gpu = TRUE;
      return TRUE;
    }
#endif
  if (session->backend != SS_BACKEND_CUDA)
    return TRUE;
  g_set_error (error, SS_ERROR, SS_ERROR_NO_DEVICE,
               SHARPSKY_HAVE_CUDA ? "no CUDA device is present"
                                  : "this build of Sharpsky has no CUDA backend "
                                    "(configure with -Dcuda=enabled)");
  return FALSE;
}

gboolean
ss_cs_bench (SsBackendKind backend, const SsCsBenchParams *params, SsCsBenchResult *result,
             GError **error)
{
  g_autoptr (SsCsSession) session = ss_cs_session_new (backend);
  gboolean gpu;
  if (!session_choose (session, &gpu, error))
    return FALSE;
#if SHARPSKY_HAVE_CUDA
  if (gpu)
    return ss_cuda_cs_bench (session->ctx, params, result, error);
#endif
  return ss_cs_bench_cpu (params, result, error);
}

/* The session's solve on the CPU; with FITTED, then the fit into it. */
static gboolean
solve_on_cpu (const SsCsParams *params, SsLinop *A, const float *y, int batch, float *x,
              float *fitted, int iterations, SsCsStats *stats, GError **error)
{
  if (!ss_cs_solve (params, A, y, batch, x, stats, error))
    return FALSE;
  if (fitted == NULL)
    return TRUE;
  memcpy (fitted, x, A->cols * batch * sizeof (float));
  return ss_cs_debias (A, y, batch, fitted, iterations, params->nonneg, NULL, error);
}

gboolean
ss_cs_session_solve (SsCsSession *session, const SsCsParams *params, SsLinop *A, const float *y,
                     int batch, float *x, float *fitted, int iterations, SsCsStats *stats,
                     const char **used, GError **error)
{
  gboolean gpu;
  if (!session_choose (session, &gpu, error))
    return FALSE;
  *used = gpu ? "cuda" : "cpu";
#if SHARPSKY_HAVE_CUDA
  if (gpu)
    return ss_cuda_cs_solve_debiased (session->ctx, params, A, y, batch, x, fitted, iterations,
                                      stats, error);
#endif
  return solve_on_cpu (params, A, y, batch, x, fitted, iterations, stats, error);
}
