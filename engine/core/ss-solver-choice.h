/* ss-solver-choice.h: the `auto` solver (SS_SOLVER_AUTO): Richardson–Lucy
 * or ALM, whichever predicts pixels it was not shown better.
 *
 * RL, the real-image default, is the better of the two on extended light
 * and bright stars; ALM's pixel ℓ1 is 2 dB better on faint star fields
 * (QUALITY.md). Which one a frame is cannot be told from either solver's own
 * hold-out minimum (ALM's validation stops short of its full run), but it
 * can from their results: each candidate runs in full (RL with its hold-out
 * stop, ALM as the seed runs it) on the image with a quarter of its pixels
 * held out (another split than
 * the rules' own, SS_RL_HOLDOUT_FOLDS), its estimate's prediction C x of
 * that quarter is compared with the data there, and the candidate with the
 * smaller squared error runs again on all the pixels. Measured with
 * `deblur` on quality's 28 cases of draws 0–3, this picked the better of
 * the two every time (ALM on the four faint-star fields, by 2.0–2.3 dB). The
 * price: both candidates' runs before the chosen one's, two to three times
 * RL's time on an image of up to two megapixels; a larger frame is judged on
 * its central megapixel, which costs a tenth of RL's time on a camera frame
 * (PERFORMANCE.md). */
#pragma once

#include "ss-pixel-l1.h"

G_BEGIN_DECLS

/* A frame of more than SS_SOLVER_CHOICE_CROP_FRAMES crops of
 * SS_SOLVER_CHOICE_CROP² pixels is judged on its central crop. */
#define SS_SOLVER_CHOICE_CROP 1024
#define SS_SOLVER_CHOICE_CROP_FRAMES 2

/* TRUE for a pixel the choice fits; the others (one in SS_RL_HOLDOUT_FOLDS)
 * are held out. A hash of the pixel index other than ss_rl_holdout_kept's,
 * so that the candidates' own hold-out rules still find pixels to hold out
 * among those fitted here. */
gboolean ss_solver_choice_kept (gsize pixel);

/* Candidate KIND's parameters under PARAMS (`auto`'s): its own defaults, the
 * α and positivity asked of `auto`, RL's hold-out stop; the ℓ1 solvers'
 * hold-out rule off (the choice is their hold-out: ss-solver-choice.c says
 * why), so ALM runs the seed's outer steps. */
SsSolveParams ss_solver_choice_candidate (const SsSolveParams *params, SsSolverKind kind);

/* Solves PROBLEM as PARAMS's solver (one with candidates) with SOLVE, a
 * backend's solve with every rule (ss_backend_solve): the candidates on the
 * fitted pixels (of the central CROP_SIDE² crop when the frame has more
 * than SS_SOLVER_CHOICE_CROP_FRAMES such crops; CROP_SIDE 0: never), then
 * the chosen one on all of them. Reports count on across the runs, only
 * the last run's last is final, and a crop's carry no preview; RESULT is
 * the chosen run's, its iterations counting every run's, the choice in
 * words in result->choice. */
gboolean ss_solver_choice_solve (SsSolveOnceFunc solve, gpointer backend, const SsProblem *problem,
                                 const SsSolveParams *params, int crop_side, SsReportFunc report,
                                 gpointer user_data, GCancellable *cancellable,
                                 SsSolveResult *result, GError **error);

/* The descriptor's CPU entry: the same on a CPU backend. */
gboolean ss_solver_choice_cpu (const SsProblem *problem, const SsSolveParams *params,
                               SsReportFunc report, gpointer user_data, GCancellable *cancellable,
                               SsSolveResult *result, GError **error);

G_END_DECLS
