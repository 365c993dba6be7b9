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
 */
#include "ss-cs.h"
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

typedef struct {
  const SsCsParams *params;
  SsLinop *A;
  gsize n, m, k;
  int batch;
  const float *y;
  float *x;            /* n x batch, the estimate */
  float *r;            /* m x batch, y − A x */
  float *g;            /* n x batch, Aᵀ r */
  float *w;            /* n x batch, a direction (g on the support, or a CG direction) */
  float *aw;           /* m x batch, A w */
  float *trial;        /* n: a candidate x */
  float *r_trial;      /* m: its residual */
  float *scratch;      /* n: selection keys */
  guint32 *indices;    /* up to 2k + k indices */
  guint8 *support;     /* n x batch, 1 on the support */
  guint8 *merged;      /* n x batch, CoSaMP's support ∪ top-2k */
  double *y_norm;      /* per problem */
  double *history;     /* per problem, the last 16 residual norms (stall test) */
  gboolean *done;
  SsCsStats *stats;
} Block;

#define HISTORY 16
/* Loops shorter than this run on one thread: waking a team costs more. */
#define PARALLEL_MIN 16384

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

static inline float *
col (float *block, gsize length, int b)
{
  return block + (gsize) b * length;
}

static double
dot (const float *a, const float *b, gsize n)
{
  double sum = 0;
#pragma omp parallel for simd reduction(+ : sum) schedule(static) if (n > PARALLEL_MIN)
  for (gsize i = 0; i < n; i++)
    sum += (double) a[i] * b[i];
  return sum;
}

/* r = y − A x for the whole block. */
static void
refresh_residual (Block *s)
{
  s->A->apply (s->A, s->x, s->r, s->batch);
  gsize mb = s->m * s->batch;
  for (gsize i = 0; i < mb; i++)
    s->r[i] = s->y[i] - s->r[i];
}

/* r_b = y_b − A x_b for one problem, into OUT. */
static void
column_residual (Block *s, int b, const float *x, float *out)
{
  s->A->apply (s->A, x, out, 1);
  const float *y = s->y + b * s->m;
  for (gsize i = 0; i < s->m; i++)
    out[i] = y[i] - out[i];
}

static inline float
key_of (float v, gboolean nonneg)
{
  return nonneg ? fmaxf (v, 0.0f) : fabsf (v);
}

/* Keeps the K largest entries of V (n) in OUT and marks them in MASK. */
static void
hard_threshold (Block *s, const float *v, gsize k, float *out, guint8 *mask)
{
  ss_cs_top_k (v, s->n, k, s->params->nonneg, s->scratch, s->indices);
  memset (mask, 0, s->n);
  for (gsize j = 0; j < k && j < s->n; j++)
    mask[s->indices[j]] = 1;
  for (gsize i = 0; i < s->n; i++)
    out[i] = mask[i] ? (s->params->nonneg ? fmaxf (v[i], 0.0f) : v[i]) : 0.0f;
  s->stats->support_searches++;
}

/* Can x + step·g, thresholded to k entries, have another support than MASK?
 * No when every key on the support beats every key off it. */
static gboolean
support_kept (const Block *s, const float *x, const float *g, float step, const guint8 *mask)
{
  float low_on = INFINITY, high_off = 0;
  gboolean nonneg = s->params->nonneg;
#pragma omp parallel for simd reduction(min : low_on) reduction(max : high_off) \
  schedule(static) if (s->n > PARALLEL_MIN)
  for (gsize i = 0; i < s->n; i++)
    {
      float key = key_of (x[i] + step * g[i], nonneg);
      if (mask[i])
        low_on = fminf (low_on, key);
      else
        high_off = fmaxf (high_off, key);
    }
  return low_on > high_off;
}

/* Records ||r_b|| and decides whether problem b is finished: converged to
 * the tolerance, or stalled (the residual fell by less than 0.1 % an
 * iteration over the last 16, seed 003's test). With tolerance 0 every
 * iteration asked for runs (images: the user chose the count). */
static void
check_stop (Block *s, int b, int iteration)
{
  double rn = cblas_snrm2 ((int) s->m, col (s->r, s->m, b), 1);
  double *h = s->history + (gsize) b * HISTORY;
  double old = h[iteration % HISTORY];
  h[iteration % HISTORY] = rn;
  if (rn <= s->params->tolerance * s->y_norm[b] || !(rn > 0))
    {
      /* The residual followed by updates drifts: confirm on a fresh one. */
      column_residual (s, b, col (s->x, s->n, b), col (s->r, s->m, b));
      rn = cblas_snrm2 ((int) s->m, col (s->r, s->m, b), 1);
      s->done[b] = rn <= s->params->tolerance * s->y_norm[b] || !(rn > 0);
      return;
    }
  if (s->params->tolerance > 0 && iteration >= 2 * HISTORY && old > 0
      && pow (rn / old, 1.0 / HISTORY) > 0.999)
    s->done[b] = TRUE;
}

static gboolean
all_done (const Block *s)
{
  for (int b = 0; b < s->batch; b++)
    if (!s->done[b])
      return FALSE;
  return TRUE;
}

/* w = g on the support (0 off it, and 0 for finished problems); returns
 * nothing, the norms are taken per column by the caller. */
static void
restrict_gradient (Block *s, const guint8 *masks)
{
  for (int b = 0; b < s->batch; b++)
    {
      const float *g = col (s->g, s->n, b);
      const guint8 *mask = masks + (gsize) b * s->n;
      float *w = col (s->w, s->n, b);
      if (s->done[b])
        memset (w, 0, s->n * sizeof (float));
      else
#pragma omp parallel for simd schedule(static) if (s->n > PARALLEL_MIN)
        for (gsize i = 0; i < s->n; i++)
          w[i] = mask[i] ? g[i] : 0.0f;
    }
}

/* ---- start --------------------------------------------------------------- */

/* x = H_k(x) when a start is given; from zero, IHT, NIHT and HTP take the
 * support of H_k(Aᵀy) with x still 0 (their first step then stays on it:
 * the support test needs k entries on the support), CoSaMP starts from the
 * empty support and merges the gradient's 2k largest into it. */
static void
greedy_start (Block *s)
{
  refresh_residual (s);
  s->A->adjoint (s->A, s->r, s->g, s->batch);
  SsCsAlgorithm alg = s->params->algorithm;
  for (int b = 0; b < s->batch; b++)
    {
      float *x = col (s->x, s->n, b);
      guint8 *mask = s->support + (gsize) b * s->n;
      gboolean zero = TRUE;
      for (gsize i = 0; i < s->n && zero; i++)
        zero = x[i] == 0.0f;
      if (!zero)
        hard_threshold (s, x, s->k, x, mask);
      else if (alg != SS_CS_COSAMP)
        hard_threshold (s, col (s->g, s->n, b), s->k, s->trial, mask);
    }
  refresh_residual (s);
}

/* ---- NIHT / IHT steps ------------------------------------------------------ */

/* The step on problem b when the support may change: x⁺ = H_k(x + μg), and
 * NIHT's safeguard: accept when μ <= (1 − c)||x⁺ − x||² / ||A(x⁺ − x)||²,
 * else shrink μ (Blumensath–Davies, c = 0.01, κ = 2). */
static void
niht_step_new_support (Block *s, int b, double mu, gboolean safeguard)
{
  const double c = 0.01, kappa = 2.0;
  float *x = col (s->x, s->n, b), *g = col (s->g, s->n, b), *r = col (s->r, s->m, b);
  guint8 *mask = s->support + (gsize) b * s->n;
  g_autofree guint8 *new_mask = g_new (guint8, s->n);
  g_autofree float *x_new = g_new (float, s->n);
  for (int attempt = 0; attempt < 12; attempt++)
    {
      for (gsize i = 0; i < s->n; i++)
        s->trial[i] = x[i] + (float) mu * g[i];
      hard_threshold (s, s->trial, s->k, x_new, new_mask);
      column_residual (s, b, x_new, s->r_trial);
      if (!safeguard || memcmp (new_mask, mask, s->n) == 0)
        break;
      double dx2 = 0, dr2 = 0;
      for (gsize i = 0; i < s->n; i++)
        dx2 += ((double) x_new[i] - x[i]) * ((double) x_new[i] - x[i]);
      for (gsize i = 0; i < s->m; i++)
        dr2 += ((double) r[i] - s->r_trial[i]) * ((double) r[i] - s->r_trial[i]);
      if (dr2 == 0 || mu <= (1 - c) * dx2 / dr2)
        break;
      mu /= kappa * (1 - c);
    }
  memcpy (x, x_new, s->n * sizeof (float));
  memcpy (mask, new_mask, s->n);
  memcpy (r, s->r_trial, s->m * sizeof (float));
}

/* One NIHT (or IHT, with the fixed step OMEGA > 0) iteration on the block. */
/* g = Aᵀ r, w = g on the support, A w: the gradient restricted to the
 * support and its image, for the whole block. */
static void
restricted_gradient (Block *s)
{
  s->A->adjoint (s->A, s->r, s->g, s->batch);
  restrict_gradient (s, s->support);
  s->A->apply (s->A, s->w, s->aw, s->batch);
}

/* NIHT's step for problem b: ||g_T||² / ||A g_T||², the best step if the
 * support is right (or OMEGA when > 0: IHT's fixed step). */
static double
restricted_step (Block *s, int b, double omega)
{
  if (omega > 0)
    return omega;
  float *w = col (s->w, s->n, b), *aw = col (s->aw, s->m, b);
  double aw2 = dot (aw, aw, s->m);
  return aw2 > 0 ? dot (w, w, s->n) / aw2 : 0;
}

static void
niht_iteration (Block *s, int iteration, double omega)
{
  restricted_gradient (s);
  for (int b = 0; b < s->batch; b++)
    {
      if (s->done[b])
        continue;
      float *x = col (s->x, s->n, b), *g = col (s->g, s->n, b), *w = col (s->w, s->n, b);
      float *r = col (s->r, s->m, b), *aw = col (s->aw, s->m, b);
      double mu = restricted_step (s, b, omega);
      if (!(mu > 0))
        {
          s->done[b] = TRUE;
          continue;
        }
      s->stats->support_checks++;
      if (support_kept (s, x, g, (float) mu, s->support + (gsize) b * s->n))
        {
          /* x + μ g_T stays on T: the residual follows without an apply. */
          cblas_saxpy ((int) s->n, (float) mu, w, 1, x, 1);
          cblas_saxpy ((int) s->m, (float) -mu, aw, 1, r, 1);
        }
      else
        niht_step_new_support (s, b, mu, omega <= 0);
      check_stop (s, b, iteration);
    }
  /* Updates accumulate rounding: a fresh residual now and then. */
  if (iteration % 32 == 0)
    refresh_residual (s);
}

/* ---- least squares on a support (HTP, CoSaMP) ----------------------------- */

/* x_b = argmin ||y_b − A z|| over z supported on MASKS_b, by CGLS from x_b
 * (warm start) for at most ITERATIONS steps; leaves r = y − A x. The CG
 * direction lives in w, A w in aw, the restricted gradient in g. */
static void
project_on_supports (Block *s, const guint8 *masks, int iterations)
{
  refresh_residual (s);
  s->A->adjoint (s->A, s->r, s->g, s->batch);
  g_autofree double *gamma = g_new (double, s->batch), *gamma0 = g_new (double, s->batch);
  g_autofree gboolean *active = g_new (gboolean, s->batch);
  restrict_gradient (s, masks);
  memcpy (s->g, s->w, s->n * s->batch * sizeof (float));
  for (int b = 0; b < s->batch; b++)
    {
      gamma[b] = gamma0[b] = dot (col (s->g, s->n, b), col (s->g, s->n, b), s->n);
      active[b] = !s->done[b] && gamma[b] > 0;
    }
  for (int it = 0; it < iterations; it++)
    {
      s->A->apply (s->A, s->w, s->aw, s->batch);
      gboolean any = FALSE;
      for (int b = 0; b < s->batch; b++)
        {
          if (!active[b])
            continue;
          float *x = col (s->x, s->n, b), *w = col (s->w, s->n, b);
          float *r = col (s->r, s->m, b), *aw = col (s->aw, s->m, b);
          double q2 = dot (aw, aw, s->m);
          float step = q2 > 0 ? (float) (gamma[b] / q2) : 0.0f;
          cblas_saxpy ((int) s->n, step, w, 1, x, 1);
          cblas_saxpy ((int) s->m, -step, aw, 1, r, 1);
          any = TRUE;
        }
      if (!any)
        break;
      s->A->adjoint (s->A, s->r, s->g, s->batch);
      for (int b = 0; b < s->batch; b++)
        {
          float *g = col (s->g, s->n, b), *w = col (s->w, s->n, b);
          const guint8 *mask = masks + (gsize) b * s->n;
          if (!active[b])
            {
              memset (w, 0, s->n * sizeof (float));
              continue;
            }
          for (gsize i = 0; i < s->n; i++)
            g[i] = mask[i] ? g[i] : 0.0f;
          double gamma_new = dot (g, g, s->n);
          double beta = gamma[b] > 0 ? gamma_new / gamma[b] : 0;
          for (gsize i = 0; i < s->n; i++)
            w[i] = g[i] + (float) beta * w[i];
          gamma[b] = gamma_new;
          /* Float32 gives about seven digits: past them CG only wanders. */
          if (gamma_new <= 1e-14 * gamma0[b])
            {
              active[b] = FALSE;
              memset (w, 0, s->n * sizeof (float));
            }
        }
    }
  refresh_residual (s);
}

static void
htp_iteration (Block *s, int iteration)
{
  restricted_gradient (s);
  for (int b = 0; b < s->batch; b++)
    {
      if (s->done[b])
        continue;
      float *x = col (s->x, s->n, b), *g = col (s->g, s->n, b);
      guint8 *mask = s->support + (gsize) b * s->n;
      double mu = restricted_step (s, b, 0);
      s->stats->support_checks++;
      if (!support_kept (s, x, g, (float) mu, mask))
        {
          for (gsize i = 0; i < s->n; i++)
            s->trial[i] = x[i] + (float) mu * g[i];
          hard_threshold (s, s->trial, s->k, x, mask);
        }
    }
  project_on_supports (s, s->support, s->params->inner_iterations);
  for (int b = 0; b < s->batch; b++)
    if (!s->done[b])
      {
        if (s->params->nonneg)
          {
            float *x = col (s->x, s->n, b);
            for (gsize i = 0; i < s->n; i++)
              x[i] = fmaxf (x[i], 0.0f);
          }
        check_stop (s, b, iteration);
      }
  if (s->params->nonneg)
    refresh_residual (s);
}

static void
cosamp_iteration (Block *s, int iteration)
{
  s->A->adjoint (s->A, s->r, s->g, s->batch);
  gsize wide = MIN (2 * s->k, s->n);
  for (int b = 0; b < s->batch; b++)
    {
      guint8 *merged = s->merged + (gsize) b * s->n;
      const guint8 *mask = s->support + (gsize) b * s->n;
      if (s->done[b])
        {
          memcpy (merged, mask, s->n);
          continue;
        }
      /* The gradient's 2k largest, with either sign even under x >= 0:
       * a negative entry may still be a direction that lowers the residual. */
      ss_cs_top_k (col (s->g, s->n, b), s->n, wide, FALSE, s->scratch, s->indices);
      s->stats->support_searches++;
      memcpy (merged, mask, s->n);
      for (gsize j = 0; j < wide; j++)
        merged[s->indices[j]] = 1;
    }
  project_on_supports (s, s->merged, s->params->inner_iterations);
  for (int b = 0; b < s->batch; b++)
    if (!s->done[b])
      {
        float *x = col (s->x, s->n, b);
        memcpy (s->trial, x, s->n * sizeof (float));
        hard_threshold (s, s->trial, s->k, x, s->support + (gsize) b * s->n);
      }
  refresh_residual (s);
  for (int b = 0; b < s->batch; b++)
    if (!s->done[b])
      check_stop (s, b, iteration);
}

/* ---- FISTA and ALM ----------------------------------------------------------- */

/* FISTA on the block, towards TARGET (m x batch), thresholds THRESHOLD_b / L,
 * from x, for ITERATIONS steps. Momentum restarts at each call. */
static void
fista_run (Block *s, const float *target, const double *threshold, int iterations)
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
          float *x = col (s->x, s->n, b), *v = col (yk, s->n, b), *gr = col (grad, s->n, b);
          for (gsize i = 0; i < s->n; i++)
            {
              float a = v[i] - step * gr[i];
              float x_new = fmaxf (a - th, 0.0f) + (nonneg ? 0.0f : fminf (a + th, 0.0f));
              v[i] = x_new + beta * (x_new - x[i]);
              x[i] = x_new;
            }
        }
    }
}

static void
fista_solve (Block *s)
{
  g_autofree double *threshold = g_new (double, s->batch);
  for (int b = 0; b < s->batch; b++)
    threshold[b] = s->params->alpha;
  fista_run (s, s->y, threshold, s->params->iterations);
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
static gboolean report (const SsCsParams *p, int iteration, const float *x, gboolean last,
                        GError **error);

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
      const float *g = col (s->g, s->n, b);
      for (gsize i = 0; i < s->n; i++)
        top = fmaxf (top, fabsf (g[i]));
      rho[b] = bp ? 2.0 / MAX (top, 1e-30f) : 1.0;
    }
  for (int outer = 1; outer <= s->params->iterations; outer++)
    {
      for (int b = 0; b < s->batch; b++)
        {
          const float *y = s->y + b * s->m;
          float *tb = col (target, s->m, b), *lb = col (lambda, s->m, b), *eb = col (e, s->m, b);
          for (gsize i = 0; i < s->m; i++)
            tb[i] = y[i] - eb[i] + lb[i] / (float) rho[b];
          threshold[b] = (bp ? 1.0 : s->params->alpha) / rho[b];
        }
      fista_run (s, target, threshold, s->params->inner_iterations);
      refresh_residual (s);
      for (int b = 0; b < s->batch; b++)
        {
          float *r = col (s->r, s->m, b), *lb = col (lambda, s->m, b), *eb = col (e, s->m, b);
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
      /* FISTA reports once, at the end (the image FISTA is ss-cpu-fista.c). */
      fista_solve (&s);
      stats->iterations = params->iterations;
      ok = report (params, stats->iterations, x, TRUE, error);
    }
  else if (ok && params->algorithm == SS_CS_ALM)
    ok = alm_solve (&s, error);
  else if (ok)
    {
      double omega = params->algorithm == SS_CS_IHT ? 1.0 / ss_linop_lipschitz (A) : 0.0;
      greedy_start (&s);
      int it = 0;
      while (ok && it < params->iterations && !all_done (&s))
        {
          it++;
          switch (params->algorithm)
            {
            case SS_CS_HTP: htp_iteration (&s, it); break;
            case SS_CS_COSAMP: cosamp_iteration (&s, it); break;
            default: niht_iteration (&s, it, omega); break;
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
          xp[support[j]] = (float) v;
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
