/* ss-rl-blend.h: RL's late image blended with an earlier one by brightness,
 * chosen by the hold-out rule's validation run (ss-rl-holdout.h); shared by
 * both backends.
 *
 * RL sharpens bright sources long after the faint ones have started to fit
 * noise, so one iteration count is a compromise between them. The blend
 * keeps the full run's last estimate L where the scene is bright and an
 * earlier, smoother iterate E where it is faint:
 *
 *   B = E + w (L − E),   w = E₊ / (E₊ + SS_RL_BLEND_SIGMAS σ)
 *
 * (x units, σ the data's noise). Whether to blend, and how early E is, the
 * validation run decides on its own held-out pixels: it keeps its iterate
 * at every reading that improves the held-out error (the best, L's
 * counterpart) and at readings SS_RL_HOLDOUT_EVERY · 2^j (a ladder, the
 * last SS_RL_BLEND_SLOTS of them), and at its end predicts the held-out
 * pixels with each blend of the best and a ladder iterate f = 1.4–11 times
 * earlier. The blend that predicts them best, if any predicts them better
 * than the best alone, is used by the full run with E at its own count
 * over f. Measured before it was built (QUALITY.md, "The true sky as RL's,
 * and RL's iterates blended by brightness"), with E chosen from k/2, k/4
 * and k/8 by separate runs: over 43 cases +3.54 dB summed, the worst −0.01,
 * the galaxies +0.58; as built, +5.08 dB over those cases (the worst
 * −0.015) and +4.45 over 39 held out (the worst −0.09), the galaxies +0.59
 * (QUALITY.md, "RL's iterates blended by brightness, chosen by its
 * validation"). The ladder costs SS_RL_BLEND_SLOTS + 1 images of memory and
 * a copy per improving reading, no iterations. Measured and not kept: the
 * level chosen too, from 3, 10 and 30 σ (−0.03 and +0.26 dB over the two
 * sets, the worst −0.19), and the weight read from E's 3 × 3 mean (−2.3 and
 * −1.5 dB). */
#pragma once

#include "ss-host-device.h"
#include "ss-rl-holdout.h"

#include <glib.h>
#include <math.h>

/* The ladder iterates kept: enough that those 1.4–11 times earlier than
 * the best are all there when the run ends (at most 1.5 times the best's
 * count, ss_rl_holdout_record's patience). */
#define SS_RL_BLEND_SLOTS 5
/* The blend's weight reaches a half at this many noise σ. */
#define SS_RL_BLEND_SIGMAS 10.0

/* B's value from E's and L's (z units, x = z + SHIFT) and the level
 * SS_RL_BLEND_SIGMAS σ (LEVEL > 0). */
SS_HOST_DEVICE_FN float
ss_rl_blend_value (float early, float late, float shift, float level)
{
  float bright = fmaxf (early + shift, 0.0f);
  return early + bright / (bright + level) * (late - early);
}

G_BEGIN_DECLS

typedef struct SsRlBlendLadder {
  int iterations[SS_RL_BLEND_SLOTS]; /* the run's count at each slot's iterate; 0 when empty */
} SsRlBlendLadder;

/* The slot the iterate after ITERATIONS iterations of a validation run
 * goes to, or −1 when it is not a ladder reading. */
int ss_rl_blend_ladder_slot (int iterations);

/* The count of the iterate kept for HOLDOUT's best: the rule's best is z
 * after `best` iterations, whose error the ratio of the next iteration
 * measured; the iterate kept at that reading is z after best + 1. 0 before
 * any reading. */
int ss_rl_blend_best_iterations (const SsRlHoldout *holdout);

/* The ladder's slots whose iterates are 1.4–11 times earlier than the
 * best's (ss_rl_blend_best_iterations of HOLDOUT): their indices into
 * SLOTS (at most SS_RL_BLEND_SLOTS), their count returned. */
int ss_rl_blend_candidates (const SsRlBlendLadder *ladder, const SsRlHoldout *holdout,
                            int *slots);

/* Records in HOLDOUT the blend with the least held-out error, where it is
 * under the best's alone: ERRORS[0] the best's, ERRORS[1 + i] the blend
 * with SLOTS[i]'s iterate, for the COUNT candidates. */
void ss_rl_blend_choose (SsRlHoldout *holdout, const SsRlBlendLadder *ladder, const int *slots,
                         int count, const double *errors);

/* The level SS_RL_BLEND_SIGMAS σ for the data's NOISE σ; 0 when the noise
 * is not known (no blend). */
double ss_rl_blend_level (double noise);

/* The full run's iterations at which E is kept, for a run of FULL and the
 * chosen ratio RATIO (> 1); 0 when no blend (RATIO 0, or FULL too short to
 * have an earlier iterate). */
int ss_rl_blend_early_iterations (int full, double ratio);

G_END_DECLS
