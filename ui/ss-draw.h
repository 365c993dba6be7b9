/* ss-draw.h: the text and colour the app's cairo-drawn widgets (ss-plot,
 * ss-phase-view) share. */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

/* TEXT in WIDGET's font, placed so that the point (ALIGN_X, ALIGN_Y) of its
 * box (0 left/top, 1 right/bottom) lands on (X, Y), rounded to whole pixels
 * so that glyphs stay sharp. */
void ss_draw_text (GtkWidget *widget, cairo_t *cr, const char *text, double x, double y,
                   double align_x, double align_y);

/* TEXT's width in WIDGET's font, pixels. */
int ss_draw_text_width (GtkWidget *widget, const char *text);

/* WIDGET's foreground colour (its CSS colour). */
void ss_draw_foreground (GtkWidget *widget, GdkRGBA *colour);

G_END_DECLS
