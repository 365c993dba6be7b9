/* ss-data-weights.c: ADMM's data-term weights (see ss-data-weights.h). */
#include "ss-data-weights.h"
#include "ss-scaling.h"

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
