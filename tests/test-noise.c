/* test-noise.c: the noise estimate and the automatic alpha (issue 5, item 6).
 *
 * - ss_noise_estimate on images of known white Gaussian noise (plus a sky
 *   gradient, a few stars and NaN holes; also a 1-D signal) returns the noise
 *   within 10%; on a frame over 2^22 windows, where it takes every k-th row,
 *   within 1% of the MAD of all windows.
 * - ss_operator_column_norm equals the l2 norm of the rendered PSF (Parseval
 *   oracle), with and without a mask.
 * - --alpha auto: on sparse star fields at two noise levels, alpha is swept on
 *   a log grid with the CPU FISTA solver; the automatic alpha (from the
 *   ESTIMATED noise) lies within a factor of 3 of the sweep's best-MSE alpha.
 * Inputs are fresh draws from g_test_rand_* (the seed is in the TAP output;
 * --seed replays it).
 */
#include "test-common.h"
#include "ss-noise.h"

#include <math.h>
#include <string.h>

/* A w x h image: tilted sky + NSTARS Gaussian stars (FWHM 2.5) + noise SIGMA. */
static float *
make_sky_with_noise (int w, int h, double sigma, int nstars)
{
  float *img = g_new (float, (gsize) w * h);
  double gx = g_test_rand_double_range (-2, 2) / w, gy = g_test_rand_double_range (-2, 2) / h;
  double base = g_test_rand_double_range (0, 100);
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++)
      img[(gsize) y * w + x] = (float) (base + gx * x + gy * y + sigma * test_rand_normal ());
  double s2 = pow (2.5 / 2.3548, 2);
  for (int k = 0; k < nstars; k++)
    {
      double cx = g_test_rand_double_range (0, w), cy = g_test_rand_double_range (0, h);
      double amp = g_test_rand_double_range (10, 100) * sigma;
      for (int y = MAX (0, (int) cy - 8); y < MIN (h, (int) cy + 9); y++)
        for (int x = MAX (0, (int) cx - 8); x < MIN (w, (int) cx + 9); x++)
          img[(gsize) y * w + x] +=
            (float) (amp * exp (-0.5 * ((x - cx) * (x - cx) + (y - cy) * (y - cy)) / s2));
    }
  return img;
}

static void
test_noise_estimate_known_sigma (void)
{
  for (int trial = 0; trial < 6; trial++)
    {
      int w = g_test_rand_int_range (64, 300), h = g_test_rand_int_range (64, 300);
      double sigma = pow (10.0, g_test_rand_double_range (-3, 1));
      g_autofree float *img = make_sky_with_noise (w, h, sigma, (w * h) / 2000);
      /* NaN holes: a block and scattered pixels. */
      int bx = g_test_rand_int_range (0, w - 10), by = g_test_rand_int_range (0, h - 10);
      for (int y = by; y < by + 10; y++)
        for (int x = bx; x < bx + 10; x++)
          img[(gsize) y * w + x] = NAN;
      for (int k = 0; k < w * h / 100; k++)
        img[g_test_rand_int_range (0, w * h)] = NAN;
      double est = ss_noise_estimate (img, w, h);
      g_test_message ("%d×%d sigma %.4g: estimate %.4g (ratio %.4f)", w, h, sigma, est,
                      est / sigma);
      g_assert_cmpfloat (fabs (est / sigma - 1.0), <, 0.10);
    }
}

/* A padded problem's noise and median are its image's own (SsProblem.image):
 * the same estimators on the unpadded image are the oracle, exactly, for
 * both borders deblur pads with; a mask's holes are skipped in either. */
static void
test_problem_stats_on_image_region (void)
{
  for (int mode = SS_BOUNDARY_MIRROR; mode <= SS_BOUNDARY_TAPER; mode++)
    {
      int w = g_test_rand_int_range (48, 96), h = g_test_rand_int_range (48, 96);
      double sigma = pow (10.0, g_test_rand_double_range (-3, 0));
      g_autofree float *img = make_sky_with_noise (w, h, sigma, (w * h) / 1000);
      g_autofree float *padded = NULL;
      int pw, ph, x0, y0;
      g_autoptr (GError) error = NULL;
      g_assert_true (ss_boundary_pad (img, w, h, mode, g_test_rand_int_range (8, 30), &padded,
                                      &pw, &ph, &x0, &y0, &error));
      SsPsfSpec psf = { 0 };
      g_assert_true (ss_psf_spec_parse ("gaussian:2", &psf, NULL));
      g_autoptr (SsOperator) op = ss_operator_new_blur (&psf, NULL, pw, ph, &error);
      g_assert_no_error (error);
      ss_psf_spec_clear (&psf);
      SsProblem problem = { .op = op, .y = padded, .image = { x0, y0, w, h } };
      double noise, median, whole;
      ss_problem_noise_and_median (&problem, &noise, &median);
      whole = ss_noise_estimate (padded, pw, ph);
      g_test_message ("%s %d×%d in %d×%d, σ %.4g: the image's %.4g, the padded frame's %.4g",
                      mode == SS_BOUNDARY_MIRROR ? "mirror" : "taper", w, h, pw, ph, sigma,
                      noise, whole);
      g_assert_cmpfloat (noise, ==, ss_noise_estimate (img, w, h));
      g_assert_cmpfloat (median, ==, ss_median (img, (gsize) w * h));
    }
}

/* Blanks that leave few whole 3x3 windows: 55-65% of the pixels at
 * random, every third column, every other row; and a 4.4 Mpx frame with
 * every third column blank, whose rows and columns are sampled. The estimate falls back on
 * the 1-D high-pass along rows and columns and stays within 15% (it gave 0,
 * so alpha 0, with 59% blank on 64², and no estimate at all for the
 * columns and rows). */
static void
test_noise_estimate_many_blanks (void)
{
  for (int pattern = 0; pattern < 3; pattern++)
    for (int trial = 0; trial < 2; trial++)
      {
        int w = g_test_rand_int_range (64, 200), h = g_test_rand_int_range (64, 200);
        double sigma = pow (10.0, g_test_rand_double_range (-3, 1));
        g_autofree float *img = make_sky_with_noise (w, h, sigma, (w * h) / 2000);
        double blank = g_test_rand_double_range (0.55, 0.65);
        for (int y = 0; y < h; y++)
          for (int x = 0; x < w; x++)
            if (pattern == 0 ? g_test_rand_double () < blank
                : pattern == 1 ? x % 3 == 2
                               : y % 2 == 1)
              img[(gsize) y * w + x] = NAN;
        double est = ss_noise_estimate (img, w, h);
        g_test_message ("pattern %d, %d×%d sigma %.4g: estimate %.4g (ratio %.4f)", pattern, w,
                        h, sigma, est, est / sigma);
        g_assert_cmpfloat (fabs (est / sigma - 1.0), <, 0.15);
      }
  /* A frame past 2^21 pixels whose every third column is blank: the rows
   * and columns are sampled (every third here), not all taken. */
  int w = 2100, h = 2100;
  double sigma = pow (10.0, g_test_rand_double_range (-3, 1));
  g_autofree float *img = make_sky_with_noise (w, h, sigma, 200);
  for (int y = 0; y < h; y++)
    for (int x = 2; x < w; x += 3)
      img[(gsize) y * w + x] = NAN;
  double est = ss_noise_estimate (img, w, h);
  g_test_message ("%d×%d, every third column blank, sigma %.4g: estimate %.4g", w, h, sigma, est);
  g_assert_cmpfloat (fabs (est / sigma - 1.0), <, 0.15);
}

/* The noise where the light is. Oracle: a frame whose left part (a fraction
 * F, 0.5-0.75, of the columns) is a dark sky of noise S1 and the rest a
 * bright flat field of noise S2 has a mean variance of F S1² + (1 − F) S2²;
 * the level-binned estimate finds its root within 10% (−7.2% to +5.8% over
 * 160 frames: the bin that straddles the two counts at the smaller σ),
 * where the MAD of the
 * whole frame, the typical pixel's, lies near the larger part's σ. On one
 * noise level both estimates agree within 8% of it, and the α rule's σ is
 * then the typical pixel's, bit for bit; past a ratio of 2 it is the
 * typical σ times the ratio less one. */
static void
test_noise_estimate_mean (void)
{
  for (int trial = 0; trial < 4; trial++)
    {
      int w = g_test_rand_int_range (120, 400), h = g_test_rand_int_range (80, 300);
      double s1 = pow (10.0, g_test_rand_double_range (-1, 1));
      double s2 = s1 * g_test_rand_double_range (5, 30);
      double f = g_test_rand_double_range (0.5, 0.75);
      int split = (int) (f * w);
      g_autofree float *img = g_new (float, (gsize) w * h);
      for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
          img[(gsize) y * w + x] = (float) (x < split ? 10.0 + s1 * test_rand_normal ()
                                                      : 1000.0 * s1 + s2 * test_rand_normal ());
      double share = (double) split / w;
      double expect = sqrt (share * s1 * s1 + (1 - share) * s2 * s2);
      double mean = ss_noise_estimate_mean (img, w, h), typical = ss_noise_estimate (img, w, h);
      g_test_message ("%d×%d, σ %.3g on %.2f of it, %.3g elsewhere: mean %.4g (expect %.4g), "
                      "typical %.4g", w, h, s1, share, s2, mean, expect, typical);
      g_assert_cmpfloat (fabs (mean / expect - 1.0), <, 0.10);
      g_assert_cmpfloat (typical, <, 0.6 * mean);
      double rule = ss_noise_for_alpha (typical, mean);
      if (mean > 2 * typical)
        g_assert_cmpfloat (fabs (rule / (mean - typical) - 1.0), <, 1e-12);
      else
        g_assert_cmpfloat (rule, ==, typical);

      g_autofree float *flat = make_sky_with_noise (w, h, s1, 0);
      double flat_mean = ss_noise_estimate_mean (flat, w, h);
      double flat_typical = ss_noise_estimate (flat, w, h);
      g_assert_cmpfloat (fabs (flat_mean / s1 - 1.0), <, 0.08);
      g_assert_cmpfloat (fabs (flat_typical / s1 - 1.0), <, 0.08);
      g_assert_cmpfloat (ss_noise_for_alpha (flat_typical, flat_mean), ==, flat_typical);
    }
  g_assert_cmpfloat (ss_noise_for_alpha (2.0, 4.0), ==, 2.0);
  g_assert_cmpfloat (ss_noise_for_alpha (2.0, 9.0), ==, 7.0);
  g_assert_true (isnan (ss_noise_estimate_mean (NULL, 10, 10)));
}

/* ss_alpha_auto_from_data applies the rule to ss_noise_for_alpha's σ and
 * says which σ it took: on a frame half dark and half bright the α is the
 * rule's at the mean noise less the typical, and the noise it reports for
 * the other rules stays the typical pixel's. */
static void
test_alpha_auto_where_light_is (void)
{
  const int w = 200, h = 160;
  g_autofree float *img = g_new (float, (gsize) w * h);
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++)
      img[(gsize) y * w + x]
        = (float) (x < w / 2 ? test_rand_normal () : 5000.0 + 20.0 * test_rand_normal ());
  SsPsfSpec spec = { 0 };
  g_assert_true (ss_psf_spec_parse ("gaussian:3", &spec, NULL));
  g_autoptr (GError) error = NULL;
  g_autoptr (SsOperator) op = ss_operator_new_blur (&spec, NULL, w, h, &error);
  g_assert_no_error (error);
  ss_psf_spec_clear (&spec);
  const double scale = 250.0;
  double alpha = 0, noise = 0, alpha_noise = 0;
  g_assert_true (ss_alpha_auto_from_data (img, w, h, NAN, scale, op, &alpha, &noise, &alpha_noise,
                                          &error));
  double typical = ss_noise_estimate (img, w, h), mean = ss_noise_estimate_mean (img, w, h);
  g_assert_cmpfloat (noise, ==, typical / scale);
  g_assert_cmpfloat (alpha_noise, ==, ss_noise_for_alpha (typical, mean) / scale);
  g_assert_cmpfloat (alpha_noise, >, 3 * noise);
  g_assert_cmpfloat (alpha, ==, ss_alpha_auto (alpha_noise, op));
}

/* The MAD of every interior window's 3x3 high-pass, as a number of noise
 * sigmas: the estimate's definition (ss-noise.h) with no rows left out. */
static double
all_windows_sigma (const float *img, int w, int h)
{
  static const float k[3] = { 1.f, -2.f, 1.f };
  g_autofree float *values = g_new (float, (gsize) (w - 2) * (h - 2));
  gsize count = 0;
  for (int y = 1; y < h - 1; y++)
    for (int x = 1; x < w - 1; x++)
      {
        float acc = 0.f;
        for (int dy = -1; dy <= 1; dy++)
          for (int dx = -1; dx <= 1; dx++)
            acc += k[dy + 1] * k[dx + 1] * img[(gsize) (y + dy) * w + x + dx];
        values[count++] = isfinite (acc) ? acc : NAN;
      }
  return ss_mad (values, count, ss_median (values, count)) / (6.0 * 0.6744897501960817);
}

/* A frame over 2^22 windows is estimated on some of its rows (every second
 * to fourth here). Oracle: the MAD of all its windows (above). The noise
 * grows down the frame (S to 3 S, stars and a sky on it), so rows taken from
 * one part only would miss it by up to 50%; every k-th row agrees within 1%
 * (the MAD's own scatter is about 0.1% here). */
static void
test_noise_estimate_large_frame (void)
{
  int w = g_test_rand_int_range (3600, 4400), h = g_test_rand_int_range (1300, 3600);
  double sigma = pow (10.0, g_test_rand_double_range (-2, 1));
  g_autofree float *img = make_sky_with_noise (w, h, sigma, w * h / 4000);
  /* The rest of the ramp: S² (1 + 2y/(h − 1))² in all. */
  for (int y = 0; y < h; y++)
    {
      double ramp = 1.0 + 2.0 * y / (h - 1), extra = sigma * sqrt (ramp * ramp - 1.0);
      for (int x = 0; x < w; x++)
        img[(gsize) y * w + x] += (float) (extra * test_rand_normal ());
    }
  for (int k = 0; k < w * h / 1000; k++)
    img[g_test_rand_int_range (0, w * h)] = NAN;
  double est = ss_noise_estimate (img, w, h), all = all_windows_sigma (img, w, h);
  g_test_message ("%d×%d, sigma %.4g to %.4g: estimate %.6g, all windows %.6g (ratio %.5f)", w,
                  h, sigma, 3 * sigma, est, all, est / all);
  g_assert_cmpfloat (fabs (est / all - 1.0), <, 0.01);
}

static void
test_noise_estimate_1d_and_degenerate (void)
{
  int n = g_test_rand_int_range (3000, 20000);
  double sigma = pow (10.0, g_test_rand_double_range (-3, 0));
  g_autofree float *row = make_sky_with_noise (n, 1, sigma, 0);
  double est = ss_noise_estimate (row, n, 1);
  g_test_message ("1-D n=%d sigma %.4g: estimate %.4g", n, sigma, est);
  g_assert_cmpfloat (fabs (est / sigma - 1.0), <, 0.10);
  /* The same signal as a column. */
  est = ss_noise_estimate (row, 1, n);
  g_assert_cmpfloat (fabs (est / sigma - 1.0), <, 0.10);

  /* Nothing to estimate from: NAN, never a crash. */
  float tiny[4] = { 1, 2, 3, 4 };
  g_assert_true (isnan (ss_noise_estimate (tiny, 2, 2)));
  g_assert_true (isnan (ss_noise_estimate (tiny, 0, 2)));
  g_assert_true (isnan (ss_noise_estimate (NULL, 5, 5)));
  float nan_only[25];
  for (int i = 0; i < 25; i++)
    nan_only[i] = NAN;
  g_assert_true (isnan (ss_noise_estimate (nan_only, 5, 5)));
  /* A constant image has no noise. */
  float flat[25];
  for (int i = 0; i < 25; i++)
    flat[i] = 7.0f;
  g_assert_cmpfloat (ss_noise_estimate (flat, 5, 5), ==, 0.0);
  /* Quantised data with noise under one count: the fallback still sees it. */
  g_autofree float *quant = make_sky_with_noise (200, 200, 0.3, 0);
  for (int i = 0; i < 200 * 200; i++)
    quant[i] = roundf (quant[i]);
  est = ss_noise_estimate (quant, 200, 200);
  g_test_message ("quantised sigma 0.3 (+ rounding 0.289): estimate %.4g", est);
  g_assert_cmpfloat (est, >, 0.2);
  g_assert_cmpfloat (est, <, 0.6);
}

static void
test_column_norm_parseval (void)
{
  int w = g_test_rand_int_range (100, 140), h = g_test_rand_int_range (100, 140);
  SsPsfSpec spec = { .kind = SS_PSF_MOFFAT, .fwhm = g_test_rand_double_range (2, 5),
                     .beta = g_test_rand_double_range (2, 5) };
  g_autoptr (GError) error = NULL;
  g_autoptr (SsImage) psf = ss_psf_render (&spec, w, h, &error);
  g_assert_no_error (error);
  double direct = 0;
  for (gsize i = 0; i < (gsize) w * h; i++)
    direct += (double) psf->data[i] * psf->data[i];
  direct = sqrt (direct);
  g_autoptr (SsOperator) op = ss_operator_new_blur (&spec, NULL, w, h, &error);
  g_assert_no_error (error);
  double via_spectrum = ss_operator_column_norm (op);
  g_test_message ("||psf|| = %.6g, from the spectrum %.6g", direct, via_spectrum);
  g_assert_cmpfloat (fabs (via_spectrum / direct - 1.0), <, 1e-4);

  /* With a third of the pixels unobserved the typical column shrinks by sqrt(m/n). */
  g_autofree float *observed = g_new (float, (gsize) w * h);
  gsize m = 0;
  for (gsize i = 0; i < (gsize) w * h; i++)
    {
      observed[i] = g_test_rand_double () < 1.0 / 3.0 ? NAN : 1.0f;
      m += isnan (observed[i]) ? 0 : 1;
    }
  g_autoptr (SsOperator) masked = ss_operator_new_blur (&spec, observed, w, h, &error);
  g_assert_no_error (error);
  double expect = direct * sqrt ((double) m / ((double) w * h));
  g_assert_cmpfloat (fabs (ss_operator_column_norm (masked) / expect - 1.0), <, 1e-4);

  /* Bad arguments: NAN, no crash. */
  g_assert_true (isnan (ss_alpha_auto (-1.0, op)));
  g_assert_true (isnan (ss_alpha_auto (NAN, op)));
  g_assert_true (isnan (ss_alpha_auto (0.01, NULL)));
  g_assert_cmpfloat (ss_alpha_auto (0.0, op), ==, 0.0);
  double alpha;
  g_assert_false (ss_alpha_auto_from_data (observed, w, h, NAN, 0.0, op, &alpha, NULL, NULL, &error));
  g_assert_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT);
}

/* ---- the alpha sweep ------------------------------------------------------ */

#define SWEEP_SIZE 128
#define SWEEP_ITERATIONS 400

/* Sparse star field: point sources of amplitude 0.2-1 on a dark sky. */
static float *
make_star_field (int w, int h, int nstars)
{
  float *truth = g_new0 (float, (gsize) w * h);
  for (int k = 0; k < nstars; k++)
    truth[g_test_rand_int_range (0, w * h)] = (float) g_test_rand_double_range (0.2, 1.0);
  return truth;
}

static double
solve_mse (const SsOperator *op, const float *y, const float *truth, double alpha)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (SsBackend) backend = ss_backend_new (SS_BACKEND_CPU, &error);
  g_assert_no_error (error);
  SsSolveParams params = test_solve_params (SS_SOLVER_FISTA, alpha, SWEEP_ITERATIONS);
  params.nonneg = TRUE;
  SsProblem problem = { .op = op, .y = y, .truth = truth };
  SsSolveResult result = { 0 };
  g_assert_true (ss_backend_solve (backend, &problem, &params, NULL, NULL, NULL, &result, &error));
  g_assert_no_error (error);
  double mse = ss_mse (result.x, truth, (gsize) op->width * op->height);
  ss_solve_result_clear (&result);
  return mse;
}

static void
sweep_one_noise_level (double sigma)
{
  const int w = SWEEP_SIZE, h = SWEEP_SIZE;
  g_autofree float *truth = make_star_field (w, h, 80);
  SsAcquisition acq;
  ss_acquisition_init (&acq);
  acq.psf.kind = SS_PSF_GAUSSIAN;
  acq.psf.fwhm = g_test_rand_double_range (2.5, 4.0);
  acq.noise = sigma;
  acq.seed = (guint32) g_test_rand_int ();
  g_autoptr (GError) error = NULL;
  g_autoptr (SsOperator) op = ss_operator_new_blur (&acq.psf, NULL, w, h, &error);
  g_assert_no_error (error);
  g_autofree float *y = ss_simulate (op, &acq, truth, &error);
  g_assert_no_error (error);

  double noise = ss_noise_estimate (y, w, h);
  double auto_alpha = ss_alpha_auto (noise, op);

  /* Log grid, 4 points a decade, 1e-5 .. 1e-1. */
  double best_alpha = NAN, best_mse = INFINITY;
  GString *curve = g_string_new (NULL);
  for (int k = 0; k <= 16; k++)
    {
      double alpha = 1e-5 * pow (10.0, k / 4.0);
      double mse = solve_mse (op, y, truth, alpha);
      g_string_append_printf (curve, " %.2e:%.3e", alpha, mse);
      if (mse < best_mse)
        {
          best_mse = mse;
          best_alpha = alpha;
        }
    }
  double auto_mse = solve_mse (op, y, truth, auto_alpha);
  g_test_message ("sigma %.3g (estimated %.4g), FWHM %.2f; alpha:MSE%s", sigma, noise,
                  acq.psf.fwhm, curve->str);
  g_test_message ("sigma %.3g: best alpha %.3e (MSE %.3e), auto alpha %.3e (MSE %.3e), "
                  "ratio %.2f", sigma, best_alpha, best_mse, auto_alpha, auto_mse,
                  auto_alpha / best_alpha);
  g_string_free (curve, TRUE);
  ss_acquisition_clear (&acq);

  g_assert_cmpfloat (fabs (noise / sigma - 1.0), <, 0.10);
  g_assert_cmpfloat (auto_alpha, >, best_alpha / 3.0);
  g_assert_cmpfloat (auto_alpha, <, best_alpha * 3.0);
}

static void
test_alpha_auto_low_noise (void)
{
  sweep_one_noise_level (0.005);
}

static void
test_alpha_auto_high_noise (void)
{
  sweep_one_noise_level (0.02);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/noise/estimate-known-sigma", test_noise_estimate_known_sigma);
  g_test_add_func ("/noise/estimate-many-blanks", test_noise_estimate_many_blanks);
  g_test_add_func ("/noise/estimate-1d-and-degenerate", test_noise_estimate_1d_and_degenerate);
  g_test_add_func ("/noise/estimate-large-frame", test_noise_estimate_large_frame);
  g_test_add_func ("/noise/estimate-mean", test_noise_estimate_mean);
  g_test_add_func ("/noise/problem-image-region", test_problem_stats_on_image_region);
  g_test_add_func ("/noise/alpha-auto-where-light-is", test_alpha_auto_where_light_is);
  g_test_add_func ("/noise/column-norm-parseval", test_column_norm_parseval);
  g_test_add_func ("/noise/alpha-auto-sigma-0.005", test_alpha_auto_low_noise);
  g_test_add_func ("/noise/alpha-auto-sigma-0.02", test_alpha_auto_high_noise);
  return g_test_run ();
}
