/* test-common.h: scaffolding shared by the test programs: seeds and random
 * problems for the engine tests, scratch directories and FITS files made
 * with cfitsio for the I/O and CLI tests. Everything is static inline, so a
 * test program uses what it needs and links nothing extra. */
#pragma once

#include "sharpsky.h"
#include "ss-cpu.h"
#include "ss-fft.h"
#include "ss-scaling.h"
#include "ss-synth.h"

#include <fitsio.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

/* A fresh seed per run, printed so a failure can be replayed with
 * SHARPSKY_TEST_SEED=N. */
static inline guint32
test_seed (void)
{
  const char *env = g_getenv ("SHARPSKY_TEST_SEED");
  guint32 seed = env ? (guint32) g_ascii_strtoull (env, NULL, 10) : (guint32) g_test_rand_int ();
  g_test_message ("seed %u", seed);
  return seed;
}

/* A random source seeded by test_seed (); free with g_rand_free or hold in
 * g_autoptr (GRand). */
static inline GRand *
test_rng (void)
{
  return g_rand_new_with_seed (test_seed ());
}

/* A standard normal draw from g_test_rand_double (Box–Muller; 1 - u keeps
 * the log finite), so --seed replays it. */
static inline double
test_rand_normal (void)
{
  double u = 1.0 - g_test_rand_double (), v = g_test_rand_double ();
  return sqrt (-2.0 * log (u)) * cos (2.0 * G_PI * v);
}

/* A sparse field: about FILL of the pixels uniform in (0, 1], the rest 0. */
static inline float *
test_sparse_image (GRand *rng, int width, int height, double fill)
{
  gsize n = (gsize) width * height;
  float *x = g_new0 (float, n);
  for (gsize i = 0; i < n; i++)
    if (g_rand_double (rng) < fill)
      x[i] = (float) (1.0 - g_rand_double (rng));
  return x;
}

/* An extended scene: a few broad Gaussian blobs on a floor, every pixel
 * lit, as a galaxy's or the Sun's light is. */
static inline float *
test_extended_scene (GRand *rng, int width, int height)
{
  float *x = g_new (float, (gsize) width * height);
  double cx[4], cy[4], r[4], a[4];
  for (int k = 0; k < 4; k++)
    {
      cx[k] = g_rand_double_range (rng, 0.2, 0.8) * width;
      cy[k] = g_rand_double_range (rng, 0.2, 0.8) * height;
      r[k] = g_rand_double_range (rng, 3, 8);
      a[k] = g_rand_double_range (rng, 0.3, 1.0);
    }
  for (int y = 0; y < height; y++)
    for (int xx = 0; xx < width; xx++)
      {
        double v = 0.05;
        for (int k = 0; k < 4; k++)
          v += a[k] * exp (-((xx - cx[k]) * (xx - cx[k]) + (y - cy[k]) * (y - cy[k]))
                           / (2 * r[k] * r[k]));
        x[(gsize) y * width + xx] = (float) v;
      }
  return x;
}

static inline double
test_rel_diff (const float *a, const float *b, gsize n)
{
  double num = 0, den = 0;
  for (gsize i = 0; i < n; i++)
    {
      num += ((double) a[i] - b[i]) * ((double) a[i] - b[i]);
      den += (double) b[i] * b[i];
    }
  return den > 0 ? sqrt (num / den) : sqrt (num);
}

static inline double
test_dot (const float *a, const float *b, gsize n)
{
  double s = 0;
  for (gsize i = 0; i < n; i++)
    s += (double) a[i] * b[i];
  return s;
}

/* FRAME (N pixels) scaled as deblur scales it (ss-scaling.h, --sky
 * median): its median off, the top above it at 1; the scaling in
 * *SCALING. */
static inline float *
test_scale_as_deblur (const float *frame, gsize n, SsScaling *scaling)
{
  g_autoptr (GError) error = NULL;
  g_assert_true (ss_scaling_estimate (frame, n, SS_SKY_MEDIAN, 0.0, scaling, &error));
  g_assert_no_error (error);
  float *y = g_new (float, n);
  ss_scaling_apply (scaling, frame, y, n, FALSE);
  return y;
}

/* A synthetic field of stars and galaxies (ss-synth.h, a fresh seed) of
 * SIDE², blurred by PSF and exposed with PEAK e⁻ over a sky of SKY e⁻ and
 * READ e⁻ of read noise, scaled as deblur scales it (the median off, the
 * top at 1); the median is the problem's background. */
typedef struct {
  SsOperator *op;
  float *y;
  double background;
  gsize n;
} TestField;

static inline void
test_field_init (TestField *f, GRand *rng, int side, const char *psf, double peak, double sky,
                 double read)
{
  g_autoptr (GError) error = NULL;
  SsSynthSky scene_spec;
  ss_synth_sky_init (&scene_spec, side, side, g_rand_int (rng));
  g_autoptr (SsImage) scene = ss_synth_sky_render (&scene_spec, &error);
  g_assert_no_error (error);
  SsPsfSpec spec = { 0 };
  g_assert_true (ss_psf_spec_parse (psf, &spec, NULL));
  SsSynthExposure exposure = { .peak = peak, .sky = sky, .read_noise = read,
                               .seed = g_rand_int (rng) };
  double flux = 0;
  SsScaling scaling;
  f->n = (gsize) side * side;
  g_autoptr (SsImage) frame
    = ss_synth_expose (scene->data, side, side, &spec, &exposure, &flux, &error);
  g_assert_no_error (error);
  f->y = test_scale_as_deblur (frame->data, f->n, &scaling);
  f->background = ss_scaling_background (&scaling);
  f->op = ss_operator_new_blur (&spec, NULL, side, side, &error);
  g_assert_no_error (error);
  ss_psf_spec_clear (&spec);
}

static inline void
test_field_clear (TestField *f)
{
  ss_operator_free (f->op);
  g_free (f->y);
}

/* A random compressed-deblurring problem: a sparse truth (a tenth of the
 * pixels lit), the operator of PSF and RATIO with a seed from RNG, and the
 * measurement with NOISE. */
typedef struct {
  SsAcquisition acq;
  SsOperator *op;
  float *truth, *y;
  int width, height;
  gsize n;
} TestProblem;

/* The same with the sensing chosen (SS_SENSING_NONE: a mask without sensing,
 * a blur as Richardson–Lucy needs). */
static inline void
test_problem_init_sensing (TestProblem *p, GRand *rng, int width, int height, const char *psf,
                           double ratio, double noise, SsSensing sensing)
{
  memset (p, 0, sizeof *p);
  p->width = width;
  p->height = height;
  p->n = (gsize) width * height;
  ss_acquisition_init (&p->acq);
  g_assert_true (ss_psf_spec_parse (psf, &p->acq.psf, NULL));
  p->acq.ratio = ratio;
  p->acq.sensing = sensing;
  p->acq.noise = noise;
  p->acq.seed = g_rand_int (rng);
  g_autoptr (GError) error = NULL;
  p->op = ss_operator_new (&p->acq, width, height, &error);
  g_assert_no_error (error);
  p->truth = test_sparse_image (rng, width, height, 0.1);
  p->y = ss_simulate (p->op, &p->acq, p->truth, &error);
  g_assert_no_error (error);
}

static inline void
test_problem_init (TestProblem *p, GRand *rng, int width, int height, const char *psf,
                   double ratio, double noise)
{
  test_problem_init_sensing (p, rng, width, height, psf, ratio, noise, SS_SENSING_AUTO);
}

static inline void
test_problem_clear (TestProblem *p)
{
  ss_operator_free (p->op);
  g_free (p->truth);
  g_free (p->y);
  ss_acquisition_clear (&p->acq);
}

/* Parameters for KIND with weight ALPHA, ITERATIONS iterations and one
 * report, at the end. */
static inline SsSolveParams
test_solve_params (SsSolverKind kind, double alpha, int iterations)
{
  SsSolveParams params;
  ss_solve_params_init (&params);
  params.kind = kind;
  params.alpha = alpha;
  params.iterations = iterations;
  params.report_every = iterations;
  return params;
}

/* `auto`'s parameters as the tests run it: its defaults, α 1e-3, x ≥ 0, a
 * report every REPORT_EVERY iterations (its candidates keep that). */
static inline SsSolveParams
test_choice_params (int report_every)
{
  SsSolveParams params;
  ss_solve_params_init (&params);
  ss_solve_params_set_defaults (&params, SS_SOLVER_AUTO);
  params.alpha = 1e-3;
  params.nonneg = TRUE;
  params.report_every = report_every;
  return params;
}

/* The CPU solve of P with PARAMS (the truth given, so the MSE is measured);
 * a failure fails the test. */
/* RL's benchmark on the BACKEND kind at WIDTH x HEIGHT: a time, a floor
 * from its two transform pairs and its elementwise bytes (the closed form
 * 2·24·h(w/2 + 1) + 28·w·h: two spectrum multiplies, the ratio and the
 * update), and their ratio. */
static inline void
test_assert_rl_bench (SsBackendKind kind, int width, int height, int iterations)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (SsBackend) backend = ss_backend_new (kind, &error);
  g_assert_no_error (error);
  SsBenchParams params;
  ss_bench_params_init (&params);
  params.solver = SS_SOLVER_RL;
  params.width = width;
  params.height = height;
  params.iterations = iterations;
  SsBenchResult result = { 0 };
  g_assert_true (ss_backend_bench (backend, &params, &result, &error));
  g_assert_no_error (error);
  g_test_message ("rl %d×%d: %.4f ms an iteration, floor %.4f ms (%.0f bytes), ratio %.3f",
                  width, height, 1e3 * result.seconds_per_iteration,
                  1e3 * result.floor_seconds, result.floor_bytes, result.ratio);
  g_assert_cmpint (result.width, ==, width);
  g_assert_cmpint (result.height, ==, height);
  g_assert_cmpint (result.iterations, ==, iterations);
  g_assert_cmpfloat (result.seconds_per_iteration, >, 0);
  g_assert_cmpfloat (result.floor_fft_seconds, >, 0);
  double n = (double) width * height, spec = (double) height * (width / 2 + 1);
  g_assert_cmpfloat (result.floor_bytes, ==, 48 * spec + 28 * n);
  g_assert_cmpfloat (result.ratio, ==, result.seconds_per_iteration / result.floor_seconds);
  ss_bench_result_clear (&result);
}

static inline SsSolveResult
test_cpu_solve (const TestProblem *p, const SsSolveParams *params)
{
  SsProblem problem = { .op = p->op, .y = p->y, .truth = p->truth };
  SsSolveResult result = { 0 };
  g_autoptr (GError) error = NULL;
  g_assert_true (ss_cpu_solve (&problem, params, NULL, NULL, NULL, &result, &error));
  g_assert_no_error (error);
  return result;
}

/* ---- scratch directories ------------------------------------------------ */

/* A fresh directory under the system's temporary one, from TEMPLATE (a name
 * ending in XXXXXX). */
static inline char *
test_scratch_dir (const char *template)
{
  g_autoptr (GError) error = NULL;
  char *dir = g_dir_make_tmp (template, &error);
  g_assert_no_error (error);
  return dir;
}

/* How many entries the directory PATH holds (it must exist): what a run
 * left there, temporaries included. */
static inline guint
test_count_entries (const char *path)
{
  GDir *dir = g_dir_open (path, 0, NULL);
  g_assert_nonnull (dir);
  guint count = 0;
  while (g_dir_read_name (dir))
    count++;
  g_dir_close (dir);
  return count;
}

/* Removes PATH and all below it; links are removed, never followed, and a
 * directory a test made read-only is made writable first. */
static inline void
test_remove_tree (const char *path)
{
  GDir *dir = g_dir_open (path, 0, NULL);
  if (dir)
    {
      const char *name;
      while ((name = g_dir_read_name (dir)))
        {
          g_autofree char *child = g_build_filename (path, name, NULL);
          if (g_file_test (child, G_FILE_TEST_IS_DIR)
              && !g_file_test (child, G_FILE_TEST_IS_SYMLINK))
            test_remove_tree (child);
          else
            g_unlink (child);
        }
      g_dir_close (dir);
    }
  g_chmod (path, 0700);
  g_rmdir (path);
}

/* ---- FITS files made with cfitsio --------------------------------------- */

/* A cfitsio failure in the test's own file making is a broken test, not a
 * finding: stop with cfitsio's words for it. */
static inline void
test_check_cfitsio (int status)
{
  if (status != 0)
    {
      char text[FLEN_STATUS];
      fits_get_errstatus (status, text);
      g_error ("cfitsio failed in the test itself: %s (status %d)", text, status);
    }
}

/* Writes DATA as a float32 image: 2-D when PLANES is 1, else a cube of
 * PLANES planes; with an OBJECT card when OBJECT is not NULL. PATH is taken
 * as it is (no cfitsio file-name syntax) and replaced if it exists. */
static inline void
test_write_fits_float (const char *path, const float *data, long width, long height, long planes,
                       const char *object)
{
  fitsfile *fits = NULL;
  int status = 0;
  long axes[3] = { width, height, planes };
  g_unlink (path);
  fits_create_diskfile (&fits, path, &status);
  fits_create_img (fits, FLOAT_IMG, planes > 1 ? 3 : 2, axes, &status);
  if (object != NULL)
    fits_update_key_str (fits, "OBJECT", object, "target", &status);
  fits_write_img (fits, TFLOAT, 1, (LONGLONG) width * height * planes, (void *) data, &status);
  fits_close_file (fits, &status);
  test_check_cfitsio (status);
}

/* A file whose header holds the NULL-terminated CARDS and END, padded to
 * whole 2880-byte blocks, followed by DATA_BYTES zeros: headers cfitsio
 * would refuse to write. */
static inline void
test_write_handmade_fits (const char *path, const char *const *cards, gsize data_bytes)
{
  GString *text = g_string_new (NULL);
  for (gsize i = 0; cards[i]; i++)
    g_string_append_printf (text, "%-80.80s", cards[i]);
  g_string_append_printf (text, "%-80s", "END");
  while (text->len % 2880)
    g_string_append_c (text, ' ');
  gsize header = text->len;
  g_string_set_size (text, header + data_bytes);
  memset (text->str + header, 0, data_bytes);
  g_autoptr (GError) error = NULL;
  g_file_set_contents (path, text->str, (gssize) text->len, &error);
  g_assert_no_error (error);
  g_string_free (text, TRUE);
}

/* A handmade primary header of a BITPIX image of NAXIS1 x NAXIS2 pixels,
 * followed by DATA_BYTES zeros (whatever the header claims). */
static inline void
test_write_image_header (const char *path, int bitpix, guint64 naxis1, guint64 naxis2,
                         gsize data_bytes)
{
  g_autofree char *bitpix_card = g_strdup_printf ("BITPIX  = %20d", bitpix);
  g_autofree char *naxis1_card = g_strdup_printf ("NAXIS1  = %20" G_GUINT64_FORMAT, naxis1);
  g_autofree char *naxis2_card = g_strdup_printf ("NAXIS2  = %20" G_GUINT64_FORMAT, naxis2);
  const char *cards[] = { "SIMPLE  =                    T", bitpix_card,
                          "NAXIS   =                    2", naxis1_card, naxis2_card, NULL };
  test_write_handmade_fits (path, cards, data_bytes);
}
