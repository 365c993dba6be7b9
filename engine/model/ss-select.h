/* ss-select.h: order statistics of large images in O(n), without copying them.
 *
 * Medians and MADs of a 26-megapixel frame used to copy it and quickselect
 * the copy, one thread, twice or more per run. Here a value's rank is found
 * by histograms instead: each pass reads the data once (on every core),
 * counts values into bins between the smallest and largest candidate, and
 * narrows the candidates to the bin holding the wanted rank; a few passes
 * leave a bin small enough to select in directly. No pass writes the data,
 * so the caller keeps it as it was.
 *
 * Non-finite values (NaN, blank pixels) never count, as before.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Which values of DATA take part, and as what: v = DATA[i] if finite and in
 * [low, high]; then v itself, or |v - centre| when ABSOLUTE. */
typedef struct {
  float low, high;
  gboolean absolute;
  float centre;
} SsSelectView;

/* Every finite value, as it is. */
void ss_select_view_init (SsSelectView *view);

/* How many values VIEW lets through. */
gsize ss_select_count (const float *data, gsize n, const SsSelectView *view);

/* The median of the values VIEW lets through (the mean of the two middle ones
 * for an even count), or NAN when there is none. */
double ss_select_median (const float *data, gsize n, const SsSelectView *view);

/* The K-th smallest (0-based) of the values VIEW lets through; NAN when K is
 * not below their count. */
double ss_select_kth (const float *data, gsize n, const SsSelectView *view, gsize k);

G_END_DECLS
