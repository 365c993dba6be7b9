/* ss-solver.c: solver parameters and results (backend-independent). */
#include "ss-solver.h"
#include "ss-bench.h"
#include "ss-error.h"

#include <math.h>
#include <string.h>

#define GOLDEN_RATIO 1.6180339887498949

void
ss_solve_params_init (SsSolveParams *params)
{
  memset (params, 0, sizeof *params);
  params->kind = SS_SOLVER_CPADMM;
  params->alpha = 1e-3;
  params->rho = 1.0;
  params->sigma = 1.0;
  params->tau = 1.0;
  params->iterations = 300;
  params->report_every = 10;
  params->direct_method = SS_DIRECT_SOLVE;
}

static gboolean
invalid (GError **error, const char *what, double value, const char *rule)
{
  g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT, "%s = %g: %s", what, value, rule);
  return FALSE;
}

gboolean
ss_solve_params_validate (const SsSolveParams *params, GError **error)
{
  if (!isfinite (params->alpha) || params->alpha < 0)
    return invalid (error, "alpha", params->alpha, "must be finite and >= 0");
  if (!isfinite (params->rho) || params->rho <= 0)
    return invalid (error, "rho", params->rho, "must be finite and > 0");
  if (!isfinite (params->sigma) || params->sigma <= 0)
    return invalid (error, "sigma", params->sigma, "must be finite and > 0");
  if (!isfinite (params->tau) || params->tau <= 0 || params->tau >= GOLDEN_RATIO)
    return invalid (error, "tau", params->tau, "must lie in (0, (1+sqrt 5)/2)");
  if (ss_solver_is_iterative (params->kind) && params->iterations < 1)
    return invalid (error, "iterations", params->iterations, "must be >= 1");
  if (params->report_every < 1)
    return invalid (error, "report-every", params->report_every, "must be >= 1");
  if (params->preview_width < 0 || params->preview_height < 0)
    return invalid (error, "preview size", MIN (params->preview_width, params->preview_height),
                    "must be >= 0");
  if (params->kind == SS_SOLVER_DIRECT && params->alpha <= 0)
    return invalid (error, "alpha", params->alpha,
                    "the direct solver needs a positive Tikhonov weight");
  return TRUE;
}

static const char *const solver_names[] = {
  [SS_SOLVER_CPADMM] = "cpadmm",
  [SS_SOLVER_FISTA] = "fista",
  [SS_SOLVER_ISTA] = "ista",
  [SS_SOLVER_DIRECT] = "direct",
  [SS_SOLVER_DIRECT_FFT] = "direct-fft",
};

const char *
ss_solver_kind_to_string (SsSolverKind kind)
{
  return (unsigned) kind < G_N_ELEMENTS (solver_names) ? solver_names[kind] : "unknown";
}

gboolean
ss_solver_kind_from_string (const char *text, SsSolverKind *kind, GError **error)
{
  for (unsigned i = 0; i < G_N_ELEMENTS (solver_names); i++)
    if (text && g_ascii_strcasecmp (text, solver_names[i]) == 0)
      {
        *kind = (SsSolverKind) i;
        return TRUE;
      }
  g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT,
               "unknown solver \"%s\": expected cpadmm, fista, ista, direct or direct-fft",
               text ? text : "");
  return FALSE;
}

gboolean
ss_solver_is_iterative (SsSolverKind kind)
{
  return kind == SS_SOLVER_CPADMM || kind == SS_SOLVER_FISTA || kind == SS_SOLVER_ISTA;
}

void
ss_solve_result_clear (SsSolveResult *result)
{
  g_clear_pointer (&result->x, g_free);
  g_clear_pointer (&result->backend, g_free);
  g_clear_pointer (&result->device, g_free);
  g_clear_pointer (&result->warning, g_free);
}

void
ss_bench_params_init (SsBenchParams *params)
{
  memset (params, 0, sizeof *params);
  params->solver = SS_SOLVER_CPADMM;
  params->width = params->height = 1024;
  params->iterations = 50;
  params->seed = 1;
  params->direct_method = SS_DIRECT_SOLVE;
  params->boundary = SS_BOUNDARY_PERIODIC;
  params->margin = -1;
}

void
ss_bench_result_clear (SsBenchResult *result)
{
  g_clear_pointer (&result->device, g_free);
}
