/* ss-cpu-rl.c: Richardson–Lucy and RL-TV on the CPU (the reference).
 *
 *   z ← z ⊙ Cᵀ(P y' ⊘ (Cz + β)) ⊘ Cᵀ(P1) ⊘ (1 − λ div(∇z/|∇z|))
 *
 * on the data as measured, y' = (y + b)₊, with the background β, and
 * x = z + β − b (ss-rl.h: the engine's data are sky-subtracted); P is the
 * observation mask: unobserved and blank pixels take no part in the
 * ratio, and Cᵀ(P1) normalises by how much of each pixel's light is
 * observed. A pixel that reaches no observed pixel keeps its value. The TV
 * factor is ss-rl-tv.h's, shared with the GPU. Two FFT pairs an iteration,
 * one more at each report point (the metrics need Cx of the new estimate).
 * The discrepancy rule is checked at report points only, as on the GPU,
 * where checking means a reduction and a wait. The hold-out rule
 * (ss-rl-holdout.h) runs RL twice: on three quarters of P, measuring the
 * other quarter in the ratio's pass, then on all of P; the iterations and
 * reports of both count as one run. The validation keeps iterates for the
 * brightness blend (ss-rl-blend.h) and chooses it at its end; the full run
 * then keeps E at its count and blends its last estimate. With acceleration
 * (ss-rl-accel.h) each step starts from the extrapolated point, put in x
 * before the step, so the ratio, the step and the held-out reading all see
 * the point the step is taken from, as on the GPU. Where the validation
 * reached its cap, the full run is accelerated even when the validation
 * was not (ss_rl_holdout_full_accel).
 */
#include "ss-cpu-private.h"
#include "ss-error.h"
#include "ss-rl.h"
#include "ss-rl-accel.h"
#include "ss-rl-blend.h"
#include "ss-rl-holdout.h"
#include "ss-rl-tv.h"

#include <math.h>
#include <string.h>

/* The brightness blend's iterates (ss-rl-blend.h): in a validation run the
 * best reading's and the ladder's, in the full run E in ladder[0]. */
typedef struct {
  float level;      /* SS_RL_BLEND_SIGMAS σ; 0 when there is no blend to choose */
  float *best;
  float *ladder[SS_RL_BLEND_SLOTS];
  SsRlBlendLadder at;
} RlBlend;

/* The extrapolation's state (ss-rl-accel.h); CAP 0: plain RL, no buffers. */
typedef struct {
  float cap;
  double factor;    /* a for the next step */
  float *previous;  /* z before the last step */
  float *move;      /* g of the last step: its new z less the point it started from */
} RlAccel;

typedef struct {
  gsize n;
  const SsOperator *op;
  SsRegion image;   /* SsProblem.image: the pixels the hold-out rule splits */
  guint8 *roles;    /* in the hold-out rule's validation run, each pixel's part: FIT, TEST
                       (held out, observed, its neighbours above the source level) or NONE;
                       else NULL */
  const SsFft *fft;
  SsRlSetup setup;
  float *x, *next, *real, *spectrum;   /* x holds z */
  float *weight;    /* 1 / Cᵀ(P1) (ss_rl_weight's), 0 where no light is observed */
  RlBlend blend;
  RlAccel accel;
} RlState;

/* The extrapolation at CAP from the next restart on; its buffers are
 * allocated the first time (the full run may be accelerated alone,
 * ss_rl_holdout_full_accel). */
static gboolean
accel_set (RlState *s, double cap, SsMemCounter *mem, GError **error)
{
  RlAccel *a = &s->accel;
  gsize bytes = s->n * sizeof (float);
  if (cap > 0
      && !((a->previous || (a->previous = ss_mem_alloc (mem, bytes, error)))
           && (a->move || (a->move = ss_mem_alloc (mem, bytes, error)))))
    return FALSE;
  a->cap = (float) cap;
  return TRUE;
}

static gboolean
state_alloc (RlState *s, double accel, SsMemCounter *mem, GError **error)
{
  gsize bytes = s->n * sizeof (float);
  gsize spec = ss_fft_spectrum_floats (s->op->width, s->op->height) * sizeof (float);
  return (s->x = ss_mem_alloc (mem, bytes, error)) && (s->next = ss_mem_alloc (mem, bytes, error))
         && (s->real = ss_mem_alloc (mem, bytes, error))
         && (s->weight = ss_mem_alloc (mem, bytes, error))
         && (s->spectrum = ss_mem_alloc (mem, spec, error))
         && accel_set (s, accel, mem, error);
}

static void
state_free (RlState *s, SsMemCounter *mem)
{
  ss_mem_free (mem, s->x, 0);
  ss_mem_free (mem, s->next, 0);
  ss_mem_free (mem, s->real, 0);
  ss_mem_free (mem, s->weight, 0);
  ss_mem_free (mem, s->spectrum, 0);
  ss_mem_free (mem, s->roles, 0);
  ss_mem_free (mem, s->accel.previous, 0);
  ss_mem_free (mem, s->accel.move, 0);
  ss_mem_free (mem, s->blend.best, 0);
  for (int i = 0; i < SS_RL_BLEND_SLOTS; i++)
    ss_mem_free (mem, s->blend.ladder[i], 0);
}

/* The blend's buffers, where the hold-out rule runs and the noise is known. */
static gboolean
blend_alloc (RlState *s, SsMemCounter *mem, GError **error)
{
  s->blend.level = (float) ss_rl_blend_level (s->setup.noise);
  if (s->blend.level <= 0)
    return TRUE;
  gsize bytes = s->n * sizeof (float);
  if (!(s->blend.best = ss_mem_alloc (mem, bytes, error)))
    return FALSE;
  for (int i = 0; i < SS_RL_BLEND_SLOTS; i++)
    if (!(s->blend.ladder[i] = ss_mem_alloc (mem, bytes, error)))
      return FALSE;
  return TRUE;
}

/* The validation run's roles (ss-rl-holdout.h), made once: the split's
 * hash and the pixel's place in the frame cost more than the rest of a
 * ratio pass, which reads them every iteration. */
static void
holdout_roles (RlState *s, const float *y)
{
  const guint8 *mask = s->op->mask;
  const float level
    = (float) ss_rl_holdout_source_level (s->setup.noise, SS_RL_HOLDOUT_SOURCE_SIGMAS);
#pragma omp parallel for schedule(static) if (s->n > SS_PARALLEL_PIXELS)
  for (gsize i = 0; i < s->n; i++)
    {
      int role = (mask == NULL || mask[i]) ? ss_rl_holdout_role (i, s->op->width, s->image)
                                           : SS_RL_HOLDOUT_NONE;
      if (role == SS_RL_HOLDOUT_TEST
          && !(ss_rl_holdout_neighbour_level (y, mask, s->op->width, s->op->height, i) > level))
        role = SS_RL_HOLDOUT_NONE;
      s->roles[i] = role;
    }
}

/* weight = Cᵀ(P1), P the fitted pixels (the observed ones, or in the
 * validation run its fitted part): c^'s DC term everywhere when every pixel
 * is (ss-rl.c). */
static void
mask_adjoint (RlState *s)
{
  const guint8 *mask = s->op->mask;
  if (s->roles)
    {
#pragma omp parallel for schedule(static) if (s->n > SS_PARALLEL_PIXELS)
      for (gsize i = 0; i < s->n; i++)
        s->real[i] = s->roles[i] == SS_RL_HOLDOUT_FIT ? 1.0f : 0.0f;
    }
  else if (mask == NULL)
    {
      const float dc = s->op->chat[0];
#pragma omp parallel for schedule(static) if (s->n > SS_PARALLEL_PIXELS)
      for (gsize i = 0; i < s->n; i++)
        s->weight[i] = dc;
      return;
    }
  else
    {
#pragma omp parallel for schedule(static) if (s->n > SS_PARALLEL_PIXELS)
      for (gsize i = 0; i < s->n; i++)
        s->real[i] = mask[i] ? 1.0f : 0.0f;
    }
  ss_cpu_circulant (s->fft, s->op, s->real, s->real, s->spectrum, s->weight, TRUE);
}

/* The setup's transforms (ss-rl.h) with the solver's measured plan and its
 * buffers: as a one-off transform with fresh buffers (ss_rl_setup) it cost
 * more than an iteration on a 26-megapixel frame on two cores. Fills the
 * normaliser and completes the setup with the darkest level β. */
static void
measure_setup (RlState *s, const float *y)
{
  const guint8 *mask = s->op->mask;
  const float b = (float) s->setup.offset;
  mask_adjoint (s);
  /* Cᵀ(P y'), y' = (y + b)₊, into next. */
#pragma omp parallel for schedule(static) if (s->n > SS_PARALLEL_PIXELS)
  for (gsize i = 0; i < s->n; i++)
    s->real[i] = (mask == NULL || mask[i]) ? fmaxf (y[i] + b, 0.0f) : 0.0f;
  ss_cpu_circulant (s->fft, s->op, s->real, s->real, s->spectrum, s->next, TRUE);
  const SsOperator *op = s->op;
  double blur_norm, smoothing;
  ss_rl_spectrum_norms (op->chat, op->width, op->height, &blur_norm, &smoothing);
  float top = ss_rl_weight_top (s->weight, s->n);
  ss_rl_setup_finish (&s->setup, ss_rl_darkest_of (s->next, s->weight, s->n, top), smoothing,
                      ss_rl_sky_tail_of (s->next, s->weight, s->n, top, op->width,
                                         s->setup.tail_region,
                                         ss_rl_sky_tail_level (&s->setup, blur_norm)));
  ss_rl_invert_weight (s->weight, s->n, top);
}

/* real = P(y + b)₊ ⊘ (C z + β), 0 off the fitted pixels P. In the
 * validation run returns Σ (y' − C z − β)² over its TEST pixels, the
 * held-out error of z; else 0. */
static double
data_ratio (RlState *s, const float *y)
{
  ss_cpu_circulant (s->fft, s->op, s->x, s->real, s->spectrum, s->real, FALSE);
  const guint8 *mask = s->op->mask;
  const float b = (float) s->setup.offset, beta = (float) s->setup.background;
  float *r = s->real;
  double held_out = 0;
  const guint8 *roles = s->roles;
  if (roles == NULL)
    {
#pragma omp parallel for simd schedule(static) if (s->n > SS_PARALLEL_MIN)
      for (gsize i = 0; i < s->n; i++)
        {
          float observed = (mask == NULL || mask[i]) ? fmaxf (y[i] + b, 0.0f) : 0.0f;
          r[i] = observed / fmaxf (r[i] + beta, 1e-30f);
        }
      return 0;
    }
#pragma omp parallel for schedule(static) reduction(+ : held_out) if (s->n > SS_PARALLEL_MIN)
  for (gsize i = 0; i < s->n; i++)
    {
      float data = fmaxf (y[i] + b, 0.0f), model = r[i] + beta;
      if (roles[i] == SS_RL_HOLDOUT_TEST)
        {
          double d = (double) data - model;
          held_out += d * d;
        }
      r[i] = roles[i] == SS_RL_HOLDOUT_FIT ? data / fmaxf (model, 1e-30f) : 0.0f;
    }
  return held_out;
}

/* OUT = the blend of EARLY and LATE (z units, ss-rl-blend.h). */
static void
blend_into (RlState *s, float *out, const float *early, const float *late)
{
  const float shift = (float) ss_rl_estimate_shift (&s->setup), level = s->blend.level;
#pragma omp parallel for simd schedule(static) if (s->n > SS_PARALLEL_MIN)
  for (gsize i = 0; i < s->n; i++)
    out[i] = ss_rl_blend_value (early[i], late[i], shift, level);
}

/* x = the point the next step starts from (ss_rl_accel_point), previous =
 * the z it was extrapolated from. */
static void
extrapolate (RlState *s)
{
  RlAccel *a = &s->accel;
  if (a->cap <= 0)
    return;
  const float factor = (float) a->factor;
  float *x = s->x, *previous = a->previous;
#pragma omp parallel for simd schedule(static) if (s->n > SS_PARALLEL_MIN)
  for (gsize i = 0; i < s->n; i++)
    {
      float z = x[i];
      x[i] = ss_rl_accel_point (z, previous[i], factor);
      previous[i] = z;
    }
}

/* next = x ⊙ (Cᵀ ratio) ⊙ weight (⊙ TV factor); x where weight is 0.
 * Accelerated, in the same pass (as the GPU's update kernel): the move
 * g = next − x kept, and the next step's factor from how it agrees with
 * the last (ss_rl_accel_factor). */
static void
multiplicative_step (RlState *s, float lambda)
{
  float *back = s->next;
  ss_cpu_circulant (s->fft, s->op, s->real, s->real, s->spectrum, back, TRUE);
  const float *x = s->x, *weight = s->weight;
  float *move = s->accel.move;
  const gboolean accel = s->accel.cap > 0;
  const int w = s->op->width, h = s->op->height;
  double cross = 0, last = 0;
#pragma omp parallel for schedule(static) reduction(+ : cross, last) if (s->n > SS_PARALLEL_MIN)
  for (int j = 0; j < h; j++)
    for (int i = 0; i < w; i++)
      {
        gsize p = (gsize) j * w + i;
        float step = weight[p] > 0 ? back[p] * weight[p] : 1.0f;
        if (lambda > 0)
          step *= ss_rl_tv_factor (x, w, h, i, j, lambda);
        back[p] = x[p] * step;
        if (accel)
          {
            float g = back[p] - x[p];
            cross += (double) g * move[p];
            last += (double) move[p] * move[p];
            move[p] = g;
          }
      }
  if (accel)
    s->accel.factor = ss_rl_accel_factor (cross, last, s->accel.cap);
}

/* Swaps in the new estimate; returns ||z_new − z||² when MEASURE. */
static double
accept_step (RlState *s, gboolean measure)
{
  double c2 = 0;
  if (measure)
    for (gsize i = 0; i < s->n; i++)
      {
        double d = (double) s->next[i] - s->x[i];
        c2 += d * d;
      }
  float *old = s->x;
  s->x = s->next;
  s->next = old;
  return c2;
}

static double
squared_norm (const float *x, gsize n)
{
  double sum = 0;
  for (gsize i = 0; i < n; i++)
    sum += (double) x[i] * x[i];
  return sum;
}

/* The estimate in the engine's units, x = z + ss_rl_estimate_shift, in
 * s->next (free between iterations). */
static const float *
export_estimate (RlState *s)
{
  const float shift = (float) ss_rl_estimate_shift (&s->setup);
  for (gsize i = 0; i < s->n; i++)
    s->next[i] = s->x[i] + shift;
  return s->next;
}

/* ||P C x − y||²/m for X, leaving C x in s->real for the reporter. */
static double
residual (RlState *s, const float *x, const float *y)
{
  return ss_cpu_masked_misfit (s->fft, s->op, x, y, s->real, s->spectrum) / (double) s->op->m;
}

/* z from START (engine units, x = z + ss_rl_estimate_shift) or flat. */
static void
restart (RlState *s, const float *start)
{
  const float to_z = (float) -ss_rl_estimate_shift (&s->setup);
  for (gsize i = 0; i < s->n; i++)
    s->x[i] = start ? fmaxf (start[i] + to_z, 0.0f) : (float) s->setup.start;
  RlAccel *a = &s->accel;
  a->factor = 0;
  if (a->cap > 0)
    {
      memcpy (a->previous, s->x, s->n * sizeof (float));
      memset (a->move, 0, s->n * sizeof (float));
    }
}

/* RL on all the data until iteration LAST (counting on from *ITERATION),
 * reporting at the report points; the discrepancy rule ends it early when
 * on. The last report is final. With EARLY (> 0, a blend chosen), z after
 * that iteration is kept as E and the last estimate is the blend of E and
 * it (ss-rl-blend.h). */
static gboolean
full_run (RlState *s, const SsProblem *problem, const SsSolveParams *params,
          SsCpuReporter *reporter, int last, int early, int *iteration, GError **error)
{
  gboolean ok = TRUE, stop = FALSE;
  float *kept = s->blend.ladder[0];
  while (ok && !stop && *iteration < last)
    {
      extrapolate (s);
      data_ratio (s, problem->y);
      multiplicative_step (s, (float) params->tv);
      ++*iteration;
      gboolean measure = ss_cpu_is_report_point (params, *iteration) || *iteration == last;
      double change2 = accept_step (s, measure);
      if (early > 0 && *iteration == early)
        memcpy (kept, s->x, s->n * sizeof (float));
      if (early > 0 && *iteration == last)
        blend_into (s, s->x, kept, s->x);
      if (!measure)
        continue;
      /* The change relative to the estimate in the engine's units, as the
       * CUDA reporter measures it. */
      const float *x = export_estimate (s);
      double norm2 = squared_norm (x, s->n);
      stop = residual (s, x, problem->y) <= s->setup.stop_level;
      double rel = norm2 > 0 ? sqrt (change2 / norm2) : 0.0;
      gboolean final = stop || *iteration == last;
      ok = ss_cpu_reporter_emit (reporter, *iteration, x, s->real, rel, final, error);
    }
  return ok;
}

/* In the validation run, after ITERATIONS of its own: z kept as the best
 * reading's when the reading just IMPROVED the held-out error, and on the
 * ladder at its rungs. */
static void
keep_iterates (RlState *s, int iterations, gboolean improved)
{
  RlBlend *b = &s->blend;
  if (b->level <= 0)
    return;
  if (improved)
    memcpy (b->best, s->x, s->n * sizeof (float));
  int slot = ss_rl_blend_ladder_slot (iterations);
  if (slot >= 0)
    {
      memcpy (b->ladder[slot], s->x, s->n * sizeof (float));
      b->at.iterations[slot] = iterations;
    }
}

/* The held-out error of Z (the validation's roles in place); s->x and
 * s->real are overwritten. */
static double
held_out_error (RlState *s, const float *z, const float *y)
{
  memcpy (s->x, z, s->n * sizeof (float));
  return data_ratio (s, y);
}

/* At the validation run's end: the blend of its best iterate with the
 * ladder's earlier ones that predicts the held-out pixels best, into
 * HOLDOUT, where one predicts them better than the best alone. */
static void
choose_blend (RlState *s, const float *y, SsRlHoldout *holdout)
{
  RlBlend *b = &s->blend;
  int slots[SS_RL_BLEND_SLOTS];
  int count = b->level > 0 ? ss_rl_blend_candidates (&b->at, holdout, slots) : 0;
  if (count == 0)
    return;
  double errors[1 + SS_RL_BLEND_SLOTS];
  errors[0] = held_out_error (s, b->best, y);
  for (int i = 0; i < count; i++)
    {
      blend_into (s, s->next, b->ladder[slots[i]], b->best);
      errors[1 + i] = held_out_error (s, s->next, y);
    }
  ss_rl_blend_choose (holdout, &b->at, slots, count, errors);
}

/* The hold-out rule's validation run: RL fitted to the kept part of the
 * observed pixels from the flat start. Every SS_RL_HOLDOUT_EVERY-th
 * iteration's ratio, which computes C z of the estimate it starts from
 * anyway, also measures that estimate's held-out error; HOLDOUT says when
 * the run can end, after that iteration (as the GPU, which reads the error
 * at the report ending it). Reports as a run does, never final; the
 * roles and the fitted part's normaliser hold during the run, all of P's
 * normaliser after it. */
static gboolean
validation_run (RlState *s, const SsProblem *problem, SsRlHoldout *holdout,
                SsCpuReporter *reporter, SsMemCounter *mem, int *iteration, GError **error)
{
  const SsSolveParams *params = reporter->params;
  if (!(s->roles = ss_mem_alloc (mem, s->n, error)))
    return FALSE;
  holdout_roles (s, problem->y);
  mask_adjoint (s);
  ss_rl_invert_weight_at_top (s->weight, s->n);
  restart (s, NULL);
  memset (&s->blend.at, 0, sizeof s->blend.at);
  /* HOLDOUT counts this run's iterations (a second run follows a first). */
  int offset = *iteration;
  gboolean ok = TRUE, done = FALSE;
  while (ok && !done)
    {
      int starting_from = *iteration - offset;
      extrapolate (s);
      double held_out = data_ratio (s, problem->y);
      multiplicative_step (s, (float) params->tv);
      ++*iteration;
      gboolean reading = (*iteration - offset) % SS_RL_HOLDOUT_EVERY == 0;
      if (reading)
        done = ss_rl_holdout_record (holdout, starting_from, held_out);
      gboolean measure = done || ss_cpu_is_report_point (params, *iteration);
      double change2 = accept_step (s, measure);
      if (reading)
        keep_iterates (s, *iteration - offset, holdout->best == starting_from);
      if (!measure)
        continue;
      const float *x = export_estimate (s);
      double norm2 = squared_norm (x, s->n);
      residual (s, x, problem->y);
      double rel = norm2 > 0 ? sqrt (change2 / norm2) : 0.0;
      ok = ss_cpu_reporter_emit (reporter, *iteration, x, s->real, rel, FALSE, error);
    }
  if (ok)
    choose_blend (s, problem->y, holdout);
  ss_mem_free (mem, s->roles, s->n);
  s->roles = NULL;
  mask_adjoint (s);
  ss_rl_invert_weight_at_top (s->weight, s->n);
  return ok;
}

/* The hold-out rule's validation (validation_run), then, where the floor
 * is the rule's to choose (ss_rl_floor_choosable), a second one with the
 * floor raised; the floor ss_rl_setup_choose_floor keeps stays in S's
 * setup, its rule in HOLDOUT. *FIRST: the first run's iterations (the
 * solve's cap counts them, not the second's). */
static gboolean
validate (RlState *s, const SsProblem *problem, SsRlHoldout *holdout, SsCpuReporter *reporter,
          SsMemCounter *mem, int *iteration, int *first, GError **error)
{
  gboolean ok = validation_run (s, problem, holdout, reporter, mem, iteration, error);
  *first = *iteration;
  if (!ok || !ss_rl_floor_choosable (&s->setup))
    return ok;
  SsRlHoldout raised;
  ss_rl_holdout_init (&raised, reporter->params->iterations);
  ss_rl_setup_raise_floor (&s->setup, TRUE);
  ok = validation_run (s, problem, &raised, reporter, mem, iteration, error);
  if (ss_rl_setup_choose_floor (&s->setup, holdout->best_error, raised.best_error))
    *holdout = raised;
  return ok;
}

/* The run from the flat start, or from START (engine units) when given. */
static gboolean
rl_run (const SsProblem *problem, const SsSolveParams *params, const float *start,
        SsReportFunc report, gpointer user_data, GCancellable *cancellable,
        SsSolveResult *result, GError **error)
{
  RlState s = { 0 };
  s.op = problem->op;
  s.image = problem->image;
  s.n = (gsize) s.op->width * s.op->height;
  if (!ss_rl_setup_data (problem, params, &s.setup, error))
    return FALSE;
  if (!(s.fft = ss_fft_get (s.op->width, s.op->height, 1, error)))
    return FALSE;
  SsMemCounter mem = { 0 };
  SsCpuReporter reporter;
  ss_cpu_reporter_init (&reporter, problem, params, report, user_data, cancellable);
  gboolean ok = state_alloc (&s, params->rl_accel, &mem, error);
  if (ok)
    measure_setup (&s, problem->y);

  int iteration = 0, validation = 0, first = 0, blend_early = 0;
  double blend = 0, full_accel = 0;
  SsRlHoldout holdout;
  if (ok && params->rl_stop == SS_RL_STOP_HOLDOUT
      && ss_rl_holdout_init (&holdout, params->iterations))
    {
      ok = blend_alloc (&s, &mem, error)
           && validate (&s, problem, &holdout, &reporter, &mem, &iteration, &first, error);
      validation = iteration;
      int full = ss_rl_holdout_full_iterations (&holdout, s.setup.raised,
                                                params->iterations - first);
      int early = ss_rl_blend_early_iterations (full, holdout.blend_ratio);
      blend = early > 0 ? holdout.blend_error : 0;
      full_accel = ss_rl_holdout_raised_accel (&holdout, params->rl_accel);
      ok = ok && accel_set (&s, ss_rl_holdout_full_accel (&holdout, params->rl_accel), &mem,
                            error);
      restart (&s, start);
      ok = ok && full_run (&s, problem, params, &reporter, iteration + full,
                           early > 0 ? iteration + early : 0, &iteration, error);
      blend_early = early;
    }
  else if (ok)
    {
      restart (&s, start);
      ok = full_run (&s, problem, params, &reporter, params->iterations, 0, &iteration, error);
    }
  if (s.x)
    {
      mem.peak += s.op->mask ? s.n : 0;   /* the mask */
      export_estimate (&s);
      /* s.next holds the estimate: handed over, so the clean-up skips it. */
      ss_cpu_finish_result (result, &reporter, &s.next, iteration, &mem);
      result->validation_iterations = validation;
      ss_rl_result_floor (&s.setup, validation - first, result);
      result->blend_early_iterations = blend_early;
      result->blend_error_ratio = blend;
      result->full_accel = full_accel;
    }
  state_free (&s, &mem);
  ss_cpu_reporter_clear (&reporter);
  return ok;
}

gboolean
ss_cpu_rl (const SsProblem *problem, const SsSolveParams *params, SsReportFunc report,
           gpointer user_data, GCancellable *cancellable, SsSolveResult *result, GError **error)
{
  return rl_run (problem, params, NULL, report, user_data, cancellable, result, error);
}

gboolean
ss_cpu_rl_from (const SsProblem *problem, const SsSolveParams *params, const float *start,
                SsSolveResult *result, GError **error)
{
  if (!ss_operator_realize (problem->op, error))
    return FALSE;
  return rl_run (problem, params, start, NULL, NULL, NULL, result, error);
}
