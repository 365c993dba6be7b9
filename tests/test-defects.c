/* test-defects.c: the pixels of a real image left out of the data term as
 * defects: the clipped ones (ss-saturation.h) and the cold ones
 * (ss-bad-pixels.h).
 *
 * - The header's cards: SATURATE before SATLEVEL, a card without a number
 *   skipped.
 * - A flat top is found where a noisy star field's brightest star is
 *   clipped (at the clip level, clipping every pixel a brute-force count
 *   finds at or above it),
 *   and not on the unclipped field, nor on two or on a touching pair of
 *   pixels that tie with the maximum; three touching are a flat top.
 * - ss_saturation_resolve: a card that would clip most of the image is
 *   ignored for the flat top, a level given is taken as it is.
 * - ss_saturation_blank blanks exactly the pixels at or above the level.
 * - Cold pixels: dead pixels and a dead column planted in a noisy star
 *   field are found, each and no other; none is found in fields without
 *   them, vignetted, with stars of FWHM 1.2 or with the bundled AIA image's
 *   sharp dark lanes.
 * - Hot pixels: spikes planted in a blurred star field are found and
 *   nothing else, with the blur's PSF or one twice as wide; so are hits on
 *   two touching pixels.
 * Inputs are fresh draws from g_test_rand_* (--seed replays them).
 */
#include "test-common.h"

#include <math.h>
#include <string.h>

/* A sky of 100 with Gaussian noise of 3 and NSTARS Gaussian stars (FWHM
 * 3) of 50 to 5000 at their peak: float data, no two pixels alike. */
static float *
noisy_star_field (int w, int h, int nstars)
{
  float *img = g_new (float, (gsize) w * h);
  for (gsize i = 0; i < (gsize) w * h; i++)
    img[i] = (float) (100.0 + 3.0 * test_rand_normal ());
  double s2 = pow (3.0 / 2.3548, 2);
  for (int k = 0; k < nstars; k++)
    {
      double cx = g_test_rand_double_range (0, w), cy = g_test_rand_double_range (0, h);
      double amp = pow (10.0, g_test_rand_double_range (log10 (50.0), log10 (5000.0)));
      for (int y = MAX (0, (int) cy - 8); y < MIN (h, (int) cy + 9); y++)
        for (int x = MAX (0, (int) cx - 8); x < MIN (w, (int) cx + 9); x++)
          img[(gsize) y * w + x] +=
            (float) (amp * exp (-0.5 * ((x - cx) * (x - cx) + (y - cy) * (y - cy)) / s2));
    }
  return img;
}

static gsize
count_at_or_above (const float *data, gsize n, double level)
{
  gsize count = 0;
  for (gsize i = 0; i < n; i++)
    count += isfinite (data[i]) && data[i] >= level ? 1 : 0;
  return count;
}

static float
maximum_of (const float *data, gsize n)
{
  float top = -INFINITY;
  for (gsize i = 0; i < n; i++)
    top = MAX (top, data[i]);
  return top;
}

static void
test_header_cards (void)
{
  double a = g_test_rand_double_range (1e3, 1e5), b = g_test_rand_double_range (1e3, 1e5);
  g_autoptr (SsHeader) header = ss_header_new ();
  SsSaturation s = { 0 };
  g_assert_false (ss_saturation_from_header (header, &s));
  g_assert_false (ss_saturation_from_header (NULL, &s));

  ss_header_set_double (header, "SATLEVEL", b, NULL);
  g_assert_true (ss_saturation_from_header (header, &s));
  g_assert_cmpfloat (s.level, ==, b);
  g_assert_cmpint (s.source, ==, SS_SATURATION_FROM_SATLEVEL);

  /* A SATURATE without a number is skipped; with one it comes first. */
  ss_header_set_string (header, "SATURATE", "unknown", NULL);
  g_assert_true (ss_saturation_from_header (header, &s));
  g_assert_cmpint (s.source, ==, SS_SATURATION_FROM_SATLEVEL);
  ss_header_set_double (header, "SATURATE", a, NULL);
  g_assert_true (ss_saturation_from_header (header, &s));
  g_assert_cmpfloat (s.level, ==, a);
  g_assert_cmpint (s.source, ==, SS_SATURATION_FROM_SATURATE);
}

static void
test_plateau_where_clipped (void)
{
  for (int trial = 0; trial < 5; trial++)
    {
      int w = g_test_rand_int_range (64, 200), h = g_test_rand_int_range (64, 200);
      gsize n = (gsize) w * h;
      g_autofree float *img = noisy_star_field (w, h, 8 + g_test_rand_int_range (0, 20));
      SsSaturation s = { 0 };
      g_assert_false (ss_saturation_find_plateau (img, w, h, &s));

      /* The brightest star, inside the frame, clipped at half its peak: a
       * flat top of about nine pixels. */
      double cx = g_test_rand_double_range (10, w - 10), cy = g_test_rand_double_range (10, h - 10);
      double s2 = pow (3.0 / 2.3548, 2);
      for (int y = (int) cy - 8; y < (int) cy + 9; y++)
        for (int x = (int) cx - 8; x < (int) cx + 9; x++)
          img[(gsize) y * w + x] +=
            (float) (2e4 * exp (-0.5 * ((x - cx) * (x - cx) + (y - cy) * (y - cy)) / s2));
      float clip = (float) (100.0 + 1e4);
      for (gsize i = 0; i < n; i++)
        img[i] = MIN (img[i], clip);
      g_assert_cmpuint (count_at_or_above (img, n, clip), >=, 4);
      g_assert_true (ss_saturation_find_plateau (img, w, h, &s));
      g_assert_cmpfloat (s.level, ==, clip);
      g_assert_cmpint (s.source, ==, SS_SATURATION_FROM_PLATEAU);
      SsSaturation resolved = ss_saturation_resolve (SS_SATURATION_AUTO, NAN, NULL, img, w, h);
      g_assert_cmpfloat (resolved.level, ==, clip);
      g_assert_cmpuint (resolved.clipped, ==, count_at_or_above (img, n, clip));
    }
}

/* Ties with the maximum are a flat top only when three of them touch. */
static void
test_plateau_needs_three_touching (void)
{
  int w = 48, h = 40;
  gsize n = (gsize) w * h;
  g_autofree float *img = noisy_star_field (w, h, 0);
  float top = maximum_of (img, n) + 50.0f;
  int x = g_test_rand_int_range (5, w - 5), y = g_test_rand_int_range (5, h - 5);
  SsSaturation s = { 0 };

  img[y * w + x] = top;
  img[(y + 3) * w + x - 2] = top;   /* apart: two ties */
  g_assert_false (ss_saturation_find_plateau (img, w, h, &s));
  img[y * w + x + 1] = top;         /* a touching pair */
  g_assert_false (ss_saturation_find_plateau (img, w, h, &s));
  img[(y + 1) * w + x] = top;       /* an L of three */
  g_assert_true (ss_saturation_find_plateau (img, w, h, &s));
  g_assert_cmpfloat (s.level, ==, top);
  g_assert_cmpuint (count_at_or_above (img, n, top), ==, 4);
}

static void
test_resolve_rules (void)
{
  int w = 96, h = 80;
  gsize n = (gsize) w * h;
  g_autofree float *img = noisy_star_field (w, h, 6);
  g_autoptr (SsHeader) header = ss_header_new ();

  /* A card under the sky would clip most of the image: ignored. */
  ss_header_set_double (header, "SATURATE", 50.0, NULL);
  SsSaturation s = ss_saturation_resolve (SS_SATURATION_AUTO, NAN, header, img, w, h);
  g_assert_cmpint (s.ignored, ==, SS_SATURATION_FROM_SATURATE);
  g_assert_cmpint (s.source, ==, SS_SATURATION_FROM_NONE);
  g_assert_true (isnan (s.level));

  /* ... and the data's own flat top is found instead. */
  float top = maximum_of (img, n) + 1.0f;
  int x = g_test_rand_int_range (2, w - 4), y = g_test_rand_int_range (2, h - 4);
  for (int dy = 0; dy < 2; dy++)
    for (int dx = 0; dx < 3; dx++)
      img[(y + dy) * w + x + dx] = top;
  s = ss_saturation_resolve (SS_SATURATION_AUTO, NAN, header, img, w, h);
  g_assert_cmpint (s.ignored, ==, SS_SATURATION_FROM_SATURATE);
  g_assert_cmpint (s.source, ==, SS_SATURATION_FROM_PLATEAU);
  g_assert_cmpfloat (s.level, ==, top);
  g_assert_cmpuint (s.clipped, ==, 6);

  /* A card above the sky is taken, whatever the data show. */
  double card = g_test_rand_double_range (150.0, 1000.0);
  ss_header_set_double (header, "SATURATE", card, NULL);
  s = ss_saturation_resolve (SS_SATURATION_AUTO, NAN, header, img, w, h);
  g_assert_cmpint (s.ignored, ==, SS_SATURATION_FROM_NONE);
  g_assert_cmpfloat (s.level, ==, card);
  g_assert_cmpuint (s.clipped, ==, count_at_or_above (img, n, card));

  /* A level given is taken as it is, even under the sky; none is none. */
  s = ss_saturation_resolve (SS_SATURATION_VALUE, 50.0, header, img, w, h);
  g_assert_cmpint (s.source, ==, SS_SATURATION_FROM_USER);
  g_assert_cmpuint (s.clipped, ==, n);
  s = ss_saturation_resolve (SS_SATURATION_NONE, NAN, header, img, w, h);
  g_assert_cmpint (s.source, ==, SS_SATURATION_FROM_NONE);
  g_assert_cmpuint (s.clipped, ==, 0);
}

static void
test_blank_exactly_the_clipped (void)
{
  int w = g_test_rand_int_range (50, 120), h = g_test_rand_int_range (50, 120);
  gsize n = (gsize) w * h;
  g_autofree float *img = noisy_star_field (w, h, 10);
  g_autofree float *scaled = g_new (float, n);
  for (gsize i = 0; i < n; i++)
    scaled[i] = g_test_rand_double () < 0.01 ? NAN : (img[i] - 100.0f) / 1000.0f;
  g_autofree float *before = g_memdup2 (scaled, n * sizeof (float));
  double level = g_test_rand_double_range (110.0, maximum_of (img, n));
  gsize expected = 0;
  for (gsize i = 0; i < n; i++)
    expected += img[i] >= level && isfinite (before[i]) ? 1 : 0;

  g_assert_cmpuint (ss_saturation_blank (img, scaled, n, level), ==, expected);
  for (gsize i = 0; i < n; i++)
    if (img[i] >= level)
      g_assert_true (isnan (scaled[i]));
    else if (isfinite (before[i]))
      g_assert_cmpfloat (scaled[i], ==, before[i]);
    else
      g_assert_true (isnan (scaled[i]));
  g_assert_cmpuint (ss_saturation_blank (img, scaled, n, NAN), ==, 0);
}

/* Blanks the cold pixels of IMG in a scaled copy; returns the copy. */
static float *
blank_cold_copy (const float *img, int w, int h, gsize *count)
{
  gsize n = (gsize) w * h;
  float *scaled = g_new (float, n);
  for (gsize i = 0; i < n; i++)
    scaled[i] = (img[i] - 100.0f) / 1000.0f;
  *count = ss_cold_pixels_blank (img, w, h, ss_median (img, n), ss_noise_estimate (img, w, h),
                                 scaled);
  return scaled;
}

static void
test_cold_pixels_found (void)
{
  for (int trial = 0; trial < 4; trial++)
    {
      int w = g_test_rand_int_range (64, 160), h = g_test_rand_int_range (64, 160);
      gsize n = (gsize) w * h;
      g_autofree float *img = noisy_star_field (w, h, 20);
      g_autofree guint8 *dead = g_new0 (guint8, n);
      /* A column of 5 at the bias (0), then single pixels at a flag or 0,
       * apart from the column and from each other. */
      int cx = g_test_rand_int_range (3, w - 3), cy = g_test_rand_int_range (3, h - 8);
      for (int k = 0; k < 5; k++)
        dead[(gsize) (cy + k) * w + cx] = 1;
      int singles = g_test_rand_int_range (1, 6);
      for (int k = 0; k < singles;)
        {
          int x = g_test_rand_int_range (2, w - 2), y = g_test_rand_int_range (2, h - 2);
          gboolean apart = TRUE;
          for (int dy = -2; dy <= 2; dy++)
            for (int dx = -2; dx <= 2; dx++)
              apart = apart && !dead[(gsize) (y + dy) * w + x + dx];
          if (!apart)
            continue;
          dead[(gsize) y * w + x] = 1;
          k++;
        }
      gsize planted = 0;
      for (gsize i = 0; i < n; i++)
        if (dead[i])
          {
            img[i] = g_test_rand_bit () ? -32768.0f : 0.0f;
            planted++;
          }
      gsize count;
      g_autofree float *scaled = blank_cold_copy (img, w, h, &count);
      g_assert_cmpuint (count, ==, planted);
      for (gsize i = 0; i < n; i++)
        g_assert_true (isnan (scaled[i]) == (dead[i] != 0));
    }
}

static void
test_cold_pixels_none_without (void)
{
  for (int trial = 0; trial < 4; trial++)
    {
      int w = g_test_rand_int_range (64, 200), h = g_test_rand_int_range (64, 200);
      g_autofree float *img = noisy_star_field (w, h, 40);
      /* Vignetting: the sky and all else down to 60% in the corners. */
      for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
          {
            double r2 = (pow (x - w / 2.0, 2) + pow (y - h / 2.0, 2)) / (w * w / 4.0 + h * h / 4.0);
            img[(gsize) y * w + x] *= (float) (1.0 - 0.4 * r2);
          }
      /* Undersampled stars: FWHM 1.2, single-pixel peaks beside dark gaps. */
      for (int k = 0; k < 30; k++)
        {
          double sx = g_test_rand_double_range (2, w - 2), sy = g_test_rand_double_range (2, h - 2);
          double s2 = pow (1.2 / 2.3548, 2), amp = g_test_rand_double_range (100, 20000);
          for (int y = (int) sy - 2; y <= (int) sy + 2; y++)
            for (int x = (int) sx - 2; x <= (int) sx + 2; x++)
              img[(gsize) y * w + x]
                += (float) (amp * exp (-0.5 * (pow (x - sx, 2) + pow (y - sy, 2)) / s2));
        }
      gsize count;
      g_autofree float *scaled = blank_cold_copy (img, w, h, &count);
      g_assert_cmpuint (count, ==, 0);
    }
  /* A sharp image: the bundled AIA frame's dark lanes between its loops. */
  g_autofree char *path = g_build_filename (g_getenv ("SHARPSKY_DATA"), "aia_171_level1.fits",
                                            NULL);
  g_autoptr (GError) error = NULL;
  g_autoptr (SsImage) aia = ss_fits_read (path, NULL, &error);
  g_assert_no_error (error);
  gsize n = ss_image_plane_size (aia), count;
  g_autofree float *scaled = g_new (float, n);
  memcpy (scaled, aia->data, n * sizeof (float));
  count = ss_cold_pixels_blank (aia->data, aia->width, aia->height, ss_median (aia->data, n),
                                ss_noise_estimate (aia->data, aia->width, aia->height), scaled);
  g_assert_cmpuint (count, ==, 0);
}

/* A W × H field of N_STARS Gaussian stars (sky 100, noise 3) blurred by a
 * Gaussian of FWHM FWHM at random places off the pixel centres, of 30σ to
 * 3·10⁴ σ at their peak: what a blur can make. */
static float *
blurred_star_field (int w, int h, double fwhm, int n_stars)
{
  float *img = g_new (float, (gsize) w * h);
  for (gsize i = 0; i < (gsize) w * h; i++)
    img[i] = (float) (100.0 + 3.0 * test_rand_normal ());
  double s2 = pow (fwhm / 2.3548200450309493, 2);
  for (int k = 0; k < n_stars; k++)
    {
      double cx = g_test_rand_double_range (0, w), cy = g_test_rand_double_range (0, h);
      double peak = 3.0 * pow (10.0, g_test_rand_double_range (1.5, 4.5));
      for (int y = MAX (0, (int) cy - 10); y < MIN (h, (int) cy + 11); y++)
        for (int x = MAX (0, (int) cx - 10); x < MIN (w, (int) cx + 11); x++)
          img[(gsize) y * w + x]
            += (float) (peak * exp (-0.5 * ((x - cx) * (x - cx) + (y - cy) * (y - cy)) / s2));
    }
  return img;
}

static SsHotRatios
gaussian_psf_ratios (double fwhm)
{
  SsPsfSpec spec = { .kind = SS_PSF_GAUSSIAN, .fwhm = fwhm };
  return ss_hot_pixels_psf_ratios (&spec, NULL);
}

/* Hot pixels: spikes of 15σ to 10⁴σ planted apart in a blurred star field
 * are found, each and no other, with the blur's own PSF; none is found in
 * the field without them, with that PSF or one of twice its FWHM (a blur
 * given too wide); a kernel of one pixel (no blur) makes nothing hot. */
static void
test_hot_pixels (void)
{
  for (int trial = 0; trial < 4; trial++)
    {
      int w = g_test_rand_int_range (80, 200), h = g_test_rand_int_range (80, 200);
      gsize n = (gsize) w * h, count;
      double fwhm = g_test_rand_double_range (2.0, 4.0);
      g_autofree float *img = blurred_star_field (w, h, fwhm, 60);
      g_autofree float *scaled = g_new (float, n);
      double sky = ss_median (img, n), noise = ss_noise_estimate (img, w, h);
      for (int wide = 1; wide <= 2; wide++)
        {
          memcpy (scaled, img, n * sizeof (float));
          SsHotRatios wider = gaussian_psf_ratios (wide * fwhm);
          count = ss_hot_pixels_blank (img, w, h, sky, noise, &wider, scaled);
          g_assert_cmpuint (count, ==, 0);
        }
      g_autofree guint8 *hot = g_new0 (guint8, n);
      int planted = g_test_rand_int_range (1, 12);
      for (int k = 0; k < planted;)
        {
          int x = g_test_rand_int_range (2, w - 2), y = g_test_rand_int_range (2, h - 2);
          gboolean apart = TRUE;
          for (int dy = -2; dy <= 2; dy++)
            for (int dx = -2; dx <= 2; dx++)
              apart = apart && !hot[(gsize) (y + dy) * w + x + dx];
          if (!apart)
            continue;
          hot[(gsize) y * w + x] = 1;
          img[(gsize) y * w + x] += (float) (3.0 * pow (10.0, g_test_rand_double_range (1.2, 4)));
          k++;
        }
      /* A spike on a star's wing may stay under the rule; count what the
       * rule's own inequality says, against the planted spikes. */
      memcpy (scaled, img, n * sizeof (float));
      SsHotRatios ratios = gaussian_psf_ratios (fwhm);
      count = ss_hot_pixels_blank (img, w, h, sky, noise, &ratios, scaled);
      gsize found = 0, in_sky = 0;
      for (gsize i = 0; i < n; i++)
        {
          if (isnan (scaled[i]))
            g_assert_true (hot[i]);
          found += hot[i] && isnan (scaled[i]) ? 1 : 0;
          /* Spikes of 30σ or more among neighbours within 3σ of the sky
           * are the rule's plainest case (its bound there: twice a peak
           * ratio of at most 2, the FWHM-2 Gaussian's, times 3σ, plus
           * 10σ, is 22σ): every one is found. */
          float brightest = -INFINITY;
          for (int dy = -1; dy <= 1 && hot[i]; dy++)
            for (int dx = -1; dx <= 1; dx++)
              if (dx || dy)
                brightest = MAX (brightest, img[(gsize) ((int) (i / w) + dy) * w + i % w + dx]);
          if (hot[i] && brightest < sky + 9.0 && img[i] > sky + 90.0)
            {
              in_sky++;
              g_assert_true (isnan (scaled[i]));
            }
        }
      g_assert_cmpuint (count, ==, found);
      g_test_message ("FWHM %.2f: %" G_GSIZE_FORMAT " of %d spikes found, %" G_GSIZE_FORMAT
                      " of them plainly in the sky", fwhm, found, planted, in_sky);
      const float one = 1.0f;
      g_assert_true (isinf (ss_hot_pixels_kernel_ratios (&one, 1, 1).peak));
    }
}

/* Hits on two touching pixels (side by side or corner to corner) planted
 * apart in a blurred star field: nothing but their pixels is blanked, and
 * both pixels of every pair plainly in the sky are (the weaker of the two
 * 30σ or more over the sky, every pixel touching the pair within 3σ of it:
 * the rule's bound there is at most twice a peak ratio of 1.86, the FWHM-2
 * Gaussian's, times 3σ, plus 10σ, or 21σ). Before the pair rule a pair of
 * alike pixels was never found: each is the other's brightest neighbour. */
static void
test_hot_pairs (void)
{
  static const int partner[4][2] = { { 1, 0 }, { 0, 1 }, { 1, 1 }, { 1, -1 } };
  for (int trial = 0; trial < 4; trial++)
    {
      int w = g_test_rand_int_range (80, 200), h = g_test_rand_int_range (80, 200);
      gsize n = (gsize) w * h;
      double fwhm = g_test_rand_double_range (2.0, 4.0);
      g_autofree float *img = blurred_star_field (w, h, fwhm, 60);
      double sky = ss_median (img, n), noise = ss_noise_estimate (img, w, h);
      g_autofree guint8 *hot = g_new0 (guint8, n);
      int planted = g_test_rand_int_range (1, 10), plain = 0;
      g_autofree int *pairs = g_new (int, 4 * planted);
      for (int k = 0; k < planted;)
        {
          int x = g_test_rand_int_range (3, w - 3), y = g_test_rand_int_range (3, h - 3);
          const int *d = partner[g_test_rand_int_range (0, 4)];
          gboolean apart = TRUE;
          for (int dy = -3; dy <= 3; dy++)
            for (int dx = -3; dx <= 3; dx++)
              apart = apart && !hot[(gsize) (y + dy) * w + x + dx];
          if (!apart)
            continue;
          int *pair = pairs + 4 * k;
          pair[0] = x, pair[1] = y, pair[2] = x + d[0], pair[3] = y + d[1];
          for (int j = 0; j < 2; j++)
            {
              gsize i = (gsize) pair[2 * j + 1] * w + pair[2 * j];
              hot[i] = 1;
              img[i] += (float) (3.0 * pow (10.0, g_test_rand_double_range (1.2, 4)));
            }
          k++;
        }
      g_autofree float *scaled = g_memdup2 (img, n * sizeof (float));
      SsHotRatios ratios = gaussian_psf_ratios (fwhm);
      gsize count = ss_hot_pixels_blank (img, w, h, sky, noise, &ratios, scaled);
      for (gsize i = 0; i < n; i++)
        if (isnan (scaled[i]))
          g_assert_true (hot[i]);
      for (int k = 0; k < planted; k++)
        {
          const int *pair = pairs + 4 * k;
          gsize a = (gsize) pair[1] * w + pair[0], b = (gsize) pair[3] * w + pair[2];
          float ring = -INFINITY;
          for (int j = 0; j < 2; j++)
            for (int dy = -1; dy <= 1; dy++)
              for (int dx = -1; dx <= 1; dx++)
                {
                  gsize i = (gsize) (pair[2 * j + 1] + dy) * w + pair[2 * j] + dx;
                  if (i != a && i != b)
                    ring = MAX (ring, img[i]);
                }
          if (ring < sky + 9.0 && MIN (img[a], img[b]) > sky + 90.0)
            {
              plain++;
              g_assert_true (isnan (scaled[a]) && isnan (scaled[b]));
            }
        }
      g_test_message ("FWHM %.2f: %" G_GSIZE_FORMAT " pixels of %d pairs blanked, %d pairs "
                      "plainly in the sky", fwhm, count, planted, plain);
    }
}

/* Whether the pixel at I (of an image W wide) is a plain track pixel:
 * on the track, 100σ or more over the sky, with a line through it (one of
 * the 4) whose two neighbours are off the track and within 3σ of the sky. */
static gboolean
plain_track_pixel (const float *img, const guint8 *track, int w, gsize i, double sky,
                   double sigma)
{
  static const int lines[4][2] = { { 1, 0 }, { 0, 1 }, { 1, 1 }, { 1, -1 } };
  if (!track[i] || img[i] < sky + 100.0 * sigma)
    return FALSE;
  for (int k = 0; k < 4; k++)
    {
      gssize step = (gssize) lines[k][1] * w + lines[k][0];
      gsize a = i + step, b = i - step;
      if (!track[a] && !track[b] && img[a] < sky + 3.0 * sigma && img[b] < sky + 3.0 * sigma)
        return TRUE;
    }
  return FALSE;
}

/* Whether the pixel at I (of an image W wide) is a plain pixel of a track
 * two pixels wide: on the track, 100σ or more over the sky, with a partner
 * beside it along its row or column that is too, and the two pixels beyond
 * the pair on that line off the track and within 3σ of the sky. */
static gboolean
plain_wide_track_pixel (const float *img, const guint8 *track, int w, gsize i, double sky,
                        double sigma)
{
  if (!track[i] || img[i] < sky + 100.0 * sigma)
    return FALSE;
  for (int k = 0; k < 2; k++)
    for (int sign = -1; sign <= 1; sign += 2)
      {
        gssize step = sign * (k == 0 ? 1 : (gssize) w);
        gsize partner = i + step, before = i - step, beyond = i + 2 * step;
        if (track[partner] && img[partner] >= sky + 100.0 * sigma && !track[before]
            && !track[beyond] && img[before] < sky + 3.0 * sigma
            && img[beyond] < sky + 3.0 * sigma)
          return TRUE;
      }
  return FALSE;
}

/* Plants cosmic-ray tracks, 3 to 12 long at any angle, apart in a blurred
 * star field of FWHM in [FWHM_LO, FWHM_HI): WIDE ones two pixels wide (each
 * cell with its neighbour below, or beside it for a steep track). Nothing
 * but their pixels may be blanked, and every plain track pixel (PLAIN)
 * chained as the rule asks must be: one pixel wide, to two more (two of its
 * neighbours plain, or one and a plain neighbour of that one); two wide, to
 * three of its neighbours. */
static void
check_planted_tracks (gboolean wide, double fwhm_lo, double fwhm_hi,
                      gboolean (*plain_pixel) (const float *, const guint8 *, int, gsize, double,
                                               double))
{
  gsize expected_in_all = 0;   /* a track by a bright star may have no plain pixel */
  for (int trial = 0; trial < 4; trial++)
    {
      int w = g_test_rand_int_range (100, 200), h = g_test_rand_int_range (100, 200);
      gsize n = (gsize) w * h;
      double fwhm = g_test_rand_double_range (fwhm_lo, fwhm_hi);
      g_autofree float *img = blurred_star_field (w, h, fwhm, 60);
      double sky = ss_median (img, n);
      g_autofree guint8 *track = g_new0 (guint8, n);
      g_autofree guint8 *near = g_new0 (guint8, n);   /* within 3 px of a track */
      int planted = g_test_rand_int_range (2, 8);
      for (int k = 0; k < planted;)
        {
          int length = g_test_rand_int_range (3, 13);
          double angle = g_test_rand_double_range (0, G_PI);
          double x0 = g_test_rand_double_range (16, w - 16), y0 = g_test_rand_double_range (16, h - 16);
          gboolean steep = fabs (sin (angle)) > fabs (cos (angle));
          gsize cells[128];
          int count = 0;
          gboolean apart = TRUE;
          for (int u = 0; u < 4 * length; u++)
            {
              double t = u * (length - 1) / (4.0 * length - 1);
              int x = (int) lround (x0 + t * cos (angle)), y = (int) lround (y0 + t * sin (angle));
              for (int part = 0; part <= (wide ? 1 : 0); part++)
                {
                  gsize i = (gsize) (y + (part && !steep)) * w + x + (part && steep);
                  gboolean seen = FALSE;
                  for (int c = 0; c < count; c++)
                    seen = seen || cells[c] == i;
                  if (!seen)
                    {
                      cells[count++] = i;
                      apart = apart && !near[i];
                    }
                }
            }
          if (!apart)
            continue;
          double height = 3.0 * pow (10.0, g_test_rand_double_range (2.5, 4));
          for (int c = 0; c < count; c++)
            {
              track[cells[c]] = 1;
              img[cells[c]] += (float) (height * g_test_rand_double_range (0.5, 1.5));
              int cx = (int) (cells[c] % w), cy = (int) (cells[c] / w);
              for (int dy = -3; dy <= 3; dy++)
                for (int dx = -3; dx <= 3; dx++)
                  near[(gsize) (cy + dy) * w + cx + dx] = 1;
            }
          k++;
        }
      double noise = ss_noise_estimate (img, w, h);
      g_autofree float *scaled = g_memdup2 (img, n * sizeof (float));
      SsHotRatios ratios = gaussian_psf_ratios (fwhm);
      gsize count = ss_hot_pixels_blank (img, w, h, sky, noise, &ratios, scaled);
      gsize blanked = 0, on_tracks = 0, expected = 0;
      g_autofree guint8 *plain = g_new0 (guint8, n);
      for (gsize i = 0; i < n; i++)
        {
          on_tracks += track[i];
          plain[i] = plain_pixel (img, track, w, i, sky, noise);
          if (isnan (scaled[i]))
            {
              g_assert_true (track[i]);
              blanked++;
            }
        }
      g_assert_cmpuint (count, ==, blanked);
      for (gsize i = 0; i < n; i++)
        {
          if (!plain[i])
            continue;
          int chained = 0, beyond = 0;
          int x = (int) (i % w), y = (int) (i / w);
          for (int dy = -1; dy <= 1; dy++)
            for (int dx = -1; dx <= 1; dx++)
              {
                gsize q = (gsize) (y + dy) * w + x + dx;
                if (!(dx || dy) || !plain[q])
                  continue;
                chained++;
                for (int ey = -1; ey <= 1; ey++)
                  for (int ex = -1; ex <= 1; ex++)
                    {
                      gsize r = (gsize) (y + dy + ey) * w + x + dx + ex;
                      beyond += r != i && r != q && plain[r];
                    }
              }
          if (wide ? chained >= 3 : chained >= 2 || beyond > 0)
            {
              expected++;
              g_assert_true (isnan (scaled[i]));
            }
        }
      g_test_message ("FWHM %.2f: %d tracks of %" G_GSIZE_FORMAT " pixels, %" G_GSIZE_FORMAT
                      " blanked, %" G_GSIZE_FORMAT " plain and chained", fwhm, planted,
                      on_tracks, blanked, expected);
      expected_in_all += expected;
    }
  g_assert_cmpuint (expected_in_all, >, 0);
}

/* Tracks one pixel wide. The rule's bound for a plain pixel: the margin
 * times a line ratio squared (at most 2 × 2.43², the FWHM-2.5 Gaussian's
 * diagonal, or 12) times the neighbours' height over the line's level (3σ
 * over the sky, which is within a few σ of the data's first percentile),
 * plus 10σ: well under 100σ. Before the line rule, only a track's pixels
 * that happened to stand a peak ratio above all 8 neighbours were found. */
static void
test_hot_tracks (void)
{
  check_planted_tracks (FALSE, 2.5, 4.0, plain_track_pixel);
}

/* Tracks two pixels wide. The rule's bound for a plain pixel, judged along
 * its row or column with its partner: the margin times the wide ratio
 * squared (2 × 2.52², a Gaussian's of FWHM 3, or 13) times 3σ, plus 10σ:
 * 48σ, and under the plain pixels' 100σ over the FWHM drawn (checked
 * below); such a pixel is found with three plain neighbours. Growth from
 * the hits may take more of a track, never a pixel off it. Before the pair's line rule and growth, 120 of 559 such track pixels
 * were found on a 256² field (Gaussian FWHM 3, 40 tracks; QUALITY.md). */
static void
test_hot_wide_tracks (void)
{
  for (double fwhm = 3.0; fwhm <= 4.0; fwhm += 0.5)
    {
      SsHotRatios r = gaussian_psf_ratios (fwhm);
      g_assert_cmpfloat (SS_HOT_MARGIN * r.wide * r.wide * 3.0 + SS_HOT_SIGMAS, <, 100.0);
    }
  check_planted_tracks (TRUE, 3.0, 4.0, plain_wide_track_pixel);
}

/* The peak ratio is the PSF's peak's, wherever its file puts it: a kernel
 * rolled off its centre pixel gives the same ratio (its centre pixel's, a
 * wing's under 1, made every star's core hot), and never under 1. */
static void
test_hot_pixels_peak_anywhere (void)
{
  const int side = 33;
  SsPsfSpec spec = { .kind = SS_PSF_GAUSSIAN, .fwhm = g_test_rand_double_range (1.5, 5.0) };
  g_autoptr (SsImage) kernel = ss_psf_render (&spec, side, side, NULL);
  g_assert_nonnull (kernel);
  SsHotRatios centred = ss_hot_pixels_kernel_ratios (kernel->data, side, side);
  int sx = g_test_rand_int_range (1, side), sy = g_test_rand_int_range (1, side);
  g_autofree float *rolled = g_new (float, side * side);
  for (int y = 0; y < side; y++)
    for (int x = 0; x < side; x++)
      rolled[((y + sy) % side) * side + (x + sx) % side] = kernel->data[y * side + x];
  SsHotRatios moved = ss_hot_pixels_kernel_ratios (rolled, side, side);
  g_assert_cmpfloat (moved.peak, ==, centred.peak);
  g_assert_cmpfloat (moved.line, ==, centred.line);
  g_assert_cmpfloat (moved.wide, ==, centred.wide);
  g_assert_cmpfloat (moved.wide_diagonal, ==, centred.wide_diagonal);
  /* The wide ratios against the kernel's own pixels about its peak (the
   * kernel wraps around), read directly. */
  int peak = 0;
  for (int i = 1; i < side * side; i++)
    peak = kernel->data[i] > kernel->data[peak] ? i : peak;
#define K(dx, dy) \
  ((double) kernel->data[((peak / side + (dy) + side) % side) * side + (peak % side + (dx) + side) % side])
  double row = MAX (K (1, 0) / K (2, 0), K (-1, 0) / K (-2, 0));
  double column = MAX (K (0, 1) / K (0, 2), K (0, -1) / K (0, -2));
  g_assert_cmpfloat_with_epsilon (centred.wide, MAX (row, column), 1e-6 * centred.wide);
  g_assert_cmpfloat (centred.wide_diagonal, >=, K (1, 1) / K (2, 2) * (1 - 1e-6));
#undef K
  g_assert_cmpfloat (centred.peak, >, 1.0);
  /* A round blur's diagonal neighbours are its dimmest around the centre. */
  g_assert_cmpfloat (centred.line, >, centred.peak);
  const float flat[9] = { 1, 1, 1, 1, 1, 1, 1, 1, 1 };
  g_assert_cmpfloat (ss_hot_pixels_kernel_ratios (flat, 3, 3).peak, ==, 1.0);
  g_assert_cmpfloat (ss_hot_pixels_kernel_ratios (flat, 3, 3).line, ==, 1.0);
  /* Too small to have a pixel beyond the centre's neighbour: no wide rule. */
  g_assert_true (isinf (ss_hot_pixels_kernel_ratios (flat, 3, 3).wide));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/saturation/header-cards", test_header_cards);
  g_test_add_func ("/saturation/plateau-where-clipped", test_plateau_where_clipped);
  g_test_add_func ("/saturation/plateau-needs-three-touching", test_plateau_needs_three_touching);
  g_test_add_func ("/saturation/resolve-rules", test_resolve_rules);
  g_test_add_func ("/saturation/blank-exactly-the-clipped", test_blank_exactly_the_clipped);
  g_test_add_func ("/cold-pixels/found", test_cold_pixels_found);
  g_test_add_func ("/cold-pixels/none-without", test_cold_pixels_none_without);
  g_test_add_func ("/hot-pixels/found", test_hot_pixels);
  g_test_add_func ("/hot-pixels/peak-anywhere", test_hot_pixels_peak_anywhere);
  g_test_add_func ("/hot-pixels/pairs", test_hot_pairs);
  g_test_add_func ("/hot-pixels/tracks", test_hot_tracks);
  g_test_add_func ("/hot-pixels/wide-tracks", test_hot_wide_tracks);
  return g_test_run ();
}
