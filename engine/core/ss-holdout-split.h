/* ss-holdout-split.h: a problem cut in two for a hold-out rule: a
 * validation problem that fits some of the observed pixels and whose reports
 * read its prediction of the others (SsReport.held_out). The pixel-sparsity
 * rules (ss-pixel-l1.h) and `auto`'s choice (ss-solver-choice.h) cut it each
 * their own way. */
#pragma once

#include "ss-rl-holdout.h"
#include "ss-solver.h"

G_BEGIN_DECLS

/* The part observed pixel PIXEL of a frame FRAME_WIDTH wide plays:
 * SS_RL_HOLDOUT_FIT, SS_RL_HOLDOUT_TEST, or SS_RL_HOLDOUT_NONE (neither),
 * IMAGE being where the frame's own pixels lie (ss_rl_holdout_role's). */
typedef int (*SsHoldoutRoleFunc) (gsize pixel, int frame_width, SsRegion image);

typedef struct {
  SsOperator op;          /* the problem's, with the fitted pixels as its mask */
  const float *chat;      /* the problem's spectrum (NULL: deferred) */
  SsProblem problem;      /* what the validation solves */
  SsHeldOut held;
  guint8 *fit, *counted;
  float *y;
  gsize fitted, tested;   /* pixels fitted, held-out pixels counted */
} SsHoldoutSplit;

/* Cuts PROBLEM as ROLE says: the fitted pixels become the mask, their data
 * kept; a held-out pixel counts where LEVELS (n floats, NULL: everywhere)
 * exceed LEVEL. FALSE when no pixel is fitted; clear S either way. */
gboolean ss_holdout_split_build (SsHoldoutSplit *s, const SsProblem *problem,
                                 SsHoldoutRoleFunc role, const float *levels, float level);
void ss_holdout_split_clear (SsHoldoutSplit *s);

G_END_DECLS
