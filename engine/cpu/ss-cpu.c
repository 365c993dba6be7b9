/* ss-cpu.c: the CPU backend's dispatch and the helpers its solvers share. */
#include "ss-cpu-private.h"
#include "ss-error.h"

#include <math.h>
#include <string.h>

gboolean
ss_cpu_solve (const SsProblem *problem, const SsSolveParams *params, SsReportFunc report,
              gpointer user_data, GCancellable *cancellable, SsSolveResult *result,
              GError **error)
{
  /* A deferred operator (one made for a GPU) gets its spectrum here. */
  if (!ss_solve_params_validate (params, error) || !ss_operator_realize (problem->op, error))
    return FALSE;
  return ss_solver_info (params->kind)->cpu (problem, params, report, user_data, cancellable,
                                             result, error);
}

/* How OpenMP's idle threads wait, as libgomp read it at start-up: it
 * decides how the CPU times behave on a busy machine (README, "Where the
 * time goes"; PERFORMANCE.md, "OpenMP's idle threads"). */
static char *
openmp_wait_name (void)
{
  const char *policy = g_getenv ("OMP_WAIT_POLICY");
  const char *spins = g_getenv ("GOMP_SPINCOUNT");
  if (policy != NULL)
    return g_ascii_strdown (policy, -1);
  if (spins != NULL)
    return g_strdup_printf ("spin %s", spins);
  return g_strdup ("default wait");
}

char *
ss_cpu_device_name (void)
{
  g_autofree char *wait = openmp_wait_name ();
  return g_strdup_printf ("CPU, %d threads (FFTW, LAPACKE; OpenMP %s)", ss_fft_threads (),
                          wait);
}

void
ss_cpu_reporter_init (SsCpuReporter *reporter, const SsProblem *problem,
                      const SsSolveParams *params, SsReportFunc report, gpointer user_data,
                      GCancellable *cancellable)
{
  memset (reporter, 0, sizeof *reporter);
  reporter->problem = problem;
  reporter->params = params;
  reporter->report = report;
  reporter->user_data = user_data;
  reporter->cancellable = cancellable;
  reporter->start = ss_now ();
  reporter->last.mse = reporter->last.psnr = reporter->last.held_out = NAN;
  reporter->last.residual = reporter->last.objective = reporter->last.rel_change = NAN;
  if (report && params->preview_width > 0 && params->preview_height > 0)
    reporter->preview = g_new (float, (gsize) params->preview_width * params->preview_height);
}

void
ss_cpu_reporter_clear (SsCpuReporter *reporter)
{
  g_clear_pointer (&reporter->preview, g_free);
}

gboolean
ss_cpu_reporter_emit (SsCpuReporter *reporter, int iteration, const float *x, const float *cx,
                      double rel_change, gboolean final, GError **error)
{
  const SsSolveParams *params = reporter->params;
  SsReport *r = &reporter->last;
  r->iteration = iteration;
  r->rel_change = rel_change;
  r->final = final;
  ss_report_fill_metrics (r, reporter->problem, params, x, cx);
  r->preview = NULL;
  r->preview_width = r->preview_height = 0;
  if (reporter->preview)
    {
      const SsOperator *op = reporter->problem->op;
      int pw = MIN (params->preview_width, op->width);
      int ph = MIN (params->preview_height, op->height);
      ss_preview_reduce (x, op->width, op->height, reporter->preview, pw, ph);
      r->preview = reporter->preview;
      r->preview_width = pw;
      r->preview_height = ph;
    }
  r->elapsed = ss_now () - reporter->start;
  if (reporter->report)
    reporter->report (r, reporter->user_data);
  r->preview = NULL;
  return !g_cancellable_set_error_if_cancelled (reporter->cancellable, error);
}

void
ss_cpu_circulant (const SsFft *fft, const SsOperator *op, const float *in, float *real,
                  float *spectrum, float *out, gboolean adjoint)
{
  gsize n = (gsize) op->width * op->height;
  gsize count = (gsize) op->height * op->spec_width;
  float scale = 1.0f / (float) n;
  float sign = adjoint ? -1.0f : 1.0f;
  /* FFTW's out-of-place r2c leaves its input as it was: an aligned IN is
   * transformed where it lies, sparing a copy pass (8 bytes a pixel). */
  if (ss_fft_is_aligned (in))
    ss_fft_forward (fft, (float *) in, spectrum);
  else
    {
      memcpy (real, in, n * sizeof (float));
      ss_fft_forward (fft, real, spectrum);
    }
  const float *c = op->chat;
#pragma omp parallel for simd schedule(static) if (count > SS_PARALLEL_MIN)
  for (gsize k = 0; k < count; k++)
    {
      float cr = c[2 * k] * scale, ci = sign * c[2 * k + 1] * scale;
      float sr = spectrum[2 * k], si = spectrum[2 * k + 1];
      spectrum[2 * k] = cr * sr - ci * si;
      spectrum[2 * k + 1] = cr * si + ci * sr;
    }
  ss_fft_inverse (fft, spectrum, out);
}

double
ss_cpu_masked_misfit (const SsFft *fft, const SsOperator *op, const float *x, const float *y,
                      float *real, float *spectrum)
{
  ss_cpu_circulant (fft, op, x, real, spectrum, real, FALSE);
  gsize n = (gsize) op->width * op->height;
  double sum = 0;
  for (gsize i = 0; i < n; i++)
    if (op->mask == NULL || op->mask[i])
      {
        double d = (double) real[i] - y[i];
        sum += d * d;
      }
  return sum;
}

void
ss_cpu_finish_result (SsSolveResult *result, const SsCpuReporter *reporter, float **x,
                      int iterations, const SsMemCounter *memory)
{
  const SsOperator *op = reporter->problem->op;
  /* Handed on, not copied: a copy of a 27-megapixel estimate took 0.3 s. */
  g_free (result->x);
  result->x = g_steal_pointer (x);
  result->width = op->width;
  result->height = op->height;
  result->iterations = iterations;
  result->seconds = ss_now () - reporter->start;
  result->mse = reporter->last.mse;
  result->psnr = reporter->last.psnr;
  result->residual = reporter->last.residual;
  result->objective = reporter->last.objective;
  result->rel_change = reporter->last.rel_change;
  result->peak_memory_bytes = memory ? memory->peak : 0;
  g_free (result->backend);
  result->backend = g_strdup ("cpu");
  g_free (result->device);
  result->device = ss_cpu_device_name ();
}
