/* ss-window-testing.c: entry points only the tests use (tests/test-ui.c):
 * synchronous waits for work started through the window, and getters. The
 * app itself never calls these. */
#include "ss-window-private.h"

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

/* Opening a real image starts a star search: a file is open once it ends. */
static gboolean
is_not_loading (SsWindow *self)
{
  return !self->loading && !self->fitting;
}

static gboolean
is_idle (SsWindow *self)
{
  return !self->loading && !self->running && !self->exporting && !self->comparing;
}

static gboolean
has_view_size (SsWindow *self)
{
  GtkWidget *view = GTK_WIDGET (self->view);
  return gtk_widget_get_width (view) > 0 && gtk_widget_get_height (view) > 0;
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
  ss_window_find_stars (self);
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
ss_window_wait_view_allocated (SsWindow *self, double timeout)
{
  g_return_val_if_fail (SS_IS_WINDOW (self), FALSE);
  return iterate_until (has_view_size, self, timeout);
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

int
ss_window_get_iteration_target (SsWindow *self)
{
  return self->iteration_target;
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

SsFrame *
ss_window_get_frame (SsWindow *self, SsViewKind view)
{
  g_return_val_if_fail (SS_IS_WINDOW (self), NULL);
  return ss_window_frame_for (self, view, FALSE);
}

SsHduChooser *
ss_window_get_hdu_chooser (SsWindow *self)
{
  g_return_val_if_fail (SS_IS_WINDOW (self), NULL);
  return self->chooser;
}

SsPhaseWindow *
ss_window_get_phase_window (SsWindow *self)
{
  g_return_val_if_fail (SS_IS_WINDOW (self), NULL);
  return self->phase_window;
}

GPtrArray *
ss_window_get_compare_choices (SsWindow *self)
{
  g_return_val_if_fail (SS_IS_WINDOW (self), NULL);
  GPtrArray *choices = g_ptr_array_new ();
  for (GtkWidget *child = gtk_widget_get_first_child (GTK_WIDGET (self->compare_list));
       child != NULL; child = gtk_widget_get_next_sibling (child))
    g_ptr_array_add (choices, g_object_get_data (G_OBJECT (child), "choice"));
  return choices;
}
