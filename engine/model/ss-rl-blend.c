/* ss-rl-blend.c: the brightness blend's ladder and choice (ss-rl-blend.h). */
#include "ss-rl-blend.h"
#include "ss-rl-holdout.h"

/* The range of ratios f tried, log-centred on 2, 4 and 8: the ladder's
 * rungs are a factor 2 apart, so three of them always fall inside. */
#define SS_RL_BLEND_MIN_RATIO G_SQRT2
#define SS_RL_BLEND_MAX_RATIO (8 * G_SQRT2)

int
ss_rl_blend_ladder_slot (int iterations)
{
  if (iterations <= 0 || iterations % SS_RL_HOLDOUT_EVERY != 0)
    return -1;
  int rung = iterations / SS_RL_HOLDOUT_EVERY;
  if ((rung & (rung - 1)) != 0)
    return -1;
  int power = 0;
  while (rung > 1)
    {
      rung >>= 1;
      power++;
    }
  return power % SS_RL_BLEND_SLOTS;
}

int
ss_rl_blend_candidates (const SsRlBlendLadder *ladder, int best, int *slots)
{
  int count = 0;
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
