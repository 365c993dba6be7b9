/* test-ui.c: the desktop app driven through its window (suite ui).
 *
 * Runs under Xvfb with GSK_RENDERER=cairo (tests/ui/meson.build); without a
 * display every test is skipped, visibly. The window is driven through its
 * test hooks (ss_window_*_sync), not synthesised input events. Each run uses
 * a fresh acquisition seed (printed; SHARPSKY_TEST_SEED replays it).
 *
 * Oracles: the window's measurement equals the engine's ss_simulate of the
 * same acquisition; the MSE the window plots equals the MSE recomputed from
 * the recovered image and the truth; dense Cholesky equals the FFT direct
 * solver on a fully observed region; files read back equal what was shown.
 */
#include <gtk/gtk.h>
#include <glib/gstdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sharpsky.h"
#include "ss-application.h"
#include "ss-config.h"
#include "ss-window.h"

#include <fitsio.h>

static gboolean have_display;
static SsApplication *app;

typedef struct {
  SsWindow *window;
  char *dir;      /* scratch directory for exported files */
  guint32 seed;
} Fixture;

static guint32
test_seed (void)
{
  const char *env = g_getenv ("SHARPSKY_TEST_SEED");
  guint32 seed = env ? (guint32) g_ascii_strtoull (env, NULL, 10) : (guint32) g_test_rand_int ();
  g_test_message ("seed %u", seed);
  return seed;
}

static void
iterate_for (double seconds)
{
  gint64 end = g_get_monotonic_time () + (gint64) (seconds * G_USEC_PER_SEC);
  while (g_get_monotonic_time () < end)
    {
      g_main_context_iteration (NULL, FALSE);
      g_usleep (1000);
    }
}

static void
fixture_setup (Fixture *f, gconstpointer data)
{
  if (!have_display)
    return;
  f->seed = test_seed ();
  f->dir = g_dir_make_tmp ("sharpsky-ui-XXXXXX", NULL);
  g_assert_nonnull (f->dir);
  f->window = ss_window_new (GTK_APPLICATION (app));
  gtk_window_set_default_size (GTK_WINDOW (f->window), 1360, 860);
  gtk_window_present (GTK_WINDOW (f->window));
  g_autofree char *sample = ss_window_find_sample ();
  g_assert_nonnull (sample);
  g_autoptr (GError) error = NULL;
  g_assert_true (ss_window_open_path_sync (f->window, sample, 30, &error));
  g_assert_no_error (error);
  g_assert_true (ss_window_wait_rendered (f->window, 30));
}

/* Removes DIR and everything under it. */
static void
remove_dir (const char *dir)
{
  GDir *d = g_dir_open (dir, 0, NULL);
  const char *name;
  while (d && (name = g_dir_read_name (d)))
    {
      g_autofree char *path = g_build_filename (dir, name, NULL);
      if (g_file_test (path, G_FILE_TEST_IS_DIR) && !g_file_test (path, G_FILE_TEST_IS_SYMLINK))
        remove_dir (path);
      else
        g_remove (path);
    }
  if (d)
    g_dir_close (d);
  g_rmdir (dir);
}

static void
fixture_teardown (Fixture *f, gconstpointer data)
{
  if (!have_display)
    return;
  ss_window_stop (f->window);
  ss_window_wait_idle (f->window, 60);
  gtk_window_destroy (GTK_WINDOW (f->window));
  iterate_for (0.05);
  remove_dir (f->dir);
  g_free (f->dir);
}

static gboolean
skip_without_display (void)
{
  if (!have_display)
    g_test_skip ("no display and no xvfb-run: the GTK tests cannot run");
  return !have_display;
}

/* The backend of the suite's solves: the CPU, unless SHARPSKY_UI_BACKEND names
 * another ("cuda" or "auto"). build-aux/device-ui sets cuda on the GPU machine,
 * so that the same oracles check the app's GPU path there; the comparisons with
 * sharpsky-cli give it the same backend, so both sides run the same code. */
static SsBackendKind
ui_backend (void)
{
  const char *name = g_getenv ("SHARPSKY_UI_BACKEND");
  if (g_strcmp0 (name, "cuda") == 0)
    return SS_BACKEND_CUDA;
  if (g_strcmp0 (name, "auto") == 0)
    return SS_BACKEND_AUTO;
  return SS_BACKEND_CPU;
}

static const char *
ui_backend_option (void)
{
  static const char *const options[] = { [SS_BACKEND_AUTO] = "--backend=auto",
                                         [SS_BACKEND_CPU] = "--backend=cpu",
                                         [SS_BACKEND_CUDA] = "--backend=cuda" };
  return options[ui_backend ()];
}

/* The status line after a solve names the backend and device that ran it:
 * logged, so a run on the GPU machine shows which one the tests used. */
static void
log_solve_status (Fixture *f)
{
  g_test_message ("status: %s", ss_window_get_status (f->window));
}

/* Settings of a quick simulation with this run's seed (on ui_backend ()). */
static void
cpu_settings (const Fixture *f, SsSettings *s, SsSolverKind kind, int iterations)
{
  ss_settings_init (s);
  s->mode = SS_MODE_SIMULATE;
  s->acquisition.psf.kind = SS_PSF_BOX_ROW;
  s->acquisition.psf.size = 5;
  s->acquisition.ratio = 0.5;
  s->acquisition.seed = f->seed;
  s->params.kind = kind;
  s->params.alpha = 1e-3;
  s->params.iterations = iterations;
  s->backend = ui_backend ();
}

static void
apply_settings (Fixture *f, SsSettings *s)
{
  ss_params_panel_set_settings (ss_window_get_params_panel (f->window), s);
  ss_settings_clear (s);
}

/* The solve the CLI comparisons run: sharpsky-cli deblur's defaults for a
 * real image (median sky, mirror edges, x >= 0), CPADMM with alpha 0.002. */
static void
set_cli_deblur (SsSettings *s, int iterations)
{
  s->mode = SS_MODE_DEBLUR;
  s->sky_mode = SS_SKY_MEDIAN;
  s->boundary = SS_BOUNDARY_MIRROR;
  s->params.kind = SS_SOLVER_CPADMM;
  s->params.alpha = 0.002;
  s->auto_params = 0;   /* a given alpha, as the CLI's --alpha=0.002 (not the files' auto) */
  s->params.iterations = iterations;
  s->params.nonneg = TRUE;
  s->backend = ui_backend ();
}

/* ||frame - image|| / ||image||, over the frame's pixels. */
static double
relative_difference (const SsFrame *frame, const SsImage *image)
{
  double num = 0, den = 0;
  for (gsize i = 0; i < ss_frame_n_pixels (frame); i++)
    {
      double d = (double) frame->data[i] - image->data[i];
      num += d * d;
      den += (double) image->data[i] * image->data[i];
    }
  return sqrt (num / den);
}

static SsImage *
read_sample (void)
{
  g_autofree char *path = ss_window_find_sample ();
  SsFitsReadOptions options = SS_FITS_READ_OPTIONS_DEFAULT;
  g_autoptr (GError) error = NULL;
  SsImage *image = ss_fits_read (path, &options, &error);
  g_assert_no_error (error);
  return image;
}

/* ---- screenshots ---------------------------------------------------------- */

static char *
artifact_path (const char *name)
{
  const char *dir = g_getenv ("MESON_BUILD_ROOT");
  if (dir == NULL)
    dir = g_getenv ("G_TEST_BUILDDIR");
  if (dir == NULL)
    dir = ".";
  return g_build_filename (dir, name, NULL);
}

/* Renders a window as it is on screen (its own renderer) to a PNG. */
static void
save_screenshot_of (GtkWindow *window, const char *name)
{
  GtkWidget *widget = GTK_WIDGET (window);
  int width = gtk_widget_get_width (widget), height = gtk_widget_get_height (widget);
  g_assert_cmpint (width, >, 0);
  g_autoptr (GdkPaintable) paintable = gtk_widget_paintable_new (widget);
  GtkSnapshot *snapshot = gtk_snapshot_new ();
  gdk_paintable_snapshot (paintable, snapshot, width, height);
  GskRenderNode *node = gtk_snapshot_free_to_node (snapshot);
  g_assert_nonnull (node);
  GskRenderer *renderer = gtk_native_get_renderer (GTK_NATIVE (window));
  g_autoptr (GdkTexture) texture = gsk_renderer_render_texture (
      renderer, node, &GRAPHENE_RECT_INIT (0, 0, width, height));
  gsk_render_node_unref (node);
  g_autofree char *path = artifact_path (name);
  g_assert_true (gdk_texture_save_to_png (texture, path));
  g_test_message ("screenshot: %s (%d×%d)", path, width, height);
}

static void
save_screenshot (SsWindow *window, const char *name)
{
  save_screenshot_of (GTK_WINDOW (window), name);
}

/* ---- tests ---------------------------------------------------------------- */

static void
test_open_sample (Fixture *f, gconstpointer data)
{
  if (skip_without_display ())
    return;
  g_autoptr (SsImage) image = read_sample ();
  SsFrame *shown = ss_window_get_frame (f->window, SS_VIEW_ORIGINAL);
  g_assert_nonnull (shown);
  g_assert_cmpint (shown->width, ==, image->width);
  g_assert_cmpint (shown->height, ==, image->height);
  /* The window shows the file's pixels exactly. */
  g_assert_cmpmem (shown->data, ss_frame_n_pixels (shown) * sizeof (float), image->data,
                   ss_image_plane_size (image) * sizeof (float));
  g_assert_null (ss_window_get_message (f->window));
  g_assert_nonnull (strstr (ss_window_get_status (f->window), "1000×872"));
  g_assert_cmpuint (ss_image_view_get_render_count (ss_window_get_image_view (f->window)), >, 0);
}

/* Scaled value of an input-unit pixel, as the job maps it. */
static double
to_scaled (const SsScaling *s, float v)
{
  return ((double) v - s->sky) / s->scale;
}

static void
test_run_cpu (Fixture *f, gconstpointer data)
{
  if (skip_without_display ())
    return;
  /* Median sky: the scaling between input and engine units is not the
   * identity, so the mapping both ways is checked too. */
  SsSettings s;
  cpu_settings (f, &s, SS_SOLVER_CPADMM, 20);
  s.sky_mode = SS_SKY_MEDIAN;
  apply_settings (f, &s);

  ss_window_run (f->window);
  g_assert_true (ss_window_is_running (f->window));
  /* The first live preview, to compare with the end. */
  gint64 end = g_get_monotonic_time () + 120 * G_USEC_PER_SEC;
  while (ss_window_get_preview_count (f->window) == 0 && ss_window_is_running (f->window)
         && g_get_monotonic_time () < end)
    g_main_context_iteration (NULL, TRUE);
  SsFrame *first = ss_window_get_frame (f->window, SS_VIEW_RECOVERED);
  g_assert_nonnull (first);
  g_autoptr (SsFrame) first_preview = ss_frame_ref (first);
  g_assert_true (ss_window_wait_idle (f->window, 300));
  g_assert_null (ss_window_get_message (f->window));
  log_solve_status (f);

  /* The preview changed during the run; the last one (the final report's)
   * is the final estimate box-averaged to the preview's size. */
  SsFrame *recovered = ss_window_get_frame (f->window, SS_VIEW_RECOVERED);
  g_assert_nonnull (recovered);
  g_assert_cmpint (recovered->width, ==, 1000);
  SsFrame *last_preview = ss_window_get_last_preview (f->window);
  g_assert_nonnull (last_preview);
  g_assert_cmpuint (ss_window_get_preview_count (f->window), >=, 2);
  g_assert_cmpint (last_preview->width, ==, first_preview->width);
  g_assert_false (ss_frame_equal_pixels (first_preview, last_preview));
  g_autofree float *reduced = g_new (float, ss_frame_n_pixels (last_preview));
  ss_preview_reduce (recovered->data, recovered->width, recovered->height, reduced,
                     last_preview->width, last_preview->height);
  double preview_worst = 0;
  for (gsize i = 0; i < ss_frame_n_pixels (last_preview); i++)
    preview_worst = MAX (preview_worst, fabs (reduced[i] - last_preview->data[i]));
  g_test_message ("final preview vs reduced estimate: worst %.3g", preview_worst);
  g_assert_cmpfloat (preview_worst, <, 1e-5);

  /* The plot grew to iteration 20 and the MSE went down. */
  SsPlot *plot = ss_window_get_plot (f->window);
  guint n = ss_plot_get_n_points (plot, 0);
  g_assert_cmpuint (n, >=, 2);
  double x0, y0, x1, y1;
  g_assert_true (ss_plot_get_point (plot, 0, 0, &x0, &y0));
  g_assert_true (ss_plot_get_point (plot, 0, n - 1, &x1, &y1));
  g_assert_cmpfloat (x1, ==, 20);
  g_assert_cmpfloat (y1, <, y0);

  /* Oracle 1: the measurement is the engine's simulation of the same
   * acquisition on the same scaled truth (how sharpsky-cli builds it). */
  g_autoptr (SsImage) image = read_sample ();
  gsize npix = ss_image_plane_size (image);
  SsScaling scaling;
  g_autoptr (GError) error = NULL;
  g_assert_true (ss_scaling_estimate (image->data, npix, SS_SKY_MEDIAN, 0, &scaling, &error));
  g_test_message ("scaling: sky %.6g, scale %.6g", scaling.sky, scaling.scale);
  g_assert_cmpfloat (scaling.sky, >, 0);
  g_autofree float *truth = g_new (float, npix);
  ss_scaling_apply (&scaling, image->data, truth, npix, TRUE);
  SsSettings again;
  cpu_settings (f, &again, SS_SOLVER_CPADMM, 20);
  g_autoptr (SsOperator) op = ss_operator_new (&again.acquisition, image->width, image->height,
                                               &error);
  g_assert_no_error (error);
  g_autofree float *y = ss_simulate (op, &again.acquisition, truth, &error);
  g_assert_no_error (error);
  SsFrame *measured = ss_window_get_frame (f->window, SS_VIEW_MEASURED);
  g_assert_nonnull (measured);
  double worst = 0;
  for (gsize i = 0; i < npix; i++)
    if (op->mask == NULL || op->mask[i])
      worst = MAX (worst, fabs (to_scaled (&scaling, measured->data[i]) - y[i]));
    else
      g_assert_true (isnan (measured->data[i]));
  g_assert_cmpfloat (worst, <, 1e-5);

  /* Oracle 2: the plotted final MSE is the MSE of the shown estimate. */
  double sum = 0;
  for (gsize i = 0; i < npix; i++)
    {
      double d = to_scaled (&scaling, recovered->data[i]) - truth[i];
      sum += d * d;
    }
  double mse = sum / (double) npix;
  g_test_message ("final MSE plotted %.6g, recomputed %.6g", y1, mse);
  g_assert_cmpfloat (fabs (mse - y1), <=, 1e-3 * y1 + 1e-7);
  ss_settings_clear (&again);

  /* Error view: |recovered - truth| in input units. */
  SsFrame *err = ss_window_get_frame (f->window, SS_VIEW_ERROR);
  g_assert_nonnull (err);
  gsize probe = npix / 2 + 17;
  double expect = fabs (to_scaled (&scaling, recovered->data[probe]) - truth[probe])
                  * scaling.scale;
  g_assert_cmpfloat (fabs (err->data[probe] - expect), <=, 1e-4 * scaling.scale);
  g_assert_nonnull (strstr (ss_window_get_status (f->window), "Done"));

  /* A split view of the result, then the screenshot. */
  ss_window_set_view (f->window, SS_VIEW_RECOVERED);
  g_action_group_activate_action (G_ACTION_GROUP (f->window), "split", NULL);
  g_assert_true (ss_window_wait_rendered (f->window, 30));
  iterate_for (0.3);
  save_screenshot (f->window, "screenshot-run.png");
}

static gboolean
has_history (const SsHeader *header, const char *text)
{
  for (guint i = 0; header->history && i < header->history->len; i++)
    if (strstr (g_ptr_array_index (header->history, i), text))
      return TRUE;
  for (guint i = 0; header->cards && i < header->cards->len; i++)
    {
      const char *card = g_ptr_array_index (header->cards, i);
      if (g_str_has_prefix (card, "HISTORY") && strstr (card, text))
        return TRUE;
    }
  return FALSE;
}

static void
test_export (Fixture *f, gconstpointer data)
{
  if (skip_without_display ())
    return;
  SsSettings s;
  cpu_settings (f, &s, SS_SOLVER_FISTA, 5);
  apply_settings (f, &s);
  ss_window_run (f->window);
  g_assert_true (ss_window_wait_idle (f->window, 300));
  ss_window_set_view (f->window, SS_VIEW_RECOVERED);
  SsFrame *recovered = ss_window_get_frame (f->window, SS_VIEW_RECOVERED);
  g_assert_nonnull (recovered);
  g_autoptr (GError) error = NULL;

  /* FITS: bit-exact pixels, the header kept, HISTORY of the parameters. */
  g_autofree char *fits = g_build_filename (f->dir, "out.fits", NULL);
  g_assert_true (ss_window_export_sync (f->window, SS_EXPORT_FITS, fits, NULL, FALSE, 60, &error));
  g_assert_no_error (error);
  SsFitsReadOptions options = SS_FITS_READ_OPTIONS_DEFAULT;
  g_autoptr (SsImage) back = ss_fits_read (fits, &options, &error);
  g_assert_no_error (error);
  g_assert_cmpint (back->width, ==, recovered->width);
  g_assert_cmpint (back->height, ==, recovered->height);
  g_assert_cmpmem (back->data, ss_image_plane_size (back) * sizeof (float), recovered->data,
                   ss_frame_n_pixels (recovered) * sizeof (float));
  g_autofree char *object = ss_header_get_string (back->header, "OBJECT");
  g_assert_cmpstr (object, ==, "Hubble Deep Field (luminance)");
  g_assert_true (has_history (back->header, "solver = fista"));
  g_assert_true (has_history (back->header, "alpha = "));
  g_assert_true (has_history (back->header, "psf = box:5"));
  g_autofree char *seed_text = g_strdup_printf ("seed = %u", f->seed);
  g_assert_true (has_history (back->header, seed_text));

  /* Never over an existing file without consent: refused, file unchanged. */
  g_autofree char *before = NULL;
  gsize before_len = 0;
  g_assert_true (g_file_get_contents (fits, &before, &before_len, NULL));
  g_assert_false (ss_window_export_sync (f->window, SS_EXPORT_FITS, fits, NULL, FALSE, 60, &error));
  g_assert_nonnull (error);
  g_clear_error (&error);
  g_assert_nonnull (ss_window_get_message (f->window));
  g_autofree char *after = NULL;
  gsize after_len = 0;
  g_assert_true (g_file_get_contents (fits, &after, &after_len, NULL));
  g_assert_cmpmem (before, before_len, after, after_len);

  /* PNG, 16-bit linear: (x - min) / (max - min) within quantisation. */
  g_autofree char *png = g_build_filename (f->dir, "out.png", NULL);
  SsExportOptions png_options = { 16, FALSE };
  g_assert_true (ss_window_export_sync (f->window, SS_EXPORT_PNG, png, &png_options, FALSE, 60,
                                        &error));
  g_assert_no_error (error);
  g_autoptr (SsImage) png_back = ss_png_read (png, &error);
  g_assert_no_error (error);
  g_assert_cmpint (png_back->width, ==, recovered->width);
  g_assert_cmpint (png_back->height, ==, recovered->height);
  gsize n = ss_frame_n_pixels (recovered);
  float lo = INFINITY, hi = -INFINITY;
  for (gsize i = 0; i < n; i++)
    {
      lo = MIN (lo, recovered->data[i]);
      hi = MAX (hi, recovered->data[i]);
    }
  double worst = 0;
  for (gsize i = 0; i < n; i++)
    worst = MAX (worst, fabs (png_back->data[i] - (recovered->data[i] - lo) / (hi - lo)));
  g_test_message ("PNG 16-bit round trip: worst %.3g", worst);
  g_assert_cmpfloat (worst, <=, 1.5 / 65535.0);

  /* PNG as displayed, 8-bit: readable, right size. */
  g_autofree char *png8 = g_build_filename (f->dir, "shown.png", NULL);
  SsExportOptions shown_options = { 8, TRUE };
  g_assert_true (ss_window_export_sync (f->window, SS_EXPORT_PNG, png8, &shown_options, FALSE, 60,
                                        &error));
  g_autoptr (SsImage) png8_back = ss_png_read (png8, &error);
  g_assert_no_error (error);
  g_assert_cmpint (png8_back->width, ==, recovered->width);

  /* PNG as displayed with a colour map: RGB, each pixel the colour map of
   * its stretched value (the screen's own mapping). */
  SsImageView *view = ss_window_get_image_view (f->window);
  SsDisplay display = { SS_STRETCH_SQRT, SS_LIMITS_99, SS_COLORMAP_VIRIDIS };
  ss_image_view_set_display (view, &display);
  g_autofree char *colour = g_build_filename (f->dir, "colour.png", NULL);
  g_assert_true (ss_window_export_sync (f->window, SS_EXPORT_PNG, colour, &shown_options, FALSE,
                                        60, &error));
  g_assert_no_error (error);
  g_autoptr (SsImage) colour_back = ss_png_read (colour, &error);
  g_assert_no_error (error);
  g_assert_cmpint (colour_back->planes, ==, 3);
  g_autofree float *norm = ss_render_normalise (recovered, &display, NULL, NULL);
  double colour_worst = 0;
  for (gsize i = 0; i < n; i++)
    {
      guint8 rgb[3];
      ss_colormap_rgb (SS_COLORMAP_VIRIDIS, norm[i], rgb);
      for (int c = 0; c < 3; c++)
        colour_worst = MAX (colour_worst, fabs (colour_back->data[c * n + i] - rgb[c] / 255.0));
    }
  g_test_message ("colour PNG round trip: worst %.3g", colour_worst);
  g_assert_cmpfloat (colour_worst, <=, 0.5 / 255.0);

  /* CSV: a header line and one line per plotted point. */
  g_autofree char *csv = g_build_filename (f->dir, "curve.csv", NULL);
  g_assert_true (ss_window_export_sync (f->window, SS_EXPORT_CSV, csv, NULL, FALSE, 60, &error));
  g_autofree char *text = NULL;
  g_assert_true (g_file_get_contents (csv, &text, NULL, NULL));
  g_auto (GStrv) lines = g_strsplit (g_strchomp (text), "\n", -1);
  g_assert_cmpuint (g_strv_length (lines), ==,
                    1 + ss_plot_get_n_points (ss_window_get_plot (f->window), 0));
  g_assert_true (g_str_has_prefix (lines[0], "solver,iteration,"));
  g_assert_true (g_str_has_prefix (lines[1], "fista,"));
}

static double
thread_cpu_seconds (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Wall-clock bounds hold on an idle machine, not on a busy one (a 50 ms
 * bound on the longest main-loop iteration failed under load): the ui suite
 * checks what does not depend on load (the main thread's own CPU time,
 * counts), and the benchmark `meson test --benchmark test-ui-responsiveness`
 * (SHARPSKY_UI_BENCH=1) checks the wall-clock bounds too. */
static gboolean
checking_wall_clock (void)
{
  return g_getenv ("SHARPSKY_UI_BENCH") != NULL;
}

static void
test_stop (Fixture *f, gconstpointer data)
{
  if (skip_without_display ())
    return;
  SsSettings s;
  cpu_settings (f, &s, SS_SOLVER_CPADMM, 100000);
  apply_settings (f, &s);
  ss_window_run (f->window);

  /* Main-loop stalls while it runs: a 2 ms poll notes the longest main-loop
   * iteration, in wall time and in the main thread's own CPU time (the
   * work the window does; the wall time also counts waiting for a core,
   * which on a two-core machine running the solver can be long). */
  gint64 end = g_get_monotonic_time () + 120 * G_USEC_PER_SEC;
  while (ss_window_get_iteration (f->window) < 3 && g_get_monotonic_time () < end)
    g_main_context_iteration (NULL, TRUE);
  g_assert_cmpint (ss_window_get_iteration (f->window), >=, 3);
  gint64 last = g_get_monotonic_time (), worst_gap = 0;
  double last_cpu = thread_cpu_seconds (), worst_cpu = 0;
  gint64 watch_end = last + 3 * G_USEC_PER_SEC;
  /* And how often the preview changes. */
  guint previews = ss_window_get_preview_count (f->window), first_previews = previews;
  gint64 last_preview = last, worst_preview_gap = 0, shortest_preview_gap = G_MAXINT64;
  int first_iteration = ss_window_get_iteration (f->window);
  while (g_get_monotonic_time () < watch_end)
    {
      g_main_context_iteration (NULL, FALSE);
      gint64 now = g_get_monotonic_time ();
      double cpu = thread_cpu_seconds ();
      worst_gap = MAX (worst_gap, now - last);
      worst_cpu = MAX (worst_cpu, cpu - last_cpu);
      last = now;
      last_cpu = cpu;
      if (ss_window_get_preview_count (f->window) != previews)
        {
          if (previews != first_previews)
            shortest_preview_gap = MIN (shortest_preview_gap, now - last_preview);
          previews = ss_window_get_preview_count (f->window);
          worst_preview_gap = MAX (worst_preview_gap, now - last_preview);
          last_preview = now;
        }
      g_usleep (2000);
    }
  g_test_message ("longest main-loop iteration during a 1 Mpx CPU solve: %.1f ms wall, "
                  "%.1f ms of main-thread CPU", worst_gap / 1000.0, worst_cpu * 1000.0);
  double per_iteration = 3.0 / MAX (1, ss_window_get_iteration (f->window) - first_iteration);
  g_test_message ("previews: %u in 3 s, intervals %.0f to %.0f ms; %.0f ms per iteration",
                  previews - first_previews, shortest_preview_gap / 1000.0,
                  worst_preview_gap / 1000.0, per_iteration * 1000.0);
  /* The window's own work per main-loop iteration, whatever the load. */
  g_assert_cmpfloat (worst_cpu, <, 0.050);
  g_assert_cmpuint (ss_window_get_preview_count (f->window), >=, 2);
  /* At most 10 previews a second (coalesced): a busy machine only lowers
   * the count seen in the 3 s watched. */
  g_assert_cmpuint (previews - first_previews, <=, 3 * 10 + 1);
  if (checking_wall_clock ())
    {
      /* One preview with every report when the solver is slower than 10 a
       * second. A report that lands just inside the coalescing window is
       * skipped, so the longest wait is two iterations (measured 215 ms at
       * 100 ms an iteration on a loaded machine). */
      g_assert_cmpint (shortest_preview_gap, >=, 80 * 1000);
      g_assert_cmpfloat (worst_preview_gap / 1e6, <=, MAX (0.25, 2.5 * per_iteration));
      g_assert_cmpint (worst_gap, <, 50 * 1000);
    }

  int at_stop = ss_window_get_iteration (f->window);
  gint64 t0 = g_get_monotonic_time ();
  g_action_group_activate_action (G_ACTION_GROUP (f->window), "stop", NULL);
  /* Poll gently: a busy loop here would take the CPU from the solver. The
   * limit only keeps a hung solver from hanging the suite. */
  while (ss_window_is_running (f->window) && g_get_monotonic_time () - t0 < 120 * G_USEC_PER_SEC)
    {
      g_main_context_iteration (NULL, FALSE);
      g_usleep (1000);
    }
  double took = (g_get_monotonic_time () - t0) / 1e6;
  g_test_message ("stop took %.3f s at iteration %d", took, at_stop);
  g_assert_false (ss_window_is_running (f->window));
  if (checking_wall_clock ())
    g_assert_cmpfloat (took, <, 0.5);
  g_assert_nonnull (strstr (ss_window_get_status (f->window), "Stopped"));
  /* The partial estimate is kept. */
  g_assert_nonnull (ss_window_get_frame (f->window, SS_VIEW_RECOVERED));
  g_assert_null (ss_window_get_message (f->window));
}

/* ---- benchmark: the first preview of a camera frame ----------------------- */

/* Issue 11's frame (what `sharpsky-cli bench --whole` deblurs: 26 Mpx, uint16)
 * and its target: the first preview at most 2 s after Run. */
#define CAMERA_WIDTH 6248
#define CAMERA_HEIGHT 4176
#define FIRST_PREVIEW_TARGET 2.0
/* Only keeps a hung solve from hanging the benchmark (a 2-core CPU is slow). */
#define BENCH_LIMIT 900.0

/* The synthetic frame bench --whole writes (ss_synth_frame, seed 1), as a
 * 16-bit FITS file in DIR. */
static char *
write_camera_frame (const char *dir)
{
  SsSynthParams synth;
  ss_synth_params_init (&synth, CAMERA_WIDTH, CAMERA_HEIGHT, 1);
  g_autoptr (GError) error = NULL;
  g_autoptr (SsImage) frame = ss_synth_frame (&synth, &error);
  g_assert_no_error (error);
  frame->header = ss_header_new ();
  ss_header_set_string (frame->header, "OBJECT", "synthetic frame", "test-ui /ui/first-preview");
  char *path = g_build_filename (dir, "camera.fits", NULL);
  g_assert_true (ss_fits_write_uint16 (frame, path, TRUE, NULL, &error));
  g_assert_no_error (error);
  return path;
}

static gboolean
camera_frame_shown (SsWindow *window)
{
  SsFrame *frame = ss_window_get_frame (window, SS_VIEW_ORIGINAL);
  return frame != NULL && frame->width == CAMERA_WIDTH
         && !ss_image_view_is_rendering (ss_window_get_image_view (window));
}

/* Notes when a condition first holds while another function iterates the main
 * loop (ss_window_open_path_sync does): a source polls it every millisecond. */
typedef struct {
  SsWindow *window;
  gboolean (*holds) (SsWindow *);
  gint64 at;   /* 0 until it held */
} Watch;

static gboolean
watch_poll (gpointer data)
{
  Watch *watch = data;
  if (watch->holds (watch->window))
    watch->at = g_get_monotonic_time ();
  return watch->at == 0 ? G_SOURCE_CONTINUE : G_SOURCE_REMOVE;
}

static double
seconds_since (gint64 t0)
{
  return (g_get_monotonic_time () - t0) / 1e6;
}

/* Opens PATH as a user does (a real image: deblur mode, the PSF measured on
 * its stars); the seconds until its pixels are drawn and until it is ready to
 * Run (the star search over). */
static void
bench_open (SsWindow *window, const char *path, double *shown, double *ready)
{
  Watch watch = { window, camera_frame_shown, 0 };
  guint source = g_timeout_add (1, watch_poll, &watch);
  gint64 t0 = g_get_monotonic_time ();
  g_autoptr (GError) error = NULL;
  g_assert_true (ss_window_open_path_sync (window, path, BENCH_LIMIT, &error));
  g_assert_no_error (error);
  *ready = seconds_since (t0);
  if (watch.at == 0)
    {
      /* Drawn after the search ended: wait for it here. */
      g_source_remove (source);
      g_assert_true (ss_window_wait_rendered (window, BENCH_LIMIT));
      watch.at = g_get_monotonic_time ();
    }
  *shown = (watch.at - t0) / 1e6;
}

static gboolean
preview_or_ended (SsWindow *window)
{
  return ss_window_get_preview_count (window) > 0 || !ss_window_is_running (window);
}

static gboolean
view_drawn (SsWindow *window)
{
  return !ss_image_view_is_rendering (ss_window_get_image_view (window));
}

/* Iterates the main loop until DONE holds (or BENCH_LIMIT); seconds since T0. */
static double
seconds_until (SsWindow *window, gboolean (*done) (SsWindow *), gint64 t0)
{
  gint64 end = t0 + (gint64) (BENCH_LIMIT * G_USEC_PER_SEC);
  while (!done (window) && g_get_monotonic_time () < end)
    {
      g_main_context_iteration (NULL, FALSE);
      g_usleep (1000);
    }
  g_assert_true (done (window));
  return seconds_since (t0);
}

/* Presses Run and measures until the first preview has arrived and is drawn;
 * then Stop (the rest of the solve is not this benchmark's). */
static void
bench_run (SsWindow *window, const char *which)
{
  gint64 t0 = g_get_monotonic_time ();
  g_action_group_activate_action (G_ACTION_GROUP (window), "run", NULL);
  double arrived = seconds_until (window, preview_or_ended, t0);
  if (ss_window_get_preview_count (window) == 0)
    g_test_message ("bench: the run ended without a preview: %s; %s",
                    ss_window_get_status (window),
                    ss_window_get_message (window) ? ss_window_get_message (window) : "");
  g_assert_cmpuint (ss_window_get_preview_count (window), >, 0);
  double drawn = seconds_until (window, view_drawn, t0);
  g_test_message ("bench: %s Run -> first preview %.3f s (drawn %.3f s); target %.1f s; "
                  "ratio %.2f", which, arrived, drawn, FIRST_PREVIEW_TARGET,
                  drawn / FIRST_PREVIEW_TARGET);
  g_test_message ("bench: status then: %s", ss_window_get_status (window));
  g_action_group_activate_action (G_ACTION_GROUP (window), "stop", NULL);
  g_assert_true (ss_window_wait_idle (window, BENCH_LIMIT));
}

/* Issue 11's "first preview <= 2 s after Run" on a 26 Mpx frame, opened and run
 * as it opens (the real-image defaults, the backend the panel picks: CUDA
 * where there is a GPU). Times are printed, never asserted: a benchmark
 * (`meson test --benchmark test-ui-first-preview`), skipped in the suite. */
static void
test_first_preview (Fixture *f, gconstpointer data)
{
  if (skip_without_display ())
    return;
  if (!checking_wall_clock ())
    {
      g_test_skip ("a benchmark: meson test --benchmark test-ui-first-preview");
      return;
    }
  gint64 t0 = g_get_monotonic_time ();
  g_autofree char *path = write_camera_frame (f->dir);
  g_test_message ("bench: %d×%d uint16 frame written in %.2f s", CAMERA_WIDTH, CAMERA_HEIGHT,
                  seconds_since (t0));
  double shown, ready;
  bench_open (f->window, path, &shown, &ready);
  g_test_message ("bench: open -> image shown %.3f s; -> stars measured, ready to Run %.3f s",
                  shown, ready);
  g_test_message ("bench: opened with: %s", ss_window_get_status (f->window));
  /* The first Run pays for the device's start (context, FFT plans); the
   * second, on the same problem, is what each later Run costs. */
  bench_run (f->window, "first");
  bench_run (f->window, "second");
}

static void
test_corrupt_file (Fixture *f, gconstpointer data)
{
  if (skip_without_display ())
    return;
  const char *before = ss_window_get_path (f->window);
  g_autofree char *kept = g_strdup (before);
  g_autoptr (GRand) rng = g_rand_new_with_seed (f->seed);

  /* A FITS signature followed by garbage, and a real FITS cut short. */
  g_autofree char *garbage = g_build_filename (f->dir, "garbage.fits", NULL);
  GString *bytes = g_string_new ("SIMPLE  =                    T");
  for (int i = 0; i < 5000; i++)
    g_string_append_c (bytes, (char) g_rand_int_range (rng, 1, 256));
  g_assert_true (g_file_set_contents (garbage, bytes->str, (gssize) bytes->len, NULL));
  g_string_free (bytes, TRUE);

  g_autofree char *sample = ss_window_find_sample ();
  g_autofree char *content = NULL;
  gsize length = 0;
  g_assert_true (g_file_get_contents (sample, &content, &length, NULL));
  g_autofree char *truncated = g_build_filename (f->dir, "truncated.fits", NULL);
  gsize cut = 2880 + (gsize) g_rand_int_range (rng, 1, (gint32) (length / 2));
  g_assert_true (g_file_set_contents (truncated, content, (gssize) cut, NULL));

  const char *files[] = { garbage, truncated };
  for (guint i = 0; i < G_N_ELEMENTS (files); i++)
    {
      g_autoptr (GError) error = NULL;
      g_assert_false (ss_window_open_path_sync (f->window, files[i], 30, &error));
      g_assert_nonnull (error);
      g_test_message ("%s: %s", files[i], error->message);
      const char *message = ss_window_get_message (f->window);
      g_assert_nonnull (message);
      g_assert_nonnull (strstr (message, "Could not open"));
      /* The window keeps the image it had. */
      g_assert_cmpstr (ss_window_get_path (f->window), ==, kept);
      g_assert_nonnull (ss_window_get_frame (f->window, SS_VIEW_ORIGINAL));
    }
  g_assert_true (ss_window_wait_rendered (f->window, 30));
  iterate_for (0.3);
  save_screenshot (f->window, "screenshot-error.png");
}

static void
test_dense_too_large (Fixture *f, gconstpointer data)
{
  if (skip_without_display ())
    return;
  SsSettings s;
  cpu_settings (f, &s, SS_SOLVER_DIRECT, 1);
  s.acquisition.ratio = 1.0;
  apply_settings (f, &s);
  const char *hint = ss_params_panel_get_dense_hint (ss_window_get_params_panel (f->window));
  g_assert_nonnull (strstr (hint, "too large"));
  ss_window_run (f->window);
  g_assert_true (ss_window_wait_idle (f->window, 120));
  const char *message = ss_window_get_message (f->window);
  g_assert_nonnull (message);
  g_test_message ("%s", message);
  g_assert_nonnull (strstr (message, "region"));
}

/* Relative L2 difference of two frames. */
static double
frame_rel_diff (const SsFrame *a, const SsFrame *b)
{
  double num = 0, den = 0;
  for (gsize i = 0; i < ss_frame_n_pixels (a); i++)
    {
      double d = (double) a->data[i] - b->data[i];
      num += d * d;
      den += (double) b->data[i] * b->data[i];
    }
  return sqrt (num / MAX (den, 1e-30));
}

static void
test_compare (Fixture *f, gconstpointer data)
{
  if (skip_without_display ())
    return;
  /* A fully observed region (ratio 1, no sensing), where the dense
   * Tikhonov solve and the Fourier one are the same system. */
  SsSettings s;
  cpu_settings (f, &s, SS_SOLVER_CPADMM, 50);
  s.acquisition.ratio = 1.0;
  s.params.alpha = 1e-2;
  GRand *rng = g_rand_new_with_seed (f->seed);
  s.use_roi = TRUE;
  s.roi_width = s.roi_height = 48;
  s.roi_x = g_rand_int_range (rng, 0, 1000 - 48);
  s.roi_y = g_rand_int_range (rng, 0, 872 - 48);
  g_rand_free (rng);
  apply_settings (f, &s);

  SsSolverKind kinds[] = { SS_SOLVER_CPADMM, SS_SOLVER_DIRECT_FFT, SS_SOLVER_DIRECT };
  SsSolveParams choices[G_N_ELEMENTS (kinds)];
  for (guint i = 0; i < G_N_ELEMENTS (kinds); i++)
    ss_solve_params_set_defaults (&choices[i], kinds[i]);   /* direct: the Cholesky solve */
  ss_window_compare (f->window, choices, G_N_ELEMENTS (kinds));
  g_assert_true (ss_window_wait_idle (f->window, 300));
  g_assert_null (ss_window_get_message (f->window));

  SsCompareTable *table = ss_window_get_compare_table (f->window);
  g_assert_cmpuint (ss_compare_table_get_n_entries (table), ==, 3);
  g_assert_cmpuint (ss_plot_get_n_series (ss_window_get_plot (f->window)), ==, 3);
  for (guint i = 0; i < 3; i++)
    {
      SsCompareEntry *e = ss_compare_table_get_entry (table, i);
      g_test_message ("%s: %s, %d iterations, %.3f s, MSE %.4g",
                      ss_compare_entry_get_solver_name (e), ss_compare_entry_get_status (e),
                      ss_compare_entry_get_iterations (e), ss_compare_entry_get_seconds (e),
                      ss_compare_entry_get_mse (e));
      g_assert_cmpstr (ss_compare_entry_get_status (e), ==, "done");
      g_assert_nonnull (ss_compare_entry_get_recovered (e));
      g_assert_cmpint (ss_compare_entry_get_recovered (e)->width, ==, 48);
      g_assert_true (isfinite (ss_compare_entry_get_mse (e)));
    }
  SsFrame *fft = ss_compare_entry_get_recovered (ss_compare_table_get_entry (table, 1));
  SsFrame *dense = ss_compare_entry_get_recovered (ss_compare_table_get_entry (table, 2));
  double diff = frame_rel_diff (dense, fft);
  g_test_message ("dense Cholesky vs FFT direct: relative difference %.3g", diff);
  g_assert_cmpfloat (diff, <, 1e-3);

  /* The curves of every solver in one CSV, in the CLI's solver names. */
  g_autoptr (GError) error = NULL;
  g_autofree char *csv = g_build_filename (f->dir, "compare.csv", NULL);
  g_assert_true (ss_window_export_sync (f->window, SS_EXPORT_CSV, csv, NULL, FALSE, 60, &error));
  g_assert_no_error (error);
  g_autofree char *text = NULL;
  g_assert_true (g_file_get_contents (csv, &text, NULL, NULL));
  g_auto (GStrv) lines = g_strsplit (g_strchomp (text), "\n", -1);
  SsPlot *plot = ss_window_get_plot (f->window);
  guint expected = 1;
  for (guint k = 0; k < 3; k++)
    expected += ss_plot_get_n_points (plot, k);
  g_assert_cmpuint (g_strv_length (lines), ==, expected);
  g_assert_true (g_str_has_prefix (lines[1], "cpadmm,"));
  g_assert_true (g_str_has_prefix (lines[expected - 1], "direct,"));

  /* Selecting a row shows its result. */
  ss_compare_table_select (table, 2);
  g_assert_true (ss_window_get_frame (f->window, SS_VIEW_RECOVERED) == dense);
  ss_compare_table_select (table, 0);
  g_assert_true (ss_window_get_frame (f->window, SS_VIEW_RECOVERED)
                 == ss_compare_entry_get_recovered (ss_compare_table_get_entry (table, 0)));
  g_assert_true (ss_window_wait_rendered (f->window, 30));
  iterate_for (0.3);
  save_screenshot (f->window, "screenshot-compare.png");
}

/* Needs no display: the zscale limits alone. */
static void
test_zscale (void)
{
  /* zscale of uniform values U(a, a+b). The sorted sample is a line through
   * the median a + b/2 with slope b/N per index; with the contrast 0.25 the
   * limits are the median -/+ 2b, clamped to the data: [a, a + b].
   * With a fraction q of huge outliers, rejected by the fit, the line holds
   * (1-q) of the sample: median a + b/(2(1-q)), limits extended by
   * 2b/(1-q); z1 is clamped to a, z2 = a + 2.5 b/(1-q). */
  g_autoptr (GRand) rng = g_rand_new_with_seed (test_seed ());
  gsize n = 40000;
  g_autofree float *v = g_new (float, n);
  double a = g_rand_double_range (rng, -100, 100), b = g_rand_double_range (rng, 1, 50);
  for (gsize i = 0; i < n; i++)
    v[i] = (float) (a + b * g_rand_double (rng));
  double z1, z2;
  g_assert_true (ss_zscale (v, n, &z1, &z2));
  g_test_message ("U(%g, %g): zscale [%g, %g]", a, a + b, z1, z2);
  g_assert_cmpfloat (fabs (z1 - a), <, 0.02 * b);
  g_assert_cmpfloat (fabs (z2 - (a + b)), <, 0.02 * b);

  const double q = 0.05;
  for (gsize i = 0; i < n; i++)
    if (g_rand_double (rng) < q)
      v[i] = (float) (a + 1e6 * b);
  g_assert_true (ss_zscale (v, n, &z1, &z2));
  double expect = a + 2.5 * b / (1 - q);
  g_test_message ("with %.0f %% outliers: zscale [%g, %g], expected [%g, %g]", q * 100, z1, z2,
                  a, expect);
  g_assert_cmpfloat (fabs (z1 - a), <, 0.02 * b);
  g_assert_cmpfloat (fabs (z2 - expect), <, 0.15 * b);
  /* No finite value: no limits. */
  float blank[3] = { NAN, NAN, NAN };
  g_assert_false (ss_zscale (blank, 3, &z1, &z2));

}

static void
test_view_geometry (Fixture *f, gconstpointer data)
{
  if (skip_without_display ())
    return;
  g_autoptr (SsImage) image = read_sample ();
  SsImageView *view = ss_window_get_image_view (f->window);
  g_autoptr (GRand) rng = g_rand_new_with_seed (f->seed);

  /* DS9 orientation: the first FITS row is the bottom line of the picture.
   * The centre of pixel (col, row) reads back as FITS (col+1, row+1), with
   * the file's value there. */
  for (int k = 0; k < 20; k++)
    {
      int col = g_rand_int_range (rng, 0, image->width);
      int row = g_rand_int_range (rng, 0, image->height);
      double x, y, value;
      int fx, fy;
      ss_image_view_pixel_to_widget (view, col, row, &x, &y);
      g_assert_true (ss_image_view_pick (view, x, y, &fx, &fy, &value));
      g_assert_cmpint (fx, ==, col + 1);
      g_assert_cmpint (fy, ==, row + 1);
      g_assert_cmpfloat (value, ==, image->data[(gsize) row * image->width + col]);
    }
  double x_top, y_top, x_bottom, y_bottom;
  ss_image_view_pixel_to_widget (view, 0, image->height - 1, &x_top, &y_top);
  ss_image_view_pixel_to_widget (view, 0, 0, &x_bottom, &y_bottom);
  g_assert_cmpfloat (y_top, <, y_bottom);

  /* Zooming about a point keeps the pixel under it; 1:1 and fit. */
  ss_image_view_zoom_one (view);
  g_assert_cmpfloat (ss_image_view_get_zoom (view), ==, 1.0);
  ss_image_view_zoom_in (view);
  g_assert_cmpfloat (fabs (ss_image_view_get_zoom (view) - 1.25), <, 1e-12);
  for (int k = 0; k < 10; k++)
    {
      double px = g_rand_double_range (rng, 50, 900), py = g_rand_double_range (rng, 50, 450);
      int bx, by, ax, ay;
      double v;
      gboolean before = ss_image_view_pick (view, px, py, &bx, &by, &v);
      ss_image_view_zoom_at (view, g_rand_double_range (rng, 0.3, 4.0), px, py);
      gboolean after = ss_image_view_pick (view, px, py, &ax, &ay, &v);
      g_assert_cmpint (before, ==, after);
      if (before)
        {
          g_assert_cmpint (abs (ax - bx), <=, 1);
          g_assert_cmpint (abs (ay - by), <=, 1);
        }
    }
  ss_image_view_zoom_fit (view);
  GtkWidget *widget = GTK_WIDGET (view);
  double zoom = ss_image_view_get_zoom (view);
  double expect = MIN ((double) gtk_widget_get_width (widget) / image->width,
                       (double) gtk_widget_get_height (widget) / image->height);
  g_assert_cmpfloat (fabs (zoom - expect), <, 1e-9);
  g_assert_true (ss_window_wait_rendered (f->window, 30));

  /* The picture's limits with every choice: min/max are the data's
   * extremes, zscale's are ss_zscale's, percentiles lie between. */
  gsize n = ss_image_plane_size (image);
  float data_min = INFINITY, data_max = -INFINITY;
  for (gsize i = 0; i < n; i++)
    {
      data_min = MIN (data_min, image->data[i]);
      data_max = MAX (data_max, image->data[i]);
    }
  double z1, z2;
  g_assert_true (ss_zscale (image->data, n, &z1, &z2));
  double previous_width = INFINITY;
  for (int limits = SS_LIMITS_MINMAX; limits <= SS_LIMITS_ZSCALE; limits++)
    {
      SsDisplay display = { SS_STRETCH_ASINH, (SsLimits) limits, SS_COLORMAP_VIRIDIS };
      ss_image_view_set_display (view, &display);
      g_assert_true (ss_window_wait_rendered (f->window, 30));
      double lo, hi;
      g_assert_true (ss_image_view_get_limits (view, 0, &lo, &hi));
      g_test_message ("limits %d: [%g, %g]", limits, lo, hi);
      g_assert_cmpfloat (lo, <, hi);
      if (limits == SS_LIMITS_MINMAX)
        {
          g_assert_cmpfloat (lo, ==, data_min);
          g_assert_cmpfloat (hi, ==, data_max);
        }
      else if (limits == SS_LIMITS_ZSCALE)
        {
          g_assert_cmpfloat (fabs (lo - z1), <=, 1e-6 * (z2 - z1));
          g_assert_cmpfloat (fabs (hi - z2), <=, 1e-6 * (z2 - z1));
        }
      else
        {
          /* Narrower limits as less of the data is kept. */
          g_assert_cmpfloat (hi - lo, <=, previous_width);
          g_assert_cmpfloat (lo, >=, data_min);
          g_assert_cmpfloat (hi, <=, data_max);
        }
      if (limits != SS_LIMITS_ZSCALE)
        previous_width = hi - lo;
    }
}

static void
test_keys_and_dialogs (Fixture *f, gconstpointer data)
{
  if (skip_without_display ())
    return;
  struct {
    const char *action;
    const char *accel;
  } wanted[] = {
    { "win.open", "<Control>o" },    { "win.export::fits", "<Control>s" },
    { "win.run", "<Control>r" },     { "win.stop", "Escape" },
    { "app.quit", "<Control>q" },    { "win.fullscreen", "F11" },
    { "win.phase-transition", "<Control>t" },
  };
  for (guint i = 0; i < G_N_ELEMENTS (wanted); i++)
    {
      g_auto (GStrv) accels = gtk_application_get_accels_for_action (GTK_APPLICATION (app),
                                                                     wanted[i].action);
      g_assert_nonnull (accels);
      g_assert_true (g_strv_contains ((const char *const *) accels, wanted[i].accel));
    }
  /* No two actions share a shortcut (a new one must find a free key). */
  g_autoptr (GHashTable) taken = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, g_free);
  g_auto (GStrv) actions = gtk_application_list_action_descriptions (GTK_APPLICATION (app));
  for (guint i = 0; actions[i]; i++)
    {
      g_auto (GStrv) accels = gtk_application_get_accels_for_action (GTK_APPLICATION (app),
                                                                     actions[i]);
      for (guint k = 0; accels[k]; k++)
        {
          const char *other = g_hash_table_lookup (taken, accels[k]);
          if (other)
            g_error ("%s is the shortcut of both %s and %s", accels[k], other, actions[i]);
          g_hash_table_insert (taken, g_strdup (accels[k]), g_strdup (actions[i]));
        }
    }
  /* Every command is an action of the window or the application. */
  const char *win_actions[] = { "open", "run", "stop", "compare", "export", "zoom-in",
                                "zoom-out", "zoom-fit", "zoom-one", "view", "split",
                                "fullscreen", "open-recent", "show-help-overlay",
                                "phase-transition" };
  for (guint i = 0; i < G_N_ELEMENTS (win_actions); i++)
    g_assert_true (g_action_group_has_action (G_ACTION_GROUP (f->window), win_actions[i]));
  g_assert_true (g_action_group_has_action (G_ACTION_GROUP (app), "about"));

  /* The shortcuts window comes from the GResource. */
  GtkShortcutsWindow *overlay =
      gtk_application_window_get_help_overlay (GTK_APPLICATION_WINDOW (f->window));
  g_assert_nonnull (overlay);
  g_action_group_activate_action (G_ACTION_GROUP (f->window), "show-help-overlay", NULL);
  iterate_for (0.3);
  g_assert_true (gtk_widget_get_visible (GTK_WIDGET (overlay)));
  save_screenshot_of (GTK_WINDOW (overlay), "screenshot-shortcuts.png");
  gtk_window_close (GTK_WINDOW (overlay));
  iterate_for (0.1);

  /* About opens a dialog; close it again. */
  GList *before = gtk_window_list_toplevels ();
  g_action_group_activate_action (G_ACTION_GROUP (app), "about", NULL);
  iterate_for (0.2);
  GList *after = gtk_window_list_toplevels ();
  GtkWindow *about = NULL;
  for (GList *l = after; l; l = l->next)
    if (GTK_IS_ABOUT_DIALOG (l->data) && g_list_find (before, l->data) == NULL)
      about = l->data;
  g_assert_nonnull (about);
  g_assert_cmpstr (gtk_about_dialog_get_program_name (GTK_ABOUT_DIALOG (about)), ==, "Sharpsky");
  gtk_window_destroy (about);
  g_list_free (before);
  g_list_free (after);

  /* Fullscreen is a stateful action. */
  g_action_group_activate_action (G_ACTION_GROUP (f->window), "fullscreen", NULL);
  g_autoptr (GVariant) state = g_action_group_get_action_state (G_ACTION_GROUP (f->window),
                                                                "fullscreen");
  g_assert_true (g_variant_get_boolean (state));
  g_action_group_activate_action (G_ACTION_GROUP (f->window), "fullscreen", NULL);
  iterate_for (0.2);

  /* The sample went into the recent files, under this application's name. */
  g_autofree char *sample = ss_window_find_sample ();
  g_autofree char *uri = g_filename_to_uri (sample, NULL, NULL);
  GtkRecentInfo *info = gtk_recent_manager_lookup_item (gtk_recent_manager_get_default (), uri,
                                                        NULL);
  g_assert_nonnull (info);
  g_assert_true (gtk_recent_info_has_application (info, g_get_application_name ()));
  gtk_recent_info_unref (info);
}

static void
test_no_gpu (Fixture *f, gconstpointer data)
{
  if (skip_without_display ())
    return;
  if (SHARPSKY_HAVE_CUDA)
    {
      g_test_skip ("this build has CUDA: the no-GPU message is tested on CPU-only builds");
      return;
    }
  /* The panel offers no GPU here: ask for one as a job would. */
  SsSettings s;
  cpu_settings (f, &s, SS_SOLVER_CPADMM, 5);
  s.backend = SS_BACKEND_CUDA;
  ss_window_run_settings (f->window, &s);
  ss_settings_clear (&s);
  g_assert_true (ss_window_wait_idle (f->window, 120));
  const char *message = ss_window_get_message (f->window);
  g_assert_nonnull (message);
  g_test_message ("%s", message);
  g_assert_nonnull (strstr (message, "CUDA") ? message : strstr (message, "cuda"));
  g_assert_false (ss_window_is_running (f->window));
}

/* Deblur mode builds its problem as sharpsky-cli does (sky, mirror padding
 * to an FFT-friendly size, crop): on the same input and settings both must
 * give the same image. */
/* sharpsky-cli, or NULL (with the test skipped) when it is not built. */
static const char *
cli_or_skip (void)
{
  const char *cli = g_getenv ("SHARPSKY_CLI");
  if (cli != NULL && g_file_test (cli, G_FILE_TEST_IS_EXECUTABLE))
    return cli;
  g_test_skip ("sharpsky-cli is not built: nothing to compare the deblur with");
  return NULL;
}

/* "--psf=gaussian:FWHM" with every digit, so the CLI and the app agree. */
static char *
gaussian_option (double fwhm)
{
  char text[G_ASCII_DTOSTR_BUF_SIZE];
  g_ascii_formatd (text, sizeof text, "%.17g", fwhm);
  return g_strdup_printf ("--psf=gaussian:%s", text);
}

/* Runs sharpsky-cli deblur on IN with the solve set_cli_deblur gives the
 * app, ITERATIONS iterations and EXTRA options (NULL-terminated; the PSF
 * among them); returns its output. */
static SsImage *
cli_deblur (const char *cli, const char *in, const char *out, int iterations,
            const char *const *extra)
{
  g_autofree char *iters = g_strdup_printf ("--iters=%d", iterations);
  g_autoptr (GPtrArray) argv = g_ptr_array_new ();
  const char *fixed[] = { cli, "deblur", in, "-o", out, "--sky=median", "--boundary=mirror",
                          "--solver=cpadmm", "--alpha=0.002", iters, ui_backend_option (),
                          "--quiet" };
  for (gsize i = 0; i < G_N_ELEMENTS (fixed); i++)
    g_ptr_array_add (argv, (gpointer) fixed[i]);
  for (gsize i = 0; extra[i] != NULL; i++)
    g_ptr_array_add (argv, (gpointer) extra[i]);
  g_ptr_array_add (argv, NULL);
  int status = 0;
  g_autoptr (GError) error = NULL;
  g_autofree char *cli_out = NULL, *cli_err = NULL;   /* kept out of the TAP stream */
  g_assert_true (g_spawn_sync (NULL, (char **) argv->pdata, NULL, G_SPAWN_DEFAULT, NULL, NULL,
                               &cli_out, &cli_err, &status, &error));
  g_assert_no_error (error);
  if (!g_spawn_check_wait_status (status, NULL))
    g_error ("sharpsky-cli failed: %s", cli_err);
  SsImage *image = ss_fits_read (out, NULL, &error);
  g_assert_no_error (error);
  return image;
}

/* Runs the app with settings S (set_cli_deblur applied with ITERATIONS) and
 * checks its result equals EXPECTED, the CLI's, to 1e-5 relative. */
static void
assert_app_matches_cli (Fixture *f, SsSettings *s, int iterations, const SsImage *expected,
                        const char *what)
{
  set_cli_deblur (s, iterations);
  apply_settings (f, s);
  ss_window_run (f->window);
  g_assert_true (ss_window_wait_idle (f->window, 120));
  g_assert_null (ss_window_get_message (f->window));
  log_solve_status (f);
  SsFrame *recovered = ss_window_get_frame (f->window, SS_VIEW_RECOVERED);
  g_assert_nonnull (recovered);
  g_assert_cmpint (recovered->width, ==, expected->width);
  g_assert_cmpint (recovered->height, ==, expected->height);
  double diff = relative_difference (recovered, expected);
  g_test_message ("app vs sharpsky-cli %s: relative difference %.3g", what, diff);
  g_assert_cmpfloat (diff, <, 1e-5);
}

static void
test_deblur_matches_cli (Fixture *f, gconstpointer data)
{
  if (skip_without_display ())
    return;
  const char *cli = cli_or_skip ();
  if (cli == NULL)
    return;
  /* A random part of the sample as the "real" blurred image. */
  g_autoptr (SsImage) image = read_sample ();
  g_autoptr (GRand) rng = g_rand_new_with_seed (f->seed);
  int w = g_rand_int_range (rng, 64, 129), h = g_rand_int_range (rng, 64, 129);
  int x0 = g_rand_int_range (rng, 0, image->width - w);
  int y0 = g_rand_int_range (rng, 0, image->height - h);
  g_autoptr (GError) error = NULL;
  g_autoptr (SsImage) part = ss_image_new (w, h, 1, &error);
  g_assert_no_error (error);
  for (int r = 0; r < h; r++)
    memcpy (part->data + (gsize) r * w, image->data + (gsize) (y0 + r) * image->width + x0,
            (gsize) w * sizeof (float));
  g_autofree char *in = g_build_filename (f->dir, "part.fits", NULL);
  g_autofree char *out = g_build_filename (f->dir, "cli.fits", NULL);
  g_assert_true (ss_fits_write (part, in, FALSE, NULL, &error));
  g_assert_no_error (error);
  double fwhm = g_rand_double_range (rng, 1.5, 4.0);
  g_test_message ("%d×%d at (%d, %d), gaussian FWHM %.3f", w, h, x0, y0, fwhm);

  g_autofree char *psf = gaussian_option (fwhm);
  const char *extra[] = { psf, NULL };
  g_autoptr (SsImage) expected = cli_deblur (cli, in, out, 40, extra);

  g_assert_true (ss_window_open_path_sync (f->window, in, 30, &error));
  SsSettings s;
  ss_settings_init (&s);
  s.acquisition.psf.kind = SS_PSF_GAUSSIAN;
  s.acquisition.psf.fwhm = fwhm;
  assert_app_matches_cli (f, &s, 40, expected, "with a Gaussian PSF");
  /* The residual is plotted when there is no truth. */
  g_assert_cmpuint (ss_plot_get_n_points (ss_window_get_plot (f->window), 0), >=, 2);
  g_assert_null (ss_window_get_frame (f->window, SS_VIEW_ERROR));
}

/* ---- real files: the HDU chooser, the PSF from a star --------------------- */

/* Random floats in [0, 1) for an image of N pixels. */
static float *
random_pixels (GRand *rng, gsize n)
{
  float *data = g_new (float, n);
  for (gsize i = 0; i < n; i++)
    data[i] = (float) g_rand_double (rng);
  return data;
}

static void
write_image_hdu (fitsfile *fits, const char *extname, long w, long h, long planes,
                 float *data, int *status)
{
  long axes[3] = { w, h, planes };
  fits_create_img (fits, FLOAT_IMG, planes > 1 ? 3 : 2, axes, status);
  fits_write_key_str (fits, "EXTNAME", extname, NULL, status);
  fits_write_img (fits, TFLOAT, 1, (LONGLONG) w * h * planes, data, status);
}

typedef struct {
  float *sci, *err, *cube;   /* 40×36, 30×28, 24×20×4 */
} MefData;

/* An empty primary, two image extensions and a cube, as instruments write. */
static void
write_mef (const char *path, GRand *rng, MefData *m)
{
  m->sci = random_pixels (rng, 40 * 36);
  m->err = random_pixels (rng, 30 * 28);
  m->cube = random_pixels (rng, 24 * 20 * 4);
  fitsfile *fits = NULL;
  int status = 0;
  fits_create_diskfile (&fits, path, &status);
  fits_create_img (fits, BYTE_IMG, 0, NULL, &status);
  write_image_hdu (fits, "SCI", 40, 36, 1, m->sci, &status);
  write_image_hdu (fits, "ERR", 30, 28, 1, m->err, &status);
  write_image_hdu (fits, "CUBE", 24, 20, 4, m->cube, &status);
  fits_close_file (fits, &status);
  g_assert_cmpint (status, ==, 0);
}

static void
assert_frame_is (SsFrame *frame, const float *data, int w, int h)
{
  g_assert_nonnull (frame);
  g_assert_cmpint (frame->width, ==, w);
  g_assert_cmpint (frame->height, ==, h);
  g_assert_cmpmem (frame->data, (gsize) w * h * sizeof (float), data,
                   (gsize) w * h * sizeof (float));
}

static gboolean
file_contains (const char *path, const char *text)
{
  g_autofree char *contents = NULL;
  gsize length = 0;
  g_assert_true (g_file_get_contents (path, &contents, &length, NULL));
  return g_strstr_len (contents, length, text) != NULL;
}

static void
test_hdu_chooser (Fixture *f, gconstpointer data)
{
  if (skip_without_display ())
    return;
  g_autoptr (GRand) rng = g_rand_new_with_seed (f->seed);
  g_autofree char *path = g_build_filename (f->dir, "mef.fits", NULL);
  MefData m;
  write_mef (path, rng, &m);

  /* Three image HDUs: the first is shown and the chooser offers the rest. */
  g_autoptr (GError) error = NULL;
  g_assert_true (ss_window_open_path_sync (f->window, path, 30, &error));
  g_assert_no_error (error);
  assert_frame_is (ss_window_get_frame (f->window, SS_VIEW_ORIGINAL), m.sci, 40, 36);
  SsHduChooser *chooser = ss_window_get_hdu_chooser (f->window);
  g_assert_nonnull (chooser);
  int hdu = -9, plane = -9;
  ss_hdu_chooser_get_selection (chooser, &hdu, &plane);
  g_assert_cmpint (hdu, ==, 1);
  g_assert_cmpint (plane, ==, 0);
  g_assert_false (ss_hdu_chooser_select (chooser, 0, 0));   /* the empty primary */
  g_assert_false (ss_hdu_chooser_select (chooser, 3, 4));   /* no fifth plane */

  /* The cube's third plane, as the CLI's --hdu 3 --plane 2 reads it. */
  int want_plane = g_rand_int_range (rng, 0, 4);
  g_test_message ("cube plane %d", want_plane);
  g_assert_true (ss_hdu_chooser_select (chooser, 3, want_plane));
  ss_hdu_chooser_accept (chooser);
  g_assert_true (ss_window_wait_idle (f->window, 30));
  g_assert_null (ss_window_get_hdu_chooser (f->window));   /* a chosen load asks nothing */
  assert_frame_is (ss_window_get_frame (f->window, SS_VIEW_ORIGINAL),
                   m.cube + (gsize) want_plane * 24 * 20, 24, 20);

  /* Ctrl+H reopens it on what is shown. */
  g_action_group_activate_action (G_ACTION_GROUP (f->window), "choose-hdu", NULL);
  chooser = ss_window_get_hdu_chooser (f->window);
  g_assert_nonnull (chooser);
  ss_hdu_chooser_get_selection (chooser, &hdu, &plane);
  g_assert_cmpint (hdu, ==, 3);
  g_assert_cmpint (plane, ==, want_plane);
  g_assert_true (ss_hdu_chooser_select (chooser, 2, 0));
  ss_hdu_chooser_accept (chooser);
  g_assert_true (ss_window_wait_idle (f->window, 30));
  assert_frame_is (ss_window_get_frame (f->window, SS_VIEW_ORIGINAL), m.err, 30, 28);

  /* The export says where the data came from. */
  g_autofree char *out = g_build_filename (f->dir, "err.fits", NULL);
  g_assert_true (ss_window_export_sync (f->window, SS_EXPORT_FITS, out, NULL, FALSE, 30,
                                        &error));
  g_assert_no_error (error);
  g_assert_true (file_contains (out, "input = mef.fits, HDU 2 (ERR)"));
  g_assert_true (file_contains (out, "EXTNAME = 'ERR"));

  /* An export leaves the file's HDUs offered (it once dropped them). */
  ss_window_choose_hdu (f->window);
  g_assert_nonnull (ss_window_get_hdu_chooser (f->window));
  gtk_window_destroy (GTK_WINDOW (ss_window_get_hdu_chooser (f->window)));
  g_free (m.sci);
  g_free (m.err);
  g_free (m.cube);
}

#define N_STARS 5

/* A flat sky of 10 with noise of sigma 0.5 and N_STARS Gaussian stars of
 * FWHM, of different heights (the brightest reads as saturated to the
 * automatic search, as in a real frame), at XS, YS. */
static SsImage *
star_field (GRand *rng, int w, int h, const double *xs, const double *ys, double fwhm)
{
  static const double heights[N_STARS] = { 1000, 700, 500, 400, 300 };
  g_autoptr (GError) error = NULL;
  SsImage *image = ss_image_new (w, h, 1, &error);
  g_assert_no_error (error);
  double s2 = 2.0 * pow (fwhm / 2.3548200450309493, 2);
  for (int r = 0; r < h; r++)
    for (int c = 0; c < w; c++)
      {
        double u = g_rand_double_range (rng, 1e-12, 1.0), v = g_rand_double (rng);
        double value = 10.0 + 0.5 * sqrt (-2.0 * log (u)) * cos (2.0 * G_PI * v);
        for (int k = 0; k < N_STARS; k++)
          value += heights[k] * exp (-((c - xs[k]) * (c - xs[k]) + (r - ys[k]) * (r - ys[k])) / s2);
        image->data[(gsize) r * w + c] = (float) value;
      }
  return image;
}

static void
test_psf_from_star (Fixture *f, gconstpointer data)
{
  if (skip_without_display ())
    return;
  g_autoptr (GRand) rng = g_rand_new_with_seed (f->seed);
  int w = 160, h = 120;
  static const double grid_x[N_STARS] = { 30, 80, 130, 45, 115 };
  static const double grid_y[N_STARS] = { 30, 30, 30, 85, 85 };
  double xs[N_STARS], ys[N_STARS];
  for (int k = 0; k < N_STARS; k++)
    {
      xs[k] = grid_x[k] + g_rand_double_range (rng, -5, 5);
      ys[k] = grid_y[k] + g_rand_double_range (rng, -5, 5);
    }
  double fwhm = g_rand_double_range (rng, 2.5, 5.0);
  /* The user picks the second brightest. */
  double x = xs[1], y = ys[1];
  g_test_message ("star at (%.2f, %.2f), FWHM %.3f", x, y, fwhm);
  g_autoptr (SsImage) image = star_field (rng, w, h, xs, ys, fwhm);
  g_autofree char *in = g_build_filename (f->dir, "star.fits", NULL);
  g_autoptr (GError) error = NULL;
  g_assert_true (ss_fits_write (image, in, FALSE, NULL, &error));
  g_assert_no_error (error);
  g_assert_true (ss_window_open_path_sync (f->window, in, 30, &error));
  g_assert_no_error (error);

  /* A click on empty sky measures nothing, and says so. */
  g_assert_false (ss_window_fit_star_sync (f->window, 5, 5, 30, &error));
  g_assert_nonnull (error);
  g_test_message ("empty sky: %s", error->message);
  g_clear_error (&error);
  g_assert_nonnull (ss_window_get_message (f->window));

  /* A click a pixel off the star's centre, as a hand would. */
  int col = (int) lround (x) + 1, row = (int) lround (y) - 1;
  g_assert_true (ss_window_fit_star_sync (f->window, col, row, 30, &error));
  g_assert_no_error (error);
  SsParamsPanel *panel = ss_window_get_params_panel (f->window);
  SsPsfFit fit;
  g_assert_true (ss_params_panel_get_psf_fit (panel, &fit));
  g_test_message ("fitted FWHM %.3f (true %.3f) at (%.2f, %.2f)", fit.fwhm, fwhm, fit.x, fit.y);
  g_assert_cmpfloat (fabs (fit.fwhm - fwhm), <=, 0.05 * fwhm);
  g_assert_cmpfloat (fabs (fit.x - x), <=, 0.2);
  g_assert_cmpfloat (fabs (fit.y - y), <=, 0.2);

  /* The automatic search measures the same profile on the other stars. */
  SsPsfFit found;
  gboolean found_ok = ss_window_find_stars_sync (f->window, 60, &error);
  g_assert_no_error (error);
  g_assert_true (found_ok);
  g_assert_true (ss_params_panel_get_psf_fit (panel, &found));
  g_assert_cmpfloat (fabs (found.fwhm - fwhm), <=, 0.05 * fwhm);

  /* The app's deblur with the star's PSF equals sharpsky-cli's --psf-from-star. */
  const char *cli = cli_or_skip ();
  if (cli == NULL)
    return;
  g_assert_true (ss_window_fit_star_sync (f->window, col, row, 30, &error));
  g_assert_no_error (error);
  g_assert_true (ss_params_panel_get_psf_fit (panel, &fit));
  g_autofree char *described = ss_psf_fit_describe (&fit);
  g_test_message ("the app's PSF: %s", described);
  g_autofree char *out = g_build_filename (f->dir, "cli.fits", NULL);
  g_autofree char *star = g_strdup_printf ("--psf-from-star=%d,%d", col, row);
  /* The panel's default profile is the CLI's: Moffat. */
  g_assert_cmpint (ss_params_panel_get_star_model (panel), ==, SS_PSF_MODEL_MOFFAT);
  const char *extra[] = { star, "--psf-model=moffat", NULL };
  g_autoptr (SsImage) expected = cli_deblur (cli, in, out, 30, extra);

  SsSettings s;
  ss_params_panel_get_settings (panel, &s);
  g_assert_true (s.psf_from_fit);
  assert_app_matches_cli (f, &s, 30, expected, "--psf-from-star");
}

/* A colour HDU (three planes) beside a plain one: the chooser offers the
 * mean or one channel, and the app deblurs the channel chosen exactly as
 * sharpsky-cli deblur --hdu RGB --plane K does. */
static void
test_hdu_colour_matches_cli (Fixture *f, gconstpointer data)
{
  if (skip_without_display ())
    return;
  g_autoptr (SsImage) sample = read_sample ();
  g_autoptr (GRand) rng = g_rand_new_with_seed (f->seed);
  int w = g_rand_int_range (rng, 48, 97), h = g_rand_int_range (rng, 40, 81);
  gsize n = (gsize) w * h;
  /* Three different parts of the sample, as three channels. */
  g_autofree float *rgb = g_new (float, 3 * n);
  for (int k = 0; k < 3; k++)
    {
      int x0 = g_rand_int_range (rng, 0, sample->width - w);
      int y0 = g_rand_int_range (rng, 0, sample->height - h);
      for (int r = 0; r < h; r++)
        memcpy (rgb + k * n + (gsize) r * w,
                sample->data + (gsize) (y0 + r) * sample->width + x0, (gsize) w * sizeof (float));
    }
  g_autofree float *sci = random_pixels (rng, 32 * 30);
  g_autofree char *path = g_build_filename (f->dir, "colour.fits", NULL);
  fitsfile *fits = NULL;
  int status = 0;
  fits_create_diskfile (&fits, path, &status);
  fits_create_img (fits, BYTE_IMG, 0, NULL, &status);
  write_image_hdu (fits, "SCI", 32, 30, 1, sci, &status);
  write_image_hdu (fits, "RGB", w, h, 3, rgb, &status);
  fits_close_file (fits, &status);
  g_assert_cmpint (status, ==, 0);

  /* Two images: the chooser opens on the first, as the CLI would read it. */
  g_autoptr (GError) error = NULL;
  g_assert_true (ss_window_open_path_sync (f->window, path, 30, &error));
  g_assert_no_error (error);
  SsHduChooser *chooser = ss_window_get_hdu_chooser (f->window);
  g_assert_nonnull (chooser);
  int hdu = -9, plane = -9;
  ss_hdu_chooser_get_selection (chooser, &hdu, &plane);
  g_assert_cmpint (hdu, ==, 1);
  g_assert_cmpint (plane, ==, 0);
  g_assert_false (ss_hdu_chooser_select (chooser, 1, -1));   /* no mean of one plane */
  g_assert_false (ss_hdu_chooser_select (chooser, 2, 3));    /* no fourth channel */

  /* The mean of the three channels. */
  g_assert_true (ss_hdu_chooser_select (chooser, 2, -1));
  ss_hdu_chooser_get_selection (chooser, &hdu, &plane);
  g_assert_cmpint (hdu, ==, 2);
  g_assert_cmpint (plane, ==, -1);
  ss_hdu_chooser_accept (chooser);
  g_assert_true (ss_window_wait_idle (f->window, 30));
  SsFrame *frame = ss_window_get_frame (f->window, SS_VIEW_ORIGINAL);
  g_assert_nonnull (frame);
  g_assert_cmpint (frame->width, ==, w);
  g_assert_cmpint (frame->height, ==, h);
  for (gsize i = 0; i < n; i++)
    {
      double mean = ((double) rgb[i] + rgb[n + i] + rgb[2 * n + i]) / 3.0;
      g_assert_cmpfloat (fabs (frame->data[i] - mean), <=, 1e-6 * (fabs (mean) + 1.0));
    }

  /* One channel, picked again with Ctrl+H's action. */
  int channel = g_rand_int_range (rng, 0, 3);
  double fwhm = g_rand_double_range (rng, 1.5, 3.5);
  g_test_message ("%d×%d, channel %d, gaussian FWHM %.3f", w, h, channel, fwhm);
  g_action_group_activate_action (G_ACTION_GROUP (f->window), "choose-hdu", NULL);
  chooser = ss_window_get_hdu_chooser (f->window);
  g_assert_nonnull (chooser);
  ss_hdu_chooser_get_selection (chooser, &hdu, &plane);
  g_assert_cmpint (hdu, ==, 2);
  g_assert_cmpint (plane, ==, -1);
  iterate_for (0.3);
  save_screenshot_of (GTK_WINDOW (chooser), "hdu-chooser.png");
  g_assert_true (ss_hdu_chooser_select (chooser, 2, channel));
  ss_hdu_chooser_accept (chooser);
  g_assert_true (ss_window_wait_idle (f->window, 30));
  assert_frame_is (ss_window_get_frame (f->window, SS_VIEW_ORIGINAL), rgb + channel * n, w, h);

  const char *cli = cli_or_skip ();
  if (cli == NULL)
    return;
  g_autofree char *out = g_build_filename (f->dir, "cli.fits", NULL);
  g_autofree char *plane_option = g_strdup_printf ("--plane=%d", channel);
  g_autofree char *psf = gaussian_option (fwhm);
  const char *extra[] = { psf, "--hdu=RGB", plane_option, NULL };
  g_autoptr (SsImage) expected = cli_deblur (cli, path, out, 30, extra);
  g_assert_cmpint (expected->planes, ==, 1);

  SsSettings s;
  ss_settings_init (&s);
  s.acquisition.psf.kind = SS_PSF_GAUSSIAN;
  s.acquisition.psf.fwhm = fwhm;
  g_autofree char *what = g_strdup_printf ("--hdu RGB --plane %d", channel);
  assert_app_matches_cli (f, &s, 30, expected, what);

  /* The export names the HDU and the channel. */
  g_autofree char *exported = g_build_filename (f->dir, "app.fits", NULL);
  g_assert_true (ss_window_export_sync (f->window, SS_EXPORT_FITS, exported, NULL, FALSE, 30,
                                        &error));
  g_assert_no_error (error);
  g_assert_true (file_contains (exported, "input = colour.fits, HDU 2 (RGB)"));
  g_autofree char *plane_card = g_strdup_printf ("input plane: plane %d of 3", channel);
  g_assert_true (file_contains (exported, plane_card));
}

/* Find stars says how many stars it measured: as many as the engine's
 * search uses on the same pixels; a click measures one. */
static void
test_star_count_shown (Fixture *f, gconstpointer data)
{
  if (skip_without_display ())
    return;
  g_autoptr (GRand) rng = g_rand_new_with_seed (f->seed);
  static const double grid_x[N_STARS] = { 30, 80, 130, 45, 115 };
  static const double grid_y[N_STARS] = { 30, 30, 30, 85, 85 };
  double xs[N_STARS], ys[N_STARS];
  for (int k = 0; k < N_STARS; k++)
    {
      xs[k] = grid_x[k] + g_rand_double_range (rng, -5, 5);
      ys[k] = grid_y[k] + g_rand_double_range (rng, -5, 5);
    }
  double fwhm = g_rand_double_range (rng, 2.5, 5.0);
  g_autoptr (SsImage) image = star_field (rng, 160, 120, xs, ys, fwhm);
  g_autofree char *in = g_build_filename (f->dir, "stars.fits", NULL);
  g_autoptr (GError) error = NULL;
  g_assert_true (ss_fits_write (image, in, FALSE, NULL, &error));
  g_assert_no_error (error);
  g_assert_true (ss_window_open_path_sync (f->window, in, 30, &error));
  g_assert_no_error (error);

  SsStarSearch search;
  ss_star_search_init (&search);
  search.model = SS_PSF_MODEL_MOFFAT;   /* the panel's default, as the CLI's */
  SsPsfFit combined;
  g_assert_true (ss_psf_find_stars (image, &search, &combined, NULL, &error));
  g_assert_no_error (error);
  int used = combined.iterations;
  g_test_message ("FWHM %.3f; the engine's search combines %d stars", fwhm, used);
  g_assert_cmpint (used, >=, 2);

  g_assert_true (ss_window_find_stars_sync (f->window, 60, &error));
  g_assert_no_error (error);
  SsParamsPanel *panel = ss_window_get_params_panel (f->window);
  g_autofree char *expected = g_strdup_printf ("median of %d stars", used);
  const char *shown = ss_params_panel_get_psf_fit_text (panel);
  g_test_message ("panel: %s", shown);
  g_assert_nonnull (strstr (shown, expected));
  g_assert_nonnull (strstr (ss_window_get_message (f->window), "stars"));

  /* Giving the panel its own settings back keeps the count shown. */
  SsSettings s;
  ss_params_panel_get_settings (panel, &s);
  apply_settings (f, &s);
  g_assert_nonnull (strstr (ss_params_panel_get_psf_fit_text (panel), expected));

  int col = (int) lround (xs[0]), row = (int) lround (ys[0]);
  g_assert_true (ss_window_fit_star_sync (f->window, col, row, 30, &error));
  g_assert_no_error (error);
  g_assert_nonnull (strstr (ss_params_panel_get_psf_fit_text (panel), "one star"));
  g_assert_true (ss_params_panel_get_psf_fit (panel, NULL));

  /* Another image (here the same file again) needs its own measurement: the
   * one-star fit is dropped and, as for any real image, the stars are
   * searched again on opening (as --psf auto does). */
  g_assert_true (ss_window_open_path_sync (f->window, in, 30, &error));
  g_assert_no_error (error);
  g_assert_null (strstr (ss_params_panel_get_psf_fit_text (panel), "one star"));
  g_assert_nonnull (strstr (ss_params_panel_get_psf_fit_text (panel), expected));
  SsSettings reopened;
  ss_params_panel_get_settings (panel, &reopened);
  g_assert_cmpint (reopened.mode, ==, SS_MODE_DEBLUR);
  g_assert_true (reopened.psf_from_fit);
  g_assert_true (reopened.auto_params & (G_GUINT64_CONSTANT (1) << SS_PARAM_ALPHA));
  ss_settings_clear (&reopened);
}

/* A real image opens on sharpsky-cli deblur's defaults: deblurred as it is,
 * the PSF measured on its stars, alpha from the noise, the solver for real
 * images. Run as it opened, the app gives the CLI's `deblur IN --psf auto
 * --alpha auto` image; the sample still opens on the teaching demo. */
static void
test_real_image_defaults (Fixture *f, gconstpointer data)
{
  if (skip_without_display ())
    return;
  const char *cli = cli_or_skip ();
  if (cli == NULL)
    return;
  g_autoptr (GRand) rng = g_rand_new_with_seed (f->seed);
  static const double grid_x[N_STARS] = { 30, 80, 130, 45, 115 };
  static const double grid_y[N_STARS] = { 30, 30, 30, 85, 85 };
  double xs[N_STARS], ys[N_STARS];
  for (int k = 0; k < N_STARS; k++)
    {
      xs[k] = grid_x[k] + g_rand_double_range (rng, -5, 5);
      ys[k] = grid_y[k] + g_rand_double_range (rng, -5, 5);
    }
  g_autoptr (SsImage) image = star_field (rng, 160, 120, xs, ys,
                                          g_rand_double_range (rng, 2.5, 4.5));
  g_autofree char *in = g_build_filename (f->dir, "frame.fits", NULL);
  g_autoptr (GError) error = NULL;
  g_assert_true (ss_fits_write (image, in, FALSE, NULL, &error));
  g_assert_true (ss_window_open_path_sync (f->window, in, 60, &error));
  g_assert_no_error (error);

  SsParamsPanel *panel = ss_window_get_params_panel (f->window);
  SsSettings s;
  ss_params_panel_get_settings (panel, &s);
  g_assert_cmpint (s.mode, ==, SS_MODE_DEBLUR);
  g_assert_true (s.psf_from_fit);
  g_assert_true (ss_params_panel_get_psf_fit (panel, NULL));
  g_assert_true (s.auto_params & (G_GUINT64_CONSTANT (1) << SS_PARAM_ALPHA));
  g_assert_cmpint (s.sky_mode, ==, SS_SKY_MEDIAN);
  g_assert_true (s.params.nonneg);

  g_assert_cmpint (s.params.kind, ==, ss_solver_default_for_real_data ());
  s.params.iterations = 20;
  s.backend = ui_backend ();
  apply_settings (f, &s);
  ss_settings_clear (&s);
  ss_window_run (f->window);
  g_assert_true (ss_window_wait_idle (f->window, 120));
  g_assert_null (ss_window_get_message (f->window));
  log_solve_status (f);
  SsFrame *recovered = ss_window_get_frame (f->window, SS_VIEW_RECOVERED);
  g_assert_nonnull (recovered);

  g_autofree char *out = g_build_filename (f->dir, "cli.fits", NULL);
  const char *argv[] = { cli, "deblur", in, "-o", out, "--psf=auto", "--alpha=auto",
                         "--iters=20", ui_backend_option (), "--quiet", NULL };
  int status = 0;
  g_autofree char *cli_out = NULL, *cli_err = NULL;
  g_assert_true (g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_DEFAULT, NULL, NULL,
                               &cli_out, &cli_err, &status, &error));
  if (!g_spawn_check_wait_status (status, NULL))
    g_error ("sharpsky-cli failed: %s", cli_err);
  g_autoptr (SsImage) expected = ss_fits_read (out, NULL, &error);
  g_assert_no_error (error);
  double diff = relative_difference (recovered, expected);
  g_test_message ("app as opened vs sharpsky-cli --psf auto --alpha auto: %.3g", diff);
  g_assert_cmpfloat (diff, <, 1e-5);

  /* The sample opens on the teaching demo again. */
  g_autofree char *sample = ss_window_find_sample ();
  g_assert_true (ss_window_open_path_sync (f->window, sample, 60, &error));
  ss_params_panel_get_settings (panel, &s);
  g_assert_cmpint (s.mode, ==, SS_MODE_SIMULATE);
  g_assert_false (s.psf_from_fit);
  ss_settings_clear (&s);
}

/* A colour PNG has no HDUs, but its channels are offered as a FITS colour
 * image's are: the mean by default, then any one channel through Ctrl+H. */
static void
test_png_channels (Fixture *f, gconstpointer data)
{
  if (skip_without_display ())
    return;
  g_autoptr (GRand) rng = g_rand_new_with_seed (f->seed);
  int w = g_rand_int_range (rng, 20, 61), h = g_rand_int_range (rng, 20, 61);
  gsize n = (gsize) w * h;
  g_autoptr (GError) error = NULL;
  g_autoptr (SsImage) rgb = ss_image_new (w, h, 3, &error);
  g_assert_no_error (error);
  for (gsize i = 0; i < 3 * n; i++)
    rgb->data[i] = (float) g_rand_double (rng);
  g_autofree char *path = g_build_filename (f->dir, "colour.png", NULL);
  SsPngWriteOptions options;
  ss_png_write_options_init (&options);
  options.bit_depth = 16;
  g_assert_true (ss_png_write (rgb, path, &options, FALSE, NULL, &error));
  g_assert_no_error (error);
  /* The oracle: the engine's reading of the file, channel by channel. */
  g_autoptr (SsImage) read = ss_png_read (path, &error);
  g_assert_no_error (error);
  g_assert_cmpint (read->planes, ==, 3);

  g_assert_true (ss_window_open_path_sync (f->window, path, 30, &error));
  g_assert_no_error (error);
  g_assert_null (ss_window_get_hdu_chooser (f->window));   /* the mean needs no question */
  g_assert_nonnull (strstr (ss_window_get_message (f->window), "mean of its three planes"));
  SsFrame *frame = ss_window_get_frame (f->window, SS_VIEW_ORIGINAL);
  g_assert_nonnull (frame);
  for (gsize i = 0; i < n; i++)
    {
      double mean = ((double) read->data[i] + read->data[n + i] + read->data[2 * n + i]) / 3.0;
      g_assert_cmpfloat (fabs (frame->data[i] - mean), <=, 1e-6);
    }

  int channel = g_rand_int_range (rng, 0, 3);
  g_test_message ("%d×%d PNG, channel %d", w, h, channel);
  g_action_group_activate_action (G_ACTION_GROUP (f->window), "choose-hdu", NULL);
  SsHduChooser *chooser = ss_window_get_hdu_chooser (f->window);
  g_assert_nonnull (chooser);
  int hdu = -9, plane = -9;
  ss_hdu_chooser_get_selection (chooser, &hdu, &plane);
  g_assert_cmpint (hdu, ==, 0);
  g_assert_cmpint (plane, ==, -1);
  g_assert_true (ss_hdu_chooser_select (chooser, 0, channel));
  ss_hdu_chooser_accept (chooser);
  g_assert_true (ss_window_wait_idle (f->window, 30));
  assert_frame_is (ss_window_get_frame (f->window, SS_VIEW_ORIGINAL), read->data + channel * n,
                   w, h);
  g_assert_null (ss_window_get_message (f->window));   /* a choice made is not announced */
}

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

/* ---- compressed sensing: the solver list, Compare, the phase transition --- */

/* Issue 12: every solver of the table that solves compressed-sensing
 * problems is in the panel's solver list, in Compare, and in the Phase
 * transition window's list. */
static void
test_cs_solvers_listed (Fixture *f, gconstpointer data)
{
  if (skip_without_display ())
    return;
  g_autoptr (GPtrArray) choices = ss_window_get_compare_choices (f->window);
  g_action_group_activate_action (G_ACTION_GROUP (f->window), "phase-transition", NULL);
  SsPhaseWindow *phase = ss_window_get_phase_window (f->window);
  g_assert_nonnull (phase);
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
  g_action_group_activate_action (G_ACTION_GROUP (f->window), "phase-transition", NULL);
  SsPhaseWindow *phase = ss_window_get_phase_window (f->window);
  g_assert_nonnull (phase);
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
  g_action_group_activate_action (G_ACTION_GROUP (f->window), "phase-transition", NULL);
  SsPhaseWindow *phase = ss_window_get_phase_window (f->window);
  g_assert_nonnull (phase);
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

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  /* Private per-user directories (recent files, caches), but the system's
   * data dirs stay visible: GTK needs its schemas and icon themes there. */
  g_autofree char *home = g_dir_make_tmp ("sharpsky-ui-home-XXXXXX", NULL);
  const char *kinds[] = { "XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME",
                          "XDG_STATE_HOME" };
  for (guint i = 0; i < G_N_ELEMENTS (kinds); i++)
    {
      g_autofree char *dir = g_build_filename (home, kinds[i], NULL);
      g_mkdir_with_parents (dir, 0700);
      g_setenv (kinds[i], dir, TRUE);
    }
  /* No session bus, accessibility bus or dconf is needed (or wanted) here. */
  g_setenv ("GSETTINGS_BACKEND", "memory", FALSE);
  g_setenv ("GTK_A11Y", "none", FALSE);
  g_setenv ("NO_AT_BRIDGE", "1", FALSE);
  g_set_application_name ("Sharpsky");
  have_display = gtk_init_check ();
  if (have_display)
    {
      app = ss_application_new (G_APPLICATION_NON_UNIQUE);
      g_autoptr (GError) error = NULL;
      if (!g_application_register (G_APPLICATION (app), NULL, &error))
        g_error ("cannot register the application: %s", error->message);
    }
  g_test_add ("/ui/open-sample", Fixture, NULL, fixture_setup, test_open_sample, fixture_teardown);
  g_test_add ("/ui/run-cpu", Fixture, NULL, fixture_setup, test_run_cpu, fixture_teardown);
  g_test_add ("/ui/export", Fixture, NULL, fixture_setup, test_export, fixture_teardown);
  g_test_add ("/ui/stop", Fixture, NULL, fixture_setup, test_stop, fixture_teardown);
  g_test_add ("/ui/first-preview", Fixture, NULL, fixture_setup, test_first_preview,
              fixture_teardown);
  g_test_add ("/ui/corrupt-file", Fixture, NULL, fixture_setup, test_corrupt_file,
              fixture_teardown);
  g_test_add ("/ui/dense-too-large", Fixture, NULL, fixture_setup, test_dense_too_large,
              fixture_teardown);
  g_test_add ("/ui/compare", Fixture, NULL, fixture_setup, test_compare, fixture_teardown);
  g_test_add_func ("/ui/zscale", test_zscale);
  g_test_add ("/ui/view-geometry", Fixture, NULL, fixture_setup, test_view_geometry,
              fixture_teardown);
  g_test_add ("/ui/keys-and-dialogs", Fixture, NULL, fixture_setup, test_keys_and_dialogs,
              fixture_teardown);
  g_test_add ("/ui/no-gpu", Fixture, NULL, fixture_setup, test_no_gpu, fixture_teardown);
  g_test_add ("/ui/hdu-chooser", Fixture, NULL, fixture_setup, test_hdu_chooser,
              fixture_teardown);
  g_test_add ("/ui/psf-from-star", Fixture, NULL, fixture_setup, test_psf_from_star,
              fixture_teardown);
  g_test_add ("/ui/deblur-matches-cli", Fixture, NULL, fixture_setup, test_deblur_matches_cli,
              fixture_teardown);
  g_test_add ("/ui/hdu-colour-matches-cli", Fixture, NULL, fixture_setup,
              test_hdu_colour_matches_cli, fixture_teardown);
  g_test_add ("/ui/real-image-defaults", Fixture, NULL, fixture_setup, test_real_image_defaults,
              fixture_teardown);
  g_test_add ("/ui/star-count-shown", Fixture, NULL, fixture_setup, test_star_count_shown,
              fixture_teardown);
  g_test_add ("/ui/png-channels", Fixture, NULL, fixture_setup, test_png_channels,
              fixture_teardown);
  g_test_add ("/ui/device/picker-lists", Fixture, NULL, fixture_setup, test_device_picker_lists,
              fixture_teardown);
  g_test_add ("/ui/device/cpu", Fixture, NULL, fixture_setup, test_device_cpu, fixture_teardown);
  g_test_add ("/ui/device/gpu0", Fixture, NULL, fixture_setup, test_device_gpu0,
              fixture_teardown);
  g_test_add ("/ui/device/missing", Fixture, NULL, fixture_setup, test_device_missing,
              fixture_teardown);
  g_test_add ("/ui/cs-solvers-listed", Fixture, NULL, fixture_setup, test_cs_solvers_listed,
              fixture_teardown);
  g_test_add ("/ui/phase-matches-cli", Fixture, NULL, fixture_setup, test_phase_matches_cli,
              fixture_teardown);
  g_test_add ("/ui/phase-stop", Fixture, NULL, fixture_setup, test_phase_stop,
              fixture_teardown);
  int status = g_test_run ();
  g_clear_object (&app);
  remove_dir (home);
  return status;
}
