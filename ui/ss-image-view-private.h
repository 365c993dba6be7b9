/* ss-image-view-private.h: what the image view's files share: its state, and
 * the entry points each file calls in another.
 *
 * SsImageView is split along its seams, as SsWindow is:
 *   ss-image-view.c         the type, zoom and pan, pointer and key input, the modes
 *   ss-image-view-draw.c    what it shows (frames, labels, display, split, region), painted
 *   ss-image-view-render.c  the pictures, stretched and reduced in a worker
 * Only these files include it. What one file alone uses (its constants, its
 * includes) stays in that file.
 */
#pragma once

#include "ss-image-view.h"

G_BEGIN_DECLS

typedef enum {
  DRAG_NONE,
  DRAG_PAN,
  DRAG_SPLIT,
  DRAG_ROI,
  DRAG_PICK,   /* pick mode: a click (not a drag) picks a pixel */
} DragKind;

struct _SsImageView
{
  GtkWidget parent_instance;

  SsFrame *frames[2];
  char *labels[2];
  char *placeholder;
  SsDisplay display;

  /* What is on screen: the last finished render (kept until the next one),
   * and, when the picture is reduced, a copy already reduced to the zoom
   * SCALED_ZOOM: resampling a megapixel takes tens of milliseconds, which
   * the worker pays, not the main loop. */
  cairo_surface_t *surfaces[2];
  cairo_surface_t *scaled[2];
  double scaled_zoom;
  double lows[2], highs[2];
  gboolean have_limits[2];
  /* The frames SURFACES were stretched from with DISPLAY (held): a side whose
   * frame stays keeps its picture when the other side changes (a split view's
   * original beside a run's previews), and the next render only redraws the
   * new one. NULL: stretch again. */
  SsFrame *surface_frames[2];
  guint stretch_count;      /* frames stretched, for tests */

  /* Geometry: ZOOM screen pixels per image pixel; (OX, OY) is where the
   * top-left corner of the region lands in widget coordinates. */
  double zoom, ox, oy;
  gboolean fit_pending;     /* refit at the next allocation (new region, or "fit" mode) */
  gboolean fit_mode;        /* stay fitted on resize until the user zooms or pans */
  gboolean in_allocate;     /* inside size_allocate: no notifications now */
  guint zoom_notify_id;
  int region_width, region_height;
  double split_fraction;

  double pointer_x, pointer_y;
  gboolean pointer_inside;

  DragKind drag;
  double drag_ox, drag_oy;  /* origin at drag start */
  double drag_start_x, drag_start_y;
  gboolean roi_mode;
  gboolean pick_mode;
  gboolean have_roi;
  GdkRectangle roi;

  /* Background rendering: one job at a time; a request while one runs marks
   * the view dirty and the next job starts when the current one ends, except
   * that new frames make a job in flight for none of them stale: it is
   * cancelled, its result dropped, and theirs starts at once. */
  gboolean render_in_flight;
  gpointer render_task;             /* the job in flight (its GTask, not owned) */
  GCancellable *render_cancellable; /* the job in flight's */
  SsFrame *render_frames[2];        /* the job in flight's frames (it holds them) */
  gboolean render_dirty;    /* frames or display changed: stretch again */
  gboolean rescale_dirty;   /* zoom changed: reduce again */
  guint render_count;
  GCancellable *cancellable;
};

/* ---- ss-image-view.c ------------------------------------------------------ */

/* Where the split line is (widget x); the widget's width without a second frame. */
double ss_image_view_split_x (SsImageView *self);
/* Fits the region to the widget now, or at the next allocation if it has no size yet. */
void ss_image_view_fit_now (SsImageView *self);
/* Emits hover for the pointer's place: new frames change the value under it. */
void ss_image_view_emit_hover (SsImageView *self);

/* ---- ss-image-view-draw.c ------------------------------------------------- */

/* The widget's snapshot: the pictures, the split line, the labels and the region. */
void ss_image_view_snapshot (GtkWidget *widget, GtkSnapshot *snapshot);

/* ---- ss-image-view-render.c ----------------------------------------------- */

/* Stretches the frames again (new frames or display), or only reduces the
 * pictures to a new zoom, in the worker; at most one job runs at a time and
 * a request while one runs is done when it ends. */
void ss_image_view_request_render (SsImageView *self);
/* The same for new frames: a job in flight for none of them is for pictures
 * no longer wanted, so it is cancelled and theirs starts now. */
void ss_image_view_request_render_anew (SsImageView *self);
void ss_image_view_request_rescale (SsImageView *self);

G_END_DECLS
