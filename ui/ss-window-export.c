/* ss-window-export.c: exporting FITS, PNG and the curves as CSV. */
#include "ss-window-private.h"
#include "ss-export.h"
#include "ss-file-patterns.h"

#include <string.h>

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
  gint64 started;           /* for the status line's write time */
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
      ok = ss_export_csv (d->path, d->names, d->points, d->force, inputs, &error);
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
  /* Here, on the main thread: the task's last reference may go on the
   * worker's. */
  ss_window_release_application_of (G_OBJECT (result));
  self->exporting = FALSE;
  g_clear_error (&self->export_error);
  if (!g_task_propagate_boolean (G_TASK (result), &error))
    {
      ss_window_show_file_error (self, "export", d->path, error);
      self->export_error = g_error_copy (error);
    }
  else if (!self->disposed)
    {
      g_autofree char *text = g_strdup_printf (
        "Saved %s · write %.2f s", d->path, (g_get_monotonic_time () - d->started) / 1e6);
      /* A run owns the status line: the confirmation goes to the banner. */
      if (self->running)
        ss_window_show_message (self, text, FALSE);
      else
        ss_window_set_status (self, text);
    }
  if (!self->disposed)
    ss_window_update_actions (self);
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
          g_ptr_array_add (names, ss_solve_params_name (&ss_solve_task_get_settings (task)->params));
          g_ptr_array_add (points, g_array_copy (ss_compare_entry_get_points (e)));
        }
      return;
    }
  SsSolveTask *task = self->task ? self->task : self->result_task;
  if (task != NULL)
    {
      g_ptr_array_add (names, ss_solve_params_name (&ss_solve_task_get_settings (task)->params));
      /* A copy: the running task's curve grows on this thread while the
       * export's worker reads it, and growing may move it. */
      g_ptr_array_add (points, g_array_copy (ss_solve_task_get_points (task)));
    }
}

static void
fill_export_result (SsWindow *self, ExportData *d, SsViewKind kind)
{
  SsSettings settings;
  ss_params_panel_get_settings (self->panel, &settings);
  SsSolveTask *task = (kind == SS_VIEW_RECOVERED || kind == SS_VIEW_ERROR) ? self->result_task
                                                                           : NULL;
  /* The run's settings with what the job chose from the data (α auto, the
   * defects): the task's own hold the panel's α, not the one solved with. */
  if (task != NULL)
    ss_solve_task_get_run_settings (task, &d->settings);
  else
    ss_settings_copy (self->job ? &self->job->settings : &settings, &d->settings);
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
      /* Every string copied (auto's choice was not: freed twice). */
      ss_solve_result_copy_summary (r, &d->result);
    }
}

/* Why PATH's name does not fit FORMAT (as the CLI reads a name: its
 * suffix is its format), or NULL: FITS bytes in "x.png" or "notes.txt"
 * would be read as something else, or not at all. */
static char *
export_name_problem (SsExportFormat format, const char *path)
{
  SsOutputFormat named;
  g_autoptr (GError) error = NULL;
  if (!ss_output_format_from_name (path, &named, &error))
    return g_strdup_printf ("Not exported: %s", error->message);
  gboolean png = named == SS_OUTPUT_FORMAT_PNG;
  if (png != (format == SS_EXPORT_PNG))
    return g_strdup_printf ("Not exported: %s names a %s file, but this export writes %s",
                            path, png ? "PNG" : "FITS", png ? "FITS" : "PNG");
  return NULL;
}

/* An export refused before it starts: TEXT shown, and kept as the
 * export's error (the tests read it), D freed. */
static void
refuse_export (SsWindow *self, ExportData *d, const char *text)
{
  ss_window_show_message (self, text, TRUE);
  g_clear_error (&self->export_error);
  g_set_error (&self->export_error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT, "%s", text);
  export_data_free (d);
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
          refuse_export (self, d, "No convergence curve to export yet: run a solver first");
          return;
        }
    }
  else
    {
      SsFrame *frame = ss_window_frame_for (self, self->view_kind, FALSE);
      g_autofree char *misnamed = export_name_problem (format, path);
      if (misnamed != NULL)
        {
          refuse_export (self, d, misnamed);
          return;
        }
      if (frame == NULL)
        {
          g_autofree char *text = g_strdup_printf ("The %s view is empty: nothing to export",
                                                   ss_window_view_titles[self->view_kind]);
          refuse_export (self, d, text);
          return;
        }
      d->frame = ss_frame_ref (frame);
      d->what = g_ascii_strdown (ss_window_view_titles[self->view_kind], -1);
      d->header = self->header ? ss_header_copy (self->header) : NULL;
      fill_export_result (self, d, self->view_kind);
    }
  self->exporting = TRUE;
  g_clear_error (&self->export_error);
  d->started = g_get_monotonic_time ();
  GTask *task = g_task_new (self, NULL, export_done, NULL);
  g_task_set_task_data (task, d, export_data_free);
  g_task_set_name (task, "sharpsky export");
  /* Quitting while a large frame is written waits for the file rather than
   * ending under the writer: the application is held until the task goes. */
  ss_window_hold_application_for (self, G_OBJECT (task));
  g_task_run_in_thread (task, export_thread);
  g_object_unref (task);
  ss_window_update_actions (self);
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
        ss_window_show_message (self, "Only local files can be written", TRUE);
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
  const char *what = format == SS_EXPORT_CSV ? "convergence"
                                             : ss_window_view_names[self->view_kind];
  const char *ext = format == SS_EXPORT_PNG ? "png" : format == SS_EXPORT_CSV ? "csv" : "fits";
  return g_strdup_printf ("%s-%s.%s", base, what, ext);
}

void
ss_window_action_export (GSimpleAction *action, GVariant *param, gpointer data)
{
  SsWindow *self = data;
  SsExportFormat format = format_from_name (g_variant_get_string (param, NULL));
  static const char *const titles[] = { "Export FITS", "Export PNG", "Export Convergence CSV" };
  GtkFileChooserNative *dialog = gtk_file_chooser_native_new (
      titles[format], GTK_WINDOW (self), GTK_FILE_CHOOSER_ACTION_SAVE, "_Export", "_Cancel");
  GtkFileChooser *chooser = GTK_FILE_CHOOSER (dialog);
  ss_file_chooser_add_filter (chooser, format == SS_EXPORT_PNG ? "PNG images"
                                       : format == SS_EXPORT_CSV ? "CSV tables" : "FITS images",
                              format == SS_EXPORT_PNG ? ss_png_suffixes
                              : format == SS_EXPORT_CSV ? ss_csv_suffixes
                                                        : ss_fits_write_suffixes);
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
