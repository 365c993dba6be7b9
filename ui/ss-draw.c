/* ss-draw.c: see ss-draw.h. */
#include "ss-draw.h"

#include <math.h>

void
ss_draw_text (GtkWidget *widget, cairo_t *cr, const char *text, double x, double y,
              double align_x, double align_y)
{
  PangoLayout *layout = gtk_widget_create_pango_layout (widget, text);
  int tw, th;
  pango_layout_get_pixel_size (layout, &tw, &th);
  cairo_move_to (cr, round (x - align_x * tw), round (y - align_y * th));
  pango_cairo_show_layout (cr, layout);
  g_object_unref (layout);
}

int
ss_draw_text_width (GtkWidget *widget, const char *text)
{
  PangoLayout *layout = gtk_widget_create_pango_layout (widget, text);
  int tw, th;
  pango_layout_get_pixel_size (layout, &tw, &th);
  g_object_unref (layout);
  return tw;
}

void
ss_draw_foreground (GtkWidget *widget, GdkRGBA *colour)
{
#if GTK_CHECK_VERSION(4, 10, 0)
  gtk_widget_get_color (widget, colour);
#else
  gtk_style_context_get_color (gtk_widget_get_style_context (widget), colour);
#endif
}
