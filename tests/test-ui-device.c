/* test-ui-device.c: the compute choice (Automatic, CPU or one GPU) and where
 * the app's solves run (suite ui; fixtures in test-ui.h). */
#include "test-ui.h"

/* ---- the compute device ---------------------------------------------------- */

static SsDevicePicker *
device_picker (Fixture *f)
{
  return ss_params_panel_get_device_picker (ss_window_get_params_panel (f->window));
}

/* The window lists the devices in a worker: wait for the picker to have them. */
static SsDevicePicker *
wait_for_devices (Fixture *f)
{
  SsDevicePicker *picker = device_picker (f);
  gint64 end = g_get_monotonic_time () + 60 * G_USEC_PER_SEC;
  while (!ss_device_picker_has_devices (picker) && g_get_monotonic_time () < end)
    g_main_context_iteration (NULL, TRUE);
  g_assert_true (ss_device_picker_has_devices (picker));
  return picker;
}

static const char *
row_label (SsDevicePicker *picker, guint row)
{
  GListModel *model = gtk_drop_down_get_model (ss_device_picker_get_drop_down (picker));
  return gtk_string_list_get_string (GTK_STRING_LIST (model), row);
}

static guint
n_rows (SsDevicePicker *picker)
{
  GListModel *model = gtk_drop_down_get_model (ss_device_picker_get_drop_down (picker));
  return g_list_model_get_n_items (model);
}

/* The row for GPU DEVICE, or G_MAXUINT when it is not offered. */
static guint
gpu_row (SsDevicePicker *picker, int device)
{
  g_autofree char *prefix = g_strdup_printf ("GPU %d: ", device);
  for (guint row = 0; row < n_rows (picker); row++)
    if (g_str_has_prefix (row_label (picker, row), prefix))
      return row;
  return G_MAXUINT;
}

/* Chooses ROW as a user would, and reads the choice back from the panel. */
static void
choose_row (Fixture *f, guint row, SsBackendKind *kind, int *device)
{
  gtk_drop_down_set_selected (ss_device_picker_get_drop_down (device_picker (f)), row);
  SsSettings s;
  ss_params_panel_get_settings (ss_window_get_params_panel (f->window), &s);
  *kind = s.backend;
  *device = s.device;
  ss_settings_clear (&s);
}

/* The usable devices of `sharpsky-cli info` ("cuda N: NAME, X free of Y"),
 * as "N NAME"; NULL (said) without the CLI. */
static GPtrArray *
cli_listed_devices (void)
{
  const char *cli = g_getenv ("SHARPSKY_CLI");
  if (cli == NULL || !g_file_test (cli, G_FILE_TEST_IS_EXECUTABLE))
    {
      g_test_message ("sharpsky-cli is not built: the picker is compared with the engine only");
      return NULL;
    }
  g_autofree char *sample = ss_window_find_sample ();
  const char *argv[] = { cli, "info", sample, NULL };
  g_autofree char *out = NULL, *err = NULL;
  int status = 0;
  g_autoptr (GError) error = NULL;
  g_assert_true (g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out,
                               &err, &status, &error));
  g_assert_no_error (error);
  g_assert_true (g_spawn_check_wait_status (status, NULL));
  GPtrArray *found = g_ptr_array_new_with_free_func (g_free);
  g_auto (GStrv) lines = g_strsplit (out, "\n", -1);
  for (guint i = 0; lines[i] != NULL; i++)
    {
      int index = -1, end = 0;
      if (sscanf (lines[i], "cuda %d: %n", &index, &end) == 1 && end > 0
          && !g_str_has_prefix (lines[i] + end, "unusable"))
        {
          const char *comma = strstr (lines[i] + end, ", ");
          g_assert_nonnull (comma);
          g_ptr_array_add (found, g_strdup_printf ("%d %.*s", index,
                                                   (int) (comma - (lines[i] + end)),
                                                   lines[i] + end));
        }
    }
  return found;
}

/* The picker offers Automatic, CPU and exactly the usable devices the
 * engine lists (and `sharpsky-cli info` prints), numbered as they number
 * them; each row is the choice it says; it is reached from the keyboard
 * and its tooltip says what Automatic does. */
static void
test_device_picker_lists (Fixture *f, gconstpointer data)
{
  if (skip_without_display ())
    return;
  SsDevicePicker *picker = wait_for_devices (f);
  g_autoptr (GArray) engine = ss_backend_list_devices ();
  g_autoptr (GPtrArray) expected = g_ptr_array_new_with_free_func (g_free);
  GArray *indices = g_array_new (FALSE, FALSE, sizeof (int));
  for (guint i = 0; i < engine->len; i++)
    {
      const SsDeviceInfo *d = &g_array_index (engine, SsDeviceInfo, i);
      if (d->unusable == NULL)
        {
          g_ptr_array_add (expected, g_strdup_printf ("GPU %d: %s", d->index, d->model));
          g_array_append_val (indices, d->index);
        }
    }
  g_test_message ("engine: %u usable CUDA devices of %u", expected->len, engine->len);
  g_assert_cmpuint (n_rows (picker), ==, 2 + expected->len);
  g_assert_cmpstr (row_label (picker, 0), ==, "Automatic");
  g_assert_cmpstr (row_label (picker, 1), ==, "CPU");
  for (guint i = 0; i < expected->len; i++)
    g_assert_cmpstr (row_label (picker, 2 + i), ==, g_ptr_array_index (expected, i));

  g_autoptr (GPtrArray) cli = cli_listed_devices ();
  if (cli != NULL)
    {
      g_assert_cmpuint (cli->len, ==, expected->len);
      for (guint i = 0; i < cli->len; i++)
        {
          /* "N NAME" from info against "GPU N: MODEL": the same N, NAME begins with MODEL. */
          const char *line = g_ptr_array_index (cli, i);
          const char *label = row_label (picker, 2 + i);
          g_autofree char *number = g_strndup (line, strcspn (line, " "));
          g_autofree char *prefix = g_strdup_printf ("GPU %s: ", number);
          g_assert_true (g_str_has_prefix (label, prefix));
          g_assert_true (g_str_has_prefix (strchr (line, ' ') + 1, label + strlen (prefix)));
        }
    }

  /* Each row is the choice it names, in the panel's settings. */
  SsBackendKind kind;
  int device;
  choose_row (f, 1, &kind, &device);
  g_assert_cmpint (kind, ==, SS_BACKEND_CPU);
  g_assert_cmpint (device, ==, -1);
  for (guint i = 0; i < indices->len; i++)
    {
      choose_row (f, 2 + i, &kind, &device);
      g_assert_cmpint (kind, ==, SS_BACKEND_CUDA);
      g_assert_cmpint (device, ==, g_array_index (indices, int, i));
    }
  choose_row (f, 0, &kind, &device);
  g_assert_cmpint (kind, ==, SS_BACKEND_AUTO);
  g_assert_cmpint (device, ==, -1);

  /* A GPU that is not listed is never shown: Automatic stands instead. */
  SsSettings s;
  cpu_settings (f, &s, SS_SOLVER_CPADMM, 5);
  s.backend = SS_BACKEND_CUDA;
  s.device = (int) engine->len + 7;
  apply_settings (f, &s);
  g_assert_cmpuint (n_rows (picker), ==, 2 + expected->len);
  g_assert_cmpuint (gtk_drop_down_get_selected (ss_device_picker_get_drop_down (picker)), ==, 0);

  /* The keyboard: "_Compute" (Alt+C) labels it and gives the drop-down the focus. */
  GtkDropDown *dropdown = ss_device_picker_get_drop_down (picker);
  GList *labels = gtk_widget_list_mnemonic_labels (GTK_WIDGET (picker));
  g_assert_cmpuint (g_list_length (labels), ==, 1);
  g_assert_cmpstr (gtk_label_get_label (GTK_LABEL (labels->data)), ==, "_Compute");
  g_assert_true (gtk_label_get_use_underline (GTK_LABEL (labels->data)));
  g_list_free (labels);
  gtk_widget_mnemonic_activate (GTK_WIDGET (picker), TRUE);
  iterate_for (0.05);
  GtkWidget *focus = gtk_root_get_focus (GTK_ROOT (f->window));
  g_assert_nonnull (focus);
  g_assert_true (focus == GTK_WIDGET (dropdown)
                 || gtk_widget_is_ancestor (focus, GTK_WIDGET (dropdown)));
  const char *tip = gtk_widget_get_tooltip_text (GTK_WIDGET (dropdown));
  g_assert_nonnull (strstr (tip, "Automatic: GPU 0 when this build has CUDA"));
  g_assert_nonnull (strstr (tip, "runs out of memory"));
  g_assert_nonnull (strstr (tip, "run again on the CPU"));
  g_array_unref (indices);
}

/* Quick settings for a device run: 8 iterations on a 64×64 region. */
static void
device_settings (Fixture *f, SsSettings *s, SsSolverKind kind)
{
  cpu_settings (f, s, kind, 8);
  s->use_roi = TRUE;
  s->roi_width = s->roi_height = 64;
  s->roi_x = 400;
  s->roi_y = 300;
}

/* Runs the panel's settings with the compute choice in ROW; then a
 * comparison of CPADMM and FISTA with the same choice. Checks that the
 * status line, the HISTORY and every row of the comparison say BACKEND, on
 * the device named NAME (NULL: not checked), and HISTORY's "device = N". */
static void
run_on_row (Fixture *f, guint row, const char *backend, const char *name, int device)
{
  SsSettings s;
  device_settings (f, &s, SS_SOLVER_CPADMM);
  apply_settings (f, &s);
  SsBackendKind kind;
  int chosen;
  choose_row (f, row, &kind, &chosen);
  g_assert_cmpint (chosen, ==, device);
  ss_window_run (f->window);
  g_assert_true (ss_window_wait_idle (f->window, 300));
  g_assert_null (ss_window_get_message (f->window));
  const char *status = ss_window_get_status (f->window);
  g_test_message ("%s", status);
  g_assert_true (g_str_has_prefix (status, "Done"));
  g_autofree char *where = name ? g_strdup_printf (" · %s (%s)", backend, name)
                                : g_strdup_printf (" · %s (", backend);
  g_assert_nonnull (strstr (status, where));

  g_autoptr (GError) error = NULL;
  g_autofree char *fits = g_build_filename (f->dir, "device.fits", NULL);
  ss_window_set_view (f->window, SS_VIEW_RECOVERED);
  g_assert_true (ss_window_export_sync (f->window, SS_EXPORT_FITS, fits, NULL, FALSE, 60, &error));
  g_assert_no_error (error);
  g_autoptr (SsImage) back = ss_fits_read (fits, NULL, &error);
  g_assert_no_error (error);
  g_autofree char *ran = g_strdup_printf ("on %s (", backend);
  g_assert_true (has_history (back->header, ran));
  g_autofree char *device_card = g_strdup_printf ("device = %d", device);
  g_assert_true (has_history (back->header, device >= 0 ? device_card : "backend = "));
  if (device < 0)
    g_assert_false (has_history (back->header, "device = "));

  SsSolveParams choices[2];
  ss_solve_params_set_defaults (&choices[0], SS_SOLVER_CPADMM);
  ss_solve_params_set_defaults (&choices[1], SS_SOLVER_FISTA);
  ss_window_compare (f->window, choices, 2);
  g_assert_true (ss_window_wait_idle (f->window, 300));
  SsCompareTable *table = ss_window_get_compare_table (f->window);
  g_assert_cmpuint (ss_compare_table_get_n_entries (table), ==, 2);
  for (guint i = 0; i < 2; i++)
    {
      SsCompareEntry *e = ss_compare_table_get_entry (table, i);
      g_test_message ("%s: %s on %s (%s)", ss_compare_entry_get_solver_name (e),
                      ss_compare_entry_get_status (e), ss_compare_entry_get_backend (e),
                      ss_compare_entry_get_device (e));
      g_assert_cmpstr (ss_compare_entry_get_status (e), ==, "done");
      g_assert_cmpstr (ss_compare_entry_get_backend (e), ==, backend);
      if (name)
        g_assert_cmpstr (ss_compare_entry_get_device (e), ==, name);
      g_autofree char *cell = ss_compare_entry_dup_column_text (e, SS_COMPARE_COLUMN_BACKEND);
      g_assert_cmpstr (cell, ==, backend);
    }

  /* The choice is kept from file to file: a real image, then the sample. */
  g_autoptr (SsImage) image = read_sample ();
  g_autoptr (SsImage) part = ss_image_new (96, 96, 1, &error);
  for (int r = 0; r < 96; r++)
    memcpy (part->data + r * 96, image->data + (gsize) (300 + r) * image->width + 400,
            96 * sizeof (float));
  g_autofree char *in = g_build_filename (f->dir, "part.fits", NULL);
  g_assert_true (ss_fits_write (part, in, FALSE, NULL, &error));
  g_autofree char *sample = ss_window_find_sample ();
  const char *paths[] = { in, sample };
  for (guint i = 0; i < G_N_ELEMENTS (paths); i++)
    {
      ss_window_open_path_sync (f->window, paths[i], 60, NULL);   /* a failed star search is fine */
      SsSettings kept;
      ss_params_panel_get_settings (ss_window_get_params_panel (f->window), &kept);
      g_assert_cmpint (kept.backend, ==, kind);
      g_assert_cmpint (kept.device, ==, device);
      ss_settings_clear (&kept);
    }
}

/* Choosing CPU runs on the CPU, whatever else the machine has. */
static void
test_device_cpu (Fixture *f, gconstpointer data)
{
  if (skip_without_display ())
    return;
  wait_for_devices (f);
  run_on_row (f, 1, "cpu", NULL, -1);
}

/* Choosing GPU 0 runs on it (on a machine with a GPU; skipped without). */
static void
test_device_gpu0 (Fixture *f, gconstpointer data)
{
  if (skip_without_display ())
    return;
  SsDevicePicker *picker = wait_for_devices (f);
  guint row = gpu_row (picker, 0);
  if (row == G_MAXUINT)
    {
      g_test_skip ("no usable CUDA device 0 here: choosing GPU 0 is checked where there is one");
      return;
    }
  g_autoptr (GArray) engine = ss_backend_list_devices ();
  const SsDeviceInfo *d = &g_array_index (engine, SsDeviceInfo, 0);
  run_on_row (f, row, "cuda", d->name, 0);
}

/* A job asking for a GPU that is not there fails with a clear message in
 * the status line (and the banner), and the window stays usable. */
static void
test_device_missing (Fixture *f, gconstpointer data)
{
  if (skip_without_display ())
    return;
  g_autoptr (GArray) engine = ss_backend_list_devices ();
  int missing = (int) engine->len + 7;
  SsSettings s;
  device_settings (f, &s, SS_SOLVER_CPADMM);
  s.backend = SS_BACKEND_CUDA;
  s.device = missing;
  ss_window_run_settings (f->window, &s);
  ss_settings_clear (&s);
  g_assert_true (ss_window_wait_idle (f->window, 120));
  g_assert_false (ss_window_is_running (f->window));
  const char *status = ss_window_get_status (f->window);
  g_test_message ("%s", status);
  g_assert_true (g_str_has_prefix (status, "Failed: "));
  g_assert_nonnull (strstr (status, "CUDA"));
  /* With CUDA built, the message names the device asked for (a CPU-only
   * build says it has no CUDA backend). */
  g_autofree char *number = g_strdup_printf ("%d", missing);
  if (SHARPSKY_HAVE_CUDA)
    g_assert_nonnull (strstr (status, number));
  g_assert_nonnull (ss_window_get_message (f->window));
  g_assert_null (ss_window_get_frame (f->window, SS_VIEW_RECOVERED));

  /* The next run, on the CPU, works. */
  device_settings (f, &s, SS_SOLVER_CPADMM);
  apply_settings (f, &s);
  ss_window_run (f->window);
  g_assert_true (ss_window_wait_idle (f->window, 300));
  g_assert_true (g_str_has_prefix (ss_window_get_status (f->window), "Done"));
}

/* Called by test-ui.c's main, in the suite's order. */
void
test_ui_add_device_tests (void)
{
  g_test_add ("/ui/device/picker-lists", Fixture, NULL, fixture_setup, test_device_picker_lists,
              fixture_teardown);
  g_test_add ("/ui/device/cpu", Fixture, NULL, fixture_setup, test_device_cpu, fixture_teardown);
  g_test_add ("/ui/device/gpu0", Fixture, NULL, fixture_setup, test_device_gpu0,
              fixture_teardown);
  g_test_add ("/ui/device/missing", Fixture, NULL, fixture_setup, test_device_missing,
              fixture_teardown);
}
