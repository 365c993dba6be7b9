/* ss-rl-holdout.h: Richardson–Lucy's hold-out stopping rule ('--stop
 * holdout'), shared by both backends.
 *
 * RL's image improves, then fits the noise; where the turn comes depends on
 * the scene more than on the residual. The discrepancy rule (ss-rl.h) stops
 * when the residual reaches the noise, which is right on extended scenes and
 * 3–4 dB short on sparse bright fields, where positivity holds RL and it
 * keeps improving long after. This rule asks the data instead:
 *
 *   1. a validation run: RL on three quarters of the observed pixels (a
 *      fixed pseudo-random choice, ss_rl_holdout_kept), its prediction
 *      C z + β compared with the other quarter every SS_RL_HOLDOUT_EVERY
 *      iterations; the held-out squared error falls while RL recovers the
 *      scene and rises once it fits noise, so its minimum k* is where RL on
 *      three quarters of the data should stop. The error is summed over the
 *      held-out pixels whose neighbours' data stand at least
 *      SS_RL_HOLDOUT_SOURCE_SIGMAS noise σ above the sky on average
 *      (ss_rl_holdout_source_level, ss_rl_holdout_neighbour_level): on a
 *      sparse field the dark sky's pixels are most of the frame, and the
 *      turn of their fit to noise came long before the stars stopped
 *      sharpening;
 *   2. the run on all the data, from the same start, for
 *      SS_RL_HOLDOUT_SCALE · k* iterations: with more pixels the noise holds
 *      the estimate back less per iteration (k* on extended light, where
 *      no blend is chosen and the floor stays at the sky:
 *      SS_RL_HOLDOUT_SCALE_EXTENDED).
 *
 * How much later the full run's best iteration comes depends on the scene:
 * about k* on the Sun (whose best count hardly depends on how much of the
 * data is fitted), more than twice k* on star fields, where positivity holds
 * RL back. The closer the validation's data are to all of them, the less
 * that matters; the fewer held-out pixels, the noisier the minimum. Measured
 * with quality's rl (QUALITY.md), the loss against RL's best iteration
 * (chosen with the truth) over the seven full cases of draws 0-4 (35): half
 * the pixels and 2k* (the rule as first built) lost up to 0.96 dB (the Sun
 * at FWHM 2, stopped at twice its best), 3.06 dB summed over draws 0-2; a
 * quarter held out and 4/3 k* up to 0.43 (galaxies), 1.21 summed; a quarter
 * and 1.5k* up to 0.26, 1.04 summed, and on draws 3 and 4, which played no
 * part in the choice, up to 0.23 against 0.91 for the first rule; a fifth
 * and 1.5k* up to 0.26, 1.08 summed. Only the image's own
 * pixels are split (SsProblem.image): a padded frame's border repeats them,
 * and fitting a held-out pixel's mirror image would leak it into the fit.
 * The noise model plays no
 * part (a split of the pixels, not of the counts), so read noise, unknown
 * gain and blank pixels need nothing special.
 *
 * Both runs count against the solve's iteration cap: the validation run
 * takes at most half of it and the full run at most what is left, so
 * progress and cost stay within what the caller asked for. */
#pragma once

#include "ss-host-device.h"
#include "ss-solver.h"

#include <glib.h>
#include <math.h>
#include <stdint.h>

/* The held-out error is read every this many iterations of the validation run. */
#define SS_RL_HOLDOUT_EVERY 5
/* One pixel in this many is held out; the validation run fits the others. */
#define SS_RL_HOLDOUT_FOLDS 4
/* The full run takes this many times the validation run's best iteration
 * where the validation chose a blend or the floor is raised ... */
#define SS_RL_HOLDOUT_SCALE 1.5
/* ... and this many where the validation chose no blend and the floor stays
 * at the sky: extended light (the Hubble field, the Sun at FWHM 5), whose
 * best count on all the data is about k* (0.82–1.04 k* on quality's draws
 * 6–8), where 1.5 k* overshot it by 0.05–0.35 dB. Where a blend is chosen
 * (galaxies, the Sun at FWHM 2: 1.4–1.9 k*, the blend keeping the faint
 * light's earlier image) or the floor is raised (star fields, held back
 * by positivity: more than 2 k*), the full run keeps 1.5. Measured on
 * quality's draws 0–12 (QUALITY.md, "The full run at the validation's
 * count on extended light"). */
#define SS_RL_HOLDOUT_SCALE_EXTENDED 1.0
/* Held-out pixels count when their neighbours' data exceed the sky by this
 * many σ on average (ss_rl_holdout_neighbour_level). With each pixel judged
 * by its own datum (the rule until 2026-11-27), measured on quality's ten
 * cases (full and small), the loss against RL's best iteration, largest and
 * median: 0 σ (every pixel) 3.0 and 0.1 dB (a 128² field of stars at 300 e⁻
 * stopped at 53 iterations of its best 200+); 1 σ 0.48 and 0.05; 3 σ 0.48
 * and 0.2; 5 σ 0.48 and 0.3. Judged by the neighbours (QUALITY.md, "RL's
 * hold-out pixels judged by their neighbours"), 2 σ against the own datum's
 * 1 σ on 30 cases of other PSFs and peaks (10²-10⁴ e⁻): +4.99, +4.57,
 * +3.70, +1.27 and +0.48 dB at a peak of 10² (the old rule ran to its cap
 * on four of them), +0.37 at 10³, −0.19 to +0.09 elsewhere; on quality's
 * seven cases −0.19 (the Hubble crop at FWHM 3) to +0.14. 1 σ lost 1.0 dB
 * on a galaxy field at 300 e⁻; 3 σ measured as 2 σ on the seven. */
#define SS_RL_HOLDOUT_SOURCE_SIGMAS 2.0
/* Where the validation run reached its cap, the error was still falling
 * and the full run takes every iteration left: RL is stopped by the count,
 * not by the data, and an accelerated run (ss-rl-accel.h) gets further in
 * as many. So that run extrapolates with at least this cap, plain RL
 * elsewhere. Measured (QUALITY.md, "The full run accelerated where the
 * validation reached its cap") on the 26 of 77 cases whose validation
 * reached its cap, 0.3 changed 19: +4.49 dB summed, −0.41 to +1.40; on 24
 * fresh cases it changed 13: +5.93 dB, −0.055 to +1.31, the gains on
 * Moffats of FWHM 3.5–5; on quality's own kinds (draws 6–12) it changed 10
 * of 49, +0.00 dB, −0.22 to +0.40. 0.5 gained +6.13 on the first 19 but
 * lost up to 0.80 dB (Gaussians, a Moffat of 2.5). */
#define SS_RL_HOLDOUT_CAPPED_ACCEL 0.3

/* TRUE for the pixels the validation run fits (all but one in
 * SS_RL_HOLDOUT_FOLDS); the others are held out. A fixed hash of the
 * pixel's index (lowbias32), so the split is the same on every run and on
 * both backends, and has no pattern a blur could align with. */
SS_HOST_DEVICE_FN int
ss_rl_holdout_kept (size_t pixel)
{
  uint32_t x = (uint32_t) pixel ^ (uint32_t) (pixel >> 32) ^ 0x9e3779b9u;
  x ^= x >> 16;
  x *= 0x7feb352du;
  x ^= x >> 15;
  x *= 0x846ca68bu;
  x ^= x >> 16;
  return (int) (x % SS_RL_HOLDOUT_FOLDS != 0u);
}

enum { SS_RL_HOLDOUT_NONE, SS_RL_HOLDOUT_FIT, SS_RL_HOLDOUT_TEST };

/* The part PIXEL of a frame FRAME_WIDTH wide plays in the validation run:
 * fitted, held out (tested), or none when outside IMAGE (width 0: the whole
 * frame). Whether it is observed at all is the caller's mask. */
SS_HOST_DEVICE_FN int
ss_rl_holdout_role (size_t pixel, int frame_width, SsRegion image)
{
  if (image.width > 0)
    {
      int col = (int) (pixel % (size_t) frame_width), row = (int) (pixel / (size_t) frame_width);
      if (col < image.x0 || col >= image.x0 + image.width || row < image.y0
          || row >= image.y0 + image.height)
        return SS_RL_HOLDOUT_NONE;
    }
  return ss_rl_holdout_kept (pixel) ? SS_RL_HOLDOUT_FIT : SS_RL_HOLDOUT_TEST;
}

/* The level a held-out pixel is judged by: the mean of its observed
 * neighbours' data (the 8 around it, inside the frame; −∞ when none is
 * observed), not its own datum. Picked by its own datum, a pixel is picked
 * for its noise as much as for its source, and its error then measures that
 * noise too: where the sky's noise dominates (the Hubble crop blurred by a
 * Gaussian of FWHM 5, a peak of 10² e⁻ over a sky of 10² e⁻) most pixels
 * over the level were sky, the held-out error kept falling to the cap, and
 * RL ran 2000 iterations, 4.6 dB under the same RL stopped by this rule
 * (179). The neighbours' noise is independent of the pixel's, and their
 * mean carries a third of a pixel's. */
SS_HOST_DEVICE_FN float
ss_rl_holdout_neighbour_level (const float *y, const unsigned char *mask, int width, int height,
                               size_t pixel)
{
  int col = (int) (pixel % (size_t) width), row = (int) (pixel / (size_t) width);
  float sum = 0.0f;
  int count = 0;
  for (int r = MAX (row - 1, 0); r <= MIN (row + 1, height - 1); r++)
    for (int c = MAX (col - 1, 0); c <= MIN (col + 1, width - 1); c++)
      {
        size_t j = (size_t) r * (size_t) width + (size_t) c;
        if (j == pixel || (mask != NULL && !mask[j]))
          continue;
        sum += y[j];
        count++;
      }
  return count > 0 ? sum / (float) count : -INFINITY;
}

G_BEGIN_DECLS

typedef struct SsRlHoldout {
  int cap;            /* the validation run's iteration limit */
  int every;          /* iterations between readings */
  int best;           /* iterations of the estimate with the smallest held-out error so far */
  double best_error;
  double blend_ratio; /* the brightness blend the run chose (ss-rl-blend.h): the best's
                         count over E's; 0 for none */
  double blend_error; /* that blend's held-out error over the best's; 0 for none */
} SsRlHoldout;

/* The level (engine units, y sky-subtracted) above which a held-out pixel
 * counts: SIGMAS (SS_RL_HOLDOUT_SOURCE_SIGMAS for RL) times NOISE, the
 * noise of y (the setup's, ss-rl.h), or −∞ (every pixel) when it is
 * unknown. */
double ss_rl_holdout_source_level (double noise, double sigmas);

/* For a solve capped at ITERATIONS; FALSE when the cap is too short for a
 * validation run to tell anything (fewer than 4·SS_RL_HOLDOUT_EVERY): the
 * solver then runs its iterations on all the data. */
gboolean ss_rl_holdout_init (SsRlHoldout *holdout, int iterations);
/* The same with readings every EVERY iterations (>= 1) instead of
 * SS_RL_HOLDOUT_EVERY: FALSE below 4·EVERY iterations, a patience of at
 * least 2·EVERY. */
gboolean ss_rl_holdout_init_every (SsRlHoldout *holdout, int iterations, int every);

/* Records the held-out error ERROR of the estimate after ESTIMATE_ITERATIONS
 * iterations of the validation run; TRUE when the run can end: the error
 * has not improved for max(k* / 2, 2·every) iterations past its
 * best k*, or the cap is reached. */
gboolean ss_rl_holdout_record (SsRlHoldout *holdout, int estimate_iterations, double error);

/* The full run's iterations: SS_RL_HOLDOUT_SCALE · k* where the validation
 * chose a blend (holdout->blend_ratio > 1) or RAISED (the floor raised
 * above a flat sky), else SS_RL_HOLDOUT_SCALE_EXTENDED · k*; or all of
 * REMAINING when k* reached the validation cap (the error was still
 * falling); at least 1 and at most REMAINING. */
int ss_rl_holdout_full_iterations (const SsRlHoldout *holdout, gboolean raised, int remaining);

/* The full run's extrapolation cap (ss-rl-accel.h): ACCEL, the one asked
 * (SsSolveParams.rl_accel), or SS_RL_HOLDOUT_CAPPED_ACCEL where that is
 * less and k* reached the validation cap. */
double ss_rl_holdout_full_accel (const SsRlHoldout *holdout, double accel);

/* ss_rl_holdout_full_accel's cap where it is above ACCEL (the rule raised
 * it: SsSolveResult.full_accel), else 0. */
double ss_rl_holdout_raised_accel (const SsRlHoldout *holdout, double accel);

G_END_DECLS
