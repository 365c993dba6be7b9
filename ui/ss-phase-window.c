/* ss-phase-window.c: the Phase transition window: the type, its actions and
 * keys, its export, and the entry points for tests. ss-phase-window-sweep.c
 * runs its sweep, ss-phase-window-controls.c builds its widgets. */
#include "ss-phase-window-private.h"
#include "ss-file-patterns.h"

#include <math.h>
#include <string.h>

G_DEFINE_FINAL_TYPE (SsPhaseWindow, ss_phase_window, GTK_TYPE_WINDOW)

void
ss_phase_settings_init (SsPhaseSettings *s)
{
  /* The engine's defaults for what the CLI and the window share... */
  SsCsPhaseParams defaults;
  ss_cs_phase_params_init (&defaults);
  s->algorithm = defaults.solve.algorithm;
  s->ensemble = defaults.problem.ensemble;
  s->values = defaults.problem.values;
  s->trials = defaults.trials;
  s->seed = defaults.problem.seed;
  s->backend = defaults.backend;
  /* ...and a short signal on the CLI's default grid, for a sweep of seconds. */
  s->n = 128;
  s->n_deltas = 9;
  s->n_rhos = 10;
}

/* ---- export ---------------------------------------------------------------------- */

gboolean
ss_phase_window_export (SsPhaseWindow *self, SsPhaseExportFormat format, const char *path,
                        gboolean force, GError **error)
{
  g_return_val_if_fail (SS_IS_PHASE_WINDOW (self) && path != NULL, FALSE);
  GError *local = NULL;
  gboolean ok;
  if (self->cells->len == 0)
    {
      g_set_error (&local, SS_ERROR, SS_ERROR_INVALID_ARGUMENT, "no diagram yet: run a sweep");
      ok = FALSE;
    }
  /* A few kilobytes: written here, without a thread. Through the engine's
   * writers, the CLI's: the same files, the same refusal to replace. */
  else if (format == SS_PHASE_EXPORT_PNG)
    ok = ss_cs_phase_write_png (path, ss_phase_view_get_fractions (self->view, NULL, NULL),
                                self->n_deltas, self->n_rhos, force, &local);
  else
    ok = ss_cs_phase_write_csv (path, (const SsCsPhaseCell *) self->cells->data,
                                self->cells->len, force, &local);
  g_autofree char *base = g_path_get_basename (path);
  g_autofree char *text = ok ? g_strdup_printf ("Saved %s", base)
                             : g_strdup_printf ("Could not export “%s”: %s", base, local->message);
  gtk_label_set_text (self->status_label, text);
  if (local)
    g_propagate_error (error, local);
  return ok;
}

static void
on_export_response (GtkNativeDialog *dialog, int response, SsPhaseWindow *self)
{
  SsPhaseExportFormat format = GPOINTER_TO_INT (g_object_get_data (G_OBJECT (dialog), "format"));
  if (response == GTK_RESPONSE_ACCEPT && !self->disposed)
    {
      g_autoptr (GFile) file = gtk_file_chooser_get_file (GTK_FILE_CHOOSER (dialog));
      g_autofree char *path = file ? g_file_get_path (file) : NULL;
      /* The chooser asked before accepting an existing name: the user's
       * consent to replace it (as the main window's export). */
      gboolean confirmed = path && g_file_test (path, G_FILE_TEST_EXISTS);
      if (path)
        ss_phase_window_export (self, format, path, confirmed, NULL);
      else
        gtk_label_set_text (self->status_label, "Only local files can be written");
    }
  g_object_unref (dialog);
  g_object_unref (self);
}

static void
action_export (GtkWidget *widget, const char *name, GVariant *param)
{
  SsPhaseWindow *self = SS_PHASE_WINDOW (widget);
  gboolean png = g_strcmp0 (g_variant_get_string (param, NULL), "png") == 0;
  GtkFileChooserNative *dialog = gtk_file_chooser_native_new (
      png ? "Export the Diagram as PNG" : "Export the Cells as CSV", GTK_WINDOW (self),
      GTK_FILE_CHOOSER_ACTION_SAVE, "_Export", "_Cancel");
  GtkFileChooser *chooser = GTK_FILE_CHOOSER (dialog);
  ss_file_chooser_add_filter (chooser, png ? "PNG images" : "CSV tables",
                              png ? ss_png_suffixes : ss_csv_suffixes);
  g_autofree char *name_text = g_strdup_printf (
      "phase-%s-%s.%s", ss_cs_algorithm_to_string (self->run_settings.algorithm),
      ss_ensemble_to_string (self->run_settings.ensemble), png ? "png" : "csv");
  gtk_file_chooser_set_current_name (chooser, name_text);
  g_object_set_data (G_OBJECT (dialog), "format",
                     GINT_TO_POINTER (png ? SS_PHASE_EXPORT_PNG : SS_PHASE_EXPORT_CSV));
  g_signal_connect (dialog, "response", G_CALLBACK (on_export_response), g_object_ref (self));
  gtk_native_dialog_show (GTK_NATIVE_DIALOG (dialog));
}

static void
action_run (GtkWidget *widget, const char *name, GVariant *param)
{
  ss_phase_window_run (SS_PHASE_WINDOW (widget));
}

static void
action_stop (GtkWidget *widget, const char *name, GVariant *param)
{
  ss_phase_window_stop (SS_PHASE_WINDOW (widget));
}

/* ---- for tests ------------------------------------------------------------------- */

gboolean
ss_phase_window_wait_idle (SsPhaseWindow *self, double timeout)
{
  g_return_val_if_fail (SS_IS_PHASE_WINDOW (self), FALSE);
  gint64 end = g_get_monotonic_time () + (gint64) (timeout * G_USEC_PER_SEC);
  while (self->running)
    {
      if (g_get_monotonic_time () > end)
        return FALSE;
      g_main_context_iteration (NULL, FALSE);
      g_usleep (1000);
    }
  return TRUE;
}

const SsCsPhaseCell *
ss_phase_window_get_cells (SsPhaseWindow *self, guint *n_cells)
{
  *n_cells = self->cells->len;
  return (const SsCsPhaseCell *) self->cells->data;
}

guint
ss_phase_window_get_n_total (SsPhaseWindow *self)
{
  return (guint) (self->n_deltas * self->n_rhos);
}

const double *
ss_phase_window_get_deltas (SsPhaseWindow *self, int *n_deltas)
{
  *n_deltas = self->n_deltas;
  return self->deltas;
}

const double *
ss_phase_window_get_rhos (SsPhaseWindow *self, int *n_rhos)
{
  *n_rhos = self->n_rhos;
  return self->rhos;
}

const char *
ss_phase_window_get_status (SsPhaseWindow *self)
{
  return gtk_label_get_text (self->status_label);
}

SsPhaseView *
ss_phase_window_get_view (SsPhaseWindow *self)
{
  return self->view;
}

/* ---- GObject ----------------------------------------------------------------------- */

SsPhaseWindow *
ss_phase_window_new (GtkApplication *application)
{
  return g_object_new (SS_TYPE_PHASE_WINDOW, "application", application, NULL);
}

static void
ss_phase_window_dispose (GObject *object)
{
  SsPhaseWindow *self = SS_PHASE_WINDOW (object);
  if (!self->disposed)
    {
      /* The sweep ends at its next check; its cells are no longer wanted. */
      self->disposed = TRUE;
      if (self->cancellable)
        g_cancellable_cancel (self->cancellable);
    }
  G_OBJECT_CLASS (ss_phase_window_parent_class)->dispose (object);
}

static void
ss_phase_window_finalize (GObject *object)
{
  SsPhaseWindow *self = SS_PHASE_WINDOW (object);
  g_clear_object (&self->cancellable);
  g_array_unref (self->algorithms);
  g_array_unref (self->cells);
  g_free (self->deltas);
  g_free (self->rhos);
  G_OBJECT_CLASS (ss_phase_window_parent_class)->finalize (object);
}

static void
ss_phase_window_class_init (SsPhaseWindowClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);
  object_class->dispose = ss_phase_window_dispose;
  object_class->finalize = ss_phase_window_finalize;

  /* The window's own actions and keys: the main window's (win.*) are not
   * reachable here, so Escape and Ctrl+R cannot touch its solve. */
  gtk_widget_class_install_action (widget_class, "phase.run", NULL, action_run);
  gtk_widget_class_install_action (widget_class, "phase.stop", NULL, action_stop);
  gtk_widget_class_install_action (widget_class, "phase.export", "s", action_export);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_r, GDK_CONTROL_MASK, "phase.run",
                                       NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_Escape, 0, "phase.stop", NULL);
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_s,
                                       GDK_CONTROL_MASK | GDK_SHIFT_MASK, "phase.export", "s",
                                       "png");
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_e, GDK_CONTROL_MASK,
                                       "phase.export", "s", "csv");
  gtk_widget_class_add_binding_action (widget_class, GDK_KEY_w, GDK_CONTROL_MASK,
                                       "window.close", NULL);
}

static void
ss_phase_window_init (SsPhaseWindow *self)
{
  self->algorithms = g_array_new (FALSE, FALSE, sizeof (SsCsAlgorithm));
  self->cells = g_array_new (FALSE, FALSE, sizeof (SsCsPhaseCell));
  ss_phase_settings_init (&self->run_settings);
  ss_phase_window_build_window (self);
  ss_phase_window_on_control_changed (self);
  ss_phase_window_update_state (self);
}
