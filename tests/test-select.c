/* test-select.c: medians, MADs and ranks by histogram selection (ss-select.h)
 * against the sort of a copy, on fresh random arrays (suite engine).
 *
 * The arrays are drawn to reach every path of the selection: small ones
 * (selected directly), large ones (histogram passes), odd and even counts,
 * NaN and infinities (never counted), many ties (quantised data, the case of
 * 16-bit camera frames), a narrow cluster beside far outliers (bins that
 * must split several times), constant arrays, and views with a window and
 * absolute deviations. The seed is printed (SHARPSKY_TEST_SEED replays it).
 */
#include "test-common.h"
#include "ss-select.h"

#include <stdlib.h>

static int
compare_floats (const void *a, const void *b)
{
  float x = *(const float *) a, y = *(const float *) b;
  return (x > y) - (x < y);
}

/* The values VIEW lets through, sorted: the oracle. */
static float *
sorted_view (const float *data, gsize n, const SsSelectView *view, gsize *count)
{
  float *values = g_new (float, MAX (n, 1));
  gsize c = 0;
  for (gsize i = 0; i < n; i++)
    {
      float x = data[i];
      if (!isfinite (x) || x < view->low || x > view->high)
        continue;
      float v = view->absolute ? fabsf (x - view->centre) : x;
      if (isfinite (v))
        values[c++] = v;
    }
  qsort (values, c, sizeof (float), compare_floats);
  *count = c;
  return values;
}

static double
sorted_median (const float *sorted, gsize count)
{
  if (count == 0)
    return NAN;
  if (count % 2)
    return sorted[count / 2];
  return 0.5 * ((double) sorted[count / 2 - 1] + sorted[count / 2]);
}

typedef enum {
  KIND_GAUSSIAN,     /* continuous values */
  KIND_QUANTISED,    /* whole numbers around a sky level: many ties */
  KIND_CLUSTERED,    /* a tight cluster and a few far outliers */
  KIND_CONSTANT,
  KIND_COUNT
} ArrayKind;

static const char *const kind_names[] = { "gaussian", "quantised", "clustered", "constant" };

static float *
random_array (GRand *rng, ArrayKind kind, gsize n)
{
  float *v = g_new (float, n);
  double level = g_rand_double_range (rng, -1e3, 1e3);
  for (gsize i = 0; i < n; i++)
    {
      double u1 = 1.0 - g_rand_double (rng), u2 = g_rand_double (rng);
      double normal = sqrt (-2.0 * log (u1)) * cos (2.0 * G_PI * u2);
      switch (kind)
        {
        case KIND_GAUSSIAN:
          v[i] = (float) (level + 10.0 * normal);
          break;
        case KIND_QUANTISED:
          v[i] = (float) rint (level + 3.0 * normal);
          break;
        case KIND_CLUSTERED:
          v[i] = g_rand_double (rng) < 0.001 ? (float) (1e30 * normal)
                                             : (float) (level + 1e-3 * normal);
          break;
        default:
          v[i] = (float) level;
        }
      /* Blank pixels and infinities, which never count. */
      double r = g_rand_double (rng);
      if (r < 0.02)
        v[i] = NAN;
      else if (r < 0.025)
        v[i] = r < 0.0225 ? INFINITY : -INFINITY;
    }
  return v;
}

/* Median, MAD about it and a few random ranks agree with the sort. */
static void
check_array (GRand *rng, const float *data, gsize n, const char *what)
{
  SsSelectView all;
  ss_select_view_init (&all);
  gsize count;
  g_autofree float *sorted = sorted_view (data, n, &all, &count);
  double median = ss_median (data, n);
  double expected = sorted_median (sorted, count);
  if (!(median == expected || (isnan (median) && isnan (expected))))
    g_error ("%s, n = %" G_GSIZE_FORMAT ": median %.9g, sort says %.9g", what, n, median,
             expected);
  g_assert_cmpuint (ss_select_count (data, n, &all), ==, count);
  for (int t = 0; t < 4 && count > 0; t++)
    {
      gsize k = (gsize) g_rand_int_range (rng, 0, (gint32) MIN (count, G_MAXINT32));
      g_assert_cmpfloat (ss_select_kth (data, n, &all, k), ==, sorted[k]);
    }
  g_assert_true (isnan (ss_select_kth (data, n, &all, count)));
  if (count == 0)
    return;
  /* Ranks either side of where the sorted value changes: with ties those are
   * the edges of the histogram's bins, where an off-by-one would show. */
  int edges = 0;
  for (gsize k = 1; k < count && edges < 40; k++)
    if (sorted[k] != sorted[k - 1] && (gsize) g_rand_int_range (rng, 0, 8) == 0)
      {
        g_assert_cmpfloat (ss_select_kth (data, n, &all, k), ==, sorted[k]);
        g_assert_cmpfloat (ss_select_kth (data, n, &all, k - 1), ==, sorted[k - 1]);
        edges++;
      }

  SsSelectView deviations = all;
  deviations.absolute = TRUE;
  deviations.centre = (float) median;
  gsize dcount;
  g_autofree float *dsorted = sorted_view (data, n, &deviations, &dcount);
  double mad = ss_mad (data, n, median);
  double dexpected = sorted_median (dsorted, dcount);
  if (mad != dexpected)
    g_error ("%s, n = %" G_GSIZE_FORMAT ": MAD %.9g, sort says %.9g", what, n, mad, dexpected);

  /* A window, as the clipped sky uses. */
  SsSelectView window = all;
  window.low = sorted[count / 4];
  window.high = sorted[(3 * count) / 4];
  gsize wcount;
  g_autofree float *wsorted = sorted_view (data, n, &window, &wcount);
  g_assert_cmpfloat (ss_select_median (data, n, &window), ==, sorted_median (wsorted, wcount));
}

static void
test_select_against_sort (void)
{
  g_autoptr (GRand) rng = test_rng ();
  /* Sizes either side of the direct-selection limit, odd and even. */
  const gsize sizes[] = { 0, 1, 2, 3, 10, 101, 1000, 65535, 65536, 65537, 200000, 300001 };
  for (int kind = 0; kind < KIND_COUNT; kind++)
    for (gsize s = 0; s < G_N_ELEMENTS (sizes); s++)
      {
        gsize n = sizes[s] + (sizes[s] > 100 ? (gsize) g_rand_int_range (rng, 0, 2) : 0);
        g_autofree float *data = random_array (rng, (ArrayKind) kind, MAX (n, 1));
        check_array (rng, data, n, kind_names[kind]);
      }
}

/* Nothing finite: NAN everywhere, no crash. */
static void
test_select_nothing_finite (void)
{
  float data[] = { NAN, INFINITY, -INFINITY, NAN };
  g_assert_true (isnan (ss_median (data, G_N_ELEMENTS (data))));
  g_assert_true (isnan (ss_mad (data, G_N_ELEMENTS (data), 0.0)));
  g_assert_true (isnan (ss_median (NULL, 0)));
}

/* The data are read, never reordered: callers keep their images. */
static void
test_select_leaves_data_alone (void)
{
  g_autoptr (GRand) rng = test_rng ();
  gsize n = 100001;
  g_autofree float *data = random_array (rng, KIND_GAUSSIAN, n);
  g_autofree float *copy = g_memdup2 (data, n * sizeof (float));
  double median = ss_median (data, n);
  ss_mad (data, n, median);
  g_assert_cmpmem (data, n * sizeof (float), copy, n * sizeof (float));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/select/against-sort", test_select_against_sort);
  g_test_add_func ("/select/nothing-finite", test_select_nothing_finite);
  g_test_add_func ("/select/leaves-data-alone", test_select_leaves_data_alone);
  return g_test_run ();
}
