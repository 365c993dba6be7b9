/* test-ui-phase.c: compressed sensing in the app: the solver list, Compare
 * and the Phase transition window against sharpsky-cli cs (suite ui;
 * fixtures in test-ui.h). */
#include "test-ui.h"

/* ---- compressed sensing: the solver list, Compare, the phase transition --- */

/* The Phase transition window, opened as Ctrl+T opens it. */
static SsPhaseWindow *
open_phase_window (Fixture *f)
{
  g_action_group_activate_action (G_ACTION_GROUP (f->window), "phase-transition", NULL);
  SsPhaseWindow *phase = ss_window_get_phase_window (f->window);
  g_assert_nonnull (phase);
  return phase;
}

/* Issue 12: every solver of the table that solves compressed-sensing
 * problems is in the panel's solver list, in Compare, and in the Phase
 * transition window's list. */
static void
test_cs_solvers_listed (Fixture *f, gconstpointer data)
{
  if (skip_without_display ())
    return;
  g_autoptr (GPtrArray) choices = ss_window_get_compare_choices (f->window);
  SsPhaseWindow *phase = open_phase_window (f);
  guint listed = 0;
  for (guint i = 0; i < ss_solver_count (); i++)
    {
      const SsSolverInfo *info = ss_solver_nth (i);
      if (info->cs_algorithm == NULL)
        continue;
      listed++;
      /* The panel: choosing it sticks. */
      SsSettings s;
      ss_settings_init (&s);
      s.params.kind = info->kind;
      ss_params_panel_set_settings (ss_window_get_params_panel (f->window), &s);
      ss_settings_clear (&s);
      ss_params_panel_get_settings (ss_window_get_params_panel (f->window), &s);
      g_assert_cmpint (s.params.kind, ==, info->kind);
      ss_settings_clear (&s);
      /* Compare offers it. */
      gboolean offered = FALSE;
      for (guint c = 0; c < choices->len; c++)
        offered |= ((const SsSolveParams *) g_ptr_array_index (choices, c))->kind == info->kind;
      g_assert_true (offered);
      /* The phase window lists it. */
      SsPhaseSettings p;
      ss_phase_settings_init (&p);
      g_assert_true (ss_cs_algorithm_from_string (info->cs_algorithm, &p.algorithm, NULL));
      ss_phase_window_set_settings (phase, &p);
      SsPhaseSettings back;
      ss_phase_window_get_settings (phase, &back);
      g_assert_cmpint (back.algorithm, ==, p.algorithm);
      g_test_message ("%s: in the solver list, Compare and the phase window", info->label);
    }
  g_assert_cmpuint (listed, >=, 5);   /* iht, niht, htp, cosamp, alm (and fista) */
}

/* Runs sharpsky-cli with ARGV (NULL-terminated, the program first). */
static void
run_cli (GPtrArray *argv)
{
  int status = 0;
  g_autoptr (GError) error = NULL;
  g_autofree char *out = NULL, *err = NULL;   /* kept out of the TAP stream */
  g_ptr_array_add (argv, NULL);
  g_assert_true (g_spawn_sync (NULL, (char **) argv->pdata, NULL, G_SPAWN_DEFAULT, NULL, NULL,
                               &out, &err, &status, &error));
  g_assert_no_error (error);
  if (!g_spawn_check_wait_status (status, NULL))
    g_error ("sharpsky-cli failed: %s", err);
}

static char *
number_list (const double *values, int n)
{
  GString *text = g_string_new (NULL);
  for (int i = 0; i < n; i++)
    {
      char number[G_ASCII_DTOSTR_BUF_SIZE];
      g_string_append_printf (text, "%s%s", i ? "," : "",
                              g_ascii_formatd (number, sizeof number, "%.17g", values[i]));
    }
  return g_string_free (text, FALSE);
}

static GStrv
read_lines (const char *path)
{
  g_autofree char *text = NULL;
  g_assert_true (g_file_get_contents (path, &text, NULL, NULL));
  return g_strsplit (g_strchomp (text), "\n", -1);
}

static GBytes *
read_bytes (const char *path)
{
  g_autofree char *contents = NULL;
  gsize length = 0;
  g_assert_true (g_file_get_contents (path, &contents, &length, NULL));
  return g_bytes_new_take (g_steal_pointer (&contents), length);
}

/* A tiny sweep in the window (3 × 3 cells, the fixture's fresh seed) gives
 * the success rates of `sharpsky-cli cs --phase-transition` with the same
 * settings; its CSV equals the CLI's but for the timings, and its PNG is
 * the CLI's byte for byte. */
static void
test_phase_matches_cli (Fixture *f, gconstpointer data)
{
  if (skip_without_display ())
    return;
  const char *cli = cli_or_skip ();
  if (cli == NULL)
    return;
  SsPhaseWindow *phase = open_phase_window (f);
  g_assert_true (gtk_widget_get_visible (GTK_WIDGET (phase)));
  /* Opening it again raises the same window. */
  g_action_group_activate_action (G_ACTION_GROUP (f->window), "phase-transition", NULL);
  g_assert_true (ss_window_get_phase_window (f->window) == phase);

  SsPhaseSettings s;
  ss_phase_settings_init (&s);
  s.algorithm = SS_CS_NIHT;
  s.ensemble = SS_ENSEMBLE_GAUSSIAN;
  s.values = (SsCsValues) (f->seed % SS_N_CS_VALUES);
  s.n = 64;
  s.n_deltas = s.n_rhos = 3;
  s.trials = 4;
  s.seed = f->seed;
  s.backend = SS_BACKEND_CPU;
  ss_phase_window_set_settings (phase, &s);
  g_test_message ("niht on gaussian, %s values, n 64, 3 × 3, 4 trials, seed %u",
                  ss_cs_values_to_string (s.values), f->seed);
  gtk_widget_activate_action (GTK_WIDGET (phase), "phase.run", NULL);
  g_assert_true (ss_phase_window_is_running (phase));
  g_assert_true (ss_phase_window_wait_idle (phase, 300));
  g_test_message ("%s", ss_phase_window_get_status (phase));
  g_assert_true (g_str_has_prefix (ss_phase_window_get_status (phase), "Done"));
  guint n_cells = 0;
  const SsCsPhaseCell *cells = ss_phase_window_get_cells (phase, &n_cells);
  g_assert_cmpuint (n_cells, ==, 9);
  g_assert_cmpuint (ss_phase_window_get_n_total (phase), ==, 9);
  /* The diagram shows every cell's rate. */
  const double *shown = ss_phase_view_get_fractions (ss_phase_window_get_view (phase), NULL, NULL);
  for (guint i = 0; i < n_cells; i++)
    g_assert_cmpfloat (shown[cells[i].index], ==, cells[i].fraction);

  /* The CLI, with the same settings. */
  int n_deltas, n_rhos;
  const double *deltas = ss_phase_window_get_deltas (phase, &n_deltas);
  const double *rhos = ss_phase_window_get_rhos (phase, &n_rhos);
  g_autofree char *delta_list = number_list (deltas, n_deltas);
  g_autofree char *rho_list = number_list (rhos, n_rhos);
  g_autofree char *seed = g_strdup_printf ("%u", f->seed);
  g_autofree char *prefix = g_build_filename (f->dir, "cli", NULL);
  const char *args[] = { "cs", "--phase-transition", "--solver", "niht", "--ensemble",
                         "gaussian", "--values", ss_cs_values_to_string (s.values), "--n", "64",
                         "--trials", "4", "--seed", seed, "--backend", "cpu", "--deltas",
                         delta_list, "--rhos", rho_list, "-o", prefix, "--quiet" };
  g_autoptr (GPtrArray) argv = g_ptr_array_new ();
  g_ptr_array_add (argv, (gpointer) cli);
  for (guint i = 0; i < G_N_ELEMENTS (args); i++)
    g_ptr_array_add (argv, (gpointer) args[i]);
  run_cli (argv);
  /* The command line the window shows is that one: each option with the
   * same value (in its own order, -o PREFIX left to the user). */
  g_autofree char *command = ss_phase_window_get_command_line (phase);
  g_test_message ("%s", command);
  g_auto (GStrv) shown_argv = NULL;
  g_assert_true (g_shell_parse_argv (command, NULL, &shown_argv, NULL));
  for (guint i = 2; i + 1 < G_N_ELEMENTS (args); i++)
    if (g_str_has_prefix (args[i], "--") && !g_str_equal (args[i], "--quiet"))
      {
        guint k = 0;
        while (shown_argv[k] && !g_str_equal (shown_argv[k], args[i]))
          k++;
        g_assert_nonnull (shown_argv[k]);
        if (strchr (args[i + 1], ','))
          {
            /* A list: the same numbers, however many digits they show. */
            g_auto (GStrv) want = g_strsplit (args[i + 1], ",", -1);
            g_auto (GStrv) got = g_strsplit (shown_argv[k + 1], ",", -1);
            g_assert_cmpuint (g_strv_length (got), ==, g_strv_length (want));
            for (guint v = 0; want[v]; v++)
              g_assert_cmpfloat (g_ascii_strtod (got[v], NULL), ==,
                                 g_ascii_strtod (want[v], NULL));
          }
        else
          g_assert_cmpstr (shown_argv[k + 1], ==, args[i + 1]);
      }

  g_autofree char *cli_csv = g_strconcat (prefix, ".csv", NULL);
  g_auto (GStrv) cli_lines = read_lines (cli_csv);
  g_assert_cmpuint (g_strv_length (cli_lines), ==, 1 + n_cells);
  for (guint i = 0; i < n_cells; i++)
    {
      g_auto (GStrv) field = g_strsplit (cli_lines[i + 1], ",", -1);
      g_assert_cmpuint (g_strv_length (field), ==, 9);
      char fraction[G_ASCII_DTOSTR_BUF_SIZE];
      g_ascii_formatd (fraction, sizeof fraction, "%.4g", cells[i].fraction);
      g_test_message ("cell %u: δ %s ρ %s, window %d/%d, CLI %s/%s", i, field[0], field[1],
                      cells[i].result.recovered, cells[i].trials, field[5], field[4]);
      g_assert_cmpint (atoi (field[5]), ==, cells[i].result.recovered);
      g_assert_cmpstr (field[6], ==, fraction);
      g_assert_cmpuint (g_ascii_strtoull (field[2], NULL, 10), ==, cells[i].m);
      g_assert_cmpuint (g_ascii_strtoull (field[3], NULL, 10), ==, cells[i].k);
    }

  /* Exported: the CSV equals the CLI's but for the seconds column (timings);
   * the PNG is the same file. */
  g_autoptr (GError) error = NULL;
  g_autofree char *app_csv = g_build_filename (f->dir, "app.csv", NULL);
  g_assert_true (ss_phase_window_export (phase, SS_PHASE_EXPORT_CSV, app_csv, FALSE, &error));
  g_assert_no_error (error);
  g_auto (GStrv) app_lines = read_lines (app_csv);
  g_assert_cmpuint (g_strv_length (app_lines), ==, g_strv_length (cli_lines));
  g_assert_cmpstr (app_lines[0], ==, cli_lines[0]);
  for (guint i = 1; app_lines[i]; i++)
    {
      char *cut_app = strrchr (app_lines[i], ','), *cut_cli = strrchr (cli_lines[i], ',');
      g_assert_nonnull (cut_app);
      g_assert_nonnull (cut_cli);
      *cut_app = *cut_cli = '\0';   /* drop "seconds" */
      g_assert_cmpstr (app_lines[i], ==, cli_lines[i]);
    }
  g_autofree char *app_png = g_build_filename (f->dir, "app.png", NULL);
  g_autofree char *cli_png = g_strconcat (prefix, ".png", NULL);
  g_assert_true (ss_phase_window_export (phase, SS_PHASE_EXPORT_PNG, app_png, FALSE, &error));
  g_assert_no_error (error);
  g_autoptr (GBytes) app_bytes = read_bytes (app_png), cli_bytes = read_bytes (cli_png);
  g_assert_true (g_bytes_equal (app_bytes, cli_bytes));

  /* Never over an existing file without consent: refused, file unchanged;
   * with it (the save dialog's confirmation), replaced. */
  g_assert_true (g_file_set_contents (app_csv, "mine\n", -1, NULL));
  g_assert_false (ss_phase_window_export (phase, SS_PHASE_EXPORT_CSV, app_csv, FALSE, &error));
  g_assert_nonnull (error);
  g_test_message ("%s", ss_phase_window_get_status (phase));
  g_assert_nonnull (strstr (ss_phase_window_get_status (phase), "Could not export"));
  g_clear_error (&error);
  g_auto (GStrv) kept = read_lines (app_csv);
  g_assert_cmpstr (kept[0], ==, "mine");
  g_assert_true (ss_phase_window_export (phase, SS_PHASE_EXPORT_CSV, app_csv, TRUE, &error));
  g_assert_no_error (error);
  g_auto (GStrv) replaced = read_lines (app_csv);
  g_assert_cmpstr (replaced[0], ==, cli_lines[0]);

  gtk_window_set_default_size (GTK_WINDOW (phase), 980, 640);
  iterate_for (0.3);
  save_screenshot_of (GTK_WINDOW (phase), "screenshot-phase.png");
}

/* Does one of WIDGET's shortcut controllers (its class's bindings among
 * them) run the action NAME on KEYVAL with MODIFIERS? */
static gboolean
has_shortcut (GtkWidget *widget, guint keyval, GdkModifierType modifiers, const char *name)
{
  g_autoptr (GListModel) controllers = gtk_widget_observe_controllers (widget);
  GtkShortcutTrigger *wanted = gtk_keyval_trigger_new (keyval, modifiers);
  gboolean found = FALSE;
  for (guint i = 0; !found && i < g_list_model_get_n_items (controllers); i++)
    {
      g_autoptr (GObject) controller = g_list_model_get_item (controllers, i);
      if (!GTK_IS_SHORTCUT_CONTROLLER (controller))
        continue;
      GListModel *shortcuts = G_LIST_MODEL (controller);
      for (guint k = 0; !found && k < g_list_model_get_n_items (shortcuts); k++)
        {
          g_autoptr (GtkShortcut) shortcut = g_list_model_get_item (shortcuts, k);
          GtkShortcutAction *action = gtk_shortcut_get_action (shortcut);
          found = gtk_shortcut_trigger_equal (gtk_shortcut_get_trigger (shortcut), wanted)
                  && GTK_IS_NAMED_ACTION (action)
                  && g_strcmp0 (gtk_named_action_get_action_name (GTK_NAMED_ACTION (action)),
                                name) == 0;
        }
    }
  g_object_unref (wanted);
  return found;
}

/* Stop during a long sweep: it ends with fewer cells than the grid holds,
 * each of them shown; a new sweep then runs; closing the window during one
 * cancels it without harm. */
static void
test_phase_stop (Fixture *f, gconstpointer data)
{
  if (skip_without_display ())
    return;
  SsPhaseWindow *phase = open_phase_window (f);
  /* 900 cells of 20 problems of length 1024: many minutes of work. */
  SsPhaseSettings s;
  ss_phase_settings_init (&s);
  s.n = 1024;
  s.n_deltas = s.n_rhos = 30;
  s.trials = 20;
  s.seed = f->seed;
  s.backend = SS_BACKEND_CPU;
  ss_phase_window_set_settings (phase, &s);
  gtk_widget_activate_action (GTK_WIDGET (phase), "phase.run", NULL);
  guint n_cells = 0;
  /* The limit only keeps a hung sweep from hanging the suite. */
  gint64 end = g_get_monotonic_time () + 300 * G_USEC_PER_SEC;
  while (ss_phase_window_is_running (phase) && g_get_monotonic_time () < end
         && (ss_phase_window_get_cells (phase, &n_cells), n_cells) < 1)
    {
      g_main_context_iteration (NULL, FALSE);
      g_usleep (1000);
    }
  g_assert_cmpuint (n_cells, >=, 1);
  g_assert_true (ss_phase_window_is_running (phase));
  /* Stop is the window's own action, bound to Escape there. */
  g_assert_true (has_shortcut (GTK_WIDGET (phase), GDK_KEY_Escape, 0, "phase.stop"));
  g_assert_true (has_shortcut (GTK_WIDGET (phase), GDK_KEY_r, GDK_CONTROL_MASK, "phase.run"));
  gtk_widget_activate_action (GTK_WIDGET (phase), "phase.stop", NULL);
  g_assert_true (ss_phase_window_wait_idle (phase, 300));
  const SsCsPhaseCell *cells = ss_phase_window_get_cells (phase, &n_cells);
  guint total = ss_phase_window_get_n_total (phase);
  g_test_message ("%s", ss_phase_window_get_status (phase));
  g_assert_cmpuint (total, ==, 900);
  g_assert_cmpuint (n_cells, <, total);
  g_assert_true (g_str_has_prefix (ss_phase_window_get_status (phase), "Stopped"));
  /* The cells done are the first ones, in order, and the only ones shown. */
  const double *shown = ss_phase_view_get_fractions (ss_phase_window_get_view (phase), NULL, NULL);
  for (guint i = 0; i < total; i++)
    g_assert_true (i < n_cells ? !isnan (shown[i]) && cells[i].index == (int) i
                               : isnan (shown[i]));
  /* A partial diagram still exports. */
  g_autoptr (GError) error = NULL;
  g_autofree char *png = g_build_filename (f->dir, "partial.png", NULL);
  g_assert_true (ss_phase_window_export (phase, SS_PHASE_EXPORT_PNG, png, FALSE, &error));
  g_assert_no_error (error);

  /* It runs again after a stop. */
  s.n = 32;
  s.n_deltas = s.n_rhos = 2;
  s.trials = 2;
  ss_phase_window_set_settings (phase, &s);
  ss_phase_window_run (phase);
  g_assert_true (ss_phase_window_wait_idle (phase, 300));
  ss_phase_window_get_cells (phase, &n_cells);
  g_assert_cmpuint (n_cells, ==, 4);

  /* Closed in the middle of a long sweep: cancelled, nothing left behind. */
  s.n = 1024;
  s.n_deltas = s.n_rhos = 30;
  ss_phase_window_set_settings (phase, &s);
  ss_phase_window_run (phase);
  iterate_for (0.05);
  gtk_window_destroy (GTK_WINDOW (phase));
  iterate_for (0.2);
  g_assert_null (ss_window_get_phase_window (f->window));
}

/* The spin buttons under ROOT, in the order they were added (depth first). */
static void
collect_spin_buttons (GtkWidget *root, GPtrArray *found)
{
  if (GTK_IS_SPIN_BUTTON (root))
    {
      g_ptr_array_add (found, root);
      return;
    }
  for (GtkWidget *child = gtk_widget_get_first_child (root); child != NULL;
       child = gtk_widget_get_next_sibling (child))
    collect_spin_buttons (child, found);
}

/* Runs the window's sweep as Ctrl+R does and waits for its end. */
static void
run_phase_sweep (SsPhaseWindow *phase)
{
  gtk_widget_activate_action (GTK_WIDGET (phase), "phase.run", NULL);
  g_assert_true (ss_phase_window_wait_idle (phase, 300));
  g_test_message ("%s", ss_phase_window_get_status (phase));
  g_assert_true (g_str_has_prefix (ss_phase_window_get_status (phase), "Done"));
}

/* Numbers typed into the five spin buttons and not yet entered (no Enter,
 * no Tab: Ctrl+R straight after typing) are the ones the sweep uses: its
 * grid, signal length and trials, and its seed (the cells equal those of
 * a sweep set to the typed values; the old seed gives other errors). */
static void
test_phase_typed_values (Fixture *f, gconstpointer data)
{
  if (skip_without_display ())
    return;
  SsPhaseWindow *phase = open_phase_window (f);
  SsPhaseSettings s;
  ss_phase_settings_init (&s);
  s.algorithm = SS_CS_NIHT;
  s.n = 32;
  s.n_deltas = s.n_rhos = 2;
  s.trials = 2;
  s.seed = f->seed;
  s.backend = SS_BACKEND_CPU;
  ss_phase_window_set_settings (phase, &s);

  /* n, δ steps, ρ steps, trials, seed: the controls' order. */
  g_autoptr (GPtrArray) spins = g_ptr_array_new ();
  collect_spin_buttons (GTK_WIDGET (phase), spins);
  g_assert_cmpuint (spins->len, ==, 5);
  SsPhaseSettings typed = s;
  typed.n = 48;
  typed.n_deltas = 3;
  typed.n_rhos = 3;
  typed.trials = 3;
  typed.seed = (guint64) f->seed + 7;
  g_autofree char *seed_text = g_strdup_printf ("%" G_GUINT64_FORMAT, typed.seed);
  const char *texts[] = { "48", "3", "3", "3", seed_text };
  for (guint i = 0; i < spins->len; i++)
    gtk_editable_set_text (GTK_EDITABLE (g_ptr_array_index (spins, i)), texts[i]);
  run_phase_sweep (phase);

  guint n_cells = 0;
  const SsCsPhaseCell *cells = ss_phase_window_get_cells (phase, &n_cells);
  g_assert_cmpuint (n_cells, ==, 9);
  g_assert_cmpuint (ss_phase_window_get_n_total (phase), ==, 9);
  g_autofree SsCsPhaseCell *got = g_memdup2 (cells, n_cells * sizeof *cells);
  for (guint i = 0; i < n_cells; i++)
    {
      g_assert_cmpint (got[i].trials, ==, typed.trials);
      g_assert_cmpuint (got[i].m, ==, (gsize) MAX (1, round (got[i].delta * typed.n)));
    }

  /* The same sweep, set rather than typed: the same cells, errors and all. */
  ss_phase_window_set_settings (phase, &typed);
  run_phase_sweep (phase);
  cells = ss_phase_window_get_cells (phase, &n_cells);
  g_assert_cmpuint (n_cells, ==, 9);
  for (guint i = 0; i < n_cells; i++)
    {
      g_assert_cmpuint (cells[i].m, ==, got[i].m);
      g_assert_cmpuint (cells[i].k, ==, got[i].k);
      g_assert_cmpint (cells[i].result.recovered, ==, got[i].result.recovered);
      g_assert_cmpfloat (cells[i].result.median_error, ==, got[i].result.median_error);
      g_assert_cmpfloat (cells[i].result.max_error, ==, got[i].result.max_error);
    }
  /* ... which the old seed does not give: the seed shows in the cells. */
  typed.seed = s.seed;
  ss_phase_window_set_settings (phase, &typed);
  run_phase_sweep (phase);
  cells = ss_phase_window_get_cells (phase, &n_cells);
  gboolean differs = FALSE;
  for (guint i = 0; i < n_cells; i++)
    differs |= cells[i].result.median_error != got[i].result.median_error
               || cells[i].result.max_error != got[i].result.max_error;
  g_assert_true (differs);
}

/* A number half typed into one spin stays as typed while another control
 * changes (the command line's refresh reads without entering it); Run's
 * reading enters it, clamped to the spin's range. */
static void
test_phase_typing_kept (Fixture *f, gconstpointer data)
{
  if (skip_without_display ())
    return;
  SsPhaseWindow *phase = open_phase_window (f);
  g_autoptr (GPtrArray) spins = g_ptr_array_new ();
  collect_spin_buttons (GTK_WIDGET (phase), spins);
  g_assert_cmpuint (spins->len, ==, 5);
  GtkSpinButton *n_spin = g_ptr_array_index (spins, 0), *deltas_spin = g_ptr_array_index (spins, 1);
  gtk_editable_set_text (GTK_EDITABLE (n_spin), "4");   /* on the way to 4096; the least is 16 */
  gtk_spin_button_set_value (deltas_spin, gtk_spin_button_get_value (deltas_spin) + 1);
  g_assert_cmpstr (gtk_editable_get_text (GTK_EDITABLE (n_spin)), ==, "4");
  SsPhaseSettings s;
  ss_phase_window_get_settings (phase, &s);
  g_assert_cmpint (s.n, ==, 16);
}

/* Called by test-ui.c's main, in the suite's order. */
void
test_ui_add_phase_tests (void)
{
  g_test_add ("/ui/cs-solvers-listed", Fixture, NULL, fixture_setup, test_cs_solvers_listed,
              fixture_teardown);
  g_test_add ("/ui/phase-matches-cli", Fixture, NULL, fixture_setup, test_phase_matches_cli,
              fixture_teardown);
  g_test_add ("/ui/phase-stop", Fixture, NULL, fixture_setup, test_phase_stop,
              fixture_teardown);
  g_test_add ("/ui/phase-typed-values", Fixture, NULL, fixture_setup, test_phase_typed_values,
              fixture_teardown);
  g_test_add ("/ui/phase-typing-kept", Fixture, NULL, fixture_setup, test_phase_typing_kept,
              fixture_teardown);
}
