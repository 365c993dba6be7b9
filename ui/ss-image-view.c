/* ss-image-view.c: the image canvas (cairo): its type, zoom and pan, and pointer and
 * key input. ss-image-view-draw.c holds what it shows and paints it, and
 * ss-image-view-render.c makes its pictures in a worker. */
#include "ss-image-view-private.h"

#include <math.h>

#define ZOOM_STEP 1.25
#define ZOOM_MIN (1.0 / 64.0)
#define ZOOM_MAX 64.0
#define SPLIT_GRAB_PIXELS 6.0
/* A press and release this close (widget pixels) is a click, not a pan. */
#define CLICK_SLOP 4.0

G_DEFINE_FINAL_TYPE (SsImageView, ss_image_view, GTK_TYPE_WIDGET)

enum {
  SIGNAL_HOVER,
  SIGNAL_ROI_CHANGED,
  SIGNAL_PIXEL_PICKED,
  N_SIGNALS
};
static guint signals[N_SIGNALS];

enum {
  PROP_0,
  PROP_ZOOM,
  PROP_ROI_MODE,
  PROP_PICK_MODE,
  N_PROPS
};
static GParamSpec *properties[N_PROPS];

double
ss_image_view_split_x (SsImageView *self)
{
  if (self->frames[1] == NULL)
    return gtk_widget_get_width (GTK_WIDGET (self));
  return self->split_fraction * gtk_widget_get_width (GTK_WIDGET (self));
}

static gboolean
notify_zoom_later (gpointer data)
{
  SsImageView *self = data;
  self->zoom_notify_id = 0;
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_ZOOM]);
  return G_SOURCE_REMOVE;
}

static void
set_zoom_and_origin (SsImageView *self, double zoom, double ox, double oy)
{
  gboolean changed = zoom != self->zoom;
  self->zoom = zoom;
  self->ox = ox;
  self->oy = oy;
  gtk_widget_queue_draw (GTK_WIDGET (self));
  if (!changed)
    return;
  ss_image_view_request_rescale (self);
  /* A listener that resizes a widget (a zoom label) must not run inside the
   * layout pass: the widgets already allocated would be drawn unallocated. */
  if (self->in_allocate)
    {
      if (self->zoom_notify_id == 0)
        self->zoom_notify_id = g_idle_add_full (G_PRIORITY_HIGH_IDLE, notify_zoom_later,
                                                self, NULL);
    }
  else
    g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_ZOOM]);
}

void
ss_image_view_fit_now (SsImageView *self)
{
  int w = gtk_widget_get_width (GTK_WIDGET (self));
  int h = gtk_widget_get_height (GTK_WIDGET (self));
  if (w <= 0 || h <= 0 || self->region_width <= 0)
    {
      self->fit_pending = TRUE;
      return;
    }
  double zoom = MIN ((double) w / self->region_width, (double) h / self->region_height);
  zoom = CLAMP (zoom, ZOOM_MIN, ZOOM_MAX);
  set_zoom_and_origin (self, zoom, (w - zoom * self->region_width) / 2.0,
                       (h - zoom * self->region_height) / 2.0);
  self->fit_pending = FALSE;
}

/* Image column and row (row 0 at the bottom) under widget point (X, Y). */
static gboolean
widget_to_image (SsImageView *self, double x, double y, int *col, int *row)
{
  double lx = (x - self->ox) / self->zoom;
  double ly = (y - self->oy) / self->zoom;
  *col = (int) floor (lx);
  *row = self->region_height - 1 - (int) floor (ly);
  return lx >= 0 && ly >= 0 && lx < self->region_width && ly < self->region_height;
}

void
ss_image_view_zoom_at (SsImageView *self, double factor, double x, double y)
{
  g_return_if_fail (SS_IS_IMAGE_VIEW (self));
  double zoom = CLAMP (self->zoom * factor, ZOOM_MIN, ZOOM_MAX);
  /* Keep the image point under (x, y) where it is. */
  double lx = (x - self->ox) / self->zoom, ly = (y - self->oy) / self->zoom;
  self->fit_mode = FALSE;
  set_zoom_and_origin (self, zoom, x - lx * zoom, y - ly * zoom);
}

static void
zoom_about_centre (SsImageView *self, double factor)
{
  ss_image_view_zoom_at (self, factor, gtk_widget_get_width (GTK_WIDGET (self)) / 2.0,
                         gtk_widget_get_height (GTK_WIDGET (self)) / 2.0);
}

void
ss_image_view_zoom_in (SsImageView *self)
{
  zoom_about_centre (self, ZOOM_STEP);
}

void
ss_image_view_zoom_out (SsImageView *self)
{
  zoom_about_centre (self, 1.0 / ZOOM_STEP);
}

void
ss_image_view_zoom_fit (SsImageView *self)
{
  g_return_if_fail (SS_IS_IMAGE_VIEW (self));
  self->fit_mode = TRUE;
  ss_image_view_fit_now (self);
}

void
ss_image_view_zoom_one (SsImageView *self)
{
  g_return_if_fail (SS_IS_IMAGE_VIEW (self));
  zoom_about_centre (self, 1.0 / self->zoom);
}

double
ss_image_view_get_zoom (SsImageView *self)
{
  g_return_val_if_fail (SS_IS_IMAGE_VIEW (self), 1.0);
  return self->zoom;
}

/* ---- layout --------------------------------------------------------------- */

static void
ss_image_view_size_allocate (GtkWidget *widget, int width, int height, int baseline)
{
  SsImageView *self = SS_IMAGE_VIEW (widget);
  self->in_allocate = TRUE;
  if (self->fit_pending || self->fit_mode)
    ss_image_view_fit_now (self);
  self->in_allocate = FALSE;
}

static void
ss_image_view_measure (GtkWidget *widget, GtkOrientation orientation, int for_size,
                       int *minimum, int *natural, int *minimum_baseline, int *natural_baseline)
{
  *minimum = 120;
  *natural = 480;
}

/* ---- input ---------------------------------------------------------------- */

gboolean
ss_image_view_pick (SsImageView *self, double x, double y, int *fits_x, int *fits_y,
                    double *value)
{
  g_return_val_if_fail (SS_IS_IMAGE_VIEW (self), FALSE);
  int col, row;
  SsFrame *frame = self->frames[0];
  if (frame == NULL || !widget_to_image (self, x, y, &col, &row))
    return FALSE;
  /* The value of the side under the point. */
  if (self->frames[1] != NULL && x >= ss_image_view_split_x (self))
    frame = self->frames[1];
  *value = ss_frame_value_at (frame, col, row);
  *fits_x = frame->x0 + col + 1;
  *fits_y = frame->y0 + row + 1;
  return TRUE;
}

void
ss_image_view_pixel_to_widget (SsImageView *self, int col, int row, double *x, double *y)
{
  g_return_if_fail (SS_IS_IMAGE_VIEW (self));
  *x = self->ox + (col + 0.5) * self->zoom;
  *y = self->oy + (self->region_height - row - 0.5) * self->zoom;
}

void
ss_image_view_emit_hover (SsImageView *self)
{
  int fits_x = 0, fits_y = 0;
  double value = NAN;
  gboolean inside = self->pointer_inside
                    && ss_image_view_pick (self, self->pointer_x, self->pointer_y, &fits_x,
                                           &fits_y, &value);
  g_signal_emit (self, signals[SIGNAL_HOVER], 0, inside, fits_x, fits_y, value);
}

static void
on_motion (GtkEventControllerMotion *controller, double x, double y, SsImageView *self)
{
  self->pointer_x = x;
  self->pointer_y = y;
  self->pointer_inside = TRUE;
  ss_image_view_emit_hover (self);
}

static void
on_leave (GtkEventControllerMotion *controller, SsImageView *self)
{
  self->pointer_inside = FALSE;
  ss_image_view_emit_hover (self);
}

static gboolean
on_scroll (GtkEventControllerScroll *controller, double dx, double dy, SsImageView *self)
{
  if (self->frames[0] == NULL || dy == 0)
    return FALSE;
  ss_image_view_zoom_at (self, pow (ZOOM_STEP, -dy), self->pointer_x, self->pointer_y);
  return TRUE;
}

/* The region spanned by two widget points, clamped to the displayed region,
 * in full-image pixels. */
static gboolean
roi_from_points (SsImageView *self, double x1, double y1, double x2, double y2, GdkRectangle *roi)
{
  SsFrame *frame = self->frames[0];
  int c1, r1, c2, r2;
  widget_to_image (self, x1, y1, &c1, &r1);
  widget_to_image (self, x2, y2, &c2, &r2);
  int c_lo = CLAMP (MIN (c1, c2), 0, self->region_width - 1);
  int c_hi = CLAMP (MAX (c1, c2), 0, self->region_width - 1);
  int r_lo = CLAMP (MIN (r1, r2), 0, self->region_height - 1);
  int r_hi = CLAMP (MAX (r1, r2), 0, self->region_height - 1);
  roi->x = frame->x0 + c_lo;
  roi->y = frame->y0 + r_lo;
  roi->width = c_hi - c_lo + 1;
  roi->height = r_hi - r_lo + 1;
  return roi->width >= 2 && roi->height >= 2;
}

static void
on_drag_begin (GtkGestureDrag *gesture, double x, double y, SsImageView *self)
{
  gtk_widget_grab_focus (GTK_WIDGET (self));
  GdkModifierType mods = gtk_event_controller_get_current_event_state (
      GTK_EVENT_CONTROLLER (gesture));
  self->drag_start_x = x;
  self->drag_start_y = y;
  self->drag_ox = self->ox;
  self->drag_oy = self->oy;
  if (self->frames[0] == NULL)
    self->drag = DRAG_NONE;
  else if (self->pick_mode)
    self->drag = DRAG_PICK;
  else if (self->roi_mode || (mods & GDK_SHIFT_MASK))
    self->drag = DRAG_ROI;
  else if (self->frames[1] != NULL && fabs (x - ss_image_view_split_x (self)) <= SPLIT_GRAB_PIXELS)
    self->drag = DRAG_SPLIT;
  else
    self->drag = DRAG_PAN;
}

static void
on_drag_update (GtkGestureDrag *gesture, double dx, double dy, SsImageView *self)
{
  switch (self->drag)
    {
    case DRAG_PAN:
      self->fit_mode = FALSE;
      set_zoom_and_origin (self, self->zoom, self->drag_ox + dx, self->drag_oy + dy);
      break;
    case DRAG_SPLIT:
      {
        double w = MAX (gtk_widget_get_width (GTK_WIDGET (self)), 1);
        ss_image_view_set_split_position (self, (self->drag_start_x + dx) / w);
      }
      break;
    case DRAG_ROI:
      {
        GdkRectangle roi;
        if (roi_from_points (self, self->drag_start_x, self->drag_start_y,
                             self->drag_start_x + dx, self->drag_start_y + dy, &roi))
          {
            self->roi = roi;
            self->have_roi = TRUE;
            gtk_widget_queue_draw (GTK_WIDGET (self));
          }
      }
      break;
    case DRAG_PICK:
    case DRAG_NONE:
    default:
      break;
    }
}

/* A click in pick mode: the full-image pixel under it, if any. */
static void
emit_pixel_picked (SsImageView *self, double x, double y)
{
  int col, row;
  SsFrame *frame = self->frames[0];
  if (frame != NULL && widget_to_image (self, x, y, &col, &row))
    g_signal_emit (self, signals[SIGNAL_PIXEL_PICKED], 0, frame->x0 + col, frame->y0 + row);
}

static void
on_drag_end (GtkGestureDrag *gesture, double dx, double dy, SsImageView *self)
{
  if (self->drag == DRAG_ROI && self->have_roi)
    g_signal_emit (self, signals[SIGNAL_ROI_CHANGED], 0);
  if (self->drag == DRAG_PICK && fabs (dx) <= CLICK_SLOP && fabs (dy) <= CLICK_SLOP)
    emit_pixel_picked (self, self->drag_start_x + dx, self->drag_start_y + dy);
  self->drag = DRAG_NONE;
}

static gboolean
shortcut_zoom_in (GtkWidget *widget, GVariant *args, gpointer data)
{
  ss_image_view_zoom_in (SS_IMAGE_VIEW (widget));
  return TRUE;
}

static gboolean
shortcut_zoom_out (GtkWidget *widget, GVariant *args, gpointer data)
{
  ss_image_view_zoom_out (SS_IMAGE_VIEW (widget));
  return TRUE;
}

static gboolean
shortcut_zoom_fit (GtkWidget *widget, GVariant *args, gpointer data)
{
  ss_image_view_zoom_fit (SS_IMAGE_VIEW (widget));
  return TRUE;
}

static gboolean
shortcut_zoom_one (GtkWidget *widget, GVariant *args, gpointer data)
{
  ss_image_view_zoom_one (SS_IMAGE_VIEW (widget));
  return TRUE;
}

/* ---- public API ----------------------------------------------------------- */

GtkWidget *
ss_image_view_new (void)
{
  return g_object_new (SS_TYPE_IMAGE_VIEW, NULL);
}

static void
update_cursor (SsImageView *self)
{
  if (self->roi_mode || self->pick_mode)
    gtk_widget_set_cursor_from_name (GTK_WIDGET (self), "crosshair");
  else
    gtk_widget_set_cursor (GTK_WIDGET (self), NULL);
}

void
ss_image_view_set_roi_mode (SsImageView *self, gboolean drawing)
{
  g_return_if_fail (SS_IS_IMAGE_VIEW (self));
  if (self->roi_mode == !!drawing)
    return;
  self->roi_mode = !!drawing;
  update_cursor (self);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_ROI_MODE]);
}

gboolean
ss_image_view_get_roi_mode (SsImageView *self)
{
  g_return_val_if_fail (SS_IS_IMAGE_VIEW (self), FALSE);
  return self->roi_mode;
}

void
ss_image_view_set_pick_mode (SsImageView *self, gboolean picking)
{
  g_return_if_fail (SS_IS_IMAGE_VIEW (self));
  if (self->pick_mode == !!picking)
    return;
  self->pick_mode = !!picking;
  update_cursor (self);
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_PICK_MODE]);
}

gboolean
ss_image_view_get_pick_mode (SsImageView *self)
{
  g_return_val_if_fail (SS_IS_IMAGE_VIEW (self), FALSE);
  return self->pick_mode;
}

/* ---- GObject -------------------------------------------------------------- */

static void
ss_image_view_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  SsImageView *self = SS_IMAGE_VIEW (object);
  switch (prop_id)
    {
    case PROP_ZOOM:
      g_value_set_double (value, self->zoom);
      break;
    case PROP_ROI_MODE:
      g_value_set_boolean (value, self->roi_mode);
      break;
    case PROP_PICK_MODE:
      g_value_set_boolean (value, self->pick_mode);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
ss_image_view_set_property (GObject *object, guint prop_id, const GValue *value,
                            GParamSpec *pspec)
{
  SsImageView *self = SS_IMAGE_VIEW (object);
  switch (prop_id)
    {
    case PROP_ROI_MODE:
      ss_image_view_set_roi_mode (self, g_value_get_boolean (value));
      break;
    case PROP_PICK_MODE:
      ss_image_view_set_pick_mode (self, g_value_get_boolean (value));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
ss_image_view_dispose (GObject *object)
{
  SsImageView *self = SS_IMAGE_VIEW (object);
  g_cancellable_cancel (self->cancellable);
  if (self->render_cancellable != NULL)
    g_cancellable_cancel (self->render_cancellable);
  g_clear_handle_id (&self->zoom_notify_id, g_source_remove);
  for (int i = 0; i < 2; i++)
    {
      g_clear_pointer (&self->frames[i], ss_frame_unref);
      g_clear_pointer (&self->surface_frames[i], ss_frame_unref);
      g_clear_pointer (&self->surfaces[i], cairo_surface_destroy);
      g_clear_pointer (&self->scaled[i], cairo_surface_destroy);
    }
  G_OBJECT_CLASS (ss_image_view_parent_class)->dispose (object);
}

static void
ss_image_view_finalize (GObject *object)
{
  SsImageView *self = SS_IMAGE_VIEW (object);
  g_free (self->labels[0]);
  g_free (self->labels[1]);
  g_free (self->placeholder);
  g_clear_object (&self->cancellable);
  g_clear_object (&self->render_cancellable);
  G_OBJECT_CLASS (ss_image_view_parent_class)->finalize (object);
}

static void
add_key (GtkShortcutController *controller, guint keyval, GtkShortcutFunc func)
{
  gtk_shortcut_controller_add_shortcut (
      controller, gtk_shortcut_new (gtk_keyval_trigger_new (keyval, 0),
                                    gtk_callback_action_new (func, NULL, NULL)));
}

static void
ss_image_view_class_init (SsImageViewClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);

  object_class->get_property = ss_image_view_get_property;
  object_class->set_property = ss_image_view_set_property;
  object_class->dispose = ss_image_view_dispose;
  object_class->finalize = ss_image_view_finalize;
  widget_class->snapshot = ss_image_view_snapshot;
  widget_class->size_allocate = ss_image_view_size_allocate;
  widget_class->measure = ss_image_view_measure;

  properties[PROP_ZOOM] = g_param_spec_double ("zoom", NULL, NULL, ZOOM_MIN, ZOOM_MAX, 1.0,
                                               G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  properties[PROP_ROI_MODE] = g_param_spec_boolean ("roi-mode", NULL, NULL, FALSE,
                                                    G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS
                                                        | G_PARAM_EXPLICIT_NOTIFY);
  properties[PROP_PICK_MODE] = g_param_spec_boolean ("pick-mode", NULL, NULL, FALSE,
                                                     G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS
                                                         | G_PARAM_EXPLICIT_NOTIFY);
  g_object_class_install_properties (object_class, N_PROPS, properties);

  /* hover (inside, x, y, value): FITS pixel numbers (1-based) and the value
   * in the frame's units; INSIDE is FALSE when the pointer left the image. */
  signals[SIGNAL_HOVER] = g_signal_new ("hover", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST, 0,
                                        NULL, NULL, NULL, G_TYPE_NONE, 4, G_TYPE_BOOLEAN,
                                        G_TYPE_INT, G_TYPE_INT, G_TYPE_DOUBLE);
  signals[SIGNAL_ROI_CHANGED] = g_signal_new ("roi-changed", G_TYPE_FROM_CLASS (klass),
                                              G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                                              G_TYPE_NONE, 0);
  /* pixel-picked (col, row): a click in pick mode, full-image pixels from 0,
   * row 0 at the bottom. */
  signals[SIGNAL_PIXEL_PICKED] = g_signal_new ("pixel-picked", G_TYPE_FROM_CLASS (klass),
                                               G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                                               G_TYPE_NONE, 2, G_TYPE_INT, G_TYPE_INT);
  gtk_widget_class_set_css_name (widget_class, "ss-image-view");
}

static void
ss_image_view_init (SsImageView *self)
{
  GtkWidget *widget = GTK_WIDGET (self);
  self->zoom = 1.0;
  self->split_fraction = 0.5;
  self->fit_mode = TRUE;
  ss_display_init (&self->display);
  self->cancellable = g_cancellable_new ();
  self->placeholder = g_strdup ("No image");
  gtk_widget_set_focusable (widget, TRUE);
  gtk_widget_set_focus_on_click (widget, TRUE);
  gtk_widget_set_hexpand (widget, TRUE);
  gtk_widget_set_vexpand (widget, TRUE);
  gtk_widget_set_overflow (widget, GTK_OVERFLOW_HIDDEN);

  GtkEventController *motion = gtk_event_controller_motion_new ();
  g_signal_connect (motion, "motion", G_CALLBACK (on_motion), self);
  g_signal_connect (motion, "leave", G_CALLBACK (on_leave), self);
  gtk_widget_add_controller (widget, motion);

  GtkEventController *scroll = gtk_event_controller_scroll_new (
      GTK_EVENT_CONTROLLER_SCROLL_VERTICAL);
  g_signal_connect (scroll, "scroll", G_CALLBACK (on_scroll), self);
  gtk_widget_add_controller (widget, scroll);

  GtkGesture *drag = gtk_gesture_drag_new ();
  gtk_gesture_single_set_button (GTK_GESTURE_SINGLE (drag), GDK_BUTTON_PRIMARY);
  g_signal_connect (drag, "drag-begin", G_CALLBACK (on_drag_begin), self);
  g_signal_connect (drag, "drag-update", G_CALLBACK (on_drag_update), self);
  g_signal_connect (drag, "drag-end", G_CALLBACK (on_drag_end), self);
  gtk_widget_add_controller (widget, GTK_EVENT_CONTROLLER (drag));

  /* Single keys only while the view has focus, so they never eat typing in
   * the parameter entries; the window has Ctrl+ variants for everywhere. */
  GtkEventController *keys = gtk_shortcut_controller_new ();
  GtkShortcutController *sc = GTK_SHORTCUT_CONTROLLER (keys);
  add_key (sc, GDK_KEY_plus, shortcut_zoom_in);
  add_key (sc, GDK_KEY_equal, shortcut_zoom_in);
  add_key (sc, GDK_KEY_KP_Add, shortcut_zoom_in);
  add_key (sc, GDK_KEY_minus, shortcut_zoom_out);
  add_key (sc, GDK_KEY_KP_Subtract, shortcut_zoom_out);
  add_key (sc, GDK_KEY_0, shortcut_zoom_fit);
  add_key (sc, GDK_KEY_KP_0, shortcut_zoom_fit);
  add_key (sc, GDK_KEY_1, shortcut_zoom_one);
  add_key (sc, GDK_KEY_KP_1, shortcut_zoom_one);
  gtk_widget_add_controller (widget, keys);
}
