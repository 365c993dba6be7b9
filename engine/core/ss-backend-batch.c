/* ss-backend-batch.c: many problems at once (ss_backend_solve_batch), spread
 * over the backend's devices, and the bench that compares a batch with
 * separate solves and several devices with one.
 *
 * Several devices: the problems are cut into contiguous shares, one per
 * device, each solved by its own host thread on its own context (contexts
 * hold a stream, plans and buffers of one device and are never shared), so
 * the devices run at once and the host only waits for the slowest share.
 */
#include "ss-backend-private.h"
#include "ss-pixel-l1.h"
#include "ss-cpu.h"
#include "ss-error.h"
#include "ss-model.h"

#include <math.h>
#include <string.h>

static double
now_seconds (void)
{
  return (double) g_get_monotonic_time () * 1e-6;
}

/* ---- checks --------------------------------------------------------------------- */

gboolean
ss_problems_share_operator (const SsProblem *problems, int count)
{
  if (count <= 0)
    return TRUE;
  const SsOperator *a = problems[0].op;
  gsize spec_bytes = (gsize) a->height * a->spec_width * 2 * sizeof (float);
  gsize kernel_bytes = (gsize) a->width * a->height * sizeof (float);
  for (int i = 1; i < count; i++)
    {
      const SsOperator *o = problems[i].op;
      if (o == a)
        continue;
      if (o->width != a->width || o->height != a->height)
        return FALSE;
      /* Deferred operators (made for a GPU) compare by their kernels; a
       * deferred one and a realised one are not compared at all. */
      gboolean same = a->chat && o->chat ? memcmp (o->chat, a->chat, spec_bytes) == 0
                      : a->kernel && o->kernel && !a->chat && !o->chat
                        ? memcmp (o->kernel, a->kernel, kernel_bytes) == 0
                        : FALSE;
      if (!same)
        return FALSE;
    }
  return TRUE;
}

static gboolean
check_batch (const SsProblem *problems, int count, const double *alphas,
             const SsSolveParams *params, GError **error)
{
  if (count < 0 || (count > 0 && problems == NULL))
    {
      g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT, "no problems to solve");
      return FALSE;
    }
  if (!ss_solve_params_validate (params, error))
    return FALSE;
  for (int i = 0; i < count; i++)
    {
      const SsOperator *op = problems[i].op;
      if (op == NULL || problems[i].y == NULL)
        {
          g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT,
                       "problem %d of the batch is incomplete (operator or data missing)", i);
          return FALSE;
        }
      if (op->width != problems[0].op->width || op->height != problems[0].op->height)
        {
          g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT,
                       "problem %d of the batch is %d×%d, problem 0 is %d×%d: a batch has one "
                       "size", i, op->width, op->height, problems[0].op->width,
                       problems[0].op->height);
          return FALSE;
        }
      if (alphas != NULL)
        {
          SsSolveParams own = *params;
          own.alpha = alphas[i];
          if (!ss_solve_params_validate (&own, error))
            return FALSE;
        }
    }
  return TRUE;
}

/* ---- reports from several threads -------------------------------------------------- */

typedef struct {
  SsBatchReportFunc report;
  gpointer user_data;
  GMutex lock;                /* one report at a time, whichever thread */
} SharedReport;

typedef struct {
  SharedReport *shared;
  int offset;                 /* the share's first problem */
  int index;                  /* one-by-one solves: the problem */
} ShareReport;

static void
forward_batch_report (int index, const SsReport *report, gpointer user_data)
{
  ShareReport *share = user_data;
  g_mutex_lock (&share->shared->lock);
  share->shared->report (share->offset + index, report, share->shared->user_data);
  g_mutex_unlock (&share->shared->lock);
}

static void
forward_single_report (const SsReport *report, gpointer user_data)
{
  ShareReport *share = user_data;
  forward_batch_report (share->index, report, user_data);
}

/* ---- one by one (the CPU, the reference; and other solvers on a device) ------------ */

/* Solves one problem on TARGET (a backend or a device's context). */
typedef gboolean (*SolveOneFunc) (gpointer target, const SsProblem *problem,
                                  const SsSolveParams *params, SsReportFunc report,
                                  gpointer user_data, GCancellable *cancellable,
                                  SsSolveResult *result, GError **error);

static gboolean
solve_one_by_one (SolveOneFunc solve, gpointer target, const SsProblem *problems, int count,
                  const double *alphas, const SsSolveParams *params, SharedReport *shared,
                  int offset, GCancellable *cancellable, SsSolveResult *results, GError **error)
{
  for (int i = 0; i < count; i++)
    {
      SsSolveParams own = *params;
      own.alpha = alphas ? alphas[i] : params->alpha;
      ShareReport share = { shared, offset, i };
      ss_solve_result_clear (&results[i]);
      if (!solve (target, &problems[i], &own, shared->report ? forward_single_report : NULL,
                  &share, cancellable, &results[i], error))
        return FALSE;
    }
  return TRUE;
}

/* ---- shares on the devices ---------------------------------------------------------- */

#if SHARPSKY_HAVE_CUDA
typedef struct {
  SsBackend *backend;
  SsCudaContext *ctx;
  /* With RULES, each problem goes through ss_backend_solve on VIEW: the
   * backend seen with this share's context as its first (never freed). */
  gboolean rules;
  SsBackend view;
  const SsProblem *problems;
  int count;
  const double *alphas;
  const SsSolveParams *params;
  ShareReport report;
  GCancellable *cancellable;
  SsSolveResult *results;
  gboolean ok;
  GError *error;
} DeviceShare;

static gboolean
solve_on_context (gpointer target, const SsProblem *problem, const SsSolveParams *params,
                  SsReportFunc report, gpointer user_data, GCancellable *cancellable,
                  SsSolveResult *result, GError **error)
{
  return ss_cuda_solve (target, problem, params, report, user_data, cancellable, result, error);
}

static gboolean
solve_on_cpu (gpointer target, const SsProblem *problem, const SsSolveParams *params,
              SsReportFunc report, gpointer user_data, GCancellable *cancellable,
              SsSolveResult *result, GError **error)
{
  return ss_cpu_solve (problem, params, report, user_data, cancellable, result, error);
}

/* CPADMM problems sharing one operator as batches; anything else one by
 * one on the device. */
static gboolean
solve_share_on_context (DeviceShare *share, GError **error)
{
  SharedReport *shared = share->report.shared;
  if (share->params->kind == SS_SOLVER_CPADMM
      && ss_problems_share_operator (share->problems, share->count))
    return ss_cuda_solve_batch (share->ctx, share->problems, share->count, share->alphas,
                                share->params, shared->report ? forward_batch_report : NULL,
                                &share->report, share->cancellable, share->results, error);
  return solve_one_by_one (solve_on_context, share->ctx, share->problems, share->count,
                           share->alphas, share->params, shared, share->report.offset,
                           share->cancellable, share->results, error);
}

static gboolean
solve_share_on_device (DeviceShare *share)
{
  /* The rules (`auto`'s choice, the hold-out runs) solve through the
   * backend, which falls back to the CPU itself. */
  if (share->rules)
    return solve_one_by_one (ss_backend_solve_on, &share->view, share->problems, share->count,
                             share->alphas, share->params, share->report.shared,
                             share->report.offset, share->cancellable, share->results,
                             &share->error);
  g_autoptr (GError) cuda_error = NULL;
  if (solve_share_on_context (share, &cuda_error))
    return TRUE;
  /* As for one solve: a device too small for even one problem, or an
   * option with no GPU form, hands the share to the CPU. */
  if (!ss_backend_cuda_falls_back (share->backend, cuda_error))
    {
      share->error = g_steal_pointer (&cuda_error);
      return FALSE;
    }
  if (!g_error_matches (cuda_error, SS_ERROR, SS_ERROR_UNSUPPORTED))
    g_warning ("%s; solved on the CPU instead", cuda_error->message);
  if (!solve_one_by_one (solve_on_cpu, NULL, share->problems, share->count, share->alphas,
                         share->params, share->report.shared, share->report.offset,
                         share->cancellable, share->results, &share->error))
    return FALSE;
  for (int i = 0; i < share->count; i++)
    share->results[i].warning = g_strdup_printf ("%s; solved on the CPU instead",
                                                 cuda_error->message);
  return TRUE;
}

static gpointer
device_share_thread (gpointer data)
{
  DeviceShare *share = data;
  share->ok = solve_share_on_device (share);
  return NULL;
}

/* Cuts COUNT problems into DEVICES contiguous shares (the first COUNT %
 * DEVICES shares one larger) and solves them at once, one thread each. */
static gboolean
solve_on_devices (SsBackend *backend, int devices, gboolean rules, const SsProblem *problems,
                  int count, const double *alphas, const SsSolveParams *params,
                  SharedReport *shared, GCancellable *cancellable, SsSolveResult *results,
                  GError **error)
{
  devices = MAX (1, MIN (devices, count));
  g_autofree DeviceShare *shares = g_new0 (DeviceShare, devices);
  g_autofree GThread **threads = g_new0 (GThread *, devices);
  int first = 0;
  for (int d = 0; d < devices; d++)
    {
      DeviceShare *share = &shares[d];
      share->backend = backend;
      share->ctx = backend->cuda[d];
      share->rules = rules;
      share->view = *backend;
      share->view.cuda = &backend->cuda[d];
      share->view.n_cuda = 1;
      share->count = count / devices + (d < count % devices ? 1 : 0);
      share->problems = problems + first;
      share->alphas = alphas ? alphas + first : NULL;
      share->params = params;
      share->report = (ShareReport) { shared, first, 0 };
      share->cancellable = cancellable;
      share->results = results + first;
      first += share->count;
    }
  if (devices == 1)
    device_share_thread (&shares[0]);
  else
    for (int d = 0; d < devices; d++)
      threads[d] = g_thread_new ("sharpsky-device", device_share_thread, &shares[d]);
  gboolean ok = TRUE;
  for (int d = 0; d < devices; d++)
    {
      if (threads[d])
        g_thread_join (threads[d]);
      if (!shares[d].ok && ok)
        {
          g_propagate_error (error, g_steal_pointer (&shares[d].error));
          ok = FALSE;
        }
      g_clear_error (&shares[d].error);
    }
  return ok;
}
#endif

/* The batch on the first DEVICES devices of BACKEND. */
static gboolean
solve_batch_on (SsBackend *backend, int devices, const SsProblem *problems, int count,
                const double *alphas, const SsSolveParams *params, SsBatchReportFunc report,
                gpointer user_data, GCancellable *cancellable, SsSolveResult *results,
                GError **error)
{
  if (!check_batch (problems, count, alphas, params, error))
    return FALSE;
  if (count == 0)
    return TRUE;
  for (int i = 0; i < count; i++)
    ss_solve_result_clear (&results[i]);
  SharedReport shared = { .report = report, .user_data = user_data };
  g_mutex_init (&shared.lock);
  gboolean ok;
#if SHARPSKY_HAVE_CUDA
  /* Real images under the pixel-ℓ1 rules and `auto`'s choice are runs of
   * their own: each problem goes through ss_backend_solve, on the share's
   * device. Solvers without a GPU form too, on the CPU, which that says. */
  const SsSolverInfo *info = ss_solver_info (params->kind);
  gboolean own_runs = info->n_candidates > 0;
  for (int i = 0; i < count; i++)
    own_runs = own_runs || ss_pixel_l1_applies (&problems[i], params);
  if (backend->use_cuda && ss_solver_has_cuda (info))
    ok = solve_on_devices (backend, devices, own_runs, problems, count, alphas, params, &shared,
                           cancellable, results, error);
  else
#endif
    ok = solve_one_by_one (ss_backend_solve_on, backend, problems, count, alphas, params, &shared,
                           0, cancellable, results, error);
  g_mutex_clear (&shared.lock);
  for (int i = 0; ok && i < count; i++)
    if (!ss_backend_finish_result (&results[i], &problems[i], error))
      {
        /* Which image of the batch: the caller knows it as a plane. */
        if (count > 1)
          g_prefix_error (error, "image %d of %d: ", i + 1, count);
        return FALSE;
      }
  return ok;
}

gboolean
ss_backend_solve_batch (SsBackend *backend, const SsProblem *problems, int count,
                        const double *alphas, const SsSolveParams *params,
                        SsBatchReportFunc report, gpointer user_data, GCancellable *cancellable,
                        SsSolveResult *results, GError **error)
{
  return solve_batch_on (backend, ss_backend_get_device_count (backend), problems, count, alphas,
                         params, report, user_data, cancellable, results, error);
}

/* ---- the batch bench ------------------------------------------------------------------ */

/* Frames of the bench: one operator (box:5 row blur, random circulant
 * sensing, half the pixels observed), each frame its own data, drawn with a
 * counter-based hash so that thousands of megapixels are ready in seconds. */
typedef struct {
  SsOperator *op;
  float **y;
  SsProblem *problems;
  int count;
} BenchFrames;

static float
hash_uniform (guint64 key)
{
  key += G_GUINT64_CONSTANT (0x9e3779b97f4a7c15);
  key = (key ^ (key >> 30)) * G_GUINT64_CONSTANT (0xbf58476d1ce4e5b9);
  key = (key ^ (key >> 27)) * G_GUINT64_CONSTANT (0x94d049bb133111eb);
  key ^= key >> 31;
  return (float) ((key >> 40) * (1.0 / 16777216.0));
}

static void
bench_frames_clear (BenchFrames *f)
{
  for (int i = 0; f->y && i < f->count; i++)
    g_free (f->y[i]);
  g_clear_pointer (&f->y, g_free);
  g_clear_pointer (&f->problems, g_free);
  g_clear_pointer (&f->op, ss_operator_free);
}

static gboolean
bench_frames_init (BenchFrames *f, const SsBenchParams *params, int count, GError **error)
{
  memset (f, 0, sizeof *f);
  SsAcquisition acq;
  ss_acquisition_init (&acq);
  gboolean parsed = ss_psf_spec_parse ("box:5", &acq.psf, error);
  acq.ratio = 0.5;
  acq.sensing = SS_SENSING_CIRCULANT;
  acq.seed = params->seed;
  f->op = parsed ? ss_operator_new (&acq, params->width, params->height, error) : NULL;
  ss_acquisition_clear (&acq);
  if (f->op == NULL)
    return FALSE;
  gsize n = (gsize) params->width * params->height;
  f->count = count;
  f->y = g_new0 (float *, count);
  f->problems = g_new0 (SsProblem, count);
  for (int i = 0; i < count; i++)
    {
      f->y[i] = g_try_new (float, n);
      if (f->y[i] == NULL)
        {
          g_set_error (error, SS_ERROR, SS_ERROR_OUT_OF_MEMORY,
                       "no host memory for %d frames of %d×%d", count, params->width,
                       params->height);
          return FALSE;
        }
      guint64 base = ((guint64) params->seed << 48) ^ ((guint64) i << 36);
      for (gsize k = 0; k < n; k++)
        f->y[i][k] = f->op->mask[k] ? hash_uniform (base ^ k) : 0.0f;
      f->problems[i] = (SsProblem) { .op = f->op, .y = f->y[i] };
    }
  return TRUE;
}

static void
clear_results (SsSolveResult *results, int count)
{
  for (int i = 0; i < count; i++)
    ss_solve_result_clear (&results[i]);
}

/* Adds the first device's batch phases since the last take into PHASES
 * (NULL: discards them). */
static void
take_batch_phases (SsBackend *backend, double *phases)
{
#if SHARPSKY_HAVE_CUDA
  double junk[SS_BATCH_PHASES] = { 0 };
  if (backend->use_cuda && backend->n_cuda > 0)
    ss_cuda_context_take_batch_phases (backend->cuda[0], phases ? phases : junk);
#else
  (void) backend;
  (void) phases;
#endif
}

/* Seconds of one batch of FRAMES on DEVICES devices, after a one-iteration
 * warm-up of the same shape (contexts, plans, kernels' code). The frames
 * are drawn before: only upload, iterations and download are timed, as for
 * the separate solves. PHASES (may be NULL) gets the first device's
 * breakdown of the timed run. */
static gboolean
time_batch (SsBackend *backend, int devices, const BenchFrames *frames,
            const SsSolveParams *params, SsSolveResult *results, double *seconds,
            double *phases, GError **error)
{
  SsSolveParams warm = *params;
  warm.iterations = warm.report_every = 1;
  if (!solve_batch_on (backend, devices, frames->problems, frames->count, NULL, &warm, NULL,
                       NULL, NULL, results, error))
    return FALSE;
  clear_results (results, frames->count);
  take_batch_phases (backend, NULL);
  double start = now_seconds ();
  gboolean ok = solve_batch_on (backend, devices, frames->problems, frames->count, NULL, params,
                                NULL, NULL, NULL, results, error);
  *seconds = now_seconds () - start;
  take_batch_phases (backend, phases);
  clear_results (results, frames->count);
  return ok;
}

/* Seconds of FRAMES as separate ss_backend_solve calls on the first device. */
static gboolean
time_separate (SsBackend *backend, const BenchFrames *frames, const SsSolveParams *params,
               double *seconds, GError **error)
{
  SsSolveResult result = { 0 };
  SsSolveParams warm = *params;
  warm.iterations = warm.report_every = 1;
  gboolean ok = ss_backend_solve (backend, &frames->problems[0], &warm, NULL, NULL, NULL,
                                  &result, error);
  ss_solve_result_clear (&result);
  double start = now_seconds ();
  for (int i = 0; ok && i < frames->count; i++)
    {
      ok = ss_backend_solve (backend, &frames->problems[i], params, NULL, NULL, NULL, &result,
                             error);
      ss_solve_result_clear (&result);
    }
  *seconds = now_seconds () - start;
  return ok;
}

gboolean
ss_backend_bench_batch (SsBackend *backend, const SsBenchParams *params, int count,
                        SsBatchBenchResult *result, GError **error)
{
  memset (result, 0, sizeof *result);
  if (count < 1 || params->width < 2 || params->height < 1 || params->iterations < 1)
    {
      g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT,
                   "batch benchmark of %d frames of %d×%d with %d iterations is invalid", count,
                   params->width, params->height, params->iterations);
      return FALSE;
    }
  BenchFrames frames;
  if (!bench_frames_init (&frames, params, count, error))
    {
      bench_frames_clear (&frames);
      return FALSE;
    }
  SsSolveParams sp;
  ss_solve_params_init (&sp);
  sp.kind = SS_SOLVER_CPADMM;
  sp.iterations = params->iterations;
  sp.report_every = params->iterations;
  int devices = ss_backend_get_device_count (backend);
  result->count = count;
  result->devices = MIN (devices, count);
  result->width = params->width;
  result->height = params->height;
  result->iterations = params->iterations;
  result->device = g_strdup (ss_backend_get_device (backend));
  result->one_device_seconds = NAN;
  result->device_scaling = NAN;

  SsSolveResult *results = g_new0 (SsSolveResult, count);
  double one = 0;
  gboolean ok = time_batch (backend, devices, &frames, &sp, results, &result->batch_seconds,
                            result->devices == 1 ? result->batch_phase_seconds : NULL, error)
                && (result->devices == 1
                    || time_batch (backend, 1, &frames, &sp, results, &one,
                                   result->batch_phase_seconds, error))
                && time_separate (backend, &frames, &sp, &result->separate_seconds, error);
  if (ok)
    {
      if (result->devices > 1)
        {
          result->one_device_seconds = one;
          result->device_scaling = one / result->batch_seconds;
        }
      else
        one = result->batch_seconds;
      result->batch_speedup = result->separate_seconds / one;
    }
  g_free (results);
  bench_frames_clear (&frames);
  return ok;
}

void
ss_batch_bench_result_clear (SsBatchBenchResult *result)
{
  g_clear_pointer (&result->device, g_free);
}
