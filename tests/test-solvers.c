/* test-solvers.c: the CPU solvers against each other and against the LASSO
 * optimality conditions, on fresh random problems. */
#include "test-common.h"

#include <string.h>

static SsSolveResult
solve (const TestProblem *p, SsSolverKind kind, double alpha, int iterations, gboolean nonneg)
{
  SsSolveParams params = test_solve_params (kind, alpha, iterations);
  params.nonneg = nonneg;
  return test_cpu_solve (p, &params);
}

/* g = Aᵀ(y − A x): at a LASSO minimiser |g_i| <= α where x_i = 0 and
 * g_i = α sign(x_i) where x_i != 0 (with x >= 0: g_i <= α, and = α on the
 * support). Returns the largest violation relative to α. */
static double
optimality_violation (const TestProblem *p, const float *x, double alpha, gboolean nonneg)
{
  g_autofree float *ax = g_new (float, p->n);
  g_autofree float *r = g_new (float, p->n);
  g_autofree float *g = g_new (float, p->n);
  g_assert_true (ss_operator_apply (p->op, x, ax, NULL));
  for (gsize i = 0; i < p->n; i++)
    r[i] = p->y[i] - ax[i];
  g_assert_true (ss_operator_apply_adjoint (p->op, r, g, NULL));
  double worst = 0;
  for (gsize i = 0; i < p->n; i++)
    {
      double v;
      if (x[i] == 0)
        v = nonneg ? MAX (g[i] - alpha, 0) : MAX (fabs (g[i]) - alpha, 0);
      else
        v = fabs (g[i] - alpha * (x[i] > 0 ? 1 : -1));
      worst = MAX (worst, v);
    }
  return worst / alpha;
}

static void
check_lasso_agreement (gboolean nonneg)
{
  g_autoptr (GRand) rng = test_rng ();
  TestProblem p;
  /* Odd width exercises the half-spectrum layout. */
  test_problem_init (&p, rng, 33, 28, "gaussian:1.5", 0.6, 0.01);
  double alpha = 2e-3;
  SsSolveResult admm = solve (&p, SS_SOLVER_CPADMM, alpha, 4000, nonneg);
  SsSolveResult fista = solve (&p, SS_SOLVER_FISTA, alpha, 4000, nonneg);
  g_test_message ("objective: cpadmm %.9g fista %.9g", admm.objective, fista.objective);
  /* Both reach the same minimum objective (relative 1e-3) ... */
  g_assert_cmpfloat (fabs (admm.objective - fista.objective) / fista.objective, <, 1e-3);
  /* ... and it is a minimum: the optimality conditions hold within 1% of α
   * (float32 iterates; the violation is measured in float64). */
  double v_fista = optimality_violation (&p, fista.x, alpha, nonneg);
  double v_admm = optimality_violation (&p, admm.x, alpha, nonneg);
  g_test_message ("optimality violation / alpha: fista %.3g cpadmm %.3g", v_fista, v_admm);
  g_assert_cmpfloat (v_fista, <, 0.01);
  g_assert_cmpfloat (v_admm, <, 0.01);
  /* ISTA converges to the same objective, more slowly. */
  SsSolveResult ista = solve (&p, SS_SOLVER_ISTA, alpha, 20000, nonneg);
  g_assert_cmpfloat (fabs (ista.objective - fista.objective) / fista.objective, <, 1e-3);
  ss_solve_result_clear (&admm);
  ss_solve_result_clear (&fista);
  ss_solve_result_clear (&ista);
  test_problem_clear (&p);
}

static void
test_lasso_signed (void)
{
  check_lasso_agreement (FALSE);
}

static void
test_lasso_nonneg (void)
{
  check_lasso_agreement (TRUE);
}

/* Direct FFT solves (CᵀC + λI) x = Cᵀy: check the normal equations. */
static void
test_direct_fft_normal_equations (void)
{
  g_autoptr (GRand) rng = test_rng ();
  TestProblem p;
  test_problem_init (&p, rng, g_rand_int_range (rng, 40, 90), g_rand_int_range (rng, 40, 90),
                "moffat:3,2.5", 1.0, 0.01);
  double lambda = g_rand_double_range (rng, 1e-3, 1e-1);
  SsSolveResult r = solve (&p, SS_SOLVER_DIRECT_FFT, lambda, 1, FALSE);
  g_autofree float *cx = g_new (float, p.n);
  g_autofree float *lhs = g_new (float, p.n);
  g_autofree float *rhs = g_new (float, p.n);
  g_assert_true (ss_operator_apply (p.op, r.x, cx, NULL));
  g_assert_true (ss_operator_apply_adjoint (p.op, cx, lhs, NULL));
  for (gsize i = 0; i < p.n; i++)
    lhs[i] += (float) (lambda * r.x[i]);
  g_assert_true (ss_operator_apply_adjoint (p.op, p.y, rhs, NULL));
  g_assert_cmpfloat (test_rel_diff (lhs, rhs, p.n), <, 1e-4);
  ss_solve_result_clear (&r);
  test_problem_clear (&p);
}

static void
test_direct_fft_refuses_mask (void)
{
  g_autoptr (GRand) rng = test_rng ();
  TestProblem p;
  test_problem_init (&p, rng, 16, 16, "box:3", 0.5, 0);
  SsSolveParams params;
  ss_solve_params_init (&params);
  params.kind = SS_SOLVER_DIRECT_FFT;
  SsProblem problem = { .op = p.op, .y = p.y, .truth = NULL };
  SsSolveResult result = { 0 };
  g_autoptr (GError) error = NULL;
  g_assert_false (ss_cpu_solve (&problem, &params, NULL, NULL, NULL, &result, &error));
  g_assert_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT);
  test_problem_clear (&p);
}

typedef struct {
  int count;
  int last_iteration;
  gboolean saw_final;
  double last_mse;
  float preview_mean;
  int cancel_at;
  GCancellable *cancellable;
} ReportLog;

static void
record_report (const SsReport *report, gpointer user_data)
{
  ReportLog *log = user_data;
  log->count++;
  g_assert_cmpint (report->iteration, >, log->last_iteration);
  log->last_iteration = report->iteration;
  log->saw_final |= report->final;
  log->last_mse = report->mse;
  g_assert_nonnull (report->preview);
  double sum = 0;
  for (int i = 0; i < report->preview_width * report->preview_height; i++)
    sum += report->preview[i];
  log->preview_mean = (float) (sum / (report->preview_width * report->preview_height));
  if (log->cancel_at && log->count == log->cancel_at)
    g_cancellable_cancel (log->cancellable);
}

/* Reports come every k iterations and at the end, carry the truth's MSE and a
 * preview whose mean is the estimate's mean (the blocks tile the image). */
static void
test_reports_and_preview (void)
{
  g_autoptr (GRand) rng = test_rng ();
  TestProblem p;
  test_problem_init (&p, rng, 64, 48, "box:5", 0.5, 0.001);
  SsSolverKind kinds[] = { SS_SOLVER_CPADMM, SS_SOLVER_FISTA };
  for (unsigned k = 0; k < G_N_ELEMENTS (kinds); k++)
    {
      SsSolveParams params;
      ss_solve_params_init (&params);
      params.kind = kinds[k];
      params.iterations = 47;
      params.report_every = 5;
      params.preview_width = 16;
      params.preview_height = 12;
      SsProblem problem = { .op = p.op, .y = p.y, .truth = p.truth };
      SsSolveResult result = { 0 };
      ReportLog log = { 0 };
      g_assert_true (ss_cpu_solve (&problem, &params, record_report, &log, NULL, &result, NULL));
      g_assert_cmpint (log.count, ==, 10); /* 5, 10, ..., 45, then 47 */
      g_assert_cmpint (log.last_iteration, ==, 47);
      g_assert_true (log.saw_final);
      g_assert_cmpfloat (log.last_mse, ==, result.mse);
      g_assert_cmpfloat_with_epsilon (result.mse, ss_mse (result.x, p.truth, p.n), 1e-9);
      double sum = 0;
      for (gsize i = 0; i < p.n; i++)
        sum += result.x[i];
      g_assert_cmpfloat (fabs (log.preview_mean - sum / p.n), <, 1e-5);
      ss_solve_result_clear (&result);
    }
  test_problem_clear (&p);
}

/* Cancelling during a report stops the solve at that report point. */
static void
test_cancellation (void)
{
  g_autoptr (GRand) rng = test_rng ();
  TestProblem p;
  test_problem_init (&p, rng, 40, 40, "box:5", 0.5, 0);
  SsSolveParams params;
  ss_solve_params_init (&params);
  params.iterations = 1000;
  params.report_every = 7;
  params.preview_width = params.preview_height = 8;
  g_autoptr (GCancellable) cancellable = g_cancellable_new ();
  ReportLog log = { .cancel_at = 2, .cancellable = cancellable };
  SsProblem problem = { .op = p.op, .y = p.y, .truth = NULL };
  SsSolveResult result = { 0 };
  g_autoptr (GError) error = NULL;
  g_assert_false (ss_cpu_solve (&problem, &params, record_report, &log, cancellable, &result, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_assert_cmpint (result.iterations, ==, 14);
  g_assert_nonnull (result.x); /* the partial estimate is kept */
  g_assert_true (isnan (result.mse));
  ss_solve_result_clear (&result);
  test_problem_clear (&p);
}

static void
test_bad_parameters (void)
{
  struct { const char *what; double alpha, rho, sigma, tau; int iters; } cases[] = {
    { "negative alpha", -1, 1, 1, 1, 10 },
    { "nan alpha", NAN, 1, 1, 1, 10 },
    { "zero rho", 1e-3, 0, 1, 1, 10 },
    { "infinite sigma", 1e-3, 1, INFINITY, 1, 10 },
    { "tau too large", 1e-3, 1, 1, 1.7, 10 },
    { "zero iterations", 1e-3, 1, 1, 1, 0 },
  };
  for (unsigned i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      SsSolveParams params;
      ss_solve_params_init (&params);
      params.alpha = cases[i].alpha;
      params.rho = cases[i].rho;
      params.sigma = cases[i].sigma;
      params.tau = cases[i].tau;
      params.iterations = cases[i].iters;
      g_autoptr (GError) error = NULL;
      g_test_message ("%s", cases[i].what);
      g_assert_false (ss_solve_params_validate (&params, &error));
      g_assert_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT);
    }
}

/* FISTA's options reach the same minimiser as plain FISTA. */
static void
test_fista_options (void)
{
  g_autoptr (GRand) rng = test_rng ();
  TestProblem p;
  test_problem_init (&p, rng, 30, 30, "gaussian:1.5", 0.7, 0.01);
  double alpha = 2e-3;
  SsSolveResult plain = solve (&p, SS_SOLVER_FISTA, alpha, 3000, TRUE);
  SsSolveParams params = test_solve_params (SS_SOLVER_FISTA, alpha, 3000);
  params.nonneg = TRUE;
  for (int variant = 0; variant < 2; variant++)
    {
      params.backtracking = variant == 0;
      params.continuation = variant == 1;
      SsSolveResult r = test_cpu_solve (&p, &params);
      g_assert_cmpfloat (fabs (r.objective - plain.objective) / plain.objective, <, 1e-3);
      ss_solve_result_clear (&r);
    }
  ss_solve_result_clear (&plain);
  test_problem_clear (&p);
}

/* A LASSO's solution is zero exactly when α ≥ ‖Aᵀy‖∞ (its optimality
 * conditions at x = 0): the backend says so of the flat result just above
 * that level, and says nothing just below it, where the solution is not
 * flat. */
static void
test_flat_result_warned (void)
{
  g_autoptr (GRand) rng = test_rng ();
  TestProblem p;
  test_problem_init (&p, rng, 31, 26, "gaussian:1.5", 0.8, 0.01);
  g_autofree float *g = g_new (float, p.n);
  g_assert_true (ss_operator_apply_adjoint (p.op, p.y, g, NULL));
  double alpha_max = 0;
  for (gsize i = 0; i < p.n; i++)
    alpha_max = MAX (alpha_max, fabs (g[i]));
  g_autoptr (GError) error = NULL;
  g_autoptr (SsBackend) backend = ss_backend_new (SS_BACKEND_CPU, &error);
  g_assert_no_error (error);
  SsProblem problem = { .op = p.op, .y = p.y };
  const double factors[] = { 1.05, 0.7 };
  for (int k = 0; k < 2; k++)
    {
      SsSolveParams params = test_solve_params (SS_SOLVER_FISTA, factors[k] * alpha_max, 400);
      params.nonneg = FALSE;   /* the closed form above is the signed one */
      SsSolveResult r = { 0 };
      g_assert_true (ss_backend_solve (backend, &problem, &params, NULL, NULL, NULL, &r, &error));
      g_assert_no_error (error);
      gboolean warned = r.warning != NULL && strstr (r.warning, "flat") != NULL;
      g_test_message ("α = %.2f α_max: warning %s", factors[k], r.warning ? r.warning : "none");
      g_assert_cmpint (warned, ==, factors[k] > 1);
      ss_solve_result_clear (&r);
    }
  test_problem_clear (&p);
}

/* Flat within a ten-thousandth of the data's scale is flat: a result
 * spanning 1e-6 of it is warned of, one spanning 1e-2 is not, whatever the
 * scale. */
static void
test_near_flat_result_warned (void)
{
  const gsize n = 5000;
  double scale = pow (10.0, g_test_rand_double_range (-3, 4));
  g_autofree float *y = g_new (float, n);
  for (gsize i = 0; i < n; i++)
    y[i] = (float) (scale * g_test_rand_double ());
  y[g_test_rand_int_range (0, (gint32) n)] = (float) scale;
  const double spans[] = { 1e-6, 1e-2 };
  for (int k = 0; k < 2; k++)
    {
      SsSolveResult r = { 0 };
      r.x = g_new (float, n);
      double level = g_test_rand_double_range (-1, 1) * scale;
      for (gsize i = 0; i < n; i++)
        r.x[i] = (float) (level + spans[k] * scale * g_test_rand_double ());
      ss_solve_result_warn_if_flat (&r, y, n);
      g_test_message ("span %.0e of the scale %.3g: %s", spans[k], scale,
                      r.warning ? r.warning : "no warning");
      g_assert_cmpint (r.warning != NULL, ==, k == 0);
      ss_solve_result_clear (&r);
    }
}

int
main (int argc, char **argv)
{
  g_setenv ("SHARPSKY_FFTW", "estimate", FALSE);
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/solvers/lasso/cpadmm-fista-agree", test_lasso_signed);
  g_test_add_func ("/solvers/lasso/cpadmm-fista-agree-nonneg", test_lasso_nonneg);
  g_test_add_func ("/solvers/direct-fft/normal-equations", test_direct_fft_normal_equations);
  g_test_add_func ("/solvers/direct-fft/refuses-mask", test_direct_fft_refuses_mask);
  g_test_add_func ("/solvers/reports-and-preview", test_reports_and_preview);
  g_test_add_func ("/solvers/cancellation", test_cancellation);
  g_test_add_func ("/solvers/bad-parameters", test_bad_parameters);
  g_test_add_func ("/solvers/fista-options", test_fista_options);
  g_test_add_func ("/solvers/flat-result-warned", test_flat_result_warned);
  g_test_add_func ("/solvers/near-flat-result-warned", test_near_flat_result_warned);
  return g_test_run ();
}
