/* ss-image-view-draw.c: what the image view shows (its frames, labels,
 * display, split and region) and the painting of it, from the pictures
 * ss-image-view-render.c made. */
#include "ss-image-view-private.h"

/* ---- drawing -------------------------------------------------------------- */

static void
draw_side (SsImageView *self, cairo_t *cr, int side, double x_from, double x_to, double height)
{
  cairo_surface_t *surface = self->surfaces[side];
  SsFrame *frame = self->frames[side];
  if (surface == NULL || frame == NULL || x_to <= x_from)
    return;
  /* The copy reduced for this zoom, when the worker has made it. */
  gboolean prescaled = self->scaled[side] != NULL && self->scaled_zoom == self->zoom;
  if (prescaled)
    surface = self->scaled[side];
  int sw = cairo_image_surface_get_width (surface);
  int sh = cairo_image_surface_get_height (surface);
  double scale_x = self->zoom * frame->logical_width / sw;
  double scale_y = self->zoom * frame->logical_height / sh;
  /* Crisp pixels when magnified, and a plain copy of the pre-reduced
   * picture; only while a reduced copy is being made (zooming), the fast
   * filter stands in for the good one, which would stall the main loop. */
  cairo_filter_t filter = (scale_x >= 1.0 || prescaled) ? CAIRO_FILTER_NEAREST
                                                        : CAIRO_FILTER_FAST;

  cairo_save (cr);
  cairo_rectangle (cr, x_from, 0, x_to - x_from, height);
  cairo_clip (cr);
  cairo_translate (cr, self->ox, self->oy);
  cairo_scale (cr, scale_x, scale_y);
  cairo_set_source_surface (cr, surface, 0, 0);
  cairo_pattern_set_filter (cairo_get_source (cr), filter);
  cairo_pattern_set_extend (cairo_get_source (cr), CAIRO_EXTEND_NONE);
  cairo_paint (cr);
  cairo_restore (cr);
}

static void
draw_text (SsImageView *self, cairo_t *cr, const char *text, double x, double y,
           gboolean right_aligned)
{
  PangoLayout *layout = gtk_widget_create_pango_layout (GTK_WIDGET (self), text);
  int tw, th;
  pango_layout_get_pixel_size (layout, &tw, &th);
  double tx = right_aligned ? x - tw - 12 : x;
  cairo_set_source_rgba (cr, 0, 0, 0, 0.6);
  cairo_rectangle (cr, tx, y, tw + 12, th + 6);
  cairo_fill (cr);
  cairo_set_source_rgb (cr, 1, 1, 1);
  cairo_move_to (cr, tx + 6, y + 3);
  pango_cairo_show_layout (cr, layout);
  g_object_unref (layout);
}

static void
draw_placeholder (SsImageView *self, cairo_t *cr, double width, double height)
{
  if (self->placeholder == NULL)
    return;
  PangoLayout *layout = gtk_widget_create_pango_layout (GTK_WIDGET (self), self->placeholder);
  pango_layout_set_width (layout, (int) (MAX (width - 40, 50) * PANGO_SCALE));
  pango_layout_set_alignment (layout, PANGO_ALIGN_CENTER);
  pango_layout_set_wrap (layout, PANGO_WRAP_WORD_CHAR);
  int tw, th;
  pango_layout_get_pixel_size (layout, &tw, &th);
  cairo_set_source_rgb (cr, 0.75, 0.75, 0.75);
  cairo_move_to (cr, 20, (height - th) / 2.0);
  pango_cairo_show_layout (cr, layout);
  g_object_unref (layout);
}

static void
draw_roi (SsImageView *self, cairo_t *cr)
{
  SsFrame *frame = self->frames[0];
  if (!self->have_roi || frame == NULL)
    return;
  /* The region is in full-image pixels; the frame may itself be a region. */
  double col = self->roi.x - frame->x0;
  double top_row = self->roi.y - frame->y0 + self->roi.height; /* one past the top row */
  double x = self->ox + col * self->zoom;
  double y = self->oy + (self->region_height - top_row) * self->zoom;
  cairo_save (cr);
  cairo_rectangle (cr, x + 0.5, y + 0.5, self->roi.width * self->zoom - 1,
                   self->roi.height * self->zoom - 1);
  cairo_set_line_width (cr, 1.5);
  static const double dash[] = { 6.0, 4.0 };
  cairo_set_source_rgb (cr, 0, 0, 0);
  cairo_stroke_preserve (cr);
  cairo_set_dash (cr, dash, 2, 0);
  cairo_set_source_rgb (cr, 1.0, 0.85, 0.2);
  cairo_stroke (cr);
  cairo_restore (cr);
}

void
ss_image_view_snapshot (GtkWidget *widget, GtkSnapshot *snapshot)
{
  SsImageView *self = SS_IMAGE_VIEW (widget);
  double width = gtk_widget_get_width (widget), height = gtk_widget_get_height (widget);
  if (width <= 0 || height <= 0)
    return;
  cairo_t *cr = gtk_snapshot_append_cairo (snapshot, &GRAPHENE_RECT_INIT (0, 0, width, height));
  cairo_set_source_rgb (cr, 0.12, 0.12, 0.13);
  cairo_paint (cr);

  if (self->frames[0] == NULL || self->surfaces[0] == NULL)
    draw_placeholder (self, cr, width, height);
  else
    {
      double sx = ss_image_view_split_x (self);
      draw_side (self, cr, 0, 0, sx, height);
      if (self->frames[1] != NULL)
        {
          draw_side (self, cr, 1, sx, width, height);
          cairo_set_source_rgb (cr, 1, 1, 1);
          cairo_set_line_width (cr, 2);
          cairo_move_to (cr, sx, 0);
          cairo_line_to (cr, sx, height);
          cairo_stroke (cr);
          if (self->labels[0])
            draw_text (self, cr, self->labels[0], 8, 8, FALSE);
          if (self->labels[1])
            draw_text (self, cr, self->labels[1], width - 8, 8, TRUE);
        }
      draw_roi (self, cr);
    }
  cairo_destroy (cr);
}

/* ---- what is shown -------------------------------------------------------- */

void
ss_image_view_set_frames (SsImageView *self, SsFrame *primary, SsFrame *secondary)
{
  g_return_if_fail (SS_IS_IMAGE_VIEW (self));
  if (primary == self->frames[0] && secondary == self->frames[1])
    return;
  if (primary != NULL)
    ss_frame_ref (primary);
  if (secondary != NULL)
    ss_frame_ref (secondary);
  ss_frame_unref (self->frames[0]);
  ss_frame_unref (self->frames[1]);
  self->frames[0] = primary;
  self->frames[1] = secondary;

  if (primary != NULL && (primary->logical_width != self->region_width
                          || primary->logical_height != self->region_height))
    {
      self->region_width = primary->logical_width;
      self->region_height = primary->logical_height;
      self->fit_mode = TRUE;
      ss_image_view_fit_now (self);
    }
  ss_image_view_request_render_anew (self);
  ss_image_view_emit_hover (self);
}

SsFrame *
ss_image_view_get_frame (SsImageView *self, int side)
{
  g_return_val_if_fail (SS_IS_IMAGE_VIEW (self) && side >= 0 && side < 2, NULL);
  return self->frames[side];
}

void
ss_image_view_set_labels (SsImageView *self, const char *primary, const char *secondary)
{
  g_return_if_fail (SS_IS_IMAGE_VIEW (self));
  g_free (self->labels[0]);
  g_free (self->labels[1]);
  self->labels[0] = g_strdup (primary);
  self->labels[1] = g_strdup (secondary);
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

void
ss_image_view_set_placeholder (SsImageView *self, const char *text)
{
  g_return_if_fail (SS_IS_IMAGE_VIEW (self));
  g_free (self->placeholder);
  self->placeholder = g_strdup (text);
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

void
ss_image_view_set_display (SsImageView *self, const SsDisplay *display)
{
  g_return_if_fail (SS_IS_IMAGE_VIEW (self));
  if (display->stretch == self->display.stretch && display->limits == self->display.limits
      && display->colormap == self->display.colormap)
    return;
  self->display = *display;
  /* Every side is stretched again with the new display. */
  for (int i = 0; i < 2; i++)
    g_clear_pointer (&self->surface_frames[i], ss_frame_unref);
  ss_image_view_request_render (self);
}

void
ss_image_view_get_display (SsImageView *self, SsDisplay *display)
{
  g_return_if_fail (SS_IS_IMAGE_VIEW (self));
  *display = self->display;
}

gboolean
ss_image_view_get_limits (SsImageView *self, int side, double *low, double *high)
{
  g_return_val_if_fail (SS_IS_IMAGE_VIEW (self) && side >= 0 && side < 2, FALSE);
  if (!self->have_limits[side])
    return FALSE;
  *low = self->lows[side];
  *high = self->highs[side];
  return TRUE;
}

void
ss_image_view_set_split_position (SsImageView *self, double fraction)
{
  g_return_if_fail (SS_IS_IMAGE_VIEW (self));
  self->split_fraction = CLAMP (fraction, 0.02, 0.98);
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

void
ss_image_view_set_roi (SsImageView *self, const GdkRectangle *roi)
{
  g_return_if_fail (SS_IS_IMAGE_VIEW (self));
  self->have_roi = roi != NULL;
  if (roi)
    self->roi = *roi;
  gtk_widget_queue_draw (GTK_WIDGET (self));
}

gboolean
ss_image_view_get_roi (SsImageView *self, GdkRectangle *roi)
{
  g_return_val_if_fail (SS_IS_IMAGE_VIEW (self), FALSE);
  if (self->have_roi && roi)
    *roi = self->roi;
  return self->have_roi;
}

gboolean
ss_image_view_is_rendering (SsImageView *self)
{
  g_return_val_if_fail (SS_IS_IMAGE_VIEW (self), FALSE);
  return self->render_in_flight || self->render_dirty || self->rescale_dirty;
}

guint
ss_image_view_get_stretch_count (SsImageView *self)
{
  g_return_val_if_fail (SS_IS_IMAGE_VIEW (self), 0);
  return self->stretch_count;
}

guint
ss_image_view_get_render_count (SsImageView *self)
{
  g_return_val_if_fail (SS_IS_IMAGE_VIEW (self), 0);
  return self->render_count;
}
