/* ss-window-solve.c: Run, Stop and Compare, and the status line of a run. */
#include "ss-window-private.h"

#include <math.h>

/* A stop the engine has not honoured after this long detaches the worker. */
#define STOP_DETACH_MS 400

static void compare_next (SsWindow *self);

/* ---- status line ---------------------------------------------------------- */

static void
update_running_status (SsWindow *self, const SsProgressPoint *p)
{
  double rate = p->elapsed > 0 ? p->iteration / p->elapsed : 0;
  g_autofree char *mem = ss_format_bytes (ss_window_resident_bytes ());
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
  ss_window_set_status (self, text);
}

/* Where the run's time went, as deblur's `time` line says it (read,
 * prepare, plan, solve; write is the export's): " · read … s, …", or "" when
 * the problem was never built. Planning (FFTW, cuFFT) is taken out of the
 * phase it happened in. */
static char *
phase_times (SsWindow *self)
{
  if (self->job_ready_at == 0)
    return g_strdup ("");
  gint64 now = g_get_monotonic_time ();
  double prepare_wall = (self->job_ready_at - self->run_started) / 1e6;
  double solve_wall = (now - self->job_ready_at) / 1e6;
  /* The planning counter is the process's: a plan made ahead on another
   * thread (ss_solve_task_prepare_size) counts while this run waits for
   * it, never more than the phase lasted. */
  double plan_prepare = CLAMP (self->planning_at_job - self->planning_at_run, 0, prepare_wall);
  double plan_solve = CLAMP (ss_planning_seconds () - self->planning_at_job, 0, solve_wall);
  double prepare = prepare_wall - plan_prepare;
  double solve = solve_wall - plan_solve;
  g_autofree char *read = isfinite (self->read_seconds)
                            ? g_strdup_printf ("read %.2f s, ", self->read_seconds)
                            : g_strdup ("");
  return g_strdup_printf (" · %sprepare %.2f s, plan %.2f s, solve %.2f s", read, prepare,
                          plan_prepare + plan_solve, solve);
}

/* ERROR: why a run that produced nothing failed (a device that is not
 * there, a problem that could not be built), said in the status line too. */
static void
update_final_status (SsWindow *self, SsSolveTask *task, gboolean ok, gboolean cancelled,
                     const GError *error)
{
  const SsSolveResult *r = ss_solve_task_get_result (task);
  g_autofree char *mem = ss_format_bytes (r->peak_memory_bytes);
  g_autofree char *metric = isfinite (r->mse)
                                ? g_strdup_printf ("MSE %.3e · PSNR %.2f dB", r->mse, r->psnr)
                                : g_strdup_printf ("residual %.3e", r->residual);
  double rate = r->seconds > 0 ? r->iterations / r->seconds : 0;
  g_autofree char *text = NULL;
  if (ss_solve_task_get_recovered (task) == NULL)   /* no estimate */
    text = cancelled ? g_strdup ("Stopped")
           : error   ? g_strdup_printf ("Failed: %s", error->message)
                     : g_strdup ("Failed (see the message above)");
  else
    {
      g_autofree char *phases = phase_times (self);
      g_autofree char *holdout = ss_solve_result_describe_holdout (r);
      text = g_strdup_printf ("%s: %d iterations in %.2f s (%.1f it/s) · %s · %s (%s) · "
                              "engine peak %s%s%s%s",
                              cancelled ? "Stopped" : ok ? "Done" : "Failed", r->iterations,
                              r->seconds, rate, metric, r->backend ? r->backend : "?",
                              r->device ? r->device : "?", mem, phases, holdout ? " · " : "",
                              holdout ? holdout : "");
    }
  ss_window_set_status (self, text);
}

/* ---- notes ---------------------------------------------------------------- */

/* The banner of a run: JOB's notes (the PSF file's negative wings zeroed,
 * an off-centre centroid; saturated pixels left out), then WARNING (the solver's, or NULL);
 * the banner is left as it is when there is neither. */
static void
show_run_notes (SsWindow *self, SsJob *job, const char *warning)
{
  g_autofree char *notes = job != NULL ? ss_job_get_notes (job) : NULL;
  if (notes == NULL && warning == NULL)
    return;
  g_autofree char *text = notes != NULL && warning != NULL
                            ? g_strdup_printf ("%s\n%s", notes, warning)
                            : g_strdup (notes != NULL ? notes : warning);
  ss_window_show_message (self, text, FALSE);
}

/* Whether the window's job can serve SETTINGS: the same problem, and its
 * PSF file (if any) unchanged on disk since it was read, so that a file
 * the user has rewritten is read again, never solved with as it was. */
static gboolean
job_serves (SsWindow *self, const SsSettings *settings)
{
  return self->job != NULL && ss_settings_same_problem (&self->job->settings, settings)
         && ss_psf_spec_file_unchanged (&self->job->settings.acquisition.psf);
}

/* ---- solving -------------------------------------------------------------- */

void
ss_window_set_job (SsWindow *self, SsJob *job)
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
  self->job_ready_at = g_get_monotonic_time ();
  self->planning_at_job = ss_planning_seconds ();
  ss_window_set_job (self, ss_solve_task_get_job (task));
  /* What reading the PSF file found, as soon as it was read. */
  show_run_notes (self, self->job, NULL);
  ss_window_refresh_view (self);
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
gboolean
ss_window_on_status_tick (gpointer data)
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
        ss_window_set_status (self, text);
      return G_SOURCE_CONTINUE;
    }
  if (now - self->last_progress < G_USEC_PER_SEC)
    return G_SOURCE_CONTINUE;
  const SsSolveParams *p = &ss_solve_task_get_settings (self->task)->params;
  SsJob *job = ss_solve_task_get_job (self->task);
  g_autofree char *mem = ss_format_bytes (ss_window_resident_bytes ());
  g_autofree char *label = ss_solve_params_label (p);
  g_autofree char *text = g_strdup_printf (
      "%s on %d×%d pixels: working… %.0f s · %s · memory %s", label, job ? job->solve_width : 0,
      job ? job->solve_height : 0, (now - self->started_at) / 1e6,
      self->backend_text ? self->backend_text : "…", mem);
  ss_window_set_status (self, text);
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
      ss_window_refresh_view (self);
    }
}

void
ss_window_clear_results (SsWindow *self)
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

void
ss_window_detach_task (SsWindow *self)
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

/* Whether TASK ran detached (mark_detached): if so it no longer does, and
 * the application it held is released, here on the main thread. */
static gboolean
end_detached (SsWindow *self, SsSolveTask *task)
{
  if (g_object_get_data (G_OBJECT (task), "ss-detached") == NULL)
    return FALSE;
  self->detached_solves--;
  g_object_set_data (G_OBJECT (task), "ss-detached", NULL);
  ss_window_release_application_of (G_OBJECT (task));
  return TRUE;
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
      if (end_detached (self, task) && !self->disposed && self->detached_solves == 0)
        {
          /* A load or a star search started since owns the status line. */
          if (!self->loading && !self->fitting)
            ss_window_set_status (self, "Stopped; the solver's last step has finished");
          ss_window_update_actions (self);
        }
      g_object_unref (self);
      return;
    }
  gboolean cancelled = g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  /* Held for a closing window (ss_window_hold_running_solve) that is still
   * here: released now, on this thread. */
  end_detached (self, task);
  g_object_ref (task);
  ss_window_detach_task (self);
  ss_window_set_job (self, ss_solve_task_get_job (task));
  show_result_of (self, task);
  update_final_status (self, task, ok, cancelled, error);

  const SsSolveResult *r = ss_solve_task_get_result (task);
  const SsSolveParams *params = &ss_solve_task_get_settings (task)->params;
  g_autofree char *label = ss_solve_params_label (params);
  /* No job: the problem itself could not be built (an image, a PSF file),
   * which no solver's name explains. */
  if (!ok && !cancelled)
    ss_window_show_error (self, ss_solve_task_get_job (task) ? label : "Cannot build the problem",
                          error);
  else if (r->warning)
    show_run_notes (self, ss_solve_task_get_job (task), r->warning);

  if (self->comparing)
    {
      finish_compare_entry (self, task, ok, cancelled, error);
      /* A stop ends the comparison; so does a problem that could not be
       * built (every solver would fail the same way). */
      if (cancelled || self->job == NULL)
        g_array_set_size (self->compare_queue, 0);
      compare_next (self);
    }
  ss_window_refresh_view (self);
  ss_window_update_actions (self);
  g_object_unref (task);
  g_object_unref (self);
}

/* The running task goes on alone: counted until it ends (no new solve
 * meanwhile), and the application held, so that quitting waits for it
 * instead of unloading the libraries under it (a hang in OpenBLAS's exit). */
static void
mark_detached (SsWindow *self)
{
  if (self->task == NULL || g_object_get_data (G_OBJECT (self->task), "ss-detached") != NULL)
    return;
  g_object_set_data (G_OBJECT (self->task), "ss-detached", GINT_TO_POINTER (TRUE));
  self->detached_solves++;
  ss_window_hold_application_for (self, G_OBJECT (self->task));
}

void
ss_window_hold_running_solve (SsWindow *self)
{
  if (self->running)
    mark_detached (self);
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
  mark_detached (self);
  ss_window_detach_task (self);
  if (self->preview && self->recovered == NULL)
    self->recovered = ss_frame_ref (self->preview);
  ss_window_set_status (self, "Stopped (the solver's current step finishes in the background)");
  ss_window_refresh_view (self);
  ss_window_update_actions (self);
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
  ss_window_set_status (self, "Stopping…");
  if (self->stop_timeout_id == 0)
    self->stop_timeout_id = g_timeout_add (STOP_DETACH_MS, on_stop_timeout, self);
}

static gboolean
validate_settings (SsWindow *self, const SsSettings *settings)
{
  if (settings->psf_from_fit && !(settings->psf_fit.fwhm > 0))
    {
      ss_window_show_message (self, "Cannot run: measure the PSF first (Pick a star, Ctrl+K, "
                              "or Find stars, Ctrl+Shift+K)", TRUE);
      return FALSE;
    }
  g_autoptr (GError) error = NULL;
  SsSolveParams params = settings->params;
  params.report_every = 1;
  if (!ss_solve_params_validate (&params, &error)
      || (settings->mode == SS_MODE_SIMULATE
          && !ss_acquisition_validate (&settings->acquisition, &error)))
    {
      ss_window_show_error (self, "Cannot run", error);
      return FALSE;
    }
  if (settings->acquisition.psf.kind == SS_PSF_FILE && settings->acquisition.psf.path == NULL)
    {
      ss_window_show_message (self, "Cannot run: choose the PSF file first", TRUE);
      return FALSE;
    }
  return TRUE;
}

static void
start_solve (SsWindow *self, const SsSettings *settings)
{
  SsJob *reuse = job_serves (self, settings) ? self->job : NULL;
  if (reuse == NULL)
    ss_window_set_job (self, NULL);
  self->task = ss_solve_task_new (self->input, self->header, self->path, reuse, settings);
  /* A run on a job built before hears no job-ready: its PSF file's notes
   * are shown here, the banner having been cleared for the run. */
  if (reuse != NULL)
    show_run_notes (self, reuse, NULL);
  self->cancellable = g_cancellable_new ();
  self->running = TRUE;
  self->started_at = 0;
  self->run_started = g_get_monotonic_time ();
  self->job_ready_at = 0;
  self->planning_at_run = ss_planning_seconds ();
  self->iteration = 0;
  /* No total for a solver that sets its own count (`auto`'s candidates). */
  const SsSolverInfo *info = ss_solver_info (settings->params.kind);
  self->iteration_target = ss_solver_is_iterative (info->kind)
                               && ss_solver_uses (info, SS_PARAM_ITERATIONS)
                               ? settings->params.iterations
                               : 0;
  g_clear_pointer (&self->preview, ss_frame_unref);
  g_signal_connect (self->task, "job-ready", G_CALLBACK (on_task_job_ready), self);
  g_signal_connect (self->task, "started", G_CALLBACK (on_task_started), self);
  g_signal_connect (self->task, "progress", G_CALLBACK (on_task_progress), self);
  ss_solve_task_run_async (self->task, self->cancellable, on_solve_done, g_object_ref (self));
  ss_window_set_status (self, reuse ? "Starting the solver…" : "Building the problem…");
  ss_window_update_actions (self);
}

static gboolean
can_start (SsWindow *self)
{
  if (self->input == NULL)
    {
      ss_window_show_message (self, "Open an image first (Ctrl+O)", TRUE);
      return FALSE;
    }
  return !self->running && !self->loading;
}

static void
prepare_views_for_run (SsWindow *self)
{
  ss_window_dismiss_message (self);
  self->preview_count = 0;
  ss_window_clear_results (self);
  if (self->view_kind == SS_VIEW_ORIGINAL || self->view_kind == SS_VIEW_ERROR)
    ss_window_set_view (self, SS_VIEW_RECOVERED);
}

void
ss_window_run (SsWindow *self)
{
  g_return_if_fail (SS_IS_WINDOW (self));
  SsSettings settings;
  ss_params_panel_get_settings (self->panel, &settings);
  ss_window_run_settings (self, &settings);
  ss_settings_clear (&settings);
}

void
ss_window_run_settings (SsWindow *self, const SsSettings *given)
{
  g_return_if_fail (SS_IS_WINDOW (self));
  if (!can_start (self))
    return;
  SsSettings settings;
  ss_settings_copy (given, &settings);
  if (validate_settings (self, &settings))
    {
      self->comparing = FALSE;
      g_clear_object (&self->compare_entry);
      ss_compare_table_clear (self->table);
      gtk_widget_set_visible (GTK_WIDGET (self->table), FALSE);
      ss_plot_clear (self->plot);
      if (ss_solver_is_iterative (settings.params.kind))
        ss_plot_set_x_range (self->plot, settings.params.iterations);
      g_autofree char *label = ss_solve_params_label (&settings.params);
      self->series = ss_plot_add_series (self->plot, label);
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
  SsSolveParams choice = g_array_index (self->compare_queue, SsSolveParams, 0);
  g_array_remove_index (self->compare_queue, 0);
  SsSettings settings;
  ss_settings_copy (&self->compare_settings, &settings);
  ss_solve_params_copy_choices (&choice, &settings.params);
  g_autofree char *name = ss_solve_params_label (&settings.params);
  self->series = ss_plot_add_series (self->plot, name);
  self->compare_entry = ss_compare_entry_new (name, self->series);
  ss_compare_table_append (self->table, self->compare_entry);
  start_solve (self, &settings);
  ss_settings_clear (&settings);
}

void
ss_window_compare (SsWindow *self, const SsSolveParams *choices, guint n)
{
  g_return_if_fail (SS_IS_WINDOW (self));
  if (n == 0)
    {
      ss_window_show_message (self, "Tick at least one solver to compare", TRUE);
      return;
    }
  if (!can_start (self))
    return;
  ss_settings_clear (&self->compare_settings);
  ss_params_panel_get_settings (self->panel, &self->compare_settings);
  if (!validate_settings (self, &self->compare_settings))
    return;
  g_array_set_size (self->compare_queue, 0);
  g_array_append_vals (self->compare_queue, choices, n);
  self->comparing = TRUE;
  ss_plot_clear (self->plot);
  ss_plot_set_x_range (self->plot, self->compare_settings.params.iterations);
  ss_compare_table_clear (self->table);
  gtk_widget_set_visible (GTK_WIDGET (self->table), TRUE);
  prepare_views_for_run (self);
  compare_next (self);
}

void
ss_window_on_table_selected (SsCompareTable *table, SsCompareEntry *entry, SsWindow *self)
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
        ss_window_refresh_view (self);
      update_final_status (self, task, TRUE, FALSE, NULL);
    }
}
