/* ss-phase-view.c: the phase-transition heat map with its axes (cairo). */
#include "ss-phase-view.h"
#include "ss-draw.h"


/* Room for the axes around the cells, in pixels. */
#define MARGIN_LEFT 52
#define MARGIN_RIGHT 64
#define MARGIN_TOP 24
#define MARGIN_BOTTOM 42
/* Below this a cell is too small to see or point at. */
#define MIN_CELL 3
/* From this size up a cell shows its success fraction as a number. */
#define NUMBER_CELL 36

struct _SsPhaseView
{
  GtkWidget parent_instance;
  int n_deltas, n_rhos;
  double *deltas, *rhos;
  double *fractions;        /* n_rhos x n_deltas, NAN: pending */
  SsCsPhaseCell *cells;     /* the same cells, for the tooltip */
  /* Where the last snapshot put the cells (for the tooltip). */
  int x0, y0, cell;
};

G_DEFINE_FINAL_TYPE (SsPhaseView, ss_phase_view, GTK_TYPE_WIDGET)

GtkWidget *
ss_phase_view_new (void)
{
  return g_object_new (SS_TYPE_PHASE_VIEW, NULL);
}

void
ss_phase_view_set_grid (SsPhaseView *self, const double *deltas, int n_deltas,
                        const double *rhos, int n_rhos)
{
  g_return_if_fail (SS_IS_PHASE_VIEW (self) && n_deltas >= 0 && n_rhos >= 0);
  gsize n = (gsize) n_deltas * n_rhos;
  self->n_deltas = n_deltas;
  self->n_rhos = n_rhos;
  g_free (self->deltas);
  g_free (self->rhos);
  g_free (self->fractions);
  g_free (self->cells);
  self->deltas = g_memdup2 (deltas, n_deltas * sizeof (double));
  self->rhos = g_memdup2 (rhos, n_rhos * sizeof (double));
  self->fractions = g_new (double, MAX (n, 1));
  for (gsize i = 0; i < n; i++)
    self->fractions[i] = NAN;
  self->cells = g_new0 (SsCsPhaseCell, MAX (n, 1));
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

void
ss_phase_view_set_cell (SsPhaseView *self, const SsCsPhaseCell *cell)
{
  g_return_if_fail (SS_IS_PHASE_VIEW (self));
  g_return_if_fail (cell->index >= 0 && cell->index < self->n_deltas * self->n_rhos);
  self->fractions[cell->index] = cell->fraction;
  self->cells[cell->index] = *cell;
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

const double *
ss_phase_view_get_fractions (SsPhaseView *self, int *n_deltas, int *n_rhos)
{
  g_return_val_if_fail (SS_IS_PHASE_VIEW (self), NULL);
  if (n_deltas)
    *n_deltas = self->n_deltas;
  if (n_rhos)
    *n_rhos = self->n_rhos;
  return self->fractions;
}

/* ---- drawing ----------------------------------------------------------------- */

/* The engine's raster (the CLI's PNG at CELL pixels a cell) as a cairo
 * surface, painted 1:1 so that the one-pixel grid stays one pixel. */
static void
paint_cells (SsPhaseView *self, cairo_t *cr, int cell)
{
  int width, height;
  g_autofree guint8 *rgb = ss_cs_phase_render (self->fractions, self->n_deltas, self->n_rhos,
                                               cell, &width, &height);
  cairo_surface_t *surface = cairo_image_surface_create (CAIRO_FORMAT_RGB24, width, height);
  guint8 *data = cairo_image_surface_get_data (surface);
  int stride = cairo_image_surface_get_stride (surface);
  cairo_surface_flush (surface);
  for (int y = 0; y < height; y++)
    {
      guint32 *row = (guint32 *) (data + (gsize) y * stride);
      const guint8 *px = rgb + (gsize) y * width * 3;
      for (int x = 0; x < width; x++, px += 3)
        row[x] = (guint32) px[0] << 16 | (guint32) px[1] << 8 | px[2];
    }
  cairo_surface_mark_dirty (surface);
  cairo_set_source_surface (cr, surface, self->x0, self->y0);
  cairo_paint (cr);
  cairo_surface_destroy (surface);
}

/* A cell's fraction on it, dark on light colours and light on dark. */
static void
draw_numbers (SsPhaseView *self, cairo_t *cr, int cell)
{
  for (int j = 0; j < self->n_rhos; j++)
    for (int i = 0; i < self->n_deltas; i++)
      {
        double f = self->fractions[j * self->n_deltas + i];
        if (isnan (f))
          continue;
        guint8 rgb[3];
        ss_cs_phase_colour (f, rgb);
        double luma = (0.2126 * rgb[0] + 0.7152 * rgb[1] + 0.0722 * rgb[2]) / 255;
        double ink = luma > 0.5 ? 0.0 : 1.0;
        cairo_set_source_rgb (cr, ink, ink, ink);
        char text[16];
        g_snprintf (text, sizeof text, "%.2g", f);
        ss_draw_text (GTK_WIDGET (self), cr, text, self->x0 + i * cell + cell / 2.0,
                   self->y0 + (self->n_rhos - 1 - j) * cell + cell / 2.0, 0.5, 0.5);
      }
}

static void
draw_axes (SsPhaseView *self, cairo_t *cr, int cell, const GdkRGBA *fg)
{
  int cols = self->n_deltas, rows = self->n_rhos;
  int right = self->x0 + cols * cell, bottom = self->y0 + rows * cell;
  cairo_set_source_rgba (cr, fg->red, fg->green, fg->blue, 0.85);
  /* δ under its columns: every STEP-th, so labels never overlap. */
  char text[32];
  int widest = ss_draw_text_width (GTK_WIDGET (self), "0.000") + 6;
  int step = MAX (1, (widest + cell - 1) / cell);
  for (int i = 0; i < cols; i += step)
    {
      g_snprintf (text, sizeof text, "%.3g", self->deltas[i]);
      ss_draw_text (GTK_WIDGET (self), cr, text, self->x0 + i * cell + cell / 2.0, bottom + 2, 0.5, 0.0);
    }
  ss_draw_text (GTK_WIDGET (self), cr, "δ = m/n  (measurements / length)", (self->x0 + right) / 2.0,
             bottom + 20, 0.5, 0.0);
  /* ρ beside its rows, bottom to top. */
  int tall = 16;
  step = MAX (1, (tall + cell - 1) / cell);
  for (int j = 0; j < rows; j += step)
    {
      g_snprintf (text, sizeof text, "%.3g", self->rhos[j]);
      ss_draw_text (GTK_WIDGET (self), cr, text, self->x0 - 4, self->y0 + (rows - 1 - j) * cell + cell / 2.0,
                 1.0, 0.5);
    }
  ss_draw_text (GTK_WIDGET (self), cr, "ρ = k/m  (nonzeros / measurements)", self->x0, self->y0 - 4, 0.0, 1.0);

  /* The colour bar: success 0 at the bottom to 1 at the top. */
  int bar_x = right + 12, bar_w = 12, bar_h = bottom - self->y0;
  for (int y = 0; y < bar_h; y++)
    {
      guint8 rgb[3];
      ss_cs_phase_colour (1.0 - (y + 0.5) / bar_h, rgb);
      cairo_set_source_rgb (cr, rgb[0] / 255.0, rgb[1] / 255.0, rgb[2] / 255.0);
      cairo_rectangle (cr, bar_x, self->y0 + y, bar_w, 1);
      cairo_fill (cr);
    }
  cairo_set_source_rgba (cr, fg->red, fg->green, fg->blue, 0.85);
  ss_draw_text (GTK_WIDGET (self), cr, "1", bar_x + bar_w + 4, self->y0, 0.0, 0.0);
  ss_draw_text (GTK_WIDGET (self), cr, "0.5", bar_x + bar_w + 4, self->y0 + bar_h / 2.0, 0.0, 0.5);
  ss_draw_text (GTK_WIDGET (self), cr, "0", bar_x + bar_w + 4, bottom, 0.0, 1.0);
  ss_draw_text (GTK_WIDGET (self), cr, "success", bar_x + bar_w, self->y0 - 4, 0.5, 1.0);
}

static void
ss_phase_view_snapshot (GtkWidget *widget, GtkSnapshot *snapshot)
{
  SsPhaseView *self = SS_PHASE_VIEW (widget);
  int width = gtk_widget_get_width (widget), height = gtk_widget_get_height (widget);
  if (width < 40 || height < 40)
    return;
  cairo_t *cr = gtk_snapshot_append_cairo (snapshot, &GRAPHENE_RECT_INIT (0, 0, width, height));
  GdkRGBA fg;
  ss_draw_foreground (GTK_WIDGET (self), &fg);
  int cols = self->n_deltas, rows = self->n_rhos;
  int avail_w = width - MARGIN_LEFT - MARGIN_RIGHT, avail_h = height - MARGIN_TOP - MARGIN_BOTTOM;
  /* A whole number of pixels a cell: the raster is painted unscaled. */
  int cell = cols > 0 && rows > 0 ? MIN ((avail_w - 1) / cols, (avail_h - 1) / rows) : 0;
  self->cell = 0;
  if (cols == 0 || rows == 0 || cell < MIN_CELL)
    {
      cairo_set_source_rgba (cr, fg.red, fg.green, fg.blue, 0.6);
      ss_draw_text (GTK_WIDGET (self), cr, cols == 0 ? "Run a sweep: the diagram fills in cell by cell"
                                     : "Too small to show the diagram",
                 width / 2.0, height / 2.0, 0.5, 0.5);
      cairo_destroy (cr);
      return;
    }
  self->cell = cell;
  self->x0 = MARGIN_LEFT + (avail_w - (cols * cell + 1)) / 2;
  self->y0 = MARGIN_TOP + (avail_h - (rows * cell + 1)) / 2;
  paint_cells (self, cr, cell);
  if (cell >= NUMBER_CELL)
    draw_numbers (self, cr, cell);
  draw_axes (self, cr, cell, &fg);
  cairo_destroy (cr);
}

/* The numbers of the cell under the pointer. */
static gboolean
on_query_tooltip (GtkWidget *widget, int x, int y, gboolean keyboard, GtkTooltip *tooltip,
                  gpointer data)
{
  SsPhaseView *self = SS_PHASE_VIEW (widget);
  if (self->cell == 0 || x < self->x0 || y < self->y0)
    return FALSE;
  int i = (x - self->x0) / self->cell, row_from_top = (y - self->y0) / self->cell;
  if (i >= self->n_deltas || row_from_top >= self->n_rhos)
    return FALSE;
  int j = self->n_rhos - 1 - row_from_top, index = j * self->n_deltas + i;
  g_autofree char *text = NULL;
  if (isnan (self->fractions[index]))
    text = g_strdup_printf ("δ = %.3g, ρ = %.3g: not yet run", self->deltas[i], self->rhos[j]);
  else
    {
      const SsCsPhaseCell *c = &self->cells[index];
      text = g_strdup_printf ("δ = %.3g (m = %" G_GSIZE_FORMAT "), ρ = %.3g (k = %"
                              G_GSIZE_FORMAT ")\n%d of %d recovered; median relative error "
                              "%.2g; %.3g s", c->delta, c->m, c->rho, c->k, c->result.recovered,
                              c->trials, c->result.median_error, c->result.seconds);
    }
  gtk_tooltip_set_text (tooltip, text);
  return TRUE;
}

static void
ss_phase_view_measure (GtkWidget *widget, GtkOrientation orientation, int for_size, int *minimum,
                       int *natural, int *minimum_baseline, int *natural_baseline)
{
  *minimum = orientation == GTK_ORIENTATION_HORIZONTAL ? 260 : 200;
  *natural = orientation == GTK_ORIENTATION_HORIZONTAL ? 560 : 440;
}

static void
ss_phase_view_finalize (GObject *object)
{
  SsPhaseView *self = SS_PHASE_VIEW (object);
  g_free (self->deltas);
  g_free (self->rhos);
  g_free (self->fractions);
  g_free (self->cells);
  G_OBJECT_CLASS (ss_phase_view_parent_class)->finalize (object);
}

static void
ss_phase_view_class_init (SsPhaseViewClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = ss_phase_view_finalize;
  GTK_WIDGET_CLASS (klass)->snapshot = ss_phase_view_snapshot;
  GTK_WIDGET_CLASS (klass)->measure = ss_phase_view_measure;
  gtk_widget_class_set_css_name (GTK_WIDGET_CLASS (klass), "ss-phase-view");
}

static void
ss_phase_view_init (SsPhaseView *self)
{
  gtk_widget_set_has_tooltip (GTK_WIDGET (self), TRUE);
  g_signal_connect (self, "query-tooltip", G_CALLBACK (on_query_tooltip), NULL);
}
