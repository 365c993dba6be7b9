/* ss-cs-solve.c: the greedy solvers of seed 003 and FISTA/ALM (seeds 001,
 * 004) on any operator, for a block of problems sharing it.
 *
 * The operator is applied to the whole block at once; everything per column
 * (steps, supports, stopping) is per problem. Greedy solvers keep the k
 * largest entries by selection (ss-cs-select.c) and skip the selection when
 * the support cannot have changed: with x supported on T and the step
 * x + μg, the support stays T exactly when min over T of |x + μg| exceeds
 * max off T of |μg|, an O(n) test with no selection (GAGA's "dynamic support
 * detection", made exact). NIHT then needs two operator applications an
 * iteration (Aᵀr and A g_T), the residual following as r − μ A g_T.
 *
 * The greedy iterations (IHT, NIHT, HTP, CoSaMP: their support tests and the
 * least squares on a support) are in ss-cs-solve-greedy.c; this file holds
 * the names and parameters, the block's state, FISTA/ALM, the driver and the
 * random problems. ss-cs-solve-private.h declares what the two share.
 */
#include "ss-cs.h"
#include "ss-cs-solve-private.h"
#include "ss-error.h"
#include "ss-mem.h"
#include "ss-report.h"

#include <cblas.h>
#include <math.h>
#include <string.h>

static const char *const algorithm_names[SS_N_CS_ALGORITHMS] = {
  "iht", "niht", "htp", "cosamp", "fista", "alm",
};

const char *
ss_cs_algorithm_to_string (SsCsAlgorithm algorithm)
{
  return (unsigned) algorithm < SS_N_CS_ALGORITHMS ? algorithm_names[algorithm] : "unknown";
}

gboolean
ss_cs_name_lookup (const char *const *names, int count, const char *text, const char *what,
                   int *index, GError **error)
{
  for (int i = 0; i < count; i++)
    if (text && g_ascii_strcasecmp (text, names[i]) == 0)
      {
        *index = i;
        return TRUE;
      }
  GString *expected = g_string_new (NULL);
  for (int i = 0; i < count; i++)
    g_string_append_printf (expected, "%s%s", i == 0 ? "" : i + 1 == count ? " or " : ", ",
                            names[i]);
  g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT, "unknown %s \"%s\": expected %s", what,
               text ? text : "", expected->str);
  g_string_free (expected, TRUE);
  return FALSE;
}

gboolean
ss_cs_algorithm_from_string (const char *text, SsCsAlgorithm *algorithm, GError **error)
{
  int index;
  if (!ss_cs_name_lookup (algorithm_names, SS_N_CS_ALGORITHMS, text, "solver", &index, error))
    return FALSE;
  *algorithm = (SsCsAlgorithm) index;
  return TRUE;
}

gboolean
ss_cs_algorithm_is_greedy (SsCsAlgorithm algorithm)
{
  return algorithm <= SS_CS_COSAMP;
}

void
ss_cs_params_init (SsCsParams *params)
{
  memset (params, 0, sizeof *params);
  params->algorithm = SS_CS_NIHT;
  params->k = 1;
  params->iterations = 300;
  params->inner_iterations = 50;
  params->tolerance = 1e-6;
}

/* The table says which algorithm runs a solver (NIHT when it names none). */
static SsCsAlgorithm
algorithm_of_kind (SsSolverKind kind)
{
  const SsSolverInfo *info = ss_solver_info (kind);
  SsCsAlgorithm algorithm = SS_CS_NIHT;
  if (info && info->cs_algorithm
      && !ss_cs_algorithm_from_string (info->cs_algorithm, &algorithm, NULL))
    g_warn_if_reached ();
  return algorithm;
}

gboolean
ss_cs_params_from_solve (const SsSolveParams *params, gsize n, SsCsParams *cs, GError **error)
{
  ss_cs_params_init (cs);
  cs->algorithm = algorithm_of_kind (params->kind);
  if (ss_cs_algorithm_is_greedy (cs->algorithm)
      && !ss_cs_sparsity_check (params->sparsity, n, &cs->k, error))
    return FALSE;
  cs->iterations = params->iterations;
  cs->inner_iterations = params->inner_iterations > 0 ? params->inner_iterations : 20;
  cs->alpha = params->alpha;
  cs->nonneg = params->nonneg;
  /* Images run the iterations asked for; the report callback can stop them. */
  cs->tolerance = 0;
  cs->report_every = params->report_every;
  return TRUE;
}

double
ss_cs_relative_error (const float *a, const float *b, gsize n)
{
  double num = 0, den = 0;
  for (gsize i = 0; i < n; i++)
    {
      double d = (double) a[i] - b[i];
      num += d * d;
      den += (double) b[i] * b[i];
    }
  return den > 0 ? sqrt (num / den) : sqrt (num);
}

/* ---- the state of a block solve ------------------------------------------ */

/* Block itself is in ss-cs-solve-private.h: the greedy iterations share it. */

static void
block_free (Block *s)
{
  ss_mem_free (NULL, s->r, 0);
  ss_mem_free (NULL, s->g, 0);
  ss_mem_free (NULL, s->w, 0);
  ss_mem_free (NULL, s->aw, 0);
  ss_mem_free (NULL, s->trial, 0);
  ss_mem_free (NULL, s->r_trial, 0);
  ss_mem_free (NULL, s->scratch, 0);
  g_free (s->indices);
  g_free (s->support);
  g_free (s->merged);
  g_free (s->y_norm);
  g_free (s->history);
  g_free (s->done);
}

static gboolean
block_alloc (Block *s, GError **error)
{
  gsize nb = s->n * s->batch, mb = s->m * s->batch;
  if (!((s->r = ss_mem_alloc (NULL, mb * sizeof (float), error))
        && (s->g = ss_mem_alloc (NULL, nb * sizeof (float), error))
        && (s->w = ss_mem_alloc (NULL, nb * sizeof (float), error))
        && (s->aw = ss_mem_alloc (NULL, mb * sizeof (float), error))
        && (s->trial = ss_mem_alloc (NULL, s->n * sizeof (float), error))
        && (s->r_trial = ss_mem_alloc (NULL, s->m * sizeof (float), error))
        && (s->scratch = ss_mem_alloc (NULL, s->n * sizeof (float), error))))
    return FALSE;
  s->indices = g_new (guint32, MIN (3 * s->k, s->n) + 1);
  s->support = g_new0 (guint8, nb);
  if (s->params->algorithm == SS_CS_COSAMP)
    s->merged = g_new0 (guint8, nb);
  s->y_norm = g_new (double, s->batch);
  s->history = g_new0 (double, (gsize) s->batch * HISTORY);
  s->done = g_new0 (gboolean, s->batch);
  for (int b = 0; b < s->batch; b++)
    s->y_norm[b] = cblas_snrm2 ((int) s->m, s->y + b * s->m, 1);
  return TRUE;
}

/* r = y − A x for the whole block. */
void
ss_cs_refresh_residual (Block *s)
{
  s->A->apply (s->A, s->x, s->r, s->batch);
  gsize mb = s->m * s->batch;
  for (gsize i = 0; i < mb; i++)
    s->r[i] = s->y[i] - s->r[i];
}

static gboolean
all_done (const Block *s)
{
  for (int b = 0; b < s->batch; b++)
    if (!s->done[b])
      return FALSE;
  return TRUE;
}

/* ---- FISTA and ALM ----------------------------------------------------------- */

static gboolean report (const SsCsParams *p, int iteration, const float *x, gboolean last,
                        GError **error);

/* FISTA on the block, towards TARGET (m x batch), thresholds THRESHOLD_b / L,
 * from x, for ITERATIONS steps. Momentum restarts at each call. With
 * REPORTING (FISTA itself, not ALM's inner steps) each step is a report
 * point, so a caller's progress function can stop a long solve (Ctrl-C);
 * FALSE then, with its error. */
static gboolean
fista_run (Block *s, const float *target, const double *threshold, int iterations,
           gboolean reporting, GError **error)
{
  double lipschitz = ss_linop_lipschitz (s->A), t = 1.0;
  gsize nb = s->n * s->batch, mb = s->m * s->batch;
  float *yk = s->w, *ay = s->aw, *grad = s->g;
  memcpy (yk, s->x, nb * sizeof (float));
  const float step = (float) (1.0 / lipschitz);
  const gboolean nonneg = s->params->nonneg;
  for (int it = 0; it < iterations; it++)
    {
      s->A->apply (s->A, yk, ay, s->batch);
      for (gsize i = 0; i < mb; i++)
        ay[i] -= target[i];
      s->A->adjoint (s->A, ay, grad, s->batch);
      double t_next = 0.5 * (1.0 + sqrt (1.0 + 4.0 * t * t));
      float beta = (float) ((t - 1.0) / t_next);
      t = t_next;
      for (int b = 0; b < s->batch; b++)
        {
          float th = (float) (threshold[b] / lipschitz);
          float *x = ss_cs_col (s->x, s->n, b), *v = ss_cs_col (yk, s->n, b),
                *gr = ss_cs_col (grad, s->n, b);
          for (gsize i = 0; i < s->n; i++)
            {
              float a = v[i] - step * gr[i];
              float x_new = fmaxf (a - th, 0.0f) + (nonneg ? 0.0f : fminf (a + th, 0.0f));
              v[i] = x_new + beta * (x_new - x[i]);
              x[i] = x_new;
            }
        }
      if (reporting)
        {
          s->stats->iterations = it + 1;
          if (!report (s->params, it + 1, s->x, it + 1 == iterations, error))
            return FALSE;
        }
    }
  return TRUE;
}

static gboolean
fista_solve (Block *s, GError **error)
{
  g_autofree double *threshold = g_new (double, s->batch);
  for (int b = 0; b < s->batch; b++)
    threshold[b] = s->params->alpha;
  return fista_run (s, s->y, threshold, s->params->iterations, TRUE, error);
}

/* ALM (seed 001): basis pursuit min ||x||₁ s.t. Ax = y when α = 0, else
 * min α||x||₁ + ½||e||² s.t. Ax + e = y (the LASSO, with the residual split
 * off). Each outer step minimises the augmented Lagrangian over x by FISTA
 * (inner steps), then over e in closed form, then moves the multiplier:
 *   x-step   min w||x||₁ + ρ/2 ||Ax − (y − e + λ/ρ)||²   (w = α, or 1 for BP)
 *   e-step   e = (ρ(y − Ax) + λ) / (1 + ρ)               (noisy form only)
 *   λ ← λ + ρ(y − Ax − e)
 * For BP ρ starts where the first x-step just admits the largest entry of
 * Aᵀy and grows 1.5× an outer step: the multiplier does the rest, so ρ need
 * not go to infinity. The noisy form keeps ρ = 1, which balances ½||e||². */

static gboolean
alm_solve (Block *s, GError **error)
{
  const gboolean bp = !(s->params->alpha > 0);
  gsize mb = s->m * s->batch;
  g_autofree float *lambda = g_new0 (float, mb), *e = g_new0 (float, mb);
  g_autofree float *target = g_new (float, mb);
  g_autofree double *rho = g_new (double, s->batch), *threshold = g_new (double, s->batch);
  s->A->adjoint (s->A, s->y, s->g, s->batch);
  for (int b = 0; b < s->batch; b++)
    {
      float top = 0;
      const float *g = ss_cs_col (s->g, s->n, b);
      for (gsize i = 0; i < s->n; i++)
        top = fmaxf (top, fabsf (g[i]));
      rho[b] = bp ? 2.0 / MAX (top, 1e-30f) : 1.0;
    }
  for (int outer = 1; outer <= s->params->iterations; outer++)
    {
      for (int b = 0; b < s->batch; b++)
        {
          const float *y = s->y + b * s->m;
          float *tb = ss_cs_col (target, s->m, b), *lb = ss_cs_col (lambda, s->m, b),
                *eb = ss_cs_col (e, s->m, b);
          for (gsize i = 0; i < s->m; i++)
            tb[i] = y[i] - eb[i] + lb[i] / (float) rho[b];
          threshold[b] = (bp ? 1.0 : s->params->alpha) / rho[b];
        }
      fista_run (s, target, threshold, s->params->inner_iterations, FALSE, NULL);
      ss_cs_refresh_residual (s);
      for (int b = 0; b < s->batch; b++)
        {
          float *r = ss_cs_col (s->r, s->m, b), *lb = ss_cs_col (lambda, s->m, b),
                *eb = ss_cs_col (e, s->m, b);
          float p = (float) rho[b];
          for (gsize i = 0; i < s->m; i++)
            {
              if (!bp)
                eb[i] = (p * r[i] + lb[i]) / (1.0f + p);
              lb[i] += p * (r[i] - eb[i]);
            }
          if (bp)
            rho[b] *= 1.5;
        }
      s->stats->iterations = outer;
      if (!report (s->params, outer, s->x, outer == s->params->iterations, error))
        return FALSE;
    }
  return TRUE;
}

/* ---- debiasing ---------------------------------------------------------------- */

gboolean
ss_cs_debias (SsLinop *A, const float *y, int batch, float *x, int iterations, gboolean nonneg,
              int *fitted, GError **error)
{
  if (fitted)
    *fitted = 0;
  if (batch < 1 || iterations < 1)
    return TRUE;
  SsCsParams params;
  ss_cs_params_init (&params);
  params.nonneg = nonneg;
  SsCsStats stats = { 0 };
  Block s = { .params = &params, .A = A, .n = A->cols, .m = A->rows, .k = 1, .batch = batch,
              .y = y, .x = x, .stats = &stats };
  if (!block_alloc (&s, error))
    {
      block_free (&s);
      return FALSE;
    }
  /* The support is where the estimate is nonzero: soft thresholding makes
   * exact zeros, so a LASSO estimate names its support itself. */
  int count = 0;
  for (int b = 0; b < batch; b++)
    {
      const float *xb = ss_cs_col (x, s.n, b);
      guint8 *mask = s.support + (gsize) b * s.n;
      gsize size = 0;
      for (gsize i = 0; i < s.n; i++)
        size += mask[i] = xb[i] != 0.0f;
      /* More unknowns than equations: any fit is one of many, no estimate. */
      s.done[b] = size == 0 || size > s.m;
      count += !s.done[b];
    }
  if (count > 0)
    ss_cs_project_on_supports (&s, s.support, iterations);
  if (nonneg)
    for (int b = 0; b < batch; b++)
      if (!s.done[b])
        {
          float *xb = ss_cs_col (x, s.n, b);
          for (gsize i = 0; i < s.n; i++)
            xb[i] = fmaxf (xb[i], 0.0f);
        }
  block_free (&s);
  if (fitted)
    *fitted = count;
  return TRUE;
}

/* ---- the driver ------------------------------------------------------------- */

static gboolean
check_params (const SsCsParams *p, const SsLinop *A, int batch, GError **error)
{
  if (batch < 1 || p->iterations < 1 || p->inner_iterations < 1 || !(p->tolerance >= 0)
      || !(p->alpha >= 0))
    {
      g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT,
                   "invalid solve: batch %d, %d iterations, %d inner, tolerance %g, alpha %g",
                   batch, p->iterations, p->inner_iterations, p->tolerance, p->alpha);
      return FALSE;
    }
  if (ss_cs_algorithm_is_greedy (p->algorithm) && (p->k < 1 || p->k > A->cols))
    {
      g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT,
                   "sparsity k = %" G_GSIZE_FORMAT ": need 1 <= k <= n = %" G_GSIZE_FORMAT,
                   p->k, A->cols);
      return FALSE;
    }
  return TRUE;
}

static gboolean
report (const SsCsParams *p, int iteration, const float *x, gboolean last, GError **error)
{
  if (p->progress == NULL || p->report_every <= 0)
    return TRUE;
  if (iteration % p->report_every != 0 && !last)
    return TRUE;
  return p->progress (iteration, x, last, p->user_data, error);
}

gboolean
ss_cs_solve (const SsCsParams *params, SsLinop *A, const float *y, int batch, float *x,
             SsCsStats *stats, GError **error)
{
  SsCsStats local = { 0 };
  if (stats == NULL)
    stats = &local;
  memset (stats, 0, sizeof *stats);
  if (!check_params (params, A, batch, error))
    return FALSE;
  double start = ss_now ();
  Block s = { .params = params, .A = A, .n = A->cols, .m = A->rows, .k = params->k,
              .batch = batch, .y = y, .x = x, .stats = stats };
  gboolean ok = block_alloc (&s, error);
  if (ok && params->algorithm == SS_CS_FISTA)
    {
      /* Every step is a report point (the image FISTA is ss-cpu-fista.c). */
      ok = fista_solve (&s, error);
    }
  else if (ok && params->algorithm == SS_CS_ALM)
    ok = alm_solve (&s, error);
  else if (ok)
    {
      double omega = params->algorithm == SS_CS_IHT ? 1.0 / ss_linop_lipschitz (A) : 0.0;
      ss_cs_greedy_start (&s);
      int it = 0;
      while (ok && it < params->iterations && !all_done (&s))
        {
          it++;
          switch (params->algorithm)
            {
            case SS_CS_HTP: ss_cs_htp_iteration (&s, it); break;
            case SS_CS_COSAMP: ss_cs_cosamp_iteration (&s, it); break;
            default: ss_cs_niht_iteration (&s, it, omega); break;
            }
          ok = report (params, it, x, it == params->iterations || all_done (&s), error);
        }
      stats->iterations = it;
    }
  stats->seconds = ss_now () - start;
  block_free (&s);
  return ok;
}

/* ---- random problems ----------------------------------------------------------- */

static const char *const value_names[SS_N_CS_VALUES] = { "gaussian", "sign", "uniform" };

const char *
ss_cs_values_to_string (SsCsValues values)
{
  return (unsigned) values < SS_N_CS_VALUES ? value_names[values] : "unknown";
}

gboolean
ss_cs_values_from_string (const char *text, SsCsValues *values, GError **error)
{
  int index;
  if (!ss_cs_name_lookup (value_names, SS_N_CS_VALUES, text, "value distribution", &index,
                          error))
    return FALSE;
  *values = (SsCsValues) index;
  return TRUE;
}

void
ss_cs_random_problems (SsLinop *A, gsize k, SsCsValues values, double noise, guint64 seed,
                       int batch, float **truth, float **y)
{
  ss_cs_random_problems_full (A, k, values, FALSE, noise, seed, batch, truth, y);
}

void
ss_cs_random_problems_full (SsLinop *A, gsize k, SsCsValues values, gboolean nonneg,
                            double noise, guint64 seed, int batch, float **truth, float **y)
{
  gsize n = A->cols, m = A->rows;
  float *x = g_new0 (float, n * batch);
  float *b = g_new0 (float, m * batch);
  for (int p = 0; p < batch; p++)
    {
      /* Streams far from the matrix's (seed, row) streams. */
      guint64 stream = G_GUINT64_CONSTANT (1) << 40 | (guint64) p;
      g_autofree guint32 *support = ss_cs_random_subset (k, n, seed ^ (stream * 0x9E37u));
      SsCounterRng rng;
      ss_counter_rng_init (&rng, seed, stream);
      float *xp = x + (gsize) p * n;
      for (gsize j = 0; j < k; j++)
        {
          double v;
          switch (values)
            {
            case SS_CS_VALUES_SIGN: v = (ss_counter_rng_next (&rng) >> 63) ? 1.0 : -1.0; break;
            case SS_CS_VALUES_UNIFORM: v = 2.0 * ss_counter_rng_uniform (&rng) - 1.0; break;
            default: v = ss_counter_rng_gaussian (&rng); break;
            }
          /* The magnitude of the same draw: a signed value under x >= 0
           * would make the problem one no constrained solver can recover. */
          xp[support[j]] = (float) (nonneg ? fabs (v) : v);
        }
    }
  A->apply (A, x, b, batch);
  if (noise > 0)
    for (int p = 0; p < batch; p++)
      {
        SsCounterRng rng;
        ss_counter_rng_init (&rng, seed, G_GUINT64_CONSTANT (2) << 40 | (guint64) p);
        for (gsize i = 0; i < m; i++)
          b[(gsize) p * m + i] += (float) (noise * ss_counter_rng_gaussian (&rng));
      }
  *truth = x;
  *y = b;
}

gsize
ss_cs_sparsity_count (double sparsity, gsize n)
{
  if (!(sparsity > 0))
    return 0;
  return sparsity < 1 ? (gsize) ceil (sparsity * (double) n) : (gsize) sparsity;
}

gboolean
ss_cs_sparsity_check (double sparsity, gsize n, gsize *k, GError **error)
{
  *k = ss_cs_sparsity_count (sparsity, n);
  if (*k >= 1 && *k <= n)
    return TRUE;
  g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT,
               "sparsity %g: %" G_GSIZE_FORMAT " pixels of %" G_GSIZE_FORMAT
               "; give a fraction below 1 or a count up to the pixel count", sparsity, *k, n);
  return FALSE;
}
