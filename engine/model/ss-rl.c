/* ss-rl.c: Richardson–Lucy's setup from the data (see ss-rl.h). */
#include "ss-rl.h"
#include "ss-error.h"
#include "ss-noise.h"
#include "ss-scaling.h"

#include <math.h>

/* The kernel is C applied to a unit impulse at pixel 0. An operator built
 * from a kernel was checked then (kernel_nonnegative); one built from its
 * spectrum alone is checked here, at the cost of a transform pair. */
gboolean
ss_rl_check_operator (const SsOperator *op, GError **error)
{
  if (op->kernel_nonnegative)
    return TRUE;
  gsize n = (gsize) op->width * op->height;
  g_autofree float *impulse = g_new0 (float, n);
  g_autofree float *kernel = g_new (float, n);
  impulse[0] = 1.0f;
  g_autoptr (SsOperator) plain = ss_operator_new_from_parts (op->width, op->height, op->chat,
                                                             NULL, error);
  if (plain == NULL || !ss_operator_apply (plain, impulse, kernel, error))
    return FALSE;
  double low = 0, high = 0;
  for (gsize i = 0; i < n; i++)
    {
      low = MIN (low, kernel[i]);
      high = MAX (high, kernel[i]);
    }
  /* FFT rounding leaves about 1e-7 of the peak below zero on a true blur. */
  if (high > 0 && low >= -1e-4 * high)
    return TRUE;
  g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT,
               "Richardson–Lucy needs a non-negative blur, but this operator's kernel reaches "
               "%.3g of its peak (random sensing?): use CPADMM or FISTA", low / high);
  return FALSE;
}

/* WEIGHT = Cᵀ(P1). With every pixel observed it needs no transform: the
 * spectrum of a constant is its DC term alone, so Cᵀ1 is c^'s DC term (real)
 * everywhere. On a camera frame that saves a full-size FFT pair (~0.5 s on
 * the host for 27 megapixels). */
static gboolean
adjoint_of_mask (const SsOperator *op, float *weight, GError **error)
{
  gsize n = (gsize) op->width * op->height;
  if (op->mask == NULL)
    {
      const float dc = (float) ss_operator_dc (op);
      for (gsize i = 0; i < n; i++)
        weight[i] = dc;
      return TRUE;
    }
  g_autofree float *ones = g_new (float, n);
  for (gsize i = 0; i < n; i++)
    ones[i] = op->mask[i] ? 1.0f : 0.0f;
  return ss_operator_apply_adjoint (op, ones, weight, error);
}

/* min of Cᵀ(P y')/Cᵀ(P1) over the pixels that see observations: the darkest
 * level of the data, smoothed twice by the blur. */
gboolean
ss_rl_darkest_level (const SsOperator *op, const float *y, double offset, SsRegion tail_region,
                     double tail_level, double *level, double *sky_tail, GError **error)
{
  gsize n = (gsize) op->width * op->height;
  g_autofree float *shifted = g_new (float, n);
  g_autofree float *sum = g_new (float, n);
  g_autofree float *weight = g_new (float, n);
  for (gsize i = 0; i < n; i++)
    {
      gboolean observed = op->mask == NULL || op->mask[i];
      shifted[i] = observed ? (float) MAX (y[i] + offset, 0) : 0.0f;
    }
  if (!ss_operator_apply_adjoint (op, shifted, sum, error)
      || !adjoint_of_mask (op, weight, error))
    return FALSE;
  float top = ss_rl_weight_top (weight, n);
  *level = ss_rl_darkest_of (sum, weight, n, top);
  *sky_tail = ss_rl_sky_tail_of (sum, weight, n, top, op->width, tail_region, tail_level);
  return TRUE;
}

float
ss_rl_weight_top (const float *weight, gsize n)
{
  float top = 0;
  for (gsize i = 0; i < n; i++)
    top = fmaxf (top, weight[i]);
  return top;
}

double
ss_rl_darkest_of (const float *sum, const float *weight, gsize n, float top)
{
  double low = INFINITY;
  for (gsize i = 0; i < n; i++)
    if (weight[i] > 0.5 * top)
      low = MIN (low, sum[i] / weight[i]);
  return isfinite (low) ? MAX (low, 0) : 0;
}

double
ss_rl_sky_tail_of (const float *sum, const float *weight, gsize n, float top, int width,
                   SsRegion region, double level)
{
  if (isnan (level))
    return NAN;
  gsize counted = 0, below = 0;
  for (int y = region.y0; y < region.y0 + region.height; y++)
    for (int x = region.x0; x < region.x0 + region.width; x++)
      {
        gsize i = (gsize) y * width + x;
        if (weight[i] > 0.5 * top)
          {
            counted++;
            below += sum[i] < level * weight[i];
          }
      }
  return ss_rl_sky_tail_from_counts ((double) counted, (double) below);
}

SsRegion
ss_rl_sky_tail_region (const SsProblem *problem)
{
  const SsOperator *op = problem->op;
  SsRegion image = problem->image;
  if (image.width <= 0 || image.height <= 0)
    return (SsRegion) { 0, 0, op->width, op->height };
  /* Inset by the padding's margins, which are the blur's reach: there the
   * smoothing sees only the image's own pixels, not the border's mirror
   * (whose repeated noise smooths less) or flat blend. */
  int mx = MIN (image.x0, (image.width - 1) / 2), my = MIN (image.y0, (image.height - 1) / 2);
  return (SsRegion) { image.x0 + mx, image.y0 + my, image.width - 2 * mx,
                      image.height - 2 * my };
}

double
ss_rl_sky_tail_from_counts (double counted, double below)
{
  /* Φ(−t) = erfc(t/√2)/2, the share of white noise t σ below its mean. */
  double gaussian = 0.5 * erfc (SS_RL_SKY_TAIL_SIGMAS / G_SQRT2);
  return counted > 0 ? below / (counted * gaussian) : NAN;
}

double
ss_rl_sky_tail_level (const SsRlSetup *setup, double blur_norm)
{
  if (!setup->sky || !(setup->noise > 0) || !(blur_norm > 0))
    return NAN;
  return setup->offset - SS_RL_SKY_TAIL_SIGMAS * setup->noise * blur_norm;
}

void
ss_rl_invert_weight (float *weight, gsize n, float top)
{
  for (gsize i = 0; i < n; i++)
    weight[i] = weight[i] > (float) SS_RL_WEIGHT_FLOOR * top ? 1.0f / weight[i] : 0.0f;
}

void
ss_rl_invert_weight_at_top (float *weight, gsize n)
{
  ss_rl_invert_weight (weight, n, ss_rl_weight_top (weight, n));
}

float *
ss_rl_weight (const SsOperator *op, GError **error)
{
  gsize n = (gsize) op->width * op->height;
  g_autofree float *weight = g_new (float, n);
  if (!adjoint_of_mask (op, weight, error))
    return NULL;
  ss_rl_invert_weight_at_top (weight, n);
  return g_steal_pointer (&weight);
}

gboolean
ss_rl_offset (const SsProblem *problem, const char *who, double *offset, double *mean,
              double *top, GError **error)
{
  const SsOperator *op = problem->op;
  gsize n = (gsize) op->width * op->height;
  double low = 0, high = 0, sum = 0;
  gsize count = 0;
  for (gsize i = 0; i < n; i++)
    if (op->mask == NULL || op->mask[i])
      {
        low = MIN (low, problem->y[i]);
        high = MAX (high, problem->y[i]);
        sum += problem->y[i];
        count++;
      }
  if (count == 0 || !(high > 0))
    {
      g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT,
                   "%s needs some positive observed data", who);
      return FALSE;
    }
  double background = isfinite (problem->background) ? MAX (problem->background, 0) : 0;
  *offset = MAX (background, -low) + 1e-6 * high;
  if (mean)
    *mean = sum / (double) count + *offset;
  if (top)
    *top = high;
  return TRUE;
}

gboolean
ss_rl_check_problem (const SsProblem *problem, GError **error)
{
  double offset;
  return ss_rl_check_operator (problem->op, error)
         && ss_rl_offset (problem, "Richardson–Lucy", &offset, NULL, NULL, error);
}

gboolean
ss_rl_setup_data (const SsProblem *problem, const SsSolveParams *params, SsRlSetup *setup,
                  GError **error)
{
  const SsOperator *op = problem->op;
  if (!ss_rl_check_operator (op, error))
    return FALSE;
  if (!ss_rl_offset (problem, "Richardson–Lucy", &setup->offset, &setup->mean, &setup->top,
                     error))
    return FALSE;
  double background = isfinite (problem->background) ? MAX (problem->background, 0) : 0;
  setup->darkest = NAN;
  setup->background = NAN;
  setup->start = NAN;
  setup->stop_level = -1;
  setup->observed = (double) op->m;
  setup->sky = background > 0;
  setup->floor = params->rl_floor;
  setup->sky_floor = setup->raised = FALSE;
  setup->floor_error_ratio = 0;
  setup->sky_tail = NAN;
  setup->tail_region = ss_rl_sky_tail_region (problem);
  /* The noise serves the stopping rules and the sky-floor test; the median
   * only the discrepancy rule. Measured once, here, when anything needs it. */
  gboolean discrepancy = params->rl_stop == SS_RL_STOP_DISCREPANCY;
  double noise = NAN, median = NAN;
  if (discrepancy || setup->sky || params->rl_stop == SS_RL_STOP_HOLDOUT)
    ss_problem_noise_and_median (problem, &noise, discrepancy ? &median : NULL);
  setup->noise = noise;
  if (discrepancy)
    {
      double variance = noise * noise;
      median += setup->offset;
      if (isfinite (variance))
        setup->stop_level = SS_RL_DISCREPANCY_FACTOR
                            * (background > 0 && median > 0 ? variance * setup->mean / median
                                                            : variance);
    }
  return TRUE;
}

void
ss_rl_spectrum_norms (const float *chat, int width, int height, double *blur_norm,
                      double *smoothing)
{
  int spec_width = width / 2 + 1;
  double dc2 = (double) chat[0] * chat[0] + (double) chat[1] * chat[1], sum2 = 0, sum4 = 0;
  for (int ky = 0; ky < height; ky++)
    for (int kx = 0; kx < spec_width; kx++)
      {
        const float *c = chat + 2 * ((gsize) ky * spec_width + kx);
        double power = (double) c[0] * c[0] + (double) c[1] * c[1];
        double weight = ss_half_spectrum_weight (kx, width);
        sum2 += weight * power;
        sum4 += weight * power * power;
      }
  double n = (double) width * height;
  *blur_norm = dc2 > 0 ? sqrt (sum2 / n / dc2) : NAN;
  *smoothing = dc2 > 0 ? sqrt (sum4 / n) / dc2 : NAN;
}

void
ss_rl_setup_finish (SsRlSetup *setup, double darkest, double smoothing, double sky_tail)
{
  setup->sky_tail = sky_tail;
  setup->darkest = MIN (darkest, setup->offset);
  setup->background = setup->darkest;
  double dip = setup->noise * smoothing * sqrt (2.0 * log (MAX (setup->observed, 2.0)));
  if (setup->sky && isfinite (dip) && dip > 0
      && setup->offset - setup->darkest <= SS_RL_SKY_FLOOR_DIPS * dip)
    setup->sky_floor = TRUE;
  if (setup->sky_floor)
    ss_rl_setup_raise_floor (setup, setup->floor == SS_RL_FLOOR_RAISED);
  else
    setup->start = MAX (setup->mean - setup->background, 1e-6 * setup->top);
}

void
ss_rl_setup_raise_floor (SsRlSetup *setup, gboolean raise)
{
  if (!setup->sky_floor)
    return;
  setup->raised = raise;
  setup->background = setup->offset + (raise ? SS_RL_FLOOR_SIGMAS * setup->noise : 0.0);
  setup->start = MAX (setup->mean - setup->background, 1e-6 * setup->top);
}

double
ss_rl_estimate_shift (const SsRlSetup *setup)
{
  return setup->raised ? 0.0 : setup->background - setup->offset;
}

gboolean
ss_rl_floor_choosable (const SsRlSetup *setup)
{
  return setup->floor == SS_RL_FLOOR_HOLDOUT && setup->sky_floor
         && setup->sky_tail < SS_RL_SKY_TAIL_LIMIT;
}

gboolean
ss_rl_setup_choose_floor (SsRlSetup *setup, double sky_error, double raised_error)
{
  setup->floor_error_ratio = raised_error / sky_error;
  gboolean keep = isfinite (raised_error)
                  && raised_error <= (1 + SS_RL_FLOOR_TOLERANCE) * sky_error;
  if (!keep)
    ss_rl_setup_raise_floor (setup, FALSE);
  return keep;
}

void
ss_rl_result_floor (const SsRlSetup *setup, int floor_iterations, SsSolveResult *result)
{
  result->floor_raised = setup->raised;
  result->floor_iterations = floor_iterations;
  result->floor_error_ratio = setup->floor_error_ratio;
  gboolean read = setup->floor == SS_RL_FLOOR_HOLDOUT && setup->sky_floor
                  && isfinite (setup->sky_tail);
  result->floor_sky_tail = read ? setup->sky_tail : 0;
  if (setup->floor == SS_RL_FLOOR_RAISED && !setup->raised)
    ss_solve_result_add_warning (result, "--floor raised not applied: the data's floor is not "
                                         "a flat sky, so Richardson–Lucy's background stays the "
                                         "darkest level of the smoothed data");
}

gboolean
ss_rl_setup (const SsProblem *problem, const SsSolveParams *params, SsRlSetup *setup,
             GError **error)
{
  double darkest, sky_tail, blur_norm = NAN, smoothing = NAN;
  if (!ss_rl_setup_data (problem, params, setup, error))
    return FALSE;
  const SsOperator *op = problem->op;
  if (op->chat)
    ss_rl_spectrum_norms (op->chat, op->width, op->height, &blur_norm, &smoothing);
  if (!ss_rl_darkest_level (op, problem->y, setup->offset, setup->tail_region,
                            ss_rl_sky_tail_level (setup, blur_norm), &darkest, &sky_tail, error))
    return FALSE;
  ss_rl_setup_finish (setup, darkest, smoothing, sky_tail);
  return TRUE;
}
