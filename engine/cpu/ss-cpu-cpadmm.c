/* ss-cpu-cpadmm.c: circulant ADMM (seed 000, Alg. 3) on the CPU.
 *
 * Per iteration: one batch-of-2 forward FFT of [w | z − ν], one spectral pass
 * forming x^ and c^ x^, one batch-of-2 inverse FFT giving [x | u], and one
 * fused pixel pass for v, z, μ, ν and the next FFT inputs. v is never stored:
 * only w = v + μ is needed by the next iteration.
 */
#include "ss-cpu-private.h"
#include "ss-error.h"

#include <math.h>

typedef struct {
  gsize n, spec_count;
  float *fft_in;    /* [w | z − ν]: the next forward batch */
  float *spectrum;  /* two half-spectra: [F(w) | F(z − ν)], then [x^ | c^ x^] */
  float *xu;        /* [x | u] from the inverse batch */
  float *z, *nu, *mu;
} CpadmmState;

static gboolean
state_alloc (CpadmmState *s, const SsOperator *op, SsMemCounter *mem, GError **error)
{
  s->n = (gsize) op->width * op->height;
  s->spec_count = (gsize) op->height * op->spec_width;
  gsize real_bytes = s->n * sizeof (float);
  gsize spec_bytes = 2 * s->spec_count * sizeof (float);
  return (s->fft_in = ss_mem_alloc (mem, 2 * real_bytes, error))
         && (s->spectrum = ss_mem_alloc (mem, 2 * spec_bytes, error))
         && (s->xu = ss_mem_alloc (mem, 2 * real_bytes, error))
         && (s->z = ss_mem_alloc (mem, real_bytes, error))
         && (s->nu = ss_mem_alloc (mem, real_bytes, error))
         && (s->mu = ss_mem_alloc (mem, real_bytes, error));
}

static void
state_free (CpadmmState *s, SsMemCounter *mem)
{
  ss_mem_free (mem, s->fft_in, 0);
  ss_mem_free (mem, s->spectrum, 0);
  ss_mem_free (mem, s->xu, 0);
  ss_mem_free (mem, s->z, 0);
  ss_mem_free (mem, s->nu, 0);
  ss_mem_free (mem, s->mu, 0);
}

/* x^ = (ρ conj(c) F(w) + σ F(z−ν)) / (ρ|c|² + σ);  writes x^/n and c x^/n in place. */
static void
spectral_pass (const CpadmmState *s, const float *chat, float rho, float sigma)
{
  float *a = s->spectrum, *b = s->spectrum + 2 * s->spec_count;
  float inv_n = 1.0f / (float) s->n;
#pragma omp parallel for simd schedule(static) if (s->spec_count > SS_PARALLEL_MIN)
  for (gsize k = 0; k < s->spec_count; k++)
    {
      float cr = chat[2 * k], ci = chat[2 * k + 1];
      float ar = a[2 * k], ai = a[2 * k + 1];
      float br = b[2 * k], bi = b[2 * k + 1];
      float scale = inv_n / (rho * (cr * cr + ci * ci) + sigma);
      /* conj(c) a = (cr ar + ci ai) + i (cr ai − ci ar) */
      float xr = (rho * (cr * ar + ci * ai) + sigma * br) * scale;
      float xi = (rho * (cr * ai - ci * ar) + sigma * bi) * scale;
      a[2 * k] = xr;
      a[2 * k + 1] = xi;
      b[2 * k] = cr * xr - ci * xi;
      b[2 * k + 1] = cr * xi + ci * xr;
    }
}

/* The fused update of v, z, μ, ν and the next FFT inputs, for pixels
 * [begin, end). HAS_MASK and MEASURE are constants at each call site, so the
 * compiler emits four branch-free, vectorised loops. When MEASURE, also sums
 * ||z_new − z_old||² and ||z_new||² for the relative change. */
static inline __attribute__ ((always_inline)) void
pixel_pass_range (CpadmmState *s, const float *ty, const guint8 *mask, const SsSolveParams *p,
                  const gboolean has_mask, const gboolean measure, double *change2, double *norm2)
{
  const float rho = (float) p->rho, tau = (float) p->tau;
  const float threshold = (float) (p->alpha / p->sigma);
  const float d_unobserved = 1.0f / rho;
  const float d_step = 1.0f / (1.0f + rho) - d_unobserved;
  const gboolean nonneg = p->nonneg;
  const float *x = s->xu, *u = s->xu + s->n;
  float *w_out = s->fft_in, *d_out = s->fft_in + s->n;
  float *z = s->z, *nu = s->nu, *mu = s->mu;
  double c2 = 0, z2 = 0;
#pragma omp parallel for simd schedule(static) reduction(+ : c2, z2) if (s->n > SS_PARALLEL_MIN)
  for (gsize i = 0; i < s->n; i++)
    {
      float d = has_mask ? d_unobserved + d_step * (float) mask[i] : d_unobserved + d_step;
      float v = d * (rho * (u[i] - mu[i]) + ty[i]);
      float z_new = ss_soft_threshold (x[i] + nu[i], threshold, nonneg);
      float mu_new = mu[i] + tau * (v - u[i]);
      float nu_new = nu[i] + tau * (x[i] - z_new);
      if (measure)
        {
          float dz = z_new - z[i];
          c2 += (double) dz * dz;
          z2 += (double) z_new * z_new;
        }
      z[i] = z_new;
      mu[i] = mu_new;
      nu[i] = nu_new;
      w_out[i] = v + mu_new;
      d_out[i] = z_new - nu_new;
    }
  *change2 = c2;
  *norm2 = z2;
}

static void
pixel_pass (CpadmmState *s, const float *ty, const guint8 *mask, const SsSolveParams *p,
            gboolean measure, double *change2, double *norm2)
{
  if (mask && measure)
    pixel_pass_range (s, ty, mask, p, TRUE, TRUE, change2, norm2);
  else if (mask)
    pixel_pass_range (s, ty, mask, p, TRUE, FALSE, change2, norm2);
  else if (measure)
    pixel_pass_range (s, ty, mask, p, FALSE, TRUE, change2, norm2);
  else
    pixel_pass_range (s, ty, mask, p, FALSE, FALSE, change2, norm2);
}

static gboolean
report_point (SsCpuReporter *reporter, CpadmmState *s, const SsFft *fft1, int iteration,
              double change2, double norm2, GError **error)
{
  /* The FFT buffers are free between iterations: use them as scratch for C z. */
  const SsOperator *op = reporter->problem->op;
  float *cz = s->xu + s->n;
  ss_cpu_circulant (fft1, op, s->z, s->xu, s->spectrum, cz, FALSE);
  return ss_cpu_report_iterate (reporter, iteration, s->z, cz, change2, norm2, FALSE, error);
}

gboolean
ss_cpu_cpadmm (const SsProblem *problem, const SsSolveParams *params, SsReportFunc report,
               gpointer user_data, GCancellable *cancellable, SsSolveResult *result,
               GError **error)
{
  const SsOperator *op = problem->op;
  SsFft *fft2 = ss_fft_get (op->width, op->height, 2, error);
  /* C z at report points only: a one-off plan. */
  SsFft *fft1 = fft2 ? ss_fft_get_once (op->width, op->height, error) : NULL;
  if (fft1 == NULL)
    return FALSE;

  SsMemCounter mem = { 0 };
  CpadmmState s = { 0 };
  SsCpuReporter reporter;
  ss_cpu_reporter_init (&reporter, problem, params, report, user_data, cancellable);
  gboolean ok = state_alloc (&s, op, &mem, error);
  int iteration = 0;
  /* z, ν, μ, w start at zero, so the first FFT input is all zeros too. */
  while (ok && iteration < params->iterations)
    {
      ss_fft_forward (fft2, s.fft_in, s.spectrum);
      spectral_pass (&s, op->chat, (float) params->rho, (float) params->sigma);
      ss_fft_inverse (fft2, s.spectrum, s.xu);
      iteration++;
      gboolean measure = ss_cpu_is_report_point (params, iteration);
      double change2 = 0, norm2 = 0;
      pixel_pass (&s, problem->y, op->mask, params, measure, &change2, &norm2);
      if (measure)
        ok = report_point (&reporter, &s, fft1, iteration, change2, norm2, error);
    }
  if (s.z)
    {
      mem.peak += ss_fft_spectrum_floats (op->width, op->height) * sizeof (float)
                  + (op->mask ? s.n : 0);
      ss_cpu_finish_result (result, &reporter, &s.z, iteration, &mem);
    }
  state_free (&s, &mem);
  ss_cpu_reporter_clear (&reporter);
  return ok;
}
