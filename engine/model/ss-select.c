/* ss-select.c: order statistics by histogram narrowing (ss-select.h).
 *
 * The values' order is never needed, only where rank k falls: a pass over
 * the data counts the candidates in BINS equal bins between the smallest and
 * the largest, and keeps each bin's own smallest and largest value. The bin
 * holding rank k becomes the new candidate range. A bin's index grows with
 * the value, so a bin's values are exactly those between its smallest and
 * largest: the next pass needs no other bookkeeping. When the range holds
 * few values (or all are equal) they are gathered and quickselected.
 */
#include "ss-select.h"

#include <math.h>
#include <omp.h>
#include <string.h>

#define BINS 4096
/* Candidates gathered and selected directly at or below this count. */
#define DIRECT_LIMIT 65536
/* Passes before gathering whatever is left (values packed closer than float
 * spacing allows bins to split). */
#define MAX_LEVELS 8
/* Below this many values one thread is quicker than waking a team. */
#define PARALLEL_MIN 65536

/* The operands are never NaN here: plain comparisons, which inline and
 * vectorise where fminf/fmaxf became library calls. */
#define LESSER(a, b) ((a) < (b) ? (a) : (b))
#define GREATER(a, b) ((a) > (b) ? (a) : (b))

void
ss_select_view_init (SsSelectView *view)
{
  view->low = -INFINITY;
  view->high = INFINITY;
  view->absolute = FALSE;
  view->centre = 0.0f;
}

/* The value DATA[i] stands for under VIEW, or FALSE when it takes no part
 * (non-finite, out of [low, high], or a transform that overflows). */
static inline gboolean
view_value (const SsSelectView *view, float x, float *value)
{
  if (!isfinite (x) || x < view->low || x > view->high)
    return FALSE;
  float v = view->absolute ? fabsf (x - view->centre) : x;
  *value = v;
  return isfinite (v);
}

/* The candidates left: values in [lo, hi], BELOW values under lo. */
typedef struct {
  float lo, hi;
  gsize below, inside;
} Range;

static gboolean
first_range (const float *data, gsize n, const SsSelectView *view, Range *range)
{
  float lo = INFINITY, hi = -INFINITY;
  gsize count = 0;
#pragma omp parallel for reduction(min : lo) reduction(max : hi) reduction(+ : count) \
  schedule(static) if (n > PARALLEL_MIN)
  for (gsize i = 0; i < n; i++)
    {
      float v;
      if (view_value (view, data[i], &v))
        {
          lo = LESSER (lo, v);
          hi = GREATER (hi, v);
          count++;
        }
    }
  range->lo = lo;
  range->hi = hi;
  range->below = 0;
  range->inside = count;
  return count > 0;
}

typedef struct {
  gsize count[BINS];
  float min[BINS], max[BINS];
} Histogram;

static void
histogram_reset (Histogram *h)
{
  memset (h->count, 0, sizeof h->count);
  for (int b = 0; b < BINS; b++)
    {
      h->min[b] = INFINITY;
      h->max[b] = -INFINITY;
    }
}

static void
histogram_merge (Histogram *into, const Histogram *from)
{
  for (int b = 0; b < BINS; b++)
    {
      into->count[b] += from->count[b];
      into->min[b] = LESSER (into->min[b], from->min[b]);
      into->max[b] = GREATER (into->max[b], from->max[b]);
    }
}

/* Counts the candidates of RANGE into BINS bins, per thread, then merged
 * into TOTAL. */
static void
histogram_pass (const float *data, gsize n, const SsSelectView *view, const Range *range,
                Histogram *total)
{
  const double lo = range->lo, scale = BINS / ((double) range->hi - lo);
  int threads = n > PARALLEL_MIN ? omp_get_max_threads () : 1;
  Histogram *parts = g_new (Histogram, threads);
  /* Reset here, not in the team: a team may start with fewer threads than
   * asked (OMP_THREAD_LIMIT), and every part is merged. */
  for (int t = 0; t < threads; t++)
    histogram_reset (&parts[t]);
#pragma omp parallel num_threads(threads)
  {
    Histogram *h = &parts[omp_get_thread_num ()];
#pragma omp for schedule(static)
    for (gsize i = 0; i < n; i++)
      {
        float v;
        if (!view_value (view, data[i], &v) || v < range->lo || v > range->hi)
          continue;
        int b = (int) MIN ((v - lo) * scale, BINS - 1.0);
        h->count[b]++;
        h->min[b] = LESSER (h->min[b], v);
        h->max[b] = GREATER (h->max[b], v);
      }
  }
  histogram_reset (total);
  for (int t = 0; t < threads; t++)
    histogram_merge (total, &parts[t]);
  g_free (parts);
}

/* Narrows RANGE to the bin of TOTAL that holds rank K. */
static void
narrow (Range *range, const Histogram *total, gsize k)
{
  gsize below = range->below;
  for (int b = 0; b < BINS; b++)
    {
      if (total->count[b] == 0)
        continue;
      if (k < below + total->count[b] || b == BINS - 1)
        {
          range->lo = total->min[b];
          range->hi = total->max[b];
          range->below = below;
          range->inside = total->count[b];
          return;
        }
      below += total->count[b];
    }
}

/* Quickselect (Hoare partition) of rank K in V[0..COUNT), in place. */
static float
quickselect (float *v, gsize count, gsize k)
{
  gsize lo = 0, hi = count - 1;
  while (lo < hi)
    {
      float pivot = v[lo + (hi - lo) / 2];
      gsize i = lo, j = hi;
      while (i <= j)
        {
          while (v[i] < pivot)
            i++;
          while (v[j] > pivot)
            j--;
          if (i <= j)
            {
              float t = v[i];
              v[i] = v[j];
              v[j] = t;
              i++;
              if (j == 0)
                break;
              j--;
            }
        }
      if (k <= j)
        hi = j;
      else if (k >= i)
        lo = i;
      else
        break;
    }
  return v[k];
}

/* The candidates in RANGE, gathered (RANGE->inside of them). */
static float *
gather (const float *data, gsize n, const SsSelectView *view, const Range *range)
{
  float *values = g_try_new (float, MAX (range->inside, 1));
  if (values == NULL)
    return NULL;
  gsize count = 0;
  for (gsize i = 0; i < n && count < range->inside; i++)
    {
      float v;
      if (view_value (view, data[i], &v) && v >= range->lo && v <= range->hi)
        values[count++] = v;
    }
  return values;
}

/* The smallest candidate above ABOVE, or NAN. */
static double
smallest_above (const float *data, gsize n, const SsSelectView *view, float above)
{
  float best = INFINITY;
#pragma omp parallel for reduction(min : best) schedule(static) if (n > PARALLEL_MIN)
  for (gsize i = 0; i < n; i++)
    {
      float v;
      if (view_value (view, data[i], &v) && v > above)
        best = LESSER (best, v);
    }
  return isfinite (best) ? best : NAN;
}

/* Rank K of the candidates in RANGE (from first_range), and when NEXT is
 * not NULL rank K + 1 too (NAN if there is none). */
static double
select_ranks (const float *data, gsize n, const SsSelectView *view, Range range, gsize k,
              double *next)
{
  if (next)
    *next = NAN;
  if (k >= range.inside)
    return NAN;
  Histogram *total = NULL;
  for (int level = 0; level < MAX_LEVELS && range.lo < range.hi
                      && range.inside > DIRECT_LIMIT; level++)
    {
      /* Bins narrower than a double can tell apart: gather instead. */
      if (!isfinite (BINS / ((double) range.hi - range.lo)))
        break;
      if (total == NULL)
        total = g_new (Histogram, 1);
      histogram_pass (data, n, view, &range, total);
      narrow (&range, total, k);
    }
  g_free (total);

  gsize last = range.below + range.inside - 1;   /* rank of the range's largest value */
  if (range.lo == range.hi)
    {
      if (next)
        *next = k + 1 <= last ? range.lo : smallest_above (data, n, view, range.hi);
      return range.lo;
    }
  float *values = gather (data, n, view, &range);
  if (values == NULL)
    return NAN;
  gsize local = k - range.below;
  double kth = quickselect (values, range.inside, local);
  if (next)
    {
      if (k + 1 <= last)
        {
          /* Quickselect left every value after LOCAL at or above it. */
          float smallest = values[local + 1];
          for (gsize i = local + 2; i < range.inside; i++)
            smallest = LESSER (smallest, values[i]);
          *next = smallest;
        }
      else
        *next = smallest_above (data, n, view, range.hi);
    }
  g_free (values);
  return kth;
}

gsize
ss_select_count (const float *data, gsize n, const SsSelectView *view)
{
  Range range;
  return data != NULL && first_range (data, n, view, &range) ? range.inside : 0;
}

double
ss_select_kth (const float *data, gsize n, const SsSelectView *view, gsize k)
{
  Range range;
  if (data == NULL || !first_range (data, n, view, &range))
    return NAN;
  return select_ranks (data, n, view, range, k, NULL);
}

double
ss_select_median (const float *data, gsize n, const SsSelectView *view)
{
  Range range;
  if (data == NULL || !first_range (data, n, view, &range))
    return NAN;
  gsize count = range.inside;
  if (count % 2)
    return select_ranks (data, n, view, range, count / 2, NULL);
  double upper = NAN;
  double lower = select_ranks (data, n, view, range, count / 2 - 1, &upper);
  return 0.5 * (lower + upper);
}
