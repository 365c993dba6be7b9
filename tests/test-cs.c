/* test-cs.c: compressed sensing (engine/cs): selection against a sort, the
 * ensembles' adjoints and the DCT against its definition, recovery rates of
 * the greedy solvers where seed 003 reports success, ALM against the basis
 * pursuit solution and against FISTA, batches against one-by-one, the
 * greedy solvers and ALM on images through the solver table, and the
 * phase-transition sweep the CLI and the app share (ss-cs-phase.h). */
#include "test-common.h"
#include "ss-cs.h"
#include "ss-cs-phase.h"

#include <stdlib.h>
#include <string.h>

static int
compare_descending (const void *a, const void *b)
{
  float x = *(const float *) a, y = *(const float *) b;
  return (x < y) - (x > y);
}

/* ---- selection ----------------------------------------------------------- */

static void
check_top_k_against_sort (GRand *rng, gsize n, gsize k, gboolean nonneg, gboolean ties)
{
  g_autofree float *v = g_new (float, n), *scratch = g_new (float, n);
  g_autofree float *keys = g_new (float, n);
  g_autofree guint32 *indices = g_new (guint32, k);
  for (gsize i = 0; i < n; i++)
    {
      /* With TIES the values come from a handful of levels (and zeros, as a
       * thresholded vector has), so the k-th key is shared. */
      double u = g_rand_double_range (rng, -1, 1);
      v[i] = ties ? (float) (round (u * 4) / 4) : (float) u;
      keys[i] = nonneg ? fmaxf (v[i], 0) : fabsf (v[i]);
    }
  float kth = ss_cs_top_k (v, n, k, nonneg, scratch, indices);
  qsort (keys, n, sizeof (float), compare_descending);
  g_assert_cmpfloat (kth, ==, keys[k - 1]);
  /* The indices: ascending, k of them, every key above the k-th kept, and the
   * kept keys are the k largest (the same multiset as the sort's first k). */
  g_autofree float *kept = g_new (float, k);
  for (gsize j = 0; j < k; j++)
    {
      if (j > 0)
        g_assert_cmpuint (indices[j], >, indices[j - 1]);
      kept[j] = nonneg ? fmaxf (v[indices[j]], 0) : fabsf (v[indices[j]]);
      g_assert_cmpfloat (kept[j], >=, kth);
    }
  qsort (kept, k, sizeof (float), compare_descending);
  for (gsize j = 0; j < k; j++)
    g_assert_cmpfloat (kept[j], ==, keys[j]);
  gsize above = 0;
  for (gsize i = 0; i < n; i++)
    above += (nonneg ? fmaxf (v[i], 0) : fabsf (v[i])) > kth;
  g_assert_cmpuint (above, <=, k);
}

static void
test_top_k (void)
{
  g_autoptr (GRand) rng = test_rng ();
  const gsize sizes[] = { 1, 2, 7, 100, 1000, 65536 };
  for (gsize s = 0; s < G_N_ELEMENTS (sizes); s++)
    for (int trial = 0; trial < 20; trial++)
      {
        gsize n = sizes[s];
        gsize k = 1 + (gsize) g_rand_int_range (rng, 0, (gint32) n);
        for (int mode = 0; mode < 4; mode++)
          check_top_k_against_sort (rng, n, k, mode & 1, mode & 2);
      }
}

/* Sorted and reversed inputs and all-equal keys must stay linear (and
 * right): the cases a naive pivot makes quadratic. */
static void
test_select_adversarial (void)
{
  const gsize n = 200000;
  g_autofree float *a = g_new (float, n);
  for (int pattern = 0; pattern < 3; pattern++)
    {
      for (gsize i = 0; i < n; i++)
        a[i] = pattern == 0 ? (float) i : pattern == 1 ? (float) (n - i) : 1.0f;
      float kth = ss_cs_select_kth_largest (a, n, 1000);
      g_assert_cmpfloat (kth, ==, pattern == 2 ? 1.0f : (float) (n - 1000 + (pattern == 1)));
    }
}

/* ---- operators ----------------------------------------------------------- */

static double
adjoint_mismatch (SsLinop *A, GRand *rng)
{
  g_autofree float *x = g_new (float, A->cols), *y = g_new (float, A->rows);
  g_autofree float *ax = g_new (float, A->rows), *aty = g_new (float, A->cols);
  for (gsize i = 0; i < A->cols; i++)
    x[i] = (float) g_rand_double_range (rng, -1, 1);
  for (gsize i = 0; i < A->rows; i++)
    y[i] = (float) g_rand_double_range (rng, -1, 1);
  A->apply (A, x, ax, 1);
  A->adjoint (A, y, aty, 1);
  double lhs = test_dot (ax, y, A->rows), rhs = test_dot (x, aty, A->cols);
  double scale = sqrt (test_dot (ax, ax, A->rows) * test_dot (y, y, A->rows));
  return fabs (lhs - rhs) / scale;
}

static void
test_adjoints (void)
{
  g_autoptr (GRand) rng = test_rng ();
  guint64 seed = g_rand_int (rng);
  /* m = n includes the DCT's row 0, whose scale differs from the others. */
  const gsize sizes[][2] = { { 37, 100 }, { 256, 1024 }, { 1000, 4096 }, { 64, 64 } };
  for (int e = 0; e < SS_N_ENSEMBLES; e++)
    for (gsize s = 0; s < G_N_ELEMENTS (sizes); s++)
      {
        g_autoptr (GError) error = NULL;
        g_autoptr (SsLinop) A = ss_linop_new ((SsEnsemble) e, sizes[s][0], sizes[s][1], 7, seed, 0,
                                              &error);
        g_assert_no_error (error);
        double mismatch = adjoint_mismatch (A, rng);
        g_test_message ("%s %zu x %zu: |<Ax,y> - <x,Aᵀy>| / (|Ax||y|) = %.2e",
                        ss_ensemble_to_string ((SsEnsemble) e), sizes[s][0], sizes[s][1],
                        mismatch);
        /* float32 sums of n terms: a few 1e-7 times √n at most. */
        g_assert_cmpfloat (mismatch, <, 1e-5);
      }
}

/* The DCT rows are the orthonormal DCT-II of the definition, O(n²). */
static void
test_dct_definition (void)
{
  g_autoptr (GRand) rng = test_rng ();
  const gsize n = 96, m = 40;
  g_autoptr (SsLinop) A = ss_linop_new (SS_ENSEMBLE_DCT, m, n, 0, g_rand_int (rng), 0, NULL);
  g_autofree float *x = g_new (float, n), *ax = g_new (float, m);
  for (gsize i = 0; i < n; i++)
    x[i] = (float) g_rand_double_range (rng, -1, 1);
  A->apply (A, x, ax, 1);
  double worst = 0;
  for (gsize i = 0; i < m; i++)
    {
      guint32 k = A->dct_rows[i];
      double sum = 0;
      for (gsize j = 0; j < n; j++)
        sum += x[j] * cos (G_PI * k * (2.0 * j + 1) / (2.0 * n));
      sum *= sqrt ((k == 0 ? 1.0 : 2.0) / n);
      worst = MAX (worst, fabs (sum - ax[i]));
    }
  g_test_message ("DCT against its definition: largest difference %.2e", worst);
  g_assert_cmpfloat (worst, <, 1e-5);
  /* Orthonormal rows: A Aᵀ = I, so the power iteration is never needed. */
  g_assert_cmpfloat (A->lipschitz, ==, 1.0);
}

static void
test_dense_too_large (void)
{
  g_autoptr (GError) error = NULL;
  SsLinop *A = ss_linop_new (SS_ENSEMBLE_GAUSSIAN, 1000, 1000000, 0, 1, 1 << 20, &error);
  g_assert_null (A);
  g_assert_error (error, SS_ERROR, SS_ERROR_TOO_LARGE);
  g_test_message ("%s", error->message);
  g_assert_nonnull (strstr (error->message, "largest n"));
  /* The n it suggests fits at the same m/n, and one a tenth larger does not
   * (at a fixed m the hint once fell below m, a problem no one can pose). */
  const char *hint = strstr (error->message, "fits is ");
  g_assert_nonnull (hint);
  gsize n = g_ascii_strtoull (hint + strlen ("fits is "), NULL, 10);
  g_assert_cmpuint (n, >, 1000);
  g_assert_true (ss_linop_dense_fits (n / 1000, n, 1 << 20, NULL));
  g_assert_false (ss_linop_dense_fits ((n + n / 10) / 1000, n + n / 10, 1 << 20, NULL));
}

/* ---- recovery ------------------------------------------------------------ */

typedef struct {
  SsEnsemble ensemble;
  gsize n;
  double delta, rho;
  int matrices, batch;    /* trials = matrices × batch */
} RecoveryCase;

/* Fraction of random problems recovered to relative error 1e-4. */
static double
recovery_rate (SsCsAlgorithm algorithm, const RecoveryCase *c, GRand *rng)
{
  gsize m = (gsize) round (c->delta * c->n), k = (gsize) round (c->rho * m);
  int recovered = 0, trials = 0;
  for (int t = 0; t < c->matrices; t++)
    {
      g_autoptr (GError) error = NULL;
      guint64 seed = g_rand_int (rng);
      g_autoptr (SsLinop) A = ss_linop_new (c->ensemble, m, c->n, 8, seed, 0, &error);
      g_assert_no_error (error);
      g_autofree float *truth = NULL, *y = NULL;
      ss_cs_random_problems (A, k, SS_CS_VALUES_GAUSSIAN, 0, seed + 1, c->batch, &truth, &y);
      g_autofree float *x = g_new0 (float, c->n * c->batch);
      SsCsParams params;
      ss_cs_params_init (&params);
      params.algorithm = algorithm;
      params.k = k;
      params.iterations = algorithm == SS_CS_NIHT ? 1000 : 100;
      params.tolerance = 1e-6;
      SsCsStats stats;
      g_assert_true (ss_cs_solve (&params, A, y, c->batch, x, &stats, &error));
      for (int b = 0; b < c->batch; b++)
        {
          double err = ss_cs_relative_error (x + b * c->n, truth + b * c->n, c->n);
          recovered += err <= 1e-4;
          trials++;
        }
    }
  return (double) recovered / trials;
}

static void
test_greedy_recovery (gconstpointer data)
{
  SsCsAlgorithm algorithm = GPOINTER_TO_INT (data);
  g_autoptr (GRand) rng = test_rng ();
  /* Seed 003's Gaussian ensemble at δ = 0.5, ρ = 0.2 (below the transitions
   * of all three, Blanchard–Tanner), and the DCT at the same point. 160
   * trials: 95 % is then a statement, not a coin. */
  const RecoveryCase cases[] = {
    { SS_ENSEMBLE_GAUSSIAN, 512, 0.5, 0.2, 10, 16 },
    { SS_ENSEMBLE_DCT, 1024, 0.5, 0.2, 10, 16 },
  };
  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      double rate = recovery_rate (algorithm, &cases[i], rng);
      g_test_message ("%s, %s n %zu δ %.2f ρ %.2f: %.1f %% recovered",
                      ss_cs_algorithm_to_string (algorithm),
                      ss_ensemble_to_string (cases[i].ensemble), cases[i].n, cases[i].delta,
                      cases[i].rho, 100 * rate);
      g_assert_cmpfloat (rate, >=, 0.95);
    }
}

/* Far past every transition (ρ = 0.9) nothing may be "recovered": the rate
 * test above can fail. */
static void
test_greedy_fails_past_transition (void)
{
  g_autoptr (GRand) rng = test_rng ();
  RecoveryCase c = { SS_ENSEMBLE_GAUSSIAN, 256, 0.5, 0.9, 2, 8 };
  g_assert_cmpfloat (recovery_rate (SS_CS_NIHT, &c, rng), <, 0.2);
}

/* ---- ALM ----------------------------------------------------------------- */

static void
solve_block (SsCsAlgorithm algorithm, SsLinop *A, const float *y, int batch, gsize k,
             double alpha, int iterations, int inner, float *x)
{
  SsCsParams params;
  ss_cs_params_init (&params);
  params.algorithm = algorithm;
  params.k = k;
  params.alpha = alpha;
  params.iterations = iterations;
  params.inner_iterations = inner;
  g_autoptr (GError) error = NULL;
  g_assert_true (ss_cs_solve (&params, A, y, batch, x, NULL, &error));
  g_assert_no_error (error);
}

/* Basis pursuit: where l1 recovers (δ = 0.5, ρ = 0.1, far below Donoho's
 * transition near 0.38), the BP solution is the sparse truth itself, so ALM
 * must find it; and it meets the constraint Ax = y. */
static void
test_alm_basis_pursuit (void)
{
  g_autoptr (GRand) rng = test_rng ();
  const gsize n = 256, m = 128, k = 13;
  const int batch = 8;
  g_autoptr (SsLinop) A = ss_linop_new (SS_ENSEMBLE_GAUSSIAN, m, n, 0, g_rand_int (rng), 0, NULL);
  g_autofree float *truth = NULL, *y = NULL;
  ss_cs_random_problems (A, k, SS_CS_VALUES_GAUSSIAN, 0, g_rand_int (rng), batch, &truth, &y);
  g_autofree float *x = g_new0 (float, n * batch), *ax = g_new (float, m * batch);
  solve_block (SS_CS_ALM, A, y, batch, 0, 0.0, 30, 200, x);
  A->apply (A, x, ax, batch);
  for (int b = 0; b < batch; b++)
    {
      double err = ss_cs_relative_error (x + b * n, truth + b * n, n);
      double feasibility = ss_cs_relative_error (ax + b * m, y + b * m, m);
      g_test_message ("problem %d: |x - x_bp| / |x_bp| = %.2e, |Ax - y| / |y| = %.2e", b, err,
                      feasibility);
      g_assert_cmpfloat (err, <, 1e-3);
      g_assert_cmpfloat (feasibility, <, 1e-4);
    }
}

static double
lasso_objective (SsLinop *A, const float *x, const float *y, double alpha)
{
  g_autofree float *ax = g_new (float, A->rows);
  A->apply (A, x, ax, 1);
  double r2 = 0, l1 = 0;
  for (gsize i = 0; i < A->rows; i++)
    r2 += ((double) ax[i] - y[i]) * ((double) ax[i] - y[i]);
  for (gsize i = 0; i < A->cols; i++)
    l1 += fabs (x[i]);
  return 0.5 * r2 + alpha * l1;
}

/* The noisy form is the LASSO: ALM and FISTA (a second algorithm) reach the
 * same minimum. */
static void
test_alm_noisy_matches_fista (void)
{
  g_autoptr (GRand) rng = test_rng ();
  const gsize n = 256, m = 128, k = 20;
  g_autoptr (SsLinop) A = ss_linop_new (SS_ENSEMBLE_GAUSSIAN, m, n, 0, g_rand_int (rng), 0, NULL);
  g_autofree float *truth = NULL, *y = NULL;
  ss_cs_random_problems (A, k, SS_CS_VALUES_GAUSSIAN, 0.01, g_rand_int (rng), 1, &truth, &y);
  g_autofree float *alm = g_new0 (float, n), *fista = g_new0 (float, n);
  const double alpha = 0.02;
  solve_block (SS_CS_ALM, A, y, 1, 0, alpha, 60, 100, alm);
  solve_block (SS_CS_FISTA, A, y, 1, 0, alpha, 5000, 1, fista);
  double f_alm = lasso_objective (A, alm, y, alpha), f_fista = lasso_objective (A, fista, y, alpha);
  double dx = ss_cs_relative_error (alm, fista, n);
  g_test_message ("objective: alm %.9g fista %.9g; |x_alm - x_fista| / |x_fista| = %.2e", f_alm,
                  f_fista, dx);
  g_assert_cmpfloat (fabs (f_alm - f_fista) / f_fista, <, 1e-4);
  g_assert_cmpfloat (dx, <, 1e-2);
}

/* ---- batches ------------------------------------------------------------- */

/* A block of problems sharing A gives what the problems give one by one
 * (the block uses GEMM where one problem uses GEMV, so to rounding). */
static void
test_batch_matches_single (gconstpointer data)
{
  SsCsAlgorithm algorithm = GPOINTER_TO_INT (data);
  g_autoptr (GRand) rng = test_rng ();
  const gsize n = 512, m = 256, k = 25;
  const int batch = 6;
  g_autoptr (SsLinop) A = ss_linop_new (SS_ENSEMBLE_GAUSSIAN, m, n, 0, g_rand_int (rng), 0, NULL);
  g_autofree float *truth = NULL, *y = NULL;
  ss_cs_random_problems (A, k, SS_CS_VALUES_GAUSSIAN, 0, g_rand_int (rng), batch, &truth, &y);
  g_autofree float *block = g_new0 (float, n * batch), *single = g_new0 (float, n * batch);
  /* FISTA to its minimiser (1500 steps at this α): a run stopped early
   * amplifies the GEMM-vs-GEMV rounding along its path. */
  double alpha = algorithm == SS_CS_FISTA ? 1e-2 : 0.0;
  int iterations = algorithm == SS_CS_FISTA ? 1500 : 300;
  solve_block (algorithm, A, y, batch, k, alpha, iterations, 50, block);
  for (int b = 0; b < batch; b++)
    solve_block (algorithm, A, y + b * m, 1, k, alpha, iterations, 50, single + b * n);
  for (int b = 0; b < batch; b++)
    {
      double d = ss_cs_relative_error (block + b * n, single + b * n, n);
      g_test_message ("%s problem %d: |block - single| / |single| = %.2e",
                      ss_cs_algorithm_to_string (algorithm), b, d);
      g_assert_cmpfloat (d, <, 1e-4);
    }
}

/* ---- images through the solver table ------------------------------------- */

static void
collect_residual (const SsReport *report, gpointer user_data)
{
  double value = report->residual;
  g_array_append_val ((GArray *) user_data, value);
}

/* A star field (a few hundredths of the pixels lit) seen through a blur and
 * circulant sensing at half the pixels: NIHT, HTP, CoSaMP and ALM recover it
 * through ss_cpu_solve, like any other solver of the table. IHT's fixed step
 * 1/||A||² can settle on a wrong support, so it is held to what it does
 * guarantee: k pixels at most, and a residual that never rises. */
static void
test_image_solvers (gconstpointer data)
{
  SsSolverKind kind = GPOINTER_TO_INT (data);
  g_autoptr (GRand) rng = test_rng ();
  TestProblem p;
  test_problem_init (&p, rng, 32, 32, "gaussian:1.2", 0.5, 0);
  /* Fewer stars than test_problem_init's tenth of the pixels. */
  g_free (p.truth);
  g_free (p.y);
  p.truth = test_sparse_image (rng, 32, 32, 0.03);
  p.y = ss_simulate (p.op, &p.acq, p.truth, NULL);
  gsize stars = 0;
  for (gsize i = 0; i < p.n; i++)
    stars += p.truth[i] != 0;
  SsSolveParams params;
  ss_solve_params_init (&params);
  ss_solve_params_set_defaults (&params, kind);
  params.sparsity = (double) stars;
  params.alpha = 0;   /* ALM: basis pursuit */
  params.iterations = kind == SS_SOLVER_ALM ? 30 : kind == SS_SOLVER_IHT ? 3000 : 500;
  params.inner_iterations = kind == SS_SOLVER_ALM ? 200 : 30;
  params.report_every = kind == SS_SOLVER_IHT ? 10 : params.iterations / 5;
  g_autoptr (GArray) residuals = g_array_new (FALSE, FALSE, sizeof (double));
  SsProblem problem = { .op = p.op, .y = p.y, .truth = p.truth };
  SsSolveResult result = { 0 };
  g_autoptr (GError) error = NULL;
  g_assert_true (ss_cpu_solve (&problem, &params, collect_residual, residuals, NULL, &result,
                               &error));
  double err = test_rel_diff (result.x, p.truth, p.n);
  g_test_message ("%s: %zu stars, %d iterations, relative error %.2e",
                  ss_solver_kind_to_string (kind), stars, result.iterations, err);
  if (kind == SS_SOLVER_IHT)
    {
      gsize lit = 0;
      for (gsize i = 0; i < p.n; i++)
        lit += result.x[i] != 0;
      g_assert_cmpuint (lit, <=, stars);
      for (guint i = 1; i < residuals->len; i++)
        g_assert_cmpfloat (g_array_index (residuals, double, i), <=,
                           g_array_index (residuals, double, i - 1) * (1 + 1e-5) + 1e-12);
    }
  else
    g_assert_cmpfloat (err, <, 1e-3);
  g_assert_cmpstr (result.backend, ==, "cpu");
  ss_solve_result_clear (&result);
  test_problem_clear (&p);
}

/* ---- the phase-transition sweep ---------------------------------------------- */

typedef struct {
  GArray *cells;            /* SsCsPhaseCell */
  int cancel_after;         /* cancel when this many cells are done (0: never) */
  GCancellable *cancellable;
} SweepLog;

static gboolean
log_cell (const SsCsPhaseCell *cell, gpointer user_data, GError **error)
{
  SweepLog *log = user_data;
  g_array_append_vals (log->cells, cell, 1);
  if (log->cancel_after > 0 && (int) log->cells->len == log->cancel_after)
    g_cancellable_cancel (log->cancellable);
  return TRUE;
}

/* The grids give the CLI's default lists; cells come row by row with each
 * cell's own matrix seed, the same as a single solve of that cell; a
 * cancelled sweep stops at the next cell with G_IO_ERROR_CANCELLED. */
static void
test_phase_sweep (void)
{
  double deltas[9], rhos[10];
  ss_cs_phase_deltas (9, deltas);
  ss_cs_phase_rhos (10, rhos);
  for (int i = 0; i < 9; i++)
    g_assert_cmpfloat (deltas[i], ==, round ((0.1 + i * 0.1) * 1000) / 1000);
  for (int j = 0; j < 10; j++)
    g_assert_cmpfloat (rhos[j], ==, round ((0.05 + j * 0.05) * 1000) / 1000);

  guint32 seed = g_test_rand_int ();
  g_test_message ("seed %u", seed);
  SsCsPhaseParams params;
  ss_cs_phase_params_init (&params);
  params.problem.n = 64;
  params.problem.seed = seed;
  params.backend = SS_BACKEND_CPU;
  params.trials = 3;
  double grid[3];
  ss_cs_phase_deltas (3, grid);
  params.deltas = grid;
  params.n_deltas = 3;
  params.rhos = grid;   /* 0.25, 0.5, 0.75 as ρ as well */
  params.n_rhos = 3;
  SweepLog log = { g_array_new (FALSE, FALSE, sizeof (SsCsPhaseCell)), 0, NULL };
  g_autoptr (GError) error = NULL;
  g_assert_true (ss_cs_phase_transition (&params, log_cell, &log, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (log.cells->len, ==, 9);
  for (guint i = 0; i < 9; i++)
    {
      const SsCsPhaseCell *c = &g_array_index (log.cells, SsCsPhaseCell, i);
      g_assert_cmpint (c->index, ==, (int) i);
      g_assert_cmpint (c->row * 3 + c->column, ==, c->index);
      g_assert_cmpuint (c->m, ==, (gsize) MAX (1, round (grid[c->column] * 64)));
      g_assert_cmpfloat (c->fraction, ==, c->result.recovered / 3.0);
      if (i == 4)
        {
          SsCsProblemSpec spec = params.problem;
          spec.m = c->m;
          spec.k = c->k;
          spec.batch = 3;
          spec.seed = seed + 4 * 7919;
          SsCsTrialsResult alone;
          g_assert_true (ss_cs_solve_random (&spec, &params.solve, SS_BACKEND_CPU, &alone,
                                             &error));
          g_assert_cmpint (alone.recovered, ==, c->result.recovered);
          g_assert_cmpfloat (alone.median_error, ==, c->result.median_error);
        }
    }
  /* The CSV: a header and a line a cell. */
  g_autofree char *csv = ss_cs_phase_csv ((const SsCsPhaseCell *) log.cells->data, 9);
  g_auto (GStrv) lines = g_strsplit (g_strchomp (csv), "\n", -1);
  g_assert_cmpuint (g_strv_length (lines), ==, 10);
  g_assert_cmpstr (lines[0], ==, "delta,rho,m,k,trials,recovered,fraction,median_error,seconds");
  g_assert_true (g_str_has_prefix (lines[1], "0.25,0.25,16,4,3,"));

  /* Stopped after 4 cells: exactly 4 given, and the error says why. */
  g_array_set_size (log.cells, 0);
  log.cancellable = g_cancellable_new ();
  log.cancel_after = 4;
  g_assert_false (ss_cs_phase_transition (&params, log_cell, &log, log.cancellable, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_assert_cmpuint (log.cells->len, ==, 4);
  g_object_unref (log.cancellable);
  g_array_unref (log.cells);
}

/* The heat map: a cell's interior in its colour, δ left to right and ρ
 * bottom to top, the grid grey, a pending (NAN) cell light grey. */
static void
test_phase_render (void)
{
  double fraction[6] = { 0, 0.5, 1, NAN, 0.25, 0.75 };   /* 3 columns, 2 rows */
  int width, height;
  g_autofree guint8 *rgb = ss_cs_phase_render (fraction, 3, 2, 10, &width, &height);
  g_assert_cmpint (width, ==, 31);
  g_assert_cmpint (height, ==, 21);
  for (int row = 0; row < 2; row++)
    for (int col = 0; col < 3; col++)
      {
        /* Row 0 (the lowest ρ) is drawn at the bottom. */
        int x = col * 10 + 5, y = (1 - row) * 10 + 5;
        const guint8 *px = rgb + ((gsize) y * width + x) * 3;
        guint8 want[3] = { 224, 224, 224 };
        if (!isnan (fraction[row * 3 + col]))
          ss_cs_phase_colour (fraction[row * 3 + col], want);
        g_assert_cmpmem (px, 3, want, 3);
      }
  g_assert_cmpint (rgb[0], ==, 128);   /* the grid */
  guint8 low[3], high[3];
  ss_cs_phase_colour (0, low);
  ss_cs_phase_colour (1, high);
  g_assert_cmpint (low[2], >, low[1]);    /* blue-ish at 0 */
  g_assert_cmpint (high[0], >, 200);      /* yellow at 1 */
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/cs/select/top-k", test_top_k);
  g_test_add_func ("/cs/select/adversarial", test_select_adversarial);
  g_test_add_func ("/cs/linop/adjoints", test_adjoints);
  g_test_add_func ("/cs/linop/dct-definition", test_dct_definition);
  g_test_add_func ("/cs/linop/dense-too-large", test_dense_too_large);
  g_test_add_data_func ("/cs/recovery/niht", GINT_TO_POINTER (SS_CS_NIHT), test_greedy_recovery);
  g_test_add_data_func ("/cs/recovery/htp", GINT_TO_POINTER (SS_CS_HTP), test_greedy_recovery);
  g_test_add_data_func ("/cs/recovery/cosamp", GINT_TO_POINTER (SS_CS_COSAMP),
                        test_greedy_recovery);
  g_test_add_func ("/cs/recovery/fails-past-transition", test_greedy_fails_past_transition);
  g_test_add_func ("/cs/alm/basis-pursuit", test_alm_basis_pursuit);
  g_test_add_func ("/cs/alm/noisy-matches-fista", test_alm_noisy_matches_fista);
  g_test_add_data_func ("/cs/batch/niht", GINT_TO_POINTER (SS_CS_NIHT), test_batch_matches_single);
  g_test_add_data_func ("/cs/batch/fista", GINT_TO_POINTER (SS_CS_FISTA),
                        test_batch_matches_single);
  g_test_add_data_func ("/cs/image/iht", GINT_TO_POINTER (SS_SOLVER_IHT), test_image_solvers);
  g_test_add_data_func ("/cs/image/niht", GINT_TO_POINTER (SS_SOLVER_NIHT), test_image_solvers);
  g_test_add_data_func ("/cs/image/htp", GINT_TO_POINTER (SS_SOLVER_HTP), test_image_solvers);
  g_test_add_data_func ("/cs/image/cosamp", GINT_TO_POINTER (SS_SOLVER_COSAMP),
                        test_image_solvers);
  g_test_add_data_func ("/cs/image/alm", GINT_TO_POINTER (SS_SOLVER_ALM), test_image_solvers);
  g_test_add_func ("/cs/phase/sweep", test_phase_sweep);
  g_test_add_func ("/cs/phase/render", test_phase_render);
  return g_test_run ();
}
