/* ss-cpu-direct-fft.c: the Fourier-diagonal Tikhonov solve.
 *
 * With every pixel observed, (CᵀC + λI) is circulant, so
 *   x^ = conj(c^) y^ / (|c^|² + λ)
 * is exact at any size; it is also the check that the dense path is right.
 */
#include "ss-cpu-private.h"
#include "ss-error.h"

gboolean
ss_cpu_direct_fft (const SsProblem *problem, const SsSolveParams *params, SsReportFunc report,
                   gpointer user_data, GCancellable *cancellable, SsSolveResult *result,
                   GError **error)
{
  const SsOperator *op = problem->op;
  gsize n = (gsize) op->width * op->height;
  if (op->mask)
    {
      g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT,
                   "Direct FFT needs every pixel observed, but %" G_GSIZE_FORMAT
                   " of %" G_GSIZE_FORMAT " are not (sampling or blank pixels): "
                   "use CPADMM, FISTA or dense Direct", n - op->m, n);
      return FALSE;
    }
  if (!(params->alpha > 0) && !(op->lipschitz > 0))
    {
      g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT, "the operator is zero");
      return FALSE;
    }
  SsFft *fft = ss_fft_get_once (op->width, op->height, error);
  if (fft == NULL)
    return FALSE;
  SsMemCounter mem = { 0 };
  gsize spec_floats = ss_fft_spectrum_floats (op->width, op->height);
  float *x = ss_mem_alloc (&mem, n * sizeof (float), error);
  float *cx = x ? ss_mem_alloc (&mem, n * sizeof (float), error) : NULL;
  float *spectrum = cx ? ss_mem_alloc (&mem, spec_floats * sizeof (float), error) : NULL;
  gboolean ok = spectrum != NULL;
  SsCpuReporter reporter;
  ss_cpu_reporter_init (&reporter, problem, params, report, user_data, cancellable);
  if (ok)
    {
      memcpy (x, problem->y, n * sizeof (float));
      ss_fft_forward (fft, x, spectrum);
      const float *c = op->chat;
      float lambda = (float) params->alpha, inv_n = 1.0f / (float) n;
      for (gsize k = 0; k < spec_floats / 2; k++)
        {
          float cr = c[2 * k], ci = c[2 * k + 1];
          float yr = spectrum[2 * k], yi = spectrum[2 * k + 1];
          float den = cr * cr + ci * ci + lambda;
          /* A zero transfer with λ = 0 has no information: leave that frequency 0. */
          float scale = den > 0 ? inv_n / den : 0.0f;
          spectrum[2 * k] = (cr * yr + ci * yi) * scale;
          spectrum[2 * k + 1] = (cr * yi - ci * yr) * scale;
        }
      ss_fft_inverse (fft, spectrum, x);
      ss_cpu_circulant (fft, op, x, cx, spectrum, cx, FALSE);
      ok = ss_cpu_reporter_emit (&reporter, 1, x, cx, 0.0, TRUE, error);
      mem.peak += spec_floats * sizeof (float);
      ss_cpu_finish_result (result, &reporter, &x, 1, &mem);
    }
  ss_mem_free (&mem, x, 0);
  ss_mem_free (&mem, cx, 0);
  ss_mem_free (&mem, spectrum, 0);
  ss_cpu_reporter_clear (&reporter);
  return ok;
}
