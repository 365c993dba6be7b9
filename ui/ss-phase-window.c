/* ss-phase-window.c: the Phase transition window: its controls, the sweep in
 * a worker thread, the diagram filling in, and its export. */
#include "ss-phase-window.h"
#include "ss-thread.h"

#include <math.h>
#include <string.h>

#define MAX_GRID 40

struct _SsPhaseWindow
{
  GtkWindow parent_instance;

  GtkDropDown *solver_dropdown, *ensemble_dropdown, *values_dropdown, *backend_dropdown;
  GtkSpinButton *n_spin, *deltas_spin, *rhos_spin, *trials_spin, *seed_spin;
  GtkWidget *controls;        /* the grid of controls: insensitive while a sweep runs */
  SsPhaseView *view;
  GtkProgressBar *progress;
  GtkLabel *status_label, *command_label;
  GArray *algorithms;         /* SsCsAlgorithm of each solver row, from the table */

  /* The sweep under way or the last one (main thread only). */
  GCancellable *cancellable;
  gboolean running;
  guint serial;               /* which sweep's cells are welcome */
  SsPhaseSettings run_settings;
  double *deltas, *rhos;
  int n_deltas, n_rhos;
  GArray *cells;              /* SsCsPhaseCell received, in order */
  gint64 started;             /* monotonic µs */
  const char *backend_used;   /* "cpu" or "cuda" (static), or NULL */
  gboolean disposed;
};

G_DEFINE_FINAL_TYPE (SsPhaseWindow, ss_phase_window, GTK_TYPE_WINDOW)

/* The controls' labels for the engine's enums, in their order. */
static const char *const ensemble_labels[SS_N_ENSEMBLES] = {
  "Gaussian N(0, 1/m)", "Signs ±1/√m", "Subsampled DCT", "Sparse (8 per column)",
};
static const char *const values_labels[SS_N_CS_VALUES] = {
  "Gaussian", "Signs ±1 (hardest)", "Uniform",
};
/* The backend list, in SsBackendKind order. */
static const char *const backend_labels[] = { "Automatic", "CPU", "CUDA GPU" };

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

/* ---- the sweep, shared with its thread ------------------------------------------ */

/* The window only weakly: a closed window is disposed at once, which
 * cancels its sweep, rather than kept alive (and sweeping) until the
 * sweep ends. Only the main thread looks at WINDOW. */
typedef struct {
  GWeakRef window;
  guint serial;
  SsCsPhaseParams params;     /* its deltas and rhos point into the next two */
  double *deltas, *rhos;
  GMainContext *context;      /* the window's: where cells are delivered */
  GMutex lock;
  GArray *pending;            /* cells done, not yet delivered (under LOCK) */
  gboolean delivery_scheduled;
} Sweep;

static void
sweep_clear (gpointer data)
{
  Sweep *s = data;
  g_weak_ref_clear (&s->window);
  g_free (s->deltas);
  g_free (s->rhos);
  g_main_context_unref (s->context);
  g_mutex_clear (&s->lock);
  g_array_unref (s->pending);
}

static void
sweep_unref (gpointer data)
{
  g_rc_box_release_full (data, sweep_clear);
}

static void update_state (SsPhaseWindow *self);

/* Main thread: the cells done so far join the window and the diagram. */
static void
deliver_cells (Sweep *s)
{
  g_mutex_lock (&s->lock);
  GArray *cells = s->pending;
  s->pending = g_array_new (FALSE, FALSE, sizeof (SsCsPhaseCell));
  s->delivery_scheduled = FALSE;
  g_mutex_unlock (&s->lock);
  g_autoptr (SsPhaseWindow) self = g_weak_ref_get (&s->window);
  /* A closed window, or a newer sweep, no longer wants them. */
  if (self && !self->disposed && s->serial == self->serial)
    {
      for (guint i = 0; i < cells->len; i++)
        {
          const SsCsPhaseCell *cell = &g_array_index (cells, SsCsPhaseCell, i);
          g_array_append_vals (self->cells, cell, 1);
          ss_phase_view_set_cell (self->view, cell);
          self->backend_used = cell->result.backend;
        }
      if (cells->len > 0)
        update_state (self);
    }
  g_array_unref (cells);
}

static gboolean
deliver_source (gpointer data)
{
  deliver_cells (data);
  return G_SOURCE_REMOVE;
}

/* Worker thread: hands the cell to the main thread. An idle source attached
 * to the window's context, not g_main_context_invoke: from a thread whose
 * default context is the main one, invoke may run the function right there
 * (when it can acquire the context), and widgets belong to the main thread. */
static gboolean
on_cell (const SsCsPhaseCell *cell, gpointer user_data, GError **error)
{
  Sweep *s = user_data;
  g_mutex_lock (&s->lock);
  g_array_append_vals (s->pending, cell, 1);
  if (!s->delivery_scheduled)
    {
      s->delivery_scheduled = TRUE;
      GSource *source = g_idle_source_new ();
      g_source_set_priority (source, G_PRIORITY_DEFAULT);
      g_source_set_callback (source, deliver_source, g_rc_box_acquire (s), sweep_unref);
      g_source_set_static_name (source, "sharpsky phase cells");
      g_source_attach (source, s->context);
      g_source_unref (source);
    }
  g_mutex_unlock (&s->lock);
  return TRUE;
}

/* Its own thread, not GTask's pool: the lowered priority (the window must
 * never wait for a core) would stay with a pool thread after the sweep. */
static gpointer
sweep_thread_main (gpointer data)
{
  GTask *task = data;
  Sweep *s = g_task_get_task_data (task);
  ss_thread_lower_priority (SS_NICENESS_SOLVER);
  GError *error = NULL;
  if (ss_cs_phase_transition (&s->params, on_cell, s, g_task_get_cancellable (task), &error))
    g_task_return_boolean (task, TRUE);
  else
    g_task_return_error (task, error);
  g_object_unref (task);
  return NULL;
}

static void
sweep_done (GObject *source, GAsyncResult *result, gpointer user_data)
{
  Sweep *s = g_task_get_task_data (G_TASK (result));
  /* Cells still queued arrive before the end is told. */
  deliver_cells (s);
  g_autoptr (GError) error = NULL;
  gboolean ok = g_task_propagate_boolean (G_TASK (result), &error);
  g_autoptr (SsPhaseWindow) self = g_weak_ref_get (&s->window);
  if (self == NULL || self->disposed || s->serial != self->serial)
    return;
  self->running = FALSE;
  g_clear_object (&self->cancellable);
  guint total = (guint) (self->n_deltas * self->n_rhos);
  double seconds = (g_get_monotonic_time () - self->started) / 1e6;
  g_autofree char *text = NULL;
  if (ok)
    text = g_strdup_printf ("Done: %u cells in %.1f s (%s)", total, seconds,
                            self->backend_used ? self->backend_used : "cpu");
  else if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    text = g_strdup_printf ("Stopped after %u of %u cells", self->cells->len, total);
  else
    text = g_strdup_printf ("Failed after %u of %u cells: %s", self->cells->len, total,
                            error->message);
  gtk_label_set_text (self->status_label, text);
  update_state (self);
}

/* ---- controls ------------------------------------------------------------------ */

static guint
dropdown_index (GtkDropDown *dropdown, guint count)
{
  guint i = gtk_drop_down_get_selected (dropdown);
  return i < count ? i : 0;
}

void
ss_phase_window_get_settings (SsPhaseWindow *self, SsPhaseSettings *s)
{
  g_return_if_fail (SS_IS_PHASE_WINDOW (self));
  ss_phase_settings_init (s);
  if (self->algorithms->len > 0)
    s->algorithm = g_array_index (self->algorithms, SsCsAlgorithm,
                                  dropdown_index (self->solver_dropdown, self->algorithms->len));
  s->ensemble = (SsEnsemble) dropdown_index (self->ensemble_dropdown, SS_N_ENSEMBLES);
  s->values = (SsCsValues) dropdown_index (self->values_dropdown, SS_N_CS_VALUES);
  s->backend = (SsBackendKind) dropdown_index (self->backend_dropdown,
                                               G_N_ELEMENTS (backend_labels));
  s->n = gtk_spin_button_get_value_as_int (self->n_spin);
  s->n_deltas = gtk_spin_button_get_value_as_int (self->deltas_spin);
  s->n_rhos = gtk_spin_button_get_value_as_int (self->rhos_spin);
  s->trials = gtk_spin_button_get_value_as_int (self->trials_spin);
  s->seed = (guint64) gtk_spin_button_get_value (self->seed_spin);
}

void
ss_phase_window_set_settings (SsPhaseWindow *self, const SsPhaseSettings *s)
{
  g_return_if_fail (SS_IS_PHASE_WINDOW (self));
  for (guint i = 0; i < self->algorithms->len; i++)
    if (g_array_index (self->algorithms, SsCsAlgorithm, i) == s->algorithm)
      gtk_drop_down_set_selected (self->solver_dropdown, i);
  gtk_drop_down_set_selected (self->ensemble_dropdown, s->ensemble);
  gtk_drop_down_set_selected (self->values_dropdown, s->values);
  gtk_drop_down_set_selected (self->backend_dropdown, s->backend);
  gtk_spin_button_set_value (self->n_spin, s->n);
  gtk_spin_button_set_value (self->deltas_spin, s->n_deltas);
  gtk_spin_button_set_value (self->rhos_spin, s->n_rhos);
  gtk_spin_button_set_value (self->trials_spin, s->trials);
  gtk_spin_button_set_value (self->seed_spin, (double) s->seed);
}

/* VALUES as the CLI's --deltas / --rhos: the fewest digits that parse
 * back to the very doubles the window used ("0.167", not %.17g's
 * "0.16700000000000001"), so the command gives the same cells. */
static void
append_list (GString *text, const char *option, const double *values, int n)
{
  g_string_append_printf (text, " %s ", option);
  for (int i = 0; i < n; i++)
    {
      char number[G_ASCII_DTOSTR_BUF_SIZE];
      for (int digits = 1; digits <= 17; digits++)
        {
          char format[8];
          g_snprintf (format, sizeof format, "%%.%dg", digits);
          g_ascii_formatd (number, sizeof number, format, values[i]);
          if (g_ascii_strtod (number, NULL) == values[i])
            break;
        }
      g_string_append_printf (text, "%s%s", i ? "," : "", number);
    }
}

static char *
command_line_for (const SsPhaseSettings *s)
{
  g_autofree double *deltas = g_new (double, s->n_deltas), *rhos = g_new (double, s->n_rhos);
  ss_cs_phase_deltas (s->n_deltas, deltas);
  ss_cs_phase_rhos (s->n_rhos, rhos);
  GString *text = g_string_new (NULL);
  g_string_append_printf (text, "sharpsky-cli cs --phase-transition --solver %s --ensemble %s "
                          "--values %s --n %d --trials %d --seed %" G_GUINT64_FORMAT
                          " --backend %s", ss_cs_algorithm_to_string (s->algorithm),
                          ss_ensemble_to_string (s->ensemble), ss_cs_values_to_string (s->values),
                          s->n, s->trials, s->seed, ss_backend_kind_to_string (s->backend));
  append_list (text, "--deltas", deltas, s->n_deltas);
  append_list (text, "--rhos", rhos, s->n_rhos);
  g_string_append (text, " -o PREFIX");
  return g_string_free (text, FALSE);
}

char *
ss_phase_window_get_command_line (SsPhaseWindow *self)
{
  g_return_val_if_fail (SS_IS_PHASE_WINDOW (self), NULL);
  SsPhaseSettings s;
  ss_phase_window_get_settings (self, &s);
  return command_line_for (&s);
}

static void
on_control_changed (SsPhaseWindow *self)
{
  g_autofree char *command = ss_phase_window_get_command_line (self);
  gtk_label_set_text (self->command_label, command);
}

/* ---- state -------------------------------------------------------------------- */

static void
update_state (SsPhaseWindow *self)
{
  if (self->disposed)
    return;
  GtkWidget *widget = GTK_WIDGET (self);
  gtk_widget_action_set_enabled (widget, "phase.run", !self->running);
  gtk_widget_action_set_enabled (widget, "phase.stop", self->running);
  gtk_widget_action_set_enabled (widget, "phase.export", !self->running && self->cells->len > 0);
  gtk_widget_set_sensitive (self->controls, !self->running);
  guint total = (guint) (self->n_deltas * self->n_rhos);
  double fraction = total ? (double) self->cells->len / total : 0;
  gtk_progress_bar_set_fraction (self->progress, fraction);
  g_autofree char *text = g_strdup_printf ("%u / %u cells", self->cells->len, total);
  gtk_progress_bar_set_text (self->progress, text);
  /* After Stop, "Stopping…" stays until the sweep has ended. */
  if (self->running && !g_cancellable_is_cancelled (self->cancellable))
    {
      g_autofree char *status = g_strdup_printf (
          "%s on %s, n = %d: %u of %u cells", ss_cs_algorithm_to_string (self->run_settings.algorithm),
          ss_ensemble_to_string (self->run_settings.ensemble), self->run_settings.n,
          self->cells->len, total);
      gtk_label_set_text (self->status_label, status);
    }
}

void
ss_phase_window_run (SsPhaseWindow *self)
{
  g_return_if_fail (SS_IS_PHASE_WINDOW (self));
  if (self->running)
    return;
  SsPhaseSettings *s = &self->run_settings;
  ss_phase_window_get_settings (self, s);
  self->serial++;
  self->n_deltas = CLAMP (s->n_deltas, 1, MAX_GRID);
  self->n_rhos = CLAMP (s->n_rhos, 1, MAX_GRID);
  g_free (self->deltas);
  g_free (self->rhos);
  self->deltas = g_new (double, self->n_deltas);
  self->rhos = g_new (double, self->n_rhos);
  ss_cs_phase_deltas (self->n_deltas, self->deltas);
  ss_cs_phase_rhos (self->n_rhos, self->rhos);
  g_array_set_size (self->cells, 0);
  self->backend_used = NULL;
  ss_phase_view_set_grid (self->view, self->deltas, self->n_deltas, self->rhos, self->n_rhos);

  Sweep *sweep = g_rc_box_new0 (Sweep);
  g_weak_ref_init (&sweep->window, self);
  sweep->serial = self->serial;
  sweep->deltas = g_memdup2 (self->deltas, self->n_deltas * sizeof (double));
  sweep->rhos = g_memdup2 (self->rhos, self->n_rhos * sizeof (double));
  sweep->context = g_main_context_ref_thread_default ();
  g_mutex_init (&sweep->lock);
  sweep->pending = g_array_new (FALSE, FALSE, sizeof (SsCsPhaseCell));
  /* The CLI's settings (ss_cs_phase_params_init, as cs_config) with the
   * controls' choices: the same sweep as the command line shown. */
  SsCsPhaseParams *p = &sweep->params;
  ss_cs_phase_params_init (p);
  double solve_tolerance = p->solve.tolerance;
  ss_cs_params_defaults (&p->solve, s->algorithm);
  p->solve.tolerance = solve_tolerance;
  p->problem.ensemble = s->ensemble;
  p->problem.values = s->values;
  p->problem.n = (gsize) s->n;
  p->problem.seed = s->seed;
  p->backend = s->backend;
  p->trials = s->trials;
  p->deltas = sweep->deltas;
  p->n_deltas = self->n_deltas;
  p->rhos = sweep->rhos;
  p->n_rhos = self->n_rhos;

  self->cancellable = g_cancellable_new ();
  self->running = TRUE;
  self->started = g_get_monotonic_time ();
  /* No source object: a GTask would hold the window (see Sweep). */
  GTask *task = g_task_new (NULL, self->cancellable, sweep_done, NULL);
  g_task_set_task_data (task, sweep, sweep_unref);
  g_task_set_name (task, "sharpsky phase transition");
  GThread *thread = g_thread_try_new ("sharpsky-phase", sweep_thread_main, g_object_ref (task),
                                      NULL);
  if (thread != NULL)
    g_thread_unref (thread);
  else
    {
      g_task_return_new_error (task, G_IO_ERROR, G_IO_ERROR_FAILED, "no thread for the sweep");
      g_object_unref (task);   /* the thread's reference */
    }
  g_object_unref (task);
  update_state (self);
}

void
ss_phase_window_stop (SsPhaseWindow *self)
{
  g_return_if_fail (SS_IS_PHASE_WINDOW (self));
  if (self->cancellable)
    g_cancellable_cancel (self->cancellable);
  if (self->running)
    gtk_label_set_text (self->status_label, "Stopping…");
}

gboolean
ss_phase_window_is_running (SsPhaseWindow *self)
{
  g_return_val_if_fail (SS_IS_PHASE_WINDOW (self), FALSE);
  return self->running;
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
  GtkFileFilter *filter = gtk_file_filter_new ();
  gtk_file_filter_set_name (filter, png ? "PNG images" : "CSV tables");
  gtk_file_filter_add_pattern (filter, png ? "*.png" : "*.csv");
  gtk_file_chooser_add_filter (chooser, filter);
  g_object_unref (filter);
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

/* ---- building the window ------------------------------------------------------------ */

static GtkDropDown *
new_dropdown (const char *const *labels, guint n)
{
  GtkStringList *list = gtk_string_list_new (NULL);
  for (guint i = 0; i < n; i++)
    gtk_string_list_append (list, labels[i]);
  return GTK_DROP_DOWN (gtk_drop_down_new (G_LIST_MODEL (list), NULL));
}

/* The solvers of the engine's table that name a compressed-sensing
 * algorithm, in the table's order; each row remembers its algorithm. */
static GtkDropDown *
new_solver_dropdown (SsPhaseWindow *self)
{
  GtkStringList *list = gtk_string_list_new (NULL);
  GString *tip = g_string_new (NULL);
  for (guint i = 0; i < ss_solver_count (); i++)
    {
      const SsSolverInfo *info = ss_solver_nth (i);
      SsCsAlgorithm algorithm;
      if (info->cs_algorithm == NULL
          || !ss_cs_algorithm_from_string (info->cs_algorithm, &algorithm, NULL))
        continue;
      g_array_append_val (self->algorithms, algorithm);
      gtk_string_list_append (list, info->label);
      g_string_append_printf (tip, "%s%s: %s.", tip->len ? "\n" : "", info->label, info->help);
    }
  GtkDropDown *dropdown = GTK_DROP_DOWN (gtk_drop_down_new (G_LIST_MODEL (list), NULL));
  gtk_widget_set_tooltip_text (GTK_WIDGET (dropdown), tip->str);
  g_string_free (tip, TRUE);
  return dropdown;
}

static GtkSpinButton *
new_spin (double lower, double upper, double step, const char *tip)
{
  GtkSpinButton *spin = GTK_SPIN_BUTTON (gtk_spin_button_new_with_range (lower, upper, step));
  gtk_spin_button_set_digits (spin, 0);
  gtk_widget_set_tooltip_text (GTK_WIDGET (spin), tip);
  return spin;
}

static void
add_row (GtkGrid *grid, int row, const char *label, GtkWidget *control)
{
  GtkWidget *text = gtk_label_new_with_mnemonic (label);
  gtk_label_set_xalign (GTK_LABEL (text), 0);
  gtk_label_set_mnemonic_widget (GTK_LABEL (text), control);
  gtk_widget_set_hexpand (control, TRUE);
  gtk_grid_attach (grid, text, 0, row, 1, 1);
  gtk_grid_attach (grid, control, 1, row, 1, 1);
}

static GtkWidget *
build_controls (SsPhaseWindow *self)
{
  self->solver_dropdown = new_solver_dropdown (self);
  self->ensemble_dropdown = new_dropdown (ensemble_labels, SS_N_ENSEMBLES);
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->ensemble_dropdown),
                               "The m × n sensing matrix A");
  self->values_dropdown = new_dropdown (values_labels, SS_N_CS_VALUES);
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->values_dropdown),
                               "The k nonzero values of each signal x");
  self->backend_dropdown = new_dropdown (backend_labels, G_N_ELEMENTS (backend_labels));
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->backend_dropdown),
                               "Automatic: the GPU when there is one. The GPU runs every "
                               "iteration (no early stop), the CPU stops each problem once "
                               "it has converged");
  self->n_spin = new_spin (16, 8192, 16, "Signal length n (the transition sharpens as n grows)");
  self->deltas_spin = new_spin (2, MAX_GRID, 1, "Columns: δ = m/n from 1/(N+1) to N/(N+1)");
  self->rhos_spin = new_spin (2, MAX_GRID, 1, "Rows: ρ = k/m from 0.5/N to 0.5");
  self->trials_spin = new_spin (1, 1000, 1, "Random problems a cell, solved as one batch");
  self->seed_spin = new_spin (0, 9007199254740992.0, 1,
                              "Seed of the matrices and signals: the same seed, the same "
                              "diagram");

  GtkGrid *grid = GTK_GRID (gtk_grid_new ());
  gtk_grid_set_row_spacing (grid, 6);
  gtk_grid_set_column_spacing (grid, 12);
  int row = 0;
  add_row (grid, row++, "_Solver", GTK_WIDGET (self->solver_dropdown));
  add_row (grid, row++, "_Matrix", GTK_WIDGET (self->ensemble_dropdown));
  add_row (grid, row++, "_Values", GTK_WIDGET (self->values_dropdown));
  add_row (grid, row++, "Length _n", GTK_WIDGET (self->n_spin));
  add_row (grid, row++, "δ steps", GTK_WIDGET (self->deltas_spin));
  add_row (grid, row++, "ρ steps", GTK_WIDGET (self->rhos_spin));
  add_row (grid, row++, "_Trials a cell", GTK_WIDGET (self->trials_spin));
  add_row (grid, row++, "S_eed", GTK_WIDGET (self->seed_spin));
  add_row (grid, row++, "_Backend", GTK_WIDGET (self->backend_dropdown));

  SsPhaseSettings defaults;
  ss_phase_settings_init (&defaults);
  ss_phase_window_set_settings (self, &defaults);
  GObject *dropdowns[] = { G_OBJECT (self->solver_dropdown), G_OBJECT (self->ensemble_dropdown),
                           G_OBJECT (self->values_dropdown), G_OBJECT (self->backend_dropdown) };
  for (guint i = 0; i < G_N_ELEMENTS (dropdowns); i++)
    g_signal_connect_swapped (dropdowns[i], "notify::selected", G_CALLBACK (on_control_changed),
                              self);
  GtkSpinButton *spins[] = { self->n_spin, self->deltas_spin, self->rhos_spin, self->trials_spin,
                             self->seed_spin };
  for (guint i = 0; i < G_N_ELEMENTS (spins); i++)
    g_signal_connect_swapped (spins[i], "value-changed", G_CALLBACK (on_control_changed), self);
  return GTK_WIDGET (grid);
}

static GtkWidget *
build_header (void)
{
  GtkWidget *header = gtk_header_bar_new ();
  GtkWidget *run = gtk_button_new_with_mnemonic ("_Run");
  gtk_actionable_set_action_name (GTK_ACTIONABLE (run), "phase.run");
  gtk_widget_add_css_class (run, "suggested-action");
  gtk_widget_set_tooltip_text (run, "Sweep the grid (Ctrl+R)");
  GtkWidget *stop = gtk_button_new_with_mnemonic ("_Stop");
  gtk_actionable_set_action_name (GTK_ACTIONABLE (stop), "phase.stop");
  gtk_widget_add_css_class (stop, "destructive-action");
  gtk_widget_set_tooltip_text (stop, "Stop the sweep; the cells done stay (Escape)");
  gtk_header_bar_pack_start (GTK_HEADER_BAR (header), run);
  gtk_header_bar_pack_start (GTK_HEADER_BAR (header), stop);

  GMenu *menu = g_menu_new ();
  g_menu_append (menu, "Export Diagram as _PNG…", "phase.export::png");
  g_menu_append (menu, "Export Cells as _CSV…", "phase.export::csv");
  GtkWidget *export = gtk_menu_button_new ();
  gtk_menu_button_set_label (GTK_MENU_BUTTON (export), "Export");
  gtk_menu_button_set_menu_model (GTK_MENU_BUTTON (export), G_MENU_MODEL (menu));
  g_object_unref (menu);
  gtk_header_bar_pack_end (GTK_HEADER_BAR (header), export);
  return header;
}

static void
build_window (SsPhaseWindow *self)
{
  gtk_window_set_title (GTK_WINDOW (self), "Phase Transition");
  gtk_window_set_default_size (GTK_WINDOW (self), 980, 640);
  gtk_window_set_titlebar (GTK_WINDOW (self), build_header ());

  GtkWidget *side = gtk_box_new (GTK_ORIENTATION_VERTICAL, 12);
  gtk_widget_set_margin_start (side, 12);
  gtk_widget_set_margin_end (side, 12);
  gtk_widget_set_margin_top (side, 12);
  gtk_widget_set_margin_bottom (side, 12);
  gtk_widget_set_size_request (side, 300, -1);
  GtkWidget *intro = gtk_label_new (
      "Where does a solver recover a random k-sparse signal of length n from m "
      "measurements? Each cell solves its trials and colours the fraction recovered "
      "(relative error ≤ 1e-4).");
  gtk_label_set_wrap (GTK_LABEL (intro), TRUE);
  gtk_label_set_max_width_chars (GTK_LABEL (intro), 36);
  gtk_label_set_xalign (GTK_LABEL (intro), 0);
  gtk_box_append (GTK_BOX (side), intro);
  self->controls = build_controls (self);
  gtk_box_append (GTK_BOX (side), self->controls);
  GtkWidget *same = gtk_label_new ("The same diagram from the command line:");
  gtk_label_set_xalign (GTK_LABEL (same), 0);
  gtk_widget_add_css_class (same, "dim-label");
  gtk_box_append (GTK_BOX (side), same);
  self->command_label = GTK_LABEL (gtk_label_new (NULL));
  gtk_label_set_wrap (GTK_LABEL (self->command_label), TRUE);
  gtk_label_set_wrap_mode (self->command_label, PANGO_WRAP_WORD_CHAR);
  gtk_label_set_max_width_chars (self->command_label, 36);
  gtk_label_set_selectable (self->command_label, TRUE);
  gtk_label_set_xalign (self->command_label, 0);
  gtk_widget_add_css_class (GTK_WIDGET (self->command_label), "monospace");
  gtk_box_append (GTK_BOX (side), GTK_WIDGET (self->command_label));

  self->view = SS_PHASE_VIEW (ss_phase_view_new ());
  gtk_widget_set_hexpand (GTK_WIDGET (self->view), TRUE);
  gtk_widget_set_vexpand (GTK_WIDGET (self->view), TRUE);

  GtkWidget *bar = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 12);
  gtk_widget_add_css_class (bar, "ss-statusbar");
  self->status_label = GTK_LABEL (gtk_label_new ("Choose the settings, then Run (Ctrl+R)"));
  gtk_label_set_xalign (self->status_label, 0);
  gtk_label_set_ellipsize (self->status_label, PANGO_ELLIPSIZE_END);
  gtk_widget_set_hexpand (GTK_WIDGET (self->status_label), TRUE);
  self->progress = GTK_PROGRESS_BAR (gtk_progress_bar_new ());
  gtk_progress_bar_set_show_text (self->progress, TRUE);
  gtk_widget_set_size_request (GTK_WIDGET (self->progress), 220, -1);
  gtk_widget_set_valign (GTK_WIDGET (self->progress), GTK_ALIGN_CENTER);
  gtk_box_append (GTK_BOX (bar), GTK_WIDGET (self->status_label));
  gtk_box_append (GTK_BOX (bar), GTK_WIDGET (self->progress));

  GtkWidget *main_box = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 0);
  GtkWidget *scroller = gtk_scrolled_window_new ();
  gtk_scrolled_window_set_policy (GTK_SCROLLED_WINDOW (scroller), GTK_POLICY_NEVER,
                                  GTK_POLICY_AUTOMATIC);
  gtk_scrolled_window_set_child (GTK_SCROLLED_WINDOW (scroller), side);
  gtk_box_append (GTK_BOX (main_box), scroller);
  gtk_box_append (GTK_BOX (main_box), gtk_separator_new (GTK_ORIENTATION_VERTICAL));
  gtk_box_append (GTK_BOX (main_box), GTK_WIDGET (self->view));
  GtkWidget *outer = gtk_box_new (GTK_ORIENTATION_VERTICAL, 0);
  gtk_box_append (GTK_BOX (outer), main_box);
  gtk_box_append (GTK_BOX (outer), bar);
  gtk_window_set_child (GTK_WINDOW (self), outer);
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
  build_window (self);
  on_control_changed (self);
  update_state (self);
}
