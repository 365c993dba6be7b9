/* test-pixel-l1.c: the pixel-ℓ1 solvers' data floor and hold-out rule
 * (ss-pixel-l1.h), on fresh random scenes (the seed is printed;
 * SHARPSKY_TEST_SEED=N replays a run). */
#include "test-common.h"
#include "ss-pixel-l1.h"
#include "ss-solver-choice.h"
#include "core/ss-backend-private.h"
#include "ss-boundary.h"
#include "ss-rl.h"
#include "ss-rl-holdout.h"

#include <math.h>
#include <string.h>

typedef struct {
  int width, height;
  gsize n;
  SsOperator *op;
  float *truth, *y;
} Scene;

static void
scene_clear (Scene *s)
{
  g_clear_pointer (&s->op, ss_operator_free);
  g_free (s->truth);
  g_free (s->y);
}

/* TRUTH blurred by a Gaussian of FWHM 3 with white noise of SIGMA, every
 * pixel observed. */
static void
scene_blur (Scene *s, GRand *rng, float *truth, int width, int height, double sigma)
{
  s->width = width;
  s->height = height;
  s->n = (gsize) width * height;
  s->truth = truth;
  SsPsfSpec spec = { 0 };
  g_assert_true (ss_psf_spec_parse ("gaussian:3", &spec, NULL));
  g_autoptr (GError) error = NULL;
  s->op = ss_operator_new_blur (&spec, NULL, width, height, &error);
  g_assert_no_error (error);
  ss_psf_spec_clear (&spec);
  s->y = g_new (float, s->n);
  g_assert_true (ss_operator_apply (s->op, truth, s->y, &error));
  for (gsize i = 0; i < s->n; i++)
    s->y[i] += (float) (sigma * ss_rand_normal (rng));
}

static SsSolveParams
lasso_params (SsSolverKind kind, int iterations)
{
  SsSolveParams params;
  ss_solve_params_init (&params);
  ss_solve_params_set_defaults (&params, kind);
  params.alpha = 1e-4;
  params.iterations = iterations;
  params.report_every = 5;
  return params;
}

static SsSolveResult
backend_solve (const SsProblem *problem, const SsSolveParams *params)
{
  g_autoptr (GError) error = NULL;
  SsBackend *backend = ss_backend_new (SS_BACKEND_CPU, &error);
  g_assert_no_error (error);
  SsSolveResult result = { 0 };
  g_assert_true (ss_backend_solve (backend, problem, params, NULL, NULL, NULL, &result, &error));
  g_assert_no_error (error);
  ss_backend_free (backend);
  return result;
}

/* RESULT, `auto`'s under PARAMS, is candidate KIND's own solve of PROBLEM
 * on all the pixels, bit for bit, after the choice's CHOICE_ITERATIONS. */
static void
assert_choice_is_candidate (const SsSolveResult *result, int choice_iterations,
                            const SsProblem *problem, const SsSolveParams *params,
                            SsSolverKind kind)
{
  gsize n = (gsize) problem->op->width * problem->op->height;
  SsSolveParams p = ss_solver_choice_candidate (params, kind);
  SsSolveResult direct = backend_solve (problem, &p);
  g_assert_cmpint (result->iterations, ==, choice_iterations + direct.iterations);
  g_assert_cmpmem (result->x, n * sizeof (float), direct.x, n * sizeof (float));
  ss_solve_result_clear (&direct);
}

static SsSolveResult
plain_solve (const SsProblem *problem, const SsSolveParams *params)
{
  g_autoptr (GError) error = NULL;
  SsSolveResult result = { 0 };
  g_assert_true (ss_cpu_solve (problem, params, NULL, NULL, NULL, &result, &error));
  g_assert_no_error (error);
  return result;
}

/* ---- the held-out metric -------------------------------------------------------- */

static void
keep_last (const SsReport *report, gpointer user_data)
{
  *(SsReport *) user_data = *report;
}

/* A report's held_out is Σ (C x − y)² over the counted pixels, against C x
 * computed anew from the returned estimate; the counted pixels and their
 * data are random, and the solver fits other data. ALM runs on engine/cs,
 * whose operator is zero off the mask, and RL's residual was P C x: their
 * reports need C x everywhere. */
static void
test_held_out_metric (void)
{
  g_autoptr (GRand) rng = test_rng ();
  int w = 40 + g_rand_int_range (rng, 0, 9), h = 36 + g_rand_int_range (rng, 0, 9);
  Scene s = { 0 };
  scene_blur (&s, rng, test_extended_scene (rng, w, h), w, h, 0.01);
  g_autofree guint8 *counted = g_new (guint8, s.n);
  g_autofree float *other = g_new (float, s.n);
  for (gsize i = 0; i < s.n; i++)
    {
      counted[i] = g_rand_boolean (rng);
      other[i] = (float) g_rand_double (rng);
    }
  SsHeldOut held = { other, counted };
  SsProblem problem = { .op = s.op, .y = s.y, .held_out = &held };
  const SsSolverKind kinds[] = { SS_SOLVER_CPADMM, SS_SOLVER_FISTA, SS_SOLVER_ALM, SS_SOLVER_RL };
  g_autofree guint8 *observed = g_new (guint8, s.n);
  gsize m = 0;
  for (gsize i = 0; i < s.n; i++)
    m += observed[i] = !counted[i] || g_rand_boolean (rng);
  SsOperator masked = *s.op;
  masked.mask = observed;
  masked.m = m;
  for (guint k = 0; k < 2 * G_N_ELEMENTS (kinds); k++)
    {
      /* Each solver with every pixel observed, then with some held-out
       * pixels off the mask, as the hold-out rule's validation has them. */
      problem.op = k % 2 ? &masked : s.op;
      SsSolveParams params = lasso_params (kinds[k / 2], 23);
      if (params.kind == SS_SOLVER_ALM)
        params.iterations = 3;
      params.rl_stop = SS_RL_STOP_NONE;   /* RL: 23 iterations, no rule of its own */
      SsReport last = { 0 };
      SsSolveResult result = { 0 };
      g_autoptr (GError) error = NULL;
      g_assert_true (ss_cpu_solve (&problem, &params, keep_last, &last, NULL, &result, &error));
      g_autofree float *cx = g_new (float, s.n);
      g_assert_true (ss_operator_apply (s.op, result.x, cx, &error));
      g_assert_no_error (error);
      double expected = 0;
      for (gsize i = 0; i < s.n; i++)
        if (counted[i])
          expected += ((double) cx[i] - other[i]) * ((double) cx[i] - other[i]);
      g_assert_true (last.final);
      g_assert_cmpfloat_with_epsilon (last.held_out, expected, 1e-5 * expected);
      ss_solve_result_clear (&result);
    }
  SsProblem without = { .op = s.op, .y = s.y };
  SsSolveParams params = lasso_params (SS_SOLVER_CPADMM, 5);
  SsReport last = { 0 };
  SsSolveResult result = { 0 };
  g_assert_true (ss_cpu_solve (&without, &params, keep_last, &last, NULL, &result, NULL));
  g_assert_true (isnan (last.held_out));
  ss_solve_result_clear (&result);
  scene_clear (&s);
}

/* ---- the hold-out rule, against a second computation ------------------------------ */

/* The pixels of S that KEPT keeps, as the mask of a copy of its operator,
 * with their data: what a validation fits. */
typedef struct {
  SsOperator op;
  guint8 *fit;
  float *y;
} Fitted;

static void
fitted_init (Fitted *f, const Scene *s, int (*kept) (gsize pixel))
{
  f->fit = g_new0 (guint8, s->n);
  f->y = g_new0 (float, s->n);
  f->op = *s->op;
  f->op.m = 0;
  for (gsize i = 0; i < s->n; i++)
    if (kept (i))
      {
        f->fit[i] = 1;
        f->y[i] = s->y[i];
        f->op.m++;
      }
  f->op.mask = f->fit;
}

static void
fitted_clear (Fitted *f)
{
  g_free (f->fit);
  g_free (f->y);
}

/* A validation's readings as the rule's definition gives them. */
typedef struct {
  int count;
  int iteration[512];
  double error[512];
  gsize counted;   /* held-out pixels counted */
} Readings;

/* The validation run rebuilt from the rule's definition: for k = EVERY,
 * 2·EVERY, ... a separate solve of k iterations on the fitted pixels, its
 * held-out error from C x of the estimate over the held-out pixels above
 * 1 σ, to CAP and, with PATIENCE, no further than the rule's patience
 * after the least. Fills READ; returns the iterations the run went to. */
static int
validate_by_separate_solves (const Scene *s, const SsSolveParams *params, int every, int cap,
                             gboolean patience, double noise, Readings *read)
{
  Fitted half;
  fitted_init (&half, s, ss_rl_holdout_kept);
  const guint8 *fit = half.fit;
  SsProblem problem = { .op = &half.op, .y = half.y };
  g_autofree float *cx = g_new (float, s->n);
  int best = 0;
  double best_error = INFINITY;
  read->count = 0;
  read->counted = 0;
  for (gsize i = 0; i < s->n; i++)
    read->counted += !fit[i] && s->y[i] > noise;
  for (int k = every;; k += every)
    {
      SsSolveParams run = *params;
      run.iterations = MIN (k, cap);
      run.holdout = FALSE;
      SsSolveResult result = plain_solve (&problem, &run);
      g_assert_true (ss_operator_apply (s->op, result.x, cx, NULL));
      double error = 0;
      for (gsize i = 0; i < s->n; i++)
        if (!fit[i] && s->y[i] > noise)
          error += ((double) cx[i] - s->y[i]) * ((double) cx[i] - s->y[i]);
      ss_solve_result_clear (&result);
      g_assert_cmpint (read->count, <, (int) G_N_ELEMENTS (read->iteration));
      read->iteration[read->count] = run.iterations;
      read->error[read->count++] = error;
      if (error < best_error)
        {
          best_error = error;
          best = run.iterations;
        }
      if (run.iterations >= cap
          || (patience && run.iterations >= best + MAX (best / 2, 2 * every)))
        {
          fitted_clear (&half);
          return run.iterations;
        }
    }
}

static double
least_error (const Readings *read)
{
  double least = INFINITY;
  for (int i = 0; i < read->count; i++)
    least = MIN (least, read->error[i]);
  return least;
}

/* The count of READ for KIND: the earliest reading within one standard
 * error, √(2/N) of the least over N counted pixels, where KIND's descriptor
 * asks for it, else the least. */
static int
picked_count (SsSolverKind kind, const Readings *read)
{
  double least = least_error (read);
  double tolerance = ss_solver_info (kind)->holdout_one_se
                       ? sqrt (2.0 / (double) read->counted) : 0.0;
  for (int i = 0; i < read->count; i++)
    if (read->error[i] <= least * (1.0 + tolerance))
      return read->iteration[i];
  g_assert_not_reached ();
}

/* The steps the rule reads a solver in (ss_pixel_l1_holdout_slicing), from
 * its definition: ALM's outer steps of 50 FISTA steps as steps of 10, HTP's
 * and CoSaMP's of 20 CG steps as steps of 2, every one, within the same
 * budget; the others' own iterations every SS_RL_HOLDOUT_EVERY. */
static int
read_steps (const SsSolveParams *params, SsSolveParams *read)
{
  *read = *params;
  int inner = params->kind == SS_SOLVER_ALM ? 10
              : params->kind == SS_SOLVER_HTP || params->kind == SS_SOLVER_COSAMP ? 2 : 0;
  if (inner == 0)
    return SS_RL_HOLDOUT_EVERY;
  read->inner_iterations = inner;
  read->iterations = params->iterations * params->inner_iterations / inner;
  return 1;
}

/* The finer readings taken when the count is the first reading: the
 * first two readings' span read at every step, ALM's outer steps of 10 as
 * steps of 2 (the same budget); none for HTP's steps of 2. */
static gboolean
finer_steps (const SsSolveParams *read, int every, SsSolveParams *fine, int *cap)
{
  *fine = *read;
  if (every > 1)
    {
      *cap = 2 * every;
      return TRUE;
    }
  if (read->kind != SS_SOLVER_ALM)
    return FALSE;
  fine->inner_iterations = 2;
  fine->iterations = read->iterations * read->inner_iterations / 2;
  *cap = 2 * read->inner_iterations / 2;
  return TRUE;
}

/* A field of STARS point sources, 0.5 to 2 each, on a dark sky. */
static float *
star_scene (GRand *rng, int width, int height, int stars)
{
  float *x = g_new0 (float, (gsize) width * height);
  for (int k = 0; k < stars; k++)
    x[(gsize) g_rand_int_range (rng, 0, height) * width + g_rand_int_range (rng, 0, width)]
      = (float) g_rand_double_range (rng, 0.5, 2.0);
  return x;
}

/* KIND's hold-out rule on a scene of extended light (or of STARS point
 * sources) against the rule rebuilt from separate solves. */
static void
check_holdout_scene (SsSolverKind kind, int iterations, double sigma, int stars)
{
  g_autoptr (GRand) rng = test_rng ();
  int w = 48 + g_rand_int_range (rng, 0, 9), h = 44 + g_rand_int_range (rng, 0, 9);
  Scene s = { 0 };
  /* SIGMA: noise enough that the held-out error turns well before the cap. */
  scene_blur (&s, rng, stars ? star_scene (rng, w, h, stars) : test_extended_scene (rng, w, h),
              w, h, sigma);
  /* The noise is given, so both sides use the same source level. */
  SsDataStats stats = { .noise = sigma, .median = NAN };
  SsProblem problem = { .op = s.op, .y = s.y, .stats = &stats };
  SsSolveParams params = lasso_params (kind, iterations);
  params.holdout = TRUE;
  SsSolveResult result = backend_solve (&problem, &params);

  SsSolveParams read;
  int every = read_steps (&params, &read);
  /* A greedy solver validates k, 3k, 10k, ... (a fraction below 0.9) and
   * keeps the best, stopping at the first k worse than the one before. */
  const gboolean greedy = kind == SS_SOLVER_NIHT || kind == SS_SOLVER_HTP;
  const double factors[] = { 1, 3, 10, 30, 90 };
  int validated = 0, cap = read.iterations / 2;
  double chosen_error = INFINITY, previous = INFINITY, sparsity = params.sparsity;
  Readings chosen_read = { 0 }, rung_read;
  for (guint r = 0; r < (greedy ? G_N_ELEMENTS (factors) : 1); r++)
    {
      SsSolveParams rung = read;
      rung.sparsity = MIN (params.sparsity * factors[r], 0.9);
      validated += validate_by_separate_solves (&s, &rung, every, cap, TRUE, sigma, &rung_read);
      double error = least_error (&rung_read);
      g_test_message ("%s: k %g, error %.6g", ss_solver_kind_to_string (kind), rung.sparsity,
                      error);
      if (r == 0 || error < chosen_error)
        {
          chosen_error = error;
          chosen_read = rung_read;
          sparsity = rung.sparsity;
        }
      if (error >= previous)
        break;
      previous = error;
    }
  /* Still improving at the cap: all the iterations, ALM's as asked (its
   * own long outer steps), HTP's in the steps it was read in. */
  int best = 0;
  for (int i = 0; i < chosen_read.count; i++)
    if (chosen_read.error[i] == chosen_error && best == 0)
      best = chosen_read.iteration[i];
  gboolean to_cap = best >= cap;
  SsSolveParams plain = to_cap && kind == SS_SOLVER_ALM ? params : read;
  int picked = to_cap ? 0 : picked_count (kind, &chosen_read), fine_cap;
  SsSolveParams fine;
  gboolean refined = !to_cap && picked == chosen_read.iteration[0]
                     && finer_steps (&read, every, &fine, &fine_cap);
  if (refined)
    {
      fine.sparsity = sparsity;
      Readings fine_read;
      validated += validate_by_separate_solves (&s, &fine, 1, fine_cap, FALSE, sigma, &fine_read);
      picked = picked_count (kind, &fine_read);
      plain = fine;
    }
  int full = to_cap ? plain.iterations : (int) ceil (SS_PIXEL_L1_HOLDOUT_SCALE * picked);
  g_test_message ("%s: validation %d (least at %d, count %d%s), full %d, k %g",
                  ss_solver_kind_to_string (kind), result.validation_iterations, best, picked,
                  refined ? ", read again finer" : "",
                  result.iterations - result.validation_iterations, result.sparsity);
  g_assert_cmpint (result.validation_iterations, ==, validated);
  g_assert_cmpfloat (result.sparsity, ==, greedy ? sparsity : 0.0);
  g_assert_cmpint (result.iterations - result.validation_iterations, ==, full);
  g_assert_cmpint (result.validation_inner_iterations, ==, every == 1 ? read.inner_iterations : 0);
  g_assert_cmpint (result.full_inner_iterations, ==, every == 1 ? plain.inner_iterations : 0);
  g_assert_cmpint (result.refined_inner_iterations, ==,
                   refined && every == 1 ? plain.inner_iterations : 0);
  /* What the summary, the status line and HISTORY say of it. */
  g_autofree char *said = ss_solve_result_describe_holdout (&result);
  g_autofree char *counts = g_strdup_printf ("%d validating on 3/4 of the pixels, then %d on all",
                                             validated, full);
  g_autofree char *chosen = g_strdup_printf ("sparsity %g chosen", sparsity);
  g_assert_nonnull (strstr (said, counts));
  g_assert_true ((strstr (said, "read again") != NULL) == (refined && every == 1));
  g_assert_true ((strstr (said, chosen) != NULL) == greedy);

  /* The estimate is the plain solve of the full run's count, bit for bit. */
  plain.holdout = FALSE;
  plain.iterations = full;
  plain.sparsity = sparsity;
  SsSolveResult direct = plain_solve (&problem, &plain);
  g_assert_cmpmem (result.x, s.n * sizeof (float), direct.x, s.n * sizeof (float));
  ss_solve_result_clear (&direct);
  ss_solve_result_clear (&result);
  scene_clear (&s);
}

static void
check_holdout (SsSolverKind kind, int iterations, double sigma)
{
  check_holdout_scene (kind, iterations, sigma, 0);
}

static void
test_holdout_cpadmm (void)
{
  check_holdout (SS_SOLVER_CPADMM, 200, 0.05);
}

static void
test_holdout_fista (void)
{
  check_holdout (SS_SOLVER_FISTA, 200, 0.05);
}

/* NIHT reads its own iterations; HTP its CG steps, 2 at a time. Extended
 * light wants most pixels, a few stars the fewest. */
static void
test_holdout_niht (void)
{
  check_holdout (SS_SOLVER_NIHT, 200, 0.01);
  check_holdout_scene (SS_SOLVER_NIHT, 200, 0.01, 20);
}

static void
test_holdout_htp (void)
{
  /* 10 iterations of 20 CG steps: 100 of 2, the validations capped at 50. */
  check_holdout (SS_SOLVER_HTP, 10, 0.01);
  check_holdout_scene (SS_SOLVER_HTP, 10, 0.001, 20);
}

static void
test_holdout_alm (void)
{
  /* 20 outer steps of 50: 100 steps of 10, the validation capped at 50. */
  check_holdout (SS_SOLVER_ALM, 20, 0.002);
  /* Noise enough that the first step of 10 is the least: read again in
   * steps of 2. */
  check_holdout (SS_SOLVER_ALM, 20, 0.05);
}

/* ss_pixel_l1_pick on random readings, a NaN among them: the earliest
 * within the tolerance of the least finite error, against a scan of every
 * reading; with no tolerance the least itself, with a tolerance larger
 * than every ratio the first finite reading. */
static void
test_pick (void)
{
  g_autoptr (GRand) rng = test_rng ();
  for (int trial = 0; trial < 200; trial++)
    {
      SsPixelL1Readings r = { 0 };
      int count = g_rand_int_range (rng, 1, 40), every = g_rand_int_range (rng, 1, 6);
      int nan_at = g_rand_int_range (rng, 0, count + 1);   /* count: none */
      for (int i = 0; i < count; i++)
        ss_pixel_l1_readings_add (&r, (i + 1) * every,
                                  i == nan_at ? NAN : g_rand_double_range (rng, 1.0, 2.0));
      double tolerance = g_rand_double_range (rng, 0.0, 0.2), least = INFINITY;
      int first = 0;
      for (int i = 0; i < count; i++)
        if (isfinite (r.error[i]))
          {
            least = MIN (least, r.error[i]);
            first = first ? first : r.iteration[i];
          }
      int expected = 0, at_least = 0;
      for (int i = count - 1; i >= 0; i--)
        {
          if (r.error[i] <= least * (1.0 + tolerance))
            expected = r.iteration[i];
          if (r.error[i] == least)
            at_least = r.iteration[i];
        }
      g_assert_cmpint (ss_pixel_l1_pick (&r, tolerance), ==, expected);
      g_assert_cmpint (ss_pixel_l1_pick (&r, 0.0), ==, at_least);
      g_assert_cmpint (ss_pixel_l1_pick (&r, 1.0), ==, first);
      g_assert_cmpint (expected, <=, at_least);
      ss_pixel_l1_readings_clear (&r);
    }
  SsPixelL1Readings none = { 0 };
  ss_pixel_l1_readings_add (&none, 5, NAN);
  g_assert_cmpint (ss_pixel_l1_pick (&none, 0.1), ==, 0);
  ss_pixel_l1_readings_clear (&none);
}

static int
compare_floats (const void *a, const void *b)
{
  float x = *(const float *) a, y = *(const float *) b;
  return (x > y) - (x < y);
}

/* ---- the floor -------------------------------------------------------------------- */

/* A Sun-like frame: a bright disk over a third of the frame on a dark
 * floor, sky-subtracted at its median (the disk's level), as deblur does.
 * Positivity at the median clips everything darker; at the data's floor
 * the dark parts come back. */
static void
test_floor_on_a_disk (void)
{
  g_autoptr (GRand) rng = test_rng ();
  int w = 56 + g_rand_int_range (rng, 0, 9), h = 52 + g_rand_int_range (rng, 0, 9);
  float *truth = test_extended_scene (rng, w, h);
  double r = 0.42 * MIN (w, h), cx = w / 2.0, cy = h / 2.0;
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++)
      if ((x - cx) * (x - cx) + (y - cy) * (y - cy) < r * r)
        truth[(gsize) y * w + x] += 1.0f;
  Scene s = { 0 };
  scene_blur (&s, rng, truth, w, h, 0.005);
  /* Subtract the median, as deblur's sky. */
  g_autofree float *sorted = g_memdup2 (s.y, s.n * sizeof (float));
  g_autofree float *y = g_new (float, s.n);
  g_autofree float *shifted_truth = g_new (float, s.n);
  qsort (sorted, s.n, sizeof (float), compare_floats);
  double median = sorted[s.n / 2];
  for (gsize i = 0; i < s.n; i++)
    {
      y[i] = (float) (s.y[i] - median);
      shifted_truth[i] = (float) (truth[i] - median);
    }
  SsProblem problem = { .op = s.op, .y = y, .background = median };
  SsSolveParams params = lasso_params (SS_SOLVER_CPADMM, 60);
  params.nonneg = TRUE;

  /* The floor is RL's β − b, measured independently. */
  SsRlSetup rl;
  SsSolveParams quick = params;
  quick.rl_stop = SS_RL_STOP_NONE;
  g_assert_true (ss_rl_setup (&problem, &quick, &rl, NULL));
  double floor = ss_pixel_l1_floor (&problem, &params);
  g_assert_cmpfloat_with_epsilon (floor, MIN (rl.background - rl.offset, 0.0), 1e-12);
  g_assert_cmpfloat (floor, <, -0.5 * median);

  SsSolveResult with = backend_solve (&problem, &params);
  SsSolveResult without = plain_solve (&problem, &params);
  float lowest = with.x[0];
  for (gsize i = 0; i < s.n; i++)
    lowest = MIN (lowest, with.x[i]);
  g_assert_cmpfloat (lowest, >=, floor - 1e-6);
  g_assert_cmpfloat (lowest, <, 0.0);
  double error_with = ss_mse (with.x, shifted_truth, s.n);
  double error_without = ss_mse (without.x, shifted_truth, s.n);
  g_test_message ("floor %.4f (median %.4f): mse %.3g at the floor, %.3g at the median",
                  floor, median, error_with, error_without);
  g_assert_cmpfloat (error_with, <, 0.5 * error_without);
  ss_solve_result_clear (&with);
  ss_solve_result_clear (&without);
  scene_clear (&s);
}

/* A deferred operator (a kernel whose spectrum is made where it is used, as
 * deblur makes for a GPU) under both rules on the CPU: the validation run's
 * copy of the operator makes its own spectrum and frees it, and the result
 * is the eager operator's. */
static void
test_deferred_operator (void)
{
  g_autoptr (GRand) rng = test_rng ();
  int w = 40 + g_rand_int_range (rng, 0, 9), h = 36 + g_rand_int_range (rng, 0, 9);
  gsize n = (gsize) w * h;
  Scene s = { 0 };
  scene_blur (&s, rng, test_extended_scene (rng, w, h), w, h, 0.03);
  SsPsfSpec spec = { 0 };
  g_assert_true (ss_psf_spec_parse ("gaussian:3", &spec, NULL));
  g_autoptr (GError) error = NULL;
  g_autoptr (SsImage) kernel = ss_psf_render (&spec, w, h, &error);
  ss_psf_spec_clear (&spec);
  g_autoptr (SsOperator) eager = ss_operator_new_from_kernel (kernel->data, NULL, w, h, &error);
  g_autoptr (SsOperator) deferred = ss_operator_new_deferred (kernel->data, NULL, w, h, &error);
  g_assert_no_error (error);
  SsSolveParams params = lasso_params (SS_SOLVER_FISTA, 100);
  params.holdout = TRUE;
  for (int sky = 0; sky < 2; sky++)
    {
      /* Without a sky only the rule applies, and nothing realizes the
       * problem's operator before the validation run copies it. */
      params.nonneg = sky;
      SsProblem a = { .op = eager, .y = s.y, .background = sky ? 0.05 : 0.0 };
      SsProblem b = { .op = deferred, .y = s.y, .background = sky ? 0.05 : 0.0 };
      SsSolveResult ra = backend_solve (&a, &params);
      SsSolveResult rb = backend_solve (&b, &params);
      g_assert_cmpint (ra.validation_iterations, >, 0);
      g_assert_cmpint (rb.iterations, ==, ra.iterations);
      g_assert_cmpfloat (test_rel_diff (rb.x, ra.x, n), <, 1e-6);
      ss_solve_result_clear (&ra);
      ss_solve_result_clear (&rb);
    }
  scene_clear (&s);
}

/* Without a sky and without the rule, the backend's solve is the solver's. */
static void
test_seed_solve_untouched (void)
{
  g_autoptr (GRand) rng = test_rng ();
  int w = 32 + g_rand_int_range (rng, 0, 9), h = 30 + g_rand_int_range (rng, 0, 9);
  Scene s = { 0 };
  scene_blur (&s, rng, test_extended_scene (rng, w, h), w, h, 0.01);
  SsProblem problem = { .op = s.op, .y = s.y };
  for (int nonneg = 0; nonneg < 2; nonneg++)
    {
      SsSolveParams params = lasso_params (SS_SOLVER_CPADMM, 30);
      params.nonneg = nonneg;
      SsSolveResult a = backend_solve (&problem, &params);
      SsSolveResult b = plain_solve (&problem, &params);
      g_assert_cmpmem (a.x, s.n * sizeof (float), b.x, s.n * sizeof (float));
      g_assert_cmpint (a.validation_iterations, ==, 0);
      ss_solve_result_clear (&a);
      ss_solve_result_clear (&b);
    }
  scene_clear (&s);
}

/* ---- the `auto` solver's choice (ss-solver-choice.h) ------------------------------ */

/* The choice rebuilt from its definition on a scene of extended light or
 * of STARS point sources: RL and ALM each solved in full on the pixels
 * ss_solver_choice_kept keeps, C x of each result against the data on the
 * others, then the better one on every pixel; `auto` must give that
 * estimate bit for bit, say which it chose, and count every run. */
static void
check_choice (int stars, double sigma)
{
  g_autoptr (GRand) rng = test_rng ();
  int w = 44 + g_rand_int_range (rng, 0, 9), h = 40 + g_rand_int_range (rng, 0, 9);
  Scene s = { 0 };
  scene_blur (&s, rng, stars ? star_scene (rng, w, h, stars) : test_extended_scene (rng, w, h),
              w, h, sigma);
  SsDataStats stats = { .noise = sigma, .median = NAN };
  SsProblem problem = { .op = s.op, .y = s.y, .stats = &stats };
  SsSolveParams params = test_choice_params (5);
  SsSolveResult result = backend_solve (&problem, &params);

  Fitted part;
  fitted_init (&part, &s, ss_solver_choice_kept);
  const guint8 *fit = part.fit;
  SsProblem split = { .op = &part.op, .y = part.y, .stats = &stats };
  const SsSolverKind kinds[] = { SS_SOLVER_RL, SS_SOLVER_ALM };
  double errors[2];
  int counted = 0, chosen = 0;
  g_autofree float *cx = g_new (float, s.n);
  for (int c = 0; c < 2; c++)
    {
      SsSolveParams p = ss_solver_choice_candidate (&params, kinds[c]);
      /* RL stops by its hold-out rule; ALM runs the seed's steps (the choice
       * is its hold-out: ss-solver-choice.c). */
      g_assert_false (p.holdout);
      if (kinds[c] == SS_SOLVER_RL)
        g_assert_cmpint (p.rl_stop, ==, SS_RL_STOP_HOLDOUT);
      SsSolveResult run = backend_solve (&split, &p);
      counted += run.iterations;
      g_assert_true (ss_operator_apply (s.op, run.x, cx, NULL));
      errors[c] = 0;
      for (gsize i = 0; i < s.n; i++)
        if (!fit[i])
          errors[c] += ((double) cx[i] - s.y[i]) * ((double) cx[i] - s.y[i]);
      ss_solve_result_clear (&run);
      if (errors[c] < errors[chosen])
        chosen = c;
    }
  const char *name = ss_solver_kind_to_string (kinds[chosen]);
  g_test_message ("%s: held-out error rl %.6g, alm %.6g: %s; auto said \"%s\"",
                  stars ? "stars" : "extended", errors[0], errors[1], name, result.choice);
  g_autofree char *said = g_strdup_printf ("%s chosen", name);
  g_assert_nonnull (result.choice);
  g_assert_true (g_str_has_prefix (result.choice, said));
  g_assert_null (strstr (result.choice, "crop"));   /* far below SS_SOLVER_CHOICE_CROP_FRAMES */
  g_assert_cmpint (result.choice_iterations, ==, counted);
  g_autofree char *described = ss_solve_result_describe_holdout (&result);
  g_assert_nonnull (strstr (described, said));

  assert_choice_is_candidate (&result, counted, &problem, &params, kinds[chosen]);
  ss_solve_result_clear (&result);
  fitted_clear (&part);
  scene_clear (&s);
}

static void
test_choice_extended (void)
{
  check_choice (0, 0.02);
}

static void
test_choice_stars (void)
{
  check_choice (12, 0.02);
}

/* `auto` on T's problem, where RL refuses to start: ALM is chosen, the
 * choice says why (WHY, RL's words), and the result is ALM's own solve on
 * all the pixels, bit for bit. */
static void
assert_alm_chosen_over_refusing_rl (const TestProblem *t, const char *why)
{
  SsProblem problem = { .op = t->op, .y = t->y };
  SsSolveParams params = test_choice_params (5);
  SsSolveResult result = backend_solve (&problem, &params);
  g_test_message ("auto said \"%s\"", result.choice);
  g_assert_true (g_str_has_prefix (result.choice, "alm chosen"));
  g_assert_nonnull (strstr (result.choice, "rl cannot run"));
  g_assert_nonnull (strstr (result.choice, why));
  assert_choice_is_candidate (&result, result.choice_iterations, &problem, &params,
                              SS_SOLVER_ALM);
  ss_solve_result_clear (&result);
}

/* A fresh problem of 40-48 x 36-44 pixels, Gaussian blur, sampling RATIO. */
static void
choice_problem (TestProblem *t, GRand *rng, double ratio)
{
  test_problem_init (t, rng, 40 + g_rand_int_range (rng, 0, 9), 36 + g_rand_int_range (rng, 0, 9),
                     "gaussian:2", ratio, 0.01);
}

/* With random sensing C is no blur and RL refuses it (it failed with RL's
 * refusal before `auto` skipped it). */
static void
test_choice_sensing (void)
{
  g_autoptr (GRand) rng = test_rng ();
  TestProblem t;
  choice_problem (&t, rng, 0.5);
  assert_alm_chosen_over_refusing_rl (&t, "non-negative blur");
  test_problem_clear (&t);
}

/* Data with nothing above zero: RL refuses them before it starts (its
 * setup's own check, asked by the choice); a refusal of the data, not only
 * of the operator, leaves the choice to the other candidate. */
static void
test_choice_nothing_positive (void)
{
  g_autoptr (GRand) rng = test_rng ();
  TestProblem t;
  choice_problem (&t, rng, 1.0);
  for (gsize i = 0; i < t.n; i++)
    t.y[i] = -fabsf (t.y[i]) - 0.01f;
  assert_alm_chosen_over_refusing_rl (&t, "positive observed data");
  test_problem_clear (&t);
}

/* `auto` solved on a backend with a crop side of CROP_SIDE. */
static SsSolveResult
choice_solve (const SsProblem *problem, const SsSolveParams *params, int crop_side)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (SsBackend) backend = ss_backend_new (SS_BACKEND_CPU, &error);
  SsSolveResult result = { 0 };
  g_assert_true (ss_solver_choice_solve (ss_backend_solve_on, backend, problem, params, crop_side,
                                         NULL, NULL, NULL, &result, &error));
  g_assert_no_error (error);
  return result;
}

static char *
chosen_name (const SsSolveResult *result)
{
  return g_strndup (result->choice, strcspn (result->choice, " "));
}

/* On a frame of more than SS_SOLVER_CHOICE_CROP_FRAMES crops, the choice is
 * made on the central crop: the same as `auto` on that crop cut by hand
 * (its border of the blur's reach, ss_boundary_margin_for_psf,
 * unobserved), the same as the choice made on the whole frame, and the
 * estimate the chosen solver gives on the whole frame; a centre mostly
 * blank is not judged by. */
static void
check_choice_crop (gboolean stars, double sigma)
{
  g_autoptr (GRand) rng = test_rng ();
  int side = g_rand_int_range (rng, 56, 72);
  int w = 2 * side + g_rand_int_range (rng, 8, 24), h = 2 * side + g_rand_int_range (rng, 8, 24);
  Scene s = { 0 };
  scene_blur (&s, rng,
              stars ? star_scene (rng, w, h, w * h / 180) : test_extended_scene (rng, w, h), w, h,
              sigma);
  SsDataStats stats = { .noise = sigma, .median = NAN };
  SsProblem problem = { .op = s.op, .y = s.y, .stats = &stats };
  SsSolveParams params = test_choice_params (5);
  SsSolveResult cropped = choice_solve (&problem, &params, side);
  SsSolveResult whole = choice_solve (&problem, &params, 0);

  /* The crop by hand. */
  SsPsfSpec spec = { 0 };
  g_assert_true (ss_psf_spec_parse ("gaussian:3", &spec, NULL));
  g_autoptr (GError) error = NULL;
  int margin = ss_boundary_margin_for_psf (&spec, side, side, &error);
  int x0 = (w - side) / 2, y0 = (h - side) / 2;
  gsize cn = (gsize) side * side;
  g_autofree float *observed = g_new (float, cn), *y = g_new0 (float, cn);
  for (int r = 0; r < side; r++)
    for (int c = 0; c < side; c++)
      {
        gboolean border = MIN (MIN (r, c), MIN (side - 1 - r, side - 1 - c)) < margin;
        float v = s.y[(gsize) (y0 + r) * w + x0 + c];
        observed[(gsize) r * side + c] = border ? NAN : v;
        y[(gsize) r * side + c] = border ? 0.0f : v;
      }
  /* The blur folded onto the crop (its own test is test-engine's): a blur
   * rendered at the crop's size differs in the last bits, enough to move a
   * hold-out minimum by an iteration. */
  g_autofree float *kernel = ss_operator_blur_kernel_at (s.op, side, side, &error);
  g_autoptr (SsOperator) op = ss_operator_new_from_kernel (kernel, observed, side, side, &error);
  g_assert_no_error (error);
  ss_psf_spec_clear (&spec);
  SsProblem crop = { .op = op, .y = y, .stats = &stats,
                     .image = { margin, margin, side - 2 * margin, side - 2 * margin } };
  SsSolveResult by_hand = choice_solve (&crop, &params, 0);

  g_autofree char *name = chosen_name (&cropped);
  g_autofree char *whole_name = chosen_name (&whole);
  g_test_message ("%s %d×%d, crop %d (margin %d): \"%s\"; by hand: \"%s\"; whole frame: \"%s\"",
                  stars ? "stars" : "extended", w, h, side, margin, cropped.choice, by_hand.choice,
                  whole.choice);
  g_autofree char *where = g_strdup_printf ("of the %d × %d crop at (%d, %d))", side, side, x0, y0);
  g_assert_true (g_str_has_suffix (cropped.choice, where));
  g_autofree char *said = g_strndup (cropped.choice, strcspn (cropped.choice, "("));
  g_autofree char *hand_said = g_strndup (by_hand.choice, strcspn (by_hand.choice, "("));
  g_assert_cmpstr (said, ==, hand_said);
  g_assert_cmpint (cropped.choice_iterations, ==, by_hand.choice_iterations);
  g_assert_cmpstr (name, ==, whole_name);
  g_assert_cmpstr (name, ==, stars ? "alm" : "rl");

  SsSolverKind kind;
  g_assert_true (ss_solver_kind_from_string (name, &kind, NULL));
  assert_choice_is_candidate (&cropped, cropped.choice_iterations, &problem, &params, kind);
  ss_solve_result_clear (&cropped);
  ss_solve_result_clear (&by_hand);

  /* A centre left mostly unobserved (blank pixels) is not judged by: the
   * whole frame is, as with no crop. */
  g_autofree guint8 *mask = g_new (guint8, s.n);
  for (int r = 0; r < h; r++)
    for (int c = 0; c < w; c++)
      {
        gboolean blank = c >= x0 && c < x0 + side && r >= y0 + side / 4 && r < y0 + side;
        mask[(gsize) r * w + c] = !blank;
      }
  SsOperator blanked = *s.op;
  blanked.mask = mask;
  blanked.m = 0;
  for (gsize i = 0; i < s.n; i++)
    blanked.m += mask[i];
  g_autofree float *y_blanked = g_memdup2 (s.y, s.n * sizeof (float));
  for (gsize i = 0; i < s.n; i++)
    if (!mask[i])
      y_blanked[i] = 0.0f;
  SsProblem holed = { .op = &blanked, .y = y_blanked, .stats = &stats };
  SsSolveResult holed_crop = choice_solve (&holed, &params, side);
  SsSolveResult holed_whole = choice_solve (&holed, &params, 0);
  g_test_message ("centre 3/4 blank: \"%s\"", holed_crop.choice);
  g_assert_cmpstr (holed_crop.choice, ==, holed_whole.choice);
  g_assert_cmpmem (holed_crop.x, s.n * sizeof (float), holed_whole.x, s.n * sizeof (float));
  ss_solve_result_clear (&holed_crop);
  ss_solve_result_clear (&holed_whole);
  ss_solve_result_clear (&whole);
  scene_clear (&s);
}

static void
test_choice_crop_extended (void)
{
  check_choice_crop (FALSE, 0.02);
}

static void
test_choice_crop_stars (void)
{
  check_choice_crop (TRUE, 0.02);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/pixel-l1/held-out-metric", test_held_out_metric);
  g_test_add_func ("/pixel-l1/pick", test_pick);
  g_test_add_func ("/pixel-l1/holdout/cpadmm", test_holdout_cpadmm);
  g_test_add_func ("/pixel-l1/holdout/fista", test_holdout_fista);
  g_test_add_func ("/pixel-l1/holdout/alm", test_holdout_alm);
  g_test_add_func ("/pixel-l1/holdout/niht", test_holdout_niht);
  g_test_add_func ("/pixel-l1/holdout/htp", test_holdout_htp);
  g_test_add_func ("/pixel-l1/floor-on-a-disk", test_floor_on_a_disk);
  g_test_add_func ("/pixel-l1/seed-solve-untouched", test_seed_solve_untouched);
  g_test_add_func ("/pixel-l1/deferred-operator", test_deferred_operator);
  g_test_add_func ("/choice/extended", test_choice_extended);
  g_test_add_func ("/choice/stars", test_choice_stars);
  g_test_add_func ("/choice/sensing", test_choice_sensing);
  g_test_add_func ("/choice/nothing-positive", test_choice_nothing_positive);
  g_test_add_func ("/choice/crop/extended", test_choice_crop_extended);
  g_test_add_func ("/choice/crop/stars", test_choice_crop_stars);
  return g_test_run ();
}
