/* ss-phase-window-sweep.c: the Phase transition window's sweep: the engine's
 * ss_cs_phase_transition in a worker thread, its cells delivered to the main
 * thread and the diagram, Run and Stop, and the state they show (actions,
 * progress, status line). */
#include "ss-phase-window-private.h"
#include "ss-thread.h"

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
        ss_phase_window_update_state (self);
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
  ss_phase_window_update_state (self);
}

/* ---- state -------------------------------------------------------------------- */

void
ss_phase_window_update_state (SsPhaseWindow *self)
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
  ss_phase_window_update_state (self);
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
