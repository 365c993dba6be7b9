/* test-batch.c: ss_backend_solve_batch on the CPU, against separate solves,
 * on fresh random problems (suite engine); device lists; the batch bench.
 * The CUDA batch is checked against the CPU in test-cuda.c. */
#include "test-common.h"
#include "ss-config.h"

#include <string.h>

/* COUNT problems of one size: the first HALF share one operator (as the
 * planes of a cube do), the rest each have their own (other frames), each
 * with its own sparse truth, data and weight. */
typedef struct {
  int count;
  TestProblem shared;        /* the shared operator and problem 0 */
  SsOperator **own_ops;      /* count: borrowed (shared.op) or owned */
  float **truths, **ys;
  SsProblem *problems;
  double *alphas;
} TestBatch;

static void
test_batch_init (TestBatch *t, GRand *rng, int count, int width, int height)
{
  memset (t, 0, sizeof *t);
  t->count = count;
  test_problem_init (&t->shared, rng, width, height, "gaussian:1.5", 0.6, 0.01);
  t->own_ops = g_new0 (SsOperator *, count);
  t->truths = g_new0 (float *, count);
  t->ys = g_new0 (float *, count);
  t->problems = g_new0 (SsProblem, count);
  t->alphas = g_new0 (double, count);
  for (int b = 0; b < count; b++)
    {
      g_autoptr (GError) error = NULL;
      SsAcquisition acq = t->shared.acq;
      const SsOperator *op = t->shared.op;
      if (b >= count / 2)
        {
          acq.seed = g_rand_int (rng);
          t->own_ops[b] = ss_operator_new (&acq, width, height, &error);
          g_assert_no_error (error);
          op = t->own_ops[b];
        }
      t->truths[b] = test_sparse_image (rng, width, height, 0.1);
      t->ys[b] = ss_simulate (op, &acq, t->truths[b], &error);
      g_assert_no_error (error);
      /* The last problem has no truth: its MSE is NaN, the others' are not. */
      t->problems[b] = (SsProblem) { .op = op, .y = t->ys[b],
                                     .truth = b + 1 < count ? t->truths[b] : NULL };
      t->alphas[b] = g_rand_double_range (rng, 5e-4, 5e-3);
    }
}

static void
test_batch_clear (TestBatch *t)
{
  for (int b = 0; b < t->count; b++)
    {
      ss_operator_free (t->own_ops[b]);
      g_free (t->truths[b]);
      g_free (t->ys[b]);
    }
  g_free (t->own_ops);
  g_free (t->truths);
  g_free (t->ys);
  g_free (t->problems);
  g_free (t->alphas);
  test_problem_clear (&t->shared);
}

typedef struct {
  int count;
  GArray *iterations[8];     /* per problem: the iterations reported */
  gboolean final_seen[8];
} BatchLog;

static void
log_report (int index, const SsReport *report, gpointer user_data)
{
  BatchLog *log = user_data;
  g_assert_cmpint (index, >=, 0);
  g_assert_cmpint (index, <, log->count);
  g_assert_false (log->final_seen[index]);
  g_array_append_val (log->iterations[index], report->iteration);
  log->final_seen[index] = report->final;
}

static gboolean
same_double (double a, double b)
{
  if (isnan (a) || isnan (b))
    return isnan (a) && isnan (b);
  return fabs (a - b) <= 1e-6 * MAX (fabs (a), fabs (b));
}

/* The batch's answer for each problem is the separate solve's, bit for bit,
 * in the batch's order; every problem is reported at every report point. */
static void
check_batch_matches_separate (SsSolverKind kind)
{
  g_autoptr (GRand) rng = test_rng ();
  g_autoptr (GError) error = NULL;
  g_autoptr (SsBackend) backend = ss_backend_new (SS_BACKEND_CPU, &error);
  g_assert_no_error (error);
  int count = g_rand_int_range (rng, 3, 7);
  TestBatch t;
  test_batch_init (&t, rng, count, g_rand_int_range (rng, 20, 40), g_rand_int_range (rng, 20, 40));
  SsSolveParams params = test_solve_params (kind, 1e-3, 60);
  params.report_every = 25;
  params.nonneg = g_rand_boolean (rng);

  BatchLog log = { .count = count };
  for (int b = 0; b < count; b++)
    log.iterations[b] = g_array_new (FALSE, FALSE, sizeof (int));
  g_autofree SsSolveResult *batch = g_new0 (SsSolveResult, count);
  g_assert_true (ss_backend_solve_batch (backend, t.problems, count, t.alphas, &params,
                                         log_report, &log, NULL, batch, &error));
  g_assert_no_error (error);

  /* Separate solves, last first: the batch's order must not matter. */
  for (int b = count - 1; b >= 0; b--)
    {
      SsSolveParams own = params;
      own.alpha = t.alphas[b];
      SsSolveResult single = { 0 };
      g_assert_true (ss_backend_solve (backend, &t.problems[b], &own, NULL, NULL, NULL, &single,
                                       &error));
      g_assert_no_error (error);
      gsize n = (gsize) single.width * single.height;
      g_assert_cmpint (batch[b].width, ==, single.width);
      g_assert_cmpint (batch[b].iterations, ==, single.iterations);
      g_assert_cmpmem (batch[b].x, n * sizeof (float), single.x, n * sizeof (float));
      g_assert_true (same_double (batch[b].objective, single.objective));
      g_assert_true (same_double (batch[b].residual, single.residual));
      g_assert_true (same_double (batch[b].mse, single.mse));
      g_assert_cmpint (isnan (batch[b].mse), ==, b == count - 1);
      ss_solve_result_clear (&single);

      /* 25, 50 and the last (60), the last marked final. */
      g_assert_cmpint (log.iterations[b]->len, ==, 3);
      g_assert_cmpint (g_array_index (log.iterations[b], int, 0), ==, 25);
      g_assert_cmpint (g_array_index (log.iterations[b], int, 2), ==, 60);
      g_assert_true (log.final_seen[b]);
      g_array_unref (log.iterations[b]);
      ss_solve_result_clear (&batch[b]);
    }
  /* Different weights and data give different answers: a mix-up of the
   * order would have been caught above. */
  test_batch_clear (&t);
}

static void
test_cpadmm_batch_matches_separate (void)
{
  check_batch_matches_separate (SS_SOLVER_CPADMM);
}

static void
test_fista_batch_matches_separate (void)
{
  check_batch_matches_separate (SS_SOLVER_FISTA);
}

static void
test_batch_refuses_mixed_sizes (void)
{
  g_autoptr (GRand) rng = test_rng ();
  g_autoptr (GError) error = NULL;
  g_autoptr (SsBackend) backend = ss_backend_new (SS_BACKEND_CPU, &error);
  TestProblem a, b;
  test_problem_init (&a, rng, 24, 20, "box:3", 1.0, 0);
  test_problem_init (&b, rng, 20, 24, "box:3", 1.0, 0);
  SsProblem problems[2] = { { .op = a.op, .y = a.y }, { .op = b.op, .y = b.y } };
  SsSolveResult results[2] = { { 0 } };
  SsSolveParams params = test_solve_params (SS_SOLVER_CPADMM, 1e-3, 5);
  g_assert_false (ss_backend_solve_batch (backend, problems, 2, NULL, &params, NULL, NULL, NULL,
                                          results, &error));
  g_assert_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, "one size"));
  g_assert_null (results[1].x);
  g_clear_error (&error);

  /* An empty batch is no work, and no error. */
  g_assert_true (ss_backend_solve_batch (backend, NULL, 0, NULL, &params, NULL, NULL, NULL, NULL,
                                         &error));
  g_assert_no_error (error);

  /* A weight out of range is named before any work. */
  problems[1] = problems[0];
  double alphas[2] = { 1e-3, -1 };
  g_assert_false (ss_backend_solve_batch (backend, problems, 2, alphas, &params, NULL, NULL,
                                          NULL, results, &error));
  g_assert_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT);
  g_assert_null (results[0].x);
  test_problem_clear (&a);
  test_problem_clear (&b);
}

/* A solve that diverges (a box blur's spectral zeros divided by an α of
 * 1e-45) gives no image: an SS_ERROR_NUMERIC error and no estimate, alone
 * and as one image of a batch, so that neither the app nor the command
 * line can show or write it. The same problem at a sane α solves. */
static void
test_diverged_solve_refused (void)
{
  g_autoptr (GRand) rng = test_rng ();
  g_autoptr (GError) error = NULL;
  g_autoptr (SsBackend) backend = ss_backend_new (SS_BACKEND_CPU, &error);
  g_assert_no_error (error);
  int side = 4 * g_rand_int_range (rng, 6, 12);   /* a multiple of the box: exact zeros */
  TestProblem a;
  test_problem_init (&a, rng, side, side, "box:4", 1.0, 0.01);
  SsProblem problem = { .op = a.op, .y = a.y };
  SsSolveParams params = test_solve_params (SS_SOLVER_DIRECT_FFT, 1e-45, 1);

  SsSolveResult result = { 0 };
  g_assert_false (ss_backend_solve (backend, &problem, &params, NULL, NULL, NULL, &result,
                                    &error));
  g_assert_error (error, SS_ERROR, SS_ERROR_NUMERIC);
  g_test_message ("%s", error->message);
  g_assert_nonnull (strstr (error->message, "diverged"));
  g_assert_null (result.x);
  ss_solve_result_clear (&result);
  g_clear_error (&error);

  /* In a batch of two, the second at the tiny α: named by its place. */
  SsProblem problems[2] = { problem, problem };
  double alphas[2] = { 1e-2, 1e-45 };
  SsSolveResult results[2] = { { 0 } };
  g_assert_false (ss_backend_solve_batch (backend, problems, 2, alphas, &params, NULL, NULL, NULL,
                                          results, &error));
  g_assert_error (error, SS_ERROR, SS_ERROR_NUMERIC);
  g_assert_nonnull (strstr (error->message, "image 2 of 2"));
  g_assert_null (results[1].x);
  ss_solve_result_clear (&results[0]);
  ss_solve_result_clear (&results[1]);
  g_clear_error (&error);

  params.alpha = 1e-2;
  g_assert_true (ss_backend_solve (backend, &problem, &params, NULL, NULL, NULL, &result,
                                   &error));
  g_assert_no_error (error);
  g_assert_cmpuint (ss_count_non_finite (result.x, (gsize) side * side), ==, 0);
  ss_solve_result_clear (&result);
  test_problem_clear (&a);
}

/* What may be batched on a GPU: one size and one c^, whatever the masks. */
static void
test_share_operator (void)
{
  g_autoptr (GRand) rng = test_rng ();
  g_autoptr (GError) error = NULL;
  TestProblem a, b;
  test_problem_init (&a, rng, 30, 20, "box:3", 0.5, 0);
  test_problem_init (&b, rng, 30, 20, "box:3", 0.5, 0);   /* another sensing seed */
  SsOperator *same_chat = ss_operator_new_from_parts (30, 20, a.op->chat, NULL, &error);
  g_assert_no_error (error);
  SsProblem problems[3] = { { .op = a.op, .y = a.y }, { .op = same_chat, .y = a.y },
                            { .op = a.op, .y = b.y } };
  g_assert_true (ss_problems_share_operator (problems, 3));
  problems[2].op = b.op;
  g_assert_false (ss_problems_share_operator (problems, 3));
  ss_operator_free (same_chat);
  test_problem_clear (&a);
  test_problem_clear (&b);
}

static void
test_parse_devices (void)
{
  int *devices = NULL, count = -1;
  g_autoptr (GError) error = NULL;
  g_assert_true (ss_backend_parse_devices ("0,2, 1", &devices, &count, &error));
  g_assert_no_error (error);
  g_assert_cmpint (count, ==, 3);
  g_assert_cmpint (devices[0], ==, 0);
  g_assert_cmpint (devices[1], ==, 2);
  g_assert_cmpint (devices[2], ==, 1);
  g_free (devices);

  /* "all" is every CUDA device there is: none in a CPU build or machine. */
  g_assert_true (ss_backend_parse_devices ("all", &devices, &count, &error));
  g_assert_cmpint (count, >=, 0);
  g_assert_true ((count == 0) == (devices == NULL));
  g_free (devices);

  /* A repeated device is two contexts on it (the several-device path on one GPU). */
  g_assert_true (ss_backend_parse_devices ("0,0", &devices, &count, &error));
  g_assert_cmpint (count, ==, 2);
  g_assert_cmpint (devices[0] + devices[1], ==, 0);
  g_free (devices);

  const char *bad[] = { "", "x", "0,-1", "2,", "1.5", "all,0" };
  for (gsize i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_assert_false (ss_backend_parse_devices (bad[i], &devices, &count, &error));
      g_assert_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT);
      g_assert_null (devices);
      g_clear_error (&error);
    }
}

/* A CPU backend runs on one device whatever the list; a CUDA request for a
 * device that is not there fails and names it. */
static void
test_backend_devices (void)
{
  g_autoptr (GError) error = NULL;
  int devices[] = { 0, 1 };
  g_autoptr (SsBackend) cpu = ss_backend_new_with_devices (SS_BACKEND_CPU, devices, 2, &error);
  g_assert_no_error (error);
  g_assert_cmpint (ss_backend_get_device_count (cpu), ==, 1);
  int missing[] = { 1000 };
  SsBackend *cuda = ss_backend_new_with_devices (SS_BACKEND_CUDA, missing, 1, &error);
  g_assert_null (cuda);
  g_assert_error (error, SS_ERROR, SS_ERROR_NO_DEVICE);
  /* A CPU-only build says it has no CUDA; a CUDA one names the device. */
  if (SHARPSKY_HAVE_CUDA)
    g_assert_nonnull (strstr (error->message, "1000"));
}

/* The structured device list (the app's picker) and `info`'s lines agree:
 * the same devices, numbered as --devices numbers them, each line naming
 * the device as a backend on it reports it. None without CUDA or a GPU. */
static void
test_list_devices (void)
{
  g_autoptr (GArray) list = ss_backend_list_devices ();
  g_assert_nonnull (list);
  int *all = NULL, count = -1;
  g_autoptr (GError) error = NULL;
  g_assert_true (ss_backend_parse_devices ("all", &all, &count, &error));
  g_free (all);
  g_assert_cmpint ((int) list->len, ==, count);
  g_autofree char *text = ss_backend_describe_devices ();
  g_test_message ("%s", text);
  g_assert_true (g_str_has_prefix (text, "cpu: "));
  if (list->len == 0)
    g_assert_nonnull (strstr (text, SHARPSKY_HAVE_CUDA ? "cuda: no device found"
                                                       : "cuda: not built"));
  for (guint i = 0; i < list->len; i++)
    {
      const SsDeviceInfo *d = &g_array_index (list, SsDeviceInfo, i);
      g_assert_cmpint (d->index, ==, (int) i);
      g_autofree char *line = d->unusable
                                  ? g_strdup_printf ("cuda %d: unusable: %s\n", d->index,
                                                     d->unusable)
                                  : g_strdup_printf ("cuda %d: %s, ", d->index, d->name);
      g_assert_nonnull (strstr (text, line));
      if (d->unusable)
        continue;
      g_assert_true (g_str_has_prefix (d->name, d->model));
      g_assert_cmpuint (d->total_bytes, >, 0);
      g_assert_cmpuint (d->free_bytes, <=, d->total_bytes);
      /* A backend made on the listed index runs there, under the listed name. */
      int one[] = { d->index };
      g_autoptr (SsBackend) backend = ss_backend_new_with_devices (SS_BACKEND_CUDA, one, 1,
                                                                   &error);
      g_assert_no_error (error);
      g_assert_cmpstr (ss_backend_get_name (backend), ==, "cuda");
      g_assert_cmpstr (ss_backend_get_device (backend), ==, d->name);
    }
}

/* Every phase of the breakdown has a distinct name, and none past the end. */
static void
test_batch_phase_names (void)
{
  for (int i = 0; i < SS_BATCH_PHASES; i++)
    {
      g_assert_nonnull (ss_batch_phase_name (i));
      for (int j = 0; j < i; j++)
        g_assert_cmpstr (ss_batch_phase_name (i), !=, ss_batch_phase_name (j));
    }
  g_assert_null (ss_batch_phase_name (SS_BATCH_PHASES));
  g_assert_null (ss_batch_phase_name (-1));
}

/* The batch bench's bookkeeping on the CPU (its speed-ups are the GPU's
 * business: on the CPU the batch is the separate solves). */
static void
test_batch_bench_cpu (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (SsBackend) backend = ss_backend_new (SS_BACKEND_CPU, &error);
  SsBenchParams params;
  ss_bench_params_init (&params);
  params.width = 48;
  params.height = 40;
  params.iterations = 4;
  SsBatchBenchResult result;
  g_assert_true (ss_backend_bench_batch (backend, &params, 3, &result, &error));
  g_assert_no_error (error);
  g_assert_cmpint (result.count, ==, 3);
  g_assert_cmpint (result.devices, ==, 1);
  g_assert_cmpint (result.width, ==, 48);
  g_assert_cmpfloat (result.batch_seconds, >, 0);
  g_assert_cmpfloat (result.separate_seconds, >, 0);
  g_assert_cmpfloat (result.batch_speedup, ==, result.separate_seconds / result.batch_seconds);
  g_assert_true (isnan (result.device_scaling));
  g_assert_nonnull (result.device);
  /* No device batch on the CPU: no phases to break down. */
  for (int i = 0; i < SS_BATCH_PHASES; i++)
    g_assert_cmpfloat (result.batch_phase_seconds[i], ==, 0.0);
  ss_batch_bench_result_clear (&result);

  g_assert_false (ss_backend_bench_batch (backend, &params, 0, &result, &error));
  g_assert_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT);
  ss_batch_bench_result_clear (&result);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/batch/cpadmm-matches-separate", test_cpadmm_batch_matches_separate);
  g_test_add_func ("/batch/fista-matches-separate", test_fista_batch_matches_separate);
  g_test_add_func ("/batch/refuses-mixed-sizes", test_batch_refuses_mixed_sizes);
  g_test_add_func ("/batch/share-operator", test_share_operator);
  g_test_add_func ("/batch/diverged-solve-refused", test_diverged_solve_refused);
  g_test_add_func ("/batch/parse-devices", test_parse_devices);
  g_test_add_func ("/batch/backend-devices", test_backend_devices);
  g_test_add_func ("/batch/list-devices", test_list_devices);
  g_test_add_func ("/batch/bench-cpu", test_batch_bench_cpu);
  g_test_add_func ("/batch/phase-names", test_batch_phase_names);
  return g_test_run ();
}
