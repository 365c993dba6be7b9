/* ss-report.c: metrics and previews shared by the solvers. */
#include "ss-report.h"

#include <math.h>

double
ss_now (void)
{
  return (double) g_get_monotonic_time () * 1e-6;
}

int
ss_compare_doubles (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return (x > y) - (x < y);
}

double
ss_median_of_doubles (double *values, int count)
{
  qsort (values, count, sizeof (double), ss_compare_doubles);
  return values[count / 2];
}

static GMutex planning_lock;
static double planning_total;

double
ss_planning_seconds (void)
{
  g_mutex_lock (&planning_lock);
  double total = planning_total;
  g_mutex_unlock (&planning_lock);
  return total;
}

void
ss_planning_add (double seconds)
{
  g_mutex_lock (&planning_lock);
  planning_total += seconds;
  g_mutex_unlock (&planning_lock);
}

void
ss_preview_reduce (const float *x, int w, int h, float *out, int pw, int ph)
{
  /* Each preview pixel averages the source block [x0, x1) × [y0, y1); the
   * blocks tile the source exactly, so no pixel is counted twice. */
  for (int py = 0; py < ph; py++)
    {
      int y0 = (int) ((gint64) py * h / ph), y1 = (int) ((gint64) (py + 1) * h / ph);
      y1 = MAX (y1, y0 + 1);
      for (int px = 0; px < pw; px++)
        {
          int x0 = (int) ((gint64) px * w / pw), x1 = (int) ((gint64) (px + 1) * w / pw);
          x1 = MAX (x1, x0 + 1);
          double sum = 0;
          for (int y = y0; y < y1; y++)
            for (int xx = x0; xx < x1; xx++)
              sum += x[(gsize) y * w + xx];
          out[(gsize) py * pw + px] = (float) (sum / ((double) (y1 - y0) * (x1 - x0)));
        }
    }
}

double
ss_mse (const float *x, const float *truth, gsize n)
{
  double sum = 0;
  for (gsize i = 0; i < n; i++)
    {
      double d = (double) x[i] - truth[i];
      sum += d * d;
    }
  return sum / (double) n;
}

double
ss_psnr_from_mse (double mse)
{
  return isnan (mse) ? NAN : 10.0 * log10 (1.0 / mse);
}

double
ss_l1_norm (const float *x, gsize n)
{
  double sum = 0;
  for (gsize i = 0; i < n; i++)
    sum += fabs (x[i]);
  return sum;
}

void
ss_report_fill_metrics (SsReport *report, const SsProblem *problem, const SsSolveParams *params,
                        const float *x, const float *cx)
{
  const SsOperator *op = problem->op;
  gsize n = (gsize) op->width * op->height;
  double squared = 0;
  for (gsize i = 0; i < n; i++)
    if (op->mask == NULL || op->mask[i])
      {
        double d = (double) cx[i] - problem->y[i];
        squared += d * d;
      }
  report->residual = squared / (double) op->m;
  report->held_out = NAN;
  const SsHeldOut *held = problem->held_out;
  if (held != NULL)
    {
      /* CX must be C x at every pixel here: the held-out ones are not in P. */
      double error = 0;
      for (gsize i = 0; i < n; i++)
        if (held->counted[i])
          {
            double d = (double) cx[i] - held->y[i];
            error += d * d;
          }
      report->held_out = error;
    }
  report->objective = 0.5 * squared + params->alpha * ss_l1_norm (x, n);
  report->mse = problem->truth ? ss_mse (x, problem->truth, n) : NAN;
  report->psnr = ss_psnr_from_mse (report->mse);
}
