/* test-boundary.c: padding for non-periodic images (issue 5, item 3).
 *
 * - ss_fft_good_size against a brute-force search;
 * - ss_boundary_pad / crop: the image survives bit for bit (NaN included),
 *   mirror padding reflects the edges, both modes are periodic and smooth
 *   across the border (jump bound), constants stay constant, bad arguments
 *   fail with a GError;
 * - ss_boundary_margin_for_psf against the box's exact reach and the
 *   Gaussian's 99.5% radius;
 * - the point of it all: a sky that is not periodic (gradient + stars, also
 *   outside the frame) is blurred by a LINEAR convolution (computed on a
 *   larger canvas and cropped) with a little noise, then deblurred with the
 *   periodic model and with mirror padding (and taper, and mirror with the
 *   border left out of the data term); the RMS error in a band of twice the
 *   PSF's reach along the edges is lower with mirror than periodic.
 * Inputs are fresh draws from g_test_rand_* (the seed is in the TAP output;
 * --seed replays it).
 */
#include "sharpsky.h"
#include "ss-boundary.h"
#include "ss-noise.h"

#include <math.h>
#include <string.h>

static gboolean
is_5_smooth (int m)
{
  for (int p = 2; p <= 5; p++)
    while (m % p == 0)
      m /= p;
  return m == 1;
}

/* The oracle, by walking: the smallest 5-smooth number >= N, or the next
 * power of two when it is within 10% of that. */
static int
padded_size_oracle (int n)
{
  int smooth = n;
  while (!is_5_smooth (smooth))
    smooth++;
  int power = 1;
  while (power < n)
    power *= 2;
  return (gint64) power * 10 <= (gint64) smooth * 11 ? power : smooth;
}

static void
test_good_size (void)
{
  for (int trial = 0; trial < 200; trial++)
    {
      int n = trial < 20 ? trial + 1 : g_test_rand_int_range (1, 100000);
      int good = ss_fft_good_size (n);
      g_assert_cmpint (good, >=, n);
      g_assert_true (is_5_smooth (good));
      g_assert_cmpint (good, ==, padded_size_oracle (n));
    }
  g_assert_cmpint (ss_fft_good_size (0), ==, -1);
  g_assert_cmpint (ss_fft_good_size (-5), ==, -1);
  g_assert_cmpint (ss_fft_good_size (1021), ==, 1024);   /* 1021 is prime */
  g_assert_cmpint (ss_fft_good_size (1004), ==, 1024);   /* not 1008 = 2^4 3^2 7 */
  g_assert_cmpint (ss_fft_good_size (876), ==, 900);     /* not 882 = 2 3^2 7^2; 1024 is 14% more */
  g_assert_cmpint (ss_fft_good_size (4004), ==, 4096);   /* not 4050 = 2 3^4 5^2: 1% more */
  g_assert_cmpint (ss_fft_good_size (4097), ==, 4320);   /* 8192 is far */
}

static void
test_from_string (void)
{
  SsBoundary mode;
  g_autoptr (GError) error = NULL;
  for (int m = SS_BOUNDARY_PERIODIC; m <= SS_BOUNDARY_TAPER; m++)
    {
      g_assert_true (ss_boundary_from_string (ss_boundary_to_string (m), &mode, &error));
      g_assert_no_error (error);
      g_assert_cmpint (mode, ==, m);
    }
  g_assert_false (ss_boundary_from_string ("reflect", &mode, &error));
  g_assert_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  g_assert_false (ss_boundary_from_string (NULL, &mode, &error));
  g_assert_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT);
}

static float *
random_image (int w, int h)
{
  float *img = g_new (float, (gsize) w * h);
  for (gsize i = 0; i < (gsize) w * h; i++)
    img[i] = (float) g_test_rand_double_range (-1, 1);
  return img;
}

/* Largest |difference| between horizontal and vertical neighbours of a
 * W x H image, across the wrap-around when WRAP. */
static double
max_neighbour_jump (const float *img, int w, int h, gboolean wrap)
{
  double worst = 0;
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++)
      {
        float v = img[(gsize) y * w + x];
        if (wrap || x + 1 < w)
          worst = MAX (worst, fabs (v - img[(gsize) y * w + (x + 1) % w]));
        if (wrap || y + 1 < h)
          worst = MAX (worst, fabs (v - img[(gsize) ((y + 1) % h) * w + x]));
      }
  return worst;
}

static void
test_pad_crop_roundtrip (void)
{
  for (int trial = 0; trial < 20; trial++)
    {
      int w = g_test_rand_int_range (1, 90), h = g_test_rand_int_range (1, 90);
      int margin = g_test_rand_int_range (0, 40);
      SsBoundary mode = (SsBoundary) g_test_rand_int_range (0, 3);
      g_autofree float *img = random_image (w, h);
      int holes = g_test_rand_int_range (0, 5);
      for (int k = 0; k < holes; k++)
        img[g_test_rand_int_range (0, w * h)] = NAN;
      float *padded = NULL;
      int pw, ph, x0, y0;
      g_autoptr (GError) error = NULL;
      g_assert_true (ss_boundary_pad (img, w, h, mode, margin, &padded, &pw, &ph, &x0, &y0,
                                      &error));
      g_assert_no_error (error);
      if (mode == SS_BOUNDARY_PERIODIC)
        {
          g_assert_cmpint (pw, ==, w);
          g_assert_cmpint (ph, ==, h);
        }
      else
        {
          g_assert_cmpint (pw, ==, ss_fft_good_size (w + 2 * margin));
          g_assert_cmpint (ph, ==, ss_fft_good_size (h + 2 * margin));
          g_assert_cmpint (x0, >=, margin);
          g_assert_cmpint (y0, >=, margin);
          g_assert_cmpint (pw - w - x0, >=, margin);
          g_assert_cmpint (ph - h - y0, >=, margin);
        }
      g_autofree float *back = g_new (float, (gsize) w * h);
      g_assert_true (ss_boundary_crop (padded, pw, ph, x0, y0, w, h, back, &error));
      g_assert_cmpmem (back, (gsize) w * h * sizeof (float), img, (gsize) w * h * sizeof (float));

      /* Leaving the border out: exactly the border becomes NaN. */
      ss_boundary_exclude_border (padded, pw, ph, x0, y0, w, h);
      gsize nan_count = 0, nan_inside = 0;
      for (gsize i = 0; i < (gsize) pw * ph; i++)
        nan_count += isnan (padded[i]) ? 1 : 0;
      for (gsize i = 0; i < (gsize) w * h; i++)
        nan_inside += isnan (img[i]) ? 1 : 0;
      g_assert_cmpuint (nan_count, ==, (gsize) pw * ph - (gsize) w * h + nan_inside);
      g_free (padded);
    }
}

/* Mirror: next to each edge the border reflects the image (up to the small
 * cross-fade weight); both modes: periodic and no jump larger than the
 * image's own plus the cross-fade's slope times the image's range. */
static void
test_pad_shape (void)
{
  for (int trial = 0; trial < 10; trial++)
    {
      int w = g_test_rand_int_range (8, 70), h = g_test_rand_int_range (8, 70);
      int margin = g_test_rand_int_range (4, 30);
      /* A smooth random image, so that "smooth border" means something. */
      g_autofree float *img = g_new (float, (gsize) w * h);
      double fx = g_test_rand_double_range (0.05, 0.3), fy = g_test_rand_double_range (0.05, 0.3);
      double ph0 = g_test_rand_double_range (0, 6);
      for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
          img[(gsize) y * w + x] = (float) (sin (fx * x + ph0) + cos (fy * y) + 0.02 * x);
      double range = 0, inside_jump = max_neighbour_jump (img, w, h, FALSE);
      for (gsize i = 0; i < (gsize) w * h; i++)
        range = MAX (range, fabs (img[i]));
      range *= 2;

      for (SsBoundary mode = SS_BOUNDARY_MIRROR; mode <= SS_BOUNDARY_TAPER; mode++)
        {
          float *padded = NULL;
          int pw, ph, x0, y0;
          g_assert_true (ss_boundary_pad (img, w, h, mode, margin, &padded, &pw, &ph, &x0, &y0,
                                          NULL));
          int gap = MIN (pw - w, ph - h);
          double slope = G_PI / 2 / (gap + 1);   /* max step of the raised cosine */
          double jump = max_neighbour_jump (padded, pw, ph, TRUE);
          g_assert_cmpfloat (jump, <=, inside_jump + slope * range + 1e-5);

          if (mode == SS_BOUNDARY_MIRROR)
            for (int y = 0; y < h; y++)
              for (int t = 1; t <= 3; t++)
                {
                  /* Right of the last column: column w - t; left of the first: column t - 1. */
                  const float *row = padded + (gsize) (y + y0) * pw;
                  double weight_right = 0.5 * (1 - cos (G_PI * t / (pw - w + 1)));
                  g_assert_cmpfloat (fabs (row[x0 + w - 1 + t] - img[(gsize) y * w + w - t]), <=,
                                     weight_right * range + 1e-5);
                  g_assert_cmpfloat (fabs (row[x0 - t] - img[(gsize) y * w + t - 1]), <=,
                                     weight_right * range + 1e-5);
                }
          g_free (padded);
        }
    }

  /* A constant stays constant. */
  float flat[12 * 7];
  for (int i = 0; i < 12 * 7; i++)
    flat[i] = 3.25f;
  for (SsBoundary mode = SS_BOUNDARY_MIRROR; mode <= SS_BOUNDARY_TAPER; mode++)
    {
      float *padded = NULL;
      int pw, ph, x0, y0;
      g_assert_true (ss_boundary_pad (flat, 12, 7, mode, 5, &padded, &pw, &ph, &x0, &y0, NULL));
      for (gsize i = 0; i < (gsize) pw * ph; i++)
        g_assert_cmpfloat (fabsf (padded[i] - 3.25f), <, 1e-6);
      g_free (padded);
    }
}

static void
test_bad_arguments (void)
{
  float img[4] = { 1, 2, 3, 4 }, out[4];
  float *padded = NULL;
  int pw, ph, x0, y0;
  g_autoptr (GError) error = NULL;
  g_assert_false (ss_boundary_pad (img, 0, 2, SS_BOUNDARY_MIRROR, 2, &padded, &pw, &ph, &x0, &y0,
                                   &error));
  g_assert_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  g_assert_false (ss_boundary_pad (img, 2, 2, SS_BOUNDARY_MIRROR, -1, &padded, &pw, &ph, &x0, &y0,
                                   &error));
  g_assert_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  g_assert_false (ss_boundary_pad (img, 2, 2, SS_BOUNDARY_TAPER, G_MAXINT / 2, &padded, &pw, &ph,
                                   &x0, &y0, &error));
  g_assert_error (error, SS_ERROR, SS_ERROR_TOO_LARGE);
  g_clear_error (&error);
  g_assert_false (ss_boundary_crop (img, 2, 2, 1, 0, 2, 2, out, &error));
  g_assert_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT);
  g_assert_null (padded);
}

static void
test_margin_for_psf (void)
{
  g_autoptr (GError) error = NULL;
  int size = g_test_rand_int_range (1, 12);
  SsPsfSpec box = { .kind = SS_PSF_BOX, .size = size };
  g_assert_cmpint (ss_boundary_margin_for_psf (&box, 64, 48, &error), ==, MAX (size / 2, 1));
  g_assert_no_error (error);
  SsPsfSpec row = { .kind = SS_PSF_BOX_ROW, .size = size };
  g_assert_cmpint (ss_boundary_margin_for_psf (&row, 64, 48, &error), ==, MAX (size / 2, 1));

  double fwhm = g_test_rand_double_range (2, 8);
  SsPsfSpec gauss = { .kind = SS_PSF_GAUSSIAN, .fwhm = fwhm };
  int margin = ss_boundary_margin_for_psf (&gauss, 128, 100, &error);
  g_assert_no_error (error);
  /* 99.5% inside a square: each axis holds sqrt(0.995) = 0.9975, i.e. 3.02 sigma. */
  double expect = 3.02 * fwhm / 2.3548;
  g_test_message ("gaussian FWHM %.2f: margin %d, continuous %.2f", fwhm, margin, expect);
  g_assert_cmpfloat (fabs (margin - expect), <=, 1.5);

  /* The margin is the PSF's alone: on an image that just holds the PSF and on
   * a large one (where only a canvas around the PSF is rendered), the same. */
  for (int t = 0; t < 6; t++)
    {
      SsPsfSpec model = { .kind = t % 2 ? SS_PSF_MOFFAT : SS_PSF_GAUSSIAN,
                          .fwhm = g_test_rand_double_range (1.5, 6),
                          .beta = g_test_rand_double_range (1.5, 5) };
      int tight = 2 * ss_psf_reach (&model) + 1 + g_test_rand_int_range (0, 2);
      int large = ss_boundary_margin_for_psf (&model, g_test_rand_int_range (600, 900),
                                              g_test_rand_int_range (400, 700), &error);
      g_assert_no_error (error);
      g_assert_cmpint (ss_boundary_margin_for_psf (&model, tight, tight, &error), ==, large);
      g_assert_no_error (error);
    }

  SsPsfSpec huge = { .kind = SS_PSF_BOX, .size = 100 };
  g_assert_cmpint (ss_boundary_margin_for_psf (&huge, 20, 20, &error), ==, -1);
  g_assert_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT);
}

/* ---- mirror against periodic on a non-periodic sky ------------------------ */

#define CANVAS_MARGIN 40

typedef struct {
  double band, interior;
} EdgeErrors;

/* RMS error of X against TRUTH in the band of width BAND along the edges, and
 * inside it. */
static EdgeErrors
edge_errors (const float *x, const float *truth, int w, int h, int band)
{
  double sb = 0, si = 0;
  gsize nb = 0, ni = 0;
  for (int y = 0; y < h; y++)
    for (int xx = 0; xx < w; xx++)
      {
        double d = x[(gsize) y * w + xx] - truth[(gsize) y * w + xx];
        gboolean in_band = xx < band || y < band || xx >= w - band || y >= h - band;
        if (in_band)
          sb += d * d, nb++;
        else
          si += d * d, ni++;
      }
  return (EdgeErrors) { sqrt (sb / nb), sqrt (si / MAX (ni, 1)) };
}

static float *
deblur (const SsPsfSpec *psf, SsBoundary mode, gboolean exclude, const float *y, int w, int h,
        int margin, double alpha)
{
  g_autoptr (GError) error = NULL;
  float *padded = NULL;
  int pw, ph, x0, y0;
  g_assert_true (ss_boundary_pad (y, w, h, mode, margin, &padded, &pw, &ph, &x0, &y0, &error));
  if (exclude)
    ss_boundary_exclude_border (padded, pw, ph, x0, y0, w, h);
  g_autoptr (SsOperator) op = ss_operator_new_blur (psf, padded, pw, ph, &error);
  g_assert_no_error (error);
  for (gsize i = 0; i < (gsize) pw * ph; i++)
    if (isnan (padded[i]))
      padded[i] = 0.0f;   /* P^T y: 0 where unobserved */

  g_autoptr (SsBackend) backend = ss_backend_new (SS_BACKEND_CPU, &error);
  SsSolveParams params;
  ss_solve_params_init (&params);
  params.kind = SS_SOLVER_CPADMM;   /* the default solver */
  params.alpha = alpha;
  params.iterations = 300;
  params.report_every = 300;
  params.nonneg = TRUE;
  SsProblem problem = { .op = op, .y = padded };
  SsSolveResult result = { 0 };
  g_assert_true (ss_backend_solve (backend, &problem, &params, NULL, NULL, NULL, &result, &error));
  g_assert_no_error (error);
  float *x = g_new (float, (gsize) w * h);
  g_assert_true (ss_boundary_crop (result.x, pw, ph, x0, y0, w, h, x, &error));
  ss_solve_result_clear (&result);
  g_free (padded);
  return x;
}

static void
test_mirror_beats_periodic_at_edges (void)
{
  /* Sizes that FFTW dislikes, so padding also changes the transform size. */
  int w = g_test_rand_int_range (90, 130), h = g_test_rand_int_range (90, 130);
  int cw = w + 2 * CANVAS_MARGIN, ch = h + 2 * CANVAS_MARGIN;
  g_autoptr (GError) error = NULL;

  /* The sky beyond the frame: stars everywhere on what is left of a tilted,
   * curved background after the sky level is taken off (the LASSO needs a
   * mostly dark sky: on a positive one, x >= 0 makes ||x||_1 the total flux,
   * which the data fix, so alpha would not regularise at all). */
  g_autofree float *canvas = g_new (float, (gsize) cw * ch);
  double gx = g_test_rand_double_range (0.12, 0.2), gy = g_test_rand_double_range (0.0, 0.1);
  for (int y = 0; y < ch; y++)
    for (int x = 0; x < cw; x++)
      {
        double u = (double) x / cw, v = (double) y / ch;
        canvas[(gsize) y * cw + x] = (float) (0.02 + gx * u + gy * v + 0.05 * u * v);
      }
  for (int k = 0; k < cw * ch / 150; k++)
    canvas[g_test_rand_int_range (0, cw * ch)] += (float) g_test_rand_double_range (0.2, 1.0);

  SsPsfSpec psf = { .kind = SS_PSF_GAUSSIAN, .fwhm = g_test_rand_double_range (2.5, 4.0) };
  /* Linear convolution of the frame = circular convolution of the canvas,
   * cropped far (CANVAS_MARGIN) from the canvas' own wrap-around. */
  g_autoptr (SsOperator) canvas_op = ss_operator_new_blur (&psf, NULL, cw, ch, &error);
  g_assert_no_error (error);
  g_autofree float *canvas_blurred = g_new (float, (gsize) cw * ch);
  g_assert_true (ss_operator_apply (canvas_op, canvas, canvas_blurred, &error));
  g_autofree float *truth = g_new (float, (gsize) w * h);
  g_autofree float *y = g_new (float, (gsize) w * h);
  g_assert_true (ss_boundary_crop (canvas, cw, ch, CANVAS_MARGIN, CANVAS_MARGIN, w, h, truth,
                                   &error));
  g_assert_true (ss_boundary_crop (canvas_blurred, cw, ch, CANVAS_MARGIN, CANVAS_MARGIN, w, h, y,
                                   &error));
  const double sigma = 0.002;
  for (gsize i = 0; i < (gsize) w * h; i++)
    {
      double u = 1.0 - g_test_rand_double (), v = g_test_rand_double ();
      y[i] += (float) (sigma * sqrt (-2 * log (u)) * cos (2 * G_PI * v));
    }

  int margin = ss_boundary_margin_for_psf (&psf, w, h, &error);
  g_assert_no_error (error);
  int band = 2 * margin;
  g_autoptr (SsOperator) frame_op = ss_operator_new_blur (&psf, NULL, w, h, &error);
  double alpha = ss_alpha_auto (ss_noise_estimate (y, w, h), frame_op);

  g_autofree float *x_periodic = deblur (&psf, SS_BOUNDARY_PERIODIC, FALSE, y, w, h, margin, alpha);
  g_autofree float *x_mirror = deblur (&psf, SS_BOUNDARY_MIRROR, FALSE, y, w, h, margin, alpha);
  g_autofree float *x_taper = deblur (&psf, SS_BOUNDARY_TAPER, FALSE, y, w, h, margin, alpha);
  g_autofree float *x_excl = deblur (&psf, SS_BOUNDARY_MIRROR, TRUE, y, w, h, margin, alpha);
  EdgeErrors e_blur = edge_errors (y, truth, w, h, band);
  EdgeErrors e_per = edge_errors (x_periodic, truth, w, h, band);
  EdgeErrors e_mir = edge_errors (x_mirror, truth, w, h, band);
  EdgeErrors e_tap = edge_errors (x_taper, truth, w, h, band);
  EdgeErrors e_exc = edge_errors (x_excl, truth, w, h, band);
  g_test_message ("%d×%d, gaussian FWHM %.2f, margin %d, band %d, alpha %.3g", w, h, psf.fwhm,
                  margin, band, alpha);
  g_test_message ("RMS error edge band / interior: blurred input %.5f / %.5f", e_blur.band,
                  e_blur.interior);
  g_test_message ("  periodic          %.5f / %.5f", e_per.band, e_per.interior);
  g_test_message ("  mirror            %.5f / %.5f", e_mir.band, e_mir.interior);
  g_test_message ("  taper             %.5f / %.5f", e_tap.band, e_tap.interior);
  g_test_message ("  mirror, border out of the data term %.5f / %.5f", e_exc.band, e_exc.interior);

  g_assert_cmpfloat (e_mir.band, <, 0.85 * e_per.band);
  g_assert_cmpfloat (e_mir.interior, <, 1.2 * e_per.interior);
}

/* ---- the benchmark pads as deblur does ------------------------------------ */

static void
test_bench_reports_padded_size (void)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (SsBackend) backend = ss_backend_new (SS_BACKEND_CPU, &error);
  g_assert_no_error (error);
  const SsBoundary modes[] = { SS_BOUNDARY_PERIODIC, SS_BOUNDARY_MIRROR, SS_BOUNDARY_TAPER };
  for (guint i = 0; i < G_N_ELEMENTS (modes); i++)
    {
      SsBenchParams bp;
      ss_bench_params_init (&bp);
      bp.width = g_test_rand_int_range (40, 140);
      bp.height = g_test_rand_int_range (40, 140);
      bp.iterations = 4;
      bp.boundary = modes[i];
      /* An explicit margin, or the default: the reach of the bench's row box of 5. */
      bp.margin = g_test_rand_bit () ? g_test_rand_int_range (0, 30) : -1;
      int margin = modes[i] == SS_BOUNDARY_PERIODIC ? 0 : bp.margin >= 0 ? bp.margin : 2;
      SsBenchResult r = { 0 };
      g_assert_true (ss_backend_bench (backend, &bp, &r, &error));
      g_assert_no_error (error);
      g_test_message ("%s %d x %d margin %d: measured %d x %d", ss_boundary_to_string (modes[i]),
                      bp.width, bp.height, bp.margin, r.width, r.height);
      int want_w = modes[i] == SS_BOUNDARY_PERIODIC ? bp.width
                                                     : padded_size_oracle (bp.width + 2 * margin);
      int want_h = modes[i] == SS_BOUNDARY_PERIODIC ? bp.height
                                                     : padded_size_oracle (bp.height + 2 * margin);
      g_assert_cmpint (r.width, ==, want_w);
      g_assert_cmpint (r.height, ==, want_h);
      g_assert_cmpint (r.margin, ==, margin);
      g_assert_cmpfloat (r.seconds_per_iteration, >, 0.0);
      ss_bench_result_clear (&r);
    }

  /* A margin that pushes the size past an int is refused, not wrapped. */
  SsBenchParams huge;
  ss_bench_params_init (&huge);
  huge.boundary = SS_BOUNDARY_MIRROR;
  huge.margin = G_MAXINT / 2;
  SsBenchResult r = { 0 };
  g_assert_false (ss_backend_bench (backend, &huge, &r, &error));
  g_assert_error (error, SS_ERROR, SS_ERROR_TOO_LARGE);
  ss_bench_result_clear (&r);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/boundary/good-size", test_good_size);
  g_test_add_func ("/boundary/from-string", test_from_string);
  g_test_add_func ("/boundary/pad-crop-roundtrip", test_pad_crop_roundtrip);
  g_test_add_func ("/boundary/pad-shape", test_pad_shape);
  g_test_add_func ("/boundary/bad-arguments", test_bad_arguments);
  g_test_add_func ("/boundary/margin-for-psf", test_margin_for_psf);
  g_test_add_func ("/boundary/mirror-beats-periodic-at-edges", test_mirror_beats_periodic_at_edges);
  g_test_add_func ("/boundary/bench-reports-padded-size", test_bench_reports_padded_size);
  return g_test_run ();
}
