/* ss-rl-holdout.c: the hold-out rule's bookkeeping (ss-rl-holdout.h). */
#include "ss-rl-holdout.h"

#include <math.h>

gboolean
ss_rl_holdout_init_every (SsRlHoldout *holdout, int iterations, int every)
{
  holdout->cap = iterations / 2;
  holdout->every = MAX (every, 1);
  holdout->best = 0;
  holdout->best_error = INFINITY;
  holdout->blend_ratio = holdout->blend_error = 0;
  return iterations >= 4 * holdout->every;
}

gboolean
ss_rl_holdout_init (SsRlHoldout *holdout, int iterations)
{
  return ss_rl_holdout_init_every (holdout, iterations, SS_RL_HOLDOUT_EVERY);
}

gboolean
ss_rl_holdout_record (SsRlHoldout *holdout, int estimate_iterations, double error)
{
  if (isfinite (error) && error < holdout->best_error)
    {
      holdout->best_error = error;
      holdout->best = estimate_iterations;
    }
  /* The curve is smooth (a sum over half the frame) and turns once: a
   * patience of half the best count, at least two readings, is enough to
   * tell a minimum from a pause, and bounds the wasted work to half the
   * validation run. Not less: on RL's curves of 76 cases and 160 windows
   * (2026-11-27, QUALITY.md's sets), a third of the best count would have
   * saved 5–7% of the validation's iterations but ended 5 runs at a pause,
   * most at 10² e⁻ where the raised floor's curve dips, rises and falls
   * again: k* 109 for 219 (bright stars, Gaussian 2.5), 44 for 284 and 59
   * for the cap's 1004 (windows at Gaussian 5). */
  int patience = MAX (holdout->best / 2, 2 * holdout->every);
  return estimate_iterations >= holdout->cap || estimate_iterations >= holdout->best + patience;
}

int
ss_rl_holdout_full_iterations (const SsRlHoldout *holdout, gboolean raised, int remaining)
{
  gboolean later = raised || holdout->blend_ratio > 1.0;
  double scale = later ? SS_RL_HOLDOUT_SCALE : SS_RL_HOLDOUT_SCALE_EXTENDED;
  int full = (int) ceil (scale * MAX (holdout->best, 1));
  /* Reaching the cap means the error was still falling: use every iteration. */
  if (holdout->best >= holdout->cap)
    full = remaining;
  return CLAMP (full, 1, MAX (remaining, 1));
}

double
ss_rl_holdout_full_accel (const SsRlHoldout *holdout, double accel)
{
  if (holdout->best >= holdout->cap)
    return MAX (accel, SS_RL_HOLDOUT_CAPPED_ACCEL);
  return accel;
}

double
ss_rl_holdout_raised_accel (const SsRlHoldout *holdout, double accel)
{
  double full = ss_rl_holdout_full_accel (holdout, accel);
  return full > accel ? full : 0;
}

double
ss_rl_holdout_source_level (double noise, double sigmas)
{
  return isfinite (noise) && noise > 0 ? sigmas * noise : -INFINITY;
}
