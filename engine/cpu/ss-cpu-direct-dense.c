/* ss-cpu-direct-dense.c: the dense direct solver on the CPU (seed 002).
 *
 * x = (A^T A + lambda I)^-1 A^T y with A = P C, lambda = params->alpha:
 *   phase 0  the normal matrix (ss-dense.c) and the right-hand side A^T y;
 *   phase 1  Cholesky L L^T with LAPACKE_spotrf (lower);
 *   phase 2  SS_DIRECT_SOLVE: two triangular solves (LAPACKE_spotrs);
 *            SS_DIRECT_INVERSE: L^-1 by GETS (ss-gets.c);
 *   phase 3  SS_DIRECT_INVERSE: x = L^-T (L^-1 A^T y), two triangular
 *            matrix-vector products, the cost every further image with the
 *            same operator would pay; SS_DIRECT_SOLVE has nothing left (0).
 * The memory check runs before anything is allocated; cancellation is
 * honoured between phases (a phase itself, one LAPACK call, is not cut short).
 */
#include "ss-cpu-private.h"
#include "ss-dense.h"
#include "ss-error.h"

#include <cblas.h>
#include <lapacke.h>
#include <math.h>
#include <string.h>

enum { PHASE_NORMAL, PHASE_CHOLESKY, PHASE_INVERSE_OR_SOLVE, PHASE_APPLY };

typedef struct {
  const SsProblem *problem;
  const SsSolveParams *params;
  GCancellable *cancellable;
  SsSolveResult *result;
  SsMemCounter memory;
  int n;
  gsize matrix_bytes;
  float *N;          /* normal matrix, then its Cholesky factor L (lower) */
  float *R;          /* L^-1 (SS_DIRECT_INVERSE) */
  float *x;          /* A^T y, then the solution */
  float *cx;         /* P C x, for the metrics */
} DenseSolve;

static void
dense_solve_free (DenseSolve *s)
{
  ss_mem_free (&s->memory, s->N, s->matrix_bytes);
  ss_mem_free (&s->memory, s->R, s->matrix_bytes);
  ss_mem_free (&s->memory, s->x, (gsize) s->n * sizeof (float));
  ss_mem_free (&s->memory, s->cx, (gsize) s->n * sizeof (float));
  s->N = s->R = s->x = s->cx = NULL;
}

/* Adds BYTES held outside the counter: the normal matrix comes from
 * ss_dense_normal_matrix. */
static void
count_bytes (SsMemCounter *memory, gsize bytes)
{
  memory->current += bytes;
  memory->peak = MAX (memory->peak, memory->current);
}

static gboolean
check_arguments (const SsProblem *problem, const SsSolveParams *params, SsSolveResult *result,
                 GError **error)
{
  if (problem == NULL || problem->op == NULL || problem->y == NULL || params == NULL
      || result == NULL)
    {
      g_set_error_literal (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT,
                           "dense direct: missing problem, parameters or result");
      return FALSE;
    }
  if (!(params->alpha >= 0) || !isfinite (params->alpha))
    {
      g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT,
                   "dense direct: lambda (alpha) %g must be finite and >= 0", params->alpha);
      return FALSE;
    }
  if (params->direct_method != SS_DIRECT_SOLVE && params->direct_method != SS_DIRECT_INVERSE)
    {
      g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT,
                   "dense direct: unknown method %d", (int) params->direct_method);
      return FALSE;
    }
  return TRUE;
}

/* Runs before each phase; also stamps the time of the phase just ended. */
static gboolean
phase_boundary (DenseSolve *s, int finished_phase, double *phase_start, GError **error)
{
  double now = ss_now ();
  if (finished_phase >= 0)
    s->result->phase_seconds[finished_phase] = now - *phase_start;
  *phase_start = now;
  return !g_cancellable_set_error_if_cancelled (s->cancellable, error);
}

static gboolean
build_system (DenseSolve *s, GError **error)
{
  const SsOperator *op = s->problem->op;
  s->x = ss_mem_alloc (&s->memory, (gsize) s->n * sizeof (float), error);
  if (s->x == NULL || !ss_operator_apply_adjoint (op, s->problem->y, s->x, error))
    return FALSE;
  s->N = ss_dense_normal_matrix (op, s->params->alpha, error);
  if (s->N == NULL)
    return FALSE;
  count_bytes (&s->memory, s->matrix_bytes);
  return TRUE;
}

static gboolean
factor_cholesky (DenseSolve *s, GError **error)
{
  lapack_int info = LAPACKE_spotrf (LAPACK_COL_MAJOR, 'L', s->n, s->N, s->n);
  if (info > 0)
    {
      g_set_error (error, SS_ERROR, SS_ERROR_NUMERIC,
                   "dense direct: A^T A + lambda I is not positive definite in float "
                   "(leading minor %d of %d); increase alpha",
                   (int) info, s->n);
      return FALSE;
    }
  if (info < 0)
    {
      g_set_error (error, SS_ERROR, SS_ERROR_NUMERIC,
                   "dense direct: LAPACKE_spotrf rejected argument %d", (int) -info);
      return FALSE;
    }
  return TRUE;
}

static gboolean
solve_with_factor (DenseSolve *s, GError **error)
{
  lapack_int info = LAPACKE_spotrs (LAPACK_COL_MAJOR, 'L', s->n, 1, s->N, s->n, s->x, s->n);
  if (info != 0)
    {
      g_set_error (error, SS_ERROR, SS_ERROR_NUMERIC,
                   "dense direct: LAPACKE_spotrs failed (info %d)", (int) info);
      return FALSE;
    }
  return TRUE;
}

static gboolean
invert_factor (DenseSolve *s, GError **error)
{
  s->R = ss_mem_alloc (&s->memory, s->matrix_bytes, error);
  if (s->R == NULL)
    return FALSE;
  if (!ss_gets_lower_inverse (s->N, s->n, s->n, s->R, s->n, error))
    return FALSE;
  /* The factor is no longer needed once its inverse exists. */
  ss_mem_free (&s->memory, s->N, s->matrix_bytes);
  s->N = NULL;
  return TRUE;
}

/* x = R^T (R x) with R = L^-1: two triangular matrix-vector products. */
static void
apply_inverse (DenseSolve *s)
{
  cblas_strmv (CblasColMajor, CblasLower, CblasNoTrans, CblasNonUnit, s->n, s->R, s->n, s->x, 1);
  cblas_strmv (CblasColMajor, CblasLower, CblasTrans, CblasNonUnit, s->n, s->R, s->n, s->x, 1);
}

/* Metrics of the solution and the final report (the shared CPU reporter),
 * then the result's common fields. */
static gboolean
finish (DenseSolve *s, SsCpuReporter *reporter, GError **error)
{
  s->cx = ss_mem_alloc (&s->memory, (gsize) s->n * sizeof (float), error);
  if (s->cx == NULL || !ss_operator_apply (s->problem->op, s->x, s->cx, error))
    return FALSE;
  /* An exact solve: one step, nothing further would change. */
  gboolean ok = ss_cpu_reporter_emit (reporter, 1, s->x, s->cx, 0.0, TRUE, error);
  ss_cpu_finish_result (s->result, reporter, &s->x, 1, &s->memory);
  return ok;
}

gboolean
ss_cpu_direct_dense (const SsProblem *problem, const SsSolveParams *params,
                     SsReportFunc report, gpointer user_data, GCancellable *cancellable,
                     SsSolveResult *result, GError **error)
{
  if (!check_arguments (problem, params, result, error))
    return FALSE;
  const SsOperator *op = problem->op;
  memset (result->phase_seconds, 0, sizeof result->phase_seconds);
  result->peak_memory_bytes = 0;

  /* Before any allocation: the matrices must fit. */
  if (!ss_dense_check_fits (op->width, op->height, op->mask ? op->m : (gsize) op->width * op->height,
                            params->direct_method, params->memory_limit, error))
    return FALSE;

  DenseSolve s = { 0 };
  s.problem = problem;
  s.params = params;
  s.cancellable = cancellable;
  s.result = result;
  s.n = op->width * op->height;
  s.matrix_bytes = (gsize) s.n * (gsize) s.n * sizeof (float);
  SsCpuReporter reporter;
  ss_cpu_reporter_init (&reporter, problem, params, report, user_data, cancellable);
  double phase_start = reporter.start;
  gboolean inverse = params->direct_method == SS_DIRECT_INVERSE;

  gboolean ok = phase_boundary (&s, -1, &phase_start, error)
                && build_system (&s, error)
                && phase_boundary (&s, PHASE_NORMAL, &phase_start, error)
                && factor_cholesky (&s, error)
                && phase_boundary (&s, PHASE_CHOLESKY, &phase_start, error)
                && (inverse ? invert_factor (&s, error) : solve_with_factor (&s, error))
                && phase_boundary (&s, PHASE_INVERSE_OR_SOLVE, &phase_start, error);
  if (ok && inverse)
    {
      apply_inverse (&s);
      ok = phase_boundary (&s, PHASE_APPLY, &phase_start, error);
    }
  ok = ok && finish (&s, &reporter, error);
  result->peak_memory_bytes = s.memory.peak;
  dense_solve_free (&s);
  ss_cpu_reporter_clear (&reporter);
  return ok;
}
