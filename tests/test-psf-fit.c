/* test-psf-fit.c: PSF measured from stars (issue 5, item 4).
 *
 * - ss_psf_fit_star on single synthetic stars drawn (by this file's own
 *   renderer, rotated-axes form) from Gaussian and Moffat profiles with random
 *   FWHM 2-6 px, beta 2-5, ellipticity 0-0.3, angle, sub-pixel centre, sky
 *   and noise (peak S/N 400-500), started up to 2 px off: FWHM within 5%,
 *   beta within 15%, ellipticity within 0.05, centre within 0.1 px;
 * - a star clipped by a SATURATE card or a flat top, its core left out at
 *   ss_psf_fit_saturation_for's level: the same FWHM tolerance, also with
 *   a column of blanks beside it;
 * - ss_psf_find_stars on crowded fields with saturated (flat-topped) stars,
 *   close pairs and stars cut by the edges (good stars' S/N 70-270): the
 *   combined PSF meets the same tolerances and no saturated or crowded star
 *   was used;
 * - on a Poisson field of equally bright stars, the header's SATURATE or
 *   SATLEVEL card sets the saturation level;
 * - a search with a cancelled cancellable fails with G_IO_ERROR_CANCELLED
 *   and leaves its outputs alone; with a fresh one it equals the search
 *   without one;
 * - ss_psf_fit_render of a round fit equals ss_psf_render of the matching
 *   spec, and an elliptical one has the second moments of its covariance;
 *   ss_psf_fit_operator equals ss_operator_new_blur for a round fit;
 * - at a corner, where the frame cuts the sky's ring, a noise spike is
 *   refused and a star fitted;
 * - bad input fails with a GError.
 * Inputs are fresh draws from g_test_rand_* (the seed is in the TAP output;
 * --seed replays it).
 */
#include "test-common.h"
#include "ss-psf-fit.h"

#include <math.h>
#include <string.h>

#define FWHM_PER_SIGMA 2.3548200450309493

typedef struct {
  SsPsfModel model;
  double fwhm_major, fwhm_minor, angle, beta;
} Profile;

static Profile
random_profile (SsPsfModel model)
{
  Profile p;
  p.model = model;
  double fwhm = g_test_rand_double_range (2.0, 6.0);           /* geometric mean */
  double e = g_test_rand_double_range (0.0, 0.3);
  p.fwhm_major = fwhm / sqrt (1.0 - e);
  p.fwhm_minor = fwhm * sqrt (1.0 - e);
  p.angle = g_test_rand_double_range (-G_PI / 2, G_PI / 2);
  p.beta = model == SS_PSF_MODEL_MOFFAT ? g_test_rand_double_range (2.0, 5.0) : NAN;
  return p;
}

static double
profile_fwhm (const Profile *p)
{
  return sqrt (p->fwhm_major * p->fwhm_minor);
}

static double
profile_ellipticity (const Profile *p)
{
  return 1.0 - p->fwhm_minor / p->fwhm_major;
}

/* Peak-1 profile at offset (dx, dy) from the centre: rotate into the axes,
 * then the 1-D definitions of FWHM. */
static double
profile_value (const Profile *p, double dx, double dy)
{
  double u = dx * cos (p->angle) + dy * sin (p->angle);
  double v = -dx * sin (p->angle) + dy * cos (p->angle);
  if (p->model == SS_PSF_MODEL_GAUSSIAN)
    {
      double sm = p->fwhm_major / FWHM_PER_SIGMA, sn = p->fwhm_minor / FWHM_PER_SIGMA;
      return exp (-0.5 * (u * u / (sm * sm) + v * v / (sn * sn)));
    }
  double k = 2.0 * sqrt (pow (2.0, 1.0 / p->beta) - 1.0);
  double am = p->fwhm_major / k, an = p->fwhm_minor / k;
  return pow (1.0 + u * u / (am * am) + v * v / (an * an), -p->beta);
}

/* Adds AMP * profile at (cx, cy) to IMG (w x h), within RADIUS. */
static void
add_star (float *img, int w, int h, const Profile *p, double cx, double cy, double amp,
          int radius)
{
  for (int y = MAX (0, (int) cy - radius); y <= MIN (h - 1, (int) cy + radius); y++)
    for (int x = MAX (0, (int) cx - radius); x <= MIN (w - 1, (int) cx + radius); x++)
      img[(gsize) y * w + x] += (float) (amp * profile_value (p, x - cx, y - cy));
}

static void
add_sky_and_noise (float *img, int w, int h, double sky, double sigma)
{
  for (gsize i = 0; i < (gsize) w * h; i++)
    img[i] += (float) (sky + sigma * test_rand_normal ());
}

/* Angle difference modulo pi. */
static double
angle_difference (double a, double b)
{
  double d = fmod (a - b, G_PI);
  if (d > G_PI / 2)
    d -= G_PI;
  if (d < -G_PI / 2)
    d += G_PI;
  return fabs (d);
}

static void
check_fit_against_profile (const SsPsfFit *fit, const Profile *truth)
{
  double fwhm = profile_fwhm (truth), e = profile_ellipticity (truth);
  g_autofree char *text = ss_psf_fit_describe (fit);
  g_test_message ("truth FWHM %.3f beta %.2f e %.3f angle %.1f | fit %s", fwhm, truth->beta, e,
                  truth->angle * 180 / G_PI, text);
  g_assert_cmpfloat (fabs (fit->fwhm / fwhm - 1.0), <, 0.05);
  g_assert_cmpfloat (fabs (fit->ellipticity - e), <, 0.05);
  if (truth->model == SS_PSF_MODEL_MOFFAT)
    g_assert_cmpfloat (fabs (fit->beta / truth->beta - 1.0), <, 0.15);
  else
    g_assert_true (isnan (fit->beta));
  if (e > 0.1)
    g_assert_cmpfloat (angle_difference (fit->angle, truth->angle), <, 10.0 * G_PI / 180);
}

static void
fit_single_stars (SsPsfModel model)
{
  const int w = 80, h = 72;
  g_autoptr (GError) error = NULL;
  for (int trial = 0; trial < 10; trial++)
    {
      Profile truth = random_profile (model);
      double cx = g_test_rand_double_range (35, 45), cy = g_test_rand_double_range (30, 40);
      /* Peak signal-to-noise 400-500: a well-exposed star, as one picks for a
       * PSF. Beta is the least constrained parameter: at FWHM 2 and beta 5 its
       * scatter is about 8% at S/N 170 (and the fit is unbiased), so this S/N
       * keeps the 15% tolerance beyond 4 sigma. */
      double amp = g_test_rand_double_range (0.8, 1.0), sky = g_test_rand_double_range (0, 0.2);
      const double sigma = 0.002;
      g_autoptr (SsImage) image = ss_image_new (w, h, 1, &error);
      g_assert_no_error (error);
      add_star (image->data, w, h, &truth, cx, cy, amp, 40);
      add_sky_and_noise (image->data, w, h, sky, sigma);

      double x0 = cx + g_test_rand_double_range (-2, 2), y0 = cy + g_test_rand_double_range (-2, 2);
      SsPsfFit fit;
      g_assert_true (ss_psf_fit_star (image, x0, y0, model, INFINITY, &fit, &error));
      g_assert_no_error (error);
      check_fit_against_profile (&fit, &truth);
      g_assert_cmpfloat (fabs (fit.x - cx), <, 0.1);
      g_assert_cmpfloat (fabs (fit.y - cy), <, 0.1);
      g_assert_cmpfloat (fabs (fit.amplitude / amp - 1.0), <, 0.05);
      g_assert_cmpfloat (fabs (fit.background - sky), <, 0.01);
      /* The residual is the noise when the model is right. */
      g_assert_cmpfloat (fit.rms_residual, <, 1.3 * sigma);
    }
}

static void
test_fit_gaussian_stars (void)
{
  fit_single_stars (SS_PSF_MODEL_GAUSSIAN);
}

static void
test_fit_moffat_stars (void)
{
  fit_single_stars (SS_PSF_MODEL_MOFFAT);
}

/* ---- automatic search ----------------------------------------------------- */

typedef struct {
  double x, y;
  const char *spoiled;   /* why it must not be used (saturated, crowded, cut by the
                            edge), NULL for a good star */
} Planted;

static void
find_stars_in_field (SsPsfModel model)
{
  const int w = 300, h = 260;
  const double sigma = 0.003, level = 1.0;   /* the detector saturates at 1.0 */
  g_autoptr (GError) error = NULL;
  Profile truth = random_profile (model);
  g_autoptr (SsImage) image = ss_image_new (w, h, 1, &error);
  GArray *planted = g_array_new (FALSE, FALSE, sizeof (Planted));
  int radius = (int) (8 * truth.fwhm_major) + 5;

  /* Good stars on a grid (so they stay isolated), jittered. */
  for (int gy = 0; gy < 4; gy++)
    for (int gx = 0; gx < 5; gx++)
      {
        Planted s = { 30 + gx * 60 + g_test_rand_double_range (-3, 3),
                      30 + gy * 65 + g_test_rand_double_range (-3, 3), NULL };
        double amp = g_test_rand_double_range (0.2, 0.8);   /* S/N 70-270 */
        int kind = g_test_rand_int_range (0, 6);
        if (kind == 0)
          {
            amp = g_test_rand_double_range (2.0, 5.0);   /* saturated: clipped below */
            s.spoiled = "saturated";
          }
        else if (kind == 1)
          {
            /* A close companion of comparable height. */
            double r = g_test_rand_double_range (1.5, 2.5) * truth.fwhm_major;
            double t = g_test_rand_double_range (0, 2 * G_PI);
            add_star (image->data, w, h, &truth, s.x + r * cos (t), s.y + r * sin (t),
                      amp * g_test_rand_double_range (0.4, 1.0), radius);
            s.spoiled = "crowded";
          }
        add_star (image->data, w, h, &truth, s.x, s.y, amp, radius);
        g_array_append_val (planted, s);
      }
  /* Stars cut by the edges. */
  for (int k = 0; k < 4; k++)
    {
      Planted s = { k % 2 ? 1.0 : w - 2.0, g_test_rand_double_range (20, h - 20), "cut by the edge" };
      add_star (image->data, w, h, &truth, s.x, s.y, 0.5, radius);
      g_array_append_val (planted, s);
    }
  add_sky_and_noise (image->data, w, h, 0.05, sigma);
  for (gsize i = 0; i < (gsize) w * h; i++)
    image->data[i] = MIN (image->data[i], (float) level);

  SsStarSearch search;
  ss_star_search_init (&search);
  search.model = model;
  search.saturation = level;
  SsPsfFit combined;
  GArray *fits = NULL;
  g_assert_true (ss_psf_find_stars (image, &search, &combined, &fits, NULL, &error));
  g_assert_no_error (error);
  g_test_message ("%u stars used", fits->len);
  g_assert_cmpuint (fits->len, >=, 3);
  g_assert_cmpint (combined.iterations, ==, (int) fits->len);
  for (guint i = 0; i < fits->len; i++)
    {
      const SsPsfFit *f = &g_array_index (fits, SsPsfFit, i);
      for (guint j = 0; j < planted->len; j++)
        {
          const Planted *s = &g_array_index (planted, Planted, j);
          if (hypot (f->x - s->x, f->y - s->y) < 3.0)
            {
              if (s->spoiled)
                {
                  g_autofree char *text = ss_psf_fit_describe (f);
                  g_test_message ("used a %s star at (%.1f, %.1f): %s", s->spoiled, s->x, s->y,
                                  text);
                }
              g_assert_null (s->spoiled);
            }
        }
    }
  check_fit_against_profile (&combined, &truth);
  g_array_free (fits, TRUE);
  g_array_free (planted, TRUE);

  /* With saturation left to the default (the flat top at the maximum, the
   * clip level) the flat tops are still refused. */
  search.saturation = NAN;
  g_assert_true (ss_psf_find_stars (image, &search, &combined, NULL, NULL, &error));
  check_fit_against_profile (&combined, &truth);
}

static void
test_find_gaussian_stars (void)
{
  find_stars_in_field (SS_PSF_MODEL_GAUSSIAN);
}

static void
test_find_moffat_stars (void)
{
  find_stars_in_field (SS_PSF_MODEL_MOFFAT);
}

/* A star clipped at a third to a sixth of its peak, by a SATURATE card or a
 * flat top (the level ss_psf_fit_saturation_for resolves): fitted through
 * its clipped core the Gaussian comes out more than 10% too wide (or not at
 * all); with the core left out its wings give the FWHM within 5%, as for an
 * unclipped star, the fit centred on the core, also when the core is wider
 * than the peak search around the click. A column of blanks beside the
 * star (a masked column, a drizzled frame's edge) is no core: the fit is
 * the same with and without it. */
static void
test_fit_clipped_star (void)
{
  const int w = 80, h = 72;
  for (int trial = 0; trial < 6; trial++)
    {
      g_autoptr (GError) error = NULL;
      Profile truth = random_profile (SS_PSF_MODEL_GAUSSIAN);
      double cx = g_test_rand_double_range (35, 45), cy = g_test_rand_double_range (30, 40);
      double amp = g_test_rand_double_range (0.8, 1.0), sky = g_test_rand_double_range (0, 0.2);
      /* At a third of the peak or less, a star of the narrowest FWHM drawn
       * (2 px, 0.84 of it on the minor axis) clips 4 pixels or more. */
      float clip = (float) (sky + amp / g_test_rand_double_range (3, 6));
      g_autoptr (SsImage) image = ss_image_new (w, h, 1, &error);
      g_assert_no_error (error);
      add_star (image->data, w, h, &truth, cx, cy, amp, 40);
      add_sky_and_noise (image->data, w, h, sky, 0.002);
      gsize clipped = 0;
      for (gsize i = 0; i < (gsize) w * h; i++)
        {
          clipped += image->data[i] >= clip ? 1 : 0;
          image->data[i] = MIN (image->data[i], clip);
        }
      g_assert_cmpuint (clipped, >=, 3);
      gboolean card = trial % 2 == 0;
      if (card)
        {
          image->header = ss_header_new ();
          /* A hair under the clip: the card's decimal must not round above
           * the clipped floats. */
          g_autofree char *text = g_strdup_printf ("SATURATE= %20.9g", clip * (1 - 1e-6));
          ss_header_add_card (image->header, text);
        }
      double level = ss_psf_fit_saturation_for (image, NAN);
      g_assert_cmpfloat (level, <=, clip);
      SsPsfFit through, around, beside;
      gboolean fitted = ss_psf_fit_star (image, cx, cy, SS_PSF_MODEL_GAUSSIAN, INFINITY,
                                         &through, NULL);
      g_assert_true (ss_psf_fit_star (image, cx, cy, SS_PSF_MODEL_GAUSSIAN, level, &around,
                                      &error));
      g_assert_no_error (error);
      g_test_message ("clipped by %s (%" G_GSIZE_FORMAT " pixels): FWHM %.3f through the core%s, "
                      "%.3f around it, truth %.3f", card ? "SATURATE" : "a flat top", clipped,
                      fitted ? through.fwhm : NAN, fitted ? "" : " (no fit)", around.fwhm,
                      profile_fwhm (&truth));
      /* The fit through the core may also fail to converge: either way no
       * PSF of the star's width comes from it. */
      if (fitted)
        g_assert_cmpfloat (through.fwhm / profile_fwhm (&truth), >, 1.1);
      check_fit_against_profile (&around, &truth);

      /* Blanks two columns from the star's centre, the full height. */
      int column = (int) lround (cx) + 2 + (int) (2 * profile_fwhm (&truth));
      for (int y = 0; y < h; y++)
        image->data[(gsize) y * w + column] = NAN;
      g_assert_true (ss_psf_fit_star (image, cx, cy, SS_PSF_MODEL_GAUSSIAN, level, &beside,
                                      &error));
      g_assert_cmpfloat (fabs (beside.x - around.x), <, 0.05);
      g_assert_cmpfloat (fabs (beside.fwhm / around.fwhm - 1), <, 0.05);
    }
}

/* A 128² field of three isolated stars of TRUTH's profile near fixed
 * places (each moved up to 4 px, written to STARS), peaking at PEAK over a
 * sky of SKY, with Gaussian noise of Poisson variance. */
static SsImage *
three_star_field (const Profile *truth, double sky, double peak, double stars[3][2])
{
  const int w = 128, h = 128;
  g_autoptr (GError) error = NULL;
  SsImage *image = ss_image_new (w, h, 1, &error);
  g_assert_no_error (error);
  const int corners[3][2] = { { 32, 32 }, { 96, 40 }, { 60, 96 } };
  for (int k = 0; k < 3; k++)
    {
      stars[k][0] = corners[k][0] + g_test_rand_int_range (-4, 5);
      stars[k][1] = corners[k][1] + g_test_rand_int_range (-4, 5);
      add_star (image->data, w, h, truth, stars[k][0], stars[k][1], peak - sky, 60);
    }
  for (gsize i = 0; i < (gsize) w * h; i++)
    {
      double mean = sky + image->data[i];
      image->data[i] = (float) (mean + sqrt (mean) * test_rand_normal ());
    }
  return image;
}

/* The header's saturation level. A 128² field of counts: sky 1000, three
 * isolated stars peaking at 20000 on pixel centres, Poisson noise (drawn as
 * Gaussian with variance = mean: at 1000 counts and more the difference is
 * negligible). Without a card nothing is saturated (no flat top): all three
 * are used and the PSF is right (the tolerances of
 * check_fit_against_profile), and so with SATURATE = 60000. A SATLEVEL card
 * below their peaks refuses them all, its level and name in the message;
 * the search's own level overrides a card. */
static void
test_find_stars_header_saturation (void)
{
  g_autoptr (GError) error = NULL;
  Profile truth = random_profile (SS_PSF_MODEL_GAUSSIAN);
  double stars[3][2];
  g_autoptr (SsImage) image = three_star_field (&truth, 1000, 20000, stars);
  SsStarSearch search;
  ss_star_search_init (&search);
  search.model = SS_PSF_MODEL_GAUSSIAN;
  SsPsfFit combined;
  g_assert_true (ss_psf_find_stars (image, &search, &combined, NULL, NULL, &error));
  g_assert_cmpint (combined.iterations, ==, 3);

  image->header = ss_header_new ();
  ss_header_set_double (image->header, "SATURATE", 60000, "detector saturation, counts");
  GArray *fits = NULL;
  gboolean found = ss_psf_find_stars (image, &search, &combined, &fits, NULL, &error);
  if (!found)
    g_test_message ("%s", error->message);
  g_assert_no_error (error);
  g_assert_true (found);
  g_assert_cmpuint (fits->len, ==, 3);
  for (guint i = 0; i < fits->len; i++)
    {
      const SsPsfFit *f = &g_array_index (fits, SsPsfFit, i);
      double nearest = INFINITY;
      for (int k = 0; k < 3; k++)
        nearest = MIN (nearest, hypot (f->x - stars[k][0], f->y - stars[k][1]));
      g_assert_cmpfloat (nearest, <, 0.5);
    }
  check_fit_against_profile (&combined, &truth);
  g_array_free (fits, TRUE);

  /* SATLEVEL below the peaks: every star is saturated. */
  ss_header_free (image->header);
  image->header = ss_header_new ();
  ss_header_set_double (image->header, "SATLEVEL", 15000, "detector saturation, counts");
  g_assert_false (ss_psf_find_stars (image, &search, &combined, NULL, NULL, &error));
  g_assert_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT);
  g_test_message ("%s", error->message);
  g_assert_nonnull (strstr (error->message, "1.5e+04"));
  g_assert_nonnull (strstr (error->message, "SATLEVEL"));
  g_clear_error (&error);

  /* The caller's level wins over the card. */
  search.saturation = 60000;
  g_assert_true (ss_psf_find_stars (image, &search, &combined, NULL, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpint (combined.iterations, ==, 3);
  /* And so does the caller's none (INFINITY: deblur's --saturation auto
   * found none), without looking at the card. */
  search.saturation = INFINITY;
  g_assert_true (ss_psf_find_stars (image, &search, &combined, NULL, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpint (combined.iterations, ==, 3);
}

static gboolean same_fit (const SsPsfFit *a, const SsPsfFit *b);

/* The noise a caller hands the search (deblur measures it once for the
 * search and the defects' rules) is the one it would measure: the same
 * fit to the bit. And it is used: a noise a thousand times larger puts the
 * threshold (sky + 20 σ) above every star. */
static void
test_find_stars_given_noise (void)
{
  g_autoptr (GError) error = NULL;
  Profile truth = random_profile (SS_PSF_MODEL_MOFFAT);
  double stars[3][2];
  g_autoptr (SsImage) image = three_star_field (&truth, 500, 8000, stars);
  SsStarSearch search;
  ss_star_search_init (&search);
  SsPsfFit measured, given;
  g_assert_true (ss_psf_find_stars (image, &search, &measured, NULL, NULL, &error));
  g_assert_no_error (error);
  search.noise = ss_noise_estimate (image->data, image->width, image->height);
  g_test_message ("noise %.4g; %d stars", search.noise, measured.iterations);
  g_assert_true (ss_psf_find_stars (image, &search, &given, NULL, NULL, &error));
  g_assert_no_error (error);
  g_assert_true (same_fit (&measured, &given));
  search.noise *= 1000;
  g_assert_false (ss_psf_find_stars (image, &search, &given, NULL, NULL, &error));
  g_assert_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT);
}

/* TRUE when A and B are the same fit, to the bit (NaN beta equal to NaN). */
static gboolean
same_fit (const SsPsfFit *a, const SsPsfFit *b)
{
  const double av[] = { a->x, a->y, a->amplitude, a->background, a->fwhm, a->fwhm_major,
                        a->fwhm_minor, a->angle, a->ellipticity, a->beta, a->rms_residual };
  const double bv[] = { b->x, b->y, b->amplitude, b->background, b->fwhm, b->fwhm_major,
                        b->fwhm_minor, b->angle, b->ellipticity, b->beta, b->rms_residual };
  for (guint i = 0; i < G_N_ELEMENTS (av); i++)
    if (!(av[i] == bv[i] || (isnan (av[i]) && isnan (bv[i]))))
      return FALSE;
  return a->model == b->model && a->pixels == b->pixels && a->iterations == b->iterations;
}

/* Cancellation (the app cancels a search when another image opens). A field
 * of six isolated stars: with a cancellable already cancelled the search
 * fails with G_IO_ERROR_CANCELLED, writing neither the combination nor the
 * list; with a fresh one it finds exactly what the search without any finds
 * (the oracle), star by star. */
static void
test_find_stars_cancelled (void)
{
  const int w = 200, h = 140;
  g_autoptr (GError) error = NULL;
  Profile truth = random_profile (SS_PSF_MODEL_GAUSSIAN);   /* no wings cut at 30 px */
  g_autoptr (SsImage) image = ss_image_new (w, h, 1, &error);
  g_assert_no_error (error);
  for (int k = 0; k < 6; k++)
    add_star (image->data, w, h, &truth, 35 + (k % 3) * 65 + g_test_rand_double_range (-2, 2),
              35 + (k / 3) * 70 + g_test_rand_double_range (-2, 2),
              g_test_rand_double_range (0.4, 0.8), 30);
  add_sky_and_noise (image->data, w, h, 0.05, 0.003);
  SsStarSearch search;
  ss_star_search_init (&search);
  search.model = SS_PSF_MODEL_GAUSSIAN;
  search.saturation = 10.0;   /* nothing is clipped: no level is needed */

  SsPsfFit expected;
  g_autoptr (GArray) expected_fits = NULL;
  g_assert_true (ss_psf_find_stars (image, &search, &expected, &expected_fits, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (expected_fits->len, >=, 3);

  g_autoptr (GCancellable) cancelled = g_cancellable_new ();
  g_cancellable_cancel (cancelled);
  SsPsfFit untouched = { .model = SS_PSF_MODEL_GAUSSIAN, .fwhm = -1.0, .iterations = -1 };
  SsPsfFit combined = untouched;
  GArray *fits = NULL;
  g_assert_false (ss_psf_find_stars (image, &search, &combined, &fits, cancelled, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_CANCELLED);
  g_clear_error (&error);
  g_assert_null (fits);
  g_assert_true (same_fit (&combined, &untouched));

  g_autoptr (GCancellable) fresh = g_cancellable_new ();
  g_assert_true (ss_psf_find_stars (image, &search, &combined, &fits, fresh, &error));
  g_assert_no_error (error);
  g_assert_true (same_fit (&combined, &expected));
  g_assert_cmpuint (fits->len, ==, expected_fits->len);
  for (guint i = 0; i < fits->len; i++)
    g_assert_true (same_fit (&g_array_index (fits, SsPsfFit, i),
                             &g_array_index (expected_fits, SsPsfFit, i)));
  g_array_unref (fits);
}

/* ---- rendering ------------------------------------------------------------ */

static SsPsfFit
fit_from_profile (const Profile *p)
{
  SsPsfFit fit = { 0 };
  fit.model = p->model;
  fit.fwhm_major = p->fwhm_major;
  fit.fwhm_minor = p->fwhm_minor;
  fit.fwhm = profile_fwhm (p);
  fit.angle = p->angle;
  fit.ellipticity = profile_ellipticity (p);
  fit.beta = p->beta;
  return fit;
}

static void
test_render_round_matches_spec (void)
{
  g_autoptr (GError) error = NULL;
  for (SsPsfModel model = SS_PSF_MODEL_GAUSSIAN; model <= SS_PSF_MODEL_MOFFAT; model++)
    {
      Profile p = random_profile (model);
      p.fwhm_major = p.fwhm_minor = profile_fwhm (&p);
      SsPsfFit fit = fit_from_profile (&p);
      SsPsfSpec spec;
      ss_psf_fit_to_spec (&fit, &spec);
      g_autofree char *text = ss_psf_spec_to_string (&spec);
      g_test_message ("spec %s", text);
      int w = g_test_rand_int_range (100, 140), h = g_test_rand_int_range (100, 140);
      g_autoptr (SsImage) mine = ss_psf_fit_render (&fit, w, h, &error);
      g_assert_no_error (error);
      g_autoptr (SsImage) theirs = ss_psf_render (&spec, w, h, &error);
      g_assert_no_error (error);
      double peak = theirs->data[0], worst = 0;
      for (gsize i = 0; i < (gsize) w * h; i++)
        worst = MAX (worst, fabs (mine->data[i] - theirs->data[i]));
      g_assert_cmpfloat (worst, <, 1e-5 * peak);

      /* The operator from the fit equals the operator from the spec, mask included. */
      g_autofree float *observed = g_new (float, (gsize) w * h);
      for (gsize i = 0; i < (gsize) w * h; i++)
        observed[i] = g_test_rand_double () < 0.1 ? NAN : 0.5f;
      g_autoptr (SsOperator) op_fit = ss_psf_fit_operator (&fit, observed, w, h, &error);
      g_assert_no_error (error);
      g_autoptr (SsOperator) op_spec = ss_operator_new_blur (&spec, observed, w, h, &error);
      g_assert_no_error (error);
      g_assert_cmpuint (op_fit->m, ==, op_spec->m);
      g_assert_cmpmem (op_fit->mask, (gsize) w * h, op_spec->mask, (gsize) w * h);
      gsize spec_floats = 2 * (gsize) h * (w / 2 + 1);
      for (gsize i = 0; i < spec_floats; i++)
        g_assert_cmpfloat (fabsf (op_fit->chat[i] - op_spec->chat[i]), <, 1e-4);
      ss_psf_spec_clear (&spec);
    }
}

static void
test_render_elliptical_moments (void)
{
  g_autoptr (GError) error = NULL;
  Profile p = random_profile (SS_PSF_MODEL_GAUSSIAN);
  p.fwhm_major *= 1.5;   /* sigma >= 1.2 px: sums approximate integrals closely */
  p.fwhm_minor *= 1.5;
  SsPsfFit fit = fit_from_profile (&p);
  int size = 0;
  g_autoptr (SsImage) stamp = ss_psf_fit_render_stamp (&fit, size, &error);
  g_assert_no_error (error);
  g_assert_cmpint (stamp->width % 2, ==, 1);
  int c = stamp->width / 2;
  double sum = 0, mxx = 0, myy = 0, mxy = 0;
  for (int y = 0; y < stamp->height; y++)
    for (int x = 0; x < stamp->width; x++)
      {
        double v = stamp->data[(gsize) y * stamp->width + x];
        sum += v;
        mxx += v * (x - c) * (x - c);
        myy += v * (y - c) * (y - c);
        mxy += v * (x - c) * (y - c);
      }
  g_assert_cmpfloat (fabs (sum - 1.0), <, 1e-5);
  /* Covariance R diag(sM^2, sm^2) R^T, R the rotation by the angle. */
  double sm2 = pow (p.fwhm_major / FWHM_PER_SIGMA, 2), sn2 = pow (p.fwhm_minor / FWHM_PER_SIGMA, 2);
  double co = cos (p.angle), si = sin (p.angle);
  double cxx = sm2 * co * co + sn2 * si * si, cyy = sm2 * si * si + sn2 * co * co;
  double cxy = (sm2 - sn2) * co * si;
  g_test_message ("moments %.4f %.4f %.4f expected %.4f %.4f %.4f", mxx, myy, mxy, cxx, cyy, cxy);
  /* The 4-sigma cut-off removes 0.03% of the flux, mostly far out: 1% tolerance. */
  g_assert_cmpfloat (fabs (mxx - cxx), <, 0.01 * sm2);
  g_assert_cmpfloat (fabs (myy - cyy), <, 0.01 * sm2);
  g_assert_cmpfloat (fabs (mxy - cxy), <, 0.01 * sm2);

  /* A PSF larger than the image is refused. */
  g_assert_null (ss_psf_fit_render (&fit, 9, 9, &error));
  g_assert_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  g_assert_null (ss_psf_fit_render_stamp (&fit, 8, &error));
  g_assert_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT);
}

/* Sets the pixels of IMG (w x h) at Chebyshev distance RADIUS from (cx,
 * cy), those in the frame, to SKY with a spread of SPREAD (uniform). */
static void
quiet_ring (float *img, int w, int h, int cx, int cy, int radius, double sky, double spread)
{
  for (int y = MAX (cy - radius, 0); y <= MIN (cy + radius, h - 1); y++)
    for (int x = MAX (cx - radius, 0); x <= MIN (cx + radius, w - 1); x++)
      if (MAX (abs (x - cx), abs (y - cy)) == radius)
        img[(gsize) y * w + x] = (float) (sky + spread * g_test_rand_double_range (-1, 1));
}

/* A click at a corner, where the frame's edge cuts the sky's ring (at 8 px
 * from the peak, the first guess's) to 17 of its 64 pixels: the peak is
 * judged against the window's noise too. A spike of 4 σ at (1, 1) whose
 * ring pixels happen to be quiet (within ±0.05 σ of the sky) is refused,
 * where the ring's spread alone would pass it as a star (a noise streak at
 * a corner was fitted so in the app's test, FWHM 10.2 × 0.64 px). A star of
 * FWHM 2.5-4 and 60 σ at (4, 4), its ring as quiet, is fitted. */
static void
test_fit_star_at_corner (void)
{
  int w = 96, h = 80;
  double sky = g_test_rand_double_range (5, 50), sigma = g_test_rand_double_range (0.5, 2);
  g_autoptr (GError) error = NULL;
  g_autoptr (SsImage) spike = ss_image_new (w, h, 1, &error);
  add_sky_and_noise (spike->data, w, h, sky, sigma);
  quiet_ring (spike->data, w, h, 1, 1, 8, sky, 0.05 * sigma);
  for (int y = 0; y <= 4; y++)
    for (int x = 0; x <= 4; x++)   /* the peak search's reach: nothing above the spike */
      spike->data[(gsize) y * w + x] = (float) MIN (spike->data[(gsize) y * w + x], sky + 3 * sigma);
  spike->data[(gsize) 1 * w + 1] = (float) (sky + 4 * sigma);
  SsPsfFit fit;
  g_assert_false (ss_psf_fit_star (spike, 1, 1, SS_PSF_MODEL_GAUSSIAN, INFINITY, &fit, &error));
  g_assert_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT);
  g_test_message ("a spike at the corner: %s", error->message);
  g_clear_error (&error);

  g_autoptr (SsImage) star = ss_image_new (w, h, 1, &error);
  Profile round = { SS_PSF_MODEL_GAUSSIAN, 0, 0, 0, NAN };
  round.fwhm_major = round.fwhm_minor = g_test_rand_double_range (2.5, 4);
  add_sky_and_noise (star->data, w, h, sky, sigma);
  quiet_ring (star->data, w, h, 4, 4, 8, sky, 0.05 * sigma);
  add_star (star->data, w, h, &round, 4, 4, 60 * sigma, 20);
  g_assert_true (ss_psf_fit_star (star, 4, 4, SS_PSF_MODEL_GAUSSIAN, INFINITY, &fit, &error));
  g_assert_no_error (error);
  g_autofree char *text = ss_psf_fit_describe (&fit);
  g_test_message ("a star of FWHM %.2f at the corner: %s", round.fwhm_major, text);
  g_assert_cmpfloat (fabs (fit.fwhm / round.fwhm_major - 1), <, 0.1);
}

static void
test_bad_input (void)
{
  g_autoptr (GError) error = NULL;
  SsPsfModel model;
  g_assert_true (ss_psf_model_from_string ("Moffat", &model, &error));
  g_assert_cmpint (model, ==, SS_PSF_MODEL_MOFFAT);
  g_assert_false (ss_psf_model_from_string ("airy", &model, &error));
  g_assert_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);

  /* Pure noise: no star to fit, and none found. */
  g_autoptr (SsImage) image = ss_image_new (64, 64, 1, &error);
  add_sky_and_noise (image->data, 64, 64, 0.1, 0.01);
  SsPsfFit fit;
  g_assert_false (ss_psf_fit_star (image, 30, 30, SS_PSF_MODEL_GAUSSIAN, INFINITY, &fit, &error));
  g_assert_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  SsStarSearch search;
  ss_star_search_init (&search);
  g_assert_false (ss_psf_find_stars (image, &search, &fit, NULL, NULL, &error));
  g_assert_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);

  /* Outside the image, NaN everywhere, a bad search. */
  g_assert_false (ss_psf_fit_star (image, -3, 10, SS_PSF_MODEL_GAUSSIAN, INFINITY, &fit, &error));
  g_assert_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  g_assert_false (ss_psf_fit_star (image, NAN, 10, SS_PSF_MODEL_GAUSSIAN, INFINITY, &fit, &error));
  g_assert_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  for (int i = 0; i < 64 * 64; i++)
    image->data[i] = NAN;
  g_assert_false (ss_psf_fit_star (image, 30, 30, SS_PSF_MODEL_MOFFAT, INFINITY, &fit, &error));
  g_assert_nonnull (error);
  g_clear_error (&error);
  g_assert_false (ss_psf_find_stars (image, &search, &fit, NULL, NULL, &error));
  g_assert_nonnull (error);
  g_clear_error (&error);
  search.max_stars = 0;
  g_assert_false (ss_psf_find_stars (image, &search, &fit, NULL, NULL, &error));
  g_assert_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);

  /* A 1x1 image. */
  g_autoptr (SsImage) dot = ss_image_new (1, 1, 1, &error);
  dot->data[0] = 1.0f;
  g_assert_false (ss_psf_fit_star (dot, 0, 0, SS_PSF_MODEL_GAUSSIAN, INFINITY, &fit, &error));
  g_assert_nonnull (error);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/psf-fit/gaussian-stars", test_fit_gaussian_stars);
  g_test_add_func ("/psf-fit/moffat-stars", test_fit_moffat_stars);
  g_test_add_func ("/psf-fit/clipped-star", test_fit_clipped_star);
  g_test_add_func ("/psf-fit/find-gaussian-stars", test_find_gaussian_stars);
  g_test_add_func ("/psf-fit/find-moffat-stars", test_find_moffat_stars);
  g_test_add_func ("/psf-fit/find-stars-header-saturation", test_find_stars_header_saturation);
  g_test_add_func ("/psf-fit/find-stars-given-noise", test_find_stars_given_noise);
  g_test_add_func ("/psf-fit/find-stars-cancelled", test_find_stars_cancelled);
  g_test_add_func ("/psf-fit/render-round-matches-spec", test_render_round_matches_spec);
  g_test_add_func ("/psf-fit/render-elliptical-moments", test_render_elliptical_moments);
  g_test_add_func ("/psf-fit/star-at-corner", test_fit_star_at_corner);
  g_test_add_func ("/psf-fit/bad-input", test_bad_input);
  return g_test_run ();
}
