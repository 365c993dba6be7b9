/* ss-solver-choice.c: the `auto` solver's choice between its candidates
 * (ss-solver-choice.h). */
#include "ss-solver-choice.h"
#include "ss-error.h"
#include "ss-backend.h"
#include "ss-boundary.h"
#include "ss-holdout-split.h"
#include "ss-report.h"

#include <math.h>

gboolean
ss_solver_choice_kept (gsize pixel)
{
  /* Wellons' two-round integer hash with other constants than
   * ss_rl_holdout_kept's lowbias32, and another seed. */
  guint32 x = (guint32) pixel ^ (guint32) ((guint64) pixel >> 32) ^ 0x2545f491u;
  x ^= x >> 16;
  x *= 0x21f0aaadu;
  x ^= x >> 15;
  x *= 0x735a2d97u;
  x ^= x >> 15;
  return x % SS_RL_HOLDOUT_FOLDS != 0u;
}

/* ---- the split ---------------------------------------------------------------- */

/* The candidates fit the pixels this hash keeps, and every other pixel of
 * the image counts. The padded border is neither: its pixels mirror the
 * image's, held-out ones among them, and fitting those would show the
 * candidates what they must predict. */
static int
choice_role (gsize pixel, int frame_width, SsRegion image)
{
  if (ss_rl_holdout_role (pixel, frame_width, image) == SS_RL_HOLDOUT_NONE)
    return SS_RL_HOLDOUT_NONE;
  return ss_solver_choice_kept (pixel) ? SS_RL_HOLDOUT_FIT : SS_RL_HOLDOUT_TEST;
}

/* ---- the crop ----------------------------------------------------------------- */

/* A choice is a property of the scene and its noise, which a frame's centre
 * shows as well as the whole of it: on a frame of more than
 * SS_SOLVER_CHOICE_CROP_FRAMES crops the candidates run on its central crop
 * (SS_SOLVER_CHOICE_CROP² pixels by default), so that the choice costs a
 * few percent of the chosen run instead of twice it. The crop's own border,
 * the blur's reach wide, is left unobserved: its blur would wrap around the
 * crop, and it is the frame's border that the full run treats. */
typedef struct {
  SsOperator *op;
  float *y;
  SsProblem problem;
  SsRegion where;       /* the crop in the frame */
} ChoiceCrop;

static void
choice_crop_clear (ChoiceCrop *crop)
{
  g_clear_pointer (&crop->op, ss_operator_free);
  g_clear_pointer (&crop->y, g_free);
}

/* PROBLEM's data in WHERE, NaN where the crop's operator leaves a pixel
 * unobserved (its border MARGIN wide, and what the frame did not observe);
 * SEEN counts the others. */
static float *
crop_observed (const SsProblem *problem, SsRegion where, int margin, gsize *seen)
{
  const SsOperator *op = problem->op;
  int w = where.width, h = where.height;
  float *observed = g_new (float, (gsize) w * h);
  for (int r = 0; r < h; r++)
    for (int c = 0; c < w; c++)
      {
        gsize src = (gsize) (where.y0 + r) * op->width + where.x0 + c;
        gboolean border = r < margin || r >= h - margin || c < margin || c >= w - margin;
        gboolean kept = !border && (op->mask == NULL || op->mask[src]);
        observed[(gsize) r * w + c] = kept ? problem->y[src] : NAN;
        *seen += kept;
      }
  return observed;
}

/* TRUE with CROP built; FALSE without an error when the frame is small
 * enough to judge whole (or its blur too wide for a crop, or its centre
 * mostly unobserved). */
static gboolean
choice_crop_build (ChoiceCrop *crop, const SsProblem *problem, int side, GError **error)
{
  const SsOperator *op = problem->op;
  SsRegion image = problem->image.width > 0 ? problem->image
                                            : (SsRegion) { 0, 0, op->width, op->height };
  if (side <= 0
      || (gsize) image.width * image.height
        <= (gsize) SS_SOLVER_CHOICE_CROP_FRAMES * side * side
      || !op->kernel_nonnegative)
    return FALSE;
  int w = MIN (side, image.width), h = MIN (side, image.height);
  g_autofree float *kernel = ss_operator_blur_kernel_at (op, w, h, error);
  if (kernel == NULL)
    return FALSE;
  int margin = ss_boundary_margin_for_kernel (kernel, w, h);
  if (4 * margin >= MIN (w, h))
    return FALSE;
  crop->where = (SsRegion) { image.x0 + (image.width - w) / 2, image.y0 + (image.height - h) / 2,
                             w, h };
  gsize seen = 0;
  g_autofree float *observed = crop_observed (problem, crop->where, margin, &seen);
  /* A centre mostly blank (NaN) shows too little to judge by: the whole
   * frame is judged instead. */
  if (seen < (gsize) (w - 2 * margin) * (h - 2 * margin) / 2)
    return FALSE;
  crop->op = op->kernel != NULL
               ? ss_operator_new_deferred_take (g_steal_pointer (&kernel), observed, w, h, error)
               : ss_operator_new_from_kernel (kernel, observed, w, h, error);
  if (crop->op == NULL)
    return FALSE;
  crop->y = g_steal_pointer (&observed);
  for (gsize i = 0; i < (gsize) w * h; i++)
    if (!isfinite (crop->y[i]))
      crop->y[i] = 0.0f;
  crop->problem = *problem;
  crop->problem.op = crop->op;
  crop->problem.y = crop->y;
  crop->problem.truth = NULL;   /* a truth's MSE belongs to the whole frame */
  crop->problem.held_out = NULL;
  crop->problem.image = (SsRegion) { margin, margin, w - 2 * margin, h - 2 * margin };
  return TRUE;
}

/* ---- reports ------------------------------------------------------------------ */

typedef struct {
  SsReportFunc report;
  gpointer user_data;
  int offset;             /* iterations of the runs before this one */
  gboolean provisional;   /* a candidate's run on the split: none of its reports is final */
  gboolean cropped;       /* ... on a crop: its preview is not the frame's */
  double held_out;        /* the last report's held-out error */
} Relay;

static void
relay_report (const SsReport *report, gpointer user_data)
{
  Relay *r = user_data;
  r->held_out = report->held_out;
  if (r->report == NULL)
    return;
  SsReport out = *report;
  out.iteration += r->offset;
  out.final = report->final && !r->provisional;
  if (r->cropped)
    out.preview = NULL;
  r->report (&out, r->user_data);
}

/* ---- the choice --------------------------------------------------------------- */

SsSolveParams
ss_solver_choice_candidate (const SsSolveParams *params, SsSolverKind kind)
{
  SsSolveParams p = *params;
  ss_solve_params_set_defaults (&p, kind);
  p.alpha = params->alpha;
  p.nonneg = params->nonneg;
  /* RL keeps its hold-out stop: its count must come from the data. The ℓ1
   * solvers' hold-out rule is there to keep them above their input on
   * diffuse light when run alone; `auto` gives them a frame only where they
   * predict better than RL, which is what that rule guards. With it, ALM's
   * validation stopped at a shallow early minimum of its held-out error on 3
   * of 10 faint star fields (90-120 FISTA steps against the seed's 500):
   * 2.57, 0.81 and 0.45 dB under RL's best there. Without it those fields
   * score 1.75-1.92 dB over RL's best, the ten 1.65-3.28, and no pick
   * changed on quality's 70 cases of draws 0-9 nor on the frames (H200,
   * 2026-11-26). */
  p.holdout = FALSE;
  p.rl_stop = SS_RL_STOP_HOLDOUT;
  return p;
}

/* Whether candidate KIND can solve PROBLEM at all, by its own rule (RL
 * refuses random sensing, and data with nothing positive): asked before it
 * runs, so that a run's failure is always a failure, never taken for a
 * refusal. */
static gboolean
candidate_accepts (SsSolverKind kind, const SsProblem *problem, GError **error)
{
  const SsSolverInfo *info = ss_solver_info (kind);
  return info->check_problem == NULL || info->check_problem (problem, error);
}

static void
free_reasons (char **reasons)
{
  for (int c = 0; c < SS_SOLVER_MAX_CANDIDATES; c++)
    g_free (reasons[c]);
}

static char *
describe_choice (const SsSolverInfo *info, int chosen, const double *errors,
                 char *const *unusable, int count, const ChoiceCrop *crop)
{
  GString *s = g_string_new (NULL);
  const char *name = ss_solver_info (info->candidates[chosen])->name;
  g_string_append_printf (s, "%s chosen: held-out error", name);
  for (int c = 0; c < count; c++)
    if (unusable[c] != NULL)
      g_string_append_printf (s, "%s %s cannot run (%s)", c ? "," : "",
                              ss_solver_info (info->candidates[c])->name, unusable[c]);
    else
      g_string_append_printf (s, "%s %s %.4g", c ? "," : "",
                              ss_solver_info (info->candidates[c])->name, errors[c]);
  g_string_append_printf (s, " (each run on %d/%d of the pixels", SS_RL_HOLDOUT_FOLDS - 1,
                          SS_RL_HOLDOUT_FOLDS);
  if (crop->op != NULL)
    g_string_append_printf (s, " of the %d × %d crop at (%d, %d)", crop->where.width,
                            crop->where.height, crop->where.x0, crop->where.y0);
  g_string_append_c (s, ')');
  return g_string_free (s, FALSE);
}

gboolean
ss_solver_choice_solve (SsSolveOnceFunc solve, gpointer backend, const SsProblem *problem,
                        const SsSolveParams *params, int crop_side, SsReportFunc report,
                        gpointer user_data, GCancellable *cancellable, SsSolveResult *result,
                        GError **error)
{
  const SsSolverInfo *info = ss_solver_info (params->kind);
  double start = ss_now ();
  Relay relay = { .report = report, .user_data = user_data, .provisional = TRUE };
  double errors[SS_SOLVER_MAX_CANDIDATES];
  int chosen = -1, tried = 0, counted = 0;
  char *unusable[SS_SOLVER_MAX_CANDIDATES] = { NULL };   /* why a candidate could not run */
  GError *refusal = NULL;   /* the last candidate's refusal: the error when none can run */
  SsHoldoutSplit split = { 0 };
  ChoiceCrop crop = { 0 };
  GError *crop_error = NULL;
  const SsProblem *judged = problem;
  if (choice_crop_build (&crop, problem, crop_side, &crop_error))
    judged = &crop.problem;
  else if (crop_error != NULL)
    {
      g_propagate_error (error, crop_error);
      return FALSE;
    }
  relay.cropped = judged != problem;
  if (ss_holdout_split_build (&split, judged, choice_role, NULL, 0) && split.tested > 0)
    for (; tried < info->n_candidates; tried++)
      {
        GError *local = NULL;
        if (!candidate_accepts (info->candidates[tried], judged, &local))
          {
            /* RL refuses an operator that is no blur (random sensing): the
             * others are the choice, and the description says why. */
            unusable[tried] = g_strdup (local->message);
            g_clear_error (&refusal);
            refusal = local;
            errors[tried] = INFINITY;
            continue;
          }
        SsSolveParams p = ss_solver_choice_candidate (params, info->candidates[tried]);
        SsSolveResult run = { 0 };
        relay.offset = counted;
        relay.held_out = NAN;
        gboolean ok = solve (backend, &split.problem, &p, relay_report, &relay, cancellable, &run,
                             &local);
        counted += run.iterations;
        if (!ok)
          {
            /* Cancelled or failed: the candidate's partial result. */
            g_propagate_error (error, local);
            g_clear_error (&refusal);
            ss_holdout_split_clear (&split);
            choice_crop_clear (&crop);
            free_reasons (unusable);
            ss_solve_result_clear (result);
            *result = run;
            return FALSE;
          }
        ss_solve_result_clear (&run);
        /* A candidate without a reading (no report) is never chosen over
         * one with. */
        errors[tried] = isfinite (relay.held_out) ? relay.held_out : INFINITY;
        if (chosen < 0 || errors[tried] < errors[chosen])
          chosen = tried;
      }
  ss_holdout_split_clear (&split);
  if (chosen < 0 && tried > 0)
    {
      /* Every candidate refused the problem: the last refusal says why. */
      g_propagate_error (error, refusal);
      choice_crop_clear (&crop);
      free_reasons (unusable);
      return FALSE;
    }
  g_clear_error (&refusal);
  chosen = MAX (chosen, 0);   /* nothing to hold out: the first candidate */

  SsSolveParams p = ss_solver_choice_candidate (params, info->candidates[chosen]);
  relay.offset = counted;
  relay.provisional = FALSE;
  relay.cropped = FALSE;
  gboolean ok = solve (backend, problem, &p, relay_report, &relay, cancellable, result, error);
  result->iterations += counted;
  result->choice_iterations = counted;
  result->seconds = ss_now () - start;
  g_free (result->choice);
  result->choice = tried > 0 ? describe_choice (info, chosen, errors, unusable, tried, &crop)
                             : g_strdup_printf ("%s: nothing to hold out",
                                                ss_solver_info (info->candidates[0])->name);
  choice_crop_clear (&crop);
  free_reasons (unusable);
  return ok;
}

gboolean
ss_solver_choice_cpu (const SsProblem *problem, const SsSolveParams *params, SsReportFunc report,
                      gpointer user_data, GCancellable *cancellable, SsSolveResult *result,
                      GError **error)
{
  g_autoptr (SsBackend) backend = ss_backend_new (SS_BACKEND_CPU, error);
  return backend != NULL
         && ss_backend_solve (backend, problem, params, report, user_data, cancellable, result,
                              error);
}
