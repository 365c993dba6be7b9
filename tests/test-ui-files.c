/* test-ui-files.c: real files in the app: the HDU and plane chooser, the PSF
 * from a star, the deblur of real images against sharpsky-cli, files dropped
 * on the window (suite ui; fixtures in test-ui.h). */
#include "test-ui.h"
#include "test-opens.h"
#include "ss-file-patterns.h"

/* Deblur mode builds its problem as sharpsky-cli does (sky, mirror padding
 * to an FFT-friendly size, crop): on the same input and settings both must
 * give the same image. */
/* sharpsky-cli, or NULL (with the test skipped) when it is not built. */
const char *
cli_or_skip (void)
{
  const char *cli = g_getenv ("SHARPSKY_CLI");
  if (cli != NULL && g_file_test (cli, G_FILE_TEST_IS_EXECUTABLE))
    return cli;
  g_test_skip ("sharpsky-cli is not built: nothing to compare the deblur with");
  return NULL;
}

/* "--psf=gaussian:FWHM" with every digit, so the CLI and the app agree. */
char *
gaussian_option (double fwhm)
{
  char text[G_ASCII_DTOSTR_BUF_SIZE];
  g_ascii_formatd (text, sizeof text, "%.17g", fwhm);
  return g_strdup_printf ("--psf=gaussian:%s", text);
}

/* Runs sharpsky-cli deblur on IN with the solve set_cli_deblur gives the
 * app, ITERATIONS iterations and EXTRA options (NULL-terminated; the PSF
 * among them); returns its output. */
SsImage *
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
void
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

/* A random part of the sample, W × H (each 64 to MAX_SIDE) at (X0, Y0),
 * written as F's part.fits: a "real" blurred image. Returns its path. */
static char *
write_sample_part (Fixture *f, GRand *rng, int max_side, int *w, int *h, int *x0, int *y0)
{
  g_autoptr (SsImage) image = read_sample ();
  *w = g_rand_int_range (rng, 64, max_side + 1);
  *h = g_rand_int_range (rng, 64, max_side + 1);
  *x0 = g_rand_int_range (rng, 0, image->width - *w);
  *y0 = g_rand_int_range (rng, 0, image->height - *h);
  g_autoptr (GError) error = NULL;
  g_autoptr (SsImage) part = ss_image_new (*w, *h, 1, &error);
  g_assert_no_error (error);
  for (int r = 0; r < *h; r++)
    memcpy (part->data + (gsize) r * *w, image->data + (gsize) (*y0 + r) * image->width + *x0,
            (gsize) *w * sizeof (float));
  char *in = g_build_filename (f->dir, "part.fits", NULL);
  g_assert_true (ss_fits_write (part, in, FALSE, NULL, &error));
  g_assert_no_error (error);
  return in;
}

/* What a comparison with sharpsky-cli starts from: a random part of the
 * sample (write_sample_part, each side up to MAX_SIDE) as the input, the
 * CLI, the random source that drew the part and the path the CLI's result
 * goes to. */
typedef struct {
  const char *cli;
  GRand *rng;
  char *in, *out;
  int w, h, x0, y0;
} SamplePart;

static void
sample_part_clear (SamplePart *p)
{
  g_clear_pointer (&p->rng, g_rand_free);
  g_clear_pointer (&p->in, g_free);
  g_clear_pointer (&p->out, g_free);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (SamplePart, sample_part_clear)

/* FALSE, the test skipped, without a display or the CLI. */
static gboolean
sample_part_begin (Fixture *f, int max_side, SamplePart *p)
{
  if (skip_without_display () || (p->cli = cli_or_skip ()) == NULL)
    return FALSE;
  p->rng = g_rand_new_with_seed (f->seed);
  p->in = write_sample_part (f, p->rng, max_side, &p->w, &p->h, &p->x0, &p->y0);
  p->out = g_build_filename (f->dir, "cli.fits", NULL);
  return TRUE;
}

/* The app's deblur of a random part of the sample, as a "real" blurred image,
 * with a Gaussian PSF equals sharpsky-cli's. */
static void
test_deblur_matches_cli (Fixture *f, gconstpointer data)
{
  g_auto (SamplePart) p = { 0 };
  if (!sample_part_begin (f, 128, &p))
    return;
  g_autoptr (GError) error = NULL;
  double fwhm = g_rand_double_range (p.rng, 1.5, 4.0);
  g_test_message ("%d×%d at (%d, %d), gaussian FWHM %.3f", p.w, p.h, p.x0, p.y0, fwhm);

  g_autofree char *psf = gaussian_option (fwhm);
  const char *extra[] = { psf, NULL };
  g_autoptr (SsImage) expected = cli_deblur (p.cli, p.in, p.out, 40, extra);

  g_assert_true (ss_window_open_path_sync (f->window, p.in, 30, &error));
  SsSettings s;
  ss_settings_init (&s);
  s.acquisition.psf.kind = SS_PSF_GAUSSIAN;
  s.acquisition.psf.fwhm = fwhm;
  assert_app_matches_cli (f, &s, 40, expected, "with a Gaussian PSF");
  /* The residual is plotted when there is no truth. */
  g_assert_cmpuint (ss_plot_get_n_points (ss_window_get_plot (f->window), 0), >=, 2);
  g_assert_null (ss_window_get_frame (f->window, SS_VIEW_ERROR));
}

/* A part of the sample with a bright star clipped around its brightest
 * pixel (a flat top, no card), a dead pixel and a hot one: the app, as it opens a real
 * image, leaves the clipped pixels out as the CLI's --saturation auto does,
 * and the dead and the hot one as the CLI does, gives the CLI's image and
 * says so in its banner; with the box unticked it gives --saturation
 * none's, the bad pixels still left out and said. */
static void
test_saturated_matches_cli (Fixture *f, gconstpointer data)
{
  g_auto (SamplePart) p = { 0 };
  if (!sample_part_begin (f, 128, &p))
    return;
  g_autoptr (GError) error = NULL;
  g_autoptr (SsImage) part = ss_fits_read (p.in, NULL, &error);
  g_assert_no_error (error);
  /* A bright star (FWHM 2.5, 50 times the part's own range), clipped at the
   * lowest of its brightest pixel's 3 × 3: a flat top of nine pixels at
   * least, far above the noise whatever part was drawn. */
  gsize n = (gsize) p.w * p.h, top = 0;
  float sky = (float) ss_median (part->data, n), range = 0.0f;
  for (gsize i = 0; i < n; i++)
    range = MAX (range, part->data[i] - sky);
  /* Dark: under 30% of the part's own range, before the star. */
  float dim = sky + 0.3f * range;
  double sx = g_rand_double_range (p.rng, 8, p.w - 8);
  double sy = g_rand_double_range (p.rng, 8, p.h - 8);
  double s2 = pow (2.5 / 2.3548200450309493, 2);
  for (int y = 0; y < p.h; y++)
    for (int x = 0; x < p.w; x++)
      part->data[(gsize) y * p.w + x]
        += (float) (50.0 * range * exp (-0.5 * ((x - sx) * (x - sx) + (y - sy) * (y - sy)) / s2));
  for (gsize i = 0; i < n; i++)
    top = part->data[i] > part->data[top] ? i : top;
  int tx = CLAMP ((int) (top % p.w), 1, p.w - 2), ty = CLAMP ((int) (top / p.w), 1, p.h - 2);
  float clip = INFINITY;
  for (int dy = -1; dy <= 1; dy++)
    for (int dx = -1; dx <= 1; dx++)
      clip = MIN (clip, part->data[(gsize) (ty + dy) * p.w + tx + dx]);
  gsize clipped = 0;
  for (gsize i = 0; i < n; i++)
    {
      part->data[i] = MIN (part->data[i], clip);
      clipped += part->data[i] == clip ? 1 : 0;
    }
  /* And a dead pixel and a hot one two pixels right of it, just under the
   * clip (a detector clips its hot pixels too), in a dark patch: the dead
   * one is cold and the hot one sharper than any blur, left out either way. */
  int dx, dy;
  gboolean dark = FALSE;
  for (int tries = 0; !dark; tries++)
    {
      g_assert_cmpint (tries, <, 100000);
      dx = g_rand_int_range (p.rng, 4, p.w - 6);
      dy = g_rand_int_range (p.rng, 4, p.h - 4);
      dark = TRUE;
      for (int y = dy - 3; y <= dy + 3; y++)
        for (int x = dx - 3; x <= dx + 5; x++)
          dark = dark && part->data[(gsize) y * p.w + x] < dim;
    }
  part->data[(gsize) dy * p.w + dx] = -32768.0f;
  part->data[(gsize) dy * p.w + dx + 2] = 0.9f * clip;
  g_assert_true (ss_fits_write (part, p.in, TRUE, NULL, &error));
  g_assert_no_error (error);
  g_test_message ("%d×%d at (%d, %d), %" G_GSIZE_FORMAT " pixels clipped at %g, one dead at "
                  "(%d, %d)", p.w, p.h, p.x0, p.y0, clipped, clip, dx, dy);

  g_autofree char *out_none = g_build_filename (f->dir, "cli-none.fits", NULL);
  const char *extra[] = { "--psf=gaussian:2.5", NULL };
  const char *extra_none[] = { "--psf=gaussian:2.5", "--saturation=none", NULL };
  g_autoptr (SsImage) expected = cli_deblur (p.cli, p.in, p.out, 40, extra);
  g_autoptr (SsImage) expected_none = cli_deblur (p.cli, p.in, out_none, 40, extra_none);

  g_assert_true (ss_window_open_path_sync (f->window, p.in, 30, &error));
  SsSettings s;
  ss_params_panel_get_settings (ss_window_get_params_panel (f->window), &s);
  g_assert_cmpint (s.saturation_mode, ==, SS_SATURATION_AUTO);
  ss_settings_clear (&s);
  for (int pass = 0; pass < 2; pass++)
    {
      ss_settings_init (&s);
      s.acquisition.psf.kind = SS_PSF_GAUSSIAN;
      s.acquisition.psf.fwhm = 2.5;
      s.saturation_mode = pass == 0 ? SS_SATURATION_AUTO : SS_SATURATION_NONE;
      set_cli_deblur (&s, 40);
      apply_settings (f, &s);
      ss_settings_clear (&s);
      g_action_group_activate_action (G_ACTION_GROUP (f->window), "dismiss-message", NULL);
      ss_window_run (f->window);
      g_assert_true (ss_window_wait_idle (f->window, 120));
      const char *message = ss_window_get_message (f->window);
      g_test_message ("banner: %s", message ? message : "(none)");
      g_autofree char *note = g_strdup_printf ("%" G_GSIZE_FORMAT " saturated pixels", clipped);
      g_assert_nonnull (message);
      g_assert_true ((strstr (message, note) != NULL) == (pass == 0));
      g_assert_nonnull (strstr (message, "1 cold pixels"));
      g_assert_nonnull (strstr (message, "hot pixels"));
      SsFrame *recovered = ss_window_get_frame (f->window, SS_VIEW_RECOVERED);
      g_assert_nonnull (recovered);
      double diff = relative_difference (recovered, pass == 0 ? expected : expected_none);
      double other = relative_difference (recovered, pass == 0 ? expected_none : expected);
      g_test_message ("app vs sharpsky-cli, saturation %s: relative difference %.3g (%.3g "
                      "against the other)", pass == 0 ? "auto" : "none", diff, other);
      g_assert_cmpfloat (diff, <, 1e-5);
      g_assert_cmpfloat (other, >, 1e-3);
    }
}

/* ---- a PSF file ------------------------------------------------------------ */

/* A TestFileAction: the window runs its settings to the end. */
static void
run_window_to_end (gpointer fixture)
{
  Fixture *f = fixture;
  ss_window_run (f->window);
  g_assert_true (ss_window_wait_idle (f->window, 120));
}

/* How many times PATH was opened while the window ran its settings to the
 * end (test-opens.h, as test-cli.c counts the CLI's opens). With
 * FILE_OPENS_READ, one ss_psf_read_file of PATH instead. */
#define FILE_OPENS_READ NULL
static int
count_psf_opens (Fixture *f, const char *path)
{
  if (f == FILE_OPENS_READ)
    return test_count_opens (path, test_read_psf_file, (gpointer) path);
  return test_count_opens (path, run_window_to_end, f);
}

/* Whether the banner holds both notes of the PSF write_noted_psf made. */
static void
assert_psf_notes_shown (Fixture *f)
{
  const char *message = ss_window_get_message (f->window);
  g_assert_nonnull (message);
  g_test_message ("banner: %s", message);
  g_assert_nonnull (strstr (message, "1 negative pixels"));
  g_assert_nonnull (strstr (message, "its centroid is (+1.88, +0.00) px"));
}

/* Settings S with the PSF file:PATH. */
static void
set_psf_file (SsSettings *s, const char *path)
{
  ss_psf_spec_clear (&s->acquisition.psf);
  s->acquisition.psf.kind = SS_PSF_FILE;
  s->acquisition.psf.path = g_strdup (path);
}

/* A deblur with a PSF file (9 x 9 Gaussian peaking 2 px right of its
 * centre pixel, a corner a little negative) reads the file once in the
 * solve, as one ss_psf_read_file does (counted as opens of the file; the
 * margin and the blur each read it before), shows the reading's two notes
 * (the negative pixel zeroed, the centroid 1.88 px off: the app showed
 * neither) in the banner, and gives sharpsky-cli's result with --psf
 * file:PATH. Run again on the same problem, the job is reused: no read,
 * the notes shown again; rewritten, the file is read again. A missing PSF
 * file fails the run with a message naming it. */
static void
test_psf_file_read_once (Fixture *f, gconstpointer data)
{
  g_auto (SamplePart) p = { 0 };
  if (!sample_part_begin (f, 96, &p))
    return;
  g_autoptr (GError) error = NULL;

  enum { S = 9 };
  g_autoptr (SsImage) stamp = ss_image_new (S, S, 1, &error);
  g_assert_no_error (error);
  for (int y = 0; y < S; y++)
    for (int x = 0; x < S; x++)
      stamp->data[y * S + x]
        = (float) exp (-(pow (x - (S / 2 + 2), 2) + pow (y - S / 2, 2)) / 4.0);
  stamp->data[0] = -0.01f;
  g_autofree char *psf = g_build_filename (f->dir, "psf.fits", NULL);
  g_assert_true (ss_fits_write (stamp, psf, FALSE, NULL, &error));
  g_assert_no_error (error);
  g_test_message ("%d×%d at (%d, %d)", p.w, p.h, p.x0, p.y0);

  g_autofree char *psf_option = g_strdup_printf ("--psf=file:%s", psf);
  const char *extra[] = { psf_option, NULL };
  g_autoptr (SsImage) expected = cli_deblur (p.cli, p.in, p.out, 30, extra);
  int one_reading = count_psf_opens (FILE_OPENS_READ, psf);
  g_assert_cmpint (one_reading, >, 0);

  g_assert_true (ss_window_open_path_sync (f->window, p.in, 30, &error));
  SsSettings s;
  ss_settings_init (&s);
  set_psf_file (&s, psf);
  set_cli_deblur (&s, 30);
  apply_settings (f, &s);
  int opens = count_psf_opens (f, psf);
  log_solve_status (f);
  g_test_message ("the solve: %d opens of the PSF file, %d for one reading", opens, one_reading);
  g_assert_cmpint (opens, ==, one_reading);
  assert_psf_notes_shown (f);
  SsFrame *recovered = ss_window_get_frame (f->window, SS_VIEW_RECOVERED);
  g_assert_nonnull (recovered);
  double diff = relative_difference (recovered, expected);
  g_test_message ("app vs sharpsky-cli with a PSF file: relative difference %.3g", diff);
  g_assert_cmpfloat (diff, <, 1e-5);

  g_assert_cmpint (count_psf_opens (f, psf), ==, 0);
  assert_psf_notes_shown (f);
  g_assert_nonnull (ss_window_get_frame (f->window, SS_VIEW_RECOVERED));

  /* The file rewritten under the same name (centred, nothing negative):
   * the next run reads it again, and its old notes are gone. */
  for (int y = 0; y < S; y++)
    for (int x = 0; x < S; x++)
      stamp->data[y * S + x] = (float) exp (-(pow (x - S / 2, 2) + pow (y - S / 2, 2)) / 4.0);
  g_assert_true (ss_fits_write (stamp, psf, TRUE, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpint (count_psf_opens (f, psf), ==, one_reading);
  const char *after_edit = ss_window_get_message (f->window);
  g_test_message ("banner after the edit: %s", after_edit ? after_edit : "(none)");
  g_assert_true (after_edit == NULL || strstr (after_edit, "negative") == NULL);

  g_autofree char *missing = g_build_filename (f->dir, "missing-psf.fits", NULL);
  ss_params_panel_get_settings (ss_window_get_params_panel (f->window), &s);
  set_psf_file (&s, missing);
  apply_settings (f, &s);
  ss_window_run (f->window);
  g_assert_true (ss_window_wait_idle (f->window, 60));
  const char *message = ss_window_get_message (f->window);
  g_assert_nonnull (message);
  g_test_message ("banner: %s", message);
  g_assert_nonnull (strstr (message, missing));
  g_assert_true (g_str_has_prefix (ss_window_get_status (f->window), "Failed"));
  g_assert_false (ss_window_is_running (f->window));
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

/* A PSF file of two images, as WebbPSF writes (oversampled first, then at
 * the detector's pixels): choosing it asks which HDU is the blur, the first
 * offered; the second chosen, the PSF is file:PATH[1], and the app's deblur
 * equals sharpsky-cli's with that name. */
static void
test_psf_file_hdu (Fixture *f, gconstpointer data)
{
  g_auto (SamplePart) p = { 0 };
  if (!sample_part_begin (f, 96, &p))
    return;
  enum { S = 9 };
  float wide[S * S], sharp[S * S];
  double width = g_rand_double_range (p.rng, 1.0, 2.5);
  for (int y = 0; y < S; y++)
    for (int x = 0; x < S; x++)
      {
        double r2 = pow (x - S / 2, 2) + pow (y - S / 2, 2);
        wide[y * S + x] = (float) exp (-r2 / (2 * 9.0));
        sharp[y * S + x] = (float) exp (-r2 / (2 * width * width));
      }
  g_autofree char *psf = g_build_filename (f->dir, "webbpsf.fits", NULL);
  fitsfile *fits = NULL;
  int status = 0;
  fits_create_diskfile (&fits, psf, &status);
  write_image_hdu (fits, "OVERSAMP", S, S, 1, wide, &status);
  write_image_hdu (fits, "DET_SAMP", S, S, 1, sharp, &status);
  fits_close_file (fits, &status);
  g_assert_cmpint (status, ==, 0);

  g_autofree char *named = g_strdup_printf ("%s[1]", psf);
  g_autofree char *psf_option = g_strdup_printf ("--psf=file:%s", named);
  const char *extra[] = { psf_option, NULL };
  g_autoptr (SsImage) expected = cli_deblur (p.cli, p.in, p.out, 30, extra);

  g_autoptr (GError) error = NULL;
  g_assert_true (ss_window_open_path_sync (f->window, p.in, 30, &error));
  SsSettings s;
  ss_settings_init (&s);
  set_psf_file (&s, p.in);   /* the PSF row on a file, as before the button is used */
  apply_settings (f, &s);
  SsParamsPanel *panel = ss_window_get_params_panel (f->window);
  ss_params_panel_choose_psf_file (panel, psf);
  SsHduChooser *chooser = ss_params_panel_get_psf_hdu_chooser (panel);
  g_assert_nonnull (chooser);
  int hdu = -1, plane = -1;
  ss_hdu_chooser_get_selection (chooser, &hdu, &plane);
  g_assert_cmpint (hdu, ==, 0);
  g_assert_true (ss_hdu_chooser_select (chooser, 1, 0));
  ss_hdu_chooser_accept (chooser);
  g_assert_true (ss_window_wait_idle (f->window, 30));
  g_assert_null (ss_params_panel_get_psf_hdu_chooser (panel));
  ss_params_panel_get_settings (panel, &s);
  g_assert_cmpint (s.acquisition.psf.kind, ==, SS_PSF_FILE);
  g_assert_cmpstr (s.acquisition.psf.path, ==, named);
  assert_app_matches_cli (f, &s, 30, expected, "--psf file:PATH[1]");

  /* A file of one image asks nothing. */
  g_autofree char *single = g_build_filename (f->dir, "psf1.fits", NULL);
  g_autoptr (SsImage) stamp = ss_image_new (S, S, 1, &error);
  memcpy (stamp->data, sharp, sizeof sharp);
  g_assert_true (ss_fits_write (stamp, single, FALSE, NULL, &error));
  ss_params_panel_choose_psf_file (panel, single);
  g_assert_null (ss_params_panel_get_psf_hdu_chooser (panel));
  ss_params_panel_get_settings (panel, &s);
  g_assert_cmpstr (s.acquisition.psf.path, ==, single);
  ss_settings_clear (&s);
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

/* The first spin button under ROOT (depth first), or NULL. */
static GtkSpinButton *
find_spin_button (GtkWidget *root)
{
  if (GTK_IS_SPIN_BUTTON (root))
    return GTK_SPIN_BUTTON (root);
  for (GtkWidget *child = gtk_widget_get_first_child (root); child != NULL;
       child = gtk_widget_get_next_sibling (child))
    {
      GtkSpinButton *found = find_spin_button (child);
      if (found != NULL)
        return found;
    }
  return NULL;
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
  chooser = ss_window_get_hdu_chooser (f->window);
  g_assert_nonnull (chooser);

  /* A plane typed and not yet entered (Open clicked straight after typing)
   * is the one opened. */
  g_assert_true (ss_hdu_chooser_select (chooser, 3, 0));
  GtkSpinButton *plane_spin = find_spin_button (GTK_WIDGET (chooser));
  g_assert_nonnull (plane_spin);
  int typed_plane = 1 + want_plane % 3;
  g_autofree char *typed = g_strdup_printf ("%d", typed_plane);
  gtk_editable_set_text (GTK_EDITABLE (plane_spin), typed);
  /* Open (the default button) clicked; gtk_widget_activate would click it
   * only after its pressed look's timeout. */
  GtkWidget *open = gtk_window_get_default_widget (GTK_WINDOW (chooser));
  g_assert_true (GTK_IS_BUTTON (open));
  g_signal_emit_by_name (open, "clicked");
  g_assert_true (ss_window_wait_idle (f->window, 30));
  g_assert_null (ss_window_get_hdu_chooser (f->window));
  assert_frame_is (ss_window_get_frame (f->window, SS_VIEW_ORIGINAL),
                   m.cube + (gsize) typed_plane * 24 * 20, 24, 20);
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

/* N_STARS places on a 160×120 field, each moved up to 5 px from a grid,
 * apart enough that their PSFs do not overlap. */
static void
jittered_star_places (GRand *rng, double xs[N_STARS], double ys[N_STARS])
{
  static const double grid_x[N_STARS] = { 30, 80, 130, 45, 115 };
  static const double grid_y[N_STARS] = { 30, 30, 30, 85, 85 };
  for (int k = 0; k < N_STARS; k++)
    {
      xs[k] = grid_x[k] + g_rand_double_range (rng, -5, 5);
      ys[k] = grid_y[k] + g_rand_double_range (rng, -5, 5);
    }
}

static void
test_psf_from_star (Fixture *f, gconstpointer data)
{
  if (skip_without_display ())
    return;
  g_autoptr (GRand) rng = g_rand_new_with_seed (f->seed);
  int w = 160, h = 120;
  double xs[N_STARS], ys[N_STARS];
  jittered_star_places (rng, xs, ys);
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

  /* A click on empty sky measures nothing, and says so: in the middle, 25
   * px and more from every star, and at the corner (5, 5), where the frame's
   * edge cuts the sky's ring (with seed 560731562 a noise spike there was
   * fitted as a star, FWHM 10.2 × 0.64 px, until the fit judged peaks
   * against the window's noise too: test-psf-fit's /psf-fit/star-at-corner). */
  static const int empty[][2] = { { 80, 60 }, { 5, 5 } };
  for (gsize i = 0; i < G_N_ELEMENTS (empty); i++)
    {
      g_assert_false (ss_window_fit_star_sync (f->window, empty[i][0], empty[i][1], 30, &error));
      g_assert_nonnull (error);
      g_test_message ("empty sky at (%d, %d): %s", empty[i][0], empty[i][1], error->message);
      g_clear_error (&error);
      g_assert_nonnull (ss_window_get_message (f->window));
    }

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
  double xs[N_STARS], ys[N_STARS];
  jittered_star_places (rng, xs, ys);
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
  g_assert_true (ss_psf_find_stars (image, &search, &combined, NULL, NULL, &error));
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

/* The number after the first HISTORY card of HEADER that starts with
 * PREFIX; NAN when there is none. */
static double
history_number (const SsHeader *header, const char *prefix)
{
  for (guint i = 0; i < header->cards->len; i++)
    {
      const char *card = g_ptr_array_index (header->cards, i);
      if (g_str_has_prefix (card, "HISTORY ") && g_str_has_prefix (card + 8, prefix))
        return g_ascii_strtod (card + 8 + strlen (prefix), NULL);
    }
  return NAN;
}

/* A real image opens on sharpsky-cli deblur's defaults: deblurred as it is,
 * the PSF measured on its stars, alpha from the noise, the solver for real
 * images. Run as it opened, the app gives the CLI's `deblur IN --psf auto
 * --alpha auto` image; then admm on the same job gives the CLI's `--solver
 * admm --alpha auto` image, with its own α in the export's HISTORY; the
 * sample still opens on the teaching demo. */
static void
test_real_image_defaults (Fixture *f, gconstpointer data)
{
  if (skip_without_display ())
    return;
  const char *cli = cli_or_skip ();
  if (cli == NULL)
    return;
  g_autoptr (GRand) rng = g_rand_new_with_seed (f->seed);
  double xs[N_STARS], ys[N_STARS];
  jittered_star_places (rng, xs, ys);
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
  g_assert_true (s.params.holdout);   /* as --alpha auto, and in its own box */

  /* Run as it opened, all the way (auto's candidates take no iteration
   * count: the CLI would run RL for --iters). */
  g_assert_cmpint (s.params.kind, ==, ss_solver_default_for_real_data ());
  s.backend = ui_backend ();
  gboolean counts = ss_solver_uses (ss_solver_info (s.params.kind), SS_PARAM_ITERATIONS);
  int asked = s.params.iterations;
  apply_settings (f, &s);
  ss_settings_clear (&s);
  ss_window_run (f->window);
  /* The status counts towards the iteration count only for a solver that
   * takes one (auto's candidates set their own). */
  g_assert_cmpint (ss_window_get_iteration_target (f->window), ==, counts ? asked : 0);
  g_assert_true (ss_window_wait_idle (f->window, 120));
  g_assert_null (ss_window_get_message (f->window));
  log_solve_status (f);
  SsFrame *recovered = ss_window_get_frame (f->window, SS_VIEW_RECOVERED);
  g_assert_nonnull (recovered);

  g_autofree char *out = g_build_filename (f->dir, "cli.fits", NULL);
  const char *argv[] = { cli, "deblur", in, "-o", out, "--psf=auto", "--alpha=auto",
                         ui_backend_option (), "--quiet", NULL };
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

  /* Another solver on the same problem reuses the job, and scales the
   * rule's α its own way, as --alpha auto does: admm takes 0.15 of it (it
   * was given the first solver's α, 6.7 times too large). */
  ss_params_panel_get_settings (panel, &s);
  ss_solve_params_set_defaults (&s.params, SS_SOLVER_ADMM_PRIOR);   /* as Compare's choice */
  s.params.iterations = 60;
  apply_settings (f, &s);
  ss_window_run (f->window);
  g_assert_true (ss_window_wait_idle (f->window, 120));
  g_assert_null (ss_window_get_message (f->window));
  log_solve_status (f);
  recovered = ss_window_get_frame (f->window, SS_VIEW_RECOVERED);
  g_assert_nonnull (recovered);
  const char *admm_argv[] = { cli, "deblur", in, "-o", out, "--force", "--psf=auto",
                              "--alpha=auto", "--solver=admm", "--iters=60",
                              ui_backend_option (), "--quiet", NULL };
  g_clear_pointer (&cli_out, g_free);
  g_clear_pointer (&cli_err, g_free);
  g_assert_true (g_spawn_sync (NULL, (char **) admm_argv, NULL, G_SPAWN_DEFAULT, NULL, NULL,
                               &cli_out, &cli_err, &status, &error));
  if (!g_spawn_check_wait_status (status, NULL))
    g_error ("sharpsky-cli failed: %s", cli_err);
  g_autoptr (SsImage) admm_expected = ss_fits_read (out, NULL, &error);
  g_assert_no_error (error);
  diff = relative_difference (recovered, admm_expected);
  g_test_message ("then admm vs sharpsky-cli --solver admm --alpha auto: %.3g", diff);
  g_assert_cmpfloat (diff, <, 1e-5);
  /* The export's HISTORY gives the α solved with (it gave the panel's). */
  g_autofree char *exported = g_build_filename (f->dir, "admm.fits", NULL);
  g_assert_true (ss_window_export_sync (f->window, SS_EXPORT_FITS, exported, NULL, FALSE, 30,
                                        &error));
  g_assert_no_error (error);
  g_autoptr (SsImage) written = ss_fits_read (exported, NULL, &error);
  g_assert_no_error (error);
  double app_alpha = history_number (written->header, "alpha = ");
  double cli_alpha = history_number (admm_expected->header, "deblur alpha=");
  g_test_message ("α: app %.9g, sharpsky-cli %.9g", app_alpha, cli_alpha);
  g_assert_cmpfloat (fabs (app_alpha / cli_alpha - 1), <, 1e-6);

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

/* A W x H PNG of PLANES planes (1: grey, 3: colour) of random pixels at PATH. */
static void
write_random_png (GRand *rng, const char *path, int w, int h, int planes)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (SsImage) image = ss_image_new (w, h, planes, &error);
  g_assert_no_error (error);
  for (gsize i = 0; i < (gsize) w * h * planes; i++)
    image->data[i] = (float) g_rand_double (rng);
  SsPngWriteOptions options;
  ss_png_write_options_init (&options);
  g_assert_true (ss_png_write (image, path, &options, FALSE, NULL, &error));
  g_assert_no_error (error);
}

/* Drops PATHS (N of them) on the window as a file manager does: through
 * its drop target's "drop" signal, with a GdkFileList; then waits for the
 * load. */
static void
drop_files (Fixture *f, const char *const *paths, guint n)
{
  GtkDropTarget *target = NULL;
  g_autoptr (GListModel) controllers = gtk_widget_observe_controllers (GTK_WIDGET (f->window));
  for (guint i = 0; i < g_list_model_get_n_items (controllers) && target == NULL; i++)
    {
      g_autoptr (GObject) controller = g_list_model_get_item (controllers, i);
      if (GTK_IS_DROP_TARGET (controller))
        target = GTK_DROP_TARGET (controller);
    }
  g_assert_nonnull (target);
  GSList *files = NULL;
  for (guint i = n; i-- > 0;)
    files = g_slist_prepend (files, g_file_new_for_path (paths[i]));
  GValue value = G_VALUE_INIT;
  g_value_init (&value, GDK_TYPE_FILE_LIST);
  g_value_take_boxed (&value, gdk_file_list_new_from_list (files));
  g_slist_free_full (files, g_object_unref);
  gboolean accepted = FALSE;
  g_signal_emit_by_name (target, "drop", &value, 10.0, 10.0, &accepted);
  g_value_unset (&value);
  g_assert_true (accepted);
  g_assert_true (ss_window_wait_idle (f->window, 30));
}

/* Several files dropped at once: the first opens, and the banner says the
 * others were not (they had vanished without a word). Oracle: the window's
 * path and the exact note, singular and plural; a colour image's own note
 * follows on its own line; a single file dropped says nothing. */
static void
test_drop_several_files (Fixture *f, gconstpointer data)
{
  if (skip_without_display ())
    return;
  g_autoptr (GRand) rng = g_rand_new_with_seed (f->seed);
  g_autofree char *colour = g_build_filename (f->dir, "colour.png", NULL);
  g_autofree char *grey = g_build_filename (f->dir, "grey.png", NULL);
  g_autofree char *other = g_build_filename (f->dir, "other.png", NULL);
  write_random_png (rng, colour, 24, 20, 3);
  write_random_png (rng, grey, 20, 24, 1);
  write_random_png (rng, other, 22, 22, 1);

  const char *three[] = { grey, colour, other };
  drop_files (f, three, 3);
  g_assert_cmpstr (ss_window_get_path (f->window), ==, grey);
  g_assert_cmpstr (ss_window_get_message (f->window), ==,
                   "Opened “grey.png”; Sharpsky opens one image at a time, so the other 2 "
                   "dropped files were not opened.");

  const char *two[] = { colour, grey };
  drop_files (f, two, 2);
  g_assert_cmpstr (ss_window_get_path (f->window), ==, colour);
  g_assert_cmpstr (ss_window_get_message (f->window), ==,
                   "Opened “colour.png”; Sharpsky opens one image at a time, so the other "
                   "dropped file was not opened.\n"
                   "colour image: working on the mean of its three planes (Ctrl+H picks one)");

  const char *one[] = { other };
  drop_files (f, one, 1);
  g_assert_cmpstr (ss_window_get_path (f->window), ==, other);
  g_assert_null (ss_window_get_message (f->window));
}

/* Whether a filter of SUFFIXES shows a file called NAME. */
static gboolean
suffixes_match (const char *const *suffixes, const char *name)
{
  g_autoptr (GtkFileFilter) filter = gtk_file_filter_new ();
  ss_file_filter_add_suffixes (filter, suffixes);
  g_autoptr (GFileInfo) info = g_file_info_new ();
  g_file_info_set_display_name (info, name);
  return gtk_filter_match (GTK_FILTER (filter), info);
}

/* The choosers show every name the engine takes, in any case: the export's
 * FITS filter exactly the names ss_output_format_from_name calls FITS, the
 * open dialog's those and fpack's .fz, which the reader opens too. */
static void
test_file_suffixes (void)
{
  const char *names[] = { "OUT.Fits", "a.fit", "a.FTS", "a.fits.gz", "a.fit.gz", "a.Fts.GZ",
                          "a.fits.fz", "a.FIT.fz", "a.fts.fz", "a.png", "a.gz", "a.png.gz",
                          "a.jpg", "fits" };
  for (guint i = 0; i < G_N_ELEMENTS (names); i++)
    {
      SsOutputFormat format = SS_OUTPUT_FORMAT_PNG;
      gboolean written = ss_output_format_from_name (names[i], &format, NULL)
                         && format != SS_OUTPUT_FORMAT_PNG;
      g_autofree char *lower = g_ascii_strdown (names[i], -1);
      gboolean fpack = g_str_has_suffix (lower, ".fz");
      g_test_message ("%s: written %d, fpack %d", names[i], written, fpack);
      g_assert_cmpint (suffixes_match (ss_fits_write_suffixes, names[i]), ==, written);
      g_assert_cmpint (suffixes_match (ss_fits_read_suffixes, names[i]), ==, written || fpack);
    }
  g_assert_true (suffixes_match (ss_png_suffixes, "A.PNG"));
  g_assert_true (suffixes_match (ss_csv_suffixes, "cells.Csv"));
}

/* Called by test-ui.c's main, in the suite's order. */
void
test_ui_add_file_tests (void)
{
  g_test_add_func ("/ui/file-suffixes", test_file_suffixes);
  g_test_add ("/ui/hdu-chooser", Fixture, NULL, fixture_setup, test_hdu_chooser,
              fixture_teardown);
  g_test_add ("/ui/psf-from-star", Fixture, NULL, fixture_setup, test_psf_from_star,
              fixture_teardown);
  g_test_add ("/ui/deblur-matches-cli", Fixture, NULL, fixture_setup, test_deblur_matches_cli,
              fixture_teardown);
  g_test_add ("/ui/saturated-matches-cli", Fixture, NULL, fixture_setup,
              test_saturated_matches_cli, fixture_teardown);
  g_test_add ("/ui/psf-file-read-once", Fixture, NULL, fixture_setup, test_psf_file_read_once,
              fixture_teardown);
  g_test_add ("/ui/psf-file-hdu", Fixture, NULL, fixture_setup, test_psf_file_hdu,
              fixture_teardown);
  g_test_add ("/ui/hdu-colour-matches-cli", Fixture, NULL, fixture_setup,
              test_hdu_colour_matches_cli, fixture_teardown);
  g_test_add ("/ui/real-image-defaults", Fixture, NULL, fixture_setup, test_real_image_defaults,
              fixture_teardown);
  g_test_add ("/ui/star-count-shown", Fixture, NULL, fixture_setup, test_star_count_shown,
              fixture_teardown);
  g_test_add ("/ui/png-channels", Fixture, NULL, fixture_setup, test_png_channels,
              fixture_teardown);
  g_test_add ("/ui/drop-several-files", Fixture, NULL, fixture_setup, test_drop_several_files,
              fixture_teardown);
}
