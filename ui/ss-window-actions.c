/* ss-window-actions.c: the window's actions and when each is enabled. */
#include "ss-window-private.h"

/* ---- actions -------------------------------------------------------------- */

void
ss_window_update_actions (SsWindow *self)
{
  if (self->disposed)
    return;
  gboolean idle = !self->running && !self->loading;
  /* A stopped solve still finishing in the background holds its memory: a
   * new one beside it would pile them up (each Run/Stop of a dense solve
   * added one). */
  gboolean can_solve = idle && self->input != NULL && self->detached_solves == 0;
  ss_window_enable_action (self, "run", can_solve);
  ss_window_enable_action (self, "compare", can_solve);
  /* Escape also leaves star picking. */
  ss_window_enable_action (self, "stop", self->running || ss_image_view_get_pick_mode (self->view));
  /* The search started by opening a file gives way to the user's own
   * (begin_star_fit): only a fit the user asked for holds these back. */
  gboolean user_fitting = self->fitting && !self->fit_quiet;
  ss_window_enable_action (self, "pick-star", self->input != NULL && !user_fitting);
  ss_window_enable_action (self, "find-stars", self->input != NULL && !user_fitting);
  ss_window_enable_action (self, "open", !self->running);
  ss_window_enable_action (self, "open-sample", !self->running);
  ss_window_enable_action (self, "open-recent", !self->running);
  ss_window_enable_action (self, "export", self->input != NULL && !self->exporting);
  ss_window_enable_action (self, "choose-hdu", idle && ss_fits_count_images (self->hdus, NULL) > 0);
  gtk_widget_set_sensitive (GTK_WIDGET (self->compare_button), can_solve);
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

/* Compare lists every way to run every solver of the table; each check
 * button carries its solver's kind and choices. */
void
ss_window_fill_compare_list (SsWindow *self)
{
  for (guint i = 0; i < ss_solver_count (); i++)
    {
      const SsSolverInfo *info = ss_solver_nth (i);
      for (guint v = 0; v < ss_solver_n_variants (info); v++)
        {
          SsSolveParams *choice = g_new (SsSolveParams, 1);
          ss_solve_params_set_defaults (choice, info->kind);
          ss_solver_apply_variant (info, v, choice);
          g_autofree char *label = ss_solve_params_label (choice);
          GtkWidget *check = gtk_check_button_new_with_label (label);
          gtk_widget_set_tooltip_text (check, info->help);
          gtk_check_button_set_active (GTK_CHECK_BUTTON (check),
                                       info->compare_by_default && v == 0);
          g_object_set_data_full (G_OBJECT (check), "choice", choice, g_free);
          gtk_box_append (self->compare_list, check);
        }
    }
}

static void
action_compare (GSimpleAction *action, GVariant *param, gpointer data)
{
  SsWindow *self = data;
  g_autoptr (GArray) choices = g_array_new (FALSE, FALSE, sizeof (SsSolveParams));
  for (GtkWidget *child = gtk_widget_get_first_child (GTK_WIDGET (self->compare_list));
       child != NULL; child = gtk_widget_get_next_sibling (child))
    if (gtk_check_button_get_active (GTK_CHECK_BUTTON (child)))
      g_array_append_vals (choices, g_object_get_data (G_OBJECT (child), "choice"), 1);
  gtk_menu_button_popdown (self->compare_button);
  ss_window_compare (self, (const SsSolveParams *) choices->data, choices->len);
}

/* The Phase transition window: one for this window, raised when it is open.
 * It needs no image, so it is always enabled. Transient for this window and
 * destroyed with it, as what it teaches belongs to this window's solvers. */
static void
action_phase_transition (GSimpleAction *action, GVariant *param, gpointer data)
{
  SsWindow *self = data;
  if (self->phase_window == NULL)
    {
      SsPhaseWindow *phase = ss_phase_window_new (gtk_window_get_application (GTK_WINDOW (self)));
      gtk_window_set_transient_for (GTK_WINDOW (phase), GTK_WINDOW (self));
      gtk_window_set_destroy_with_parent (GTK_WINDOW (phase), TRUE);
      g_set_weak_pointer (&self->phase_window, phase);
    }
  gtk_window_present (GTK_WINDOW (self->phase_window));
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

void
ss_window_on_fullscreened (SsWindow *self)
{
  GAction *action = ss_window_win_action (self, "fullscreen");
  gboolean fullscreen = gtk_window_is_fullscreen (GTK_WINDOW (self));
  if (action)
    g_simple_action_set_state (G_SIMPLE_ACTION (action), g_variant_new_boolean (fullscreen));
}

static void
action_dismiss (GSimpleAction *action, GVariant *param, gpointer data)
{
  ss_window_dismiss_message (SS_WINDOW (data));
}

static const GActionEntry win_entries[] = {
  { "open", ss_window_action_open, NULL, NULL, NULL, { 0 } },
  { "open-sample", action_open_sample, NULL, NULL, NULL, { 0 } },
  { "open-recent", ss_window_action_open_recent, "s", NULL, NULL, { 0 } },
  { "run", action_run, NULL, NULL, NULL, { 0 } },
  { "stop", action_stop, NULL, NULL, NULL, { 0 } },
  { "compare", action_compare, NULL, NULL, NULL, { 0 } },
  { "export", ss_window_action_export, "s", NULL, NULL, { 0 } },
  { "zoom-in", action_zoom, NULL, NULL, NULL, { 0 } },
  { "zoom-out", action_zoom, NULL, NULL, NULL, { 0 } },
  { "zoom-fit", action_zoom, NULL, NULL, NULL, { 0 } },
  { "zoom-one", action_zoom, NULL, NULL, NULL, { 0 } },
  { "view", NULL, "s", "'original'", ss_window_change_view_state, { 0 } },
  { "split", NULL, NULL, "false", ss_window_change_split_state, { 0 } },
  { "fullscreen", NULL, NULL, "false", change_fullscreen_state, { 0 } },
  { "dismiss-message", action_dismiss, NULL, NULL, NULL, { 0 } },
  { "pick-star", ss_window_action_pick_star, NULL, NULL, NULL, { 0 } },
  { "choose-hdu", ss_window_action_choose_hdu, NULL, NULL, NULL, { 0 } },
  { "find-stars", ss_window_action_find_stars, NULL, NULL, NULL, { 0 } },
  { "phase-transition", action_phase_transition, NULL, NULL, NULL, { 0 } },
};

void
ss_window_add_actions (SsWindow *self)
{
  g_action_map_add_action_entries (G_ACTION_MAP (self), win_entries, G_N_ELEMENTS (win_entries),
                                   self);
}
