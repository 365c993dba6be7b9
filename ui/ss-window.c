/* ss-window.c: the main window (template in ss-window.ui): its views, status line
 * and messages. The other ss-window-*.c files hold its other seams. */
#include "ss-window-private.h"

#include <math.h>
#include <string.h>
#include <unistd.h>

G_DEFINE_FINAL_TYPE (SsWindow, ss_window, GTK_TYPE_APPLICATION_WINDOW)

const char *const ss_window_view_names[SS_WINDOW_N_VIEWS] = {
  "original", "measured", "recovered", "error",
};
const char *const ss_window_view_titles[SS_WINDOW_N_VIEWS] = {
  "Original", "Measured", "Recovered", "Error",
};

/* ---- small helpers -------------------------------------------------------- */

#define HELD_APPLICATION "ss-held-application"

void
ss_window_hold_application_for (SsWindow *self, GObject *owner)
{
  GtkApplication *app = gtk_window_get_application (GTK_WINDOW (self));
  if (app == NULL)
    return;
  g_application_hold (G_APPLICATION (app));
  g_object_set_data_full (owner, HELD_APPLICATION, app, (GDestroyNotify) g_application_release);
}

void
ss_window_release_application_of (GObject *owner)
{
  g_object_set_data (owner, HELD_APPLICATION, NULL);
}

GAction *
ss_window_win_action (SsWindow *self, const char *name)
{
  return g_action_map_lookup_action (G_ACTION_MAP (self), name);
}

void
ss_window_enable_action (SsWindow *self, const char *name, gboolean enabled)
{
  GAction *action = ss_window_win_action (self, name);
  if (action)
    g_simple_action_set_enabled (G_SIMPLE_ACTION (action), enabled);
}

/* Resident memory of the process (the status line's "memory"). */
gsize
ss_window_resident_bytes (void)
{
  g_autofree char *text = NULL;
  if (!g_file_get_contents ("/proc/self/statm", &text, NULL, NULL))
    return 0;
  unsigned long size = 0, resident = 0;
  if (sscanf (text, "%lu %lu", &size, &resident) != 2)
    return 0;
  return (gsize) resident * (gsize) sysconf (_SC_PAGESIZE);
}

void
ss_window_set_status (SsWindow *self, const char *text)
{
  if (!self->disposed)
    gtk_label_set_text (self->status_label, text);
}

void
ss_window_update_idle_status (SsWindow *self)
{
  if (self->input == NULL)
    {
      ss_window_set_status (self, self->loading ? "Loading…" : "No image");
      return;
    }
  g_autofree char *base = self->path ? g_path_get_basename (self->path) : g_strdup ("image");
  g_autofree char *text = g_strdup_printf ("%s · %d×%d · ready", base, self->input->width,
                                           self->input->height);
  ss_window_set_status (self, text);
}

/* ---- the message banner --------------------------------------------------- */

void
ss_window_show_message (SsWindow *self, const char *text, gboolean is_error)
{
  if (self->disposed)
    return;
  g_free (self->message);
  self->message = g_strdup (text);
  gtk_label_set_text (self->banner_label, text);
  gtk_image_set_from_icon_name (self->banner_icon, is_error ? "dialog-error-symbolic"
                                                            : "dialog-information-symbolic");
  if (is_error)
    {
      gtk_widget_add_css_class (self->banner_box, "error");
      gtk_widget_remove_css_class (self->banner_box, "info");
    }
  else
    {
      gtk_widget_add_css_class (self->banner_box, "info");
      gtk_widget_remove_css_class (self->banner_box, "error");
    }
  /* A plain show/hide: GTK 4.8's revealer can draw its child before
   * allocating it. */
  gtk_widget_set_visible (self->banner_box, TRUE);
}

void
ss_window_show_error (SsWindow *self, const char *context, const GError *error)
{
  g_autofree char *text = context ? g_strdup_printf ("%s: %s", context, error->message)
                                  : g_strdup (error->message);
  ss_window_show_message (self, text, TRUE);
}

/* "Could not open “name”: why", without the path the engine's message
 * usually starts with (the context already names the file). */
void
ss_window_show_file_error (SsWindow *self, const char *verb, const char *path, const GError *error)
{
  g_autofree char *base = g_path_get_basename (path);
  const char *why = error->message;
  if (g_str_has_prefix (why, path) && g_str_has_prefix (why + strlen (path), ": "))
    why += strlen (path) + 2;
  g_autofree char *text = g_strdup_printf ("Could not %s “%s”: %s", verb, base, why);
  ss_window_show_message (self, text, TRUE);
}

void
ss_window_dismiss_message (SsWindow *self)
{
  g_clear_pointer (&self->message, g_free);
  if (!self->disposed)
    gtk_widget_set_visible (self->banner_box, FALSE);
}

/* ---- views ---------------------------------------------------------------- */

SsFrame *
ss_window_frame_for (SsWindow *self, SsViewKind kind, gboolean job_region)
{
  switch (kind)
    {
    case SS_VIEW_ORIGINAL:
      if (job_region && self->job != NULL)
        return self->job->original;
      return self->input;
    case SS_VIEW_MEASURED:
      return self->job ? self->job->measured : NULL;
    case SS_VIEW_RECOVERED:
      return self->preview && self->running ? self->preview : self->recovered;
    case SS_VIEW_ERROR:
      return self->error_frame;
    default:
      return NULL;
    }
}

static const char *
placeholder_for (SsWindow *self, SsViewKind kind)
{
  if (self->input == NULL)
    return self->loading ? "Loading…" : "Open an image (Ctrl+O) or drop a FITS or PNG file here";
  switch (kind)
    {
    case SS_VIEW_MEASURED:
      return self->running ? "Building the measurement…"
                           : "Run (Ctrl+R) to build the measurement from the panel's settings";
    case SS_VIEW_RECOVERED:
      return self->running ? "Waiting for the first estimate…"
                           : "Run (Ctrl+R) to recover the image";
    case SS_VIEW_ERROR:
      if (self->job != NULL && self->job->truth == NULL)
        return "The error needs a known truth: choose \"Simulate an acquisition\" as the mode";
      return "Run (Ctrl+R) in Simulate mode to see |recovered − truth|";
    case SS_VIEW_ORIGINAL:
    default:
      return "";
    }
}

void
ss_window_refresh_view (SsWindow *self)
{
  if (self->disposed)
    return;
  /* Both sides of a split show the solved region, so they line up. */
  gboolean job_region = self->split && self->job != NULL
                        && (self->view_kind != SS_VIEW_ORIGINAL
                            || self->split_kind != SS_VIEW_ORIGINAL);
  SsFrame *primary = ss_window_frame_for (self, self->view_kind, job_region);
  SsFrame *secondary = self->split ? ss_window_frame_for (self, self->split_kind, job_region)
                                   : NULL;
  if (primary == NULL)
    secondary = NULL;
  ss_image_view_set_placeholder (self->view, placeholder_for (self, self->view_kind));
  ss_image_view_set_labels (self->view, ss_window_view_titles[self->view_kind],
                            ss_window_view_titles[self->split_kind]);
  ss_image_view_set_frames (self->view, primary, secondary);
}

void
ss_window_set_view (SsWindow *self, SsViewKind view)
{
  g_return_if_fail (SS_IS_WINDOW (self));
  g_action_group_change_action_state (G_ACTION_GROUP (self), "view",
                                      g_variant_new_string (ss_window_view_names[view]));
}

void
ss_window_change_view_state (GSimpleAction *action, GVariant *value, gpointer data)
{
  SsWindow *self = data;
  const char *name = g_variant_get_string (value, NULL);
  for (guint i = 0; i < G_N_ELEMENTS (ss_window_view_names); i++)
    if (g_str_equal (name, ss_window_view_names[i]))
      {
        self->view_kind = (SsViewKind) i;
        g_simple_action_set_state (action, value);
        self->syncing_view = TRUE;
        gtk_drop_down_set_selected (self->view_dropdown, i);
        self->syncing_view = FALSE;
        ss_window_refresh_view (self);
        return;
      }
}

static void
on_view_dropdown (GtkDropDown *dropdown, GParamSpec *pspec, SsWindow *self)
{
  guint i = gtk_drop_down_get_selected (dropdown);
  if (!self->syncing_view && i < G_N_ELEMENTS (ss_window_view_names))
    ss_window_set_view (self, (SsViewKind) i);
}

static void
on_split_dropdown (GtkDropDown *dropdown, GParamSpec *pspec, SsWindow *self)
{
  guint i = gtk_drop_down_get_selected (dropdown);
  if (i < G_N_ELEMENTS (ss_window_view_names))
    {
      self->split_kind = (SsViewKind) i;
      ss_window_refresh_view (self);
    }
}

void
ss_window_change_split_state (GSimpleAction *action, GVariant *value, gpointer data)
{
  SsWindow *self = data;
  self->split = g_variant_get_boolean (value);
  g_simple_action_set_state (action, value);
  gtk_widget_set_sensitive (GTK_WIDGET (self->split_dropdown), self->split);
  ss_window_refresh_view (self);
}

static void
on_display_changed (SsWindow *self)
{
  SsDisplay display = {
    .stretch = (SsStretch) gtk_drop_down_get_selected (self->stretch_dropdown),
    .limits = (SsLimits) gtk_drop_down_get_selected (self->limits_dropdown),
    .colormap = (SsColormap) gtk_drop_down_get_selected (self->colormap_dropdown),
  };
  ss_image_view_set_display (self->view, &display);
}

static void
on_zoom_changed (SsImageView *view, GParamSpec *pspec, SsWindow *self)
{
  char text[32];
  double zoom = ss_image_view_get_zoom (view) * 100.0;
  g_snprintf (text, sizeof text, zoom < 10 ? "%.1f %%" : "%.0f %%", zoom);
  gtk_label_set_text (self->zoom_label, text);
}

static void
on_hover (SsImageView *view, gboolean inside, int x, int y, double value, SsWindow *self)
{
  if (!inside)
    {
      gtk_label_set_text (self->pointer_label, "");
      return;
    }
  g_autofree char *text = isnan (value) ? g_strdup_printf ("x %5d  y %5d  blank", x, y)
                                        : g_strdup_printf ("x %5d  y %5d  %.6g", x, y, value);
  gtk_label_set_text (self->pointer_label, text);
}

/* ---- region of interest --------------------------------------------------- */

static void
on_view_roi_changed (SsImageView *view, SsWindow *self)
{
  GdkRectangle roi;
  if (ss_image_view_get_roi (view, &roi))
    ss_params_panel_set_roi (self->panel, &roi);
  g_object_set (self->panel, "roi-drawing", FALSE, NULL);
}

static void
on_panel_roi_changed (SsParamsPanel *panel, SsWindow *self)
{
  GdkRectangle roi;
  if (ss_params_panel_get_roi (panel, &roi))
    ss_image_view_set_roi (self->view, &roi);
  else
    ss_image_view_set_roi (self->view, NULL);
}

/* ---- devices -------------------------------------------------------------- */

/* What the devices thread found: the list the compute choice offers and
 * the lines shown under it (the CPU's too), as `sharpsky-cli info` has them. */
typedef struct {
  GArray *list;
  char *text;
} FoundDevices;

static void
found_devices_free (gpointer data)
{
  FoundDevices *found = data;
  g_array_unref (found->list);
  g_free (found->text);
  g_free (found);
}

/* Asking the driver takes a while (its start-up): off the main thread. */
static void
devices_thread (GTask *task, gpointer source, gpointer data, GCancellable *cancellable)
{
  FoundDevices *found = g_new0 (FoundDevices, 1);
  found->list = ss_backend_list_devices ();
  found->text = ss_backend_describe_devices ();
  g_task_return_pointer (task, found, found_devices_free);
}

static void
devices_done (GObject *source, GAsyncResult *result, gpointer data)
{
  SsWindow *self = SS_WINDOW (source);
  FoundDevices *found = g_task_propagate_pointer (G_TASK (result), NULL);
  if (found == NULL)
    return;
  if (!self->disposed)
    {
      const char *text = g_strchomp (found->text);
      ss_params_panel_set_device_text (self->panel, text[0] ? text : "No compute device found");
      ss_params_panel_set_devices (self->panel, found->list);
    }
  found_devices_free (found);
}

/* ---- GObject -------------------------------------------------------------- */

SsWindow *
ss_window_new (GtkApplication *application)
{
  return g_object_new (SS_TYPE_WINDOW, "application", application, NULL);
}

static gboolean
ss_window_close_request (GtkWindow *window)
{
  SsWindow *self = SS_WINDOW (window);
  if (self->cancellable)
    g_cancellable_cancel (self->cancellable);
  /* Still attached to its application here (not in dispose): quitting
   * waits for the solve's last step. */
  ss_window_hold_running_solve (self);
  return GTK_WINDOW_CLASS (ss_window_parent_class)->close_request (window);
}

static void
ss_window_dispose (GObject *object)
{
  SsWindow *self = SS_WINDOW (object);
  if (!self->disposed)
    {
      self->disposed = TRUE;
      g_signal_handlers_disconnect_by_data (gtk_recent_manager_get_default (), self);
      if (self->cancellable)
        g_cancellable_cancel (self->cancellable);
      if (self->fit_cancellable)
        g_cancellable_cancel (self->fit_cancellable);
      if (self->load_cancellable)
        g_cancellable_cancel (self->load_cancellable);
      ss_window_detach_task (self);
      /* The phase window is destroyed with this one, but whatever holds
       * it (its save dialog) may keep it a moment longer: the weak
       * pointer into SELF must go first. */
      g_clear_weak_pointer (&self->phase_window);
      g_clear_handle_id (&self->stop_timeout_id, g_source_remove);
      g_clear_handle_id (&self->status_tick_id, g_source_remove);
    }
  G_OBJECT_CLASS (ss_window_parent_class)->dispose (object);
}

static void
ss_window_finalize (GObject *object)
{
  SsWindow *self = SS_WINDOW (object);
  g_free (self->path);
  ss_frame_unref (self->input);
  if (self->header)
    ss_header_free (self->header);
  g_clear_error (&self->load_error);
  g_clear_error (&self->export_error);
  g_clear_error (&self->fit_error);
  g_clear_object (&self->fit_cancellable);
  g_clear_object (&self->load_cancellable);
  g_clear_pointer (&self->hdus, g_ptr_array_unref);
  ss_job_unref (self->job);
  ss_window_clear_results (self);
  g_free (self->backend_text);
  g_clear_object (&self->compare_entry);
  g_array_unref (self->compare_queue);
  ss_settings_clear (&self->compare_settings);
  g_free (self->message);
  G_OBJECT_CLASS (ss_window_parent_class)->finalize (object);
}

static void
ss_window_class_init (SsWindowClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);
  object_class->dispose = ss_window_dispose;
  object_class->finalize = ss_window_finalize;
  GTK_WINDOW_CLASS (klass)->close_request = ss_window_close_request;

  g_type_ensure (SS_TYPE_PARAMS_PANEL);
  g_type_ensure (SS_TYPE_IMAGE_VIEW);
  g_type_ensure (SS_TYPE_PLOT);
  g_type_ensure (SS_TYPE_COMPARE_TABLE);
  gtk_widget_class_set_template_from_resource (widget_class,
                                               "/org/sharpsky/Sharpsky/ss-window.ui");
#define CHILD(name) gtk_widget_class_bind_template_child (widget_class, SsWindow, name)
  CHILD (main_menu);
  CHILD (recent_menu);
  CHILD (compare_list);
  CHILD (compare_button);
  CHILD (banner_box);
  CHILD (banner_icon);
  CHILD (banner_label);
  CHILD (panel);
  CHILD (view);
  CHILD (plot);
  CHILD (table);
  CHILD (view_dropdown);
  CHILD (split_dropdown);
  CHILD (stretch_dropdown);
  CHILD (limits_dropdown);
  CHILD (colormap_dropdown);
  CHILD (zoom_label);
  CHILD (status_label);
  CHILD (pointer_label);
#undef CHILD
}

static void
setup_display_controls (SsWindow *self)
{
  SsDisplay display;
  ss_display_init (&display);
  gtk_drop_down_set_selected (self->stretch_dropdown, display.stretch);
  gtk_drop_down_set_selected (self->limits_dropdown, display.limits);
  gtk_drop_down_set_selected (self->colormap_dropdown, display.colormap);
  GtkDropDown *controls[] = { self->stretch_dropdown, self->limits_dropdown,
                              self->colormap_dropdown };
  for (guint i = 0; i < G_N_ELEMENTS (controls); i++)
    g_signal_connect_swapped (controls[i], "notify::selected", G_CALLBACK (on_display_changed),
                              self);
  on_display_changed (self);

  self->split_kind = SS_VIEW_MEASURED;
  gtk_drop_down_set_selected (self->split_dropdown, SS_VIEW_MEASURED);
  gtk_widget_set_sensitive (GTK_WIDGET (self->split_dropdown), FALSE);
  g_signal_connect (self->view_dropdown, "notify::selected", G_CALLBACK (on_view_dropdown), self);
  g_signal_connect (self->split_dropdown, "notify::selected", G_CALLBACK (on_split_dropdown),
                    self);
}

static void
setup_recent (SsWindow *self)
{
  g_menu_insert_submenu (self->main_menu, 2, "Open _Recent", G_MENU_MODEL (self->recent_menu));
  g_signal_connect_swapped (gtk_recent_manager_get_default (), "changed",
                            G_CALLBACK (ss_window_rebuild_recent_menu), self);
  ss_window_rebuild_recent_menu (self);
}

static void
setup_drop_target (SsWindow *self)
{
  GtkDropTarget *target = gtk_drop_target_new (GDK_TYPE_FILE_LIST, GDK_ACTION_COPY);
  g_signal_connect (target, "drop", G_CALLBACK (ss_window_on_drop), self);
  gtk_widget_add_controller (GTK_WIDGET (self), GTK_EVENT_CONTROLLER (target));
}

static void
ss_window_init (SsWindow *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
  self->read_seconds = NAN;
  self->compare_queue = g_array_new (FALSE, FALSE, sizeof (SsSolveParams));
  ss_settings_init (&self->compare_settings);
  ss_window_add_actions (self);
  ss_window_fill_compare_list (self);
  setup_display_controls (self);
  setup_recent (self);
  setup_drop_target (self);

  g_signal_connect (self->view, "notify::zoom", G_CALLBACK (on_zoom_changed), self);
  g_signal_connect (self->view, "hover", G_CALLBACK (on_hover), self);
  g_signal_connect (self->view, "roi-changed", G_CALLBACK (on_view_roi_changed), self);
  g_signal_connect (self->panel, "roi-changed", G_CALLBACK (on_panel_roi_changed), self);
  g_object_bind_property (self->panel, "roi-drawing", self->view, "roi-mode",
                          G_BINDING_BIDIRECTIONAL | G_BINDING_SYNC_CREATE);
  g_object_bind_property (self->panel, "picking-star", self->view, "pick-mode",
                          G_BINDING_BIDIRECTIONAL | G_BINDING_SYNC_CREATE);
  g_signal_connect (self->view, "pixel-picked", G_CALLBACK (ss_window_on_pixel_picked), self);
  g_signal_connect_swapped (self->view, "notify::pick-mode", G_CALLBACK (ss_window_update_actions),
                            self);
  g_signal_connect (self->table, "selected", G_CALLBACK (ss_window_on_table_selected), self);
  g_signal_connect_swapped (self, "notify::fullscreened", G_CALLBACK (ss_window_on_fullscreened),
                            self);

  self->status_tick_id = g_timeout_add (500, ss_window_on_status_tick, self);

  GTask *devices = g_task_new (self, NULL, devices_done, NULL);
  g_task_run_in_thread (devices, devices_thread);
  g_object_unref (devices);

  ss_window_refresh_view (self);
  ss_window_update_actions (self);
  ss_window_update_idle_status (self);
}
