/* ss-holdout-split.c: a problem cut in two for a hold-out rule
 * (ss-holdout-split.h). */
#include "ss-holdout-split.h"
#include "ss-mem.h"

gboolean
ss_holdout_split_build (SsHoldoutSplit *s, const SsProblem *problem, SsHoldoutRoleFunc role,
                        const float *levels, float level)
{
  const SsOperator *op = problem->op;
  gsize n = (gsize) op->width * op->height;
  s->fit = g_new0 (guint8, n);
  s->counted = g_new0 (guint8, n);
  s->y = g_new0 (float, n);
  s->fitted = s->tested = 0;
  for (gsize i = 0; i < n; i++)
    {
      if (op->mask && !op->mask[i])
        continue;
      int part = role (i, op->width, problem->image);
      if (part == SS_RL_HOLDOUT_FIT)
        {
          s->fit[i] = 1;
          s->y[i] = problem->y[i];
          s->fitted++;
        }
      else if (part == SS_RL_HOLDOUT_TEST && (levels == NULL || levels[i] > level))
        {
          s->counted[i] = 1;
          s->tested++;
        }
    }
  s->op = *op;   /* shares c^, or a deferred operator's kernel */
  s->chat = op->chat;
  if (s->fitted == 0)
    return FALSE;
  s->op.mask = s->fit;
  s->op.m = s->fitted;
  s->held = (SsHeldOut) { problem->y, s->counted };
  s->problem = *problem;
  s->problem.op = &s->op;
  s->problem.y = s->y;
  s->problem.held_out = &s->held;
  return TRUE;
}

void
ss_holdout_split_clear (SsHoldoutSplit *s)
{
  /* A deferred operator's copy gets its own spectrum where a CPU run needs
   * one (the GPU makes it on the device). */
  if (s->op.chat != s->chat)
    ss_mem_free (NULL, s->op.chat, 0);
  g_clear_pointer (&s->fit, g_free);
  g_clear_pointer (&s->counted, g_free);
  g_clear_pointer (&s->y, g_free);
}
