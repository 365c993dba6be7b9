/* ss-plot.c: a small cairo line plot with a log10 y axis and a legend. */
#include "ss-plot.h"
#include "ss-draw.h"

#include <math.h>

typedef struct {
  char *label;
  GArray *xs;   /* double */
  GArray *ys;   /* double */
} Series;

struct _SsPlot
{
  GtkWidget parent_instance;
  GPtrArray *series;   /* Series* */
  int highlight;
  double x_range;
  char *x_label;
  char *y_label;
};

G_DEFINE_FINAL_TYPE (SsPlot, ss_plot, GTK_TYPE_WIDGET)

/* Distinguishable on light and dark backgrounds (Okabe–Ito palette). */
static const double palette[][3] = {
  { 0.000, 0.447, 0.698 }, { 0.835, 0.369, 0.000 }, { 0.000, 0.620, 0.451 },
  { 0.800, 0.475, 0.655 }, { 0.902, 0.624, 0.000 }, { 0.337, 0.706, 0.914 },
  { 0.941, 0.894, 0.259 }, { 0.5, 0.5, 0.5 },
};
#define PALETTE_SIZE G_N_ELEMENTS (palette)

static void
series_free (gpointer data)
{
  Series *s = data;
  g_free (s->label);
  g_array_unref (s->xs);
  g_array_unref (s->ys);
  g_free (s);
}

GtkWidget *
ss_plot_new (void)
{
  return g_object_new (SS_TYPE_PLOT, NULL);
}

void
ss_plot_clear (SsPlot *self)
{
  g_return_if_fail (SS_IS_PLOT (self));
  g_ptr_array_set_size (self->series, 0);
  self->highlight = -1;
  self->x_range = 0;
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

guint
ss_plot_add_series (SsPlot *self, const char *label)
{
  g_return_val_if_fail (SS_IS_PLOT (self), 0);
  Series *s = g_new0 (Series, 1);
  s->label = g_strdup (label ? label : "");
  s->xs = g_array_new (FALSE, FALSE, sizeof (double));
  s->ys = g_array_new (FALSE, FALSE, sizeof (double));
  g_ptr_array_add (self->series, s);
  gtk_widget_queue_draw (GTK_WIDGET (self));
  return self->series->len - 1;
}

void
ss_plot_set_series_label (SsPlot *self, guint series, const char *label)
{
  g_return_if_fail (SS_IS_PLOT (self) && series < self->series->len);
  Series *s = g_ptr_array_index (self->series, series);
  g_free (s->label);
  s->label = g_strdup (label ? label : "");
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

void
ss_plot_add_point (SsPlot *self, guint series, double x, double y)
{
  g_return_if_fail (SS_IS_PLOT (self));
  if (series >= self->series->len)
    return;
  Series *s = g_ptr_array_index (self->series, series);
  g_array_append_val (s->xs, x);
  g_array_append_val (s->ys, y);
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

void
ss_plot_set_highlight (SsPlot *self, int series)
{
  g_return_if_fail (SS_IS_PLOT (self));
  self->highlight = series;
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

void
ss_plot_set_x_range (SsPlot *self, double x_max)
{
  g_return_if_fail (SS_IS_PLOT (self));
  self->x_range = x_max > 0 ? x_max : 0;
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

void
ss_plot_set_axis_labels (SsPlot *self, const char *x_label, const char *y_label)
{
  g_return_if_fail (SS_IS_PLOT (self));
  g_free (self->x_label);
  g_free (self->y_label);
  self->x_label = g_strdup (x_label);
  self->y_label = g_strdup (y_label);
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

guint
ss_plot_get_n_series (SsPlot *self)
{
  g_return_val_if_fail (SS_IS_PLOT (self), 0);
  return self->series->len;
}

guint
ss_plot_get_n_points (SsPlot *self, guint series)
{
  g_return_val_if_fail (SS_IS_PLOT (self), 0);
  if (series >= self->series->len)
    return 0;
  return ((Series *) g_ptr_array_index (self->series, series))->xs->len;
}

gboolean
ss_plot_get_point (SsPlot *self, guint series, guint i, double *x, double *y)
{
  g_return_val_if_fail (SS_IS_PLOT (self), FALSE);
  if (series >= self->series->len)
    return FALSE;
  Series *s = g_ptr_array_index (self->series, series);
  if (i >= s->xs->len)
    return FALSE;
  *x = g_array_index (s->xs, double, i);
  *y = g_array_index (s->ys, double, i);
  return TRUE;
}

const char *
ss_plot_get_series_label (SsPlot *self, guint series)
{
  g_return_val_if_fail (SS_IS_PLOT (self), NULL);
  if (series >= self->series->len)
    return NULL;
  return ((Series *) g_ptr_array_index (self->series, series))->label;
}

/* ---- drawing -------------------------------------------------------------- */

typedef struct {
  double x_max;
  int decade_lo, decade_hi;   /* y axis spans 10^lo .. 10^hi */
  double left, right, top, bottom;
} Axes;

static gboolean
plottable (double y)
{
  return isfinite (y) && y > 0;
}

/* Data ranges: x from 0 to the largest iteration; y over whole decades. */
static gboolean
compute_axes (SsPlot *self, Axes *axes)
{
  double x_max = MAX (1, self->x_range), y_min = INFINITY, y_max = -INFINITY;
  for (guint k = 0; k < self->series->len; k++)
    {
      Series *s = g_ptr_array_index (self->series, k);
      for (guint i = 0; i < s->xs->len; i++)
        {
          double x = g_array_index (s->xs, double, i), y = g_array_index (s->ys, double, i);
          if (!plottable (y))
            continue;
          x_max = MAX (x_max, x);
          y_min = MIN (y_min, y);
          y_max = MAX (y_max, y);
        }
    }
  if (!isfinite (y_min))
    return FALSE;
  axes->x_max = x_max;
  axes->decade_lo = (int) floor (log10 (y_min));
  axes->decade_hi = (int) ceil (log10 (y_max));
  if (axes->decade_hi <= axes->decade_lo)
    axes->decade_hi = axes->decade_lo + 1;
  return TRUE;
}

static double
map_x (const Axes *a, double x)
{
  return a->left + (a->right - a->left) * x / a->x_max;
}

static double
map_y (const Axes *a, double y)
{
  double t = (log10 (y) - a->decade_lo) / (double) (a->decade_hi - a->decade_lo);
  return a->bottom - (a->bottom - a->top) * t;
}

static void
draw_axes (SsPlot *self, cairo_t *cr, const Axes *a, const GdkRGBA *fg)
{
  cairo_set_line_width (cr, 1);
  /* Decade grid lines and labels. */
  int step = MAX (1, (a->decade_hi - a->decade_lo) / 6);
  for (int d = a->decade_lo; d <= a->decade_hi; d += step)
    {
      double y = round (map_y (a, pow (10, d))) + 0.5;
      cairo_set_source_rgba (cr, fg->red, fg->green, fg->blue, 0.15);
      cairo_move_to (cr, a->left, y);
      cairo_line_to (cr, a->right, y);
      cairo_stroke (cr);
      char text[32];
      g_snprintf (text, sizeof text, "1e%d", d);
      cairo_set_source_rgba (cr, fg->red, fg->green, fg->blue, 0.8);
      ss_draw_text (GTK_WIDGET (self), cr, text, a->left - 4, y, 1.0, 0.5);
    }
  /* Iteration ticks: about five round numbers. */
  double raw = a->x_max / 5.0;
  double mag = pow (10, floor (log10 (MAX (raw, 1))));
  double tick = raw / mag >= 5 ? 5 * mag : raw / mag >= 2 ? 2 * mag : mag;
  for (double x = 0; x <= a->x_max + 1e-9; x += tick)
    {
      double px = round (map_x (a, x)) + 0.5;
      cairo_set_source_rgba (cr, fg->red, fg->green, fg->blue, 0.15);
      cairo_move_to (cr, px, a->top);
      cairo_line_to (cr, px, a->bottom);
      cairo_stroke (cr);
      char text[32];
      g_snprintf (text, sizeof text, "%.0f", x);
      cairo_set_source_rgba (cr, fg->red, fg->green, fg->blue, 0.8);
      ss_draw_text (GTK_WIDGET (self), cr, text, px, a->bottom + 2, 0.5, 0.0);
    }
  cairo_set_source_rgba (cr, fg->red, fg->green, fg->blue, 0.6);
  cairo_rectangle (cr, a->left + 0.5, a->top + 0.5, a->right - a->left, a->bottom - a->top);
  cairo_stroke (cr);
  if (self->y_label)
    ss_draw_text (GTK_WIDGET (self), cr, self->y_label, a->left + 6, a->top + 4, 0.0, 0.0);
  /* Inside the frame, above the axis, clear of the tick labels. */
  if (self->x_label)
    ss_draw_text (GTK_WIDGET (self), cr, self->x_label, a->right - 6, a->bottom - 4, 1.0, 1.0);
}

static void
draw_series (SsPlot *self, cairo_t *cr, const Axes *a, guint k)
{
  Series *s = g_ptr_array_index (self->series, k);
  const double *c = palette[k % PALETTE_SIZE];
  cairo_set_source_rgb (cr, c[0], c[1], c[2]);
  cairo_set_line_width (cr, (int) k == self->highlight ? 3.0 : 1.6);
  cairo_set_line_join (cr, CAIRO_LINE_JOIN_ROUND);
  gboolean pen_down = FALSE;
  guint shown = 0;
  double last_x = 0, last_y = 0;
  for (guint i = 0; i < s->xs->len; i++)
    {
      double y = g_array_index (s->ys, double, i);
      if (!plottable (y))
        {
          pen_down = FALSE;
          continue;
        }
      last_x = map_x (a, g_array_index (s->xs, double, i));
      last_y = map_y (a, y);
      if (pen_down)
        cairo_line_to (cr, last_x, last_y);
      else
        cairo_move_to (cr, last_x, last_y);
      pen_down = TRUE;
      shown++;
    }
  cairo_stroke (cr);
  /* A lone point (a direct solver) would be invisible as a line. */
  if (shown >= 1)
    {
      cairo_arc (cr, last_x, last_y, (int) k == self->highlight ? 4.0 : 3.0, 0, 2 * G_PI);
      cairo_fill (cr);
    }
}

static void
draw_legend (SsPlot *self, cairo_t *cr, const Axes *a, const GdkRGBA *fg)
{
  double y = a->top + 6;
  for (guint k = 0; k < self->series->len; k++)
    {
      Series *s = g_ptr_array_index (self->series, k);
      if (s->label == NULL || s->label[0] == '\0')
        continue;
      const double *c = palette[k % PALETTE_SIZE];
      cairo_set_source_rgb (cr, c[0], c[1], c[2]);
      cairo_rectangle (cr, a->right - 150, y + 4, 14, 4);
      cairo_fill (cr);
      cairo_set_source_rgba (cr, fg->red, fg->green, fg->blue, 0.9);
      ss_draw_text (GTK_WIDGET (self), cr, s->label, a->right - 130, y, 0.0, 0.0);
      y += 18;
    }
}

static void
ss_plot_snapshot (GtkWidget *widget, GtkSnapshot *snapshot)
{
  SsPlot *self = SS_PLOT (widget);
  double width = gtk_widget_get_width (widget), height = gtk_widget_get_height (widget);
  if (width < 40 || height < 40)
    return;
  cairo_t *cr = gtk_snapshot_append_cairo (snapshot, &GRAPHENE_RECT_INIT (0, 0, width, height));
  GdkRGBA fg;
  ss_draw_foreground (GTK_WIDGET (self), &fg);
  Axes a = { .left = 52, .right = width - 10, .top = 8, .bottom = height - 24 };
  if (!compute_axes (self, &a))
    {
      cairo_set_source_rgba (cr, fg.red, fg.green, fg.blue, 0.6);
      ss_draw_text (GTK_WIDGET (self), cr, "Convergence appears here while a solver runs", width / 2,
                 height / 2, 0.5, 0.5);
      cairo_destroy (cr);
      return;
    }
  draw_axes (self, cr, &a, &fg);
  cairo_save (cr);
  cairo_rectangle (cr, a.left, a.top, a.right - a.left, a.bottom - a.top);
  cairo_clip (cr);
  for (guint k = 0; k < self->series->len; k++)
    draw_series (self, cr, &a, k);
  cairo_restore (cr);
  draw_legend (self, cr, &a, &fg);
  cairo_destroy (cr);
}

static void
ss_plot_measure (GtkWidget *widget, GtkOrientation orientation, int for_size, int *minimum,
                 int *natural, int *minimum_baseline, int *natural_baseline)
{
  *minimum = orientation == GTK_ORIENTATION_HORIZONTAL ? 200 : 120;
  *natural = orientation == GTK_ORIENTATION_HORIZONTAL ? 480 : 180;
}

static void
ss_plot_finalize (GObject *object)
{
  SsPlot *self = SS_PLOT (object);
  g_ptr_array_unref (self->series);
  g_free (self->x_label);
  g_free (self->y_label);
  G_OBJECT_CLASS (ss_plot_parent_class)->finalize (object);
}

static void
ss_plot_class_init (SsPlotClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = ss_plot_finalize;
  GTK_WIDGET_CLASS (klass)->snapshot = ss_plot_snapshot;
  GTK_WIDGET_CLASS (klass)->measure = ss_plot_measure;
  gtk_widget_class_set_css_name (GTK_WIDGET_CLASS (klass), "ss-plot");
}

static void
ss_plot_init (SsPlot *self)
{
  self->series = g_ptr_array_new_with_free_func (series_free);
  self->highlight = -1;
  self->x_label = g_strdup ("iteration");
  self->y_label = g_strdup ("MSE");
}
