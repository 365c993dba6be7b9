/* ss-window.c: the main window (template in ss-window.ui). */
#include "ss-window.h"
#include "ss-config.h"
#include "ss-export.h"
#include "ss-solve-task.h"
#include "ss-star-fit.h"
#include "ss-gunzip.h"

#include <math.h>
#include <string.h>
#include <unistd.h>

#define SAMPLE_NAME "hubble_deep_field.fits"
/* A stop the engine has not honoured after this long detaches the worker. */
#define STOP_DETACH_MS 400
#define RECENT_MAX 8
#define APP_NAME "Sharpsky"

typedef struct {
  SsSolverKind kind;
  SsDirectMethod method;
} CompareItem;

struct _SsWindow
{
  GtkApplicationWindow parent_instance;

  /* Template children. */
  GMenu *main_menu;
  GMenu *recent_menu;
  GtkCheckButton *compare_cpadmm, *compare_fista, *compare_ista;
  GtkCheckButton *compare_cholesky, *compare_gets, *compare_fft;
  GtkMenuButton *compare_button;
  GtkWidget *banner_box;
  GtkImage *banner_icon;
  GtkLabel *banner_label;
  SsParamsPanel *panel;
  SsImageView *view;
  SsPlot *plot;
  SsCompareTable *table;
  GtkDropDown *view_dropdown, *split_dropdown, *stretch_dropdown, *limits_dropdown,
      *colormap_dropdown;
  GtkLabel *zoom_label, *status_label, *pointer_label;

  /* The open image: HDU number HDU of the file (-1: not FITS) and its
   * plane PLANE (-1: the mean of three colour planes). */
  char *path;
  GPtrArray *hdus;          /* the file's SsFitsHdu, or NULL (PNG) */
  int hdu, plane;
  SsHduChooser *chooser;    /* while one is open */
  SsFrame *input;
  SsHeader *header;
  gboolean loading;
  GError *load_error;
  GCancellable *load_cancellable;

  /* The problem and the result shown. */
  SsJob *job;
  SsFrame *recovered;
  SsFrame *error_frame;
  SsFrame *preview;
  SsSolveTask *result_task;   /* the run whose result is shown (settings, metrics) */

  /* The run under way. */
  SsSolveTask *task;
  GCancellable *cancellable;
  gboolean running;
  guint series;
  guint preview_count;
  int iteration;
  int iteration_target;
  guint stop_timeout_id;
  guint status_tick_id;
  gint64 run_started;       /* when Run was pressed (monotonic µs) */
  gint64 started_at;        /* when the backend started, 0 before */
  gint64 last_progress;     /* when the last report arrived */
  char *backend_text;

  /* A comparison: what is left to run, and the row being filled. */
  gboolean comparing;
  GArray *compare_queue;
  SsCompareEntry *compare_entry;
  SsSettings compare_settings;

  /* A star being fitted for the PSF. */
  gboolean fitting;
  GError *fit_error;
  GCancellable *fit_cancellable;

  /* Exports. */
  gboolean exporting;
  GError *export_error;

  SsViewKind view_kind;
  SsViewKind split_kind;
  gboolean split;
  gboolean syncing_view;
  char *message;
  gboolean disposed;
};

G_DEFINE_FINAL_TYPE (SsWindow, ss_window, GTK_TYPE_APPLICATION_WINDOW)

static const char *const view_names[] = { "original", "measured", "recovered", "error" };
static const char *const view_titles[] = { "Original", "Measured", "Recovered", "Error" };

static void update_actions (SsWindow *self);
static guint count_images (GPtrArray *hdus);
static gboolean offers_a_choice (SsWindow *self);
static void refresh_view (SsWindow *self);
static void compare_next (SsWindow *self);

/* ---- small helpers -------------------------------------------------------- */

static GAction *
win_action (SsWindow *self, const char *name)
{
  return g_action_map_lookup_action (G_ACTION_MAP (self), name);
}

static void
enable_action (SsWindow *self, const char *name, gboolean enabled)
{
  GAction *action = win_action (self, name);
  if (action)
    g_simple_action_set_enabled (G_SIMPLE_ACTION (action), enabled);
}

/* Resident memory of the process (the status line's "memory"). */
static gsize
resident_bytes (void)
{
  g_autofree char *text = NULL;
  if (!g_file_get_contents ("/proc/self/statm", &text, NULL, NULL))
    return 0;
  unsigned long size = 0, resident = 0;
  if (sscanf (text, "%lu %lu", &size, &resident) != 2)
    return 0;
  return (gsize) resident * (gsize) sysconf (_SC_PAGESIZE);
}

static void
set_status (SsWindow *self, const char *text)
{
  if (!self->disposed)
    gtk_label_set_text (self->status_label, text);
}

/* ---- the message banner --------------------------------------------------- */

static void
show_message (SsWindow *self, const char *text, gboolean is_error)
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

static void
show_error (SsWindow *self, const char *context, const GError *error)
{
  g_autofree char *text = context ? g_strdup_printf ("%s: %s", context, error->message)
                                  : g_strdup (error->message);
  show_message (self, text, TRUE);
}

/* "Could not open “name”: why", without the path the engine's message
 * usually starts with (the context already names the file). */
static void
show_file_error (SsWindow *self, const char *verb, const char *path, const GError *error)
{
  g_autofree char *base = g_path_get_basename (path);
  const char *why = error->message;
  if (g_str_has_prefix (why, path) && g_str_has_prefix (why + strlen (path), ": "))
    why += strlen (path) + 2;
  g_autofree char *text = g_strdup_printf ("Could not %s “%s”: %s", verb, base, why);
  show_message (self, text, TRUE);
}

static void
dismiss_message (SsWindow *self)
{
  g_clear_pointer (&self->message, g_free);
  if (!self->disposed)
    gtk_widget_set_visible (self->banner_box, FALSE);
}

/* ---- views ---------------------------------------------------------------- */

static SsFrame *
frame_for (SsWindow *self, SsViewKind kind, gboolean job_region)
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

static void
refresh_view (SsWindow *self)
{
  if (self->disposed)
    return;
  /* Both sides of a split show the solved region, so they line up. */
  gboolean job_region = self->split && self->job != NULL
                        && (self->view_kind != SS_VIEW_ORIGINAL
                            || self->split_kind != SS_VIEW_ORIGINAL);
  SsFrame *primary = frame_for (self, self->view_kind, job_region);
  SsFrame *secondary = self->split ? frame_for (self, self->split_kind, job_region) : NULL;
  if (primary == NULL)
    secondary = NULL;
  ss_image_view_set_placeholder (self->view, placeholder_for (self, self->view_kind));
  ss_image_view_set_labels (self->view, view_titles[self->view_kind],
                            view_titles[self->split_kind]);
  ss_image_view_set_frames (self->view, primary, secondary);
}

void
ss_window_set_view (SsWindow *self, SsViewKind view)
{
  g_return_if_fail (SS_IS_WINDOW (self));
  g_action_group_change_action_state (G_ACTION_GROUP (self), "view",
                                      g_variant_new_string (view_names[view]));
}

SsFrame *
ss_window_get_frame (SsWindow *self, SsViewKind view)
{
  g_return_val_if_fail (SS_IS_WINDOW (self), NULL);
  return frame_for (self, view, FALSE);
}

static void
change_view_state (GSimpleAction *action, GVariant *value, gpointer data)
{
  SsWindow *self = data;
  const char *name = g_variant_get_string (value, NULL);
  for (guint i = 0; i < G_N_ELEMENTS (view_names); i++)
    if (g_str_equal (name, view_names[i]))
      {
        self->view_kind = (SsViewKind) i;
        g_simple_action_set_state (action, value);
        self->syncing_view = TRUE;
        gtk_drop_down_set_selected (self->view_dropdown, i);
        self->syncing_view = FALSE;
        refresh_view (self);
        return;
      }
}

static void
on_view_dropdown (GtkDropDown *dropdown, GParamSpec *pspec, SsWindow *self)
{
  guint i = gtk_drop_down_get_selected (dropdown);
  if (!self->syncing_view && i < G_N_ELEMENTS (view_names))
    ss_window_set_view (self, (SsViewKind) i);
}

static void
on_split_dropdown (GtkDropDown *dropdown, GParamSpec *pspec, SsWindow *self)
{
  guint i = gtk_drop_down_get_selected (dropdown);
  if (i < G_N_ELEMENTS (view_names))
    {
      self->split_kind = (SsViewKind) i;
      refresh_view (self);
    }
}

static void
change_split_state (GSimpleAction *action, GVariant *value, gpointer data)
{
  SsWindow *self = data;
  self->split = g_variant_get_boolean (value);
  g_simple_action_set_state (action, value);
  gtk_widget_set_sensitive (GTK_WIDGET (self->split_dropdown), self->split);
  refresh_view (self);
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

/* ---- status line ---------------------------------------------------------- */

static void
update_running_status (SsWindow *self, const SsProgressPoint *p)
{
  double rate = p->elapsed > 0 ? p->iteration / p->elapsed : 0;
  g_autofree char *mem = ss_format_bytes (resident_bytes ());
  g_autofree char *target = self->iteration_target > 0
                                ? g_strdup_printf ("/%d", self->iteration_target)
                                : g_strdup ("");
  g_autofree char *metric = isfinite (p->mse) ? g_strdup_printf ("MSE %.3e", p->mse)
                                              : g_strdup_printf ("residual %.3e", p->residual);
  /* In a comparison, say which solver is running. */
  g_autofree char *who = self->compare_entry
                             ? g_strdup_printf ("%s: ", ss_compare_entry_get_solver_name (
                                                            self->compare_entry))
                             : g_strdup ("");
  g_autofree char *text = g_strdup_printf (
      "%sIteration %d%s · %.1f it/s · %.1f s · %s · %s · memory %s", who, p->iteration, target,
      rate, p->elapsed, metric, self->backend_text ? self->backend_text : "…", mem);
  set_status (self, text);
}

static void
update_final_status (SsWindow *self, SsSolveTask *task, gboolean ok, gboolean cancelled)
{
  const SsSolveResult *r = ss_solve_task_get_result (task);
  g_autofree char *mem = ss_format_bytes (r->peak_memory_bytes);
  g_autofree char *metric = isfinite (r->mse)
                                ? g_strdup_printf ("MSE %.3e · PSNR %.2f dB", r->mse, r->psnr)
                                : g_strdup_printf ("residual %.3e", r->residual);
  double rate = r->seconds > 0 ? r->iterations / r->seconds : 0;
  g_autofree char *text = NULL;
  if (r->x == NULL)
    text = g_strdup (cancelled ? "Stopped" : "Failed (see the message above)");
  else
    text = g_strdup_printf ("%s: %d iterations in %.2f s (%.1f it/s) · %s · %s (%s) · "
                            "engine peak %s",
                            cancelled ? "Stopped" : ok ? "Done" : "Failed", r->iterations,
                            r->seconds, rate, metric, r->backend ? r->backend : "?",
                            r->device ? r->device : "?", mem);
  set_status (self, text);
}

static void
update_idle_status (SsWindow *self)
{
  if (self->input == NULL)
    {
      set_status (self, self->loading ? "Loading…" : "No image");
      return;
    }
  g_autofree char *base = self->path ? g_path_get_basename (self->path) : g_strdup ("image");
  g_autofree char *text = g_strdup_printf ("%s · %d×%d · ready", base, self->input->width,
                                           self->input->height);
  set_status (self, text);
}

/* ---- solving -------------------------------------------------------------- */

static void
set_job (SsWindow *self, SsJob *job)
{
  if (job == self->job)
    return;
  ss_job_unref (self->job);
  self->job = job ? ss_job_ref (job) : NULL;
  if (!self->disposed)
    ss_plot_set_axis_labels (self->plot, "iteration",
                             job && job->truth ? "MSE (scaled units)"
                                               : "residual ‖PCx − y‖²/m");
}

static void
on_task_job_ready (SsSolveTask *task, SsWindow *self)
{
  set_job (self, ss_solve_task_get_job (task));
  refresh_view (self);
}

static void
on_task_started (SsSolveTask *task, const char *backend, const char *device, SsWindow *self)
{
  g_free (self->backend_text);
  self->backend_text = g_strdup_printf ("%s (%s)", backend, device);
  self->last_progress = g_get_monotonic_time ();
  self->started_at = self->last_progress;
}

/* While a solver gives no report (a dense factorisation takes minutes),
 * the status line still shows that it works and for how long. */
static gboolean
on_status_tick (gpointer data)
{
  SsWindow *self = data;
  if (!self->running || self->task == NULL)
    return G_SOURCE_CONTINUE;
  gint64 now = g_get_monotonic_time ();
  if (self->started_at == 0)
    {
      g_autofree char *text = g_strdup_printf (
          "Building the problem… %.0f s (the first run at a new size also plans its FFTs)",
          (now - self->run_started) / 1e6);
      if (now - self->run_started >= G_USEC_PER_SEC)
        set_status (self, text);
      return G_SOURCE_CONTINUE;
    }
  if (now - self->last_progress < G_USEC_PER_SEC)
    return G_SOURCE_CONTINUE;
  const SsSolveParams *p = &ss_solve_task_get_settings (self->task)->params;
  SsJob *job = ss_solve_task_get_job (self->task);
  g_autofree char *mem = ss_format_bytes (resident_bytes ());
  g_autofree char *text = g_strdup_printf (
      "%s on %d×%d pixels: working… %.0f s · %s · memory %s",
      ss_solver_display_name (p->kind, p->direct_method), job ? job->solve_width : 0,
      job ? job->solve_height : 0, (now - self->started_at) / 1e6,
      self->backend_text ? self->backend_text : "…", mem);
  set_status (self, text);
  return G_SOURCE_CONTINUE;
}

static void
on_task_progress (SsSolveTask *task, GArray *points, SsFrame *preview, SsWindow *self)
{
  gboolean truth = self->job && self->job->truth;
  for (guint i = 0; i < points->len; i++)
    {
      const SsProgressPoint *p = &g_array_index (points, SsProgressPoint, i);
      ss_plot_add_point (self->plot, self->series, p->iteration, truth ? p->mse : p->residual);
      self->iteration = p->iteration;
    }
  if (points->len > 0)
    {
      self->last_progress = g_get_monotonic_time ();
      const SsProgressPoint *last = &g_array_index (points, SsProgressPoint, points->len - 1);
      if (self->compare_entry)
        ss_compare_entry_set_progress (self->compare_entry, last);
      update_running_status (self, last);
    }
  if (preview != NULL)
    {
      ss_frame_unref (self->preview);
      self->preview = ss_frame_ref (preview);
      self->preview_count++;
      refresh_view (self);
    }
}

static void
clear_results (SsWindow *self)
{
  g_clear_pointer (&self->recovered, ss_frame_unref);
  g_clear_pointer (&self->error_frame, ss_frame_unref);
  g_clear_pointer (&self->preview, ss_frame_unref);
  g_clear_object (&self->result_task);
}

static void
show_result_of (SsWindow *self, SsSolveTask *task)
{
  SsFrame *recovered = ss_solve_task_get_recovered (task);
  if (recovered == NULL)
    return;
  /* The last preview stays (ss_window_get_last_preview); the view shows
   * the full estimate once the run is over. */
  g_clear_pointer (&self->recovered, ss_frame_unref);
  g_clear_pointer (&self->error_frame, ss_frame_unref);
  g_clear_object (&self->result_task);
  self->recovered = ss_frame_ref (recovered);
  SsFrame *error_frame = ss_solve_task_get_error_frame (task);
  self->error_frame = error_frame ? ss_frame_ref (error_frame) : NULL;
  self->result_task = g_object_ref (task);
}

static void
detach_task (SsWindow *self)
{
  if (self->task == NULL)
    return;
  g_signal_handlers_disconnect_by_data (self->task, self);
  g_clear_object (&self->task);
  g_clear_object (&self->cancellable);
  self->running = FALSE;
  g_clear_handle_id (&self->stop_timeout_id, g_source_remove);
}

static void
finish_compare_entry (SsWindow *self, SsSolveTask *task, gboolean ok, gboolean cancelled,
                      const GError *error)
{
  if (self->compare_entry == NULL)
    return;
  const char *status = ok ? "done" : cancelled ? "stopped" : error ? error->message : "failed";
  ss_compare_entry_set_finished (self->compare_entry, ss_solve_task_get_result (task),
                                 ss_solve_task_get_recovered (task),
                                 ss_solve_task_get_error_frame (task),
                                 ss_solve_task_get_points (task), status);
  g_object_set_data_full (G_OBJECT (self->compare_entry), "ss-task", g_object_ref (task),
                          g_object_unref);
  g_clear_object (&self->compare_entry);
}

static void
on_solve_done (GObject *source, GAsyncResult *result, gpointer user_data)
{
  SsWindow *self = user_data;     /* a reference taken when the run started */
  SsSolveTask *task = SS_SOLVE_TASK (source);
  g_autoptr (GError) error = NULL;
  gboolean ok = ss_solve_task_run_finish (task, result, &error);

  if (self->disposed || task != self->task)
    {
      /* A stop that was detached, or a closed window: nobody is waiting. */
      g_object_unref (self);
      return;
    }
  gboolean cancelled = g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_object_ref (task);
  detach_task (self);
  set_job (self, ss_solve_task_get_job (task));
  show_result_of (self, task);
  update_final_status (self, task, ok, cancelled);

  const SsSolveResult *r = ss_solve_task_get_result (task);
  const SsSolveParams *params = &ss_solve_task_get_settings (task)->params;
  if (!ok && !cancelled)
    show_error (self, ss_solver_display_name (params->kind, params->direct_method), error);
  else if (r->warning)
    show_message (self, r->warning, FALSE);

  if (self->comparing)
    {
      finish_compare_entry (self, task, ok, cancelled, error);
      /* A stop ends the comparison; so does a problem that could not be
       * built (every solver would fail the same way). */
      if (cancelled || self->job == NULL)
        g_array_set_size (self->compare_queue, 0);
      compare_next (self);
    }
  refresh_view (self);
  update_actions (self);
  g_object_unref (task);
  g_object_unref (self);
}

static gboolean
on_stop_timeout (gpointer data)
{
  SsWindow *self = data;
  self->stop_timeout_id = 0;
  if (!self->running)
    return G_SOURCE_REMOVE;
  /* The engine is inside a step it cannot interrupt (a dense factorisation):
   * let the worker finish on its own and give the window back now. */
  if (self->compare_entry)
    {
      ss_compare_entry_set_finished (self->compare_entry, NULL, NULL, NULL, NULL,
                                     "stopped (finishing in the background)");
      g_clear_object (&self->compare_entry);
    }
  self->comparing = FALSE;
  g_array_set_size (self->compare_queue, 0);
  detach_task (self);
  if (self->preview && self->recovered == NULL)
    self->recovered = ss_frame_ref (self->preview);
  set_status (self, "Stopped (the solver's current step finishes in the background)");
  refresh_view (self);
  update_actions (self);
  return G_SOURCE_REMOVE;
}

void
ss_window_stop (SsWindow *self)
{
  g_return_if_fail (SS_IS_WINDOW (self));
  if (!self->running)
    return;
  g_array_set_size (self->compare_queue, 0);
  g_cancellable_cancel (self->cancellable);
  set_status (self, "Stopping…");
  if (self->stop_timeout_id == 0)
    self->stop_timeout_id = g_timeout_add (STOP_DETACH_MS, on_stop_timeout, self);
}

static gboolean
validate_settings (SsWindow *self, const SsSettings *settings)
{
  if (settings->psf_from_fit && !(settings->psf_fit.fwhm > 0))
    {
      show_message (self, "Cannot run: measure the PSF first (Pick a star, Ctrl+K, or Find "
                    "stars, Ctrl+Shift+K)", TRUE);
      return FALSE;
    }
  g_autoptr (GError) error = NULL;
  SsSolveParams params = settings->params;
  params.report_every = 1;
  if (!ss_solve_params_validate (&params, &error)
      || (settings->mode == SS_MODE_SIMULATE
          && !ss_acquisition_validate (&settings->acquisition, &error)))
    {
      show_error (self, "Cannot run", error);
      return FALSE;
    }
  if (settings->acquisition.psf.kind == SS_PSF_FILE && settings->acquisition.psf.path == NULL)
    {
      show_message (self, "Cannot run: choose the PSF file first", TRUE);
      return FALSE;
    }
  return TRUE;
}

static void
start_solve (SsWindow *self, const SsSettings *settings)
{
  SsJob *reuse = self->job && ss_settings_same_problem (&self->job->settings, settings)
                     ? self->job
                     : NULL;
  if (reuse == NULL)
    set_job (self, NULL);
  self->task = ss_solve_task_new (self->input, self->header, self->path, reuse, settings);
  self->cancellable = g_cancellable_new ();
  self->running = TRUE;
  self->started_at = 0;
  self->run_started = g_get_monotonic_time ();
  self->iteration = 0;
  self->iteration_target = ss_solver_is_iterative (settings->params.kind)
                               ? settings->params.iterations
                               : 0;
  g_clear_pointer (&self->preview, ss_frame_unref);
  g_signal_connect (self->task, "job-ready", G_CALLBACK (on_task_job_ready), self);
  g_signal_connect (self->task, "started", G_CALLBACK (on_task_started), self);
  g_signal_connect (self->task, "progress", G_CALLBACK (on_task_progress), self);
  ss_solve_task_run_async (self->task, self->cancellable, on_solve_done, g_object_ref (self));
  set_status (self, reuse ? "Starting the solver…" : "Building the problem…");
  update_actions (self);
}

static gboolean
can_start (SsWindow *self)
{
  if (self->input == NULL)
    {
      show_message (self, "Open an image first (Ctrl+O)", TRUE);
      return FALSE;
    }
  return !self->running && !self->loading;
}

static void
prepare_views_for_run (SsWindow *self)
{
  dismiss_message (self);
  self->preview_count = 0;
  clear_results (self);
  if (self->view_kind == SS_VIEW_ORIGINAL || self->view_kind == SS_VIEW_ERROR)
    ss_window_set_view (self, SS_VIEW_RECOVERED);
}

void
ss_window_run (SsWindow *self)
{
  g_return_if_fail (SS_IS_WINDOW (self));
  if (!can_start (self))
    return;
  SsSettings settings;
  ss_params_panel_get_settings (self->panel, &settings);
  if (validate_settings (self, &settings))
    {
      self->comparing = FALSE;
      g_clear_object (&self->compare_entry);
      ss_compare_table_clear (self->table);
      gtk_widget_set_visible (GTK_WIDGET (self->table), FALSE);
      ss_plot_clear (self->plot);
      if (ss_solver_is_iterative (settings.params.kind))
        ss_plot_set_x_range (self->plot, settings.params.iterations);
      self->series = ss_plot_add_series (
          self->plot, ss_solver_display_name (settings.params.kind, settings.params.direct_method));
      prepare_views_for_run (self);
      start_solve (self, &settings);
    }
  ss_settings_clear (&settings);
}

/* ---- comparison ----------------------------------------------------------- */

static void
select_best_entry (SsWindow *self)
{
  guint n = ss_compare_table_get_n_entries (self->table);
  guint best = G_MAXUINT;
  double best_mse = INFINITY;
  for (guint i = 0; i < n; i++)
    {
      SsCompareEntry *e = ss_compare_table_get_entry (self->table, i);
      if (ss_compare_entry_get_recovered (e) == NULL)
        continue;
      double mse = ss_compare_entry_get_mse (e);
      if (best == G_MAXUINT || (isfinite (mse) && mse < best_mse))
        {
          best = i;
          best_mse = isfinite (mse) ? mse : best_mse;
        }
    }
  if (best != G_MAXUINT)
    ss_compare_table_select (self->table, best);
}

static void
compare_next (SsWindow *self)
{
  if (self->compare_queue->len == 0)
    {
      g_array_set_size (self->compare_queue, 0);
      self->comparing = FALSE;
      select_best_entry (self);
      return;
    }
  CompareItem item = g_array_index (self->compare_queue, CompareItem, 0);
  g_array_remove_index (self->compare_queue, 0);
  SsSettings settings;
  ss_settings_copy (&self->compare_settings, &settings);
  settings.params.kind = item.kind;
  settings.params.direct_method = item.method;
  const char *name = ss_solver_display_name (item.kind, item.method);
  self->series = ss_plot_add_series (self->plot, name);
  self->compare_entry = ss_compare_entry_new (name, self->series);
  ss_compare_table_append (self->table, self->compare_entry);
  start_solve (self, &settings);
  ss_settings_clear (&settings);
}

void
ss_window_compare (SsWindow *self, const SsSolverKind *kinds, const SsDirectMethod *methods,
                   guint n)
{
  g_return_if_fail (SS_IS_WINDOW (self));
  if (n == 0)
    {
      show_message (self, "Tick at least one solver to compare", TRUE);
      return;
    }
  if (!can_start (self))
    return;
  ss_settings_clear (&self->compare_settings);
  ss_params_panel_get_settings (self->panel, &self->compare_settings);
  if (!validate_settings (self, &self->compare_settings))
    return;
  g_array_set_size (self->compare_queue, 0);
  for (guint i = 0; i < n; i++)
    {
      CompareItem item = { kinds[i], methods ? methods[i] : SS_DIRECT_SOLVE };
      g_array_append_val (self->compare_queue, item);
    }
  self->comparing = TRUE;
  ss_plot_clear (self->plot);
  ss_plot_set_x_range (self->plot, self->compare_settings.params.iterations);
  ss_compare_table_clear (self->table);
  gtk_widget_set_visible (GTK_WIDGET (self->table), TRUE);
  prepare_views_for_run (self);
  compare_next (self);
}

static void
on_table_selected (SsCompareTable *table, SsCompareEntry *entry, SsWindow *self)
{
  if (entry == NULL)
    {
      ss_plot_set_highlight (self->plot, -1);
      return;
    }
  ss_plot_set_highlight (self->plot, (int) ss_compare_entry_get_series (entry));
  SsSolveTask *task = g_object_get_data (G_OBJECT (entry), "ss-task");
  if (task != NULL && ss_solve_task_get_recovered (task) != NULL && !self->running)
    {
      show_result_of (self, task);
      if (self->view_kind == SS_VIEW_ORIGINAL || self->view_kind == SS_VIEW_MEASURED)
        ss_window_set_view (self, SS_VIEW_RECOVERED);
      else
        refresh_view (self);
      update_final_status (self, task, TRUE, FALSE);
    }
}

/* ---- loading -------------------------------------------------------------- */

/* PLANE_DEFAULT: the mean of three colour planes, else the first plane. */
#define PLANE_DEFAULT (-2)

typedef struct {
  char *path;
  int hdu;                  /* wanted: -1 = the first holding an image */
  int plane;                /* wanted: a plane, -1 = colour mean, PLANE_DEFAULT */
  gboolean chosen;          /* HDU and plane were picked by the user */
  gboolean png;             /* not FITS: a PNG (or a file the loader refuses) */
  GPtrArray *hdus;          /* the file's HDUs (FITS), a PNG as one, or NULL */
  SsFrame *frame;
  SsHeader *header;
  char *note;
} LoadData;

static void
load_data_free (gpointer p)
{
  LoadData *d = p;
  g_free (d->path);
  if (d->hdus)
    g_ptr_array_unref (d->hdus);
  ss_frame_unref (d->frame);
  if (d->header)
    ss_header_free (d->header);
  g_free (d->note);
  g_free (d);
}

/* One plane to work on: PLANE of the image read (a FITS file is read one
 * plane at a time, a PNG whole), or with PLANE -1 the mean of three colour
 * planes. */
static SsFrame *
frame_from_image (const SsImage *image, int plane, GError **error)
{
  SsFrame *frame = ss_frame_new (image->width, image->height, error);
  if (frame == NULL)
    return NULL;
  gsize n = ss_image_plane_size (image);
  if (image->planes == 3 && plane == -1)
    for (gsize i = 0; i < n; i++)
      frame->data[i] = (image->data[i] + image->data[n + i] + image->data[2 * n + i]) / 3.0f;
  else
    {
      /* Anything else read whole (not expected) gives its first plane. */
      int p = plane > 0 && plane < image->planes ? plane : 0;
      memcpy (frame->data, image->data + (gsize) p * n, n * sizeof (float));
    }
  return frame;
}

/* A FITS file, or a gzip-compressed one (the reader takes both). */
static gboolean
is_fits_file (const char *path)
{
  static const char magic[] = "SIMPLE  =";
  guchar start[sizeof magic - 1];
  gsize got = 0;
  if (!ss_io_peek_file (path, start, sizeof start, &got, NULL, NULL))
    return FALSE;
  return ss_gunzip_is_gzip (start, got)
         || (got == sizeof start && memcmp (start, magic, sizeof start) == 0);
}

static const SsFitsHdu *
find_hdu (GPtrArray *hdus, int number)
{
  for (guint i = 0; hdus && i < hdus->len; i++)
    {
      const SsFitsHdu *hdu = g_ptr_array_index (hdus, i);
      if (number < 0 ? hdu->has_image : hdu->number == number)
        return hdu;
    }
  return NULL;
}

/* What a PNG, or a FITS HDU and plane, reads as: the plane chosen, or all
 * three planes of a colour image for their mean. Sets D->hdu and D->plane to
 * what is read, and notes what was chosen for the user. */
static void
resolve_plane (LoadData *d, SsFitsReadOptions *options, char **hdu_text)
{
  const SsFitsHdu *hdu = find_hdu (d->hdus, d->hdu);
  if (d->png)
    {
      /* Read whole: resolve_png_plane takes the plane, knowing how many. */
      options->plane = -1;
      return;
    }
  if (hdu == NULL)
    {
      /* An HDU the reader will refuse, with its own message. */
      d->plane = d->plane >= 0 ? d->plane : -1;
      options->plane = d->plane;
      return;
    }
  d->hdu = hdu->number;
  *hdu_text = g_strdup_printf ("%d", hdu->number);
  options->hdu = *hdu_text;
  if (d->plane == PLANE_DEFAULT)
    d->plane = hdu->planes == 3 ? -1 : 0;
  if (d->plane == -1 && hdu->planes != 3)
    d->plane = 0;
  options->plane = d->plane;   /* -1 reads all three planes, for their mean */
  if (hdu->planes > 1 && !d->chosen)
    d->note = d->plane == -1
              ? g_strdup ("colour image: working on the mean of its three planes "
                          "(Ctrl+H picks one)")
              : g_strdup_printf ("image cube: working on plane %d of %" G_GINT64_FORMAT
                                 " (Ctrl+H picks another)", d->plane, hdu->planes);
}

/* The plane of PNG IMAGE (read whole) to work on, as resolve_plane does for
 * FITS: by default the mean of three colour planes, else the first. The PNG
 * is listed as one image, for the chooser to offer its channels. */
static gboolean
resolve_png_plane (LoadData *d, const SsImage *image, GError **error)
{
  if (d->plane == PLANE_DEFAULT || (d->plane == -1 && image->planes != 3))
    d->plane = image->planes == 3 ? -1 : 0;
  if (d->plane >= image->planes)
    {
      g_autofree char *name = g_filename_display_name (d->path);
      g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT,
                   "%s: plane %d does not exist (the PNG has %d)", name, d->plane, image->planes);
      return FALSE;
    }
  SsFitsHdu *entry = g_new0 (SsFitsHdu, 1);
  entry->kind = SS_HDU_CHOOSER_PNG;
  entry->has_image = TRUE;
  entry->width = image->width;
  entry->height = image->height;
  entry->planes = image->planes;
  d->hdus = g_ptr_array_new_with_free_func ((GDestroyNotify) ss_fits_hdu_free);
  g_ptr_array_add (d->hdus, entry);
  d->hdu = 0;
  if (image->planes == 3 && !d->chosen)
    d->note = g_strdup ("colour image: working on the mean of its three planes "
                        "(Ctrl+H picks one)");
  return TRUE;
}

/* A HISTORY card saying where in the file the data came from. */
static void
record_source (const LoadData *d, SsHeader *header)
{
  const SsFitsHdu *hdu = find_hdu (d->hdus, d->hdu);
  if (hdu == NULL || d->png)
    return;
  g_autofree char *base = g_path_get_basename (d->path);
  g_autofree char *plane = d->plane == -1 ? g_strdup (", mean of 3 colour planes")
                           : hdu->planes > 1 ? g_strdup_printf (", plane %d of %" G_GINT64_FORMAT,
                                                                d->plane, hdu->planes)
                                             : g_strdup ("");
  ss_header_add_history (header, "input = %s, HDU %d%s%s%s", base, hdu->number,
                         hdu->name ? " (" : "", hdu->name ? hdu->name : "",
                         hdu->name ? ")" : "");
  if (plane[0])
    ss_header_add_history (header, "input plane:%s", plane + 1);
}

static void
load_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  LoadData *d = task_data;
  GError *error = NULL;
  SsFitsReadOptions options = SS_FITS_READ_OPTIONS_DEFAULT;
  /* The listing reads headers only; a damaged file is reported by the read. */
  d->png = !is_fits_file (d->path);
  if (!d->png)
    d->hdus = ss_fits_list_hdus (d->path, NULL);
  g_autofree char *hdu_text = NULL;
  resolve_plane (d, &options, &hdu_text);
  g_autoptr (SsImage) image = ss_image_load (d->path, &options, &error);
  if (image == NULL)
    {
      g_task_return_error (task, error);
      return;
    }
  gsize finite = 0, n = ss_image_plane_size (image);
  for (gsize i = 0; i < n; i++)
    finite += isfinite (image->data[i]) ? 1 : 0;
  if (finite == 0)
    {
      g_task_return_new_error (task, SS_ERROR, SS_ERROR_FORMAT, "the image has no finite pixel");
      return;
    }
  if (d->png && !resolve_png_plane (d, image, &error))
    {
      g_task_return_error (task, error);
      return;
    }
  d->frame = frame_from_image (image, d->plane, &error);
  if (d->frame == NULL)
    {
      g_task_return_error (task, error);
      return;
    }
  d->header = image->header ? ss_header_copy (image->header) : NULL;
  if (d->header)
    record_source (d, d->header);
  g_task_return_boolean (task, TRUE);
}

static void
add_to_recent (const char *path)
{
  g_autofree char *uri = g_filename_to_uri (path, NULL, NULL);
  if (uri == NULL)
    return;
  /* Every field given: the guesses GTK would make need a program name,
   * which a host program (a test) may not have set. */
  g_autofree char *exec = g_strdup_printf ("%s %%u", g_get_prgname () ? g_get_prgname ()
                                                                     : "sharpsky");
  g_autofree char *lower = g_ascii_strdown (path, -1);
  GtkRecentData data = {
    .display_name = NULL,
    .description = NULL,
    .mime_type = (char *) (g_str_has_suffix (lower, ".png") ? "image/png" : "image/fits"),
    .app_name = (char *) g_get_application_name (),
    .app_exec = exec,
    .groups = NULL,
    .is_private = FALSE,
  };
  if (data.app_name == NULL)
    data.app_name = (char *) APP_NAME;
  gtk_recent_manager_add_full (gtk_recent_manager_get_default (), uri, &data);
}

/* A PSF measured on the image (or HDU, or plane) no longer shown is not
 * this one's: the CLI measures it on the data it deblurs, and so does the
 * app. A fit still running is dropped. */
static void
forget_star_fit (SsWindow *self)
{
  if (self->fit_cancellable != NULL)
    g_cancellable_cancel (self->fit_cancellable);
  ss_params_panel_set_psf_fit (self->panel, NULL, 0);
  ss_image_view_set_pick_mode (self->view, FALSE);
}

static void
take_loaded_image (SsWindow *self, LoadData *d)
{
  g_free (self->path);
  self->path = g_strdup (d->path);
  g_clear_pointer (&self->hdus, g_ptr_array_unref);
  self->hdus = d->hdus ? g_ptr_array_ref (d->hdus) : NULL;
  self->hdu = d->hdus ? d->hdu : -1;
  self->plane = d->plane;
  ss_frame_unref (self->input);
  self->input = ss_frame_ref (d->frame);
  if (self->header)
    ss_header_free (self->header);
  self->header = d->header ? ss_header_copy (d->header) : NULL;
  set_job (self, NULL);
  clear_results (self);
  ss_plot_clear (self->plot);
  ss_compare_table_clear (self->table);
  gtk_widget_set_visible (GTK_WIDGET (self->table), FALSE);
  ss_params_panel_set_roi (self->panel, NULL);
  ss_image_view_set_roi (self->view, NULL);
  ss_params_panel_set_image_size (self->panel, self->input->width, self->input->height);
  forget_star_fit (self);

  g_autofree char *base = g_path_get_basename (d->path);
  g_autofree char *title = g_strdup_printf ("%s — Sharpsky", base);
  gtk_window_set_title (GTK_WINDOW (self), title);
  add_to_recent (d->path);
  ss_solve_task_prepare_size (self->input->width, self->input->height);
  if (d->note)
    show_message (self, d->note, FALSE);
  ss_window_set_view (self, SS_VIEW_ORIGINAL);
  refresh_view (self);
  ss_image_view_zoom_fit (self->view);
  update_idle_status (self);
}

static void
load_done (GObject *source, GAsyncResult *result, gpointer user_data)
{
  SsWindow *self = SS_WINDOW (source);
  LoadData *d = g_task_get_task_data (G_TASK (result));
  g_autoptr (GError) error = NULL;
  self->loading = FALSE;
  g_clear_error (&self->load_error);
  if (self->disposed)
    return;
  if (g_task_propagate_boolean (G_TASK (result), &error))
    {
      take_loaded_image (self, d);
      if (!d->chosen && offers_a_choice (self))
        ss_window_choose_hdu (self);
    }
  else
    {
      show_file_error (self, "open", d->path, error);
      self->load_error = g_error_copy (error);
      update_idle_status (self);
      refresh_view (self);
    }
  update_actions (self);
}

static void
open_path_at (SsWindow *self, const char *path, int hdu, int plane, gboolean chosen)
{
  if (self->running)
    {
      show_message (self, "Stop the running solve before opening another image", TRUE);
      return;
    }
  dismiss_message (self);
  LoadData *d = g_new0 (LoadData, 1);
  d->path = g_strdup (path);
  d->hdu = hdu;
  d->plane = plane;
  d->chosen = chosen;
  self->loading = TRUE;
  g_clear_error (&self->load_error);
  set_status (self, "Loading…");
  GTask *task = g_task_new (self, NULL, load_done, NULL);
  g_task_set_task_data (task, d, load_data_free);
  g_task_set_name (task, "sharpsky load");
  g_task_run_in_thread (task, load_thread);
  g_object_unref (task);
  update_actions (self);
}

void
ss_window_open_path (SsWindow *self, const char *path)
{
  g_return_if_fail (SS_IS_WINDOW (self) && path != NULL);
  open_path_at (self, path, -1, PLANE_DEFAULT, FALSE);
}

/* ---- the HDU and plane ------------------------------------------------------ */

static guint
count_images (GPtrArray *hdus)
{
  guint count = 0;
  for (guint i = 0; hdus && i < hdus->len; i++)
    count += ((const SsFitsHdu *) g_ptr_array_index (hdus, i))->has_image ? 1 : 0;
  return count;
}

/* Whether the open file has something else to offer: another image HDU, or
 * another plane of a cube (a colour image's mean is what most want). */
static gboolean
offers_a_choice (SsWindow *self)
{
  const SsFitsHdu *hdu = find_hdu (self->hdus, self->hdu);
  return count_images (self->hdus) > 1 || (hdu != NULL && hdu->planes > 1 && hdu->planes != 3);
}

static void
on_hdu_chosen (SsHduChooser *chooser, int hdu, int plane, SsWindow *self)
{
  if (self->path != NULL && (hdu != self->hdu || plane != self->plane))
    {
      g_autofree char *path = g_strdup (self->path);
      open_path_at (self, path, hdu, plane, TRUE);
    }
}

static void
on_chooser_destroyed (SsWindow *self)
{
  self->chooser = NULL;
}

void
ss_window_choose_hdu (SsWindow *self)
{
  g_return_if_fail (SS_IS_WINDOW (self));
  if (self->chooser != NULL || self->hdus == NULL || count_images (self->hdus) == 0
      || self->running || self->loading)
    return;
  self->chooser = ss_hdu_chooser_new (GTK_WINDOW (self), self->path, self->hdus, self->hdu,
                                      self->plane);
  g_signal_connect (self->chooser, "chosen", G_CALLBACK (on_hdu_chosen), self);
  g_signal_connect_swapped (self->chooser, "destroy", G_CALLBACK (on_chooser_destroyed), self);
  gtk_window_present (GTK_WINDOW (self->chooser));
}

SsHduChooser *
ss_window_get_hdu_chooser (SsWindow *self)
{
  g_return_val_if_fail (SS_IS_WINDOW (self), NULL);
  return self->chooser;
}

static void
action_choose_hdu (GSimpleAction *action, GVariant *param, gpointer data)
{
  ss_window_choose_hdu (SS_WINDOW (data));
}

char *
ss_window_find_sample (void)
{
  const char *dirs[] = { g_getenv ("SHARPSKY_DATA"), SHARPSKY_DATADIR, SHARPSKY_SOURCE_DATADIR };
  for (guint i = 0; i < G_N_ELEMENTS (dirs); i++)
    {
      if (dirs[i] == NULL || dirs[i][0] == '\0')
        continue;
      char *path = g_build_filename (dirs[i], SAMPLE_NAME, NULL);
      if (g_file_test (path, G_FILE_TEST_IS_REGULAR))
        return path;
      g_free (path);
    }
  return NULL;
}

void
ss_window_open_sample (SsWindow *self)
{
  g_autofree char *path = ss_window_find_sample ();
  if (path == NULL)
    {
      show_message (self, "The sample image " SAMPLE_NAME " is not installed", TRUE);
      return;
    }
  ss_window_open_path (self, path);
}

/* ---- the open dialog and drag and drop ------------------------------------ */

static void
add_filter (GtkFileChooser *chooser, const char *name, const char *const *patterns)
{
  GtkFileFilter *filter = gtk_file_filter_new ();
  gtk_file_filter_set_name (filter, name);
  for (guint i = 0; patterns[i]; i++)
    gtk_file_filter_add_pattern (filter, patterns[i]);
  gtk_file_chooser_add_filter (chooser, filter);
  g_object_unref (filter);
}

static const char *const fits_patterns[] = { "*.fits", "*.fit", "*.fts", "*.FITS", "*.FIT",
                                             "*.FTS", "*.fits.fz", NULL };
static const char *const png_patterns[] = { "*.png", "*.PNG", NULL };
static const char *const image_patterns[] = { "*.fits", "*.fit", "*.fts", "*.FITS", "*.FIT",
                                              "*.FTS", "*.fits.fz", "*.png", "*.PNG", NULL };
static const char *const csv_patterns[] = { "*.csv", "*.CSV", NULL };
static const char *const all_patterns[] = { "*", NULL };

static void
on_open_response (GtkNativeDialog *dialog, int response, SsWindow *self)
{
  if (response == GTK_RESPONSE_ACCEPT && !self->disposed)
    {
      g_autoptr (GFile) file = gtk_file_chooser_get_file (GTK_FILE_CHOOSER (dialog));
      g_autofree char *path = file ? g_file_get_path (file) : NULL;
      if (path)
        ss_window_open_path (self, path);
      else
        show_message (self, "Only local files can be opened", TRUE);
    }
  g_object_unref (dialog);
  g_object_unref (self);
}

static void
action_open (GSimpleAction *action, GVariant *param, gpointer data)
{
  SsWindow *self = data;
  GtkFileChooserNative *dialog = gtk_file_chooser_native_new (
      "Open an Image", GTK_WINDOW (self), GTK_FILE_CHOOSER_ACTION_OPEN, "_Open", "_Cancel");
  GtkFileChooser *chooser = GTK_FILE_CHOOSER (dialog);
  add_filter (chooser, "Images (FITS, PNG)", image_patterns);
  add_filter (chooser, "FITS images", fits_patterns);
  add_filter (chooser, "PNG images", png_patterns);
  add_filter (chooser, "All files", all_patterns);
  if (self->path)
    {
      g_autoptr (GFile) file = g_file_new_for_path (self->path);
      g_autoptr (GFile) folder = g_file_get_parent (file);
      if (folder)
        gtk_file_chooser_set_current_folder (chooser, folder, NULL);
    }
  g_signal_connect (dialog, "response", G_CALLBACK (on_open_response), g_object_ref (self));
  gtk_native_dialog_show (GTK_NATIVE_DIALOG (dialog));
}

static gboolean
on_drop (GtkDropTarget *target, const GValue *value, double x, double y, SsWindow *self)
{
  if (!G_VALUE_HOLDS (value, GDK_TYPE_FILE_LIST))
    return FALSE;
  GSList *files = gdk_file_list_get_files (g_value_get_boxed (value));
  gboolean opened = FALSE;
  if (files != NULL)
    {
      g_autofree char *path = g_file_get_path (files->data);
      if (path)
        {
          ss_window_open_path (self, path);
          opened = TRUE;
        }
      else
        show_message (self, "Only local files can be opened", TRUE);
    }
  g_slist_free (files);
  return opened;
}

/* ---- recent files --------------------------------------------------------- */

static void
rebuild_recent_menu (SsWindow *self)
{
  if (self->disposed)
    return;
  g_menu_remove_all (self->recent_menu);
  GList *items = gtk_recent_manager_get_items (gtk_recent_manager_get_default ());
  guint count = 0;
  for (GList *l = items; l != NULL && count < RECENT_MAX; l = l->next)
    {
      GtkRecentInfo *info = l->data;
      const char *app_name = g_get_application_name ();
      if (!gtk_recent_info_has_application (info, app_name ? app_name : APP_NAME)
          || !gtk_recent_info_is_local (info) || !gtk_recent_info_exists (info))
        continue;
      GMenuItem *item = g_menu_item_new (gtk_recent_info_get_display_name (info), NULL);
      g_menu_item_set_action_and_target_value (
          item, "win.open-recent", g_variant_new_string (gtk_recent_info_get_uri (info)));
      g_menu_append_item (self->recent_menu, item);
      g_object_unref (item);
      count++;
    }
  g_list_free_full (items, (GDestroyNotify) gtk_recent_info_unref);
}

static void
action_open_recent (GSimpleAction *action, GVariant *param, gpointer data)
{
  SsWindow *self = data;
  g_autofree char *path = g_filename_from_uri (g_variant_get_string (param, NULL), NULL, NULL);
  if (path)
    ss_window_open_path (self, path);
}

/* ---- exporting ------------------------------------------------------------ */

typedef struct {
  SsExportFormat format;
  char *path;
  gboolean force;
  SsExportOptions options;
  SsDisplay display;
  SsFrame *frame;
  char *what;
  SsHeader *header;
  SsSettings settings;
  gboolean have_scaling;
  SsScaling scaling;
  gboolean have_result;
  SsSolveResult result;     /* x is never set: metrics and names only */
  char *input_path;
  GPtrArray *names;
  GPtrArray *points;
} ExportData;

static void
export_data_free (gpointer p)
{
  ExportData *d = p;
  g_free (d->path);
  ss_frame_unref (d->frame);
  g_free (d->what);
  if (d->header)
    ss_header_free (d->header);
  ss_settings_clear (&d->settings);
  ss_solve_result_clear (&d->result);
  g_free (d->input_path);
  if (d->names)
    g_ptr_array_unref (d->names);
  if (d->points)
    g_ptr_array_unref (d->points);
  g_free (d);
}

static void
export_thread (GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  ExportData *d = task_data;
  GError *error = NULL;
  const char *inputs[] = { d->input_path, NULL };
  gboolean ok = FALSE;
  switch (d->format)
    {
    case SS_EXPORT_FITS:
      ok = ss_export_fits (d->path, d->frame, d->header, &d->settings,
                           d->have_scaling ? &d->scaling : NULL,
                           d->have_result ? &d->result : NULL, d->what, d->force, inputs, &error);
      break;
    case SS_EXPORT_PNG:
      ok = ss_export_png (d->path, d->frame, d->options.as_displayed ? &d->display : NULL,
                          d->options.bit_depth, d->force, inputs, &error);
      break;
    case SS_EXPORT_CSV:
      ok = ss_export_csv (d->path, d->names, d->points, d->force, &error);
      break;
    }
  if (ok)
    g_task_return_boolean (task, TRUE);
  else
    g_task_return_error (task, error);
}

static void
export_done (GObject *source, GAsyncResult *result, gpointer user_data)
{
  SsWindow *self = SS_WINDOW (source);
  ExportData *d = g_task_get_task_data (G_TASK (result));
  g_autoptr (GError) error = NULL;
  self->exporting = FALSE;
  g_clear_error (&self->export_error);
  g_clear_error (&self->fit_error);
  g_clear_object (&self->fit_cancellable);
  g_clear_pointer (&self->hdus, g_ptr_array_unref);
  if (!g_task_propagate_boolean (G_TASK (result), &error))
    {
      show_file_error (self, "export", d->path, error);
      self->export_error = g_error_copy (error);
    }
  else if (!self->running)
    {
      g_autofree char *text = g_strdup_printf ("Saved %s", d->path);
      set_status (self, text);
    }
  if (!self->disposed)
    update_actions (self);
}

/* The solver's name in the CLI's words ("cpadmm", "direct-fft", ...), for
 * CSV files that scripts read. */
static char *
solver_csv_name (const SsSolveParams *p)
{
  if (p->kind == SS_SOLVER_DIRECT && p->direct_method == SS_DIRECT_INVERSE)
    return g_strdup ("direct-gets");
  return g_strdup (ss_solver_kind_to_string (p->kind));
}

/* The curves of the last run or of every solver of the comparison. */
static void
collect_curves (SsWindow *self, GPtrArray *names, GPtrArray *points)
{
  guint n = ss_compare_table_get_n_entries (self->table);
  if (n > 0)
    {
      for (guint i = 0; i < n; i++)
        {
          SsCompareEntry *e = ss_compare_table_get_entry (self->table, i);
          SsSolveTask *task = g_object_get_data (G_OBJECT (e), "ss-task");
          if (task == NULL || ss_compare_entry_get_points (e) == NULL)
            continue;
          g_ptr_array_add (names, solver_csv_name (&ss_solve_task_get_settings (task)->params));
          g_ptr_array_add (points, g_array_ref (ss_compare_entry_get_points (e)));
        }
      return;
    }
  SsSolveTask *task = self->task ? self->task : self->result_task;
  if (task != NULL)
    {
      g_ptr_array_add (names, solver_csv_name (&ss_solve_task_get_settings (task)->params));
      g_ptr_array_add (points, g_array_ref (ss_solve_task_get_points (task)));
    }
}

static void
fill_export_result (SsWindow *self, ExportData *d, SsViewKind kind)
{
  SsSettings settings;
  ss_params_panel_get_settings (self->panel, &settings);
  SsSolveTask *task = (kind == SS_VIEW_RECOVERED || kind == SS_VIEW_ERROR) ? self->result_task
                                                                           : NULL;
  ss_settings_copy (task ? ss_solve_task_get_settings (task)
                         : self->job ? &self->job->settings : &settings,
                    &d->settings);
  ss_settings_clear (&settings);
  if (self->job && kind != SS_VIEW_ORIGINAL)
    {
      d->have_scaling = TRUE;
      d->scaling = self->job->scaling;
    }
  if (task != NULL)
    {
      const SsSolveResult *r = ss_solve_task_get_result (task);
      d->have_result = TRUE;
      d->result = *r;
      d->result.x = NULL;
      d->result.backend = g_strdup (r->backend);
      d->result.device = g_strdup (r->device);
      d->result.warning = g_strdup (r->warning);
    }
}

void
ss_window_export (SsWindow *self, SsExportFormat format, const char *path,
                  const SsExportOptions *options, gboolean force)
{
  g_return_if_fail (SS_IS_WINDOW (self) && path != NULL);
  ExportData *d = g_new0 (ExportData, 1);
  d->format = format;
  d->path = g_strdup (path);
  d->force = force;
  d->options = options ? *options : (SsExportOptions) { 8, TRUE };
  ss_image_view_get_display (self->view, &d->display);
  d->input_path = g_strdup (self->path);
  ss_settings_init (&d->settings);

  if (format == SS_EXPORT_CSV)
    {
      d->names = g_ptr_array_new_with_free_func (g_free);
      d->points = g_ptr_array_new_with_free_func ((GDestroyNotify) g_array_unref);
      collect_curves (self, d->names, d->points);
      if (d->points->len == 0)
        {
          show_message (self, "No convergence curve to export yet: run a solver first", TRUE);
          g_set_error (&self->export_error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT, "no curve");
          export_data_free (d);
          return;
        }
    }
  else
    {
      SsFrame *frame = frame_for (self, self->view_kind, FALSE);
      if (frame == NULL)
        {
          g_autofree char *text = g_strdup_printf ("The %s view is empty: nothing to export",
                                                   view_titles[self->view_kind]);
          show_message (self, text, TRUE);
          g_clear_error (&self->export_error);
          g_set_error (&self->export_error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT, "%s", text);
          export_data_free (d);
          return;
        }
      d->frame = ss_frame_ref (frame);
      d->what = g_ascii_strdown (view_titles[self->view_kind], -1);
      d->header = self->header ? ss_header_copy (self->header) : NULL;
      fill_export_result (self, d, self->view_kind);
    }
  self->exporting = TRUE;
  g_clear_error (&self->export_error);
  GTask *task = g_task_new (self, NULL, export_done, NULL);
  g_task_set_task_data (task, d, export_data_free);
  g_task_set_name (task, "sharpsky export");
  g_task_run_in_thread (task, export_thread);
  g_object_unref (task);
  update_actions (self);
}

static SsExportFormat
format_from_name (const char *name)
{
  if (g_str_equal (name, "png"))
    return SS_EXPORT_PNG;
  if (g_str_equal (name, "csv"))
    return SS_EXPORT_CSV;
  return SS_EXPORT_FITS;
}

static void
on_export_response (GtkNativeDialog *dialog, int response, SsWindow *self)
{
  SsExportFormat format = GPOINTER_TO_INT (g_object_get_data (G_OBJECT (dialog), "format"));
  if (response == GTK_RESPONSE_ACCEPT && !self->disposed)
    {
      GtkFileChooser *chooser = GTK_FILE_CHOOSER (dialog);
      g_autoptr (GFile) file = gtk_file_chooser_get_file (chooser);
      g_autofree char *path = file ? g_file_get_path (file) : NULL;
      SsExportOptions options = { 8, TRUE };
      if (format == SS_EXPORT_PNG)
        {
          const char *depth = gtk_file_chooser_get_choice (chooser, "depth");
          const char *values = gtk_file_chooser_get_choice (chooser, "values");
          options.bit_depth = g_strcmp0 (depth, "16") == 0 ? 16 : 8;
          options.as_displayed = g_strcmp0 (values, "linear") != 0;
        }
      /* The chooser asked before accepting an existing name: that is the
       * user's consent to replace it. */
      gboolean confirmed = path && g_file_test (path, G_FILE_TEST_EXISTS);
      if (path)
        ss_window_export (self, format, path, &options, confirmed);
      else
        show_message (self, "Only local files can be written", TRUE);
    }
  g_object_unref (dialog);
  g_object_unref (self);
}

static char *
suggested_name (SsWindow *self, SsExportFormat format)
{
  g_autofree char *base = self->path ? g_path_get_basename (self->path) : g_strdup ("sharpsky");
  char *dot = strrchr (base, '.');
  if (dot && dot != base)
    *dot = '\0';
  const char *what = format == SS_EXPORT_CSV ? "convergence" : view_names[self->view_kind];
  const char *ext = format == SS_EXPORT_PNG ? "png" : format == SS_EXPORT_CSV ? "csv" : "fits";
  return g_strdup_printf ("%s-%s.%s", base, what, ext);
}

static void
action_export (GSimpleAction *action, GVariant *param, gpointer data)
{
  SsWindow *self = data;
  SsExportFormat format = format_from_name (g_variant_get_string (param, NULL));
  static const char *const titles[] = { "Export FITS", "Export PNG", "Export Convergence CSV" };
  GtkFileChooserNative *dialog = gtk_file_chooser_native_new (
      titles[format], GTK_WINDOW (self), GTK_FILE_CHOOSER_ACTION_SAVE, "_Export", "_Cancel");
  GtkFileChooser *chooser = GTK_FILE_CHOOSER (dialog);
  add_filter (chooser, format == SS_EXPORT_PNG ? "PNG images"
                       : format == SS_EXPORT_CSV ? "CSV tables" : "FITS images",
              format == SS_EXPORT_PNG ? png_patterns
              : format == SS_EXPORT_CSV ? csv_patterns : fits_patterns);
  if (format == SS_EXPORT_PNG)
    {
      static const char *depth_ids[] = { "8", "16", NULL };
      static const char *depth_labels[] = { "8 bits", "16 bits", NULL };
      static const char *value_ids[] = { "displayed", "linear", NULL };
      static const char *value_labels[] = { "As displayed (stretch and limits)",
                                            "Linear (minimum to maximum)", NULL };
      gtk_file_chooser_add_choice (chooser, "depth", "Depth", depth_ids, depth_labels);
      gtk_file_chooser_set_choice (chooser, "depth", "8");
      gtk_file_chooser_add_choice (chooser, "values", "Values", value_ids, value_labels);
      gtk_file_chooser_set_choice (chooser, "values", "displayed");
    }
  g_autofree char *name = suggested_name (self, format);
  gtk_file_chooser_set_current_name (chooser, name);
  if (self->path)
    {
      g_autoptr (GFile) file = g_file_new_for_path (self->path);
      g_autoptr (GFile) folder = g_file_get_parent (file);
      if (folder)
        gtk_file_chooser_set_current_folder (chooser, folder, NULL);
    }
  g_object_set_data (G_OBJECT (dialog), "format", GINT_TO_POINTER (format));
  g_signal_connect (dialog, "response", G_CALLBACK (on_export_response), g_object_ref (self));
  gtk_native_dialog_show (GTK_NATIVE_DIALOG (dialog));
}

/* ---- actions -------------------------------------------------------------- */

static void
update_actions (SsWindow *self)
{
  if (self->disposed)
    return;
  gboolean idle = !self->running && !self->loading;
  enable_action (self, "run", idle && self->input != NULL);
  enable_action (self, "compare", idle && self->input != NULL);
  /* Escape also leaves star picking. */
  enable_action (self, "stop", self->running || ss_image_view_get_pick_mode (self->view));
  enable_action (self, "pick-star", self->input != NULL && !self->fitting);
  enable_action (self, "find-stars", self->input != NULL && !self->fitting);
  enable_action (self, "open", !self->running);
  enable_action (self, "open-sample", !self->running);
  enable_action (self, "open-recent", !self->running);
  enable_action (self, "export", self->input != NULL && !self->exporting);
  enable_action (self, "choose-hdu", idle && count_images (self->hdus) > 0);
  gtk_widget_set_sensitive (GTK_WIDGET (self->compare_button), idle && self->input != NULL);
}

static void
action_run (GSimpleAction *action, GVariant *param, gpointer data)
{
  ss_window_run (SS_WINDOW (data));
}

static void
action_stop (GSimpleAction *action, GVariant *param, gpointer data)
{
  SsWindow *self = SS_WINDOW (data);
  if (ss_image_view_get_pick_mode (self->view))
    {
      ss_image_view_set_pick_mode (self->view, FALSE);
      return;
    }
  ss_window_stop (self);
}

/* ---- the PSF measured from stars ------------------------------------------ */

static void
star_fit_done (GObject *source, GAsyncResult *result, gpointer user_data)
{
  SsWindow *self = SS_WINDOW (user_data);
  SsPsfFit fit;
  int n_stars = 0;
  g_autoptr (GError) error = NULL;
  gboolean ok = ss_star_fit_finish (result, &fit, &n_stars, &error);
  self->fitting = FALSE;
  g_clear_error (&self->fit_error);
  if (!self->disposed)
    {
      if (ok)
        {
          ss_params_panel_set_psf_fit (self->panel, &fit, n_stars);
          ss_image_view_set_pick_mode (self->view, FALSE);
          g_autofree char *text = ss_psf_fit_describe (&fit);
          g_autofree char *message = n_stars > 1
                                     ? g_strdup_printf ("PSF measured on %d stars: %s", n_stars,
                                                        text)
                                     : g_strdup_printf ("PSF measured: %s", text);
          show_message (self, message, FALSE);
        }
      else if (!g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        {
          show_error (self, "No PSF measured", error);
          self->fit_error = g_error_copy (error);
        }
      update_actions (self);
      update_idle_status (self);
    }
  g_object_unref (self);
}

/* Starts a star fit when an image is open and none is running: clears the
 * message, arms a new cancellable and says STATUS. FALSE when it cannot. */
static gboolean
begin_star_fit (SsWindow *self, const char *status)
{
  if (self->input == NULL)
    {
      show_message (self, "Open an image first (Ctrl+O)", TRUE);
      return FALSE;
    }
  if (self->fitting)
    return FALSE;
  dismiss_message (self);
  self->fitting = TRUE;
  g_clear_object (&self->fit_cancellable);
  self->fit_cancellable = g_cancellable_new ();
  set_status (self, status);
  update_actions (self);
  return TRUE;
}

static void
fit_star_at (SsWindow *self, int col, int row)
{
  if (begin_star_fit (self, "Fitting the star…"))
    ss_star_fit_at_async (self->input, col, row, ss_params_panel_get_star_model (self->panel),
                          self->fit_cancellable, star_fit_done, g_object_ref (self));
}

static void
find_stars (SsWindow *self)
{
  if (begin_star_fit (self, "Looking for isolated stars…"))
    ss_star_fit_search_async (self->input, ss_params_panel_get_star_model (self->panel),
                              self->fit_cancellable, star_fit_done, g_object_ref (self));
}

static void
on_pixel_picked (SsImageView *view, int col, int row, SsWindow *self)
{
  fit_star_at (self, col, row);
}

static void
action_pick_star (GSimpleAction *action, GVariant *param, gpointer data)
{
  SsWindow *self = SS_WINDOW (data);
  ss_image_view_set_pick_mode (self->view, !ss_image_view_get_pick_mode (self->view));
  if (ss_image_view_get_pick_mode (self->view))
    set_status (self, "Click an isolated, unsaturated star (Escape cancels)");
}

static void
action_find_stars (GSimpleAction *action, GVariant *param, gpointer data)
{
  find_stars (SS_WINDOW (data));
}

static void
action_compare (GSimpleAction *action, GVariant *param, gpointer data)
{
  SsWindow *self = data;
  struct {
    GtkCheckButton *check;
    SsSolverKind kind;
    SsDirectMethod method;
  } choices[] = {
    { self->compare_cpadmm, SS_SOLVER_CPADMM, SS_DIRECT_SOLVE },
    { self->compare_fista, SS_SOLVER_FISTA, SS_DIRECT_SOLVE },
    { self->compare_ista, SS_SOLVER_ISTA, SS_DIRECT_SOLVE },
    { self->compare_cholesky, SS_SOLVER_DIRECT, SS_DIRECT_SOLVE },
    { self->compare_gets, SS_SOLVER_DIRECT, SS_DIRECT_INVERSE },
    { self->compare_fft, SS_SOLVER_DIRECT_FFT, SS_DIRECT_SOLVE },
  };
  SsSolverKind kinds[G_N_ELEMENTS (choices)];
  SsDirectMethod methods[G_N_ELEMENTS (choices)];
  guint n = 0;
  for (guint i = 0; i < G_N_ELEMENTS (choices); i++)
    if (gtk_check_button_get_active (choices[i].check))
      {
        kinds[n] = choices[i].kind;
        methods[n] = choices[i].method;
        n++;
      }
  gtk_menu_button_popdown (self->compare_button);
  ss_window_compare (self, kinds, methods, n);
}

static void
action_open_sample (GSimpleAction *action, GVariant *param, gpointer data)
{
  ss_window_open_sample (SS_WINDOW (data));
}

static void
action_zoom (GSimpleAction *action, GVariant *param, gpointer data)
{
  SsWindow *self = data;
  const char *name = g_action_get_name (G_ACTION (action));
  if (g_str_equal (name, "zoom-in"))
    ss_image_view_zoom_in (self->view);
  else if (g_str_equal (name, "zoom-out"))
    ss_image_view_zoom_out (self->view);
  else if (g_str_equal (name, "zoom-fit"))
    ss_image_view_zoom_fit (self->view);
  else
    ss_image_view_zoom_one (self->view);
}

static void
change_fullscreen_state (GSimpleAction *action, GVariant *value, gpointer data)
{
  SsWindow *self = data;
  if (g_variant_get_boolean (value))
    gtk_window_fullscreen (GTK_WINDOW (self));
  else
    gtk_window_unfullscreen (GTK_WINDOW (self));
  g_simple_action_set_state (action, value);
}

static void
on_fullscreened (SsWindow *self)
{
  GAction *action = win_action (self, "fullscreen");
  gboolean fullscreen = gtk_window_is_fullscreen (GTK_WINDOW (self));
  if (action)
    g_simple_action_set_state (G_SIMPLE_ACTION (action), g_variant_new_boolean (fullscreen));
}

static void
action_dismiss (GSimpleAction *action, GVariant *param, gpointer data)
{
  dismiss_message (SS_WINDOW (data));
}

static const GActionEntry win_entries[] = {
  { "open", action_open, NULL, NULL, NULL, { 0 } },
  { "open-sample", action_open_sample, NULL, NULL, NULL, { 0 } },
  { "open-recent", action_open_recent, "s", NULL, NULL, { 0 } },
  { "run", action_run, NULL, NULL, NULL, { 0 } },
  { "stop", action_stop, NULL, NULL, NULL, { 0 } },
  { "compare", action_compare, NULL, NULL, NULL, { 0 } },
  { "export", action_export, "s", NULL, NULL, { 0 } },
  { "zoom-in", action_zoom, NULL, NULL, NULL, { 0 } },
  { "zoom-out", action_zoom, NULL, NULL, NULL, { 0 } },
  { "zoom-fit", action_zoom, NULL, NULL, NULL, { 0 } },
  { "zoom-one", action_zoom, NULL, NULL, NULL, { 0 } },
  { "view", NULL, "s", "'original'", change_view_state, { 0 } },
  { "split", NULL, NULL, "false", change_split_state, { 0 } },
  { "fullscreen", NULL, NULL, "false", change_fullscreen_state, { 0 } },
  { "dismiss-message", action_dismiss, NULL, NULL, NULL, { 0 } },
  { "pick-star", action_pick_star, NULL, NULL, NULL, { 0 } },
  { "choose-hdu", action_choose_hdu, NULL, NULL, NULL, { 0 } },
  { "find-stars", action_find_stars, NULL, NULL, NULL, { 0 } },
};

/* ---- devices -------------------------------------------------------------- */

static void
devices_thread (GTask *task, gpointer source, gpointer data, GCancellable *cancellable)
{
  g_task_return_pointer (task, ss_backend_describe_devices (), g_free);
}

static void
devices_done (GObject *source, GAsyncResult *result, gpointer data)
{
  SsWindow *self = SS_WINDOW (source);
  g_autofree char *text = g_task_propagate_pointer (G_TASK (result), NULL);
  if (self->disposed)
    return;
  g_strchomp (text ? text : (text = g_strdup ("")));
  ss_params_panel_set_device_text (self->panel, text[0] ? text : "No compute device found");
}

/* ---- test helpers --------------------------------------------------------- */

static gboolean
iterate_until (gboolean (*done) (SsWindow *), SsWindow *self, double timeout)
{
  gint64 end = g_get_monotonic_time () + (gint64) (timeout * G_USEC_PER_SEC);
  while (!done (self))
    {
      if (g_get_monotonic_time () > end)
        return FALSE;
      g_main_context_iteration (NULL, FALSE);
      g_usleep (1000);
    }
  return TRUE;
}

static gboolean
is_not_loading (SsWindow *self)
{
  return !self->loading;
}

static gboolean
is_idle (SsWindow *self)
{
  return !self->loading && !self->running && !self->exporting && !self->comparing;
}

static gboolean
is_not_exporting (SsWindow *self)
{
  return !self->exporting;
}

static gboolean
is_rendered (SsWindow *self)
{
  return !ss_image_view_is_rendering (self->view);
}

/* Iterates until DONE, then hands back the work's FAILURE, if any. */
static gboolean
wait_for_work (SsWindow *self, gboolean (*done) (SsWindow *), double timeout,
               const GError *const *failure, const char *what, GError **error)
{
  if (!iterate_until (done, self, timeout))
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_TIMED_OUT, "%s timed out", what);
      return FALSE;
    }
  if (*failure)
    {
      g_propagate_error (error, g_error_copy (*failure));
      return FALSE;
    }
  return TRUE;
}

gboolean
ss_window_open_path_sync (SsWindow *self, const char *path, double timeout, GError **error)
{
  g_return_val_if_fail (SS_IS_WINDOW (self), FALSE);
  ss_window_open_path (self, path);
  g_autofree char *what = g_strdup_printf ("loading %s", path);
  return wait_for_work (self, is_not_loading, timeout, (const GError *const *) &self->load_error,
                        what, error);
}

static gboolean
is_not_fitting (SsWindow *self)
{
  return !self->fitting;
}

static gboolean
wait_for_fit (SsWindow *self, double timeout, GError **error)
{
  return wait_for_work (self, is_not_fitting, timeout, (const GError *const *) &self->fit_error,
                        "the star fit", error);
}

gboolean
ss_window_fit_star_sync (SsWindow *self, int col, int row, double timeout, GError **error)
{
  g_return_val_if_fail (SS_IS_WINDOW (self), FALSE);
  /* The path a click in pick mode takes. */
  g_signal_emit_by_name (self->view, "pixel-picked", col, row);
  return wait_for_fit (self, timeout, error);
}

gboolean
ss_window_find_stars_sync (SsWindow *self, double timeout, GError **error)
{
  g_return_val_if_fail (SS_IS_WINDOW (self), FALSE);
  find_stars (self);
  return wait_for_fit (self, timeout, error);
}

gboolean
ss_window_wait_idle (SsWindow *self, double timeout)
{
  g_return_val_if_fail (SS_IS_WINDOW (self), FALSE);
  return iterate_until (is_idle, self, timeout);
}

gboolean
ss_window_wait_rendered (SsWindow *self, double timeout)
{
  g_return_val_if_fail (SS_IS_WINDOW (self), FALSE);
  return iterate_until (is_rendered, self, timeout);
}

gboolean
ss_window_export_sync (SsWindow *self, SsExportFormat format, const char *path,
                       const SsExportOptions *options, gboolean force, double timeout,
                       GError **error)
{
  g_return_val_if_fail (SS_IS_WINDOW (self), FALSE);
  g_clear_error (&self->export_error);
  ss_window_export (self, format, path, options, force);
  g_autofree char *what = g_strdup_printf ("export to %s", path);
  return wait_for_work (self, is_not_exporting, timeout,
                        (const GError *const *) &self->export_error, what, error);
}

gboolean
ss_window_is_busy (SsWindow *self)
{
  return !is_idle (self);
}

gboolean
ss_window_is_running (SsWindow *self)
{
  return self->running || self->comparing;
}

SsParamsPanel *
ss_window_get_params_panel (SsWindow *self)
{
  return self->panel;
}

SsImageView *
ss_window_get_image_view (SsWindow *self)
{
  return self->view;
}

SsPlot *
ss_window_get_plot (SsWindow *self)
{
  return self->plot;
}

SsCompareTable *
ss_window_get_compare_table (SsWindow *self)
{
  return self->table;
}

const char *
ss_window_get_message (SsWindow *self)
{
  return self->message;
}

const char *
ss_window_get_status (SsWindow *self)
{
  return gtk_label_get_text (self->status_label);
}

const char *
ss_window_get_path (SsWindow *self)
{
  return self->path;
}

guint
ss_window_get_preview_count (SsWindow *self)
{
  return self->preview_count;
}

SsFrame *
ss_window_get_last_preview (SsWindow *self)
{
  return self->preview;
}

int
ss_window_get_iteration (SsWindow *self)
{
  return self->iteration;
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
      detach_task (self);
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
  ss_job_unref (self->job);
  clear_results (self);
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
  CHILD (compare_cpadmm);
  CHILD (compare_fista);
  CHILD (compare_ista);
  CHILD (compare_cholesky);
  CHILD (compare_gets);
  CHILD (compare_fft);
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
                            G_CALLBACK (rebuild_recent_menu), self);
  rebuild_recent_menu (self);
}

static void
setup_drop_target (SsWindow *self)
{
  GtkDropTarget *target = gtk_drop_target_new (GDK_TYPE_FILE_LIST, GDK_ACTION_COPY);
  g_signal_connect (target, "drop", G_CALLBACK (on_drop), self);
  gtk_widget_add_controller (GTK_WIDGET (self), GTK_EVENT_CONTROLLER (target));
}

static void
ss_window_init (SsWindow *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
  self->compare_queue = g_array_new (FALSE, FALSE, sizeof (CompareItem));
  ss_settings_init (&self->compare_settings);
  g_action_map_add_action_entries (G_ACTION_MAP (self), win_entries, G_N_ELEMENTS (win_entries),
                                   self);
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
  g_signal_connect (self->view, "pixel-picked", G_CALLBACK (on_pixel_picked), self);
  g_signal_connect_swapped (self->view, "notify::pick-mode", G_CALLBACK (update_actions), self);
  g_signal_connect (self->table, "selected", G_CALLBACK (on_table_selected), self);
  g_signal_connect_swapped (self, "notify::fullscreened", G_CALLBACK (on_fullscreened), self);

  self->status_tick_id = g_timeout_add (500, on_status_tick, self);

  GTask *devices = g_task_new (self, NULL, devices_done, NULL);
  g_task_run_in_thread (devices, devices_thread);
  g_object_unref (devices);

  refresh_view (self);
  update_actions (self);
  update_idle_status (self);
}
