/* ss-image-view.h: a zoomable, pannable view of one frame or a before/after split.
 *
 * Drawing is cairo; the stretch and colour map are computed in a worker
 * thread (ss-render.h) and the view keeps showing the previous picture until
 * the new one is ready, so a 1 Mpx frame never stalls the main loop.
 * Orientation is DS9's: row 0 of the data at the bottom. Coordinates given
 * out (hover, region of interest) are image pixels of the full input image.
 *
 * Mouse: scroll zooms about the pointer; drag pans; Shift+drag (or any drag
 * in region mode) draws the region of interest; in a split view the divider
 * can be dragged; in pick mode a click emits "pixel-picked" (col, row: full-
 * image pixels from 0, row 0 at the bottom), e.g. to fit a star there. Keys (when focused): + − 0 (fit) 1 (1:1).
 */
#pragma once

#include <gtk/gtk.h>
#include "ss-frame.h"
#include "ss-render.h"

G_BEGIN_DECLS

#define SS_TYPE_IMAGE_VIEW (ss_image_view_get_type ())
G_DECLARE_FINAL_TYPE (SsImageView, ss_image_view, SS, IMAGE_VIEW, GtkWidget)

GtkWidget *ss_image_view_new (void);

/* PRIMARY fills the view, or its left part when SECONDARY is given (split).
 * Either may be NULL; a change of the primary frame's region refits the view. */
void ss_image_view_set_frames (SsImageView *self, SsFrame *primary, SsFrame *secondary);
SsFrame *ss_image_view_get_frame (SsImageView *self, int side);
/* Names drawn in the corners of a split view. */
void ss_image_view_set_labels (SsImageView *self, const char *primary, const char *secondary);
/* Text shown when there is no primary frame. */
void ss_image_view_set_placeholder (SsImageView *self, const char *text);

void ss_image_view_set_display (SsImageView *self, const SsDisplay *display);
void ss_image_view_get_display (SsImageView *self, SsDisplay *display);
/* The limits (input units) used for SIDE's picture; FALSE before it is drawn. */
gboolean ss_image_view_get_limits (SsImageView *self, int side, double *low, double *high);

void ss_image_view_zoom_in (SsImageView *self);
void ss_image_view_zoom_out (SsImageView *self);
void ss_image_view_zoom_fit (SsImageView *self);
void ss_image_view_zoom_one (SsImageView *self);
double ss_image_view_get_zoom (SsImageView *self);
/* Zooms by FACTOR keeping the image point under widget position (X, Y) fixed. */
void ss_image_view_zoom_at (SsImageView *self, double factor, double x, double y);

/* What is under widget point (X, Y): FITS pixel numbers (1-based, y
 * counted from the bottom row as DS9 does) and the value there in the
 * frame's units. FALSE when the point is off the image. */
gboolean ss_image_view_pick (SsImageView *self, double x, double y, int *fits_x, int *fits_y,
                             double *value);
/* The widget point at the centre of image pixel (COL, ROW) (0-based, row 0
 * at the bottom) of the primary frame's region. */
void ss_image_view_pixel_to_widget (SsImageView *self, int col, int row, double *x, double *y);

/* Split divider position as a fraction of the width. */
void ss_image_view_set_split_position (SsImageView *self, double fraction);

void ss_image_view_set_roi_mode (SsImageView *self, gboolean drawing);
gboolean ss_image_view_get_roi_mode (SsImageView *self);
void ss_image_view_set_pick_mode (SsImageView *self, gboolean picking);
gboolean ss_image_view_get_pick_mode (SsImageView *self);
/* ROI: x = first column, y = first row (bottom), in full-image pixels; NULL clears. */
void ss_image_view_set_roi (SsImageView *self, const GdkRectangle *roi);
gboolean ss_image_view_get_roi (SsImageView *self, GdkRectangle *roi);

/* For tests: whether a render is under way, and how many have been shown. */
gboolean ss_image_view_is_rendering (SsImageView *self);
guint ss_image_view_get_render_count (SsImageView *self);
/* For tests: how many frames have been stretched (a side kept is not). */
guint ss_image_view_get_stretch_count (SsImageView *self);

G_END_DECLS
