/* ss-cpu-bench.c: CPU time per iteration against the floor of the same run.
 *
 * Floor = the transforms an iteration cannot avoid (CPADMM: one batch-of-2
 * R2C plus one batch-of-2 C2R; FISTA/ISTA, admm and RL: two dependent R2C+C2R
 * pairs), timed
 * with the very FFTW plans the solvers use, plus the elementwise bytes of an
 * iteration at the copy bandwidth measured here with the same threads.
 */
#include "ss-cpu-private.h"
#include "ss-dense.h"
#include "ss-error.h"

#include <lapacke.h>
#include <math.h>
#include <string.h>

#define REPEATS 7

/* Copy bandwidth, bytes read + written per second, over a buffer well past the caches. */
double
ss_cpu_copy_bandwidth (void)
{
  const gsize count = 32u << 20; /* 128 MiB each way */
  float *a = ss_mem_alloc (NULL, count * sizeof (float), NULL);
  float *b = ss_mem_alloc (NULL, count * sizeof (float), NULL);
  if (a == NULL || b == NULL)
    {
      ss_mem_free (NULL, a, 0);
      ss_mem_free (NULL, b, 0);
      return 1e10;
    }
  for (gsize i = 0; i < count; i++)
    a[i] = (float) i;
  double times[REPEATS];
  for (int r = 0; r < REPEATS; r++)
    {
      double t0 = ss_now ();
#pragma omp parallel for schedule(static)
      for (gsize i = 0; i < count; i++)
        b[i] = a[i];
      times[r] = ss_now () - t0;
    }
  ss_mem_free (NULL, a, 0);
  ss_mem_free (NULL, b, 0);
  return 2.0 * count * sizeof (float) / ss_median_of_doubles (times, REPEATS);
}

/* Median time of one forward + inverse through the cached plan of BATCH. */
static double
measure_fft_pair (int width, int height, int batch, GError **error)
{
  SsFft *fft = ss_fft_get (width, height, batch, error);
  if (fft == NULL)
    return -1;
  gsize n = (gsize) width * height * batch;
  gsize spec = ss_fft_spectrum_floats (width, height) * batch;
  float *real = ss_mem_alloc (NULL, n * sizeof (float), error);
  float *spectrum = real ? ss_mem_alloc (NULL, spec * sizeof (float), error) : NULL;
  if (spectrum == NULL)
    {
      ss_mem_free (NULL, real, 0);
      return -1;
    }
  g_autoptr (GRand) rng = g_rand_new_with_seed (7);
  for (gsize i = 0; i < n; i++)
    real[i] = (float) g_rand_double (rng);
  double times[REPEATS];
  for (int r = 0; r < REPEATS; r++)
    {
      double t0 = ss_now ();
      ss_fft_forward (fft, real, spectrum);
      ss_fft_inverse (fft, spectrum, real);
      times[r] = ss_now () - t0;
      for (gsize i = 0; i < n; i++)   /* keep the data bounded: undo the n scaling */
        real[i] *= 1.0f / (float) (width * height);
    }
  ss_mem_free (NULL, real, 0);
  ss_mem_free (NULL, spectrum, 0);
  return ss_median_of_doubles (times, REPEATS);
}

/* Elementwise bytes of one iteration, as the fused passes must move them. */
static double
elementwise_bytes (SsSolverKind solver, int width, int height)
{
  double n = (double) width * height;
  double spec = (double) height * (width / 2 + 1); /* complex values per half-spectrum */
  if (solver == SS_SOLVER_CPADMM)
    /* spectral: read F(w), F(z−ν), c^, write x^, c^x^ (5 complex);
     * pixel: read x, u, μ, ν, Pᵀy, write z, μ, ν, w, z−ν (10 floats) + mask byte */
    return 5 * 8 * spec + n * (10 * 4 + 1);
  /* FISTA with a mask: two spectral products (read S, c^, write S: 3 complex
   * each); residual (read Cy, y, mask, write r); prox and momentum (read y_k,
   * gradient, x, write x, y_k). */
  return 2 * 3 * 8 * spec + n * (3 * 4 + 1) + n * 5 * 4;
}

static SsOperator *
bench_operator (const SsBenchParams *params, GError **error)
{
  SsAcquisition acq;
  ss_acquisition_init (&acq);
  acq.psf.kind = SS_PSF_BOX_ROW;
  acq.psf.size = 5;
  acq.ratio = 0.5;
  acq.seed = params->seed;
  return ss_operator_new (&acq, params->width, params->height, error);
}

/* A sparse star field in [0, 1]: about 10% of pixels bright, as seed 000's image. */
static float *
bench_truth (int width, int height, guint32 seed)
{
  gsize n = (gsize) width * height;
  float *x = g_new0 (float, n);
  g_autoptr (GRand) rng = g_rand_new_with_seed (seed);
  for (gsize i = 0; i < n; i++)
    if (g_rand_double (rng) < 0.1)
      x[i] = (float) g_rand_double (rng);
  return x;
}

static gboolean
bench_dense_extras (const SsBenchParams *params, SsBenchResult *result, GError **error)
{
  /* GETS against LAPACK's triangular inverse on the same well-conditioned L. */
  int n = MIN (params->width * params->height, 2048);
  g_autofree float *L = g_new0 (float, (gsize) n * n);
  g_autofree float *R = g_new0 (float, (gsize) n * n);
  g_autoptr (GRand) rng = g_rand_new_with_seed (params->seed);
  for (int j = 0; j < n; j++)
    for (int i = j; i < n; i++)
      L[(gsize) j * n + i] = (float) (i == j ? 1.0 + g_rand_double (rng)
                                             : g_rand_double_range (rng, -1, 1) / n);
  /* One untimed run first, so neither timing pays for first-touch page faults. */
  if (!ss_gets_lower_inverse (L, n, n, R, n, error))
    return FALSE;
  double t0 = ss_now ();
  if (!ss_gets_lower_inverse (L, n, n, R, n, error))
    return FALSE;
  double gets = ss_now () - t0;
  memcpy (R, L, (gsize) n * n * sizeof (float));
  t0 = ss_now ();
  LAPACKE_strtri (LAPACK_COL_MAJOR, 'L', 'N', n, R, n);
  result->reference_seconds = ss_now () - t0;
  result->gets_seconds = gets;
  result->triangular_n = n;
  return TRUE;
}

static gboolean
bench_direct (const SsBenchParams *params, const SsProblem *problem, SsBenchResult *result,
              GError **error)
{
  SsSolveParams sp;
  ss_solve_params_init (&sp);
  sp.kind = SS_SOLVER_DIRECT;
  sp.alpha = 1e-2;
  sp.direct_method = params->direct_method;
  SsSolveResult out = { 0 };
  if (!ss_cpu_solve (problem, &sp, NULL, NULL, NULL, &out, error))
    return FALSE;
  result->iterations = 1;
  result->total_seconds = result->seconds_per_iteration = out.seconds;
  memcpy (result->phase_seconds, out.phase_seconds, sizeof out.phase_seconds);
  result->peak_memory_bytes = out.peak_memory_bytes;
  ss_solve_result_clear (&out);
  return bench_dense_extras (params, result, error);
}

static void
note_elapsed (const SsReport *report, gpointer user_data)
{
  double *elapsed = user_data;
  elapsed[report->final ? 1 : 0] = report->elapsed;
}

static gboolean
bench_iterative (const SsBenchParams *params, const SsProblem *problem, SsBenchResult *result,
                 GError **error)
{
  /* 2K iterations reporting every K: the time between the two reports is K
   * iterations plus one report's metrics (counted against us), and leaves
   * out what a solve pays once (allocating and first-touching its state,
   * FFTW planning), which is not iteration time. */
  SsSolveParams sp = ss_bench_solve_params (params);
  sp.nonneg = TRUE;
  sp.iterations = 2 * params->iterations;
  sp.report_every = params->iterations;
  double elapsed[2] = { 0, 0 };
  SsSolveResult out = { 0 };
  if (!ss_cpu_solve (problem, &sp, note_elapsed, elapsed, NULL, &out, error))
    return FALSE;
  result->iterations = params->iterations;
  result->total_seconds = out.seconds;
  result->peak_memory_bytes = out.peak_memory_bytes;
  ss_solve_result_clear (&out);
  result->seconds_per_iteration = (elapsed[1] - elapsed[0]) / params->iterations;
  result->iterations_per_second = 1.0 / result->seconds_per_iteration;

  int width = params->width, height = params->height;
  double pair = params->solver == SS_SOLVER_CPADMM
                  ? measure_fft_pair (width, height, 2, error)
                  : 2 * measure_fft_pair (width, height, 1, error);
  if (pair < 0)
    return FALSE;
  result->floor_fft_seconds = pair;
  result->bandwidth = ss_cpu_copy_bandwidth ();
  result->floor_bytes = params->solver == SS_SOLVER_RL
                          ? ss_bench_rl_iteration_bytes (width, height, FALSE, sp.rl_accel > 0)
                          : elementwise_bytes (params->solver, width, height);
  result->floor_seconds = pair + result->floor_bytes / result->bandwidth;
  result->ratio = result->seconds_per_iteration / result->floor_seconds;
  return TRUE;
}

gboolean
ss_cpu_bench (const SsBenchParams *params, SsBenchResult *result, GError **error)
{
  if (params->width <= 0 || params->height <= 0 || params->iterations < 1)
    {
      g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT,
                   "benchmark size %d×%d with %d iterations is invalid", params->width,
                   params->height, params->iterations);
      return FALSE;
    }
  memset (result, 0, sizeof *result);
  result->width = params->width;
  result->height = params->height;
  result->device = ss_cpu_device_name ();
  if (params->solver == SS_SOLVER_RL)
    {
      /* RL refuses the others' random sensing (below): its own problem. */
      SsOperator *rl_op = NULL;
      float *rl_y = NULL;
      if (!ss_bench_rl_problem (params->width, params->height, params->seed, &rl_op, &rl_y,
                                error))
        return FALSE;
      SsProblem rl = { .op = rl_op, .y = rl_y };
      gboolean ok = bench_iterative (params, &rl, result, error);
      ss_operator_free (rl_op);
      g_free (rl_y);
      return ok;
    }
  g_autoptr (SsOperator) op = bench_operator (params, error);
  if (op == NULL)
    return FALSE;
  g_autofree float *truth = bench_truth (params->width, params->height, params->seed);
  SsAcquisition acq;
  ss_acquisition_init (&acq);
  acq.noise = 0;
  g_autofree float *y = ss_simulate (op, &acq, truth, error);
  if (y == NULL)
    return FALSE;
  SsProblem problem = { .op = op, .y = y, .truth = truth };
  if (params->solver == SS_SOLVER_DIRECT)
    return bench_direct (params, &problem, result, error);
  if (!ss_solver_is_iterative (params->solver))
    {
      g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT,
                   "bench measures cpadmm, fista, ista, admm, rl or direct");
      return FALSE;
    }
  return bench_iterative (params, &problem, result, error);
}
