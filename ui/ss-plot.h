/* ss-plot.h: convergence curves drawn with cairo, logarithmic value axis.
 *
 * Several series (one per solver in a comparison) share the axes; points
 * with a value <= 0 or not finite cannot be shown on a log axis and are
 * skipped when drawing (they still count in ss_plot_get_n_points).
 */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

#define SS_TYPE_PLOT (ss_plot_get_type ())
G_DECLARE_FINAL_TYPE (SsPlot, ss_plot, SS, PLOT, GtkWidget)

GtkWidget *ss_plot_new (void);

void ss_plot_clear (SsPlot *self);
/* Adds a series and returns its index (colours cycle through a palette). */
guint ss_plot_add_series (SsPlot *self, const char *label);
void ss_plot_set_series_label (SsPlot *self, guint series, const char *label);
void ss_plot_add_point (SsPlot *self, guint series, double x, double y);
/* Draws SERIES thicker (the selected result); -1: none. */
void ss_plot_set_highlight (SsPlot *self, int series);
/* The x axis spans at least 0..X_MAX (the iterations asked for), so a
 * curve grows across a fixed axis; 0: the data's range. */
void ss_plot_set_x_range (SsPlot *self, double x_max);
void ss_plot_set_axis_labels (SsPlot *self, const char *x_label, const char *y_label);

guint ss_plot_get_n_series (SsPlot *self);
guint ss_plot_get_n_points (SsPlot *self, guint series);
/* Point I of SERIES; FALSE when out of range. */
gboolean ss_plot_get_point (SsPlot *self, guint series, guint i, double *x, double *y);
const char *ss_plot_get_series_label (SsPlot *self, guint series);

G_END_DECLS
