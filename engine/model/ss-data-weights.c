/* ss-data-weights.c: ADMM's data-term weights (see ss-data-weights.h). */
#include "ss-data-weights.h"
#include "ss-error.h"
#include "ss-rl.h"
#include "ss-scaling.h"

gboolean
ss_poisson_term_init (const SsProblem *problem, SsPoissonTerm *term, GError **error)
{
  const SsOperator *op = problem->op;
  gsize n = (gsize) op->width * op->height;
  double mean;
  if (!ss_rl_offset (problem, "the Poisson data term", &term->offset, &mean, NULL, error))
    return FALSE;
  g_autofree float *measured = g_new (float, n);
  gsize m = 0;
  for (gsize i = 0; i < n; i++)
    if (op->mask == NULL || op->mask[i])
      measured[m++] = problem->y[i] + (float) term->offset;
  /* The median can be 0 on data that are mostly empty: then the mean level. */
  double level = ss_median (measured, m);
  term->level = level > 0 ? level : mean;
  return TRUE;
}

void
ss_data_weights_fill (const SsProblem *problem, const SsSolveParams *params, float *weight)
{
  const SsOperator *op = problem->op;
  gsize n = (gsize) op->width * op->height;
  double level = 0;
  if (params->data_term == SS_DATA_WLS)
    {
      g_autofree float *measured = g_new (float, n);
      gsize m = 0;
      for (gsize i = 0; i < n; i++)
        if (op->mask == NULL || op->mask[i])
          measured[m++] = problem->y[i] + (float) problem->background;
      level = m > 0 ? ss_median (measured, m) : 0;
    }
  for (gsize i = 0; i < n; i++)
    {
      gboolean observed = op->mask == NULL || op->mask[i];
      double measured = problem->y[i] + problem->background;
      weight[i] = !observed ? 0.0f : level > 0 ? (float) (level / MAX (measured, level)) : 1.0f;
    }
}
