/* ss-cs-select.c: top-k by selection (seed 003 "support detection"): Hoare's
 * quickselect, O(n) expected, never a sort; then one pass that collects the
 * indices in ascending order. */
#include "ss-cs.h"

#include <math.h>

static inline void
swap_floats (float *a, float *b)
{
  float t = *a;
  *a = *b;
  *b = t;
}

/* Median of three as the pivot keeps sorted and reversed inputs linear;
 * Hoare's partition stops on keys equal to the pivot, so long runs of equal
 * keys (the zeros of a sparse vector) split evenly instead of going
 * quadratic. */
static float
select_ascending (float *a, gsize n, gsize target)
{
  gsize lo = 0, hi = n - 1;
  while (hi > lo)
    {
      gsize mid = lo + (hi - lo) / 2;
      if (a[mid] < a[lo])
        swap_floats (&a[mid], &a[lo]);
      if (a[hi] < a[lo])
        swap_floats (&a[hi], &a[lo]);
      if (a[hi] < a[mid])
        swap_floats (&a[hi], &a[mid]);
      float pivot = a[mid];
      gsize i = lo, j = hi;
      while (i <= j)
        {
          while (a[i] < pivot)
            i++;
          while (a[j] > pivot)
            j--;
          if (i <= j)
            {
              swap_floats (&a[i], &a[j]);
              i++;
              if (j == 0)
                break;
              j--;
            }
        }
      /* Now a[lo..j] <= pivot <= a[i..hi], and a[j+1..i-1] == pivot. */
      if (target <= j && j != G_MAXSIZE)
        hi = j;
      else if (target >= i)
        lo = i;
      else
        return a[target];
    }
  return a[target];
}

float
ss_cs_select_kth_largest (float *keys, gsize n, gsize k)
{
  g_return_val_if_fail (k >= 1 && k <= n, NAN);
  return select_ascending (keys, n, n - k);
}

static inline float
key_of (float v, gboolean nonneg)
{
  return nonneg ? fmaxf (v, 0.0f) : fabsf (v);
}

float
ss_cs_top_k (const float *v, gsize n, gsize k, gboolean nonneg, float *scratch,
             guint32 *indices)
{
  if (k == 0)
    return INFINITY;
  k = MIN (k, n);
  for (gsize i = 0; i < n; i++)
    scratch[i] = key_of (v[i], nonneg);
  float kth = ss_cs_select_kth_largest (scratch, n, k);
  gsize above = 0;
  for (gsize i = 0; i < n; i++)
    above += key_of (v[i], nonneg) > kth;
  gsize ties = k - above, count = 0;
  for (gsize i = 0; i < n && count < k; i++)
    {
      float key = key_of (v[i], nonneg);
      if (key > kth || (key == kth && ties > 0))
        {
          if (key == kth)
            ties--;
          indices[count++] = (guint32) i;
        }
    }
  return kth;
}
