/* ss-cs-solve-greedy.c: the greedy iterations of seed 003 (IHT, NIHT, HTP,
 * CoSaMP) on a block of problems, with what only they use: selection, the
 * support test, the stopping test and the least squares on a support.
 * ss-cs-solve.c holds the block's state and the driver that calls them. */
#include "ss-cs-solve-private.h"

#include <cblas.h>
#include <math.h>
#include <string.h>

/* ---- products, selection, the support and stopping tests ---------------- */

/* Loops shorter than this run on one thread: waking a team costs more. */
#define PARALLEL_MIN 16384

static double
dot (const float *a, const float *b, gsize n)
{
  double sum = 0;
#pragma omp parallel for simd reduction(+ : sum) schedule(static) if (n > PARALLEL_MIN)
  for (gsize i = 0; i < n; i++)
    sum += (double) a[i] * b[i];
  return sum;
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
  double rn = cblas_snrm2 ((int) s->m, ss_cs_col (s->r, s->m, b), 1);
  double *h = s->history + (gsize) b * HISTORY;
  double old = h[iteration % HISTORY];
  h[iteration % HISTORY] = rn;
  if (rn <= s->params->tolerance * s->y_norm[b] || !(rn > 0))
    {
      /* The residual followed by updates drifts: confirm on a fresh one. */
      column_residual (s, b, ss_cs_col (s->x, s->n, b), ss_cs_col (s->r, s->m, b));
      rn = cblas_snrm2 ((int) s->m, ss_cs_col (s->r, s->m, b), 1);
      s->done[b] = rn <= s->params->tolerance * s->y_norm[b] || !(rn > 0);
      return;
    }
  if (s->params->tolerance > 0 && iteration >= 2 * HISTORY && old > 0
      && pow (rn / old, 1.0 / HISTORY) > 0.999)
    s->done[b] = TRUE;
}

/* w = g on the support (0 off it, and 0 for finished problems); returns
 * nothing, the norms are taken per column by the caller. */
static void
restrict_gradient (Block *s, const guint8 *masks)
{
  for (int b = 0; b < s->batch; b++)
    {
      const float *g = ss_cs_col (s->g, s->n, b);
      const guint8 *mask = masks + (gsize) b * s->n;
      float *w = ss_cs_col (s->w, s->n, b);
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
void
ss_cs_greedy_start (Block *s)
{
  ss_cs_refresh_residual (s);
  s->A->adjoint (s->A, s->r, s->g, s->batch);
  SsCsAlgorithm alg = s->params->algorithm;
  for (int b = 0; b < s->batch; b++)
    {
      float *x = ss_cs_col (s->x, s->n, b);
      guint8 *mask = s->support + (gsize) b * s->n;
      gboolean zero = TRUE;
      for (gsize i = 0; i < s->n && zero; i++)
        zero = x[i] == 0.0f;
      if (!zero)
        hard_threshold (s, x, s->k, x, mask);
      else if (alg != SS_CS_COSAMP)
        hard_threshold (s, ss_cs_col (s->g, s->n, b), s->k, s->trial, mask);
    }
  ss_cs_refresh_residual (s);
}

/* ---- NIHT / IHT steps ------------------------------------------------------ */

/* The step on problem b when the support may change: x⁺ = H_k(x + μg), and
 * NIHT's safeguard: accept when μ <= (1 − c)||x⁺ − x||² / ||A(x⁺ − x)||²,
 * else shrink μ (Blumensath–Davies, c = 0.01, κ = 2). */
static void
niht_step_new_support (Block *s, int b, double mu, gboolean safeguard)
{
  const double c = 0.01, kappa = 2.0;
  float *x = ss_cs_col (s->x, s->n, b), *g = ss_cs_col (s->g, s->n, b),
        *r = ss_cs_col (s->r, s->m, b);
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
  float *w = ss_cs_col (s->w, s->n, b), *aw = ss_cs_col (s->aw, s->m, b);
  double aw2 = dot (aw, aw, s->m);
  return aw2 > 0 ? dot (w, w, s->n) / aw2 : 0;
}

void
ss_cs_niht_iteration (Block *s, int iteration, double omega)
{
  restricted_gradient (s);
  for (int b = 0; b < s->batch; b++)
    {
      if (s->done[b])
        continue;
      float *x = ss_cs_col (s->x, s->n, b), *g = ss_cs_col (s->g, s->n, b),
            *w = ss_cs_col (s->w, s->n, b);
      float *r = ss_cs_col (s->r, s->m, b), *aw = ss_cs_col (s->aw, s->m, b);
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
    ss_cs_refresh_residual (s);
}

/* ---- least squares on a support (HTP, CoSaMP) ----------------------------- */

/* x_b = argmin ||y_b − A z|| over z supported on MASKS_b, by CGLS from x_b
 * (warm start) for at most ITERATIONS steps; leaves r = y − A x. The CG
 * direction lives in w, A w in aw, the restricted gradient in g. Finished
 * problems (done) are left alone. ss_cs_debias shares it. */
void
ss_cs_project_on_supports (Block *s, const guint8 *masks, int iterations)
{
  ss_cs_refresh_residual (s);
  s->A->adjoint (s->A, s->r, s->g, s->batch);
  g_autofree double *gamma = g_new (double, s->batch), *gamma0 = g_new (double, s->batch);
  g_autofree gboolean *active = g_new (gboolean, s->batch);
  restrict_gradient (s, masks);
  memcpy (s->g, s->w, s->n * s->batch * sizeof (float));
  for (int b = 0; b < s->batch; b++)
    {
      gamma[b] = gamma0[b] = dot (ss_cs_col (s->g, s->n, b), ss_cs_col (s->g, s->n, b), s->n);
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
          float *x = ss_cs_col (s->x, s->n, b), *w = ss_cs_col (s->w, s->n, b);
          float *r = ss_cs_col (s->r, s->m, b), *aw = ss_cs_col (s->aw, s->m, b);
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
          float *g = ss_cs_col (s->g, s->n, b), *w = ss_cs_col (s->w, s->n, b);
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
  ss_cs_refresh_residual (s);
}

void
ss_cs_htp_iteration (Block *s, int iteration)
{
  restricted_gradient (s);
  for (int b = 0; b < s->batch; b++)
    {
      if (s->done[b])
        continue;
      float *x = ss_cs_col (s->x, s->n, b), *g = ss_cs_col (s->g, s->n, b);
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
  ss_cs_project_on_supports (s, s->support, s->params->inner_iterations);
  for (int b = 0; b < s->batch; b++)
    if (!s->done[b])
      {
        if (s->params->nonneg)
          {
            float *x = ss_cs_col (s->x, s->n, b);
            for (gsize i = 0; i < s->n; i++)
              x[i] = fmaxf (x[i], 0.0f);
          }
        check_stop (s, b, iteration);
      }
  if (s->params->nonneg)
    ss_cs_refresh_residual (s);
}

void
ss_cs_cosamp_iteration (Block *s, int iteration)
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
      ss_cs_top_k (ss_cs_col (s->g, s->n, b), s->n, wide, FALSE, s->scratch, s->indices);
      s->stats->support_searches++;
      memcpy (merged, mask, s->n);
      for (gsize j = 0; j < wide; j++)
        merged[s->indices[j]] = 1;
    }
  ss_cs_project_on_supports (s, s->merged, s->params->inner_iterations);
  for (int b = 0; b < s->batch; b++)
    if (!s->done[b])
      {
        float *x = ss_cs_col (s->x, s->n, b);
        memcpy (s->trial, x, s->n * sizeof (float));
        hard_threshold (s, s->trial, s->k, x, s->support + (gsize) b * s->n);
      }
  ss_cs_refresh_residual (s);
  for (int b = 0; b < s->batch; b++)
    if (!s->done[b])
      check_stop (s, b, iteration);
}
