/* ss-cuda-bench.cu: time per iteration against the floor measured in the same
 * process (DESIGN.md, "How we measure speed").
 *
 * The problem is drawn on the device (ss_cuda_problem_random: a box:5 row
 * blur times a random circulant, half the pixels observed), so any size,
 * 16384^2 included, is ready in milliseconds; its values do not change the
 * work an iteration does.
 *
 * Floor = the transforms an iteration cannot avoid, timed here with cuFFT on
 * random data (CPADMM and ADMM-TV: one batch-of-2 R2C plus one batch-of-2
 * C2R; FISTA and ISTA: two dependent R2C+C2R pairs) + the elementwise bytes of the fused
 * passes at the device copy bandwidth measured here (a large
 * cudaMemcpyDeviceToDevice, bytes read + written).
 * The solver is then run through the same code path as a solve (report only
 * at the end), once to warm up (graph capture, library code) and
 * BENCH_REPEATS times timed with CUDA events; the median is reported.
 */
#include "ss-cuda-internal.h"
#include "ss-report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define BENCH_REPEATS 3
#define FLOOR_BATCHES 7

typedef struct {
  cudaEvent_t start, stop;
} EventPair;

static gboolean
events_new (EventPair *e, GError **error)
{
  e->start = e->stop = NULL;
  return CUDA_OK (cudaEventCreate (&e->start)) && CUDA_OK (cudaEventCreate (&e->stop));
}

static void
events_free (EventPair *e)
{
  if (e->start)
    cudaEventDestroy (e->start);
  if (e->stop)
    cudaEventDestroy (e->stop);
}

static gboolean
events_seconds (SsCudaContext *ctx, EventPair *e, double *seconds, GError **error)
{
  float ms = 0;
  if (!CUDA_OK (cudaEventRecord (e->stop, ctx->stream)) || !CUDA_OK (cudaEventSynchronize (e->stop))
      || !CUDA_OK (cudaEventElapsedTime (&ms, e->start, e->stop)))
    return FALSE;
  *seconds = ms * 1e-3;
  return TRUE;
}

/* Device copy bandwidth (read + write), over 2 x 1 GiB or what is free. */
static gboolean
measure_bandwidth (SsCudaContext *ctx, double *bandwidth, GError **error)
{
  gsize free_now = 0;
  ss_cuda_context_get_memory (ctx, &free_now, NULL);
  size_t bytes = MIN ((size_t) 1 << 30, free_now / 4);
  bytes &= ~(size_t) 255;
  void *a = NULL, *b = NULL;
  EventPair e;
  double times[FLOOR_BATCHES];
  gboolean ok = events_new (&e, error) && ss_cuda_alloc (ctx, &a, bytes, "the copy test", error)
                && ss_cuda_alloc (ctx, &b, bytes, "the copy test", error)
                && CUDA_OK (cudaMemsetAsync (a, 1, bytes, ctx->stream))
                && CUDA_OK (cudaMemcpyAsync (b, a, bytes, cudaMemcpyDeviceToDevice, ctx->stream));
  for (int r = 0; ok && r < FLOOR_BATCHES; r++)
    ok = CUDA_OK (cudaEventRecord (e.start, ctx->stream))
         && CUDA_OK (cudaMemcpyAsync (b, a, bytes, cudaMemcpyDeviceToDevice, ctx->stream))
         && events_seconds (ctx, &e, &times[r], error);
  if (ok)
    *bandwidth = 2.0 * (double) bytes / ss_median_of_doubles (times, FLOOR_BATCHES);
  ss_cuda_free (ctx, a, bytes);
  ss_cuda_free (ctx, b, bytes);
  events_free (&e);
  return ok;
}

/* The transforms of one iteration, on random data in scratch buffers. */
static gboolean
measure_fft_floor (SsCudaContext *ctx, const SsCudaProblem *p, SsSolverKind kind,
                   double *seconds, GError **error)
{
  gboolean cpadmm = kind == SS_SOLVER_CPADMM || kind == SS_SOLVER_ADMM_PRIOR;
  int batch = cpadmm ? 2 : 1;
  size_t real_bytes = batch * p->n * sizeof (float);
  size_t spec_bytes = batch * p->spec * sizeof (float2);
  cufftHandle r2c, c2r;
  float *real = NULL;
  float2 *spec = NULL;
  EventPair e;
  /* Enough repetitions for ~20 ms per batch, at least 3. */
  int reps = (int) CLAMP (2e9 / (double) (p->n * batch), 3.0, 200.0);
  double times[FLOOR_BATCHES];
  gboolean ok = events_new (&e, error)
                && ss_cuda_plan (ctx, p->width, p->height, batch, CUFFT_R2C, &r2c, error)
                && ss_cuda_plan (ctx, p->width, p->height, batch, CUFFT_C2R, &c2r, error)
                && ss_cuda_alloc (ctx, (void **) &real, real_bytes, "the FFT floor", error)
                && ss_cuda_alloc (ctx, (void **) &spec, spec_bytes, "the FFT floor", error)
                && ss_cuda_fill_random (ctx, real, batch * p->n, 99, 0.0f, 1.0f, error);
  /* FISTA's pairs are dependent: A then A^T, each R2C + C2R. */
  int pairs = cpadmm ? 1 : 2;
  for (int r = -1; ok && r < FLOOR_BATCHES; r++)
    {
      ok = CUDA_OK (cudaEventRecord (e.start, ctx->stream));
      for (int k = 0; ok && k < reps; k++)
        for (int q = 0; ok && q < pairs; q++)
          ok = CUFFT_OK (cufftExecR2C (r2c, real, (cufftComplex *) spec))
               && CUFFT_OK (cufftExecC2R (c2r, (cufftComplex *) spec, real));
      double t = 0;
      ok = ok && events_seconds (ctx, &e, &t, error);
      if (r >= 0)
        times[r] = t / reps;
      /* fresh values: the pairs scale the data by n each time */
      ok = ok && ss_cuda_fill_random (ctx, real, batch * p->n, 100 + r, 0.0f, 1.0f, error);
    }
  if (ok)
    *seconds = ss_median_of_doubles (times, FLOOR_BATCHES);
  ss_cuda_free (ctx, real, real_bytes);
  ss_cuda_free (ctx, spec, spec_bytes);
  events_free (&e);
  return ok;
}

static gboolean
bench_iterative (SsCudaContext *ctx, const SsBenchParams *params, SsCudaProblem *p,
                 SsBenchResult *result, GError **error)
{
  double bandwidth = 0, fft = 0;
  if (!measure_bandwidth (ctx, &bandwidth, error)
      || !measure_fft_floor (ctx, p, params->solver, &fft, error))
    return FALSE;
  result->bandwidth = bandwidth;
  result->floor_fft_seconds = fft;
  SsSolveParams sp = ss_bench_solve_params (params);
  result->floor_bytes = params->solver == SS_SOLVER_CPADMM ? ss_cuda_cpadmm_iteration_bytes (p)
                        : params->solver == SS_SOLVER_ADMM_PRIOR
                          ? ss_cuda_admm_prior_iteration_bytes (p, &sp)
                        : params->solver == SS_SOLVER_RL ? ss_cuda_rl_iteration_bytes (p, &sp)
                          : ss_cuda_fista_iteration_bytes (p);
  result->floor_seconds = fft + result->floor_bytes / bandwidth;

  sp.iterations = params->iterations;
  sp.report_every = params->iterations;
  SsCudaReporter reporter;
  SsCudaIterator it;
  memset (&it, 0, sizeof it);
  /* The floor's scratch is gone: the peak from here is the solver's own. */
  ss_cuda_reset_peak (ctx);
  if (!ss_cuda_reporter_init (&reporter, ctx, p, &sp, error))
    return FALSE;
  SsCudaSolver *solver = params->solver == SS_SOLVER_CPADMM
                         ? ss_cuda_cpadmm_new (ctx, p, &sp, &it, &reporter, error)
                         : params->solver == SS_SOLVER_ADMM_PRIOR
                           ? ss_cuda_admm_prior_new (ctx, p, &sp, &it, &reporter, error)
                         : params->solver == SS_SOLVER_RL
                           ? ss_cuda_rl_new (ctx, p, &sp, &it, &reporter, error)
                           : ss_cuda_fista_new (ctx, p, &sp, &it, &reporter, error);
  if (solver == NULL)
    {
      ss_cuda_reporter_clear (&reporter);
      return FALSE;
    }
  result->peak_memory_bytes = ctx->mem_peak;
  EventPair e;
  double times[BENCH_REPEATS];
  SsCudaRunOutcome outcome;
  gboolean ok = events_new (&e, error)
                && ss_cuda_run_iterations (ctx, &it, &reporter, &sp, NULL, NULL, NULL, 0.0,
                                           &outcome, error);
  for (int r = 0; ok && r < BENCH_REPEATS; r++)
    ok = it.reset (it.solver, error) && CUDA_OK (cudaEventRecord (e.start, ctx->stream))
         && ss_cuda_run_iterations (ctx, &it, &reporter, &sp, NULL, NULL, NULL, 0.0, &outcome,
                                    error)
         && events_seconds (ctx, &e, &times[r], error);
  if (ok)
    {
      double total = ss_median_of_doubles (times, BENCH_REPEATS);
      result->total_seconds = total;
      result->seconds_per_iteration = total / params->iterations;
      result->iterations_per_second = params->iterations / total;
      result->ratio = result->seconds_per_iteration / result->floor_seconds;
      result->fft_work_bytes = ctx->fft_work_bytes;
      result->peak_memory_bytes = MAX (result->peak_memory_bytes, ctx->mem_peak);
    }
  events_free (&e);
  ss_cuda_iterator_clear (&it);
  ss_cuda_solver_free (solver);
  ss_cuda_reporter_clear (&reporter);
  return ok;
}

static gboolean
bench_dense (SsCudaContext *ctx, const SsBenchParams *params, SsCudaProblem *p,
             SsBenchResult *result, GError **error)
{
  float *x = NULL;
  SsCudaDenseTiming timing;
  /* A weight well above float rounding of the normal matrix (|c^| <= ~1.4). */
  const double lambda = 1e-2;
  /* Warm-up on a small system: library handles, kernels and their code. */
  SsCudaProblem small;
  float *xs = NULL;
  if (!ss_cuda_problem_random (ctx, 16, 16, params->seed, &small, error))
    return FALSE;
  gboolean ok = ss_cuda_alloc (ctx, (void **) &xs, small.n * sizeof (float), "warm-up", error)
                && ss_cuda_dense_solve (ctx, &small, lambda, params->direct_method, 0, TRUE, xs,
                                        &timing, error);
  ss_cuda_free (ctx, xs, small.n * sizeof (float));
  ss_cuda_problem_free (ctx, &small);
  if (!ok)
    return FALSE;
  ss_cuda_reset_peak (ctx);
  ok = ss_cuda_alloc (ctx, (void **) &x, p->n * sizeof (float), "the solution", error)
                && ss_cuda_dense_solve (ctx, p, lambda, params->direct_method, 0,
                                        params->direct_method == SS_DIRECT_INVERSE, x, &timing,
                                        error);
  if (ok)
    {
      double total = 0;
      for (int i = 0; i < 4; i++)
        total += timing.phase_seconds[i];
      memcpy (result->phase_seconds, timing.phase_seconds, sizeof result->phase_seconds);
      result->reference_seconds = timing.reference_seconds;
      result->iterations = 1;
      result->total_seconds = total;
      result->seconds_per_iteration = total;
      result->iterations_per_second = 1.0 / total;
      result->floor_seconds = NAN;
      result->floor_fft_seconds = NAN;
      result->ratio = NAN;
      result->peak_memory_bytes = timing.peak_bytes;
    }
  ss_cuda_free (ctx, x, p->n * sizeof (float));
  return ok;
}

/* RL's problem (ss_bench_rl_problem), made on the host since RL's setup
 * reads the host problem. */
typedef struct {
  SsOperator *op;
  float *y;
  SsProblem problem;
} RlBenchProblem;

static void
rl_bench_problem_clear (RlBenchProblem *rl)
{
  g_clear_pointer (&rl->op, ss_operator_free);
  g_clear_pointer (&rl->y, g_free);
}

static gboolean
rl_bench_problem (SsCudaContext *ctx, const SsBenchParams *params, RlBenchProblem *rl,
                  SsCudaProblem *p, GError **error)
{
  if (!ss_bench_rl_problem (params->width, params->height, params->seed, &rl->op, &rl->y,
                            error))
    return FALSE;
  memset (&rl->problem, 0, sizeof rl->problem);
  rl->problem.op = rl->op;
  rl->problem.y = rl->y;
  return ss_cuda_problem_upload (ctx, &rl->problem, p, error);
}

gboolean
ss_cuda_bench (SsCudaContext *ctx, const SsBenchParams *params, SsBenchResult *result,
               GError **error)
{
  if (params->width < 2 || params->height < 1 || params->iterations < 1)
    {
      g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT,
                   "benchmark size %d×%d with %d iterations is invalid", params->width,
                   params->height, params->iterations);
      return FALSE;
    }
  gboolean iterative = params->solver == SS_SOLVER_CPADMM || params->solver == SS_SOLVER_FISTA
                       || params->solver == SS_SOLVER_ISTA
                       || params->solver == SS_SOLVER_ADMM_PRIOR || params->solver == SS_SOLVER_RL;
  if (!iterative && params->solver != SS_SOLVER_DIRECT)
    {
      g_set_error (error, SS_ERROR, SS_ERROR_UNSUPPORTED,
                   "the CUDA benchmark covers cpadmm, fista, ista, admm, rl and direct, not %s",
                   ss_solver_kind_to_string (params->solver));
      return FALSE;
    }
  if (!CUDA_OK (cudaSetDevice (ctx->device)))
    return FALSE;
  memset (result, 0, sizeof *result);
  result->width = params->width;
  result->height = params->height;
  result->iterations = params->iterations;
  result->device = g_strdup (ctx->name);
  result->reference_seconds = NAN;

  ss_cuda_plans_prepare (ctx, params->width, params->height);
  SsCudaProblem p;
  RlBenchProblem rl;
  memset (&rl, 0, sizeof rl);
  if (params->solver == SS_SOLVER_RL ? !rl_bench_problem (ctx, params, &rl, &p, error)
                                     : !ss_cuda_problem_random (ctx, params->width,
                                                                params->height, params->seed,
                                                                &p, error))
    {
      rl_bench_problem_clear (&rl);
      return FALSE;
    }
  gboolean ok = iterative ? bench_iterative (ctx, params, &p, result, error)
                          : bench_dense (ctx, params, &p, result, error);
  ss_cuda_problem_free (ctx, &p);
  rl_bench_problem_clear (&rl);
  return ok;
}

/* ---- where an iteration's time goes ---------------------------------------- */

static gboolean
time_stage (SsCudaContext *ctx, SsCudaIterator *it, int stage, int reps, double *seconds,
            GError **error)
{
  EventPair e;
  gboolean ok = events_new (&e, error) && CUDA_OK (cudaEventRecord (e.start, ctx->stream));
  for (int r = 0; ok && r < reps; r++)
    ok = stage < 0 ? it->iterate (it->solver, 0, error) : it->stage (it->solver, stage, 0, error);
  ok = ok && events_seconds (ctx, &e, seconds, error);
  *seconds /= reps;
  events_free (&e);
  return ok;
}

char *
ss_cuda_bench_breakdown (SsCudaContext *ctx, SsSolverKind kind, int width, int height,
                         GError **error)
{
  if (kind != SS_SOLVER_CPADMM && kind != SS_SOLVER_FISTA && kind != SS_SOLVER_ISTA)
    {
      g_set_error (error, SS_ERROR, SS_ERROR_UNSUPPORTED, "no breakdown for %s",
                   ss_solver_kind_to_string (kind));
      return NULL;
    }
  if (!CUDA_OK (cudaSetDevice (ctx->device)))
    return NULL;
  /* Plan creation is part of every solve's setup: time it from cold. */
  ss_cuda_plans_clear (ctx);
  double t0 = (double) g_get_monotonic_time ();
  cufftHandle plan;
  gboolean planned = TRUE;
  for (int batch = 1; planned && batch <= (kind == SS_SOLVER_CPADMM ? 2 : 1); batch++)
    planned = ss_cuda_plan (ctx, width, height, batch, CUFFT_R2C, &plan, error)
              && ss_cuda_plan (ctx, width, height, batch, CUFFT_C2R, &plan, error);
  if (!planned)
    return NULL;
  double plan_ms = ((double) g_get_monotonic_time () - t0) * 1e-3;
  SsCudaProblem p;
  if (!ss_cuda_problem_random (ctx, width, height, 7, &p, error))
    return NULL;
  SsSolveParams sp;
  ss_solve_params_init (&sp);
  sp.kind = kind;
  SsCudaReporter reporter;
  SsCudaIterator it;
  memset (&it, 0, sizeof it);
  SsCudaSolver *solver = NULL;
  GString *text = g_string_new (NULL);
  g_string_append_printf (text, "%s %d×%d: cuFFT plans created in %.1f ms\n",
                          ss_solver_kind_to_string (kind), width, height, plan_ms);
  gboolean ok = ss_cuda_reporter_init (&reporter, ctx, &p, &sp, error);
  if (ok)
    {
      solver = kind == SS_SOLVER_CPADMM ? ss_cuda_cpadmm_new (ctx, &p, &sp, &it, &reporter, error)
                                        : ss_cuda_fista_new (ctx, &p, &sp, &it, &reporter, error);
      ok = solver != NULL && it.iterate (it.solver, 0, error);
    }
  int reps = (int) CLAMP (4e8 / (double) p.n, 3.0, 400.0);
  const int caps[] = { 16 };
  int saved_cap = ctx->blocks_per_sm;
  for (guint c = 0; ok && c < G_N_ELEMENTS (caps); c++)
      {
        ctx->blocks_per_sm = caps[c];
        g_string_append_printf (text, "%s %d×%d blocks/SM %d:", ss_solver_kind_to_string (kind),
                                width, height, caps[c]);
        double sum = 0, t = 0;
        for (int stage = 0; ok && stage < it.stage_count; stage++)
          {
            ok = time_stage (ctx, &it, stage, reps, &t, error);
            sum += t;
            g_string_append_printf (text, " %s %.1f |", it.stage_names[stage], t * 1e6);
          }
        ok = ok && time_stage (ctx, &it, -1, reps, &t, error);
        g_string_append_printf (text, " sum %.1f | iteration %.1f us\n", sum * 1e6, t * 1e6);
      }
  ctx->blocks_per_sm = saved_cap;
  ss_cuda_iterator_clear (&it);
  ss_cuda_solver_free (solver);
  ss_cuda_reporter_clear (&reporter);
  ss_cuda_problem_free (ctx, &p);
  if (!ok)
    {
      g_string_free (text, TRUE);
      return NULL;
    }
  return g_string_free (text, FALSE);
}
