/* ss-phase-window-controls.c: the Phase transition window's widgets: the
 * controls, read and set as SsPhaseSettings and shown as the CLI's command
 * line, and the building of the window (header bar, controls, diagram,
 * status bar). */
#include "ss-phase-window-private.h"
#include "ss-param-controls.h"

/* The controls' labels for the engine's enums, in their order. */
static const char *const ensemble_labels[SS_N_ENSEMBLES] = {
  "Gaussian N(0, 1/m)", "Signs ±1/√m", "Subsampled DCT", "Sparse (8 per column)",
};
static const char *const values_labels[SS_N_CS_VALUES] = {
  "Gaussian", "Signs ±1 (hardest)", "Uniform",
};
/* The backend list, in SsBackendKind order. */
static const char *const backend_labels[] = { "Automatic", "CPU", "CUDA GPU" };

/* ---- controls ------------------------------------------------------------------ */

static guint
dropdown_index (GtkDropDown *dropdown, guint count)
{
  guint i = gtk_drop_down_get_selected (dropdown);
  return i < count ? i : 0;
}

/* The controls as settings. With COMMIT, a number typed but not yet
 * entered (Ctrl+R straight after typing) is entered first: it is the one
 * the user sees, and the one the sweep and command line use. Without, the
 * spins' text is left alone: the label refresh runs on every change of
 * any control, and must not clamp a half-typed number under the cursor. */
static void
read_settings (SsPhaseWindow *self, SsPhaseSettings *s, gboolean commit)
{
  ss_phase_settings_init (s);
  if (self->algorithms->len > 0)
    s->algorithm = g_array_index (self->algorithms, SsCsAlgorithm,
                                  dropdown_index (self->solver_dropdown, self->algorithms->len));
  s->ensemble = (SsEnsemble) dropdown_index (self->ensemble_dropdown, SS_N_ENSEMBLES);
  s->values = (SsCsValues) dropdown_index (self->values_dropdown, SS_N_CS_VALUES);
  s->backend = (SsBackendKind) dropdown_index (self->backend_dropdown,
                                               G_N_ELEMENTS (backend_labels));
  GtkSpinButton *spins[] = { self->n_spin, self->deltas_spin, self->rhos_spin, self->trials_spin,
                             self->seed_spin };
  for (guint i = 0; commit && i < G_N_ELEMENTS (spins); i++)
    ss_spin_button_commit_typed (spins[i]);
  s->n = gtk_spin_button_get_value_as_int (self->n_spin);
  s->n_deltas = gtk_spin_button_get_value_as_int (self->deltas_spin);
  s->n_rhos = gtk_spin_button_get_value_as_int (self->rhos_spin);
  s->trials = gtk_spin_button_get_value_as_int (self->trials_spin);
  s->seed = (guint64) gtk_spin_button_get_value (self->seed_spin);
}

/* Run, export and tests: what the user typed counts. */
void
ss_phase_window_get_settings (SsPhaseWindow *self, SsPhaseSettings *s)
{
  g_return_if_fail (SS_IS_PHASE_WINDOW (self));
  read_settings (self, s, TRUE);
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

/* Reads without committing (see read_settings): a spin's typed number
 * shows here once entered, when its value-changed brings us back. */
void
ss_phase_window_on_control_changed (SsPhaseWindow *self)
{
  SsPhaseSettings s;
  read_settings (self, &s, FALSE);
  g_autofree char *command = command_line_for (&s);
  gtk_label_set_text (self->command_label, command);
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
    g_signal_connect_swapped (dropdowns[i], "notify::selected",
                              G_CALLBACK (ss_phase_window_on_control_changed), self);
  GtkSpinButton *spins[] = { self->n_spin, self->deltas_spin, self->rhos_spin, self->trials_spin,
                             self->seed_spin };
  for (guint i = 0; i < G_N_ELEMENTS (spins); i++)
    g_signal_connect_swapped (spins[i], "value-changed",
                              G_CALLBACK (ss_phase_window_on_control_changed), self);
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

void
ss_phase_window_build_window (SsPhaseWindow *self)
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
