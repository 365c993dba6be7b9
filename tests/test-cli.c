/* test-cli.c: the sharpsky-cli executable, run as a user would (suite cli).
 *
 * SHARPSKY_CLI is the built binary, SHARPSKY_DATA the data directory. Every
 * test writes its inputs (random star fields, broken files) into a fresh
 * temporary directory with cfitsio or plain writes, runs the binary with
 * g_spawn_sync and checks exit status, messages, JSON numbers and files.
 * Random inputs come from g_test_rand_int, so GLib prints the seed that
 * reproduces a failure (--seed).
 */
#include "test-cli-run.h"
#include "test-opens.h"
#include "ss-noise.h"

#include <locale.h>
#include <signal.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <unistd.h>

#define SIDE 64

static char *
write_star_field (const Fixture *f, const char *name, float **pixels)
{
  char *path = temp_path (f, name);
  float *data = random_star_field (SIDE, SIDE);
  write_fits_float (path, data, SIDE, SIDE);
  if (pixels)
    *pixels = data;
  else
    g_free (data);
  return path;
}

static double
mse_of (const float *a, const float *b, gsize n)
{
  double sum = 0;
  for (gsize i = 0; i < n; i++)
    sum += ((double) a[i] - b[i]) * ((double) a[i] - b[i]);
  return sum / n;
}

/* ---- reading the JSON output ------------------------------------------- */

/* The line of OUT holding "type":"TYPE" (the last one). */
static char *
json_line (const char *out, const char *type)
{
  g_autofree char *needle = g_strdup_printf ("\"type\":\"%s\"", type);
  g_auto (GStrv) lines = g_strsplit (out, "\n", -1);
  char *found = NULL;
  for (int i = 0; lines[i] != NULL; i++)
    if (strstr (lines[i], needle) != NULL)
      {
        g_free (found);
        found = g_strdup (lines[i]);
      }
  g_assert_nonnull (found);
  g_assert_true (g_str_has_prefix (found, "{") && g_str_has_suffix (found, "}"));
  return found;
}

static int
json_count_lines (const char *out, const char *type)
{
  g_autofree char *needle = g_strdup_printf ("\"type\":\"%s\"", type);
  int count = 0;
  for (const char *p = strstr (out, needle); p != NULL; p = strstr (p + 1, needle))
    count++;
  return count;
}

/* The number KEY holds in LINE; NAN for null. Fails the test when absent. */
static double
json_number (const char *line, const char *key)
{
  g_autofree char *pattern = g_strdup_printf ("\"%s\":(null|-?[0-9][0-9.eE+-]*)[,}]", key);
  g_autoptr (GRegex) regex = g_regex_new (pattern, 0, 0, NULL);
  g_autoptr (GMatchInfo) match = NULL;
  if (!g_regex_match (regex, line, 0, &match))
    g_error ("no number \"%s\" in %s", key, line);
  g_autofree char *text = g_match_info_fetch (match, 1);
  return g_str_equal (text, "null") ? NAN : g_ascii_strtod (text, NULL);
}

static void
assert_json_string (const char *line, const char *key, const char *value)
{
  g_autofree char *member = g_strdup_printf ("\"%s\":\"%s\"", key, value);
  if (strstr (line, member) == NULL)
    g_error ("no %s in %s", member, line);
}

/* The member names of the JSON object LINE, in order: the names at the
 * object's own level (not those of a nested object), escapes left as
 * written. Fails the test when LINE's brackets do not balance. */
static GPtrArray *
json_keys (const char *line)
{
  GPtrArray *keys = g_ptr_array_new_with_free_func (g_free);
  int depth = 0;
  gboolean expect_key = FALSE;
  for (const char *p = line; *p != '\0'; p++)
    {
      if (*p == '"')
        {
          const char *start = ++p;
          while (*p != '\0' && *p != '"')
            p += (*p == '\\' && p[1] != '\0') ? 2 : 1;
          g_assert_true (*p == '"');
          if (depth == 1 && expect_key)
            g_ptr_array_add (keys, g_strndup (start, p - start));
          expect_key = FALSE;
        }
      else if (*p == '{' || *p == '[')
        expect_key = ++depth == 1 && *p == '{';
      else if (*p == '}' || *p == ']')
        depth--;
      else if (*p == ',' && depth == 1)
        expect_key = TRUE;
    }
  g_assert_cmpint (depth, ==, 0);
  return keys;
}

/* Every JSON line of OUT names each member once: a reader keeps one of
 * two values of a repeated name, and which one is up to the reader. */
static void
assert_json_keys_once (const char *out)
{
  g_auto (GStrv) lines = g_strsplit (out, "\n", -1);
  for (int i = 0; lines[i] != NULL; i++)
    {
      if (!g_str_has_prefix (lines[i], "{"))
        continue;
      g_autoptr (GPtrArray) keys = json_keys (lines[i]);
      g_autoptr (GHashTable) seen = g_hash_table_new (g_str_hash, g_str_equal);
      for (guint k = 0; k < keys->len; k++)
        if (!g_hash_table_add (seen, keys->pdata[k]))
          g_error ("\"%s\" twice in %s", (char *) keys->pdata[k], lines[i]);
    }
}

/* Whether LINE has a member KEY. */
static gboolean
json_has (const char *line, const char *key)
{
  g_autofree char *member = g_strdup_printf ("\"%s\":", key);
  return strstr (line, member) != NULL;
}

/* ---- bad input checks -------------------------------------------------- */

/* A refusal: the right status, one "sharpsky-cli: " line naming WHAT, no crash. */
static void
assert_refused (const CliRun *run, int status, const char *what)
{
  g_assert_cmpint (run->status, ==, status);
  g_assert_true (g_str_has_prefix (run->err, "sharpsky-cli: "));
  if (what != NULL && strstr (run->err, what) == NULL)
    g_error ("stderr does not name '%s': %s", what, run->err);
  /* The message is one line (notes may precede it, each its own line). */
  g_auto (GStrv) lines = g_strsplit (g_strstrip (run->err), "\n", -1);
  for (int i = 0; lines[i] != NULL; i++)
    g_assert_true (g_str_has_prefix (lines[i], "sharpsky-cli: "));
}

static void
assert_absent (const char *path)
{
  if (g_file_test (path, G_FILE_TEST_EXISTS))
    g_error ("%s exists but should not", path);
}

/* ---- tests ------------------------------------------------------------- */

/* run on a random star field beats the measured data, and its baseline
 * agrees with the MSE of the measurement written by simulate (the oracle is
 * the file's pixels, compared here with the truth). */
static void
test_run_beats_measured_data (Fixture *f, gconstpointer data)
{
  if (!cli_available ())
    return;
  g_autofree float *truth = NULL;
  g_autofree char *truth_path = write_star_field (f, "truth.fits", &truth);
  g_autofree char *measured_path = temp_path (f, "measured.fits");
  g_autofree char *seed = g_strdup_printf ("%u", g_test_rand_int ());

  const char *common[] = { "--psf", "box:5", "--ratio", "1", "--sensing", "none", "--noise",
                           "0.01", "--seed", seed };
  CliRun run = RUN_CLI ("run", truth_path, common[0], common[1], common[2], common[3],
                        common[4], common[5], common[6], common[7], common[8], common[9],
                        "--iters", "100", "--alpha", "1e-3", "--nonneg", "--backend", "cpu",
                        "--json");
  g_assert_cmpint (run.status, ==, 0);
  g_autofree char *summary = json_line (run.out, "summary");
  double mse = json_number (summary, "mse");
  double baseline = json_number (summary, "baseline_mse");
  assert_json_string (summary, "solver", "cpadmm");
  assert_json_string (summary, "backend", "cpu");
  g_assert_cmpfloat (json_number (summary, "width"), ==, SIDE);
  g_assert_cmpfloat (json_number (summary, "iterations"), ==, 100);
  g_assert_true (isfinite (mse) && isfinite (baseline));
  g_assert_cmpint (json_count_lines (run.out, "report"), >=, 10);
  cli_run_clear (&run);

  RUN_CLI_OK ("simulate", truth_path, "-o", measured_path, common[0], common[1], common[2],
              common[3], common[4], common[5], common[6], common[7], common[8], common[9]);
  long w, h;
  g_autofree float *measured = read_fits_float (measured_path, &w, &h, NULL);
  g_assert_cmpint (w, ==, SIDE);
  double measured_mse = mse_of (measured, truth, (gsize) w * h);

  /* Tolerance: the file is float32 of the same values (scale 1), so the
   * two baselines agree to float rounding. */
  g_assert_cmpfloat_with_epsilon (baseline / measured_mse, 1.0, 1e-5);
  g_test_message ("recovered mse %.4g, measured data %.4g", mse, measured_mse);
  g_assert_cmpfloat (mse, <, 0.5 * measured_mse);
}

/* With compression (ratio 0.5, circulant sensing) the recovery still beats
 * the trivial estimate 0, whose MSE is the truth's mean square. */
static void
test_run_compressed (Fixture *f, gconstpointer data)
{
  if (!cli_available ())
    return;
  g_autofree float *truth = NULL;
  g_autofree char *truth_path = write_star_field (f, "truth.fits", &truth);
  CliRun run = RUN_CLI ("run", truth_path, "--iters", "200", "--nonneg", "--backend", "cpu",
                        "--json", "--seed", "7");
  g_assert_cmpint (run.status, ==, 0);
  g_autofree char *summary = json_line (run.out, "summary");
  g_assert_cmpfloat (json_number (summary, "ratio"), ==, 0.5);
  g_assert_cmpfloat (json_number (summary, "observed"), ==, SIDE * SIDE / 2);
  g_assert_true (isnan (json_number (summary, "baseline_mse")));
  g_autofree float *zero_image = g_new0 (float, SIDE * SIDE);
  double trivial = mse_of (zero_image, truth, SIDE * SIDE);
  g_assert_cmpfloat (json_number (summary, "mse"), <, 0.2 * trivial);
  cli_run_clear (&run);
}

/* simulate then deblur reproduces run's MSE with the same seed, and the
 * written image agrees with the MSE deblur reports and keeps the header; a
 * recording whose PSF cannot be built fails with exit 1. */
static void
test_round_trip (Fixture *f, gconstpointer data)
{
  if (!cli_available ())
    return;
  g_autofree float *truth = NULL;
  g_autofree char *truth_path = write_star_field (f, "truth.fits", &truth);
  g_autofree char *measured_path = temp_path (f, "measured.fits");
  g_autofree char *out_path = temp_path (f, "recovered.fits");
  g_autofree char *seed = g_strdup_printf ("%u", g_test_rand_int ());

  CliRun run = RUN_CLI ("run", truth_path, "--psf", "box:5", "--ratio", "0.5", "--noise",
                        "0.01", "--seed", seed, "--iters", "100", "--nonneg", "--backend", "cpu",
                        "--json");
  g_assert_cmpint (run.status, ==, 0);
  g_autofree char *run_summary = json_line (run.out, "summary");
  double run_mse = json_number (run_summary, "mse");
  cli_run_clear (&run);

  RUN_CLI_OK ("simulate", truth_path, "-o", measured_path, "--psf", "box:5", "--ratio", "0.5",
              "--noise", "0.01", "--seed", seed);

  run = RUN_CLI ("deblur", measured_path, "-o", out_path, "--truth", truth_path, "--iters", "100",
                 "--nonneg", "--backend", "cpu", "--json");
  g_assert_cmpint (run.status, ==, 0);
  g_autofree char *summary = json_line (run.out, "summary");
  double deblur_mse = json_number (summary, "mse");
  cli_run_clear (&run);

  /* Tolerance 1e-6 relative: the same operator and data (scale 1, so the
   * float32 file holds y exactly); only FFT plan choices may differ. */
  g_test_message ("run mse %.9g, deblur mse %.9g", run_mse, deblur_mse);
  g_assert_cmpfloat_with_epsilon (deblur_mse / run_mse, 1.0, 1e-6);

  long w, h;
  g_autofree float *recovered = read_fits_float (out_path, &w, &h, NULL);
  g_assert_cmpint (w, ==, SIDE);
  g_assert_cmpint (h, ==, SIDE);
  /* Tolerance 1e-4: the file's MSE is recomputed here from float32 pixels. */
  g_assert_cmpfloat_with_epsilon (mse_of (recovered, truth, SIDE * SIDE) / deblur_mse, 1.0, 1e-4);

  g_autofree char *header = read_fits_header (out_path);
  g_assert_nonnull (strstr (header, "test stars"));
  g_assert_nonnull (strstr (header, "HISTORY sharpsky-cli"));
  g_assert_nonnull (strstr (header, "solver=cpadmm"));
  g_assert_nonnull (strstr (header, "hdu=first-image plane=all"));   /* which image was read */
  g_assert_null (strstr (header, "SS_PSF"));    /* the result is not a measurement */
  g_autofree char *measured_header = read_fits_header (measured_path);
  g_assert_nonnull (strstr (measured_header, "SS_PSF"));
  g_assert_nonnull (strstr (measured_header, "SS_SCALE"));

  /* A recording whose operator cannot be built is the file's failure
   * (exit 1), not a bad command line, and names the reason. */
  fitsfile *fits = NULL;
  int status = 0;
  fits_open_file (&fits, measured_path, READWRITE, &status);
  fits_update_key_str (fits, "SS_PSF", "box:500", NULL, &status);
  fits_close_file (fits, &status);
  test_check_cfitsio (status);
  g_remove (out_path);
  run = RUN_CLI ("deblur", measured_path, "-o", out_path);
  assert_refused (&run, 1, "larger than the image");
  assert_absent (out_path);
  cli_run_clear (&run);
}

/* A real image with blank (NaN) pixels: they are counted, left out of the
 * data term and filled in the result, which has no NaN left. */
static void
test_blank_pixels (Fixture *f, gconstpointer data)
{
  if (!cli_available ())
    return;
  g_autofree char *in_path = temp_path (f, "blanks.fits");
  g_autofree char *out_path = temp_path (f, "out.fits");
  g_autofree float *pixels = random_star_field (SIDE, SIDE);
  int blanks = g_test_rand_int_range (1, 200);
  for (int b = 0; b < blanks; b++)
    pixels[g_test_rand_int_range (0, SIDE * SIDE)] = NAN;
  int counted = 0;
  for (gsize i = 0; i < SIDE * SIDE; i++)
    counted += isnan (pixels[i]) ? 1 : 0;
  write_fits_float (in_path, pixels, SIDE, SIDE);

  /* Periodic: no padding, so exactly the blanks are unobserved. */
  CliRun run = RUN_CLI ("deblur", in_path, "-o", out_path, "--psf", "gaussian:2", "--iters",
                        "50", "--boundary", "periodic", "--json");
  g_assert_cmpint (run.status, ==, 0);
  g_assert_nonnull (strstr (run.err, "blank"));   /* the warning */
  g_autofree char *summary = json_line (run.out, "summary");
  g_assert_cmpfloat (json_number (summary, "blank_pixels"), ==, counted);
  g_assert_cmpfloat (json_number (summary, "observed"), ==, SIDE * SIDE - counted);
  g_assert_cmpfloat (json_number (summary, "padded_width"), ==, SIDE);
  g_assert_true (isnan (json_number (summary, "mse")));   /* null without a truth */
  /* RL, the default with --iters, takes no nonneg (its iterates are
   * non-negative by construction) and its summary gives none; the default
   * constraint on real data is json-keys-once's. */
  assert_json_string (summary, "solver", "rl");
  g_assert_false (json_has (summary, "nonneg"));
  cli_run_clear (&run);

  long w, h;
  g_autofree float *recovered = read_fits_float (out_path, &w, &h, NULL);
  for (gsize i = 0; i < (gsize) w * h; i++)
    g_assert_true (isfinite (recovered[i]));
  g_remove (out_path);

  /* Mirror (the default): solved on a larger frame, cropped back. */
  run = RUN_CLI ("deblur", in_path, "-o", out_path, "--psf", "gaussian:2", "--iters", "50",
                 "--json", "--allow-negative");
  g_assert_cmpint (run.status, ==, 0);
  g_free (summary);
  summary = json_line (run.out, "summary");
  assert_json_string (summary, "boundary", "mirror");
  g_assert_cmpfloat (json_number (summary, "padded_width"), >, SIDE);
  g_assert_cmpfloat (json_number (summary, "observed"), <=,
                     json_number (summary, "padded_width")
                     * json_number (summary, "padded_height") - counted);
  /* RL again: --allow-negative changes nothing it takes, so no nonneg. */
  g_assert_false (json_has (summary, "nonneg"));
  /* A few blanks are a note; most of the frame blank is a warning (below). */
  g_assert_null (strstr (run.err, "warning"));
  cli_run_clear (&run);
  g_autofree float *mirrored = read_fits_float (out_path, &w, &h, NULL);
  g_assert_cmpint (w, ==, SIDE);
  g_assert_cmpint (h, ==, SIDE);
  for (gsize i = 0; i < (gsize) w * h; i++)
    g_assert_true (isfinite (mirrored[i]));
  g_remove (out_path);
  for (gsize i = 0; i < SIDE * SIDE; i++)
    if (g_test_rand_double () < 0.7)
      pixels[i] = NAN;
  write_fits_float (in_path, pixels, SIDE, SIDE);
  run = RUN_CLI ("deblur", in_path, "-o", out_path, "--psf", "gaussian:2", "--iters", "20",
                 "--force");
  g_assert_cmpint (run.status, ==, 0);
  g_assert_nonnull (strstr (run.err, "warning"));
  g_assert_nonnull (strstr (run.err, "most of the image is filled in"));
  cli_run_clear (&run);
}

/* A field of faint stars and one bright star, blurred by a Gaussian of
 * FWHM 3 (sampled at the pixels), on a sky of 100 with noise of 2, the
 * bright star clipped at CLIP: *FLUX is its light, *CX and *CY its place. */
static float *
clipped_star_field (int side, double clip, double *flux, double *cx, double *cy)
{
  gsize n = (gsize) side * side;
  float *data = g_new (float, n);
  for (gsize i = 0; i < n; i++)
    data[i] = (float) (100.0 + 2.0 * test_rand_normal ());
  double s2 = pow (3.0 / 2.3548, 2);
  for (int k = 0; k < 10; k++)
    {
      gboolean bright = k == 0;
      double x0 = bright ? side / 2 + g_test_rand_double_range (-4, 4)
                         : g_test_rand_double_range (4, side - 4);
      double y0 = bright ? side / 2 + g_test_rand_double_range (-4, 4)
                         : g_test_rand_double_range (4, side - 4);
      double light = bright ? g_test_rand_double_range (3e5, 5e5)
                            : g_test_rand_double_range (200, 2000);
      if (bright)
        {
          *flux = light;
          *cx = x0;
          *cy = y0;
        }
      for (int y = 0; y < side; y++)
        for (int x = 0; x < side; x++)
          data[(gsize) y * side + x] += (float) (light / (2 * G_PI * s2)
                                                 * exp (-0.5 * ((x - x0) * (x - x0)
                                                                + (y - y0) * (y - y0)) / s2));
    }
  for (gsize i = 0; i < n; i++)
    data[i] = (float) MIN (data[i], clip);
  return data;
}

/* The light of DATA above a sky of 100 within 6 px of (CX, CY). */
static double
light_near (const float *data, int side, double cx, double cy)
{
  double sum = 0;
  for (int y = 0; y < side; y++)
    for (int x = 0; x < side; x++)
      if ((x - cx) * (x - cx) + (y - cy) * (y - cy) <= 36.0)
        sum += data[(gsize) y * side + x] - 100.0;
  return sum;
}

/* A star the detector clipped: its flat core, at the header's SATURATE or,
 * without the card, found as a flat top at the maximum, is left out of the
 * data term, and Richardson–Lucy then gives back more of the star's light
 * (the oracle: the light put in) than with the core in the fit, which
 * cannot explain a flat top; --saturation none keeps it, a level given is
 * taken, and the output's HISTORY says what was left out; the output has
 * no SATURATE card, and HISTORY says it was removed. --psf auto
 * takes the same level: a star under it is fitted. */
static void
test_saturated_star (Fixture *f, gconstpointer data)
{
  if (!cli_available ())
    return;
  const int side = 64;
  const double clip = 8000.0;
  double flux, cx, cy;
  g_autofree float *pixels = clipped_star_field (side, clip, &flux, &cx, &cy);
  gsize clipped = 0;
  for (gsize i = 0; i < (gsize) side * side; i++)
    clipped += pixels[i] >= clip ? 1 : 0;
  /* Light 3e5 over 2π s² peaks at 2.9e4 or more: over the clip within 2.05 px
   * of the centre, 9 pixels or more wherever it falls (at 2e5, 1.7 px: 8 on
   * some draws). */
  g_assert_cmpuint (clipped, >=, 9);
  g_autofree char *in_path = temp_path (f, "clipped.fits");
  g_autofree char *bare_path = temp_path (f, "clipped-bare.fits");
  write_fits_float (bare_path, pixels, side, side);
  write_fits_float (in_path, pixels, side, side);
  fitsfile *fits = NULL;
  int status = 0;
  fits_open_file (&fits, in_path, READWRITE, &status);
  fits_update_key_dbl (fits, "SATURATE", clip, -9, "ADU", &status);
  fits_close_file (fits, &status);
  test_check_cfitsio (status);

  struct {
    const char *input, *saturation, *source;
    gsize expected;
    double light;
  } runs[] = {
    { in_path, NULL, "the header's SATURATE", clipped, 0 },
    { bare_path, NULL, "a flat top at the maximum", clipped, 0 },
    { in_path, "none", NULL, 0, 0 },
  };
  for (gsize r = 0; r < G_N_ELEMENTS (runs); r++)
    {
      g_autofree char *out_path = temp_path (f, "star-out.fits");
      const char *args[] = { "deblur", runs[r].input, "-o", out_path, "--force", "--psf",
                             "gaussian:3", "--solver", "rl", "--iters", "600", "--json",
                             runs[r].saturation ? "--saturation" : NULL, runs[r].saturation,
                             NULL };
      CliRun run = run_cli_argv (args);
      g_assert_cmpint (run.status, ==, 0);
      g_autofree char *summary = json_line (run.out, "summary");
      g_assert_cmpfloat (json_number (summary, "saturated_pixels"), ==, runs[r].expected);
      if (runs[r].source != NULL)
        {
          g_assert_cmpfloat (json_number (summary, "saturation"), ==, clip);
          assert_json_string (summary, "saturation_source", runs[r].source);
        }
      cli_run_clear (&run);
      long w, h;
      g_autofree float *out = read_fits_float (out_path, &w, &h, NULL);
      runs[r].light = light_near (out, side, cx, cy);
      g_autofree char *header = read_fits_header (out_path);
      g_assert_true ((strstr (header, "saturation=") != NULL) == (runs[r].expected > 0));
      /* The result's cores go above the input's SATURATE: the card goes,
       * and HISTORY says so. */
      g_assert_null (strstr (header, "SATURATE="));
      g_assert_true ((strstr (header, "SATURATE = 8000") != NULL) == (runs[r].input == in_path));
    }
  double input = light_near (pixels, side, cx, cy);
  g_test_message ("star's light %.4g: input %.4g, core left out %.4g (flat top %.4g), "
                  "core fitted %.4g", flux, input, runs[0].light, runs[1].light, runs[2].light);
  /* Over 150 draws: 82-100% of the light with the core left out, at most
   * 78% with it fitted, 11 points apart at the closest. */
  g_assert_cmpfloat (runs[0].light, >=, 0.75 * flux);
  g_assert_cmpfloat (runs[0].light - runs[2].light, >, 0.05 * flux);
  g_assert_cmpfloat (fabs (runs[0].light - runs[1].light), <=, 1e-3 * flux);

  /* A level given: every pixel at or above it, whatever the header says. */
  g_autofree char *out_path = temp_path (f, "star-level.fits");
  CliRun run = RUN_CLI ("deblur", in_path, "-o", out_path, "--psf", "gaussian:3", "--solver",
                        "rl", "--iters", "20", "--json", "--saturation", "4000");
  g_assert_cmpint (run.status, ==, 0);
  g_autofree char *summary = json_line (run.out, "summary");
  gsize above = 0;
  for (gsize i = 0; i < (gsize) side * side; i++)
    above += pixels[i] >= 4000.0 ? 1 : 0;
  g_assert_cmpfloat (json_number (summary, "saturated_pixels"), ==, above);
  assert_json_string (summary, "saturation_source", "the level given");
  cli_run_clear (&run);
  run = RUN_CLI ("deblur", in_path, "-o", out_path, "--psf", "gaussian:3", "--saturation",
                 "high", "--force");
  assert_refused (&run, 2, "--saturation");
  cli_run_clear (&run);
  /* direct-fft cannot leave pixels out: it solves with them, as before, and
   * says so. */
  run = RUN_CLI ("deblur", in_path, "-o", out_path, "--psf", "gaussian:3", "--solver",
                 "direct-fft", "--alpha", "auto", "--json", "--force");
  g_assert_cmpint (run.status, ==, 0);
  g_assert_nonnull (strstr (run.err, "stay in the fit"));
  g_free (summary);
  summary = json_line (run.out, "summary");
  g_assert_cmpfloat (json_number (summary, "saturated_pixels"), ==, 0);
  cli_run_clear (&run);
  /* --psf auto fits the stars the data term keeps: six isolated stars
   * peaking at 3000 are fitted, and none under --saturation 2000. */
  g_autofree float *six = g_new (float, side * side);
  for (gsize i = 0; i < (gsize) side * side; i++)
    six[i] = (float) (100.0 + 2.0 * test_rand_normal ());
  double s2 = pow (3.0 / 2.3548, 2);
  for (int k = 0; k < 6; k++)
    {
      double x0 = 12 + 20 * (k % 3) + g_test_rand_double_range (-1, 1);
      double y0 = 16 + 32 * (k / 3) + g_test_rand_double_range (-1, 1);
      for (int y = 0; y < side; y++)
        for (int x = 0; x < side; x++)
          six[y * side + x] += (float) (3000.0 * exp (-0.5 * ((x - x0) * (x - x0)
                                                             + (y - y0) * (y - y0)) / s2));
    }
  g_autofree char *six_path = temp_path (f, "six.fits");
  write_fits_float (six_path, six, side, side);
  run = RUN_CLI ("deblur", six_path, "-o", out_path, "--psf", "auto", "--solver", "rl",
                 "--iters", "5", "--force", "--quiet");
  g_assert_cmpint (run.status, ==, 0);
  cli_run_clear (&run);
  run = RUN_CLI ("deblur", six_path, "-o", out_path, "--psf", "auto", "--solver", "rl",
                 "--iters", "5", "--force", "--saturation", "2000", "--quiet");
  assert_refused (&run, 1, "below saturation 2e+03");
  cli_run_clear (&run);
  /* A level under every pixel would leave nothing to fit: said, not solved. */
  run = RUN_CLI ("deblur", in_path, "-o", out_path, "--psf", "gaussian:3", "--saturation",
                 "-5", "--force");
  assert_refused (&run, 2, "clips every pixel");
  cli_run_clear (&run);
}

/* A bad-pixel flag (-3e38, 1e30) or an infinity in a real image is a blank,
 * with a note: the result is finite and within the data's range (one flag
 * set the scale for the whole image and gave NaN, -3e38 or infinities
 * everywhere, exit 0). A solve that still diverges (the inverse filter of a
 * box, whose transfer has zeros, at an alpha below float's smallest normal)
 * writes nothing and says so, exit 1: on the CPU, since a GPU flushes that
 * alpha, a subnormal float, to 0 and leaves the transfer's zeros out. */
static void
test_flag_pixels (Fixture *f, gconstpointer data)
{
  if (!cli_available ())
    return;
  g_autofree float *pixels = random_star_field (SIDE, SIDE);
  const float flags[] = { -3e38f, 1e30f, INFINITY };
  int planted = g_test_rand_int_range (1, 4);
  for (int k = 0; k < planted; k++)
    {
      gsize at = (gsize) g_test_rand_int_range (0, SIDE * SIDE);
      /* In the sky, so the field's top stays 1, and on no flag planted. */
      while (pixels[at] > 0.05f || !(pixels[at] > -1e30f))
        at = (at + 7) % (SIDE * SIDE);
      pixels[at] = flags[k];
    }
  g_autofree char *in_path = temp_path (f, "flagged.fits");
  g_autofree char *out_path = temp_path (f, "flagged-out.fits");
  write_fits_float (in_path, pixels, SIDE, SIDE);
  const char *solvers[] = { "rl", "alm", "admm" };
  for (gsize s = 0; s < G_N_ELEMENTS (solvers); s++)
    {
      CliRun run = RUN_CLI ("deblur", in_path, "-o", out_path, "--force", "--psf", "gaussian:2",
                            "--solver", solvers[s], "--alpha", "auto", "--json");
      g_assert_cmpint (run.status, ==, 0);
      g_assert_nonnull (strstr (run.err, "flag pixels"));
      g_autofree char *summary = json_line (run.out, "summary");
      g_assert_cmpfloat (json_number (summary, "blank_pixels"), ==, planted);
      g_assert_cmpfloat (json_number (summary, "scale"), ==, 1.0);
      cli_run_clear (&run);
      long w, h;
      g_autofree float *out = read_fits_float (out_path, &w, &h, NULL);
      for (gsize i = 0; i < (gsize) w * h; i++)
        {
          g_assert_true (isfinite (out[i]));
          g_assert_cmpfloat (fabsf (out[i]), <, 100.0f);
        }
    }

  g_remove (out_path);
  g_autofree char *clean_path = write_star_field (f, "clean.fits", NULL);
  CliRun run = RUN_CLI ("deblur", clean_path, "-o", out_path, "--psf", "box:4", "--boundary",
                        "periodic", "--solver", "direct-fft", "--alpha", "1e-45", "--quiet",
                        "--backend", "cpu");
  assert_refused (&run, 1, "diverged");
  assert_absent (out_path);
  cli_run_clear (&run);
}

/* A dead pixel (-32768, a flag written as data, or the bias) in a real
 * image is left out as cold (ss-bad-pixels.h): the default's result, RL's,
 * is the clean image's but near that pixel, and non-negative (one such
 * pixel set RL's offset for the whole image: a result shifted under the
 * sky with a crater of -1317, exit 0); --allow-negative keeps it in the
 * fit. RL runs a fixed count here: its hold-out stop reads every 5
 * iterations, and a pixel left out of the fit may move the reading it
 * stops at (25 against 30 validating on one draw of 80, a change of 0.13
 * far from the pixel), which is the rule's, not the pixel's. */
static void
test_dead_pixel (Fixture *f, gconstpointer data)
{
  if (!cli_available ())
    return;
  g_autofree float *pixels = random_star_field (SIDE, SIDE);
  g_autofree char *clean_path = temp_path (f, "clean.fits");
  g_autofree char *dead_path = temp_path (f, "dead.fits");
  write_fits_float (clean_path, pixels, SIDE, SIDE);
  int dx = g_test_rand_int_range (8, SIDE - 8), dy = g_test_rand_int_range (8, SIDE - 8);
  pixels[dy * SIDE + dx] = g_test_rand_bit () ? -32768.0f : -1.0f;
  write_fits_float (dead_path, pixels, SIDE, SIDE);
  g_autofree float *results[2] = { NULL, NULL };
  const char *inputs[2] = { clean_path, dead_path };
  for (int k = 0; k < 2; k++)
    {
      g_autofree char *out_path = temp_path (f, k ? "dead-out.fits" : "clean-out.fits");
      CliRun run = RUN_CLI ("deblur", inputs[k], "-o", out_path, "--psf", "gaussian:2",
                            "--stop", "none", "--iters", "40", "--json");
      g_assert_cmpint (run.status, ==, 0);
      g_autofree char *summary = json_line (run.out, "summary");
      assert_json_string (summary, "solver", "rl");
      g_assert_cmpfloat (json_number (summary, "cold_pixels"), ==, k);
      cli_run_clear (&run);
      long w, h;
      results[k] = read_fits_float (out_path, &w, &h, NULL);
    }
  double far = 0, min = INFINITY;
  for (int y = 0; y < SIDE; y++)
    for (int x = 0; x < SIDE; x++)
      {
        gsize i = (gsize) y * SIDE + x;
        min = MIN (min, results[1][i]);
        if (abs (x - dx) > 6 || abs (y - dy) > 6)
          far = MAX (far, fabs ((double) results[1][i] - results[0][i]));
      }
  g_test_message ("dead pixel at (%d, %d): lowest %.3g, largest change away from it %.3g", dx,
                  dy, min, far);
  g_assert_cmpfloat (min, >=, -1e-6);   /* x >= 0, up to x · scale + sky's rounding */
  g_assert_cmpfloat (far, <, 0.02);     /* the field's peak is 1 */

  g_autofree char *out_path = temp_path (f, "kept-out.fits");
  CliRun run = RUN_CLI ("deblur", dead_path, "-o", out_path, "--psf", "gaussian:2", "--solver",
                        "fista", "--allow-negative", "--json");
  g_assert_cmpint (run.status, ==, 0);
  g_autofree char *summary = json_line (run.out, "summary");
  g_assert_cmpfloat (json_number (summary, "cold_pixels"), ==, 0);
  cli_run_clear (&run);
}

/* A PSF file holding a cube (one PSF per wavelength, say): its first plane
 * is the blur, and a note says so; the result equals the one with that
 * plane alone as the file. */
static void
test_psf_cube_first_plane (Fixture *f, gconstpointer data)
{
  if (!cli_available ())
    return;
  const int side = 9, planes = g_test_rand_int_range (2, 5);
  g_autofree float *cube = g_new (float, side * side * planes);
  for (int p = 0; p < planes; p++)
    {
      double sigma = g_test_rand_double_range (0.8, 2.0);
      for (int y = 0; y < side; y++)
        for (int x = 0; x < side; x++)
          cube[(p * side + y) * side + x]
            = (float) exp (-((x - 4) * (x - 4) + (y - 4) * (y - 4)) / (2 * sigma * sigma));
    }
  g_autofree char *cube_path = temp_path (f, "psf-cube.fits");
  g_autofree char *plane_path = temp_path (f, "psf-plane.fits");
  test_write_fits_float (cube_path, cube, side, side, planes, NULL);
  test_write_fits_float (plane_path, cube, side, side, 1, NULL);
  g_autofree char *in_path = write_star_field (f, "stars.fits", NULL);
  g_autofree float *results[2] = { NULL, NULL };
  const char *psfs[2] = { cube_path, plane_path };
  for (int k = 0; k < 2; k++)
    {
      g_autofree char *psf = g_strdup_printf ("file:%s", psfs[k]);
      g_autofree char *out_path = temp_path (f, k ? "plane-out.fits" : "cube-out.fits");
      CliRun run = RUN_CLI ("deblur", in_path, "-o", out_path, "--psf", psf, "--solver", "rl",
                            "--iters", "20");
      g_assert_cmpint (run.status, ==, 0);
      g_assert_true ((strstr (run.err, "planes; the first is the blur") != NULL) == (k == 0));
      cli_run_clear (&run);
      long w, h;
      results[k] = read_fits_float (out_path, &w, &h, NULL);
    }
  for (gsize i = 0; i < SIDE * SIDE; i++)
    g_assert_cmpfloat (results[0][i], ==, results[1][i]);
}

/* A PSF file of two images (WebbPSF: oversampled, then at the detector's
 * pixels): the first is the blur, with a note listing both; file:PATH[1]
 * and file:PATH[EXTNAME] name the second, and give the result of a file
 * holding it alone, with no note; a missing HDU is refused by name; and
 * the file named with its HDU is an input no output may replace. */
static void
test_psf_file_hdus (Fixture *f, gconstpointer data)
{
  if (!cli_available ())
    return;
  enum { S = 9 };
  float first[S * S], second[S * S];
  double sigma = g_test_rand_double_range (0.8, 2.0);
  for (int y = 0; y < S; y++)
    for (int x = 0; x < S; x++)
      {
        double r2 = (x - 4) * (x - 4) + (y - 4) * (y - 4);
        first[y * S + x] = (float) exp (-r2 / (2 * 9.0));
        second[y * S + x] = (float) exp (-r2 / (2 * sigma * sigma));
      }
  g_autofree char *mef_path = temp_path (f, "psf-mef.fits");
  g_autofree char *alone_path = temp_path (f, "psf-alone.fits");
  test_write_fits_float (alone_path, second, S, S, 1, NULL);
  fitsfile *fits = NULL;
  int status = 0;
  long axes[2] = { S, S };
  fits_create_diskfile (&fits, mef_path, &status);
  fits_create_img (fits, FLOAT_IMG, 2, axes, &status);
  fits_write_img (fits, TFLOAT, 1, S * S, first, &status);
  fits_create_img (fits, FLOAT_IMG, 2, axes, &status);
  fits_write_key_str (fits, "EXTNAME", "DET_SAMP", NULL, &status);
  fits_write_img (fits, TFLOAT, 1, S * S, second, &status);
  fits_close_file (fits, &status);
  test_check_cfitsio (status);

  g_autofree char *in_path = write_star_field (f, "stars.fits", NULL);
  const char *names[] = { "", "[1]", "[DET_SAMP]", NULL };
  g_autofree float *results[4] = { NULL };
  for (int k = 0; k < 4; k++)
    {
      g_autofree char *psf = names[k] ? g_strdup_printf ("file:%s%s", mef_path, names[k])
                                      : g_strdup_printf ("file:%s", alone_path);
      g_autofree char *out_path = temp_path (f, "hdu-out.fits");
      CliRun run = RUN_CLI ("deblur", in_path, "-o", out_path, "--force", "--psf", psf,
                            "--solver", "rl", "--iters", "20");
      g_assert_cmpint (run.status, ==, 0);
      g_assert_true ((strstr (run.err, "2 of its HDUs hold images (0 9×9, 1 'DET_SAMP' 9×9); "
                                       "the first, HDU 0, is the blur") != NULL) == (k == 0));
      cli_run_clear (&run);
      long w, h;
      results[k] = read_fits_float (out_path, &w, &h, NULL);
    }
  gboolean first_differs = FALSE;
  for (gsize i = 0; i < SIDE * SIDE; i++)
    {
      g_assert_cmpfloat (results[1][i], ==, results[3][i]);
      g_assert_cmpfloat (results[2][i], ==, results[3][i]);
      first_differs |= results[0][i] != results[3][i];
    }
  g_assert_true (first_differs);
  g_autofree char *missing = g_strdup_printf ("file:%s[2]", mef_path);
  g_autofree char *out_path = temp_path (f, "hdu-missing.fits");
  CliRun run = RUN_CLI ("deblur", in_path, "-o", out_path, "--psf", missing);
  g_assert_cmpint (run.status, !=, 0);
  g_assert_nonnull (strstr (run.err, "HDU 2 does not exist"));
  assert_absent (out_path);
  cli_run_clear (&run);
  /* The PSF file named with its HDU is still an input: never replaced. */
  g_autofree char *named = g_strdup_printf ("file:%s[1]", mef_path);
  g_autofree char *before = NULL, *after = NULL;
  gsize before_length = 0, after_length = 0;
  g_assert_true (g_file_get_contents (mef_path, &before, &before_length, NULL));
  run = RUN_CLI ("deblur", in_path, "-o", mef_path, "--force", "--psf", named);
  assert_refused (&run, 2, "is an input file");
  cli_run_clear (&run);
  g_assert_true (g_file_get_contents (mef_path, &after, &after_length, NULL));
  g_assert_cmpmem (before, before_length, after, after_length);
}

/* Hot pixels (a spike no blurred star makes) in a real image are left out
 * and filled in: the result holds no spike there, where --bad-pixels none
 * keeps one of thousands. */
static void
test_hot_pixels (Fixture *f, gconstpointer data)
{
  if (!cli_available ())
    return;
  const int side = 64;
  double flux, cx, cy;
  g_autofree float *pixels = clipped_star_field (side, INFINITY, &flux, &cx, &cy);
  int spots[3];
  for (int k = 0; k < 3;)
    {
      int x = g_test_rand_int_range (3, side - 3), y = g_test_rand_int_range (3, side - 3);
      gboolean dark = TRUE;   /* in the sky, away from the stars and the other spikes */
      for (int dy = -2; dy <= 2; dy++)
        for (int dx = -2; dx <= 2; dx++)
          dark = dark && pixels[(y + dy) * side + x + dx] < 110.0f;
      if (!dark)
        continue;
      spots[k++] = y * side + x;
      pixels[y * side + x] += 3000.0f;
    }
  g_autofree char *in_path = temp_path (f, "hot.fits");
  write_fits_float (in_path, pixels, side, side);
  const char *modes[2] = { "auto", "none" };
  for (int m = 0; m < 2; m++)
    {
      g_autofree char *out_path = temp_path (f, m ? "hot-none.fits" : "hot-auto.fits");
      CliRun run = RUN_CLI ("deblur", in_path, "-o", out_path, "--psf", "gaussian:3", "--solver",
                            "rl", "--iters", "200", "--bad-pixels", modes[m], "--json");
      g_assert_cmpint (run.status, ==, 0);
      g_autofree char *summary = json_line (run.out, "summary");
      g_assert_cmpfloat (json_number (summary, "hot_pixels"), ==, m ? 0 : 3);
      cli_run_clear (&run);
      long w, h;
      g_autofree float *out = read_fits_float (out_path, &w, &h, NULL);
      for (int k = 0; k < 3; k++)
        {
          g_test_message ("--bad-pixels %s: %.1f at the spike %d", modes[m], out[spots[k]], k);
          if (m == 0)
            g_assert_cmpfloat (out[spots[k]], <, 150.0f);
          else
            g_assert_cmpfloat (out[spots[k]], >, 1000.0f);
        }
    }
  CliRun run = RUN_CLI ("deblur", in_path, "-o", "unused.fits", "--psf", "gaussian:3",
                        "--bad-pixels", "some");
  assert_refused (&run, 2, "--bad-pixels");
  cli_run_clear (&run);
}

/* A cube whose planes clip at different levels (none, 5000, 7000): each
 * plane's summary gives its own level and count, the total the sum with no
 * one level for all (as for the skies and scales). */
static void
test_cube_saturation (Fixture *f, gconstpointer data)
{
  if (!cli_available ())
    return;
  const int side = 64, planes = 3;
  const double clips[3] = { INFINITY, 5000.0, 7000.0 };
  g_autofree float *cube = g_new (float, side * side * planes);
  gsize clipped[3] = { 0, 0, 0 };
  for (int p = 0; p < planes; p++)
    {
      double flux, cx, cy;
      g_autofree float *plane = clipped_star_field (side, clips[p], &flux, &cx, &cy);
      memcpy (cube + p * side * side, plane, side * side * sizeof (float));
      for (int i = 0; i < side * side; i++)
        clipped[p] += plane[i] >= clips[p] ? 1 : 0;
    }
  g_assert_cmpuint (clipped[1], >=, 3);
  g_assert_cmpuint (clipped[2], >=, 3);
  g_autofree char *in_path = temp_path (f, "cube.fits");
  g_autofree char *out_path = temp_path (f, "cube-out.fits");
  test_write_fits_float (in_path, cube, side, side, planes, NULL);
  CliRun run = RUN_CLI ("deblur", in_path, "-o", out_path, "--psf", "gaussian:3", "--solver",
                        "rl", "--iters", "20", "--json");
  g_assert_cmpint (run.status, ==, 0);
  g_auto (GStrv) lines = g_strsplit (run.out, "\n", -1);
  int seen = 0;
  for (int i = 0; lines[i] != NULL; i++)
    if (strstr (lines[i], "\"type\":\"plane\"") != NULL)
      {
        int p = (int) json_number (lines[i], "plane");
        g_assert_cmpfloat (json_number (lines[i], "saturated_pixels"), ==, clipped[p]);
        g_assert_true (json_has (lines[i], "saturation") == (clipped[p] > 0));
        if (clipped[p] > 0)
          g_assert_cmpfloat (json_number (lines[i], "saturation"), ==, clips[p]);
        seen++;
      }
  g_assert_cmpint (seen, ==, planes);
  g_autofree char *summary = json_line (run.out, "summary");
  g_assert_cmpfloat (json_number (summary, "saturated_pixels"), ==, clipped[1] + clipped[2]);
  g_assert_false (json_has (summary, "saturation"));
  cli_run_clear (&run);
}

/* --devices where it cannot act is said, not silently dropped: with
 * --backend cpu it has no effect (on a machine without a GPU, auto says
 * it solves on the CPU). */
static void
test_devices_unused (Fixture *f, gconstpointer data)
{
  if (!cli_available ())
    return;
  g_autofree char *in_path = write_star_field (f, "stars.fits", NULL);
  g_autofree char *out_path = temp_path (f, "out.fits");
  CliRun run = RUN_CLI ("deblur", in_path, "-o", out_path, "--psf", "gaussian:2", "--solver",
                        "rl", "--iters", "5", "--backend", "cpu", "--devices", "0");
  g_assert_cmpint (run.status, ==, 0);
  g_assert_nonnull (strstr (run.err, "--devices 0: no effect with --backend cpu"));
  cli_run_clear (&run);
}

/* A real image without --solver runs the real-image default (`rl`); an
 * option it takes no part of runs the first of its candidates that takes
 * every option given where it has candidates, and is said on stderr where
 * none does (--inner-iters, ALM's, which RL takes no part of); --iters gives
 * RL's count; --alpha auto, every solver's recipe, moves nothing; an option
 * the named solver takes no part of is warned about, by run too. */
static void
test_real_default_solver (Fixture *f, gconstpointer data)
{
  if (!cli_available ())
    return;
  g_autofree char *in_path = temp_path (f, "field.fits");
  g_autofree char *out_path = temp_path (f, "out.fits");
  g_autofree float *pixels = random_star_field (SIDE, SIDE);
  write_fits_float (in_path, pixels, SIDE, SIDE);
  const SsSolverInfo *fallback = ss_solver_info (ss_solver_default_for_real_data ());
  g_assert_cmpstr (fallback->name, ==, "rl");
  int iters = g_test_rand_int_range (5, 30);
  g_autofree char *iters_text = g_strdup_printf ("%d", iters);
  const struct {
    const char *option, *value, *warning;
  } cases[] = {
    { NULL, NULL, NULL },
    { "--iters", iters_text, NULL },
    { "--inner-iters", "5", "--inner-iters has no effect on rl" },
  };
  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      CliRun run = RUN_CLI ("deblur", in_path, "-o", out_path, "--force", "--psf", "gaussian:2",
                            "--alpha", "auto", "--json", cases[i].option, cases[i].value);
      g_assert_cmpint (run.status, ==, 0);
      g_autofree char *summary = json_line (run.out, "summary");
      assert_json_string (summary, "solver", "rl");
      if (g_strcmp0 (cases[i].option, "--iters") == 0)
        g_assert_cmpfloat (json_number (summary, "iterations"), <=, iters);
      if (cases[i].warning)
        g_assert_nonnull (strstr (run.err, cases[i].warning));
      else
        g_assert_null (strstr (run.err, "no effect"));
      cli_run_clear (&run);
    }
  /* A solver named with an option it takes no part of: said, not dropped
   * silently. */
  CliRun run = RUN_CLI ("deblur", in_path, "-o", out_path, "--force", "--psf", "gaussian:2",
                        "--solver", "auto", "--iters", iters_text);
  g_assert_cmpint (run.status, ==, 0);
  g_assert_nonnull (strstr (run.err, "--iters has no effect on auto"));
  cli_run_clear (&run);
  /* run says it as deblur does (it ignored them silently). */
  run = RUN_CLI ("run", in_path, "--solver", "direct-fft", "--alpha", "1e-3", "--iters", "40",
                 "--ratio", "1");
  g_assert_cmpint (run.status, ==, 0);
  g_assert_nonnull (strstr (run.err, "--iters has no effect on direct-fft"));
  cli_run_clear (&run);
  /* run's default ratio, 0.5, leaves pixels out that direct-fft cannot:
   * a conflict of the command line (status 2), not a failed solve. */
  run = RUN_CLI ("run", in_path, "--solver", "direct-fft", "--alpha", "1e-3");
  assert_refused (&run, 2, "--ratio is 0.5 (the default here)");
  cli_run_clear (&run);
}

/* Every plane of a cube is deblurred in turn, each on its own: the cube's
 * plane 1 equals deblurring plane 1 alone (--plane 1), and HISTORY has each
 * plane's result. */
static void
test_cube_planes (Fixture *f, gconstpointer data)
{
  if (!cli_available ())
    return;
  g_autofree char *cube_path = temp_path (f, "cube.fits");
  g_autofree char *out_path = temp_path (f, "cube-out.fits");
  g_autofree char *one_path = temp_path (f, "plane1-out.fits");
  const gsize n = SIDE * SIDE;
  g_autofree float *cube = g_new (float, 3 * n);
  for (int p = 0; p < 3; p++)
    {
      g_autofree float *plane = random_star_field (SIDE, SIDE);
      memcpy (cube + p * n, plane, n * sizeof (float));
    }
  test_write_fits_float (cube_path, cube, SIDE, SIDE, 3, NULL);

  CliRun run = RUN_CLI ("deblur", cube_path, "-o", out_path, "--psf", "gaussian:2", "--iters",
                        "30", "--json");
  g_assert_cmpint (run.status, ==, 0);
  g_assert_cmpint (json_count_lines (run.out, "plane"), ==, 3);
  g_autofree char *summary = json_line (run.out, "summary");
  g_assert_cmpfloat (json_number (summary, "planes"), ==, 3);
  g_assert_cmpfloat (json_number (summary, "iterations"), ==, 90);
  /* Each plane has its own sky and scale: the total gives none. */
  g_assert_true (isnan (json_number (summary, "sky")));
  g_assert_true (isnan (json_number (summary, "scale")));
  cli_run_clear (&run);

  RUN_CLI_OK ("deblur", cube_path, "-o", one_path, "--psf", "gaussian:2", "--iters", "30",
              "--plane", "1", "--quiet");

  long w, h, planes;
  g_autofree float *all = read_fits_float (out_path, &w, &h, &planes);
  g_assert_cmpint (planes, ==, 3);
  g_autofree float *one = read_fits_float (one_path, &w, &h, &planes);
  g_assert_cmpint (planes, ==, 1);
  /* Tolerance: 1e-5 of the plane's peak (two processes, same arithmetic). */
  double peak = 0, diff = 0;
  for (gsize i = 0; i < n; i++)
    {
      peak = MAX (peak, fabs (one[i]));
      diff = MAX (diff, fabs ((double) one[i] - all[n + i]));
    }
  g_assert_cmpfloat (diff, <=, 1e-5 * peak);
  /* HISTORY gives each plane's result (it gave the last plane's, unnamed). */
  g_autofree char *header = read_fits_header (out_path);
  for (int p = 0; p < 3; p++)
    {
      g_autofree char *line = g_strdup_printf ("plane %d result iterations=30", p);
      g_assert_nonnull (strstr (header, line));
    }
  g_assert_null (strstr (header, "deblur result iterations="));

  /* --plane 1 with the cube as its own truth scores plane 1 against the
   * truth's plane 1, as a one-plane truth of it does (it was refused: "has
   * 3 planes; the input has 1"). */
  g_autofree char *truth1_path = temp_path (f, "truth1.fits");
  test_write_fits_float (truth1_path, cube + n, SIDE, SIDE, 1, NULL);
  double mse[2];
  const char *truths[2] = { cube_path, truth1_path };
  for (int t = 0; t < 2; t++)
    {
      run = RUN_CLI ("deblur", cube_path, "-o", one_path, "--force", "--psf", "gaussian:2",
                     "--iters", "30", "--plane", "1", "--truth", truths[t], "--json");
      g_assert_cmpint (run.status, ==, 0);
      g_autofree char *scored = json_line (run.out, "summary");
      mse[t] = json_number (scored, "mse");
      cli_run_clear (&run);
    }
  g_assert_true (isfinite (mse[0]));
  g_assert_cmpfloat (mse[0], ==, mse[1]);
}

/* Gaussian stars of known FWHM on a faint noisy sky, well apart. */
static float *
gaussian_star_grid (int side, double fwhm, double *star_x, double *star_y)
{
  float *data = g_new0 (float, (gsize) side * side);
  double sigma = fwhm / (2 * sqrt (2 * log (2)));
  int grid = 3, step = side / grid;
  for (int gy = 0; gy < grid; gy++)
    for (int gx = 0; gx < grid; gx++)
      {
        double cx = step * gx + step / 2 + g_test_rand_double_range (-2, 2);
        double cy = step * gy + step / 2 + g_test_rand_double_range (-2, 2);
        double amplitude = gx == 1 && gy == 1 ? 1.0 : g_test_rand_double_range (0.3, 0.8);
        if (gx == 0 && gy == 0)
          {
            *star_x = cx;
            *star_y = cy;
          }
        for (int y = 0; y < side; y++)
          for (int x = 0; x < side; x++)
            {
              double r2 = (x - cx) * (x - cx) + (y - cy) * (y - cy);
              if (r2 < 100)
                data[(gsize) y * side + x] += (float) (amplitude * exp (-r2 / (2 * sigma * sigma)));
            }
      }
  /* Box-Muller noise, 0.002 of the peak. */
  for (gsize i = 0; i < (gsize) side * side; i++)
    {
      double u = g_test_rand_double_range (1e-12, 1), v = g_test_rand_double ();
      data[i] += (float) (0.05 + 0.002 * sqrt (-2 * log (u)) * cos (2 * G_PI * v));
    }
  return data;
}

/* The PSF measured from stars (one picked, or found automatically) has the
 * FWHM the stars were drawn with (within 5%), also when the picked star is
 * clipped, and --alpha auto sets alpha. */
static void
test_psf_from_stars (Fixture *f, gconstpointer data)
{
  if (!cli_available ())
    return;
  const int side = 120;
  const double fwhm = g_test_rand_double_range (2.5, 4.0);
  double star_x = 0, star_y = 0;
  g_autofree float *pixels = gaussian_star_grid (side, fwhm, &star_x, &star_y);
  g_autofree char *in_path = temp_path (f, "stars.fits");
  g_autofree char *out_path = temp_path (f, "out.fits");
  write_fits_float (in_path, pixels, side, side);
  g_autofree char *position = g_strdup_printf ("%.1f,%.1f", star_x + 1.2, star_y - 0.8);

  /* FISTA: the default with --iters, RL, takes no α (checked below). */
  CliRun run = RUN_CLI ("deblur", in_path, "-o", out_path, "--psf-from-star", position,
                        "--psf-model", "gaussian", "--iters", "20", "--alpha", "auto",
                        "--solver", "fista", "--json");
  g_assert_cmpint (run.status, ==, 0);
  g_autofree char *summary = json_line (run.out, "summary");
  g_test_message ("drawn FWHM %.3f", fwhm);
  g_assert_cmpfloat_with_epsilon (json_number (summary, "psf_fwhm") / fwhm, 1.0, 0.05);
  g_assert_cmpfloat (fabs (json_number (summary, "psf_ellipticity")), <, 0.05);
  g_assert_true (g_str_has_prefix (strstr (summary, "\"alpha_auto\":"), "\"alpha_auto\":true"));
  double alpha = json_number (summary, "alpha");
  g_assert_true (isfinite (alpha) && alpha > 0);
  /* The noise drawn, 0.002, in the data's units: the estimate is in scaled
   * units, over the data's top above the sky, which is not 1: the brightest
   * star's peak falls between pixels (0.8 of its amplitude at FWHM 2.5 and
   * half a pixel off in x and y; a run that assumed a scale of 1 read 1.25). */
  g_assert_cmpfloat_with_epsilon (json_number (summary, "noise_estimate")
                                    * json_number (summary, "scale") / 0.002, 1.0, 0.25);
  cli_run_clear (&run);
  g_remove (out_path);

  run = RUN_CLI ("deblur", in_path, "-o", out_path, "--psf", "auto", "--psf-model", "gaussian",
                 "--iters", "20", "--json");
  g_assert_cmpint (run.status, ==, 0);
  g_free (summary);
  summary = json_line (run.out, "summary");
  g_assert_cmpfloat_with_epsilon (json_number (summary, "psf_fwhm") / fwhm, 1.0, 0.05);
  /* RL, run with no α, reports none. */
  assert_json_string (summary, "solver", "rl");
  g_assert_false (json_has (summary, "alpha"));
  cli_run_clear (&run);
  g_remove (out_path);

  /* Every star clipped (a flat top at 0.25, under the faintest star's
   * peak): the picked star's core is left out of its fit, which keeps the
   * FWHM (through the core it came out 1.5 times too wide). */
  for (gsize i = 0; i < (gsize) side * side; i++)
    pixels[i] = MIN (pixels[i], 0.25f);
  g_autofree char *clipped_path = temp_path (f, "clipped.fits");
  write_fits_float (clipped_path, pixels, side, side);
  run = RUN_CLI ("deblur", clipped_path, "-o", out_path, "--psf-from-star", position,
                 "--psf-model", "gaussian", "--iters", "20");
  g_assert_cmpint (run.status, ==, 0);
  g_assert_nonnull (strstr (run.err, "saturated pixels of the star left out of its fit"));
  cli_run_clear (&run);
  g_remove (out_path);
  run = RUN_CLI ("deblur", clipped_path, "-o", out_path, "--psf-from-star", position,
                 "--psf-model", "gaussian", "--iters", "20", "--json");
  g_assert_cmpint (run.status, ==, 0);
  g_free (summary);
  summary = json_line (run.out, "summary");
  g_test_message ("clipped star: FWHM %.3f", json_number (summary, "psf_fwhm"));
  g_assert_cmpfloat_with_epsilon (json_number (summary, "psf_fwhm") / fwhm, 1.0, 0.05);
  cli_run_clear (&run);
  g_remove (out_path);

  /* A position off the image is a bad parameter. */
  run = RUN_CLI ("deblur", in_path, "-o", out_path, "--psf-from-star", "5000,3");
  assert_refused (&run, 2, "--psf-from-star");
  assert_absent (out_path);
  cli_run_clear (&run);
}

/* --alpha auto on a simulated measurement uses the recorded noise: the
 * engine's rule applied here to the same operator gives the same alpha. */
static void
test_alpha_auto_recorded (Fixture *f, gconstpointer data)
{
  if (!cli_available ())
    return;
  g_autofree char *truth_path = write_star_field (f, "truth.fits", NULL);
  g_autofree char *measured_path = temp_path (f, "measured.fits");
  g_autofree char *out_path = temp_path (f, "out.fits");
  guint32 seed = g_test_rand_int ();
  double noise = g_test_rand_double_range (0.005, 0.05);
  g_autofree char *seed_text = g_strdup_printf ("%u", seed);
  g_autofree char *noise_text = g_strdup_printf ("%.6f", noise);
  RUN_CLI_OK ("simulate", truth_path, "-o", measured_path, "--psf", "box:5",
              "--ratio", "0.5", "--noise", noise_text, "--seed", seed_text);
  CliRun run = RUN_CLI ("deblur", measured_path, "-o", out_path, "--alpha", "auto", "--iters",
                        "10", "--json");
  g_assert_cmpint (run.status, ==, 0);
  g_autofree char *summary = json_line (run.out, "summary");
  cli_run_clear (&run);

  SsAcquisition acq;
  ss_acquisition_init (&acq);
  g_assert_true (ss_psf_spec_parse ("box:5", &acq.psf, NULL));
  acq.ratio = 0.5;
  acq.seed = seed;
  acq.noise = g_ascii_strtod (noise_text, NULL);
  g_autoptr (SsOperator) op = ss_operator_new (&acq, SIDE, SIDE, NULL);
  g_assert_nonnull (op);
  double expected = ss_alpha_auto (acq.noise, op);
  ss_acquisition_clear (&acq);
  /* Tolerance: the JSON carries 9 significant digits. */
  g_assert_cmpfloat_with_epsilon (json_number (summary, "alpha") / expected, 1.0, 1e-6);
}

/* A --psf that contradicts the recorded acquisition is refused. */
static void
test_psf_conflict (Fixture *f, gconstpointer data)
{
  if (!cli_available ())
    return;
  g_autofree char *truth_path = write_star_field (f, "truth.fits", NULL);
  g_autofree char *measured_path = temp_path (f, "measured.fits");
  g_autofree char *out_path = temp_path (f, "out.fits");
  RUN_CLI_OK ("simulate", truth_path, "-o", measured_path, "--psf", "box:5");
  CliRun run = RUN_CLI ("deblur", measured_path, "-o", out_path, "--psf", "box:3");
  assert_refused (&run, 2, "--psf");
  assert_absent (out_path);
  cli_run_clear (&run);
}

typedef struct {
  const char *name;
  void (*make) (const char *path);
  const char *message;   /* a part the message must contain, besides the file name */
} BadFile;

static void
make_text_file (const char *path)
{
  g_assert_true (g_file_set_contents (path, "this is not an image\n", -1, NULL));
}

static void
make_truncated_fits (const char *path)
{
  float data[SIDE * SIDE] = { 0 };
  data[5] = 1;
  write_fits_float (path, data, SIDE, SIDE);
  g_autofree char *contents = NULL;
  gsize length = 0;
  g_assert_true (g_file_get_contents (path, &contents, &length, NULL));
  g_assert_cmpuint (length, >, 2880 + 1000);
  g_assert_true (g_file_set_contents (path, contents, 2880 + 1000, NULL));
}

/* A float32 image of 0 x 10 pixels: one header block, no data. */
static void
make_zero_size_fits (const char *path)
{
  test_write_image_header (path, -32, 0, 10, 0);
}

static void
make_nan_fits (const char *path)
{
  float data[16 * 16];
  for (gsize i = 0; i < G_N_ELEMENTS (data); i++)
    data[i] = NAN;
  write_fits_float (path, data, 16, 16);
}

static void
make_directory (const char *path)
{
  g_assert_cmpint (g_mkdir (path, 0755), ==, 0);
}

static void
make_empty_file (const char *path)
{
  g_assert_true (g_file_set_contents (path, "", 0, NULL));
}

/* A valid header claiming 100000 x 100000 float pixels (40 GB), no data. */
static void
make_huge_header (const char *path)
{
  test_write_image_header (path, -32, 100000, 100000, 0);
}

/* Header cut in the middle: no END card. */
static void
make_truncated_header (const char *path)
{
  const char *start = "SIMPLE  =                    T / conforms                                      "
                      "BITPIX  =                  -32";
  g_assert_true (g_file_set_contents (path, start, -1, NULL));
}

static const BadFile bad_files[] = {
  { "missing.fits", NULL, NULL },
  { "a-directory.fits", make_directory, NULL },
  { "empty.fits", make_empty_file, NULL },
  { "text.fits", make_text_file, NULL },
  { "truncated-header.fits", make_truncated_header, NULL },
  { "truncated.fits", make_truncated_fits, NULL },
  { "zero-size.fits", make_zero_size_fits, NULL },
  { "huge.fits", make_huge_header, NULL },
  { "nan.fits", make_nan_fits, "no finite pixels" },
};

/* Each broken input: exit 1, a message naming the file, no output, for
 * every subcommand that reads an image. */
static void
test_bad_files (Fixture *f, gconstpointer data)
{
  if (!cli_available ())
    return;
  g_autofree char *out_path = temp_path (f, "out.fits");
  for (gsize i = 0; i < G_N_ELEMENTS (bad_files); i++)
    {
      g_autofree char *path = temp_path (f, bad_files[i].name);
      if (bad_files[i].make)
        bad_files[i].make (path);

      CliRun run = RUN_CLI ("deblur", path, "-o", out_path, "--psf", "box:5");
      assert_refused (&run, 1, bad_files[i].name);
      if (bad_files[i].message)
        g_assert_nonnull (strstr (run.err, bad_files[i].message));
      assert_absent (out_path);
      cli_run_clear (&run);

      run = RUN_CLI ("simulate", path, "-o", out_path);
      assert_refused (&run, 1, bad_files[i].name);
      assert_absent (out_path);
      cli_run_clear (&run);

      run = RUN_CLI ("run", path, "--iters", "5");
      assert_refused (&run, 1, bad_files[i].name);
      cli_run_clear (&run);

      /* info describes damaged FITS files (it says what is wrong); only a
       * file that is missing or not FITS at all is a failure there. */
      if (bad_files[i].make == NULL || bad_files[i].make == make_text_file
          || bad_files[i].make == make_empty_file || bad_files[i].make == make_directory)
        {
          run = RUN_CLI ("info", path);
          assert_refused (&run, 1, bad_files[i].name);
          cli_run_clear (&run);
        }
    }
}

typedef struct {
  const char *option;
  const char *value;
  const char *command;   /* simulate or deblur */
} BadValue;

static const BadValue bad_values[] = {
  { "--ratio", "0", "simulate" },
  { "--stretch", "asinh", "deblur" },   /* a FITS output: the stretch would be ignored */
  { "--hdu", "", "deblur" },            /* empty: it meant the default HDU */
  { "--ratio", "1.5", "simulate" },
  { "--ratio", "nan", "simulate" },
  { "--noise", "-0.1", "simulate" },
  { "--noise", "1e300", "simulate" },   /* finite, but float32 data overflow */
  { "--seed", "-3", "simulate" },
  { "--psf", "blob:3", "simulate" },
  { "--sky", "sideways", "simulate" },
  { "--alpha", "-1", "deblur" },
  { "--alpha", "inf", "deblur" },
  { "--rho", "0", "deblur" },
  { "--sigma", "-2", "deblur" },
  { "--tau", "1.7", "deblur" },
  { "--tau", "0", "deblur" },
  { "--iters", "0", "deblur" },
  { "--iters", "ten", "deblur" },
  { "--solver", "foo", "deblur" },
  { "--backend", "abacus", "deblur" },
};

/* Each bad parameter: exit 2, a message naming the option and the value,
 * no output file. */
static void
test_bad_values (Fixture *f, gconstpointer data)
{
  if (!cli_available ())
    return;
  g_autofree char *truth_path = write_star_field (f, "truth.fits", NULL);
  g_autofree char *out_path = temp_path (f, "out.fits");
  for (gsize i = 0; i < G_N_ELEMENTS (bad_values); i++)
    {
      const BadValue *b = &bad_values[i];
      CliRun run = g_str_equal (b->command, "simulate")
        ? RUN_CLI ("simulate", truth_path, "-o", out_path, b->option, b->value)
        : RUN_CLI ("deblur", truth_path, "-o", out_path, "--psf", "box:3", b->option, b->value);
      assert_refused (&run, 2, b->option);
      if (strstr (run.err, b->value) == NULL)
        g_error ("stderr does not name the value '%s': %s", b->value, run.err);
      assert_absent (out_path);
      cli_run_clear (&run);
    }
  /* Both direct solvers refuse an inverse filter (alpha 0), which amplifies
   * the noise without bound. */
  const char *direct[] = { "direct-fft", "direct" };
  for (gsize i = 0; i < G_N_ELEMENTS (direct); i++)
    {
      CliRun run = RUN_CLI ("deblur", truth_path, "-o", out_path, "--psf", "box:3", "--solver",
                            direct[i], "--alpha", "0");
      assert_refused (&run, 2, "Tikhonov weight > 0");
      assert_absent (out_path);
      cli_run_clear (&run);
    }
}

/* Outputs that cannot be written, a PSF larger than the image and a 1 x 1
 * image: a clear message, the right status, nothing left behind. */
static void
test_bad_outputs_and_sizes (Fixture *f, gconstpointer data)
{
  if (!cli_available ())
    return;
  g_autofree char *truth_path = write_star_field (f, "truth.fits", NULL);
  g_autofree char *nowhere = g_build_filename (f->dir, "no-such-dir", "out.fits", NULL);
  CliRun run = RUN_CLI ("deblur", truth_path, "-o", nowhere, "--psf", "box:3");
  assert_refused (&run, 1, "no-such-dir");
  cli_run_clear (&run);

  /* The parent of the output is a regular file. */
  g_autofree char *under_file = g_build_filename (truth_path, "out.fits", NULL);
  run = RUN_CLI ("simulate", truth_path, "-o", under_file);
  assert_refused (&run, 1, "truth.fits");
  cli_run_clear (&run);

  /* A directory where no file can be created, even by root (Linux's
   * /proc): the system's reason, not cfitsio's "couldn't create". */
  if (g_file_test ("/proc/self", G_FILE_TEST_IS_DIR))
    {
      run = RUN_CLI ("simulate", truth_path, "-o", "/proc/sharpsky-out.fits");
      assert_refused (&run, 1, "/proc/sharpsky-out.fits");
      if (strstr (run.err, "cannot create a file there") == NULL)
        g_error ("stderr does not give the system's reason: %s", run.err);
      cli_run_clear (&run);
    }

  g_autofree char *out_path = temp_path (f, "out.fits");
  run = RUN_CLI ("deblur", truth_path, "-o", out_path, "--psf", "box2d:100");
  assert_refused (&run, 2, "larger");
  assert_absent (out_path);
  cli_run_clear (&run);

  g_autofree char *tiny_path = temp_path (f, "tiny.fits");
  float one = 1.0f;
  write_fits_float (tiny_path, &one, 1, 1);
  run = RUN_CLI ("deblur", tiny_path, "-o", out_path, "--psf", "box:3");
  g_assert_cmpint (run.status, >=, 1);
  g_assert_cmpint (run.status, <=, 2);
  assert_refused (&run, run.status, "tiny.fits");
  assert_absent (out_path);
  cli_run_clear (&run);

  /* Nothing beside the inputs: no temporary file was left behind. */
  g_autoptr (GDir) dir = g_dir_open (f->dir, 0, NULL);
  const char *name;
  while ((name = g_dir_read_name (dir)) != NULL)
    if (!g_str_equal (name, "truth.fits") && !g_str_equal (name, "tiny.fits"))
      g_error ("left behind: %s", name);
}

/* Dense direct on the 1000 x 872 sample cannot fit (n^2 floats = 3 TB):
 * exit 1 before any allocation, and the message names a size that fits. */
static void
test_dense_too_large (Fixture *f, gconstpointer data)
{
  if (!cli_available ())
    return;
  g_autofree char *sample = g_build_filename (g_getenv ("SHARPSKY_DATA"),
                                              "hubble_deep_field.fits", NULL);
  if (!g_file_test (sample, G_FILE_TEST_IS_REGULAR))
    {
      g_test_skip ("SHARPSKY_DATA has no hubble_deep_field.fits");
      return;
    }
  g_autofree char *out_path = temp_path (f, "out.fits");
  CliRun run = RUN_CLI ("deblur", sample, "-o", out_path, "--psf", "box:5", "--solver", "direct",
                        "--backend", "cpu");
  assert_refused (&run, 1, "hubble_deep_field.fits");
  /* The largest size that fits: "N x N" or "N×N" with N < 872. */
  g_autoptr (GRegex) size = g_regex_new ("([0-9]+) ?(x|×) ?([0-9]+)", 0, 0, NULL);
  g_autoptr (GMatchInfo) match = NULL;
  gboolean named = FALSE;
  g_regex_match (size, run.err, 0, &match);
  while (g_match_info_matches (match))
    {
      g_autofree char *side = g_match_info_fetch (match, 1);
      named = named || atoi (side) < 872;
      g_match_info_next (match, NULL);
    }
  if (!named)
    g_error ("the message names no size that fits: %s", run.err);
  assert_absent (out_path);
  cli_run_clear (&run);
}

/* The input is never the output, and an existing output needs --force. */
static void
test_output_protection (Fixture *f, gconstpointer data)
{
  if (!cli_available ())
    return;
  g_autofree char *truth_path = write_star_field (f, "truth.fits", NULL);
  g_autofree char *before = NULL, *after = NULL;
  gsize before_length = 0, after_length = 0;
  g_assert_true (g_file_get_contents (truth_path, &before, &before_length, NULL));

  CliRun run = RUN_CLI ("deblur", truth_path, "-o", truth_path, "--psf", "box:3", "--force",
                        "--iters", "5");
  assert_refused (&run, 2, "truth.fits");
  cli_run_clear (&run);
  run = RUN_CLI ("simulate", truth_path, "-o", truth_path, "--force");
  assert_refused (&run, 2, "truth.fits");
  cli_run_clear (&run);
  g_assert_true (g_file_get_contents (truth_path, &after, &after_length, NULL));
  g_assert_cmpmem (before, before_length, after, after_length);
  /* The same for an input that does not exist, named two ways (the output
   * check comes first, and tells it by its canonical path): it exited 1
   * when the name differed. */
  g_autofree char *missing = temp_path (f, "missing.fits");
  g_autofree char *dir = g_path_get_dirname (missing);
  g_autofree char *missing_again = g_build_filename (dir, ".", "missing.fits", NULL);
  run = RUN_CLI ("deblur", missing, "-o", missing_again, "--psf", "box:3");
  assert_refused (&run, 2, "missing.fits");
  g_assert_nonnull (strstr (run.err, "input"));
  cli_run_clear (&run);

  g_autofree char *existing = temp_path (f, "existing.fits");
  g_assert_true (g_file_set_contents (existing, "keep me", -1, NULL));
  run = RUN_CLI ("deblur", truth_path, "-o", existing, "--psf", "box:3", "--iters", "5");
  assert_refused (&run, 2, "existing.fits");
  cli_run_clear (&run);
  g_autofree char *kept = NULL;
  g_assert_true (g_file_get_contents (existing, &kept, NULL, NULL));
  g_assert_cmpstr (kept, ==, "keep me");

  /* With --force the same command replaces it with a FITS file. */
  RUN_CLI_OK ("deblur", truth_path, "-o", existing, "--psf", "box:3", "--iters", "5",
              "--force", "--quiet", "--hdu", "0", "--plane", "0");
  g_autofree char *header = read_fits_header (existing);
  g_assert_nonnull (strstr (header, "HISTORY sharpsky-cli"));
  g_assert_nonnull (strstr (header, "hdu=0 plane=0"));

  /* No output given is a usage error. */
  run = RUN_CLI ("deblur", truth_path, "--psf", "box:3");
  assert_refused (&run, 2, "-o");
  cli_run_clear (&run);

  /* A folder in the way is fixed on the command line (2), --force or not:
   * --force replaces a file, never a folder. A missing folder is failed
   * I/O (1). The checks are cli_check_output_path's, as quality's and cs's. */
  g_autofree char *folder = temp_path (f, "folder.fits");
  g_assert_cmpint (g_mkdir (folder, 0755), ==, 0);
  const char *force[] = { "--quiet", "--force" };
  for (gsize i = 0; i < G_N_ELEMENTS (force); i++)
    {
      run = RUN_CLI ("deblur", truth_path, "-o", folder, "--psf", "box:3", "--iters", "5",
                     force[i]);
      assert_refused (&run, 2, "folder.fits");
      g_assert_nonnull (strstr (run.err, "directory"));
      cli_run_clear (&run);
      g_assert_true (g_file_test (folder, G_FILE_TEST_IS_DIR));
    }
  g_autofree char *nowhere = temp_path (f, "no-such-folder/out.fits");
  run = RUN_CLI ("deblur", truth_path, "-o", nowhere, "--psf", "box:3", "--iters", "5");
  assert_refused (&run, 1, "out.fits");
  cli_run_clear (&run);
}

/* --help everywhere, --version, unknown commands and options. */
static void
test_usage (void)
{
  if (!cli_available ())
    return;
  const char *commands[] = { "simulate", "deblur", "run", "bench", "cs", "info", "quality" };
  for (gsize i = 0; i < G_N_ELEMENTS (commands); i++)
    {
      CliRun run = RUN_CLI (commands[i], "--help");
      g_assert_cmpint (run.status, ==, 0);
      /* The usage line names the command, not the program alone. */
      g_autofree char *usage = g_strdup_printf ("Usage:\n  sharpsky-cli %s [", commands[i]);
      if (strstr (run.out, usage) == NULL)
        g_error ("no '%s' in %s", usage, run.out);
      cli_run_clear (&run);
    }
  CliRun run = RUN_CLI ("--help");
  g_assert_cmpint (run.status, ==, 0);
  for (gsize i = 0; i < G_N_ELEMENTS (commands); i++)
    g_assert_nonnull (strstr (run.out, commands[i]));
  cli_run_clear (&run);

  run = RUN_CLI ("--version");
  g_assert_cmpint (run.status, ==, 0);
  g_assert_true (g_str_has_prefix (run.out, "sharpsky-cli "));
  cli_run_clear (&run);

  run = RUN_CLI ("frobnicate");
  assert_refused (&run, 2, "frobnicate");
  cli_run_clear (&run);

  run = RUN_CLI ("deblur", "x.fits", "--no-such-option");
  assert_refused (&run, 2, "--no-such-option");
  cli_run_clear (&run);

  run = run_cli_argv ((const char *const[]) { NULL });
  g_assert_cmpint (run.status, ==, 2);
  cli_run_clear (&run);
}

/* JSON strings are escaped: a file name with a quote, a backslash and a tab
 * comes back escaped, and the line still has the shape of one object. */
static void
test_json_escaping (Fixture *f, gconstpointer data)
{
  if (!cli_available ())
    return;
  g_autofree char *path = write_star_field (f, "we\"ird\\na\tme.fits", NULL);
  CliRun run = RUN_CLI ("run", path, "--iters", "5", "--json");
  g_assert_cmpint (run.status, ==, 0);
  g_autofree char *summary = json_line (run.out, "summary");
  g_assert_nonnull (strstr (summary, "we\\\"ird\\\\na\\tme.fits\""));
  g_assert_null (strchr (summary, '\t'));
  cli_run_clear (&run);
}

/* info describes a FITS file (its size) and lists the devices. */
static void
test_info (Fixture *f, gconstpointer data)
{
  if (!cli_available ())
    return;
  g_autofree char *truth_path = write_star_field (f, "truth.fits", NULL);
  CliRun run = RUN_CLI ("info", truth_path);
  g_assert_cmpint (run.status, ==, 0);
  g_assert_nonnull (strstr (run.out, "64"));
  g_assert_nonnull (strstr (run.out, "-32"));
  g_assert_nonnull (strstr (run.out, "compute devices"));
  cli_run_clear (&run);
}

/* ---- a PSF file is read once ------------------------------------------- */

typedef struct {
  const char *input, *output, *psf_option;
  CliRun run;
} DeblurCall;

static void
run_deblur (gpointer data)
{
  DeblurCall *call = data;
  call->run = RUN_CLI ("deblur", call->input, "-o", call->output, "--psf", call->psf_option,
                       "--iters", "3", "--force");
}

/* A 9 x 9 Gaussian stamp peaking 2 px right of its centre pixel (its
 * centroid, cut by the stamp's edge, 1.88 px right), a corner pixel a
 * little negative: reading it zeroes that pixel and warns of the centroid,
 * two notes. */
static char *
write_noted_psf (const Fixture *f)
{
  enum { S = 9 };
  float stamp[S * S];
  for (int y = 0; y < S; y++)
    for (int x = 0; x < S; x++)
      stamp[y * S + x] = (float) exp (-(pow (x - (S / 2 + 2), 2) + pow (y - S / 2, 2)) / 4.0);
  stamp[0] = -0.01f;
  char *path = temp_path (f, "psf.fits");
  write_fits_float (path, stamp, S, S);
  return path;
}

/* deblur --psf file:PSF reads the file once, however many planes the
 * image has: its notes, every plane's margin and blur come from that one
 * reading (the file was read again for the blur, and again for each
 * plane's margin). Each note is printed once. The reads are counted as
 * opens of the file, against those of one ss_psf_read_file here. */
static void
test_psf_file_read_once (Fixture *f, gconstpointer data)
{
  if (!cli_available ())
    return;
  g_autofree char *psf = write_noted_psf (f);
  g_autofree char *psf_option = g_strdup_printf ("file:%s", psf);
  int one_reading = test_count_opens (psf, test_read_psf_file, psf);
  g_assert_cmpint (one_reading, >, 0);
  for (int planes = 1; planes <= 3; planes += 2)
    {
      g_autofree float *pixels = g_new (float, SIDE * SIDE * planes);
      for (int p = 0; p < planes; p++)
        {
          g_autofree float *plane = random_star_field (SIDE, SIDE);
          memcpy (pixels + (gsize) p * SIDE * SIDE, plane, SIDE * SIDE * sizeof (float));
        }
      g_autofree char *input = temp_path (f, "stars.fits");
      g_autofree char *output = temp_path (f, "sharp.fits");
      test_write_fits_float (input, pixels, SIDE, SIDE, planes, "test stars");
      DeblurCall call = { input, output, psf_option, { 0 } };
      int opens = test_count_opens (psf, run_deblur, &call);
      g_test_message ("%d plane(s): %d opens, %d for one reading", planes, opens, one_reading);
      g_assert_cmpint (call.run.status, ==, 0);
      g_assert_cmpint (opens, ==, one_reading);
      g_auto (GStrv) lines = g_strsplit (call.run.err, "\n", -1);
      int negative = 0, centroid = 0;
      for (int i = 0; lines[i] != NULL; i++)
        {
          negative += strstr (lines[i], "1 negative pixels") != NULL;
          centroid += strstr (lines[i], "its centroid is (+1.88, +0.00) px") != NULL;
        }
      g_assert_cmpint (negative, ==, 1);
      g_assert_cmpint (centroid, ==, 1);
      cli_run_clear (&call.run);
    }
}

/* A PNG of random grey levels (incompressible, so that its image data
 * fill most of the file) written by the engine, 16-bit. */
static char *
write_noise_png (const Fixture *f, const char *name)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (SsImage) image = ss_image_new (SIDE, SIDE, 1, &error);
  g_assert_no_error (error);
  for (gsize i = 0; i < ss_image_plane_size (image); i++)
    image->data[i] = (float) g_test_rand_double ();
  SsPngWriteOptions options;
  ss_png_write_options_init (&options);
  options.bit_depth = 16;
  char *path = temp_path (f, name);
  g_assert_true (ss_png_write (image, path, &options, FALSE, NULL, &error));
  g_assert_no_error (error);
  return path;
}

/* PATH with its bytes from FRACTION of its length on cut off. */
static char *
write_truncated_copy (const Fixture *f, const char *path, const char *name, double fraction)
{
  g_autofree char *contents = NULL;
  gsize length = 0;
  g_assert_true (g_file_get_contents (path, &contents, &length, NULL));
  char *copy = temp_path (f, name);
  g_assert_true (g_file_set_contents (copy, contents, (gssize) (length * fraction), NULL));
  return copy;
}

/* info on a PNG cut short or corrupted inside its image data: its header
 * is whole, and info once described it as a sound image; it must fail
 * (exit 1) with one line naming the file as damaged, and describe nothing.
 * The sound file it came from is described (exit 0). */
static void
test_info_damaged_png (Fixture *f, gconstpointer data)
{
  if (!cli_available ())
    return;
  g_autofree char *sound = write_noise_png (f, "sound.png");
  CliRun run = RUN_CLI ("info", sound);
  g_assert_cmpint (run.status, ==, 0);
  g_assert_nonnull (strstr (run.out, "PNG image, 64 x 64, 16-bit grey"));
  cli_run_clear (&run);

  g_autofree char *truncated = write_truncated_copy (f, sound, "truncated.png", 0.6);
  run = RUN_CLI ("info", truncated);
  assert_refused (&run, 1, "truncated.png: damaged PNG: ");
  g_assert_nonnull (strstr (run.err, "truncated"));
  g_assert_cmpstr (run.out, ==, "");
  cli_run_clear (&run);

  /* One byte of the image data flipped, halfway through the file. */
  g_autofree char *contents = NULL;
  gsize length = 0;
  g_assert_true (g_file_get_contents (sound, &contents, &length, NULL));
  contents[length / 2] ^= 0x5a;
  g_autofree char *corrupted = temp_path (f, "corrupted.png");
  g_assert_true (g_file_set_contents (corrupted, contents, (gssize) length, NULL));
  run = RUN_CLI ("info", corrupted);
  assert_refused (&run, 1, "corrupted.png: damaged PNG: ");
  g_assert_cmpstr (run.out, ==, "");
  cli_run_clear (&run);
}

/* The solver options come from the engine's tables: --help names every
 * solver and offers every parameter, and a parameter out of its range is
 * refused with the table's rule. */
static void
test_solver_table_options (void)
{
  if (!cli_available ())
    return;
  CliRun run = RUN_CLI ("deblur", "--help");
  g_assert_cmpint (run.status, ==, 0);
  for (guint i = 0; i < ss_solver_count (); i++)
    g_assert_nonnull (strstr (run.out, ss_solver_nth (i)->name));
  for (int id = 0; id < SS_N_PARAMS; id++)
    {
      g_autofree char *option = g_strdup_printf ("--%s", ss_param_info ((SsParamId) id)->name);
      g_assert_nonnull (strstr (run.out, option));
    }
  cli_run_clear (&run);

  run = RUN_CLI ("run", "--solver", "cpadmm", "--tau", "1.7", "--iters", "1");
  assert_refused (&run, 2, "--tau 1.7");
  cli_run_clear (&run);
  run = RUN_CLI ("run", "--solver", "direct", "--direct-method", "sideways");
  assert_refused (&run, 2, "--direct-method");
  cli_run_clear (&run);
  run = RUN_CLI ("run", "--solver", "nonesuch");
  assert_refused (&run, 2, "--solver");
  cli_run_clear (&run);
}

/* ---- speed: FFTW wisdom, phases, the whole-path bench (issue 11) -------- */

/* This environment with the user cache in CACHE (NULL: leave it) and FFTW
 * measuring plans (the suite's SHARPSKY_FFTW=estimate would skip wisdom);
 * WISDOM, when not NULL, is SHARPSKY_FFTW_WISDOM. */
static char **
wisdom_environment (const char *cache, const char *wisdom)
{
  char **envp = g_get_environ ();
  envp = g_environ_unsetenv (envp, "SHARPSKY_FFTW");
  envp = g_environ_unsetenv (envp, "SHARPSKY_FFTW_WISDOM");
  if (cache)
    envp = g_environ_setenv (envp, "XDG_CACHE_HOME", cache, TRUE);
  if (wisdom)
    envp = g_environ_setenv (envp, "SHARPSKY_FFTW_WISDOM", wisdom, TRUE);
  return envp;
}

/* deblur IN in ENVP; returns its JSON summary and checks the output exists. */
static char *
deblur_summary (char **envp, const char *in, const char *out)
{
  /* CPADMM: its iterations' plans are the only measured ones (RL also
   * transforms once at the same size, estimated at first and from wisdom
   * later). */
  CliRun run = RUN_CLI_ENV (envp, "deblur", in, "-o", out, "--force", "--psf", "gaussian:2",
                            "--solver", "cpadmm", "--iters", "4", "--backend", "cpu", "--json");
  g_assert_cmpint (run.status, ==, 0);
  char *summary = json_line (run.out, "summary");
  cli_run_clear (&run);
  g_assert_true (g_file_test (out, G_FILE_TEST_IS_REGULAR));
  return summary;
}

/* The one wisdom file under CACHE/sharpsky, or NULL. */
static char *
find_wisdom_file (const char *cache)
{
  g_autofree char *dir = g_build_filename (cache, "sharpsky", NULL);
  g_autoptr (GDir) listing = g_dir_open (dir, 0, NULL);
  const char *name;
  while (listing && (name = g_dir_read_name (listing)) != NULL)
    if (g_str_has_prefix (name, "fftw-wisdom-"))
      return g_build_filename (dir, name, NULL);
  return NULL;
}

/* The first run measures plans and writes wisdom into the user's cache; the
 * next takes every measured plan from it (the same plans: the same bits); a
 * damaged file is ignored (and replaced), an unwritable cache or
 * SHARPSKY_FFTW_WISDOM=0 change nothing but the planning. */
static void
test_fftw_wisdom (Fixture *f, gconstpointer data)
{
  if (!cli_available ())
    return;
  g_autofree char *in = write_star_field (f, "stars.fits", NULL);
  g_autofree char *out = temp_path (f, "out.fits");
  g_autofree char *cache = temp_path (f, "cache");
  g_auto (GStrv) envp = wisdom_environment (cache, NULL);

  g_autofree char *first = deblur_summary (envp, in, out);
  assert_json_string (first, "fftw_wisdom", "none");
  g_assert_cmpfloat (json_number (first, "fftw_plans_measured"), >=, 1);
  g_autofree char *wisdom = find_wisdom_file (cache);
  g_assert_nonnull (wisdom);
  long w, h;
  g_autofree float *reference = read_fits_float (out, &w, &h, NULL);

  g_autofree char *second = deblur_summary (envp, in, out);
  assert_json_string (second, "fftw_wisdom", "loaded");
  g_assert_cmpfloat (json_number (second, "fftw_plans_measured"), ==, 0);
  g_assert_cmpfloat (json_number (second, "fftw_plans_from_wisdom"), >=, 1);
  g_autofree float *again = read_fits_float (out, &w, &h, NULL);
  /* The same result to float rounding, not always bit for bit: with more
   * threads than a batch has transforms (16 cores) the solver plans single
   * transforms of the frame's size, and the next run's one-off transform of
   * the PSF at that size finds their measured plan in the wisdom where the
   * first run had estimated one. Measured there: the last bits differ. */
  double diff = test_rel_diff (again, reference, (gsize) w * h);
  g_test_message ("second run against the first: relative difference %.3g", diff);
  g_assert_cmpfloat (diff, <, 1e-6);

  /* Damaged: random bytes (a NUL among them), then a truncated copy of FFTW's text. */
  guint8 junk[256];
  for (gsize i = 0; i < sizeof junk; i++)
    junk[i] = (guint8) g_test_rand_int_range (0, 256);
  junk[17] = 0;
  g_assert_true (g_file_set_contents (wisdom, (const char *) junk, sizeof junk, NULL));
  g_autofree char *damaged = deblur_summary (envp, in, out);
  assert_json_string (damaged, "fftw_wisdom", "unreadable");
  g_autofree char *text = NULL;
  gsize length = 0;
  g_assert_true (g_file_get_contents (wisdom, &text, &length, NULL));
  g_assert_true (g_str_has_prefix (text, "(fftw-"));
  g_assert_true (g_file_set_contents (wisdom, text, (gssize) length / 2, NULL));
  g_autofree char *truncated = deblur_summary (envp, in, out);
  g_assert_cmpfloat (json_number (truncated, "iterations"), ==, 4);

  /* Unwritable: the cache directory is a file. */
  g_autofree char *blocked = temp_path (f, "not-a-dir");
  g_assert_true (g_file_set_contents (blocked, "x", 1, NULL));
  g_auto (GStrv) blocked_env = wisdom_environment (blocked, NULL);
  g_autofree char *unwritable = deblur_summary (blocked_env, in, out);
  assert_json_string (unwritable, "fftw_wisdom", "none");

  /* Off, and an explicit path. */
  g_auto (GStrv) off_env = wisdom_environment (cache, "0");
  g_autofree char *off = deblur_summary (off_env, in, out);
  assert_json_string (off, "fftw_wisdom", "off");
  g_autofree char *explicit_path = temp_path (f, "my-wisdom");
  g_auto (GStrv) path_env = wisdom_environment (cache, explicit_path);
  g_autofree char *explicit = deblur_summary (path_env, in, out);
  assert_json_string (explicit, "fftw_wisdom", "none");
  g_assert_true (g_file_test (explicit_path, G_FILE_TEST_IS_REGULAR));
  /* A plan measured afresh may be another algorithm: equal to rounding. */
  g_autofree float *last = read_fits_float (out, &w, &h, NULL);
  g_assert_cmpfloat (test_rel_diff (last, reference, (gsize) w * h), <, 1e-5);
}

/* deblur says where its time went: every phase present, >= 0, and together
 * no more than the wall time they are part of; the text says it too. */
static void
test_deblur_phases (Fixture *f, gconstpointer data)
{
  if (!cli_available ())
    return;
  g_autofree char *in = write_star_field (f, "stars.fits", NULL);
  g_autofree char *out = temp_path (f, "out.fits");
  CliRun run = RUN_CLI ("deblur", in, "-o", out, "--psf", "moffat:2.5,3", "--alpha", "auto",
                        "--iters", "6", "--json");
  g_assert_cmpint (run.status, ==, 0);
  g_autofree char *summary = json_line (run.out, "summary");
  const char *phases[] = { "seconds_read", "seconds_prepare", "seconds_plan", "seconds_solve",
                           "seconds_write" };
  double sum = 0, wall = json_number (summary, "seconds_wall");
  for (gsize i = 0; i < G_N_ELEMENTS (phases); i++)
    {
      double value = json_number (summary, phases[i]);
      g_assert_true (isfinite (value));
      g_assert_cmpfloat (value, >=, 0);
      sum += value;
    }
  g_assert_true (isfinite (wall));
  g_assert_cmpfloat (sum, <=, wall * (1 + 1e-9) + 1e-6);
  cli_run_clear (&run);

  CliRun text = RUN_CLI ("deblur", in, "-o", out, "--force", "--psf", "moffat:2.5,3",
                         "--iters", "3");
  g_assert_cmpint (text.status, ==, 0);
  g_autoptr (GRegex) line = g_regex_new ("^time +read [0-9.]+ s, prepare [0-9.]+ s, plan "
                                         "[0-9.]+ s, solve [0-9.]+ s, write [0-9.]+ s; wall "
                                         "[0-9.]+ s$", G_REGEX_MULTILINE, 0, NULL);
  g_assert_true (g_regex_match (line, text.out, 0, NULL));
  cli_run_clear (&text);
}

/* bench --whole on a small frame: the real path runs (first, 2 and 12
 * iterations, and --iters N), every run's phases come back, and the
 * overhead is computed from the walls as the issue defines it. */
static void
test_bench_whole (Fixture *f, gconstpointer data)
{
  if (!cli_available ())
    return;
  int width = g_test_rand_int_range (64, 100), height = g_test_rand_int_range (64, 90);
  g_autofree char *w = g_strdup_printf ("%d", width), *h = g_strdup_printf ("%d", height);
  CliRun run = RUN_CLI ("bench", "--whole", "--width", w, "--height", h, "--iters", "5",
                        "--backend", "cpu", "--json");
  g_assert_cmpint (run.status, ==, 0);
  g_autofree char *line = json_line (run.out, "bench_whole");
  g_assert_cmpfloat (json_number (line, "width"), ==, width);
  g_assert_cmpfloat (json_number (line, "height"), ==, height);
  g_assert_cmpfloat (json_number (line, "padded_width"), >=, width);
  g_assert_cmpfloat (json_number (line, "extra_iterations"), ==, 5);
  /* What deblur runs for --iters: the default, or its first candidate that
   * takes an iteration count. */
  const SsSolverInfo *solver = ss_solver_info (ss_solver_default_for_real_data ());
  for (int c = 0; c < solver->n_candidates && !ss_solver_uses (solver, SS_PARAM_ITERATIONS); c++)
    if (ss_solver_uses (ss_solver_info (solver->candidates[c]), SS_PARAM_ITERATIONS))
      solver = ss_solver_info (solver->candidates[c]);
  assert_json_string (line, "solver", solver->name);
  const char *runs[] = { "first", "t2", "t12", "extra" };
  for (gsize i = 0; i < G_N_ELEMENTS (runs); i++)
    {
      g_autofree char *key = g_strdup_printf ("%s_wall", runs[i]);
      g_assert_cmpfloat (json_number (line, key), >, 0);
      g_autofree char *solve = g_strdup_printf ("%s_solve", runs[i]);
      g_assert_cmpfloat (json_number (line, solve), >=, 0);
    }
  double t2 = json_number (line, "t2_wall"), t12 = json_number (line, "t12_wall");
  double per = json_number (line, "seconds_per_iteration");
  g_assert_cmpfloat_with_epsilon (per, (t12 - t2) / 10, 1e-6);
  g_assert_cmpfloat_with_epsilon (json_number (line, "overhead_seconds"), t2 - 2 * per, 1e-6);
  cli_run_clear (&run);

  CliRun text = RUN_CLI ("bench", "--whole", "--width", w, "--height", h, "--backend", "cpu");
  g_assert_cmpint (text.status, ==, 0);
  g_assert_nonnull (strstr (text.out, "iterations' worth"));
  cli_run_clear (&text);

  CliRun refused = RUN_CLI ("bench", "--whole", "--boundary", "mirror");
  assert_refused (&refused, 2, "--boundary");
  cli_run_clear (&refused);
  CliRun small = RUN_CLI ("bench", "--whole", "--width", "63");
  assert_refused (&small, 2, "--width");
  cli_run_clear (&small);
}

static gboolean
directory_is_empty (const char *dir)
{
  g_autoptr (GDir) d = g_dir_open (dir, 0, NULL);
  g_assert_nonnull (d);
  return g_dir_read_name (d) == NULL;
}

/* bench --whole reads its options as the plain bench does: a bad --prior
 * or --devices is bad usage (exit 2) named on one line before any work,
 * not a child deblur that fails (exit 1). Nothing is printed on stdout and
 * no temporary directory is made (TMPDIR is the scratch directory, the
 * bench's working directory too). */
static void
test_bench_whole_bad_values (Fixture *f, gconstpointer data)
{
  if (!cli_available ())
    return;
  const struct {
    const char *args[6];
    const char *named, *value;
  } cases[] = {
    { { "--prior", "nonsense" }, "--prior", "nonsense" },
    { { "--solver", "admm", "--prior", "nonsense" }, "--prior", "nonsense" },
    { { "--devices", "zz" }, "--devices", "zz" },
    { { "--solver", "admm", "--devices", "0,,1" }, "--devices", "0,,1" },
  };
  g_auto (GStrv) env = g_get_environ ();
  env = g_environ_setenv (env, "TMPDIR", f->dir, TRUE);
  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    for (int whole = 0; whole <= 1; whole++)
      {
        const char *args[16] = { "bench", "--width", "64", "--height", "64", "--backend",
                                 "cpu" };
        gsize n = 7;
        if (whole)
          args[n++] = "--whole";
        for (gsize a = 0; cases[i].args[a] != NULL; a++)
          args[n++] = cases[i].args[a];
        CliRun run = run_cli_full (f->dir, env, NULL, args);
        assert_refused (&run, 2, cases[i].named);
        g_assert_nonnull (strstr (run.err, cases[i].value));
        g_assert_null (strstr (run.err, "deblur ("));
        g_assert_cmpstr (run.out, ==, "");
        g_assert_true (directory_is_empty (f->dir));
        cli_run_clear (&run);
      }
}

/* Every subcommand's command line goes through one parse: an unknown option
 * and a stray argument are bad usage (exit 2), one line that names the
 * command and the culprit, the first pointing to the command's --help. */
static void
test_usage_errors (void)
{
  if (!cli_available ())
    return;
  const char *commands[] = { "bench", "cs", "quality", "simulate" };
  for (gsize i = 0; i < G_N_ELEMENTS (commands); i++)
    {
      CliRun run = RUN_CLI (commands[i], "--no-such-option");
      assert_refused (&run, 2, "--no-such-option");
      g_autofree char *start = g_strdup_printf ("sharpsky-cli: %s: ", commands[i]);
      g_autofree char *help = g_strdup_printf ("(see 'sharpsky-cli %s --help')", commands[i]);
      g_assert_true (g_str_has_prefix (run.err, start));
      g_assert_nonnull (strstr (run.err, help));
      g_assert_cmpstr (run.out, ==, "");
      cli_run_clear (&run);
    }
  const char *no_arguments[] = { "bench", "cs", "quality" };
  for (gsize i = 0; i < G_N_ELEMENTS (no_arguments); i++)
    {
      CliRun run = RUN_CLI (no_arguments[i], "stray");
      g_autofree char *line = g_strdup_printf ("sharpsky-cli: %s: unexpected argument 'stray'\n",
                                               no_arguments[i]);
      g_assert_cmpint (run.status, ==, 2);
      g_assert_cmpstr (run.err, ==, line);
      cli_run_clear (&run);
    }
}

/* cs: one solve and a batch recover their problems (the JSON says how many),
 * and the greedy solvers appear in run like any other solver of the table. */
static void
test_cs_solves (Fixture *f, gconstpointer data)
{
  if (!cli_available ())
    return;
  g_autofree char *seed = g_strdup_printf ("%u", g_test_rand_int ());
  /* IHT's fixed safe step 1/||A||² can settle on a wrong support, so it
   * is run but not held to every problem; the others recover all four. */
  const char *solvers[] = { "niht", "htp", "cosamp", "alm", "iht" };
  for (gsize i = 0; i < G_N_ELEMENTS (solvers); i++)
    {
      CliRun run = RUN_CLI ("cs", "--solver", solvers[i], "--n", "256", "--rho", "0.1",
                            "--batch", "4", "--seed", seed, "--json");
      g_assert_cmpint (run.status, ==, 0);
      g_autofree char *line = json_line (run.out, "cs");
      g_assert_nonnull (strstr (line, g_str_equal (solvers[i], "iht") ? "\"recovered\":"
                                                                       : "\"recovered\":4"));
      cli_run_clear (&run);
    }
  CliRun run = RUN_CLI ("cs", "--ensemble", "dct", "--n", "512", "--solver", "niht");
  g_assert_cmpint (run.status, ==, 0);
  g_assert_nonnull (strstr (run.out, "recovered        1 of 1"));
  cli_run_clear (&run);
  run = RUN_CLI ("cs", "--ensemble", "sparse", "--p", "6", "--n", "512", "--values", "sign");
  g_assert_cmpint (run.status, ==, 0);
  cli_run_clear (&run);
}

/* cs --phase-transition writes the CSV (one line a cell) and a PNG, and
 * refuses to overwrite them without --force. */
static void
test_cs_phase_transition (Fixture *f, gconstpointer data)
{
  if (!cli_available ())
    return;
  g_autofree char *prefix = temp_path (f, "pt");
  g_autofree char *csv = temp_path (f, "pt.csv"), *png = temp_path (f, "pt.png");
  CliRun run = RUN_CLI ("cs", "--phase-transition", "--n", "128", "--trials", "4", "--deltas",
                        "0.3,0.6", "--rhos", "0.1,0.3,0.9", "-o", prefix);
  g_assert_cmpint (run.status, ==, 0);
  cli_run_clear (&run);
  g_autofree char *text = NULL;
  g_assert_true (g_file_get_contents (csv, &text, NULL, NULL));
  g_auto (GStrv) lines = g_strsplit (g_strstrip (text), "\n", -1);
  g_assert_cmpint (g_strv_length (lines), ==, 1 + 2 * 3);
  g_assert_true (g_str_has_prefix (lines[0], "delta,rho,m,k,trials,recovered,fraction"));
  /* δ 0.6, ρ 0.1 is recovered; δ 0.3, ρ 0.9 is far past the transition. */
  g_assert_true (g_str_has_prefix (lines[2], "0.6,0.1,77,8,4,4,1,"));
  g_assert_true (g_str_has_prefix (lines[5], "0.3,0.9,"));
  g_assert_nonnull (strstr (lines[5], ",4,0,0,"));
  g_autoptr (SsImage) image = ss_png_read (png, NULL);
  g_assert_nonnull (image);
  g_assert_cmpint (image->width, ==, 2 * 24 + 1);
  g_assert_cmpint (image->height, ==, 3 * 24 + 1);
  run = RUN_CLI ("cs", "--phase-transition", "--n", "128", "--trials", "2", "-o", prefix);
  assert_refused (&run, 2, "pt.csv");
  g_assert_nonnull (strstr (run.err, "--force"));
  cli_run_clear (&run);

  /* deblur's path checks, before the sweep: a folder in the way (2, even
   * with --force), a missing folder (1), nothing written. */
  g_autofree char *folder = temp_path (f, "dir.png");
  g_assert_cmpint (g_mkdir (folder, 0755), ==, 0);
  g_autofree char *folder_prefix = temp_path (f, "dir");
  run = RUN_CLI ("cs", "--phase-transition", "--n", "128", "--trials", "2", "-o", folder_prefix,
                 "--force");
  assert_refused (&run, 2, "dir.png");
  g_assert_cmpstr (run.out, ==, "");
  cli_run_clear (&run);
  g_autofree char *folder_csv = temp_path (f, "dir.csv");
  assert_absent (folder_csv);
  g_autofree char *nowhere = temp_path (f, "no-such-folder/pt");
  run = RUN_CLI ("cs", "--phase-transition", "--n", "128", "--trials", "2", "-o", nowhere);
  assert_refused (&run, 1, "pt.csv");
  g_assert_cmpstr (run.out, ==, "");
  cli_run_clear (&run);
  /* A pipe (or device, as `-o /dev/null` is) is no name prefix: refused,
   * nothing written beside it. */
  g_autofree char *pipe = temp_path (f, "pipe");
  g_assert_cmpint (mkfifo (pipe, 0644), ==, 0);
  run = RUN_CLI ("cs", "--phase-transition", "--n", "128", "--trials", "2", "-o", pipe);
  assert_refused (&run, 2, "device or pipe");
  cli_run_clear (&run);
  g_autofree char *pipe_csv = temp_path (f, "pipe.csv");
  assert_absent (pipe_csv);
}

/* cs refuses bad arguments with exit 2 and one line naming the option. */
static void
test_cs_bad_arguments (Fixture *f, gconstpointer data)
{
  if (!cli_available ())
    return;
  const struct { const char *args[4]; const char *named; } cases[] = {
    { { "--solver", "magic" }, "magic" },
    { { "--ensemble", "fourier" }, "fourier" },
    { { "--values", "cauchy" }, "cauchy" },
    { { "--delta", "1.5" }, "--delta" },
    { { "--n", "-4" }, "--n" },
    { { "--k", "600", "--m", "500" }, "k <= m" },
    { { "--trials", "zero" }, "--trials" },
    { { "--phase-transition" }, "-o PREFIX" },
    { { "--deltas", "0.2,,x" }, "--deltas" },
    { { "--matrix", "13", "--bench" }, "--matrix" },
    { { "--ensemble", "gaussian", "--n", "2000000000" }, "largest n" },
    { { "--ensemble", "sparse", "--n", "2147483647" }, "largest n" },   /* aborted in g_new */
    { { "--tol", "0" }, "--tol:" },
    { { "--noise", "1e300" }, "--noise:" },
    { { "--alpha", "-1" }, "--alpha:" },
    { { "extra" }, "extra" },
  };
  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      const char *args[8] = { "cs" };
      int count = 1;
      for (int j = 0; j < 4 && cases[i].args[j]; j++)
        args[count++] = cases[i].args[j];
      CliRun run = run_cli_argv (args);
      assert_refused (&run, 2, cases[i].named);
      cli_run_clear (&run);
    }
}

/* Every JSON line names each member once, and a summary gives the
 * parameters its solver takes and no other: alpha (and alpha_auto) only
 * where the solver takes α, nonneg only where it takes the constraint.
 * Each solver of the table through run, and deblur of a measurement and
 * of a real image. */
static void
test_json_keys_once (Fixture *f, gconstpointer data)
{
  if (!cli_available ())
    return;
  g_autofree char *truth_path = write_star_field (f, "truth.fits", NULL);
  for (guint k = 0; k < ss_solver_count (); k++)
    {
      const SsSolverInfo *info = ss_solver_nth (k);
      /* The dense solver's size limits are test-dense's. */
      if (info->caps & SS_SOLVER_NEEDS_REGION)
        continue;
      CliRun run = RUN_CLI ("run", truth_path, "--solver", info->name, "--psf", "box:3",
                            "--ratio", "1", "--sensing", "none", "--iters", "4", "--backend",
                            "cpu", "--json");
      g_assert_cmpint (run.status, ==, 0);
      assert_json_keys_once (run.out);
      g_autofree char *summary = json_line (run.out, "summary");
      assert_json_string (summary, "solver", info->name);
      gboolean alpha = ss_solver_uses (info, SS_PARAM_ALPHA);
      g_assert_cmpint (json_has (summary, "alpha"), ==, alpha);
      g_assert_cmpint (json_has (summary, "alpha_auto"), ==, alpha);
      g_assert_cmpint (json_has (summary, "nonneg"), ==, ss_solver_uses (info, SS_PARAM_NONNEG));
      cli_run_clear (&run);
    }

  g_autofree char *measured_path = temp_path (f, "measured.fits");
  g_autofree char *out_path = temp_path (f, "out.fits");
  RUN_CLI_OK ("simulate", truth_path, "-o", measured_path, "--psf", "box:5", "--ratio", "0.5",
              "--seed", "3");
  const char *solvers[] = { "cpadmm", "fista", "admm", "niht" };
  for (gsize i = 0; i < G_N_ELEMENTS (solvers); i++)
    {
      CliRun run = RUN_CLI ("deblur", measured_path, "-o", out_path, "--force", "--solver",
                            solvers[i], "--iters", "4", "--nonneg", "--backend", "cpu",
                            "--json");
      g_assert_cmpint (run.status, ==, 0);
      assert_json_keys_once (run.out);
      g_autofree char *summary = json_line (run.out, "summary");
      g_assert_true (g_str_has_prefix (strstr (summary, "\"nonneg\":"), "\"nonneg\":true"));
      cli_run_clear (&run);
    }
  /* A real image (no acquisition cards): RL, the default with --iters,
   * reports no α even with --alpha auto; FISTA the x >= 0 that is the
   * default on real data. */
  CliRun run = RUN_CLI ("deblur", truth_path, "-o", out_path, "--force", "--psf", "gaussian:2",
                        "--iters", "4", "--alpha", "auto", "--backend", "cpu", "--json");
  g_assert_cmpint (run.status, ==, 0);
  assert_json_keys_once (run.out);
  g_autofree char *summary = json_line (run.out, "summary");
  assert_json_string (summary, "solver", "rl");
  g_assert_false (json_has (summary, "alpha"));
  g_assert_false (json_has (summary, "alpha_auto"));
  cli_run_clear (&run);
  run = RUN_CLI ("deblur", truth_path, "-o", out_path, "--force", "--psf", "gaussian:2",
                 "--solver", "fista", "--iters", "4", "--backend", "cpu", "--json");
  g_assert_cmpint (run.status, ==, 0);
  assert_json_keys_once (run.out);
  g_free (summary);
  summary = json_line (run.out, "summary");
  g_assert_true (g_str_has_prefix (strstr (summary, "\"nonneg\":"), "\"nonneg\":true"));
  cli_run_clear (&run);
  /* A greedy solver with --alpha auto: the sparsity asked and the one its
   * hold-out rule chose, under two keys (both were "sparsity"). */
  run = RUN_CLI ("deblur", truth_path, "-o", out_path, "--force", "--psf", "gaussian:2",
                 "--solver", "niht", "--alpha", "auto", "--iters", "20", "--backend", "cpu",
                 "--json");
  g_assert_cmpint (run.status, ==, 0);
  assert_json_keys_once (run.out);
  g_free (summary);
  summary = json_line (run.out, "summary");
  g_assert_true (json_has (summary, "sparsity"));
  g_assert_true (json_has (summary, "sparsity_chosen"));
  cli_run_clear (&run);
}

/* quality, like deblur, replaces no file without --force: each file it
 * writes (--markdown, --trace, a case's mosaic, a --write-cases file) is
 * refused when it exists, with exit 2 and before any work (nothing on
 * stdout, the file kept); with --force each is replaced, and the trace
 * starts with a line naming its columns. */
static void
test_quality_outputs (Fixture *f, gconstpointer data)
{
  if (!cli_available ())
    return;
  g_autofree char *markdown = temp_path (f, "small.fits");
  g_autofree char *trace = temp_path (f, "trace.csv");
  g_autofree char *mosaics = temp_path (f, "mosaics");
  g_autofree char *mosaic = g_build_filename (mosaics, "quality-small-stars.png", NULL);
  g_autofree char *cases = temp_path (f, "cases");
  g_autofree char *case_dir = g_build_filename (cases, "small-stars", NULL);
  g_autofree char *psf = g_build_filename (case_dir, "psf.fits", NULL);
  g_assert_cmpint (g_mkdir_with_parents (mosaics, 0755), ==, 0);
  g_assert_cmpint (g_mkdir_with_parents (case_dir, 0755), ==, 0);
  const struct { const char *option, *value, *existing; } outputs[] = {
    { "--markdown", markdown, markdown },
    { "--trace", trace, trace },
    { "--mosaics", mosaics, mosaic },
    { "--write-cases", cases, psf },
  };
  for (gsize i = 0; i < G_N_ELEMENTS (outputs); i++)
    g_assert_true (g_file_set_contents (outputs[i].existing, "keep me", -1, NULL));

  /* One case, one cheap row. */
#define QUALITY_CHEAP "quality", "--only", "small-stars", "--methods", "cpadmm", "--set", \
                      "iters=5", "--backend", "cpu", "--no-siril", "--quiet"
  for (gsize i = 0; i < G_N_ELEMENTS (outputs); i++)
    {
      CliRun run = RUN_CLI (QUALITY_CHEAP, outputs[i].option, outputs[i].value);
      g_autofree char *name = g_path_get_basename (outputs[i].existing);
      assert_refused (&run, 2, name);
      g_assert_nonnull (strstr (run.err, "--force"));
      g_assert_cmpstr (run.out, ==, "");
      cli_run_clear (&run);
      g_autofree char *kept = NULL;
      g_assert_true (g_file_get_contents (outputs[i].existing, &kept, NULL, NULL));
      g_assert_cmpstr (kept, ==, "keep me");
    }

  RUN_CLI_OK (QUALITY_CHEAP, "--force", "--markdown", markdown, "--trace", trace, "--mosaics",
              mosaics, "--write-cases", cases);
#undef QUALITY_CHEAP
  g_autofree char *text = NULL;
  g_assert_true (g_file_get_contents (markdown, &text, NULL, NULL));
  g_assert_true (g_str_has_prefix (text, "Measured "));
  g_free (text);
  g_assert_true (g_file_get_contents (trace, &text, NULL, NULL));
  g_assert_cmpstr (text, ==, "case,method,iteration,psnr,residual,rel_change\n");
  g_free (text);
  g_assert_true (g_file_get_contents (mosaic, &text, NULL, NULL));
  g_assert_true (g_str_has_prefix (text, "\x89PNG"));
  g_free (text);
  g_assert_true (g_file_get_contents (psf, &text, NULL, NULL));
  g_assert_true (g_str_has_prefix (text, "SIMPLE"));
}

/* quality refuses an unknown method, case or --set value before any work
 * (exit 2, nothing on stdout, no file written), naming it; without the
 * checks each ran, with rows of the input alone or rows that all failed. */
static void
test_quality_bad_values (Fixture *f, gconstpointer data)
{
  if (!cli_available ())
    return;
  g_autofree char *markdown = temp_path (f, "out.md");
  const struct { const char *args[4]; const char *named; } cases[] = {
    { { "--methods", "nosuch" }, "nosuch" },
    { { "--methods", "rl,fista" }, "rl,fista" },
    { { "--methods", "direct" }, "direct" },
    { { "--methods", "cpadmm", "--set", "alpha=-1" }, "alpha=-1" },
    { { "--methods", "cpadmm", "--set", "iters=2.5" }, "iters=2.5" },
    { { "--methods", "admm", "--set", "prior=foo" }, "prior=foo" },
    { { "--methods", "cpadmm", "--set", "nosuch=1" }, "nosuch=1" },
    { { "--methods", "cpadmm", "--only", "nope" }, "nope" },
    /* --only within --cases: small-stars is no full case. */
    { { "--methods", "cpadmm", "--cases", "full" }, "in --cases full" },
    { { "--methods", "cpadmm", "extra" }, "extra" },
    { { "--methods", "siril", "--no-siril" }, "siril" },
  };
  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      const char *args[12] = { "quality", "--only", "small-stars", "--backend", "cpu",
                               "--markdown", markdown };
      int count = 7;
      for (int j = 0; j < 4 && cases[i].args[j]; j++)
        args[count++] = cases[i].args[j];
      CliRun run = run_cli_argv (args);
      assert_refused (&run, 2, cases[i].named);
      g_assert_cmpstr (run.out, ==, "");
      assert_absent (markdown);
      cli_run_clear (&run);
    }
}

/* --help keeps its non-ASCII characters in a UTF-8 locale: GOption writes
 * in the locale's charset, which is ASCII ('?' for δ) unless the program
 * takes the user's locale. */
static void
test_help_utf8 (void)
{
  if (!cli_available ())
    return;
  g_autofree char *saved = g_strdup (setlocale (LC_ALL, NULL));
  gboolean have = setlocale (LC_ALL, "C.UTF-8") != NULL;
  setlocale (LC_ALL, saved);
  if (!have)
    {
      g_test_skip ("no C.UTF-8 locale on this system");
      return;
    }
  g_auto (GStrv) env = g_get_environ ();
  env = g_environ_setenv (env, "LC_ALL", "C.UTF-8", TRUE);
  CliRun run = RUN_CLI_ENV (env, "cs", "--help");
  g_assert_cmpint (run.status, ==, 0);
  if (strstr (run.out, "δ = m/n") == NULL)
    g_error ("no 'δ = m/n' in %s", run.out);
  cli_run_clear (&run);
}

/* --alpha auto on a planet: a disk of 5000 e⁻ (photon noise √5000) on a
 * black sky of read noise 3. The typical pixel is the sky's, and the α
 * rule takes the noise where the light is: the JSON's alpha_noise is
 * several times noise_estimate. On a sky of one noise level the two are
 * equal (the rule's own σ), and RL, which takes no α, reports none. */
static void
test_alpha_noise_where_light_is (Fixture *f, gconstpointer data)
{
  if (!cli_available ())
    return;
  const int side = 128;
  g_autofree float *disk = g_new (float, side * side);
  double radius = g_test_rand_double_range (35, 45);
  for (int y = 0; y < side; y++)
    for (int x = 0; x < side; x++)
      {
        gboolean inside = hypot (x - side / 2.0, y - side / 2.0) < radius;
        disk[y * side + x] = (float) (inside ? 5000.0 + sqrt (5000.0) * test_rand_normal ()
                                             : 3.0 * test_rand_normal ());
      }
  g_autofree char *planet = temp_path (f, "planet.fits");
  write_fits_float (planet, disk, side, side);
  g_autofree char *out = temp_path (f, "out.fits");
  CliRun run = RUN_CLI ("deblur", planet, "-o", out, "--psf", "gaussian:3", "--solver", "admm",
                        "--alpha", "auto", "--iters", "2", "--json");
  g_assert_cmpint (run.status, ==, 0);
  g_autofree char *line = json_line (run.out, "summary");
  double typical = json_number (line, "noise_estimate"), used = json_number (line, "alpha_noise");
  g_test_message ("planet: noise_estimate %g, alpha_noise %g", typical, used);
  g_assert_cmpfloat (used, >, 3 * typical);
  cli_run_clear (&run);

  g_autofree float *sky = g_new (float, side * side);
  for (int i = 0; i < side * side; i++)
    sky[i] = (float) (100.0 + 10.0 * test_rand_normal ());
  g_autofree char *flat = temp_path (f, "sky.fits");
  write_fits_float (flat, sky, side, side);
  run = RUN_CLI ("deblur", flat, "-o", out, "--force", "--psf", "gaussian:3", "--solver",
                 "admm", "--alpha", "auto", "--iters", "2", "--json");
  g_assert_cmpint (run.status, ==, 0);
  g_autofree char *field = json_line (run.out, "summary");
  g_assert_cmpfloat (json_number (field, "alpha_noise"), ==, json_number (field, "noise_estimate"));
  cli_run_clear (&run);

  run = RUN_CLI ("deblur", planet, "-o", out, "--force", "--psf", "gaussian:3", "--solver", "rl",
                 "--iters", "4", "--json");
  g_assert_cmpint (run.status, ==, 0);
  g_autofree char *rl = json_line (run.out, "summary");
  g_assert_null (strstr (rl, "alpha_noise"));
  cli_run_clear (&run);
}

/* The CPU's name in every report says how OpenMP's idle threads wait, as
 * the environment libgomp read at start-up set it. */
static void
test_openmp_wait (Fixture *f, gconstpointer data)
{
  if (!cli_available ())
    return;
  g_autofree char *truth_path = write_star_field (f, "truth.fits", NULL);
  const struct { const char *name, *value, *report; } cases[] = {
    { NULL, NULL, "OpenMP default wait)" },
    { "GOMP_SPINCOUNT", "77", "OpenMP spin 77)" },
    { "OMP_WAIT_POLICY", "PASSIVE", "OpenMP passive)" },
  };
  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_auto (GStrv) env = g_get_environ ();
      env = g_environ_unsetenv (env, "OMP_WAIT_POLICY");
      env = g_environ_unsetenv (env, "GOMP_SPINCOUNT");
      if (cases[i].name != NULL)
        env = g_environ_setenv (env, cases[i].name, cases[i].value, TRUE);
      CliRun run = RUN_CLI_ENV (env, "info", truth_path);
      g_assert_cmpint (run.status, ==, 0);
      if (strstr (run.out, cases[i].report) == NULL)
        g_error ("no '%s' in %s", cases[i].report, run.out);
      cli_run_clear (&run);
    }
}

/* Reads ERR's lines until one reports an iteration; its number, or -1 at
 * the end of the stream. */
static int
first_reported_iteration (GDataInputStream *err)
{
  char *line;
  while ((line = g_data_input_stream_read_line (err, NULL, NULL, NULL)) != NULL)
    {
      int iteration = -1;
      const char *at = strstr (line, "iteration ");
      gboolean found = at && sscanf (at, "iteration %d", &iteration) == 1;
      g_free (line);
      if (found)
        return iteration;
    }
  return -1;
}

static void
assert_interrupted_by (Fixture *f, int signal_number)
{
  const int side = 192;
  g_autofree float *pixels = random_star_field (side, side);
  g_autofree char *in_path = temp_path (f, "stars.fits");
  g_autofree char *out_path = temp_path (f, "out.fits");
  write_fits_float (in_path, pixels, side, side);
  g_autoptr (GError) error = NULL;
  /* A cap of 10⁸ keeps the validation run going until the signal comes. */
  g_autoptr (GSubprocess) child = g_subprocess_new (
    G_SUBPROCESS_FLAGS_STDOUT_SILENCE | G_SUBPROCESS_FLAGS_STDERR_PIPE, &error, cli_path (),
    "deblur", in_path, "-o", out_path, "--psf", "gaussian:3", "--solver", "rl", "--iters",
    "100000000", "--report-every", "1", "--backend", "cpu", NULL);
  g_assert_no_error (error);
  g_autoptr (GDataInputStream) err = g_data_input_stream_new (g_subprocess_get_stderr_pipe (child));
  int first = first_reported_iteration (err);
  g_assert_cmpint (first, >, 0);
  g_subprocess_send_signal (child, signal_number);
  g_autoptr (GString) rest = g_string_new (NULL);
  char *line;
  while ((line = g_data_input_stream_read_line (err, NULL, NULL, NULL)) != NULL)
    {
      g_string_append_printf (rest, "%s\n", line);
      g_free (line);
    }
  g_assert_true (g_subprocess_wait (child, NULL, &error));
  g_test_message ("first report at %d; then:\n%s", first, rest->str);
  g_assert_true (g_subprocess_get_if_exited (child));
  g_assert_cmpint (g_subprocess_get_exit_status (child), ==, 1);
  const char *message = strstr (rest->str, "interrupted after ");
  g_assert_nonnull (message);
  int counted = -1;
  g_assert_cmpint (sscanf (message, "interrupted after %d", &counted), ==, 1);
  g_assert_cmpint (counted, >=, first);
  g_assert_nonnull (strstr (message, "nothing written"));
  g_assert_false (g_file_test (out_path, G_FILE_TEST_EXISTS));
}

/* Ctrl-C during a solve, or SIGTERM (a batch system's time limit, which
 * once killed it outright): exit 1, no output file, and a message that
 * counts the iterations reported so far. The run is interrupted in RL's
 * hold-out validation, whose iterations are no part of the result: the
 * message once said "after 0 iterations" there. */
static void
test_interrupt (Fixture *f, gconstpointer data)
{
  if (!cli_available ())
    return;
  const int signals[] = { SIGINT, SIGTERM };
  for (gsize k = 0; k < G_N_ELEMENTS (signals); k++)
    assert_interrupted_by (f, signals[k]);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
#define ADD(name, func) \
  g_test_add ("/cli/" name, Fixture, NULL, fixture_setup, func, fixture_teardown)
  ADD ("run-beats-measured-data", test_run_beats_measured_data);
  ADD ("run-compressed", test_run_compressed);
  ADD ("round-trip", test_round_trip);
  ADD ("psf-conflict", test_psf_conflict);
  ADD ("blank-pixels", test_blank_pixels);
  ADD ("saturated-star", test_saturated_star);
  ADD ("flag-pixels", test_flag_pixels);
  ADD ("dead-pixel", test_dead_pixel);
  ADD ("psf-cube-first-plane", test_psf_cube_first_plane);
  ADD ("psf-file-hdus", test_psf_file_hdus);
  ADD ("devices-unused", test_devices_unused);
  ADD ("hot-pixels", test_hot_pixels);
  ADD ("cube-saturation", test_cube_saturation);
  ADD ("real-default-solver", test_real_default_solver);
  ADD ("cube-planes", test_cube_planes);
  ADD ("psf-from-stars", test_psf_from_stars);
  ADD ("alpha-auto-recorded", test_alpha_auto_recorded);
  ADD ("bad-files", test_bad_files);
  ADD ("bad-values", test_bad_values);
  ADD ("dense-too-large", test_dense_too_large);
  ADD ("bad-outputs-and-sizes", test_bad_outputs_and_sizes);
  ADD ("output-protection", test_output_protection);
  ADD ("info", test_info);
  ADD ("info-damaged-png", test_info_damaged_png);
  ADD ("openmp-wait", test_openmp_wait);
  ADD ("alpha-noise-where-light-is", test_alpha_noise_where_light_is);
  ADD ("psf-file-read-once", test_psf_file_read_once);
  ADD ("json-escaping", test_json_escaping);
  ADD ("fftw-wisdom", test_fftw_wisdom);
  ADD ("deblur-phases", test_deblur_phases);
  ADD ("bench-whole", test_bench_whole);
  ADD ("bench-whole-bad-values", test_bench_whole_bad_values);
  ADD ("cs-solves", test_cs_solves);
  ADD ("cs-phase-transition", test_cs_phase_transition);
  ADD ("cs-bad-arguments", test_cs_bad_arguments);
  ADD ("json-keys-once", test_json_keys_once);
  ADD ("quality-outputs", test_quality_outputs);
  ADD ("quality-bad-values", test_quality_bad_values);
  g_test_add_func ("/cli/usage", test_usage);
  g_test_add_func ("/cli/usage-errors", test_usage_errors);
  ADD ("interrupt", test_interrupt);
  g_test_add_func ("/cli/help-utf8", test_help_utf8);
  g_test_add_func ("/cli/solver-table-options", test_solver_table_options);
  return g_test_run ();
}
