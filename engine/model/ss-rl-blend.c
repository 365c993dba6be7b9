/* ss-rl-blend.c: the brightness blend's ladder and choice (ss-rl-blend.h). */
#include "ss-rl-blend.h"

/* The range of ratios f tried, log-centred on 2, 4 and 8: the ladder's
 * rungs are a factor 2 apart, so three of them always fall inside. */
#define SS_RL_BLEND_MIN_RATIO G_SQRT2
#define SS_RL_BLEND_MAX_RATIO (8 * G_SQRT2)

int
ss_rl_blend_ladder_slot (int iterations)
{
  if (iterations <= 0 || iterations % SS_RL_HOLDOUT_EVERY != 0)
    return -1;
  guint rung = (guint) (iterations / SS_RL_HOLDOUT_EVERY);
  if ((rung & (rung - 1)) != 0)
    return -1;
  return g_bit_nth_msf (rung, -1) % SS_RL_BLEND_SLOTS;
}

int
ss_rl_blend_best_iterations (const SsRlHoldout *holdout)
{
  return isfinite (holdout->best_error) ? holdout->best + 1 : 0;
}

int
ss_rl_blend_candidates (const SsRlBlendLadder *ladder, const SsRlHoldout *holdout, int *slots)
{
  int best = ss_rl_blend_best_iterations (holdout), count = 0;
  for (int i = 0; i < SS_RL_BLEND_SLOTS; i++)
    {
      int at = ladder->iterations[i];
      if (at <= 0)
        continue;
      double ratio = (double) best / at;
      if (ratio >= SS_RL_BLEND_MIN_RATIO && ratio < SS_RL_BLEND_MAX_RATIO)
        slots[count++] = i;
    }
  return count;
}

void
ss_rl_blend_choose (SsRlHoldout *holdout, const SsRlBlendLadder *ladder, const int *slots,
                    int count, const double *errors)
{
  double chosen = errors[0];
  for (int i = 0; i < count; i++)
    if (errors[1 + i] < chosen)
      {
        chosen = errors[1 + i];
        holdout->blend_ratio
          = (double) ss_rl_blend_best_iterations (holdout) / ladder->iterations[slots[i]];
        holdout->blend_error = errors[0] > 0 ? errors[1 + i] / errors[0] : 0;
      }
}

double
ss_rl_blend_level (double noise)
{
  return isfinite (noise) && noise > 0 ? SS_RL_BLEND_SIGMAS * noise : 0.0;
}

int
ss_rl_blend_early_iterations (int full, double ratio)
{
  if (!(ratio > 1.0))
    return 0;
  int early = (int) lround (full / ratio);
  return early >= 1 && early < full ? early : 0;
}
