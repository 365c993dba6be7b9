/* test-engine.c: PSFs, the circulant operator, simulation and scaling,
 * each against an independent oracle (direct convolution, sorting, sums). */
#include "ss-config.h"
#include "test-common.h"
#include "test-opens.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void
test_psf_parse_round_trip (void)
{
  const char *specs[] = { "box:5", "box2d:3", "gaussian:2.5", "moffat:3,2.5", "none", "file:p.fits" };
  for (unsigned i = 0; i < G_N_ELEMENTS (specs); i++)
    {
      SsPsfSpec spec;
      g_autoptr (GError) error = NULL;
      g_assert_true (ss_psf_spec_parse (specs[i], &spec, &error));
      g_assert_no_error (error);
      g_autofree char *text = ss_psf_spec_to_string (&spec);
      g_assert_cmpstr (text, ==, specs[i]);
      ss_psf_spec_clear (&spec);
    }
  const char *bad[] = { "box", "box:0", "box:-3", "gaussian:x", "moffat:3", "blur:4", "" };
  for (unsigned i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      SsPsfSpec spec;
      g_autoptr (GError) error = NULL;
      g_assert_false (ss_psf_spec_parse (bad[i], &spec, &error));
      g_assert_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT);
    }
}

/* Sum 1, and centred: the wrapped first moments vanish; second moments match
 * the profile's closed form (Gaussian: sigma² = (FWHM/2.3548)² per axis). */
static void
test_psf_normalised_and_centred (void)
{
  g_autoptr (GRand) rng = test_rng ();
  int w = 64 + g_rand_int_range (rng, 0, 17), h = 48 + g_rand_int_range (rng, 0, 17);
  double fwhm = g_rand_double_range (rng, 2.0, 5.0);
  g_autofree char *gauss = g_strdup_printf ("gaussian:%.4f", fwhm);
  const char *specs[] = { "box:5", "box2d:7", "moffat:3,3.5", gauss };
  for (unsigned s = 0; s < G_N_ELEMENTS (specs); s++)
    {
      SsPsfSpec spec;
      g_assert_true (ss_psf_spec_parse (specs[s], &spec, NULL));
      g_autoptr (GError) error = NULL;
      g_autoptr (SsImage) psf = ss_psf_render (&spec, w, h, &error);
      g_assert_no_error (error);
      double sum = 0, mx = 0, my = 0, mxx = 0;
      for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
          {
            double v = psf->data[(gsize) y * w + x];
            int dx = x < (w + 1) / 2 ? x : x - w, dy = y < (h + 1) / 2 ? y : y - h;
            g_assert_cmpfloat (v, >=, 0);
            sum += v;
            mx += v * dx;
            my += v * dy;
            mxx += v * dx * dx;
          }
      g_assert_cmpfloat_with_epsilon (sum, 1.0, 1e-5);
      g_assert_cmpfloat (fabs (mx), <, 1e-5);
      g_assert_cmpfloat (fabs (my), <, 1e-5);
      if (spec.kind == SS_PSF_GAUSSIAN)
        {
          double sigma = fwhm / 2.3548200450309493;
          g_assert_cmpfloat (fabs (mxx - sigma * sigma) / (sigma * sigma), <, 1e-2);
        }
      if (spec.kind == SS_PSF_BOX_ROW) /* five taps of 1/5 on row 0, offsets -2..2 */
        for (int dx = -2; dx <= 2; dx++)
          g_assert_cmpfloat_with_epsilon (psf->data[(dx + w) % w], 0.2, 1e-6);
      ss_psf_spec_clear (&spec);
    }
}

static void
test_psf_larger_than_image (void)
{
  SsPsfSpec spec;
  g_assert_true (ss_psf_spec_parse ("box:9", &spec, NULL));
  g_autoptr (GError) error = NULL;
  g_autoptr (SsImage) psf = ss_psf_render (&spec, 8, 8, &error);
  g_assert_null (psf);
  g_assert_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, "larger than the image"));
}

/* Model parameters outside the documented ranges are refused by the parser
 * (they used to overflow the support, or underflow sigma to a NaN PSF), with
 * a message naming the parameter; values inside, drawn at random over the
 * whole range (log-uniform), parse and round-trip, and the narrowest PSFs
 * render finite with sum 1 (tolerance 1e-5: float pixels). */
static void
test_psf_parse_ranges (void)
{
  g_autoptr (GRand) rng = test_rng ();
  const char *fixed_bad[] = { "gaussian:1e10", "gaussian:1e9", "moffat:1e9,2", "gaussian:1e-300",
                              "moffat:3,1e300", "moffat:3,1", "moffat:3,0.5", "gaussian:inf",
                              "gaussian:nan", "moffat:nan,2", "box:10001", "box2d:99999999999",
                              "gaussian:0.0999" };
  const char *words[] = { "FWHM", "FWHM", "FWHM", "FWHM", "beta", "beta", "beta", "FWHM", "FWHM",
                          "FWHM", "L ", "L ", "FWHM" };
  for (unsigned i = 0; i < G_N_ELEMENTS (fixed_bad); i++)
    {
      SsPsfSpec spec;
      g_autoptr (GError) error = NULL;
      g_assert_false (ss_psf_spec_parse (fixed_bad[i], &spec, &error));
      g_assert_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT);
      g_test_message ("%s: %s", fixed_bad[i], error->message);
      g_assert_nonnull (strstr (error->message, words[i]));
      ss_psf_spec_clear (&spec);
    }
  for (int trial = 0; trial < 50; trial++)
    {
      char a[G_ASCII_DTOSTR_BUF_SIZE], b[G_ASCII_DTOSTR_BUF_SIZE];
      double fwhm = SS_PSF_MIN_FWHM * pow (SS_PSF_MAX_FWHM / SS_PSF_MIN_FWHM, g_rand_double (rng));
      double beta = SS_PSF_MIN_BETA + (SS_PSF_MAX_BETA - SS_PSF_MIN_BETA) * (1.0 - g_rand_double (rng));
      double too_wide = SS_PSF_MAX_FWHM * pow (10.0, g_rand_double_range (rng, 1e-3, 300));
      double too_narrow = SS_PSF_MIN_FWHM * pow (10.0, -g_rand_double_range (rng, 1e-3, 300));
      double flat = SS_PSF_MIN_BETA * (1.0 - g_rand_double (rng));   /* (0, 1] */
      g_autofree char *good = g_strdup_printf ("moffat:%s,%s", g_ascii_dtostr (a, sizeof a, fwhm),
                                               g_ascii_dtostr (b, sizeof b, beta));
      SsPsfSpec spec;
      g_autoptr (GError) error = NULL;
      g_assert_true (ss_psf_spec_parse (good, &spec, &error));
      g_assert_no_error (error);
      g_assert_cmpfloat (spec.fwhm, ==, fwhm);
      g_assert_cmpfloat (spec.beta, ==, beta);
      ss_psf_spec_clear (&spec);
      g_autofree char *box = g_strdup_printf ("box:%d", g_rand_int_range (rng, 1, SS_PSF_MAX_BOX + 1));
      g_assert_true (ss_psf_spec_parse (box, &spec, NULL));
      g_autofree char *box_bad = g_strdup_printf ("box2d:%d",
                                                  g_rand_int_range (rng, SS_PSF_MAX_BOX + 1, G_MAXINT));
      g_autofree char *wide = g_strdup_printf ("gaussian:%s", g_ascii_dtostr (a, sizeof a, too_wide));
      g_autofree char *narrow = g_strdup_printf ("moffat:%s,3",
                                                 g_ascii_dtostr (a, sizeof a, too_narrow));
      g_autofree char *unbounded = g_strdup_printf ("moffat:3,%s", g_ascii_dtostr (a, sizeof a, flat));
      const char *bad[] = { box_bad, wide, narrow, unbounded };
      for (unsigned i = 0; i < G_N_ELEMENTS (bad); i++)
        {
          g_autoptr (GError) refused = NULL;
          g_assert_false (ss_psf_spec_parse (bad[i], &spec, &refused));
          g_assert_error (refused, SS_ERROR, SS_ERROR_INVALID_ARGUMENT);
          ss_psf_spec_clear (&spec);
        }
    }
  /* The ends of the ranges: accepted; the narrowest render finite (no 0/0). */
  const char *edges[] = { "gaussian:0.1", "moffat:0.1,100", "moffat:0.1,1.0001", "box:1",
                          "gaussian:10000", "moffat:10000,100", "box2d:10000" };
  for (unsigned i = 0; i < G_N_ELEMENTS (edges); i++)
    {
      SsPsfSpec spec;
      g_autoptr (GError) error = NULL;
      g_assert_true (ss_psf_spec_parse (edges[i], &spec, &error));
      g_assert_no_error (error);
      g_autoptr (SsImage) psf = ss_psf_render (&spec, 32, 32, &error);
      if (i >= 4)
        {
          /* Too wide for 32×32: refused as before, with its size. */
          g_assert_null (psf);
          g_assert_nonnull (strstr (error->message, "larger than the image"));
          continue;
        }
      g_assert_no_error (error);
      double sum = 0;
      for (gsize k = 0; k < 32 * 32; k++)
        {
          g_assert_true (isfinite (psf->data[k]));
          sum += psf->data[k];
        }
      g_assert_cmpfloat_with_epsilon (sum, 1.0, 1e-5);
      ss_psf_spec_clear (&spec);
    }
}

/* ---- PSF files ------------------------------------------------------------ */

/* A SIZE×SIZE Gaussian stamp of SIGMA centred at (CX, CY) (column, row). */
static float *
gaussian_stamp (int size, double sigma, double cx, double cy)
{
  float *stamp = g_new (float, (gsize) size * size);
  for (int y = 0; y < size; y++)
    for (int x = 0; x < size; x++)
      stamp[(gsize) y * size + x] = (float) exp (-0.5 * ((x - cx) * (x - cx) + (y - cy) * (y - cy))
                                                 / (sigma * sigma));
  return stamp;
}

/* Writes STAMP to a fresh file in DIR; returns its path. */
static char *
write_psf_file (const char *dir, const float *stamp, int size)
{
  char *path = g_build_filename (dir, "psf.fits", NULL);
  test_write_fits_float (path, stamp, size, size, 1, NULL);
  return path;
}

static SsImage *
render_psf_file (const char *path, int width, int height, GError **error)
{
  SsPsfSpec spec = { .kind = SS_PSF_FILE, .path = (char *) path };
  return ss_psf_render (&spec, width, height, error);
}

/* A PSF file with NaN or infinite pixels is refused, the message naming the
 * file and how many pixels; it used to be used with the holes skipped. */
static void
test_psf_file_not_finite (void)
{
  g_autoptr (GRand) rng = test_rng ();
  g_autofree char *dir = test_scratch_dir ("sharpsky-psf-XXXXXX");
  int size = 2 * g_rand_int_range (rng, 4, 9) + 1;
  int c = size / 2;
  g_autofree float *stamp = gaussian_stamp (size, g_rand_double_range (rng, 0.8, 2.0), c, c);
  /* BAD distinct pixels, each NaN, +inf or -inf. */
  int bad = g_rand_int_range (rng, 1, 6);
  const float holes[] = { NAN, INFINITY, -INFINITY };
  for (int k = 0; k < bad;)
    {
      gsize i = (gsize) g_rand_int_range (rng, 0, size * size);
      if (!isfinite (stamp[i]))
        continue;
      stamp[i] = holes[g_rand_int_range (rng, 0, 3)];
      k++;
    }
  g_autofree char *path = write_psf_file (dir, stamp, size);
  g_autofree char *count = g_strdup_printf ("%d of its %d pixels", bad, size * size);
  g_autoptr (GError) error = NULL;
  g_autoptr (SsImage) psf = render_psf_file (path, 64, 64, &error);
  g_assert_null (psf);
  g_assert_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT);
  g_test_message ("%s", error->message);
  g_assert_nonnull (strstr (error->message, path));
  g_assert_nonnull (strstr (error->message, count));
  g_assert_nonnull (strstr (error->message, "not finite"));
  test_remove_tree (dir);
}

/* Negative wings of SHARE of the absolute sum: the pixels beyond 2 sigma
 * given random negative values whose total is SHARE/(1 - SHARE) of the
 * positives'. */
static float *
stamp_with_negative_wings (GRand *rng, int size, double sigma, double share)
{
  int c = size / 2;
  float *stamp = gaussian_stamp (size, sigma, c, c);
  gsize n = (gsize) size * size;
  g_autofree double *weight = g_new0 (double, n);
  double positive = 0, weights = 0;
  for (gsize i = 0; i < n; i++)
    {
      int dx = (int) (i % size) - c, dy = (int) (i / size) - c;
      if (hypot (dx, dy) > 2 * sigma && g_rand_boolean (rng))
        weights += weight[i] = g_rand_double_range (rng, 0.1, 1.0);
      else
        positive += stamp[i];
    }
  double negative = share / (1 - share) * positive;
  for (gsize i = 0; i < n; i++)
    if (weight[i] > 0)
      stamp[i] = (float) (-negative * weight[i] / weights);
  return stamp;
}

/* Reading PATH gives exactly one note, naming the file and holding WORD. */
static void
assert_one_psf_note (const char *path, const char *word)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (GPtrArray) notes = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (SsImage) read = ss_psf_read_file (path, notes, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (notes->len, ==, 1);
  const char *note = g_ptr_array_index (notes, 0);
  g_test_message ("%s", note);
  g_assert_nonnull (strstr (note, path));
  g_assert_nonnull (strstr (note, word));
}

/* Negative wings under 5% of the absolute sum (background-subtraction
 * noise) are set to 0, with a note naming the file; the rendered PSF is the
 * clipped stamp normalised (to 1e-6), non-negative. Over 5%: refused,
 * naming the file. They used to reach the solver, whose Richardson–Lucy
 * refused the blur naming the image. */
static void
test_psf_file_negative_wings (void)
{
  g_autoptr (GRand) rng = test_rng ();
  g_autofree char *dir = test_scratch_dir ("sharpsky-psf-XXXXXX");
  int size = 2 * g_rand_int_range (rng, 6, 11) + 1, w = 64, h = 48;
  double sigma = g_rand_double_range (rng, 1.0, 2.0);
  double share = g_rand_double_range (rng, 0.005, 0.045);
  g_autofree float *stamp = stamp_with_negative_wings (rng, size, sigma, share);
  g_autofree char *path = write_psf_file (dir, stamp, size);
  g_test_message ("%d×%d, sigma %.2f, negative share %.4f", size, size, sigma, share);

  assert_one_psf_note (path, "negative");
  g_autoptr (GError) error = NULL;

  g_autoptr (SsImage) psf = render_psf_file (path, w, h, &error);
  g_assert_no_error (error);
  double positive = 0;
  for (int i = 0; i < size * size; i++)
    positive += MAX (stamp[i], 0.0f);
  int c = size / 2;
  for (int y = 0; y < size; y++)
    for (int x = 0; x < size; x++)
      {
        float v = psf->data[(gsize) ((y - c + h) % h) * w + (x - c + w) % w];
        g_assert_cmpfloat (v, >=, 0.0f);
        g_assert_cmpfloat (fabs (v - MAX (stamp[y * size + x], 0.0f) / positive), <, 1e-6);
      }

  /* Beyond the threshold the negatives are structure, not noise. */
  double large = g_rand_double_range (rng, 0.06, 0.5);
  g_autofree float *signed_stamp = stamp_with_negative_wings (rng, size, sigma, large);
  g_autofree char *signed_path = write_psf_file (dir, signed_stamp, size);
  g_autoptr (SsImage) refused = render_psf_file (signed_path, w, h, &error);
  g_assert_null (refused);
  g_assert_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT);
  g_test_message ("share %.3f: %s", large, error->message);
  g_assert_nonnull (strstr (error->message, signed_path));
  g_assert_nonnull (strstr (error->message, "negative"));
  test_remove_tree (dir);
}

/* A PSF whose centroid is 1.5-3 px from the centre pixel gets a warning
 * naming the file and the offset's direction, and renders as it did (its
 * wrapped centroid at the offset, to 0.05 px); a centred one, odd or even
 * sized, gets no note. */
static void
test_psf_file_off_centre (void)
{
  g_autoptr (GRand) rng = test_rng ();
  g_autofree char *dir = test_scratch_dir ("sharpsky-psf-XXXXXX");
  int size = 2 * g_rand_int_range (rng, 8, 11) + 1, w = 64, h = 64, c = size / 2;
  double sigma = g_rand_double_range (rng, 0.8, 1.5);
  double r = g_rand_double_range (rng, 1.5, 3.0), t = g_rand_double_range (rng, 0, 2 * G_PI);
  double ox = r * cos (t), oy = r * sin (t);
  g_autofree float *stamp = gaussian_stamp (size, sigma, c + ox, c + oy);
  g_autofree char *path = write_psf_file (dir, stamp, size);
  g_test_message ("%d×%d, sigma %.2f, offset (%.2f, %.2f)", size, size, sigma, ox, oy);

  assert_one_psf_note (path, "centroid");
  g_autoptr (GError) error = NULL;

  g_autoptr (SsImage) psf = render_psf_file (path, w, h, &error);
  g_assert_no_error (error);
  double sum = 0, mx = 0, my = 0;
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++)
      {
        double v = psf->data[(gsize) y * w + x];
        sum += v;
        mx += v * (x < (w + 1) / 2 ? x : x - w);
        my += v * (y < (h + 1) / 2 ? y : y - h);
      }
  g_assert_cmpfloat_with_epsilon (sum, 1.0, 1e-5);
  g_assert_cmpfloat (fabs (mx - ox), <, 0.05);
  g_assert_cmpfloat (fabs (my - oy), <, 0.05);

  /* Centred: odd size on its middle pixel, even size between the middle
   * two (half a pixel from pixel size/2 on each axis, 0.71 px: no note). */
  for (int even = 0; even <= 1; even++)
    {
      int s = size + even;
      double centre = even ? s / 2 - 0.5 : s / 2;
      g_autofree float *centred = gaussian_stamp (s, sigma, centre + g_rand_double_range (rng, -0.1, 0.1),
                                                  centre + g_rand_double_range (rng, -0.1, 0.1));
      g_autofree char *centred_path = write_psf_file (dir, centred, s);
      g_autoptr (GPtrArray) none = g_ptr_array_new_with_free_func (g_free);
      g_autoptr (SsImage) ok = ss_psf_read_file (centred_path, none, &error);
      g_assert_no_error (error);
      g_assert_cmpuint (none->len, ==, 0);
    }
  test_remove_tree (dir);
}

/* ---- a PSF file loaded once ------------------------------------------------ */

static void
load_psf_spec (gpointer spec)
{
  g_autoptr (GError) error = NULL;
  g_assert_true (ss_psf_spec_load (spec, &error));
  g_assert_no_error (error);
}

/* What a solve does with a PSF: its margin, its blur at the padded size,
 * an operator (a copy of the spec in an acquisition), another size. */
typedef struct {
  const SsPsfSpec *spec;
  int w, h;
  int margin;
  SsImage *kernel, *other;
} PsfUses;

static void
use_psf_spec (gpointer data)
{
  PsfUses *u = data;
  g_autoptr (GError) error = NULL;
  u->margin = ss_boundary_margin_for_psf (u->spec, u->w, u->h, &error);
  g_assert_no_error (error);
  u->kernel = ss_psf_render (u->spec, u->w, u->h, &error);
  g_assert_no_error (error);
  SsAcquisition acq;
  ss_acquisition_init (&acq);
  ss_psf_spec_copy (u->spec, &acq.psf);
  g_autoptr (SsOperator) op = ss_operator_new (&acq, u->w, u->h, &error);
  g_assert_no_error (error);
  g_assert_nonnull (op);
  ss_acquisition_clear (&acq);
  u->other = ss_psf_render (u->spec, u->w + 3, u->h + 5, &error);
  g_assert_no_error (error);
}

static void
psf_uses_clear (PsfUses *u)
{
  g_clear_pointer (&u->kernel, ss_image_free);
  g_clear_pointer (&u->other, ss_image_free);
}

static void
assert_same_kernel (const SsImage *a, const SsImage *b)
{
  g_assert_nonnull (a);
  g_assert_nonnull (b);
  g_assert_cmpint (a->width, ==, b->width);
  g_assert_cmpint (a->height, ==, b->height);
  g_assert_cmpmem (a->data, ss_image_plane_size (a) * sizeof (float), b->data,
                   ss_image_plane_size (b) * sizeof (float));
}

/* ss_psf_spec_load reads a file PSF once, as one ss_psf_read_file does
 * (counted as opens of the file), and keeps its notes (the same as
 * ss_psf_read_file's: a negative corner zeroed, an off-centre centroid).
 * Then the margin, the blur, an operator and another size open it no more
 * and render bit for bit what the spec not loaded renders (reading the
 * file each time, as every render did); a second load is no read. Copies
 * share the reading: one outlives the original and the file. A missing,
 * damaged or refused file fails the load with a GError naming it, leaving
 * the spec not loaded; a spec whose path changed after loading reads its
 * new file. */
static void
test_psf_file_loaded_once (void)
{
  g_autoptr (GRand) rng = test_rng ();
  g_autofree char *dir = test_scratch_dir ("sharpsky-psf-XXXXXX");
  /* Odd or even: the centre pixel is size/2 either way (ss_psf_wrap), and
   * a loaded file's reach comes from its size (ss_psf_reach). */
  int size = 2 * g_rand_int_range (rng, 5, 9) + g_rand_int_range (rng, 0, 2), c = size / 2;
  int w = g_rand_int_range (rng, 40, 70), h = g_rand_int_range (rng, 40, 70);
  double sigma = g_rand_double_range (rng, 0.8, 1.5);
  double dx = g_rand_double_range (rng, 1.6, 2.5);
  g_autofree float *stamp = gaussian_stamp (size, sigma, c + dx, c);
  stamp[0] = -1e-3f;
  g_autofree char *path = write_psf_file (dir, stamp, size);
  g_test_message ("%d×%d stamp, sigma %.2f, %.2f px right; %d×%d image", size, size, sigma, dx,
                  w, h);

  g_autoptr (GError) error = NULL;
  g_autofree char *text = g_strdup_printf ("file:%s", path);
  SsPsfSpec spec;
  g_assert_true (ss_psf_spec_parse (text, &spec, &error));
  g_assert_false (ss_psf_spec_is_loaded (&spec));
  g_assert_null (ss_psf_spec_get_notes (&spec)[0]);

  /* Before: what rendering the file as it is gives. */
  PsfUses before = { &spec, w, h, 0, NULL, NULL };
  int opens_before = test_count_opens (path, use_psf_spec, &before);
  int one_reading = test_count_opens (path, test_read_psf_file, path);
  g_test_message ("one reading: %d opens; the uses before loading: %d", one_reading,
                  opens_before);
  g_assert_cmpint (one_reading, >, 0);
  g_assert_cmpint (opens_before, >, one_reading);
  g_autoptr (GPtrArray) expected = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (SsImage) read = ss_psf_read_file (path, expected, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (expected->len, ==, 2);

  g_assert_cmpint (test_count_opens (path, load_psf_spec, &spec), ==, one_reading);
  g_assert_true (ss_psf_spec_is_loaded (&spec));
  const char *const *notes = ss_psf_spec_get_notes (&spec);
  g_assert_cmpuint (g_strv_length ((char **) notes), ==, expected->len);
  for (guint i = 0; i < expected->len; i++)
    g_assert_cmpstr (notes[i], ==, g_ptr_array_index (expected, i));
  g_assert_cmpint (test_count_opens (path, load_psf_spec, &spec), ==, 0);

  PsfUses after = { &spec, w, h, 0, NULL, NULL };
  g_assert_cmpint (test_count_opens (path, use_psf_spec, &after), ==, 0);
  g_assert_cmpint (after.margin, ==, before.margin);
  assert_same_kernel (after.kernel, before.kernel);
  assert_same_kernel (after.other, before.other);
  g_autofree char *round = ss_psf_spec_to_string (&spec);
  g_assert_cmpstr (round, ==, text);

  /* A copy shares the reading; it outlives the original and the file. */
  SsPsfSpec copy;
  ss_psf_spec_copy (&spec, &copy);
  ss_psf_spec_clear (&spec);
  g_assert_cmpint (g_unlink (path), ==, 0);
  g_assert_true (ss_psf_spec_is_loaded (&copy));
  g_assert_cmpstr (ss_psf_spec_get_notes (&copy)[1], ==, g_ptr_array_index (expected, 1));
  g_autoptr (SsImage) from_copy = ss_psf_render (&copy, w, h, &error);
  g_assert_no_error (error);
  assert_same_kernel (from_copy, before.kernel);

  /* The path changed after loading: the reading is stale, the new file is
   * read (here: missing). */
  g_free (copy.path);
  copy.path = g_build_filename (dir, "other.fits", NULL);
  g_assert_false (ss_psf_spec_is_loaded (&copy));
  g_assert_null (ss_psf_spec_get_notes (&copy)[0]);
  g_autoptr (SsImage) stale = ss_psf_render (&copy, w, h, &error);
  g_assert_null (stale);
  g_assert_nonnull (error);
  g_assert_nonnull (strstr (error->message, copy.path));
  g_clear_error (&error);

  /* Missing, damaged, refused (a NaN): a GError naming the file, the spec
   * not loaded. */
  g_autofree char *damaged = g_build_filename (dir, "damaged.fits", NULL);
  g_assert_true (g_file_set_contents (damaged, "SIMPLE  =                    T / not much more",
                                      -1, NULL));
  g_autofree float *holed = gaussian_stamp (size, sigma, c, c);
  holed[c * size + c + 1] = NAN;
  g_autofree char *nan_dir = g_build_filename (dir, "nan", NULL);
  g_assert_cmpint (g_mkdir (nan_dir, 0700), ==, 0);
  g_autofree char *refused = write_psf_file (nan_dir, holed, size);
  const char *bad[] = { copy.path, damaged, refused };
  for (gsize i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_autofree char *bad_text = g_strdup_printf ("file:%s", bad[i]);
      SsPsfSpec broken;
      g_assert_true (ss_psf_spec_parse (bad_text, &broken, NULL));
      g_assert_false (ss_psf_spec_load (&broken, &error));
      g_assert_nonnull (error);
      g_test_message ("%s", error->message);
      g_assert_nonnull (strstr (error->message, bad[i]));
      g_clear_error (&error);
      g_assert_false (ss_psf_spec_is_loaded (&broken));
      g_assert_null (broken.file);
      g_assert_null (ss_psf_render (&broken, w, h, &error));
      g_assert_nonnull (error);
      g_clear_error (&error);
      ss_psf_spec_clear (&broken);
    }
  /* A model PSF has nothing to load. */
  SsPsfSpec model;
  g_assert_true (ss_psf_spec_parse ("gaussian:2", &model, NULL));
  g_assert_true (ss_psf_spec_load (&model, &error));
  g_assert_no_error (error);
  g_assert_false (ss_psf_spec_is_loaded (&model));
  g_assert_null (model.file);
  ss_psf_spec_clear (&model);

  ss_psf_spec_clear (&copy);
  psf_uses_clear (&before);
  psf_uses_clear (&after);
  test_remove_tree (dir);
}

/* C x from the FFT equals the circular convolution done directly. */
static void
test_operator_matches_direct_convolution (void)
{
  g_autoptr (GRand) rng = test_rng ();
  int w = g_rand_int_range (rng, 9, 40), h = g_rand_int_range (rng, 9, 40);
  gsize n = (gsize) w * h;
  SsAcquisition acq;
  ss_acquisition_init (&acq);
  g_assert_true (ss_psf_spec_parse ("gaussian:2.2", &acq.psf, NULL));
  g_autoptr (GError) error = NULL;
  g_autoptr (SsOperator) op = ss_operator_new (&acq, w, h, &error);
  g_assert_no_error (error);
  g_autoptr (SsImage) k = ss_psf_render (&acq.psf, w, h, NULL);
  g_autofree float *x = test_sparse_image (rng, w, h, 0.3);
  g_autofree float *fast = g_new (float, n);
  g_autofree float *slow = g_new0 (float, n);
  g_assert_true (ss_operator_apply (op, x, fast, &error));
  for (int y = 0; y < h; y++)
    for (int xx = 0; xx < w; xx++)
      {
        double s = 0;
        for (int ky = 0; ky < h; ky++)
          for (int kx = 0; kx < w; kx++)
            s += k->data[(gsize) ky * w + kx] * x[(gsize) ((y - ky + h) % h) * w + (xx - kx + w) % w];
        slow[(gsize) y * w + xx] = (float) s;
      }
  g_assert_cmpfloat (test_rel_diff (fast, slow, n), <, 1e-5);
  ss_acquisition_clear (&acq);
}

/* <P C x, y> = <x, Cᵀ Pᵀ y> with sensing and sampling on. */
static void
test_operator_adjoint (void)
{
  g_autoptr (GRand) rng = test_rng ();
  int w = g_rand_int_range (rng, 16, 70), h = g_rand_int_range (rng, 16, 70);
  gsize n = (gsize) w * h;
  SsAcquisition acq;
  ss_acquisition_init (&acq);
  g_assert_true (ss_psf_spec_parse ("box:5", &acq.psf, NULL));
  acq.ratio = g_rand_double_range (rng, 0.2, 0.9);
  acq.seed = g_rand_int (rng);
  g_autoptr (GError) error = NULL;
  g_autoptr (SsOperator) op = ss_operator_new (&acq, w, h, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (op->m, ==, (gsize) llround (acq.ratio * n));
  gsize observed = 0;
  for (gsize i = 0; i < n; i++)
    observed += op->mask[i];
  g_assert_cmpuint (observed, ==, op->m);

  g_autofree float *x = test_sparse_image (rng, w, h, 1.0);
  g_autofree float *y = test_sparse_image (rng, w, h, 1.0);
  g_autofree float *ax = g_new (float, n);
  g_autofree float *aty = g_new (float, n);
  g_assert_true (ss_operator_apply (op, x, ax, NULL));
  g_assert_true (ss_operator_apply_adjoint (op, y, aty, NULL));
  double lhs = test_dot (ax, y, n), rhs = test_dot (x, aty, n);
  g_assert_cmpfloat (fabs (lhs - rhs) / fabs (lhs), <, 1e-5);

  /* ||C||² = max|c^|²: the power method on CᵀC (no mask) approaches it from below. */
  g_autoptr (SsOperator) full = ss_operator_new_from_parts (w, h, op->chat, NULL, NULL);
  double estimate = 0;
  for (int it = 0; it < 300; it++)
    {
      g_assert_true (ss_operator_apply (full, x, ax, NULL));
      g_assert_true (ss_operator_apply_adjoint (full, ax, aty, NULL));
      estimate = sqrt (test_dot (aty, aty, n) / test_dot (x, x, n));
      double norm = sqrt (test_dot (aty, aty, n));
      for (gsize i = 0; i < n; i++)
        x[i] = (float) (aty[i] / norm);
    }
  g_assert_cmpfloat (estimate, <=, full->lipschitz * (1 + 1e-4));
  g_assert_cmpfloat (estimate, >=, full->lipschitz * 0.9);
  ss_acquisition_clear (&acq);
}

/* Same seed, same operator; a different seed, a different mask. Noise has the
 * requested standard deviation. */
static void
test_simulation_is_seeded (void)
{
  guint32 seed = test_seed ();
  int w = 64, h = 48;
  gsize n = (gsize) w * h;
  SsAcquisition acq;
  ss_acquisition_init (&acq);
  g_assert_true (ss_psf_spec_parse ("box:3", &acq.psf, NULL));
  acq.ratio = 0.5;
  acq.seed = seed;
  acq.noise = 0.05;
  g_autoptr (SsOperator) a = ss_operator_new (&acq, w, h, NULL);
  g_autoptr (SsOperator) b = ss_operator_new (&acq, w, h, NULL);
  g_assert_cmpmem (a->mask, n, b->mask, n);
  g_assert_cmpmem (a->chat, ss_fft_spectrum_floats (w, h) * 4, b->chat, ss_fft_spectrum_floats (w, h) * 4);
  acq.seed = seed + 12345;
  g_autoptr (SsOperator) c = ss_operator_new (&acq, w, h, NULL);
  g_assert_true (memcmp (a->mask, c->mask, n) != 0);

  g_autofree float *zero = g_new0 (float, n);
  acq.seed = seed;
  g_autofree float *y = ss_simulate (a, &acq, zero, NULL);
  double sum2 = 0;
  for (gsize i = 0; i < n; i++)
    {
      if (!a->mask[i])
        g_assert_cmpfloat (y[i], ==, 0.0f);
      sum2 += (double) y[i] * y[i];
    }
  double sigma = sqrt (sum2 / a->m);
  /* m = 1536 samples: the estimate's relative spread is about 1/sqrt(2m) = 1.8%. */
  g_assert_cmpfloat (fabs (sigma - 0.05) / 0.05, <, 0.1);
  ss_acquisition_clear (&acq);
}

static int
compare_floats (const void *a, const void *b)
{
  float x = *(const float *) a, y = *(const float *) b;
  return (x > y) - (x < y);
}

static void
test_median_and_scaling (void)
{
  g_autoptr (GRand) rng = test_rng ();
  for (int round = 0; round < 20; round++)
    {
      gsize n = (gsize) g_rand_int_range (rng, 1, 2000);
      g_autofree float *v = g_new (float, n);
      g_autofree float *sorted = g_new (float, n);
      gsize finite = 0;
      for (gsize i = 0; i < n; i++)
        {
          v[i] = g_rand_double (rng) < 0.1 ? NAN : (float) g_rand_double_range (rng, -5, 5);
          if (!isnan (v[i]))
            sorted[finite++] = v[i];
        }
      qsort (sorted, finite, sizeof (float), compare_floats);
      double expected = finite == 0 ? NAN
                        : finite % 2 ? sorted[finite / 2]
                                     : 0.5 * (sorted[finite / 2 - 1] + sorted[finite / 2]);
      double got = ss_median (v, n);
      if (finite == 0)
        g_assert_true (isnan (got));
      else
        g_assert_cmpfloat_with_epsilon (got, expected, 1e-6);
    }
  /* Scaling: (x - sky)/scale then back is the identity; the maximum maps to 1. */
  gsize n = 1000;
  g_autofree float *data = g_new (float, n);
  for (gsize i = 0; i < n; i++)
    data[i] = (float) g_rand_double_range (rng, 100, 200);
  SsScaling scaling;
  g_assert_true (ss_scaling_estimate (data, n, SS_SKY_MEDIAN, 0, &scaling, NULL));
  g_autofree float *scaled = g_new (float, n);
  g_autofree float *back = g_new (float, n);
  ss_scaling_apply (&scaling, data, scaled, n, FALSE);
  ss_scaling_unapply (&scaling, scaled, back, n);
  float top = 0;
  for (gsize i = 0; i < n; i++)
    top = MAX (top, scaled[i]);
  g_assert_cmpfloat_with_epsilon (top, 1.0, 1e-6);
  g_assert_cmpfloat (test_rel_diff (back, data, n), <, 1e-6);
  /* A sky given far below the data (--sky -1e30) would leave them flat once
   * scaled: refused past SS_SKY_MAX_DEPTH ranges, taken within it. */
  double low = 200, high = 100;
  for (gsize i = 0; i < n; i++)
    {
      low = MIN (low, data[i]);
      high = MAX (high, data[i]);
    }
  double range = high - low;
  g_assert_true (ss_scaling_estimate (data, n, SS_SKY_VALUE, high - 0.5 * SS_SKY_MAX_DEPTH * range,
                                      &scaling, NULL));
  g_autoptr (GError) deep = NULL;
  g_assert_false (ss_scaling_estimate (data, n, SS_SKY_VALUE,
                                       high - 2 * SS_SKY_MAX_DEPTH * range, &scaling, &deep));
  g_assert_error (deep, SS_ERROR, SS_ERROR_INVALID_ARGUMENT);
  g_assert_false (ss_scaling_estimate (data, n, SS_SKY_VALUE, -1e30, &scaling, NULL));
  /* No finite pixel, or nothing above the sky: clear errors. */
  for (gsize i = 0; i < n; i++)
    data[i] = NAN;
  g_autoptr (GError) error = NULL;
  g_assert_false (ss_scaling_estimate (data, n, SS_SKY_MEDIAN, 0, &scaling, &error));
  g_assert_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT);
}

/* The clipped median ignores a bright minority that drags the plain median. */
static void
test_clipped_sky (void)
{
  g_autoptr (GRand) rng = test_rng ();
  gsize n = 20000;
  g_autofree float *data = g_new (float, n);
  for (gsize i = 0; i < n; i++)
    {
      double u1 = MAX (g_rand_double (rng), 1e-12), u2 = g_rand_double (rng);
      data[i] = (float) (10.0 + sqrt (-2 * log (u1)) * cos (2 * G_PI * u2));
      if (g_rand_double (rng) < 0.3) /* stars: 30% of pixels well above the sky */
        data[i] += (float) g_rand_double_range (rng, 5, 500);
    }
  SsScaling plain, clipped;
  g_assert_true (ss_scaling_estimate (data, n, SS_SKY_MEDIAN, 0, &plain, NULL));
  g_assert_true (ss_scaling_estimate (data, n, SS_SKY_CLIPPED_MEDIAN, 0, &clipped, NULL));
  g_assert_cmpfloat (fabs (clipped.sky - 10.0), <, fabs (plain.sky - 10.0));
  g_assert_cmpfloat (fabs (clipped.sky - 10.0), <, 0.6);
}

static void
test_acquisition_header_round_trip (void)
{
  SsAcquisition acq, back;
  ss_acquisition_init (&acq);
  g_assert_true (ss_psf_spec_parse ("moffat:3.5,2.5", &acq.psf, NULL));
  acq.ratio = 0.37;
  acq.seed = 4000000000u;
  acq.noise = 0.0125;
  g_autoptr (SsHeader) header = ss_header_new ();
  ss_acquisition_to_header (&acq, header);
  gboolean found = FALSE;
  g_autoptr (GError) error = NULL;
  g_assert_true (ss_acquisition_from_header (header, &back, &found, &error));
  g_assert_no_error (error);
  g_assert_true (found);
  g_assert_cmpint (back.psf.kind, ==, SS_PSF_MOFFAT);
  g_assert_cmpfloat (back.psf.beta, ==, 2.5);
  g_assert_cmpfloat (back.ratio, ==, 0.37);
  g_assert_cmpuint (back.seed, ==, acq.seed);
  g_assert_cmpfloat (back.noise, ==, 0.0125);
  g_assert_true (ss_acquisition_uses_sensing (&back));

  /* Cards that do not say what the writer writes are refused by name: read
   * silently, they gave another operator. */
  const char *bad[][2] = { { "SS_SENS", "weird" }, { "SS_SEED", "-3" }, { "SS_SEED", "1.5" },
                           { "SS_SEED", "1e20" } };
  for (gsize k = 0; k < G_N_ELEMENTS (bad); k++)
    {
      g_autoptr (SsHeader) edited = ss_header_copy (header);
      if (g_str_equal (bad[k][0], "SS_SENS"))
        ss_header_set_string (edited, bad[k][0], bad[k][1], NULL);
      else
        ss_header_set_double (edited, bad[k][0], g_ascii_strtod (bad[k][1], NULL), NULL);
      SsAcquisition refused;
      g_autoptr (GError) card_error = NULL;
      g_assert_false (ss_acquisition_from_header (edited, &refused, &found, &card_error));
      g_assert_error (card_error, SS_ERROR, SS_ERROR_FORMAT);
      g_assert_nonnull (strstr (card_error->message, bad[k][0]));
      ss_acquisition_clear (&refused);
    }

  /* A PSF file is recorded by its absolute path; an older, relative record
   * is the recording's directory's, not the current one's. */
  ss_acquisition_clear (&back);
  ss_psf_spec_clear (&acq.psf);
  g_assert_true (ss_psf_spec_parse ("file:some/psf.fits", &acq.psf, NULL));
  g_autoptr (SsHeader) file_header = ss_header_new ();
  ss_acquisition_to_header (&acq, file_header);
  g_autofree char *recorded = ss_header_get_string (file_header, "SS_PSF");
  g_autofree char *absolute = g_canonicalize_filename ("some/psf.fits", NULL);
  g_autofree char *expected = g_strdup_printf ("file:%s", absolute);
  g_assert_cmpstr (recorded, ==, expected);
  ss_header_set_string (file_header, "SS_PSF", "file:psf.fits", NULL);
  g_assert_true (ss_acquisition_from_header (file_header, &back, &found, &error));
  ss_acquisition_resolve_psf (&back, "/data/night1/measured.fits");
  g_assert_cmpstr (back.psf.path, ==, "/data/night1/psf.fits");
  ss_acquisition_clear (&acq);
  ss_acquisition_clear (&back);
}

/* A deferred operator (made for a GPU: kernel kept, no spectrum) gives
 * what an ordinary one does: the host scalars from its kernel, c^ made on
 * first use identical to FFTW's, the same solve; realised once under
 * concurrent use; and a kernel with negative values gives an ordinary one. */
static gpointer
realize_in_thread (gpointer data)
{
  return GINT_TO_POINTER (ss_operator_realize (data, NULL));
}

static void
test_operator_deferred (void)
{
  g_autoptr (GRand) rng = test_rng ();
  int w = g_rand_int_range (rng, 20, 70), h = g_rand_int_range (rng, 16, 60);
  gsize n = (gsize) w * h;
  g_autofree float *kernel = g_new (float, n);
  g_autofree float *observed = g_new (float, n);
  g_autofree float *x = g_new (float, n);
  for (gsize i = 0; i < n; i++)
    {
      kernel[i] = (float) g_rand_double (rng) / (float) n;
      observed[i] = g_rand_double (rng) < 0.2 ? NAN : (float) g_rand_double (rng);
      x[i] = (float) g_rand_double (rng);
    }
  g_autoptr (GError) error = NULL;
  g_autoptr (SsOperator) eager = ss_operator_new_from_kernel (kernel, observed, w, h, &error);
  g_autoptr (SsOperator) deferred = ss_operator_new_deferred (kernel, observed, w, h, &error);
  g_assert_no_error (error);
  g_assert_null (deferred->chat);
  g_assert_nonnull (deferred->kernel);
  g_assert_true (deferred->kernel_nonnegative);
  g_assert_cmpuint (deferred->m, ==, eager->m);
  g_assert_cmpmem (deferred->mask, n, eager->mask, n);
  g_assert_cmpfloat (fabs (deferred->lipschitz / eager->lipschitz - 1), <, 1e-5);
  g_assert_cmpfloat (fabs (ss_operator_dc (deferred) / eager->chat[0] - 1), <, 1e-5);
  g_assert_cmpfloat (fabs (ss_operator_column_norm (deferred) / ss_operator_column_norm (eager)
                           - 1), <, 1e-6);

  /* The DC term is the plain in-order sum to the bit, also where most rows
   * are 0 (a frame's kernel beyond the PSF's reach), and _take keeps the
   * kernel it is given. */
  g_autofree float *sparse = g_memdup2 (kernel, n * sizeof (float));
  for (int y = 0; y < h; y++)
    if (g_rand_double (rng) < 0.7)
      memset (sparse + (gsize) y * w, 0, (gsize) w * sizeof (float));
  sparse[0] = 0.5f;   /* at least one row holds something */
  double plain = 0;
  for (gsize i = 0; i < n; i++)
    plain += sparse[i];
  float *given = g_memdup2 (sparse, n * sizeof (float));
  g_autoptr (SsOperator) taken = ss_operator_new_deferred_take (given, NULL, w, h, &error);
  g_assert_no_error (error);
  g_assert_true (taken->kernel == given);
  g_assert_cmpfloat (ss_operator_dc (taken), ==, plain);
  g_assert_cmpfloat (taken->lipschitz, ==, plain * plain);
  /* With a negative value it is an ordinary operator, the kernel freed. */
  float *negative = g_memdup2 (sparse, n * sizeof (float));
  negative[1] = -1.0f;
  g_autoptr (SsOperator) ordinary = ss_operator_new_deferred_take (negative, NULL, w, h, &error);
  g_assert_no_error (error);
  g_assert_null (ordinary->kernel);
  g_assert_nonnull (ordinary->chat);
  /* By backend kind: made on the host for the CPU, deferred where a GPU
   * may solve (a build with CUDA), the kernel taken either way. */
  g_autoptr (SsOperator) on_cpu = ss_backend_kind_new_operator (
    SS_BACKEND_CPU, g_memdup2 (sparse, n * sizeof (float)), NULL, w, h, &error);
  g_assert_no_error (error);
  g_assert_null (on_cpu->kernel);
  g_assert_nonnull (on_cpu->chat);
  g_assert_cmpfloat (fabs (on_cpu->chat[0] / plain - 1), <, 1e-6);
  g_autoptr (SsOperator) on_auto = ss_backend_kind_new_operator (
    SS_BACKEND_AUTO, g_memdup2 (sparse, n * sizeof (float)), NULL, w, h, &error);
  g_assert_no_error (error);
  g_assert_true ((on_auto->kernel != NULL) == (gboolean) SHARPSKY_HAVE_CUDA);
  g_assert_cmpfloat (fabs (ss_operator_dc (on_auto) / plain - 1), <, 1e-6);

  /* A solve realises it: the same spectrum, the same answer. */
  g_autofree float *y = g_new (float, n);
  g_assert_true (ss_operator_apply (eager, x, y, &error));
  SsProblem a = { .op = eager, .y = y }, b = { .op = deferred, .y = y };
  SsSolveParams params = test_solve_params (SS_SOLVER_CPADMM, 1e-3, 20);
  SsSolveResult ra = { 0 }, rb = { 0 };
  g_assert_true (ss_cpu_solve (&a, &params, NULL, NULL, NULL, &ra, &error));
  g_assert_true (ss_cpu_solve (&b, &params, NULL, NULL, NULL, &rb, &error));
  g_assert_no_error (error);
  g_assert_nonnull (deferred->chat);
  gsize floats = 2 * (gsize) h * (w / 2 + 1);
  g_assert_cmpmem (deferred->chat, floats * sizeof (float), eager->chat, floats * sizeof (float));
  g_assert_cmpfloat (test_rel_diff (ra.x, rb.x, n), ==, 0.0);
  ss_solve_result_clear (&ra);
  ss_solve_result_clear (&rb);

  /* Four threads ask at once: one spectrum, every one sees it. */
  g_autoptr (SsOperator) shared = ss_operator_new_deferred (kernel, NULL, w, h, &error);
  GThread *threads[4];
  for (int t = 0; t < 4; t++)
    threads[t] = g_thread_new ("realize", realize_in_thread, shared);
  for (int t = 0; t < 4; t++)
    g_assert_true (GPOINTER_TO_INT (g_thread_join (threads[t])));
  g_assert_cmpmem (shared->chat, floats * sizeof (float), eager->chat, floats * sizeof (float));

  /* Batches compare deferred operators by their kernels. */
  g_autoptr (SsOperator) twin = ss_operator_new_deferred (kernel, observed, w, h, &error);
  g_autoptr (SsOperator) other = ss_operator_new_deferred (kernel, observed, w, h, &error);
  other->kernel[g_rand_int_range (rng, 0, (gint32) n)] *= 2.0f;
  SsProblem pair[2] = { { .op = twin, .y = y }, { .op = deferred, .y = y } };
  SsProblem twin_other[2] = { { .op = twin, .y = y }, { .op = other, .y = y } };
  g_assert_false (ss_problems_share_operator (pair, 2));   /* one realised, one not */
  pair[1].op = twin;
  g_assert_true (ss_problems_share_operator (pair, 2));
  g_assert_false (ss_problems_share_operator (twin_other, 2));

  /* Negative values: an ordinary operator, spectrum made at once. */
  kernel[0] = -kernel[1] - 1.0f;
  g_autoptr (SsOperator) sharpening = ss_operator_new_deferred (kernel, NULL, w, h, &error);
  g_assert_no_error (error);
  g_assert_nonnull (sharpening->chat);
  g_assert_null (sharpening->kernel);
  g_assert_false (sharpening->kernel_nonnegative);
}

/* A blur folded onto a smaller frame (ss_operator_blur_kernel_at) blurs
 * there as the original does in the larger one: an image that is zero
 * within the kernel's reach of the crop's edges gives the same blur, by
 * FFTW at both sizes, whether the kernel was kept (deferred) or comes back
 * from c^; and a kernel wider than the crop keeps its sum. */
static void
test_operator_blur_kernel_at (void)
{
  g_autoptr (GRand) rng = test_rng ();
  int w = g_rand_int_range (rng, 60, 90), h = g_rand_int_range (rng, 50, 80);
  int cw = g_rand_int_range (rng, 24, 40), ch = g_rand_int_range (rng, 20, 40);
  int reach = g_rand_int_range (rng, 2, 6);
  gsize n = (gsize) w * h, cn = (gsize) cw * ch;
  g_autofree float *kernel = g_new0 (float, n);
  for (int dy = -reach; dy <= reach; dy++)
    for (int dx = -reach; dx <= reach; dx++)
      kernel[(gsize) ((dy + h) % h) * w + (dx + w) % w] = (float) g_rand_double (rng);
  g_autoptr (GError) error = NULL;
  g_autoptr (SsOperator) deferred = ss_operator_new_deferred (kernel, NULL, w, h, &error);
  g_autoptr (SsOperator) eager = ss_operator_new_from_kernel (kernel, NULL, w, h, &error);
  g_assert_no_error (error);
  g_assert_nonnull (deferred->kernel);
  g_assert_null (eager->kernel);

  int x0 = g_rand_int_range (rng, 0, w - cw), y0 = g_rand_int_range (rng, 0, h - ch);
  g_autofree float *frame = g_new0 (float, n), *crop = g_new0 (float, cn);
  for (int r = reach; r < ch - reach; r++)
    for (int c = reach; c < cw - reach; c++)
      {
        float v = (float) g_rand_double (rng);
        crop[(gsize) r * cw + c] = v;
        frame[(gsize) (y0 + r) * w + x0 + c] = v;
      }
  g_autofree float *frame_blur = g_new (float, n), *crop_blur = g_new (float, cn);
  g_assert_true (ss_operator_apply (eager, frame, frame_blur, &error));
  const SsOperator *sources[] = { deferred, eager };
  for (int k = 0; k < 2; k++)
    {
      g_autofree float *folded = ss_operator_blur_kernel_at (sources[k], cw, ch, &error);
      g_assert_no_error (error);
      g_autoptr (SsOperator) small = ss_operator_new_from_kernel (folded, NULL, cw, ch, &error);
      g_assert_true (ss_operator_apply (small, crop, crop_blur, &error));
      double worst = 0;
      for (int r = 0; r < ch; r++)
        for (int c = 0; c < cw; c++)
          worst = fmax (worst, fabs (crop_blur[(gsize) r * cw + c]
                                     - frame_blur[(gsize) (y0 + r) * w + x0 + c]));
      g_test_message ("%s kernel %d×%d folded to %d×%d: largest difference %.3g",
                      k ? "c^'s" : "kept", w, h, cw, ch, worst);
      g_assert_cmpfloat (worst, <, 1e-4);
    }

  /* Wider than the crop: every tap lands somewhere. */
  g_autofree float *narrow = ss_operator_blur_kernel_at (deferred, reach, reach, &error);
  double sum = 0, folded_sum = 0;
  for (gsize i = 0; i < n; i++)
    sum += kernel[i];
  for (int i = 0; i < reach * reach; i++)
    folded_sum += narrow[i];
  g_assert_cmpfloat (fabs (folded_sum / sum - 1), <, 1e-5);
}

int
main (int argc, char **argv)
{
  g_setenv ("SHARPSKY_FFTW", "estimate", FALSE);
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/engine/psf/parse", test_psf_parse_round_trip);
  g_test_add_func ("/engine/psf/normalised-centred", test_psf_normalised_and_centred);
  g_test_add_func ("/engine/psf/larger-than-image", test_psf_larger_than_image);
  g_test_add_func ("/engine/psf/parse-ranges", test_psf_parse_ranges);
  g_test_add_func ("/engine/psf/file-not-finite", test_psf_file_not_finite);
  g_test_add_func ("/engine/psf/file-negative-wings", test_psf_file_negative_wings);
  g_test_add_func ("/engine/psf/file-off-centre", test_psf_file_off_centre);
  g_test_add_func ("/engine/psf/file-loaded-once", test_psf_file_loaded_once);
  g_test_add_func ("/engine/operator/direct-convolution", test_operator_matches_direct_convolution);
  g_test_add_func ("/engine/operator/adjoint-and-norm", test_operator_adjoint);
  g_test_add_func ("/engine/operator/deferred", test_operator_deferred);
  g_test_add_func ("/engine/operator/blur-kernel-at", test_operator_blur_kernel_at);
  g_test_add_func ("/engine/simulation/seeded", test_simulation_is_seeded);
  g_test_add_func ("/engine/scaling/median", test_median_and_scaling);
  g_test_add_func ("/engine/scaling/clipped-sky", test_clipped_sky);
  g_test_add_func ("/engine/model/header-round-trip", test_acquisition_header_round_trip);
  return g_test_run ();
}
