/* ss-solver.c: solver parameters and results (backend-independent). */
#include "ss-solver.h"
#include "ss-error.h"
#include "ss-mem.h"
#include "ss-rl-holdout.h"
#include "ss-rl.h"

#include <math.h>
#include <string.h>

void
ss_solve_params_init (SsSolveParams *params)
{
  memset (params, 0, sizeof *params);
  ss_solve_params_set_defaults (params, SS_SOLVER_CPADMM);
  params->report_every = 10;
}

static gboolean
out_of_range (const SsParamInfo *info, double value, GError **error)
{
  g_autofree char *text = ss_param_format (info, value);
  return ss_param_range_error (info, info->name, text, error);
}

gboolean
ss_solve_params_validate (const SsSolveParams *params, GError **error)
{
  const SsSolverInfo *solver = ss_solver_info (params->kind);
  if (solver == NULL)
    {
      g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT, "unknown solver %d", params->kind);
      return FALSE;
    }
  /* Every field is checked, used or not: a stray NaN must not ride along
   * into a later solve with another solver. */
  for (int id = 0; id < SS_N_PARAMS; id++)
    {
      const SsParamInfo *info = ss_param_info ((SsParamId) id);
      if (info->type != SS_PARAM_REAL && info->type != SS_PARAM_INT)
        continue;
      if (info->id == SS_PARAM_ITERATIONS && !ss_solver_uses (solver, SS_PARAM_ITERATIONS))
        continue;
      double value = ss_param_get (params, info);
      if (!ss_param_in_range (info, value))
        return out_of_range (info, value, error);
    }
  if (params->report_every < 1)
    {
      g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT,
                   "report-every = %d: must be >= 1", params->report_every);
      return FALSE;
    }
  if (params->preview_width < 0 || params->preview_height < 0)
    {
      g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT,
                   "preview size = %d: must be >= 0",
                   MIN (params->preview_width, params->preview_height));
      return FALSE;
    }
  return solver->check == NULL || solver->check (params, error);
}

const char *
ss_solver_kind_to_string (SsSolverKind kind)
{
  const SsSolverInfo *info = ss_solver_info (kind);
  return info ? info->name : "unknown";
}

gboolean
ss_solver_kind_from_string (const char *text, SsSolverKind *kind, GError **error)
{
  const SsSolverInfo *info = ss_solver_find (text, error);
  if (info == NULL)
    return FALSE;
  *kind = info->kind;
  return TRUE;
}

gboolean
ss_solver_is_iterative (SsSolverKind kind)
{
  const SsSolverInfo *info = ss_solver_info (kind);
  return info != NULL && (info->caps & SS_SOLVER_ITERATIVE);
}

void
ss_solve_result_clear (SsSolveResult *result)
{
  g_clear_pointer (&result->x, g_free);
  g_clear_pointer (&result->backend, g_free);
  g_clear_pointer (&result->device, g_free);
  g_clear_pointer (&result->warning, g_free);
  g_clear_pointer (&result->choice, g_free);
}

void
ss_solve_result_copy_summary (const SsSolveResult *src, SsSolveResult *dst)
{
  *dst = *src;
  dst->x = NULL;
  dst->backend = g_strdup (src->backend);
  dst->device = g_strdup (src->device);
  dst->warning = g_strdup (src->warning);
  dst->choice = g_strdup (src->choice);
}

void
ss_solve_result_warn_if_flat (SsSolveResult *result, const float *y, gsize n)
{
  const float *x = result->x;
  if (x == NULL || y == NULL || n == 0)
    return;
  /* The data's scale from a sample of a few thousand pixels: a deblurred
   * image spans at least what its data do, so a result spanning less than
   * a ten-thousandth of it holds none of their structure. */
  float scale = 0.0f;
  for (gsize i = 0; i < n; i += n / 4096 + 1)
    if (isfinite (y[i]))
      scale = fmaxf (scale, fabsf (y[i]));
  const float tolerance = 1e-4f * scale;
  float lo = x[0], hi = x[0];
  /* Stops once the span passes the tolerance: at once for any real image. */
  for (gsize i = 1; i < n; i++)
    {
      lo = fminf (lo, x[i]);
      hi = fmaxf (hi, x[i]);
      if (hi - lo > tolerance)
        return;
    }
  ss_solve_result_add_warning (result, "the result is flat, no structure in it: α is too "
                                       "large for these data, too few iterations ran, or too "
                                       "few pixels were left in the fit");
}

void
ss_solve_result_add_warning (SsSolveResult *result, const char *text)
{
  if (text == NULL || (result->warning != NULL && strstr (result->warning, text) != NULL))
    return;
  char *joined = result->warning ? g_strdup_printf ("%s; %s", result->warning, text)
                                 : g_strdup (text);
  g_free (result->warning);
  result->warning = joined;
}

gsize
ss_count_non_finite (const float *data, gsize n)
{
  gsize bad = 0;
#pragma omp parallel for reduction(+ : bad) schedule(static) if (n > SS_PARALLEL_PIXELS)
  for (gsize i = 0; i < n; i++)
    bad += isfinite (data[i]) ? 0 : 1;
  return bad;
}

gboolean
ss_solve_result_check_finite (SsSolveResult *result, gsize n, GError **error)
{
  gsize bad = result->x != NULL ? ss_count_non_finite (result->x, n) : 0;
  if (bad == 0)
    return TRUE;
  g_clear_pointer (&result->x, g_free);
  g_set_error (error, SS_ERROR, SS_ERROR_NUMERIC,
               "the solve diverged: %" G_GSIZE_FORMAT " of the result's %" G_GSIZE_FORMAT
               " pixels are not finite (another solver, a larger α or fewer iterations may "
               "converge)", bad, n);
  return FALSE;
}

char *
ss_solve_result_describe_holdout (const SsSolveResult *r)
{
  if (r->validation_iterations <= 0 && r->choice == NULL)
    return NULL;
  GString *s = g_string_new (NULL);
  if (r->choice)
    g_string_append_printf (s, "%s, %d iterations; then ", r->choice, r->choice_iterations);
  if (r->validation_iterations <= 0)
    {
      g_string_append_printf (s, "%d on all the pixels", r->iterations - r->choice_iterations);
      return g_string_free (s, FALSE);
    }
  g_string_append_printf (s, "hold-out: %d validating on %d/%d of the pixels, then %d on all "
                          "of them", r->validation_iterations, SS_RL_HOLDOUT_FOLDS - 1,
                          SS_RL_HOLDOUT_FOLDS,
                          r->iterations - r->choice_iterations - r->validation_iterations);
  /* The counts are outer steps the rule may have shortened (ALM, HTP, CoSaMP). */
  if (r->validation_inner_iterations > 0 && r->refined_inner_iterations > 0)
    g_string_append_printf (s, " (outer steps of %d, the first read again in steps of %d; then "
                            "of %d inner steps)", r->validation_inner_iterations,
                            r->refined_inner_iterations, r->full_inner_iterations);
  else if (r->validation_inner_iterations > 0)
    g_string_append_printf (s, " (outer steps of %d, then of %d inner steps)",
                            r->validation_inner_iterations, r->full_inner_iterations);
  /* RL's floor (ss-rl.h), when the rule chose it. */
  if (r->floor_iterations > 0)
    g_string_append_printf (s, "; floor %s: the last %d validating with it raised half a σ "
                            "above the sky, held-out error %.3f of the sky's (the sky's tail "
                            "%.2f of a flat sky's)",
                            r->floor_raised ? "raised" : "at the sky", r->floor_iterations,
                            r->floor_error_ratio, r->floor_sky_tail);
  else if (r->floor_sky_tail >= SS_RL_SKY_TAIL_LIMIT)
    g_string_append_printf (s, "; floor at the sky: faint light below its median (the sky's "
                            "tail %.2f of a flat sky's)", r->floor_sky_tail);
  if (r->blend_early_iterations > 0)
    g_string_append_printf (s, "; blended by brightness with the image after %d of them "
                            "(held-out error %.3f of the unblended's)",
                            r->blend_early_iterations, r->blend_error_ratio);
  if (r->full_accel > 0)
    g_string_append_printf (s, "; the validation reached its cap, so the full run was "
                            "accelerated (cap %g)", r->full_accel);
  if (r->sparsity > 0)
    g_string_append_printf (s, "; sparsity %g chosen", r->sparsity);
  return g_string_free (s, FALSE);
}
