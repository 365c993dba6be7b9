/* ss-pixel-l1.c: the pixel-ℓ1 solvers' floor and hold-out rule (ss-pixel-l1.h). */
#include "ss-pixel-l1.h"
#include "ss-holdout-split.h"
#include "ss-mem.h"
#include "ss-noise.h"
#include "ss-rl-holdout.h"
#include "ss-rl.h"

#include <math.h>
#include <string.h>

gboolean
ss_pixel_l1_applies (const SsProblem *problem, const SsSolveParams *params)
{
  const SsSolverInfo *info = ss_solver_info (params->kind);
  return info != NULL && (info->caps & SS_SOLVER_PIXEL_L1) != 0
         && ((params->nonneg && problem->background > 0) || params->holdout);
}

gboolean
ss_pixel_l1_wants_floor (const SsProblem *problem, const SsSolveParams *params)
{
  return params->nonneg && problem->background > 0 && problem->op->kernel_nonnegative;
}

double
ss_pixel_l1_floor (const SsProblem *problem, const SsSolveParams *params)
{
  if (!ss_pixel_l1_wants_floor (problem, params) || !ss_operator_realize (problem->op, NULL))
    return 0.0;
  SsSolveParams quick = *params;
  quick.rl_stop = SS_RL_STOP_NONE;   /* the floor needs no stopping level */
  SsRlSetup rl;
  if (!ss_rl_setup (problem, &quick, &rl, NULL))
    return 0.0;
  return MIN (rl.background - rl.offset, 0.0);
}

/* ---- reports: counted on across runs, shown with the floor added back ---- */

typedef struct {
  SsReportFunc report;
  gpointer user_data;
  float shift;            /* f, added back to the preview */
  float *preview;         /* the shifted preview (g_free) */
  gsize preview_size;
  int offset;             /* iterations of the runs before this one */
  gboolean provisional;   /* a validation run: none of its reports is the last */
  SsPixelL1Readings *readings;  /* a validation run's readings, or NULL */
  SsRlHoldout *holdout;   /* and its patience, or NULL: read to its end */
  GCancellable *stop;     /* cancelled when the rule has seen its minimum */
  int last_iteration;
} Relay;

static void
relay_report (const SsReport *report, gpointer user_data)
{
  Relay *r = user_data;
  r->last_iteration = report->iteration;
  if (r->readings && !g_cancellable_is_cancelled (r->stop))
    {
      ss_pixel_l1_readings_add (r->readings, report->iteration, report->held_out);
      if (r->holdout && ss_rl_holdout_record (r->holdout, report->iteration, report->held_out))
        g_cancellable_cancel (r->stop);
    }
  if (r->report == NULL)
    return;
  SsReport out = *report;
  out.iteration += r->offset;
  out.final = report->final && !r->provisional;
  if (r->shift != 0.0f && report->preview != NULL)
    {
      gsize size = (gsize) report->preview_width * report->preview_height;
      if (size > r->preview_size)
        {
          g_free (r->preview);
          r->preview = g_new (float, size);
          r->preview_size = size;
        }
      for (gsize i = 0; i < size; i++)
        r->preview[i] = report->preview[i] + r->shift;
      out.preview = r->preview;
    }
  r->report (&out, r->user_data);
}

/* ---- the hold-out rule ------------------------------------------------------ */

/* A padded frame's border repeats the image: it stays in the fit, never in
 * the test. */
static int
validation_role (gsize pixel, int frame_width, SsRegion image)
{
  int role = ss_rl_holdout_role (pixel, frame_width, image);
  return role == SS_RL_HOLDOUT_NONE ? SS_RL_HOLDOUT_FIT : role;
}

/* The validation problem: RL's split, the held-out pixels counted where
 * ORIGINAL (the data before any floor shift) stands above the source level. */
static gboolean
validation_build (SsHoldoutSplit *v, const SsProblem *problem, const float *original)
{
  double noise = NAN;
  if (problem->stats && isfinite (problem->stats->noise))
    noise = problem->stats->noise;
  else
    ss_problem_noise_and_median (problem, &noise, NULL);
  return ss_holdout_split_build (v, problem, validation_role, original,
                                 (float) ss_rl_holdout_source_level (
                                   noise, SS_PIXEL_L1_HOLDOUT_SOURCE_SIGMAS));
}

static void
cancel_child (GCancellable *parent, gpointer child)
{
  g_cancellable_cancel (child);
}

/* A validation run on V of CAP iterations read every EVERY: its readings
 * go into READINGS and, with a HOLDOUT, the count k* of its best held-out
 * prediction, which stops it after its patience; *VALIDATED and
 * *SECONDS add what it ran and how long it took (a run the rule stops has
 * no result of its own). FALSE with the error when it failed or
 * CANCELLABLE was cancelled: *PARTIAL then holds its partial estimate and
 * READINGS is cleared. */
static gboolean
run_validation (SsSolveOnceFunc once, gpointer backend, const SsHoldoutSplit *v,
                const SsSolveParams *params, int cap, int every, Relay *relay,
                SsRlHoldout *holdout, SsPixelL1Readings *readings, GCancellable *cancellable,
                int *validated, double *seconds, SsSolveResult *partial, GError **error)
{
  SsSolveParams run = *params;
  run.iterations = cap;
  run.report_every = every;
  run.holdout = FALSE;
  g_autoptr (GCancellable) stop = g_cancellable_new ();
  gulong handler = cancellable ? g_cancellable_connect (cancellable, G_CALLBACK (cancel_child),
                                                        stop, NULL)
                               : 0;
  relay->offset = *validated;
  relay->provisional = TRUE;
  relay->holdout = holdout;
  relay->readings = readings;
  relay->stop = stop;
  relay->last_iteration = 0;
  g_autoptr (GError) local = NULL;
  SsSolveResult result = { 0 };
  gint64 start = g_get_monotonic_time ();
  gboolean ok = once (backend, &v->problem, &run, relay_report, relay, stop, &result, &local);
  result.seconds = (double) (g_get_monotonic_time () - start) / G_USEC_PER_SEC;
  if (cancellable)
    g_cancellable_disconnect (cancellable, handler);
  relay->holdout = NULL;
  relay->readings = NULL;
  relay->provisional = FALSE;
  /* The rule's own stop is the run's end, not a failure. */
  if (!ok && g_error_matches (local, G_IO_ERROR, G_IO_ERROR_CANCELLED)
      && !g_cancellable_is_cancelled (cancellable))
    ok = TRUE;
  if (!ok)
    {
      g_propagate_error (error, g_steal_pointer (&local));
      ss_pixel_l1_readings_clear (readings);
      *partial = result;
      return FALSE;
    }
  *validated += relay->last_iteration;
  *seconds += result.seconds;
  ss_solve_result_clear (&result);
  return TRUE;
}

/* ---- readings and the count they give ------------------------------------- */

void
ss_pixel_l1_readings_add (SsPixelL1Readings *r, int iteration, double error)
{
  if (r->count == r->size)
    {
      r->size = MAX (2 * r->size, 16);
      r->iteration = g_renew (int, r->iteration, r->size);
      r->error = g_renew (double, r->error, r->size);
    }
  r->iteration[r->count] = iteration;
  r->error[r->count] = error;
  r->count++;
}

void
ss_pixel_l1_readings_clear (SsPixelL1Readings *r)
{
  g_clear_pointer (&r->iteration, g_free);
  g_clear_pointer (&r->error, g_free);
  r->count = r->size = 0;
}

int
ss_pixel_l1_pick (const SsPixelL1Readings *r, double tolerance)
{
  double least = INFINITY;
  for (int i = 0; i < r->count; i++)
    if (isfinite (r->error[i]))
      least = MIN (least, r->error[i]);
  if (!isfinite (least))
    return 0;
  for (int i = 0; i < r->count; i++)
    if (r->error[i] <= least * (1.0 + tolerance))
      return r->iteration[i];
  return 0;
}

double
ss_pixel_l1_pick_tolerance (const SsSolveParams *params, gsize counted)
{
  const SsSolverInfo *info = ss_solver_info (params->kind);
  return info != NULL && info->holdout_one_se && counted > 0 ? sqrt (2.0 / (double) counted)
                                                             : 0.0;
}

gboolean
ss_pixel_l1_finer_readings (const SsSolveParams *coarse, int every, SsSolveParams *fine,
                            int *fine_every, int *fine_cap)
{
  *fine = *coarse;
  *fine_every = 1;
  if (every > 1)
    {
      *fine_cap = 2 * every;
      return TRUE;
    }
  /* Read every outer step already: shorter ones, where the solver's are
   * sliced (ALM), within the same budget. */
  const SsSolverInfo *info = ss_solver_info (coarse->kind);
  int inner = coarse->inner_iterations;
  if (info == NULL || info->holdout_inner_iterations <= 0
      || !ss_solver_uses (info, SS_PARAM_INNER_ITERATIONS)
      || inner <= SS_PIXEL_L1_FINE_INNER_ITERATIONS)
    return FALSE;
  gint64 steps = (gint64) coarse->iterations * inner;
  fine->inner_iterations = SS_PIXEL_L1_FINE_INNER_ITERATIONS;
  fine->iterations = (int) MIN (steps / SS_PIXEL_L1_FINE_INNER_ITERATIONS, G_MAXINT);
  *fine_cap = 2 * inner / SS_PIXEL_L1_FINE_INNER_ITERATIONS;
  return TRUE;
}

int
ss_pixel_l1_sparsity_ladder (const SsSolveParams *params, gsize n, double *ladder)
{
  static const double factors[SS_PIXEL_L1_SPARSITY_RUNGS] = { 1, 3, 10, 30, 90 };
  const SsSolverInfo *info = ss_solver_info (params->kind);
  ladder[0] = params->sparsity;
  if (info == NULL || !ss_solver_uses (info, SS_PARAM_SPARSITY) || !(params->sparsity > 0))
    return 1;
  int rungs = 0;
  for (int i = 0; i < SS_PIXEL_L1_SPARSITY_RUNGS; i++)
    {
      double k = params->sparsity * factors[i];
      /* A fraction stays a fraction (1 would mean one pixel); a count stays
       * within the frame. */
      k = params->sparsity < 1 ? MIN (k, SS_PIXEL_L1_SPARSITY_MAX_FRACTION) : MIN (k, (double) n);
      if (rungs > 0 && k <= ladder[rungs - 1])
        break;
      ladder[rungs++] = k;
    }
  return rungs;
}

int
ss_pixel_l1_full_iterations (const SsRlHoldout *holdout, int picked, int validated,
                             int iterations)
{
  /* No validation, or its error still falling at its cap: all of them. */
  if (validated == 0 || holdout->best >= holdout->cap)
    return iterations;
  int full = (int) ceil (SS_PIXEL_L1_HOLDOUT_SCALE * MAX (picked, 1));
  return CLAMP (full, 1, iterations);
}

void
ss_pixel_l1_holdout_slicing (const SsSolveParams *params, SsSolveParams *sliced, int *every)
{
  const SsSolverInfo *info = ss_solver_info (params->kind);
  *sliced = *params;
  *every = SS_RL_HOLDOUT_EVERY;
  int inner = info ? info->holdout_inner_iterations : 0;
  if (inner <= 0 || !ss_solver_uses (info, SS_PARAM_INNER_ITERATIONS)
      || params->inner_iterations <= inner)
    return;
  /* The same budget in shorter outer steps, read at every one. */
  gint64 steps = (gint64) params->iterations * params->inner_iterations;
  sliced->inner_iterations = inner;
  sliced->iterations = (int) MIN (steps / inner, G_MAXINT);
  *every = 1;
}

/* The validations of the hold-out rule: one per rung of the sparsity
 * ladder (one rung for a solver without k), each read as RULE's readings
 * say, stopping once a rung predicts worse than the one before (the error
 * turns once as k grows). *CHOSEN gets the best rung's outcome, *READINGS
 * its readings and *SPARSITY its k; *VALIDATED and *SECONDS add up all of
 * them. */
static gboolean
run_validations (SsSolveOnceFunc once, gpointer backend, const SsHoldoutSplit *v,
                 const SsSolveParams *params, int every, Relay *relay,
                 GCancellable *cancellable, SsRlHoldout *chosen, SsPixelL1Readings *readings,
                 double *sparsity, int *validated, double *seconds, SsSolveResult *partial,
                 GError **error)
{
  double ladder[SS_PIXEL_L1_SPARSITY_RUNGS];
  int rungs = ss_pixel_l1_sparsity_ladder (params, (gsize) v->op.width * v->op.height, ladder);
  double previous = INFINITY;
  for (int r = 0; r < rungs; r++)
    {
      SsSolveParams rung = *params;
      rung.sparsity = ladder[r];
      SsRlHoldout holdout;
      ss_rl_holdout_init_every (&holdout, params->iterations, every);
      SsPixelL1Readings read = { 0 };
      if (!run_validation (once, backend, v, &rung, holdout.cap, holdout.every, relay, &holdout,
                           &read, cancellable, validated, seconds, partial, error))
        return FALSE;
      if (r == 0 || holdout.best_error < chosen->best_error)
        {
          *chosen = holdout;
          *sparsity = ladder[r];
          ss_pixel_l1_readings_clear (readings);
          *readings = read;
        }
      else
        ss_pixel_l1_readings_clear (&read);
      if (holdout.best_error >= previous)
        break;
      previous = holdout.best_error;
    }
  return TRUE;
}

/* The count the full solve takes from the chosen validation's READINGS,
 * read again at every step of the first two readings when that count is
 * the first reading: a count too coarse to tell where the estimate turns
 * (ALM's first outer step of 10 FISTA steps on the Sun at FWHM 2 and 10²
 * e⁻ is already 0.4 dB below its input, its fourth of 2 steps 1.5 dB above
 * it). *RUN becomes the parameters the full solve runs in; *VALIDATED and
 * *SECONDS add the finer run. FALSE with ERROR when it failed. */
static gboolean
pick_count (SsSolveOnceFunc once, gpointer backend, const SsHoldoutSplit *v, int every,
            const SsPixelL1Readings *readings, Relay *relay, GCancellable *cancellable,
            SsSolveParams *run, int *picked, int *validated, double *seconds,
            SsSolveResult *partial, GError **error)
{
  double tolerance = ss_pixel_l1_pick_tolerance (run, v->tested);
  *picked = ss_pixel_l1_pick (readings, tolerance);
  SsSolveParams fine;
  int fine_every, fine_cap;
  if (readings->count == 0 || *picked != readings->iteration[0]
      || !ss_pixel_l1_finer_readings (run, every, &fine, &fine_every, &fine_cap))
    return TRUE;
  /* Read to the end: a bump in the first readings must not end it. */
  SsPixelL1Readings read = { 0 };
  if (!run_validation (once, backend, v, &fine, fine_cap, fine_every, relay, NULL, &read,
                       cancellable, validated, seconds, partial, error))
    return FALSE;
  *picked = ss_pixel_l1_pick (&read, tolerance);
  ss_pixel_l1_readings_clear (&read);
  *run = fine;
  return TRUE;
}

static gboolean
solve_with_holdout (SsSolveOnceFunc once, gpointer backend, const SsProblem *problem,
                    const float *original, const SsSolveParams *asked, Relay *relay,
                    GCancellable *cancellable, SsSolveResult *result, GError **error)
{
  SsRlHoldout chosen;
  SsSolveParams sliced;
  int every;
  ss_pixel_l1_holdout_slicing (asked, &sliced, &every);
  const SsSolveParams *params = &sliced;
  SsHoldoutSplit v = { 0 };
  if (!params->holdout || !ss_solver_uses (ss_solver_info (params->kind), SS_PARAM_HOLDOUT)
      || !ss_rl_holdout_init_every (&chosen, params->iterations, every)
      || !validation_build (&v, problem, original))
    {
      /* No rule, too few iterations for one, or nothing to hold out. */
      ss_holdout_split_clear (&v);
      return once (backend, problem, asked, relay_report, relay, cancellable, result, error);
    }

  double sparsity = params->sparsity, validation_seconds = 0;
  int validated = 0, picked = 0;
  SsSolveResult partial = { 0 };
  SsPixelL1Readings readings = { 0 };
  gboolean ok = run_validations (once, backend, &v, params, every, relay, cancellable, &chosen,
                                 &readings, &sparsity, &validated, &validation_seconds,
                                 &partial, error);
  /* Still improving at the validation's cap: all the iterations, in the
   * solver's own outer steps where its descriptor says they converge faster
   * (ALM), else in the validation's. */
  gboolean to_cap = validated == 0 || chosen.best >= chosen.cap;
  gboolean as_asked = to_cap && ss_solver_info (params->kind)->holdout_cap_as_asked;
  SsSolveParams run = as_asked ? *asked : *params;
  run.sparsity = sparsity;
  if (ok && !to_cap)
    ok = pick_count (once, backend, &v, every, &readings, relay, cancellable, &run, &picked,
                     &validated, &validation_seconds, &partial, error);
  ss_pixel_l1_readings_clear (&readings);
  ss_holdout_split_clear (&v);
  if (!ok)
    {
      /* Cancelled or failed: what the validation had is the partial result. */
      ss_solve_result_clear (result);
      *result = partial;
      return FALSE;
    }

  run.holdout = FALSE;
  run.iterations = ss_pixel_l1_full_iterations (&chosen, picked, validated, run.iterations);
  relay->offset = validated;
  ok = once (backend, problem, &run, relay_report, relay, cancellable, result, error);
  result->iterations += validated;
  result->validation_iterations = validated;
  if (params->inner_iterations != asked->inner_iterations)   /* sliced */
    {
      result->validation_inner_iterations = params->inner_iterations;
      result->full_inner_iterations = run.inner_iterations;
      if (!to_cap && run.inner_iterations != params->inner_iterations)
        result->refined_inner_iterations = run.inner_iterations;
    }
  if (ss_solver_uses (ss_solver_info (params->kind), SS_PARAM_SPARSITY))
    result->sparsity = sparsity;
  result->seconds += validation_seconds;
  return ok;
}

/* ---- both rules ------------------------------------------------------------- */

gboolean
ss_pixel_l1_solve (SsSolveOnceFunc once, SsFloorFunc floor, gpointer backend,
                   const SsProblem *problem, const SsSolveParams *params, SsReportFunc report,
                   gpointer user_data, GCancellable *cancellable, SsSolveResult *result,
                   GError **error)
{
  const SsOperator *op = problem->op;
  gsize n = (gsize) op->width * op->height;
  double shift = ss_pixel_l1_wants_floor (problem, params) ? floor (backend, problem, params)
                                                           : 0.0;
  Relay relay = { .report = report, .user_data = user_data, .shift = (float) shift };
  SsProblem shifted = *problem;
  g_autofree float *y = NULL, *truth = NULL, *held_y = NULL;
  SsHeldOut held;
  if (shift < 0)
    {
      /* y − f·C1 where observed: C1 is c^'s DC term everywhere. */
      const float lift = (float) (-shift * ss_operator_dc (op));
      y = g_new (float, n);
      for (gsize i = 0; i < n; i++)
        y[i] = (op->mask == NULL || op->mask[i]) ? problem->y[i] + lift : 0.0f;
      shifted.y = y;
      /* A caller's held-out pixels (ss-solver-choice.h) are predicted by
       * C x' = C x − f·C1 too. */
      if (problem->held_out)
        {
          held_y = g_new (float, n);
          for (gsize i = 0; i < n; i++)
            held_y[i] = problem->held_out->y[i] + lift;
          held = (SsHeldOut) { held_y, problem->held_out->counted };
          shifted.held_out = &held;
        }
      if (problem->truth)
        {
          truth = g_new (float, n);
          for (gsize i = 0; i < n; i++)
            truth[i] = problem->truth[i] - (float) shift;
          shifted.truth = truth;
        }
    }
  gboolean ok = solve_with_holdout (once, backend, &shifted, problem->y, params, &relay,
                                    cancellable, result, error);
  if (shift < 0 && result->x)
    for (gsize i = 0; i < n; i++)
      result->x[i] += (float) shift;
  g_free (relay.preview);
  return ok;
}
