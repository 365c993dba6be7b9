/* ss-cuda-solve.cu: ss_cuda_solve, the backend's entry point for solving.
 *
 * Uploads the problem (c^, P^T y, mask, truth), runs the chosen solver and
 * fills the result as the CPU backend does (same metrics, same report
 * points, the partial result on cancellation).
 */
#include "ss-cuda-internal.h"

#include <math.h>
#include <string.h>

static double
now_seconds (void)
{
  return (double) g_get_monotonic_time () * 1e-6;
}

/* The estimate's host buffer, allocated and touched on a thread of its own
 * while the device iterates: copied into fresh memory, a 26 Mpx estimate
 * paid its page faults in the download (0.10 s on the H100's host). */
struct SsCudaHostEstimate {
  GThread *thread;
};

/* Below this the faults cost less than a thread. */
#define HOST_ESTIMATE_MIN_BYTES (8u << 20)

static gpointer
touch_host_buffer (gpointer data)
{
  gsize bytes = GPOINTER_TO_SIZE (data);
  void *x = g_try_malloc (bytes);
  if (x != NULL)
    memset (x, 0, bytes);
  return x;
}

static void
host_estimate_start (struct SsCudaHostEstimate *h, size_t bytes)
{
  h->thread = bytes >= HOST_ESTIMATE_MIN_BYTES
                ? g_thread_try_new ("sharpsky-host-estimate", touch_host_buffer,
                                    GSIZE_TO_POINTER (bytes), NULL)
                : NULL;
}

/* The buffer (g_free), or NULL when none was made or it failed. */
static float *
host_estimate_take (struct SsCudaHostEstimate *h)
{
  if (h == NULL || h->thread == NULL)
    return NULL;
  return (float *) g_thread_join (g_steal_pointer (&h->thread));
}

static gboolean
download_estimate (SsCudaContext *ctx, const SsCudaProblem *p, const float *x_d,
                   SsSolveResult *result, GError **error)
{
  float *x = host_estimate_take (p->estimate_host);
  if (x == NULL)
    x = (float *) g_try_malloc (p->n * sizeof (float));
  if (x == NULL)
    {
      g_set_error (error, SS_ERROR, SS_ERROR_OUT_OF_MEMORY,
                   "no host memory for the %d×%d result", p->width, p->height);
      return FALSE;
    }
  if (!CUDA_OK (cudaMemcpyAsync (x, x_d, p->n * sizeof (float), cudaMemcpyDeviceToHost,
                                 ctx->stream))
      || !CUDA_OK (cudaStreamSynchronize (ctx->stream)))
    {
      g_free (x);
      return FALSE;
    }
  g_free (result->x);
  result->x = x;
  return TRUE;
}

static void
fill_result_metrics (SsSolveResult *result, const SsReport *last, int iterations)
{
  result->iterations = iterations;
  result->mse = last->mse;
  result->psnr = last->psnr;
  result->residual = last->residual;
  result->objective = last->objective;
  result->rel_change = last->rel_change;
}

/* A solve in several runs (SsCudaIterator.next_run): each counts on from
 * the iterations of the runs before it, with graphs of its own (its
 * kernels' arguments differ). OUTCOME is the last run's, with the
 * iterations of all. */
static gboolean
run_in_turn (SsCudaContext *ctx, SsCudaIterator *it, SsCudaReporter *reporter,
             SsSolveParams *run, SsReportFunc report, gpointer user_data,
             GCancellable *cancellable, double start, SsCudaRunOutcome *outcome, GError **error)
{
  int done = 0;
  for (;;)
    {
      GError *local = NULL;
      if (!it->next_run (it->solver, run, done, &local))
        {
          if (local == NULL)
            return TRUE;
          g_propagate_error (error, local);
          return FALSE;
        }
      ss_cuda_iterator_clear (it);
      it->iteration_offset = done;
      if (!ss_cuda_run_iterations (ctx, it, reporter, run, report, user_data, cancellable, start,
                                   outcome, error))
        return FALSE;
      done += outcome->iterations;
      outcome->iterations = done;
      if (outcome->cancelled)
        return TRUE;
    }
}

static gboolean
solve_iterative (SsCudaContext *ctx, const SsCudaProblem *p, const SsSolveParams *params,
                 SsCudaSolverNew create, SsReportFunc report, gpointer user_data,
                 GCancellable *cancellable, double start, SsSolveResult *result, GError **error)
{
  SsSolveParams run = *params;
  if (!ss_solver_is_iterative (params->kind))
    {
      run.iterations = 1;
      run.report_every = 1;
    }
  SsCudaReporter reporter;
  SsCudaIterator it;
  memset (&it, 0, sizeof it);
  if (!ss_cuda_reporter_init (&reporter, ctx, p, &run, error))
    return FALSE;
  SsCudaSolver *solver = create (ctx, p, &run, &it, &reporter, error);
  if (solver == NULL)
    {
      ss_cuda_reporter_clear (&reporter);
      return FALSE;
    }
  SsCudaRunOutcome outcome;
  memset (&outcome, 0, sizeof outcome);
  gboolean ok = TRUE;
  if (it.next_run == NULL)
    ok = ss_cuda_run_iterations (ctx, &it, &reporter, &run, report, user_data, cancellable,
                                 start, &outcome, error);
  else
    ok = run_in_turn (ctx, &it, &reporter, &run, report, user_data, cancellable, start,
                      &outcome, error);
  if (ok)
    {
      ok = download_estimate (ctx, p, it.estimate (it.solver), result, error);
      fill_result_metrics (result, &outcome.last, outcome.iterations);
      if (it.finish != NULL)
        it.finish (it.solver, result);
      if (ok && outcome.cancelled)
        {
          g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_CANCELLED, "the solve was cancelled");
          ok = FALSE;
        }
    }
  ss_cuda_iterator_clear (&it);
  ss_cuda_solver_free (solver);
  ss_cuda_reporter_clear (&reporter);
  return ok;
}

/* Metrics and preview of a dense solution, through the same reporter. */
static gboolean
report_dense (SsCudaContext *ctx, const SsCudaProblem *p, const SsSolveParams *params,
              const float *x_d, SsReportFunc report, gpointer user_data, double start,
              SsSolveResult *result, GError **error)
{
  SsCudaReporter reporter;
  if (!ss_cuda_reporter_init (&reporter, ctx, p, params, error))
    return FALSE;
  float *real = NULL;
  float2 *spec = NULL;
  void *host = NULL;
  gboolean ok = ss_cuda_alloc (ctx, (void **) &real, p->n * sizeof (float), "report scratch", error)
                && ss_cuda_alloc (ctx, (void **) &spec, p->spec * sizeof (float2), "report scratch",
                                  error)
                && (host = ss_cuda_pinned (ctx, reporter.block_bytes, error)) != NULL;
  if (ok)
    {
      ss_cuda_reporter_borrow (&reporter, spec, real, FALSE);
      ok = ss_cuda_reporter_enqueue (&reporter, x_d, error)
           && CUDA_OK (cudaMemcpyAsync (host, reporter.block, reporter.block_bytes,
                                        cudaMemcpyDeviceToHost, ctx->stream))
           && CUDA_OK (cudaStreamSynchronize (ctx->stream));
    }
  if (ok)
    {
      SsReport rep;
      memset (&rep, 0, sizeof rep);
      rep.iteration = 1;
      rep.final = TRUE;
      ss_cuda_reporter_fill (&reporter, host, &rep);
      rep.elapsed = now_seconds () - start;
      if (report)
        report (&rep, user_data);
      fill_result_metrics (result, &rep, 1);
    }
  ss_cuda_free (ctx, real, p->n * sizeof (float));
  ss_cuda_free (ctx, spec, p->spec * sizeof (float2));
  ss_cuda_reporter_clear (&reporter);
  return ok;
}

static gboolean
solve_dense (SsCudaContext *ctx, const SsCudaProblem *p, const SsSolveParams *params,
             SsReportFunc report, gpointer user_data, GCancellable *cancellable, double start,
             SsSolveResult *result, GError **error)
{
  if (g_cancellable_set_error_if_cancelled (cancellable, error))
    return FALSE;
  float *x = NULL;
  SsCudaDenseTiming timing;
  gboolean ok = ss_cuda_alloc (ctx, (void **) &x, p->n * sizeof (float), "the solution", error)
                && ss_cuda_dense_solve (ctx, p, params->alpha, params->direct_method,
                                        params->memory_limit, FALSE, x, &timing, error);
  if (ok)
    {
      memcpy (result->phase_seconds, timing.phase_seconds, sizeof result->phase_seconds);
      ok = !g_cancellable_set_error_if_cancelled (cancellable, error)
           && download_estimate (ctx, p, x, result, error)
           && report_dense (ctx, p, params, x, report, user_data, start, result, error);
    }
  ss_cuda_free (ctx, x, p->n * sizeof (float));
  return ok;
}

gboolean
ss_cuda_solve (SsCudaContext *ctx, const SsProblem *problem, const SsSolveParams *params,
               SsReportFunc report, gpointer user_data, GCancellable *cancellable,
               SsSolveResult *result, GError **error)
{
  if (!ss_solve_params_validate (params, error))
    return FALSE;
  const SsCudaSolverEntry *entry = ss_solver_info (params->kind)->cuda;
  if (entry == NULL)
    {
      g_set_error (error, SS_ERROR, SS_ERROR_UNSUPPORTED, "%s has no CUDA implementation",
                   ss_solver_kind_to_string (params->kind));
      return FALSE;
    }
  if (!CUDA_OK (cudaSetDevice (ctx->device)))
    return FALSE;
  double start = now_seconds ();
  ss_cuda_plans_prepare (ctx, problem && problem->op ? problem->op->width : 0,
                         problem && problem->op ? problem->op->height : 0);
  ss_cuda_reset_peak (ctx);
  memset (result->phase_seconds, 0, sizeof result->phase_seconds);
  SsCudaProblem p;
  if (!ss_cuda_problem_upload (ctx, problem, &p, error))
    return FALSE;
  struct SsCudaHostEstimate estimate_host;
  host_estimate_start (&estimate_host, p.n * sizeof (float));
  p.estimate_host = &estimate_host;
  gboolean ok;
  if (entry->solve != NULL)
    ok = entry->solve (ctx, &p, params, report, user_data, cancellable, start, result, error);
  else
    ok = solve_iterative (ctx, &p, params, entry->create, report, user_data, cancellable, start,
                          result, error);
  if (result->x)
    {
      result->width = p.width;
      result->height = p.height;
      result->seconds = now_seconds () - start;
      result->peak_memory_bytes = ctx->mem_peak;
      g_free (result->backend);
      result->backend = g_strdup ("cuda");
      g_free (result->device);
      result->device = g_strdup (ctx->name);
    }
  g_free (host_estimate_take (&estimate_host));   /* unused when the solve failed */
  ss_cuda_problem_free (ctx, &p);
  return ok;
}

const SsCudaSolverEntry ss_cuda_cpadmm_entry = { ss_cuda_cpadmm_new, NULL };
const SsCudaSolverEntry ss_cuda_fista_entry = { ss_cuda_fista_new, NULL };
const SsCudaSolverEntry ss_cuda_direct_fft_entry = { ss_cuda_direct_fft_new, NULL };
const SsCudaSolverEntry ss_cuda_rl_entry = { ss_cuda_rl_new, NULL };
const SsCudaSolverEntry ss_cuda_admm_entry = { ss_cuda_admm_prior_new, NULL };
const SsCudaSolverEntry ss_cuda_direct_entry = { NULL, solve_dense };
