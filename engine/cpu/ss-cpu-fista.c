/* ss-cpu-fista.c: FISTA and ISTA (seeds 001, 004; ISTA is seed 000's CPISTA).
 *
 *   x⁺ = soft(y_k − (1/L) Cᵀ Pᵀ (P C y_k − y), λ/L)
 *   t⁺ = (1 + sqrt(1 + 4t²)) / 2,   y_{k+1} = x⁺ + ((t − 1)/t⁺)(x⁺ − x)
 *
 * L = max|c^|² (exact when nothing is masked, an upper bound otherwise).
 * Without a mask the gradient needs one FFT pair, C^T C y_k − C^T y, with
 * C^T y computed once; with a mask it needs two dependent pairs.
 * Options: backtracking (Beck–Teboulle: L starts at max|c^|² · m/n, the
 * typical curvature of a randomly sampled operator, and only ever doubles
 * until the quadratic upper bound holds, never past max|c^|², which always
 * satisfies it; a non-decreasing L keeps FISTA's convergence guarantee), and
 * λ continuation (λ falls geometrically from max|Aᵀy| to α over the first
 * half of the iterations).
 */
#include "ss-cpu-private.h"
#include "ss-error.h"

#include <math.h>
#include <string.h>

typedef struct {
  gsize n, spec_floats;
  const SsOperator *op;
  const SsFft *fft;
  float *x, *yk, *grad, *real, *spectrum;
  float *aty;       /* Cᵀ y, when no mask */
  float *trial;     /* backtracking: the candidate x⁺ */
} FistaState;

static gboolean
state_alloc (FistaState *s, const SsProblem *problem, const SsSolveParams *params,
             SsMemCounter *mem, GError **error)
{
  const SsOperator *op = problem->op;
  s->op = op;
  s->n = (gsize) op->width * op->height;
  s->spec_floats = ss_fft_spectrum_floats (op->width, op->height);
  gsize bytes = s->n * sizeof (float);
  if (!((s->x = ss_mem_alloc (mem, bytes, error)) && (s->yk = ss_mem_alloc (mem, bytes, error))
        && (s->grad = ss_mem_alloc (mem, bytes, error))
        && (s->real = ss_mem_alloc (mem, bytes, error))
        && (s->spectrum = ss_mem_alloc (mem, s->spec_floats * sizeof (float), error))))
    return FALSE;
  if (params->backtracking && !(s->trial = ss_mem_alloc (mem, bytes, error)))
    return FALSE;
  if (op->mask == NULL)
    {
      if (!(s->aty = ss_mem_alloc (mem, bytes, error)))
        return FALSE;
      ss_cpu_circulant (s->fft, op, problem->y, s->real, s->spectrum, s->aty, TRUE);
    }
  return TRUE;
}

static void
state_free (FistaState *s, SsMemCounter *mem)
{
  ss_mem_free (mem, s->x, 0);
  ss_mem_free (mem, s->yk, 0);
  ss_mem_free (mem, s->grad, 0);
  ss_mem_free (mem, s->real, 0);
  ss_mem_free (mem, s->spectrum, 0);
  ss_mem_free (mem, s->aty, 0);
  ss_mem_free (mem, s->trial, 0);
}

/* spectrum *= |c|²/n (the C^T C product of the unmasked case). */
static void
multiply_power (FistaState *s)
{
  gsize count = s->spec_floats / 2;
  const float *c = s->op->chat;
  float inv_n = 1.0f / (float) s->n;
#pragma omp parallel for simd schedule(static) if (count > SS_PARALLEL_MIN)
  for (gsize k = 0; k < count; k++)
    {
      float p = (c[2 * k] * c[2 * k] + c[2 * k + 1] * c[2 * k + 1]) * inv_n;
      s->spectrum[2 * k] *= p;
      s->spectrum[2 * k + 1] *= p;
    }
}

/* grad = Cᵀ Pᵀ (P C v − y); also leaves P C v − y (0 off the mask) in s->real
 * when masked, and returns ½||P C v − y||² when WANT_F. */
static double
gradient (FistaState *s, const float *v, const float *y, gboolean want_f)
{
  const guint8 *mask = s->op->mask;
  double f = 0;
  if (mask == NULL && !want_f)
    {
      memcpy (s->real, v, s->n * sizeof (float));
      ss_fft_forward (s->fft, s->real, s->spectrum);
      multiply_power (s);
      ss_fft_inverse (s->fft, s->spectrum, s->grad);
      const float *aty = s->aty;
      float *g = s->grad;
#pragma omp parallel for simd schedule(static) if (s->n > SS_PARALLEL_MIN)
      for (gsize i = 0; i < s->n; i++)
        g[i] -= aty[i];
      return 0;
    }
  ss_cpu_circulant (s->fft, s->op, v, s->real, s->spectrum, s->real, FALSE);
  float *r = s->real;
#pragma omp parallel for simd schedule(static) reduction(+ : f) if (s->n > SS_PARALLEL_MIN)
  for (gsize i = 0; i < s->n; i++)
    {
      float d = (mask == NULL || mask[i]) ? r[i] - y[i] : 0.0f;
      r[i] = d;
      f += (double) d * d;
    }
  ss_cpu_circulant (s->fft, s->op, s->real, s->real, s->spectrum, s->grad, TRUE);
  return 0.5 * f;
}

/* ½||P C v − y||² (uses s->real and s->spectrum as scratch). */
static double
data_term (FistaState *s, const float *v, const float *y)
{
  return 0.5 * ss_cpu_masked_misfit (s->fft, s->op, v, y, s->real, s->spectrum);
}

/* out = soft(yk − grad/L, λ/L). */
static void
proximal_step (const FistaState *s, float *out, double lipschitz, double lambda, gboolean nonneg)
{
  const float step = (float) (1.0 / lipschitz), threshold = (float) (lambda / lipschitz);
  const float *yk = s->yk, *g = s->grad;
#pragma omp parallel for simd schedule(static) if (s->n > SS_PARALLEL_MIN)
  for (gsize i = 0; i < s->n; i++)
    out[i] = ss_soft_threshold (yk[i] - step * g[i], threshold, nonneg);
}

/* Beck–Teboulle: f(x⁺) <= f(y) + <∇f(y), x⁺ − y> + L/2 ||x⁺ − y||². */
static double
backtrack (FistaState *s, const float *y, double f_y, double lipschitz, double lambda,
           gboolean nonneg)
{
  for (;;)
    {
      proximal_step (s, s->trial, lipschitz, lambda, nonneg);
      double linear = 0, squared = 0;
      for (gsize i = 0; i < s->n; i++)
        {
          double d = (double) s->trial[i] - s->yk[i];
          linear += d * s->grad[i];
          squared += d * d;
        }
      double f_trial = data_term (s, s->trial, y);
      if (f_trial <= f_y + linear + 0.5 * lipschitz * squared * (1 + 1e-6)
          || lipschitz >= s->op->lipschitz)
        return lipschitz;
      lipschitz = MIN (2.0 * lipschitz, s->op->lipschitz);
    }
}

/* The proximal step and the momentum in one pass, for the usual case (no
 * backtracking, which needs x⁺ whole before it accepts it):
 *   x⁺ = soft(y_k − grad/L, λ/L);  y_k ← x⁺ + β (x⁺ − x);  x ← x⁺
 * reads y_k, grad and x and writes x and y_k: 5 floats a pixel where the two
 * passes apart moved 7 (and x⁺ never went through memory). Returns
 * ||x⁺ − x||² and ||x⁺||² when MEASURE. */
static inline __attribute__ ((always_inline)) void
prox_momentum_range (FistaState *s, float step, float threshold, float beta,
                     const gboolean nonneg, const gboolean measure, double *change2,
                     double *norm2)
{
  float *x = s->x, *yk = s->yk;
  const float *g = s->grad;
  double c2 = 0, x2 = 0;
#pragma omp parallel for simd schedule(static) reduction(+ : c2, x2) if (s->n > SS_PARALLEL_MIN)
  for (gsize i = 0; i < s->n; i++)
    {
      float x_new = ss_soft_threshold (yk[i] - step * g[i], threshold, nonneg);
      float diff = x_new - x[i];
      if (measure)
        {
          c2 += (double) diff * diff;
          x2 += (double) x_new * x_new;
        }
      yk[i] = x_new + beta * diff;
      x[i] = x_new;
    }
  *change2 = c2;
  *norm2 = x2;
}

static void
prox_momentum_step (FistaState *s, double lipschitz, double lambda, gboolean nonneg,
                    float beta, gboolean measure, double *change2, double *norm2)
{
  const float step = (float) (1.0 / lipschitz), threshold = (float) (lambda / lipschitz);
  /* Constant flags at each call: four branch-free, vectorised loops. */
  if (nonneg && measure)
    prox_momentum_range (s, step, threshold, beta, TRUE, TRUE, change2, norm2);
  else if (nonneg)
    prox_momentum_range (s, step, threshold, beta, TRUE, FALSE, change2, norm2);
  else if (measure)
    prox_momentum_range (s, step, threshold, beta, FALSE, TRUE, change2, norm2);
  else
    prox_momentum_range (s, step, threshold, beta, FALSE, FALSE, change2, norm2);
}

/* x ← x⁺, y_k ← x⁺ + β (x⁺ − x); returns ||x⁺ − x||² and ||x⁺||² if MEASURE. */
static void
momentum_step (FistaState *s, const float *x_new, float beta, gboolean measure, double *change2,
               double *norm2)
{
  double c2 = 0, x2 = 0;
  float *x = s->x, *yk = s->yk;
#pragma omp parallel for simd schedule(static) reduction(+ : c2, x2) if (s->n > SS_PARALLEL_MIN)
  for (gsize i = 0; i < s->n; i++)
    {
      float diff = x_new[i] - x[i];
      if (measure)
        {
          c2 += (double) diff * diff;
          x2 += (double) x_new[i] * x_new[i];
        }
      yk[i] = x_new[i] + beta * diff;
      x[i] = x_new[i];
    }
  *change2 = c2;
  *norm2 = x2;
}

static double
continuation_start (FistaState *s, const SsProblem *problem)
{
  /* max|Aᵀy|: above it the LASSO solution is 0. */
  g_autofree float *aty = g_new (float, s->n);
  ss_cpu_circulant (s->fft, s->op, problem->y, s->real, s->spectrum, aty, TRUE);
  double top = 0;
  for (gsize i = 0; i < s->n; i++)
    top = MAX (top, fabs (aty[i]));
  return top;
}

static gboolean
report_point (SsCpuReporter *reporter, FistaState *s, int iteration, double change2,
              double norm2, GError **error)
{
  ss_cpu_circulant (s->fft, s->op, s->x, s->real, s->spectrum, s->real, FALSE);
  return ss_cpu_report_iterate (reporter, iteration, s->x, s->real, change2, norm2, FALSE, error);
}

gboolean
ss_cpu_fista (const SsProblem *problem, const SsSolveParams *params, SsReportFunc report,
              gpointer user_data, GCancellable *cancellable, SsSolveResult *result,
              GError **error)
{
  const SsOperator *op = problem->op;
  FistaState s = { 0 };
  s.fft = ss_fft_get (op->width, op->height, 1, error);
  if (s.fft == NULL)
    return FALSE;
  if (!(op->lipschitz > 0))
    {
      g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT, "the operator is zero");
      return FALSE;
    }
  SsMemCounter mem = { 0 };
  SsCpuReporter reporter;
  ss_cpu_reporter_init (&reporter, problem, params, report, user_data, cancellable);
  gboolean ok = state_alloc (&s, problem, params, &mem, error);

  const gboolean momentum = params->kind == SS_SOLVER_FISTA;
  double lipschitz = op->lipschitz, t = 1.0;
  if (params->backtracking)
    lipschitz *= (double) op->m / (double) s.n;
  double lambda = params->alpha, decay = 1.0;
  if (ok && params->continuation)
    {
      int steps = MAX (params->iterations / 2, 1);
      double start = MAX (continuation_start (&s, problem), params->alpha);
      if (params->alpha > 0 && start > params->alpha)
        {
          decay = pow (params->alpha / start, 1.0 / steps);
          lambda = start;
        }
    }
  int iteration = 0;
  while (ok && iteration < params->iterations)
    {
      gboolean bt = params->backtracking;
      double f_y = gradient (&s, s.yk, problem->y, bt);
      if (bt)
        lipschitz = backtrack (&s, problem->y, f_y, lipschitz, lambda, params->nonneg);
      double t_next = momentum ? 0.5 * (1.0 + sqrt (1.0 + 4.0 * t * t)) : 1.0;
      float beta = momentum ? (float) ((t - 1.0) / t_next) : 0.0f;
      t = t_next;
      iteration++;
      gboolean measure = ss_cpu_is_report_point (params, iteration);
      double change2 = 0, norm2 = 0;
      if (bt)
        momentum_step (&s, s.trial, beta, measure, &change2, &norm2);
      else
        prox_momentum_step (&s, lipschitz, lambda, params->nonneg, beta, measure, &change2,
                            &norm2);
      lambda = MAX (lambda * decay, params->alpha);
      if (measure)
        ok = report_point (&reporter, &s, iteration, change2, norm2, error);
    }
  if (s.x)
    {
      mem.peak += s.spec_floats * sizeof (float) + (op->mask ? s.n : 0);
      ss_cpu_finish_result (result, &reporter, &s.x, iteration, &mem);
    }
  state_free (&s, &mem);
  ss_cpu_reporter_clear (&reporter);
  return ok;
}
