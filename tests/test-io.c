/* test-io.c: suite "io" — FITS and PNG reading and writing, safe outputs.
 *
 * Oracles: input files are made here with cfitsio and libpng directly from
 * fresh random data (seeded by GLib's test seed, printed in the TAP output),
 * so every expected pixel is known in closed form (raw * BSCALE + BZERO,
 * sample / 255, ...). Tolerances are stated where they are not exact.
 */
#include "test-common.h"
#include "test-cli-run.h"
#include "ss-error.h"
#include "ss-io.h"
#include "ss-mem.h"
#include "ss-output.h"

#include <errno.h>
#include <fcntl.h>
#include <gio/gio.h>
#include <png.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

/* ------------------------------------------------------------------------ */
/* Scratch directories and small helpers                                     */

static char *
scratch_dir (void)
{
  return test_scratch_dir ("sharpsky-io-XXXXXX");
}

static int
random_size (int low, int high)
{
  return g_test_rand_int_range (low, high + 1);
}

static guint64
random_u64 (void)
{
  return ((guint64) (guint32) g_test_rand_int () << 32) | (guint32) g_test_rand_int ();
}

/* A file of the given bytes. */
static void
write_bytes (const char *path, const void *bytes, gsize length)
{
  GError *error = NULL;
  g_file_set_contents (path, bytes, (gssize) length, &error);
  g_assert_no_error (error);
}

static GBytes *
read_bytes (const char *path)
{
  char *contents = NULL;
  gsize length = 0;
  GError *error = NULL;
  g_file_get_contents (path, &contents, &length, &error);
  g_assert_no_error (error);
  return g_bytes_new_take (contents, length);
}

/* An image of the given size; its pixels are the caller's to set. */
static SsImage *
new_image (int width, int height, int planes)
{
  GError *error = NULL;
  SsImage *image = ss_image_new (width, height, planes, &error);
  g_assert_no_error (error);
  return image;
}

static SsImage *
random_float_image (int width, int height, int planes)
{
  SsImage *image = new_image (width, height, planes);
  gsize n = ss_image_plane_size (image) * planes;
  for (gsize i = 0; i < n; i++)
    image->data[i] = (float) g_test_rand_double_range (-1000.0, 1000.0);
  return image;
}

/* Reads PATH, which must succeed with an image of WIDTH x HEIGHT. */
static SsImage *
read_fits_sized (const char *path, int width, int height)
{
  GError *error = NULL;
  SsImage *image = ss_fits_read (path, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpint (image->width, ==, width);
  g_assert_cmpint (image->height, ==, height);
  return image;
}

/* Fails the test when ERROR is not set, or does not name PATH's file. */
static void
assert_error_names_file (GError *error, const char *path)
{
  g_assert_nonnull (error);
  g_assert_true (error->domain == SS_ERROR);
  g_autofree char *base = g_path_get_basename (path);
  if (strstr (error->message, base) == NULL)
    g_error ("message does not name %s: %s", base, error->message);
  g_test_message ("expected error: %s", error->message);
}

/* ------------------------------------------------------------------------ */
/* FITS files made with cfitsio                                              */

static fitsfile *
create_fits (const char *path)
{
  fitsfile *fits = NULL;
  int status = 0;
  fits_create_diskfile (&fits, path, &status);
  test_check_cfitsio (status);
  return fits;
}

static void
close_fits_checked (fitsfile *fits)
{
  int status = 0;
  fits_close_file (fits, &status);
  test_check_cfitsio (status);
}

/* ------------------------------------------------------------------------ */
/* FITS: float32 round trip, bit for bit                                     */

static void
test_fits_float32_roundtrip (void)
{
  g_autofree char *dir = scratch_dir ();
  g_autofree char *first = g_build_filename (dir, "first.fits", NULL);
  g_autofree char *second = g_build_filename (dir, "second.fits", NULL);
  int width = random_size (1, 97), height = random_size (1, 61), planes = random_size (1, 3);
  GError *error = NULL;
  g_autoptr (SsImage) image = ss_image_new (width, height, planes, &error);
  g_assert_no_error (error);
  /* Random bit patterns: every float class (subnormals, -0, inf, NaN
   * payloads) must survive unchanged. */
  gsize n = ss_image_plane_size (image) * planes;
  guint32 *bits = (guint32 *) image->data;
  for (gsize i = 0; i < n; i++)
    bits[i] = (guint32) g_test_rand_int ();
  bits[0] = 0x00000001u;  /* smallest subnormal */
  image->header = ss_header_new ();
  ss_header_add_card (image->header, "OBJECT  = 'round trip'");

  g_assert_true (ss_fits_write (image, first, FALSE, NULL, &error));
  g_assert_no_error (error);
  g_autoptr (SsImage) read = ss_fits_read (first, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpint (read->width, ==, width);
  g_assert_cmpint (read->height, ==, height);
  g_assert_cmpint (read->planes, ==, planes);
  g_assert_cmpmem (read->data, n * sizeof (float), image->data, n * sizeof (float));

  /* read -> write -> read again: same pixels and same cards */
  const char *inputs[] = { first, NULL };
  g_assert_true (ss_fits_write (read, second, FALSE, inputs, &error));
  g_assert_no_error (error);
  g_autoptr (SsImage) again = ss_fits_read (second, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpmem (again->data, n * sizeof (float), image->data, n * sizeof (float));
  g_assert_cmpuint (again->header->cards->len, ==, read->header->cards->len);
  for (guint i = 0; i < read->header->cards->len; i++)
    g_assert_cmpstr (g_ptr_array_index (again->header->cards, i), ==,
                     g_ptr_array_index (read->header->cards, i));
  test_remove_tree (dir);
}

/* ------------------------------------------------------------------------ */
/* FITS: every integer BITPIX with BZERO/BSCALE and BLANK                    */

typedef struct {
  int bitpix;
  double bscale;
  double bzero;
  gboolean blank;
} IntegerCase;

/* A random raw value of BITPIX's type. */
static gint64
random_raw (int bitpix)
{
  switch (bitpix)
    {
    case 8: return g_test_rand_int_range (0, 256);
    case 16: return g_test_rand_int_range (-32768, 32768);
    case 32: return (gint32) g_test_rand_int ();
    default: return (gint64) random_u64 ();
    }
}

/* The closed form: raw * BSCALE + BZERO, computed as FITS defines it and
 * rounded once to float. The unsigned-64 convention (BZERO = 2^63) is done
 * in integers: a double cannot hold raw + 2^63 exactly. */
static float
expected_value (const IntegerCase *c, gint64 raw)
{
  if (c->bitpix == 64 && c->bzero == 9223372036854775808.0 && c->bscale == 1.0)
    return (float) ((guint64) raw ^ G_GUINT64_CONSTANT (0x8000000000000000));
  if (c->bitpix == 64 && c->bscale == 1.0 && c->bzero == 0.0)
    return (float) raw;
  return (float) ((double) raw * c->bscale + c->bzero);
}

static void
write_integer_fits (const char *path, const IntegerCase *c, const gint64 *raw, long width, long height,
                    gint64 blank)
{
  fitsfile *fits = create_fits (path);
  int status = 0;
  long axes[2] = { width, height };
  fits_create_img (fits, c->bitpix, 2, axes, &status);
  if (c->bscale != 1.0 || c->bzero != 0.0)
    {
      double bscale = c->bscale, bzero = c->bzero;
      fits_write_key (fits, TDOUBLE, "BSCALE", &bscale, NULL, &status);
      fits_write_key (fits, TDOUBLE, "BZERO", &bzero, NULL, &status);
    }
  if (c->blank)
    {
      LONGLONG value = blank;
      fits_write_key (fits, TLONGLONG, "BLANK", &value, NULL, &status);
    }
  /* Store the raw integers as they are (after cfitsio has parsed the new
   * keywords, which would otherwise reset the scaling). */
  fits_set_hdustruc (fits, &status);
  fits_set_bscale (fits, 1.0, 0.0, &status);
  fits_write_img (fits, TLONGLONG, 1, (LONGLONG) width * height, (void *) raw, &status);
  test_check_cfitsio (status);
  close_fits_checked (fits);
}

static void
check_integer_case (const char *dir, const IntegerCase *c)
{
  g_autofree char *path = g_build_filename (dir, "int.fits", NULL);
  g_autofree char *out = g_build_filename (dir, "float.fits", NULL);
  int width = random_size (2, 70), height = random_size (2, 50);
  gsize n = (gsize) width * height;
  g_autofree gint64 *raw = g_new (gint64, n);
  gint64 blank = c->bitpix == 8 ? 255 : c->bitpix == 16 ? -32768 : c->bitpix == 32 ? G_MININT32 : G_MININT64;
  for (gsize i = 0; i < n; i++)
    {
      raw[i] = random_raw (c->bitpix);
      if (c->blank && raw[i] == blank)
        raw[i] = c->bitpix == 8 ? blank - 1 : blank + 1; /* stay in range */
    }
  gsize blanks = 0;
  if (c->blank)
    for (gsize i = 0; i < n; i += 1 + g_test_rand_int_range (0, 7), blanks++)
      raw[i] = blank;
  write_integer_fits (path, c, raw, width, height, blank);

  g_autoptr (SsImage) image = read_fits_sized (path, width, height);
  for (gsize i = 0; i < n; i++)
    {
      if (c->blank && raw[i] == blank)
        {
          g_assert_true (isnan (image->data[i]));
          continue;
        }
      float expected = expected_value (c, raw[i]);
      if (memcmp (&expected, &image->data[i], sizeof (float)) != 0)
        g_error ("BITPIX %d BSCALE %g BZERO %g: pixel %zu raw %" G_GINT64_FORMAT ": read %.9g, expected %.9g",
                 c->bitpix, c->bscale, c->bzero, i, raw[i], image->data[i], expected);
    }
  g_assert_cmpuint (ss_image_count_nan (image), ==, blanks);

  /* read -> write float32 -> read gives the same values (NaN where blank) */
  GError *error = NULL;
  g_assert_true (ss_fits_write (image, out, TRUE, NULL, &error));
  g_assert_no_error (error);
  g_autoptr (SsImage) again = ss_fits_read (out, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpmem (again->data, n * sizeof (float), image->data, n * sizeof (float));
  g_assert_null (ss_header_get_string (again->header, "BZERO"));
  g_assert_null (ss_header_get_string (again->header, "BLANK"));
  g_unlink (path);
}

static void
test_fits_integer_bitpix (void)
{
  static const IntegerCase cases[] = {
    { 8, 1.0, 0.0, FALSE },
    { 8, 1.0, -128.0, TRUE },            /* signed bytes */
    { 16, 1.0, 0.0, TRUE },
    { 16, 1.0, 32768.0, FALSE },         /* unsigned 16-bit */
    { 16, 0.37, 12.5, TRUE },
    { 32, 1.0, 0.0, TRUE },
    { 32, 1.0, 2147483648.0, FALSE },    /* unsigned 32-bit */
    { 32, 1e-3, -7.25, TRUE },
    { 64, 1.0, 0.0, TRUE },
    { 64, 1.0, 9223372036854775808.0, FALSE }, /* unsigned 64-bit */
    { 64, 2.5e-6, 1000.0, TRUE },
  };
  g_autofree char *dir = scratch_dir ();
  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    check_integer_case (dir, &cases[i]);
  test_remove_tree (dir);
}

/* ------------------------------------------------------------------------ */
/* FITS: header cards kept, structural ones recomputed, HISTORY appended     */

static const char *const structural_keys[] = {
  "BZERO", "BSCALE", "BLANK", "DATAMIN", "DATAMAX", "CHECKSUM", "DATASUM",
};

static GPtrArray *
read_raw_cards (const char *path)
{
  fitsfile *fits = NULL;
  int status = 0, count = 0, more = 0;
  fits_open_diskfile (&fits, path, READONLY, &status);
  fits_get_hdrspace (fits, &count, &more, &status);
  GPtrArray *cards = g_ptr_array_new_with_free_func (g_free);
  for (int i = 1; i <= count; i++)
    {
      char card[FLEN_CARD];
      fits_read_record (fits, i, card, &status);
      g_ptr_array_add (cards, g_strchomp (g_strdup (card)));
    }
  test_check_cfitsio (status);
  close_fits_checked (fits);
  return cards;
}

static void
write_header_test_input (const char *path, int width, int height, const char *object, double crval1)
{
  fitsfile *fits = create_fits (path);
  int status = 0;
  long axes[2] = { width, height };
  fits_create_img (fits, SHORT_IMG, 2, axes, &status);
  double bscale = 0.5, bzero = 100.0, datamin = -5.0, datamax = 5.0, crpix = 12.5, cd = -2.5e-4;
  int blank = -32768;
  fits_write_key (fits, TSTRING, "OBJECT", (void *) object, "target", &status);
  fits_write_key (fits, TSTRING, "TELESCOP", "Test 1m", NULL, &status);
  fits_write_key (fits, TDOUBLE, "BSCALE", &bscale, NULL, &status);
  fits_write_key (fits, TDOUBLE, "BZERO", &bzero, NULL, &status);
  fits_write_key (fits, TINT, "BLANK", &blank, NULL, &status);
  fits_write_key (fits, TDOUBLE, "DATAMIN", &datamin, NULL, &status);
  fits_write_key (fits, TDOUBLE, "DATAMAX", &datamax, NULL, &status);
  fits_write_key (fits, TSTRING, "CTYPE1", "RA---TAN", NULL, &status);
  fits_write_key (fits, TSTRING, "CTYPE2", "DEC--TAN", NULL, &status);
  fits_write_key (fits, TDOUBLE, "CRVAL1", &crval1, NULL, &status);
  fits_write_key (fits, TDOUBLE, "CRPIX1", &crpix, NULL, &status);
  fits_write_key (fits, TDOUBLE, "CD1_1", &cd, NULL, &status);
  fits_write_comment (fits, "a comment that must survive", &status);
  fits_write_history (fits, "an older history line", &status);
  fits_write_record (fits, "HIERARCH ESO DET CHIP NAME = 'CCD-42' / chip", &status);
  fits_set_hdustruc (fits, &status);
  fits_set_bscale (fits, 1.0, 0.0, &status);
  g_autofree short *raw = g_new (short, (gsize) width * height);
  for (int i = 0; i < width * height; i++)
    raw[i] = (short) g_test_rand_int_range (-1000, 1000);
  fits_write_img (fits, TSHORT, 1, (LONGLONG) width * height, raw, &status);
  fits_write_chksum (fits, &status);
  test_check_cfitsio (status);
  close_fits_checked (fits);
}

static gboolean
card_has_keyword (const char *card, const char *keyword)
{
  gsize length = strlen (keyword);
  return strncmp (card, keyword, length) == 0 && (card[length] == ' ' || card[length] == '=');
}

static void
test_fits_header_kept (void)
{
  g_autofree char *dir = scratch_dir ();
  g_autofree char *in = g_build_filename (dir, "in.fits", NULL);
  g_autofree char *out = g_build_filename (dir, "out.fits", NULL);
  int width = random_size (3, 40), height = random_size (3, 40);
  g_autofree char *object = g_strdup_printf ("NGC %d", g_test_rand_int_range (1, 7000));
  double crval1 = g_test_rand_double_range (0.0, 360.0);
  write_header_test_input (in, width, height, object, crval1);

  GError *error = NULL;
  g_autoptr (SsImage) image = ss_fits_read (in, NULL, &error);
  g_assert_no_error (error);
  g_autofree char *read_object = ss_header_get_string (image->header, "OBJECT");
  g_assert_cmpstr (read_object, ==, object);
  double value = 0.0;
  g_assert_true (ss_header_get_double (image->header, "CRVAL1", &value));
  g_assert_cmpfloat_with_epsilon (value, crval1, 1e-9 * crval1);
  g_autofree char *chip = ss_header_get_string (image->header, "ESO DET CHIP NAME");
  g_assert_cmpstr (chip, ==, "CCD-42");
  g_autofree char *chip_too = ss_header_get_string (image->header, "HIERARCH ESO DET CHIP NAME");
  g_assert_cmpstr (chip_too, ==, "CCD-42");

  /* A long HISTORY text is wrapped between words over cards of at most 72
   * characters. */
  GString *long_text = g_string_new ("sharpsky 0.1.0 deblur");
  for (int i = 0; i < 12; i++)
    g_string_append_printf (long_text, " --param%d=%d", i, g_test_rand_int_range (0, 100000));
  ss_header_add_history (image->header, "short line %d", 7);
  ss_header_add_history (image->header, "%s", long_text->str);
  g_assert_true (ss_fits_write (image, out, FALSE, NULL, &error));
  g_assert_no_error (error);

  g_autoptr (GPtrArray) cards = read_raw_cards (out);
  /* structural cards recomputed: float32, same axes, no scaling/blank/sums */
  g_autofree char *bitpix = g_strdup_printf ("BITPIX  = %20d", -32);
  g_assert_true (g_str_has_prefix (g_ptr_array_index (cards, 1), bitpix));
  g_autofree char *naxis1 = g_strdup_printf ("NAXIS1  = %20d", width);
  g_assert_true (g_str_has_prefix (g_ptr_array_index (cards, 3), naxis1));
  for (guint i = 0; i < cards->len; i++)
    for (gsize k = 0; k < G_N_ELEMENTS (structural_keys); k++)
      g_assert_false (card_has_keyword (g_ptr_array_index (cards, i), structural_keys[k]));

  /* every non-structural input card, verbatim and in order */
  guint at = 0;
  for (guint i = 0; i < image->header->cards->len; i++)
    {
      const char *card = g_ptr_array_index (image->header->cards, i);
      if (ss_header_card_is_structural (card))
        continue;
      while (at < cards->len && strcmp (g_ptr_array_index (cards, at), card) != 0)
        at++;
      if (at == cards->len)
        g_error ("input card missing from the output: %s", card);
    }
  /* then the new HISTORY cards, whose texts join back (with the blanks
   * broken at) to the originals */
  g_assert_cmpstr (g_ptr_array_index (cards, ++at), ==, "HISTORY short line 7");
  GString *joined = g_string_new (NULL);
  guint history_cards = 0;
  for (at++; at < cards->len; at++)
    {
      const char *card = g_ptr_array_index (cards, at);
      g_assert_true (g_str_has_prefix (card, "HISTORY "));
      g_assert_cmpuint (strlen (card + 8), <=, 72);
      g_string_append_printf (joined, "%s%s", joined->len ? " " : "", card + 8);
      history_cards++;
    }
  g_assert_cmpstr (joined->str, ==, long_text->str);
  g_assert_cmpuint (history_cards, >=, (long_text->len + 71) / 72);
  g_string_free (joined, TRUE);
  g_string_free (long_text, TRUE);

  /* the description names the main cards and the history */
  g_autofree char *description = ss_fits_describe (out, &error);
  g_assert_no_error (error);
  g_assert_nonnull (strstr (description, object));
  g_assert_nonnull (strstr (description, "RA---TAN"));
  g_assert_nonnull (strstr (description, "short line 7"));
  g_assert_nonnull (strstr (description, "BITPIX -32"));
  test_remove_tree (dir);
}

/* ------------------------------------------------------------------------ */
/* FITS: HDU choice, cubes, tile compression                                 */

static void
append_float_extension (fitsfile *fits, const char *extname, const float *data, long width, long height)
{
  int status = 0;
  long axes[2] = { width, height };
  fits_create_img (fits, FLOAT_IMG, 2, axes, &status);
  fits_write_key (fits, TSTRING, "EXTNAME", (void *) extname, NULL, &status);
  fits_write_img (fits, TFLOAT, 1, (LONGLONG) width * height, (void *) data, &status);
  test_check_cfitsio (status);
}

static void
append_table (fitsfile *fits)
{
  int status = 0;
  char *names[] = { "FLUX" }, *forms[] = { "1E" }, *units[] = { "" };
  fits_create_tbl (fits, BINARY_TBL, 3, 1, names, forms, units, "CATALOG", &status);
  test_check_cfitsio (status);
}

static void
expect_read_error (const char *path, const char *hdu, int plane, const char *fragment)
{
  SsFitsReadOptions options = { hdu, plane };
  GError *error = NULL;
  SsImage *image = ss_fits_read (path, &options, &error);
  g_assert_null (image);
  assert_error_names_file (error, path);
  if (fragment && strstr (error->message, fragment) == NULL)
    g_error ("'%s' not in: %s", fragment, error->message);
  g_error_free (error);
}

static void
expect_same_pixels (const char *path, const char *hdu, const float *data, gsize n)
{
  SsFitsReadOptions options = { hdu, -1 };
  GError *error = NULL;
  g_autoptr (SsImage) image = ss_fits_read (path, &options, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (ss_image_plane_size (image), ==, n);
  g_assert_cmpmem (image->data, n * sizeof (float), data, n * sizeof (float));
}

static void
test_fits_hdu_selection (void)
{
  g_autofree char *dir = scratch_dir ();
  g_autofree char *path = g_build_filename (dir, "mef.fits", NULL);
  long width = random_size (2, 30), height = random_size (2, 30);
  gsize n = (gsize) width * height;
  g_autoptr (SsImage) sci = random_float_image (width, height, 1);
  g_autoptr (SsImage) err = random_float_image (width, height, 1);

  fitsfile *fits = create_fits (path);
  int status = 0;
  fits_create_img (fits, FLOAT_IMG, 0, NULL, &status); /* empty primary */
  test_check_cfitsio (status);
  append_float_extension (fits, "SCI", sci->data, width, height);
  append_table (fits);
  append_float_extension (fits, "ERR", err->data, width, height);
  close_fits_checked (fits);

  expect_same_pixels (path, NULL, sci->data, n);  /* empty primary skipped */
  expect_same_pixels (path, "1", sci->data, n);
  expect_same_pixels (path, "3", err->data, n);
  expect_same_pixels (path, "ERR", err->data, n);
  expect_same_pixels (path, "sci", sci->data, n);
  expect_read_error (path, "0", -1, "NAXIS = 0");
  expect_read_error (path, "2", -1, "binary table");
  expect_read_error (path, "CATALOG", -1, "binary table");
  expect_read_error (path, "9", -1, "does not exist");
  expect_read_error (path, "NOPE", -1, "NOPE");

  GError *error = NULL;
  g_autofree char *description = ss_fits_describe (path, &error);
  g_assert_no_error (error);
  g_test_message ("%s", description);
  g_assert_nonnull (strstr (description, "HDU 3 'ERR'"));
  g_assert_nonnull (strstr (description, "binary table"));

  /* The listing (the app's HDU chooser) agrees with the file and the reader. */
  g_autoptr (GPtrArray) hdus = ss_fits_list_hdus (path, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (hdus->len, ==, 4);
  static const char *const names[] = { NULL, "SCI", "CATALOG", "ERR" };
  for (guint i = 0; i < hdus->len; i++)
    {
      const SsFitsHdu *hdu = g_ptr_array_index (hdus, i);
      g_assert_cmpint (hdu->number, ==, (int) i);
      g_assert_cmpstr (hdu->name, ==, names[i]);
      g_assert_cmpint (hdu->has_image, ==, i == 1 || i == 3);
      g_autofree char *number = g_strdup_printf ("%u", i);
      SsFitsReadOptions options = { number, -1 };
      g_autoptr (SsImage) image = ss_fits_read (path, &options, NULL);
      g_assert_cmpint (image != NULL, ==, hdu->has_image);
      if (image != NULL)
        {
          g_assert_cmpint (hdu->width, ==, image->width);
          g_assert_cmpint (hdu->height, ==, image->height);
          g_assert_cmpint (hdu->planes, ==, image->planes);
          g_assert_cmpint (hdu->bitpix, ==, -32);
          g_assert_cmpstr (hdu->kind, ==, "image");
        }
    }
  g_assert_cmpstr (((const SsFitsHdu *) g_ptr_array_index (hdus, 2))->kind, ==, "binary table");
  g_assert_null (ss_fits_list_hdus (dir, &error));   /* a directory: an error, not a crash */
  g_assert_nonnull (error);
  g_clear_error (&error);
  test_remove_tree (dir);
}

static void
test_fits_cube (void)
{
  g_autofree char *dir = scratch_dir ();
  g_autofree char *path = g_build_filename (dir, "cube.fits", NULL);
  int width = random_size (2, 25), height = random_size (2, 25), planes = random_size (2, 6);
  g_autoptr (SsImage) cube = random_float_image (width, height, planes);
  test_write_fits_float (path, cube->data, width, height, planes, NULL);
  gsize n = ss_image_plane_size (cube);

  GError *error = NULL;
  g_autoptr (SsImage) all = ss_fits_read (path, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpint (all->planes, ==, planes);
  g_assert_cmpmem (all->data, n * planes * sizeof (float), cube->data, n * planes * sizeof (float));

  int plane = g_test_rand_int_range (0, planes);
  SsFitsReadOptions options = { NULL, plane };
  g_autoptr (SsImage) one = ss_fits_read (path, &options, &error);
  g_assert_no_error (error);
  g_assert_cmpint (one->planes, ==, 1);
  g_assert_cmpmem (one->data, n * sizeof (float), ss_image_plane (cube, plane), n * sizeof (float));
  expect_read_error (path, NULL, planes, "plane");
  g_autoptr (GPtrArray) hdus = ss_fits_list_hdus (path, NULL);
  g_assert_nonnull (hdus);
  g_assert_cmpuint (hdus->len, ==, 1);
  const SsFitsHdu *hdu = g_ptr_array_index (hdus, 0);
  g_assert_true (hdu->has_image);
  g_assert_cmpint (hdu->width, ==, width);
  g_assert_cmpint (hdu->height, ==, height);
  g_assert_cmpint (hdu->planes, ==, planes);

  /* A spectral axis: one plane read alone keeps its own wavelength at its
   * one pixel (CRPIX3 moved by the plane), in the header and in a file
   * written from it. */
  fitsfile *fits = NULL;
  int status = 0;
  double crpix = g_test_rand_double_range (-2, 3), crval = 5000, cdelt = 10;
  fits_open_file (&fits, path, READWRITE, &status);
  fits_update_key_dbl (fits, "CRPIX3", crpix, -15, NULL, &status);
  fits_update_key_dbl (fits, "CRVAL3", crval, -15, NULL, &status);
  fits_update_key_dbl (fits, "CDELT3", cdelt, -15, NULL, &status);
  fits_close_file (fits, &status);
  test_check_cfitsio (status);
  SsFitsReadOptions later = { NULL, g_test_rand_int_range (1, planes) };
  g_autoptr (SsImage) spectral = ss_fits_read (path, &later, &error);
  g_assert_no_error (error);
  g_autofree char *written = g_build_filename (dir, "plane.fits", NULL);
  g_assert_true (ss_fits_write (spectral, written, FALSE, NULL, &error));
  g_assert_no_error (error);
  g_autoptr (SsImage) again = ss_fits_read (written, NULL, &error);
  g_assert_no_error (error);
  double wanted = crval + (later.plane + 1 - crpix) * cdelt;
  for (int k = 0; k < 2; k++)
    {
      double moved = NAN;
      g_assert_true (ss_header_get_double (k ? again->header : spectral->header, "CRPIX3",
                                           &moved));
      g_assert_cmpfloat_with_epsilon (crval + (1 - moved) * cdelt, wanted, 1e-9);
    }
  test_remove_tree (dir);
}

/* Overwrites the compressed bytes (the heap) of HDU 1 with 0xFF: Rice codes
 * that claim far more bits than the tiles hold (cfitsio's decoder would read
 * past its buffer), or a gzip stream with a bad header. The reader must
 * refuse the file first, with a message containing PROBLEM. */
static void
check_damaged_tiles_refused (const char *path, const char *problem)
{
  fitsfile *fits = NULL;
  int status = 0, type = 0;
  LONGLONG header_start = 0, data_start = 0, data_end = 0, row_bytes = 0, rows = 0, heap = 0;
  fits_open_diskfile (&fits, path, READONLY, &status);
  fits_movabs_hdu (fits, 2, &type, &status);
  fits_get_hduaddrll (fits, &header_start, &data_start, &data_end, &status);
  fits_read_key_lnglng (fits, "NAXIS1", &row_bytes, NULL, &status);
  fits_read_key_lnglng (fits, "NAXIS2", &rows, NULL, &status);
  fits_read_key_lnglng (fits, "PCOUNT", &heap, NULL, &status);
  test_check_cfitsio (status);
  close_fits_checked (fits);

  g_autoptr (GBytes) bytes = read_bytes (path);
  gsize length = 0;
  g_autofree guchar *copy = g_memdup2 (g_bytes_get_data (bytes, &length), g_bytes_get_size (bytes));
  gsize heap_start = (gsize) (data_start + row_bytes * rows);
  g_assert_cmpuint (heap_start + heap, <=, length);
  memset (copy + heap_start, 0xff, (gsize) heap);
  g_autofree char *damaged = g_strconcat (path, ".damaged.fits", NULL);
  write_bytes (damaged, copy, length);
  expect_read_error (damaged, NULL, -1, problem);
  g_unlink (damaged);
}

typedef struct {
  int bitpix;
  int compression;
  const char *label;
} CompressionCase;

/* Writes WIDTH x HEIGHT integers RAW as a tile-compressed extension. */
static void
write_compressed_fits (const char *path, const CompressionCase *c, const int *raw, long width, long height)
{
  gsize n = (gsize) width * height;
  fitsfile *fits = create_fits (path);
  int status = 0;
  long axes[2] = { width, height };
  fits_create_img (fits, BYTE_IMG, 0, NULL, &status);
  fits_set_compression_type (fits, c->compression, &status);
  fits_create_img (fits, c->bitpix, 2, axes, &status);
  fits_write_key (fits, TSTRING, "EXTNAME", "COMPRESSED", NULL, &status);
  /* cfitsio compresses only data given in the image's own type */
  g_autofree short *raw16 = g_new (short, n);
  for (gsize i = 0; i < n; i++)
    raw16[i] = (short) raw[i];
  if (c->bitpix == SHORT_IMG)
    fits_write_img (fits, TSHORT, 1, (LONGLONG) n, raw16, &status);
  else
    fits_write_img (fits, TINT, 1, (LONGLONG) n, (void *) raw, &status);
  test_check_cfitsio (status);
  close_fits_checked (fits);
}

/* Writes a copy of PATH with the value of KEYWORD's card replaced by VALUE
 * (columns 11-80) and checks the reader refuses it naming PROBLEM. */
static void
check_damaged_header_refused (const char *path, const char *keyword, const char *value, const char *problem)
{
  g_autoptr (GBytes) bytes = read_bytes (path);
  gsize length = 0;
  g_autofree char *copy = g_memdup2 (g_bytes_get_data (bytes, &length), g_bytes_get_size (bytes));
  g_autofree char *key = g_strdup_printf ("%-8s=", keyword);
  char *card = g_strstr_len (copy, (gssize) length, key);
  g_assert_nonnull (card);
  g_autofree char *field = g_strdup_printf ("%-70s", value);
  memcpy (card + 10, field, 70);
  g_autofree char *damaged = g_strconcat (path, ".damaged-header.fits", NULL);
  write_bytes (damaged, copy, length);
  expect_read_error (damaged, NULL, -1, problem);
  GError *error = NULL;
  g_assert_null (ss_fits_describe (damaged, &error));
  assert_error_names_file (error, damaged);
  g_clear_error (&error);
  g_unlink (damaged);
}

/* Some writers put a card of the image before ZTENSION in a compressed
 * image's table (astropy's test files do); cfitsio then cannot rebuild the
 * image header, and the reader falls back to the table's own cards. Checks
 * a copy of PATH with OBJECT and then ZTENSION appended to the table header
 * reads the same pixels and the image's cards, none of the table's. */
static void
check_late_ztension (const char *path, const int *raw, gsize n)
{
  g_autoptr (GBytes) bytes = read_bytes (path);
  gsize length = 0;
  g_autofree char *copy = g_memdup2 (g_bytes_get_data (bytes, &length), g_bytes_get_size (bytes));
  /* The table's END card (the second header); cfitsio leaves room after it. */
  char *end = g_strstr_len (copy + 2880, (gssize) (length - 2880), "END     ");
  g_assert_nonnull (end);
  g_assert_cmpint ((end - copy) % 80, ==, 0);
  g_assert_cmpint ((end - copy) % 2880, <=, 2880 - 3 * 80);
  g_autofree char *cards = g_strdup_printf ("%-80s%-80s%-80s", "OBJECT  = 'M 13    '",
                                            "ZTENSION= 'IMAGE   '", "END");
  memcpy (end, cards, 3 * 80);
  g_autofree char *patched = g_strconcat (path, ".late-ztension.fits", NULL);
  write_bytes (patched, copy, length);

  GError *error = NULL;
  g_autoptr (SsImage) image = ss_fits_read (patched, NULL, &error);
  g_assert_no_error (error);
  for (gsize i = 0; i < n; i++)
    g_assert_cmpfloat (image->data[i], ==, (float) raw[i]);
  g_autofree char *object = ss_header_get_string (image->header, "OBJECT");
  g_assert_cmpstr (object, ==, "M 13");
  static const char *const table_keys[] = { "ZIMAGE", "ZCMPTYPE", "TFORM1", "TTYPE1", "ZTILE1",
                                            "TFIELDS", "PCOUNT", "ZTENSION" };
  for (gsize i = 0; i < G_N_ELEMENTS (table_keys); i++)
    {
      g_autofree char *value = ss_header_get_string (image->header, table_keys[i]);
      g_assert_null (value);
    }
  g_unlink (patched);
}

static void
test_fits_tile_compressed (void)
{
  static const CompressionCase cases[] = {
    { SHORT_IMG, RICE_1, "RICE_1" },
    { LONG_IMG, RICE_1, "RICE_1" },
    { SHORT_IMG, PLIO_1, "PLIO_1" },
    { LONG_IMG, GZIP_2, "GZIP_2" },
  };
  g_autofree char *dir = scratch_dir ();
  for (gsize k = 0; k < G_N_ELEMENTS (cases); k++)
    {
      const CompressionCase *c = &cases[k];
      g_autofree char *file = g_strdup_printf ("%s-%d.fits", c->label, c->bitpix);
      g_autofree char *path = g_build_filename (dir, file, NULL);
      long width = random_size (20, 200), height = random_size (20, 120);
      gsize n = (gsize) width * height;
      g_autofree int *raw = g_new (int, n);
      for (gsize i = 0; i < n; i++)  /* non-negative: PLIO's range */
        raw[i] = 1000 + (int) (i % 37) + g_test_rand_int_range (-500, 500);
      write_compressed_fits (path, c, raw, width, height);

      g_autoptr (SsImage) image = read_fits_sized (path, width, height);
      for (gsize i = 0; i < n; i++)
        g_assert_cmpfloat (image->data[i], ==, (float) raw[i]); /* lossless */
      /* the header read is the uncompressed image's */
      g_autofree char *zimage = ss_header_get_string (image->header, "ZIMAGE");
      g_assert_null (zimage);
      double bitpix = 0.0;
      g_assert_true (ss_header_get_double (image->header, "BITPIX", &bitpix));
      g_assert_cmpfloat (bitpix, ==, c->bitpix);

      GError *error = NULL;
      g_autofree char *description = ss_fits_describe (path, &error);
      g_assert_no_error (error);
      g_autofree char *kind = g_strdup_printf ("compressed image (%s)", c->label);
      g_assert_nonnull (strstr (description, kind));
      if (c->compression == GZIP_2)
        check_damaged_tiles_refused (path, "the gzip data of tile");
      if (c->compression == RICE_1)
        {
          check_damaged_tiles_refused (path, "the Rice data of tile");
          check_late_ztension (path, raw, n);
          /* headers that crash cfitsio 4.2 as soon as it moves to the HDU:
           * a division by a zero tile size, and a long non-number in an
           * integer key (ffc2j overflows its message buffer; glibc aborts) */
          check_damaged_header_refused (path, "ZTILE2", "                   0", "invalid ZTILE2");
          check_damaged_header_refused (path, "ZNAXIS", "abcdefghijklmnopqrstuvwxyz0123456789",
                                        "ZNAXIS has a malformed value");
          /* costs cfitsio gigabytes of column descriptions (found by fuzzing) */
          check_damaged_header_refused (path, "TFIELDS", "             6666666", "invalid TFIELDS");
        }
    }

  /* HCOMPRESS is refused with a way out (cfitsio's decoder is unsafe) */
  static const CompressionCase hcompress = { SHORT_IMG, HCOMPRESS_1, "HCOMPRESS_1" };
  g_autofree char *path = g_build_filename (dir, "hcompress.fits", NULL);
  int raw[64 * 64];
  for (int i = 0; i < 64 * 64; i++)
    raw[i] = g_test_rand_int_range (0, 1000);
  write_compressed_fits (path, &hcompress, raw, 64, 64);
  expect_read_error (path, NULL, -1, "funpack");
  test_remove_tree (dir);
}

/* ---- gzip-compressed files ------------------------------------------------ */

/* Writes BYTES gzip-compressed to PATH as MEMBERS gzip members one after the
 * other (as `cat a.gz b.gz` makes; readers must take them all). */
static void
write_gzip (const char *path, const guchar *bytes, gsize length, int members)
{
  g_unlink (path);
  gsize offset = 0;
  for (int m = 0; m < members; m++)
    {
      gsize part = m == members - 1 ? length - offset : length / members;
      gzFile gz = gzopen (path, "ab9");
      g_assert_nonnull (gz);
      g_assert_cmpint (gzwrite (gz, bytes + offset, (unsigned) part), ==, (int) part);
      g_assert_cmpint (gzclose (gz), ==, Z_OK);
      offset += part;
    }
}

static int
count_temporary_copies (void)
{
  int count = 0;
  GDir *dir = g_dir_open (g_get_tmp_dir (), 0, NULL);
  const char *name;
  while (dir && (name = g_dir_read_name (dir)))
    count += g_str_has_prefix (name, "sharpsky-gunzip-") ? 1 : 0;
  if (dir)
    g_dir_close (dir);
  return count;
}

static void
test_fits_gzip (void)
{
  g_autofree char *dir = scratch_dir ();
  g_autofree char *plain = g_build_filename (dir, "frame.fits", NULL);
  g_autofree char *gz = g_build_filename (dir, "frame.fits.gz", NULL);
  int width = random_size (2, 90), height = random_size (2, 90), planes = random_size (1, 3);
  g_autoptr (SsImage) original = random_float_image (width, height, planes);
  test_write_fits_float (plain, original->data, width, height, planes, NULL);
  g_autoptr (GBytes) bytes = read_bytes (plain);
  int members = g_test_rand_int_range (1, 4);
  write_gzip (gz, g_bytes_get_data (bytes, NULL), g_bytes_get_size (bytes), members);
  g_test_message ("%d×%d×%d in %d gzip member(s)", width, height, planes, members);
  int before = count_temporary_copies ();

  /* Read as the plain file is, by the loader that detects the format too. */
  GError *error = NULL;
  g_autoptr (SsImage) image = ss_image_load (gz, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpint (image->planes, ==, planes);
  gsize n = ss_image_plane_size (image) * planes;
  g_assert_cmpmem (image->data, n * sizeof (float), original->data, n * sizeof (float));
  g_autofree char *description = ss_fits_describe (gz, &error);
  g_assert_no_error (error);
  g_autoptr (GPtrArray) hdus = ss_fits_list_hdus (gz, &error);
  g_assert_no_error (error);
  g_assert_cmpint (((const SsFitsHdu *) g_ptr_array_index (hdus, 0))->width, ==, width);

  /* Damaged: truncated, or garbage after the magic number; named, and no
   * temporary copy left behind. */
  gsize length = 0;
  g_autofree guchar *copy = NULL;
  g_assert_true (g_file_get_contents (gz, (char **) &copy, &length, NULL));
  g_autofree char *cut = g_build_filename (dir, "cut.fits.gz", NULL);
  write_bytes (cut, copy, length - MIN (length / 2, (gsize) 40));
  expect_read_error (cut, NULL, -1, "gzip");
  for (gsize i = 10; i < length; i++)
    copy[i] = (guchar) g_test_rand_int_range (0, 256);
  g_autofree char *garbage = g_build_filename (dir, "garbage.fits.gz", NULL);
  write_bytes (garbage, copy, length);
  expect_read_error (garbage, NULL, -1, NULL);
  g_assert_cmpint (count_temporary_copies (), ==, before);
  test_remove_tree (dir);
}

/* A non-standard value in a card nobody parses (DSS plate headers hold
 * "SKEW = a, b") is kept as it is; the guard against cfitsio's overflow
 * applies to the keywords cfitsio reads. */
static void
test_fits_nonstandard_card_kept (void)
{
  g_autofree char *dir = scratch_dir ();
  g_autofree char *path = g_build_filename (dir, "dss.fits", NULL);
  int width = random_size (2, 40), height = random_size (2, 40);
  g_autoptr (SsImage) original = random_float_image (width, height, 1);
  test_write_fits_float (path, original->data, width, height, 1, NULL);
  const char *skew = "SKEW    = -1.3869888376036E+00, -1.6912592180432E+00 /Measure of skew";
  fitsfile *fits = NULL;
  int status = 0;
  fits_open_file (&fits, path, READWRITE, &status);
  fits_write_record (fits, skew, &status);
  close_fits_checked (fits);
  test_check_cfitsio (status);

  GError *error = NULL;
  g_autoptr (SsImage) image = ss_fits_read (path, NULL, &error);
  g_assert_no_error (error);
  gsize n = (gsize) width * height;
  g_assert_cmpmem (image->data, n * sizeof (float), original->data, n * sizeof (float));
  gboolean kept = FALSE;
  for (guint i = 0; i < image->header->cards->len; i++)
    kept |= g_str_has_prefix (g_ptr_array_index (image->header->cards, i), skew);
  g_assert_true (kept);
  test_remove_tree (dir);
}

static void
test_fits_sample_data (void)
{
  const char *data_dir = g_getenv ("SHARPSKY_DATA");
  if (data_dir == NULL)
    {
      g_test_skip ("SHARPSKY_DATA not set");
      return;
    }
  /* float64 solar image with a BLANK card on float data: BLANK ignored */
  g_autofree char *aia = g_build_filename (data_dir, "aia_171_level1.fits", NULL);
  GError *error = NULL;
  g_autoptr (SsImage) image = ss_fits_read (aia, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpint (image->width, ==, 128);
  g_assert_cmpint (image->height, ==, 128);
  g_assert_nonnull (image->header);
  g_assert_cmpuint (image->header->cards->len, >, 100);
}

/* ------------------------------------------------------------------------ */
/* FITS: bad inputs                                                          */

static void
expect_any_read_error (const char *path, const char *fragment)
{
  GError *error = NULL;
  SsImage *image = ss_fits_read (path, NULL, &error);
  g_assert_null (image);
  assert_error_names_file (error, path);
  if (fragment && strstr (error->message, fragment) == NULL)
    g_error ("'%s' not in: %s", fragment, error->message);
  g_clear_error (&error);
  /* the format-sniffing loader fails the same way */
  image = ss_image_load (path, NULL, &error);
  g_assert_null (image);
  assert_error_names_file (error, path);
  g_clear_error (&error);
}


/* CPU seconds this process has used (every thread). */
static double
process_cpu_seconds (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void
test_fits_bad_inputs (void)
{
  g_autofree char *dir = scratch_dir ();
  g_autofree char *missing = g_build_filename (dir, "missing.fits", NULL);
  g_autofree char *empty = g_build_filename (dir, "empty.fits", NULL);
  g_autofree char *text = g_build_filename (dir, "text.fits", NULL);
  g_autofree char *good = g_build_filename (dir, "good.fits", NULL);
  g_autofree char *short_header = g_build_filename (dir, "short-header.fits", NULL);
  g_autofree char *short_data = g_build_filename (dir, "short-data.fits", NULL);
  g_autofree char *zero = g_build_filename (dir, "zero.fits", NULL);
  g_autofree char *nothing = g_build_filename (dir, "nothing.fits", NULL);
  g_autofree char *huge = g_build_filename (dir, "huge.fits", NULL);

  expect_any_read_error (missing, "No such file");
  expect_any_read_error (dir, "directory");
  write_bytes (empty, "", 0);
  expect_any_read_error (empty, "empty");
  write_bytes (text, "hello, this is not a FITS file\n", 31);
  expect_any_read_error (text, "not a FITS");

  /* a valid file, then cut inside its header and inside its data */
  int width = 40, height = 30;
  g_autoptr (SsImage) image = random_float_image (width, height, 1);
  test_write_fits_float (good, image->data, width, height, 1, NULL);
  g_autoptr (GBytes) bytes = read_bytes (good);
  gsize cut = g_test_rand_int_range (100, 2800);
  write_bytes (short_header, g_bytes_get_data (bytes, NULL), cut);
  expect_any_read_error (short_header, "truncated header");
  write_bytes (short_data, g_bytes_get_data (bytes, NULL), 2880 + 1200);
  expect_any_read_error (short_data, "truncated: header says 4800 bytes of data, file has 1200");
  GError *error = NULL;
  g_autofree char *description = ss_fits_describe (short_data, &error);
  g_assert_no_error (error);
  g_assert_nonnull (strstr (description, "TRUNCATED: 1200 of 4800 data bytes present"));

  /* A side past an int (2³² + 64: read as 64 by a 32-bit parse) is named
   * as unreadable by the listing, and refused by a read. */
  g_autofree char *wide = g_build_filename (dir, "wide.fits", NULL);
  test_write_image_header (wide, -32, G_GUINT64_CONSTANT (4294967360), 1, 2880);
  g_autofree char *wide_description = ss_fits_describe (wide, &error);
  g_assert_no_error (error);
  g_assert_nonnull (strstr (wide_description, "UNREADABLE: HDU: image dimensions too large "
                                              "(4294967360 x 1 x 1)"));
  expect_any_read_error (wide, "image dimensions too large");

  test_write_image_header (zero, -32, 0, 10, 0);
  expect_any_read_error (zero, "NAXIS1 = 0");
  const char *no_image[] = { "SIMPLE  =                    T", "BITPIX  =                    8",
                             "NAXIS   =                    0", NULL };
  test_write_handmade_fits (nothing, no_image, 0);
  expect_any_read_error (nothing, "NAXIS = 0");

  /* 100000 x 100000 float32 claimed by a 5760-byte file: refused from the
   * header alone (an allocation of 40 GB would fail or crawl first). The
   * process's CPU time, not the wall clock: a busy machine must not fail it. */
  test_write_image_header (huge, -32, 100000, 100000, 2880);
  double start = process_cpu_seconds ();
  expect_any_read_error (huge, "header says 40000000000 bytes");
  g_assert_cmpfloat (process_cpu_seconds () - start, <, 2.0);
  test_remove_tree (dir);
}

/* BSCALE and BZERO as numbers scale the stored integers (all zero here, so
 * every value is BZERO); either as a string, which cfitsio would take as
 * absent (values silently unscaled), is refused by name. */
static void
test_fits_scaling_cards (void)
{
  g_autofree char *dir = scratch_dir ();
  g_autofree char *path = g_build_filename (dir, "scaled.fits", NULL);
  double zero = g_test_rand_double_range (-1000, 1000);
  g_autofree char *bscale = g_strdup ("BSCALE  =                  2.0");
  g_autofree char *bzero = g_strdup_printf ("BZERO   = %20.6f", zero);
  const char *cards[] = { "SIMPLE  =                    T", "BITPIX  =                   16",
                          "NAXIS   =                    2", "NAXIS1  =                    5",
                          "NAXIS2  =                    3", bscale, bzero, NULL };
  test_write_handmade_fits (path, cards, 2880);
  g_autoptr (GError) error = NULL;
  g_autoptr (SsImage) image = ss_fits_read (path, NULL, &error);
  g_assert_no_error (error);
  for (int i = 0; i < 15; i++)
    g_assert_cmpfloat_with_epsilon (image->data[i], zero, 1e-3);

  const char *const strings[][2] = { { "BSCALE  = '2.0     '", "BSCALE" },
                                     { "BZERO   = '32768   '", "BZERO" } };
  for (gsize k = 0; k < G_N_ELEMENTS (strings); k++)
    {
      cards[5] = k == 0 ? strings[k][0] : bscale;
      cards[6] = k == 1 ? strings[k][0] : bzero;
      test_write_handmade_fits (path, cards, 2880);
      expect_any_read_error (path, strings[k][1]);
    }
  test_remove_tree (dir);
}

/* A header whose data ARE in the file (a sparse file) but would need more
 * memory than the machine has: refused before allocating, as TOO_LARGE. */
static void
test_fits_too_large_for_memory (void)
{
  g_autofree char *dir = scratch_dir ();
  g_autofree char *path = g_build_filename (dir, "sparse.fits", NULL);
  /* 8-bit pixels, so floats need 4x the file's data bytes: claim half of
   * the available memory in bytes, i.e. twice the memory as floats. */
  guint64 available = ss_mem_available ();
  guint64 side = (guint64) sqrt ((double) available / 2.0) + 1;
  test_write_image_header (path, 8, side, side, 0);
  if (truncate (path, (off_t) (2880 + side * side)) != 0)
    {
      g_test_skip ("cannot make a sparse file here");
      test_remove_tree (dir);
      return;
    }
  GError *error = NULL;
  SsImage *image = ss_fits_read (path, NULL, &error);
  g_assert_null (image);
  g_assert_error (error, SS_ERROR, SS_ERROR_TOO_LARGE);
  assert_error_names_file (error, path);
  g_clear_error (&error);
  test_remove_tree (dir);
}

static void
test_fits_nan_only_is_not_an_io_error (void)
{
  g_autofree char *dir = scratch_dir ();
  g_autofree char *path = g_build_filename (dir, "nan.fits", NULL);
  int width = random_size (1, 20), height = random_size (1, 20);
  g_autofree float *data = g_new (float, width * height);
  for (int i = 0; i < width * height; i++)
    data[i] = NAN;
  test_write_fits_float (path, data, width, height, 1, NULL);
  GError *error = NULL;
  g_autoptr (SsImage) image = ss_fits_read (path, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (ss_image_count_nan (image), ==, (gsize) width * height);
  test_remove_tree (dir);
}

/* ------------------------------------------------------------------------ */
/* Safe outputs                                                              */

static void
test_output_rules (void)
{
  g_autofree char *dir = scratch_dir ();
  g_autofree char *in = g_build_filename (dir, "in.fits", NULL);
  g_autofree char *out = g_build_filename (dir, "out.fits", NULL);
  g_autofree char *symlinked = g_build_filename (dir, "link.fits", NULL);
  g_autofree char *hard = g_build_filename (dir, "hard.fits", NULL);
  g_autofree char *dotted = g_build_filename (dir, ".", "in.fits", NULL);
  g_autoptr (SsImage) image = random_float_image (random_size (2, 30), random_size (2, 30), 1);
  GError *error = NULL;
  g_assert_true (ss_fits_write (image, in, FALSE, NULL, &error));
  g_assert_no_error (error);
  g_autoptr (GBytes) original = read_bytes (in);

  /* the input is never the output: same path, another spelling, a symlink,
   * a hard link */
  const char *inputs[] = { in, NULL };
  g_assert_cmpint (symlink (in, symlinked), ==, 0);
  g_assert_cmpint (link (in, hard), ==, 0);
  const char *same[] = { in, dotted, symlinked, hard };
  for (gsize i = 0; i < G_N_ELEMENTS (same); i++)
    {
      g_assert_false (ss_fits_write (image, same[i], TRUE, inputs, &error));
      assert_error_names_file (error, same[i]);
      g_assert_nonnull (strstr (error->message, "input"));
      g_clear_error (&error);
      g_assert_false (ss_png_write (image, same[i], NULL, TRUE, inputs, &error));
      g_clear_error (&error);
    }
  g_autoptr (GBytes) after = read_bytes (in);
  g_assert_true (g_bytes_equal (original, after));

  /* an existing output is kept without force, replaced with it */
  g_autoptr (SsImage) other = random_float_image (image->width, image->height, 1);
  g_assert_true (ss_fits_write (other, out, FALSE, inputs, &error));
  g_assert_no_error (error);
  g_autoptr (GBytes) before = read_bytes (out);
  g_assert_false (ss_fits_write (image, out, FALSE, inputs, &error));
  assert_error_names_file (error, out);
  g_assert_nonnull (strstr (error->message, "exists"));
  g_clear_error (&error);
  g_autoptr (GBytes) kept = read_bytes (out);
  g_assert_true (g_bytes_equal (before, kept));
  g_assert_true (ss_fits_write (image, out, TRUE, inputs, &error));
  g_assert_no_error (error);
  g_autoptr (SsImage) replaced = ss_fits_read (out, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpmem (replaced->data, ss_image_plane_size (image) * sizeof (float), image->data,
                   ss_image_plane_size (image) * sizeof (float));

  /* a directory as the output, and an output in a missing directory */
  g_assert_false (ss_output_check (dir, TRUE, NULL, &error));
  g_assert_error (error, SS_ERROR, SS_ERROR_IO);
  g_clear_error (&error);
  g_autofree char *nowhere = g_build_filename (dir, "no-such-dir", "x.fits", NULL);
  g_assert_false (ss_fits_write (image, nowhere, FALSE, NULL, &error));
  assert_error_names_file (error, nowhere);
  g_clear_error (&error);
  g_assert_cmpuint (test_count_entries (dir), ==, 4); /* in, out, link, hard: no temporaries */
  test_remove_tree (dir);
}

static void
test_output_unwritable_directory (void)
{
  g_autofree char *dir = scratch_dir ();
  g_autofree char *locked = g_build_filename (dir, "locked", NULL);
  g_autofree char *out = g_build_filename (locked, "out.fits", NULL);
  g_assert_cmpint (g_mkdir (locked, 0500), ==, 0);
  if (access (locked, W_OK) == 0)
    {
      /* root ignores permissions; the write-failure test below covers
       * cleanup for root too. */
      g_test_skip ("running as root: a read-only directory is writable");
      test_remove_tree (dir);
      return;
    }
  g_autoptr (SsImage) image = random_float_image (8, 8, 1);
  GError *error = NULL;
  g_assert_false (ss_fits_write (image, out, FALSE, NULL, &error));
  assert_error_names_file (error, out);
  g_assert_nonnull (strstr (error->message, "not writable"));
  g_clear_error (&error);
  SsPngWriteOptions options;
  ss_png_write_options_init (&options);
  g_assert_false (ss_png_write (image, out, &options, FALSE, NULL, &error));
  g_clear_error (&error);
  g_assert_cmpuint (test_count_entries (locked), ==, 0);
  test_remove_tree (dir);
}

/* The temporaries being written are what a signal handler removes before
 * the process ends (ss_output_remove_temporaries): an uncommitted one goes,
 * a committed output and an aborted one's name are left alone. */
static void
test_output_temporaries_removed (void)
{
  g_autofree char *dir = scratch_dir ();
  g_autofree char *path = g_build_filename (dir, "out.fits", NULL);
  g_autofree char *done = g_build_filename (dir, "done.fits", NULL);
  g_autofree char *pending = ss_output_temp_path (path);
  g_autofree char *committed = ss_output_temp_path (done);
  write_bytes (pending, "x", 1);
  write_bytes (committed, "y", 1);
  g_autoptr (GError) error = NULL;
  g_assert_true (ss_output_commit (committed, done, &error));
  g_assert_no_error (error);
  ss_output_remove_temporaries ();
  g_assert_false (g_file_test (pending, G_FILE_TEST_EXISTS));
  g_assert_true (g_file_test (done, G_FILE_TEST_EXISTS));
  /* Written again under the old temporary's name, it is no longer one. */
  write_bytes (committed, "z", 1);
  ss_output_remove_temporaries ();
  g_assert_true (g_file_test (committed, G_FILE_TEST_EXISTS));
  ss_output_abort (pending);
  test_remove_tree (dir);
}

/* A write that fails half way (file size limit, as a full disk would):
 * error, the existing target untouched, no temporary left behind. Works for
 * root as well. */
static void
test_output_write_failure_cleans_up (void)
{
  g_autofree char *dir = scratch_dir ();
  g_autofree char *fits_out = g_build_filename (dir, "out.fits", NULL);
  g_autofree char *png_out = g_build_filename (dir, "out.png", NULL);
  write_bytes (fits_out, "old contents", 12);
  write_bytes (png_out, "old contents", 12);
  g_autoptr (SsImage) image = random_float_image (300, 300, 1); /* 360 kB */

  struct rlimit saved, limited;
  g_assert_cmpint (getrlimit (RLIMIT_FSIZE, &saved), ==, 0);
  limited = saved;
  limited.rlim_cur = 64 * 1024;
  void (*old_handler) (int) = signal (SIGXFSZ, SIG_IGN);
  g_assert_cmpint (setrlimit (RLIMIT_FSIZE, &limited), ==, 0);

  GError *fits_error = NULL, *png_error = NULL;
  gboolean fits_ok = ss_fits_write (image, fits_out, TRUE, NULL, &fits_error);
  SsPngWriteOptions options;
  ss_png_write_options_init (&options);
  options.bit_depth = 16;
  /* noise does not compress: well over the limit */
  gboolean png_ok = ss_png_write (image, png_out, &options, TRUE, NULL, &png_error);

  setrlimit (RLIMIT_FSIZE, &saved);
  signal (SIGXFSZ, old_handler);

  g_assert_false (fits_ok);
  assert_error_names_file (fits_error, fits_out);
  g_clear_error (&fits_error);
  g_assert_false (png_ok);
  assert_error_names_file (png_error, png_out);
  g_clear_error (&png_error);
  g_autoptr (GBytes) fits_kept = read_bytes (fits_out);
  g_autoptr (GBytes) png_kept = read_bytes (png_out);
  g_assert_cmpmem (g_bytes_get_data (fits_kept, NULL), g_bytes_get_size (fits_kept), "old contents", 12);
  g_assert_cmpmem (g_bytes_get_data (png_kept, NULL), g_bytes_get_size (png_kept), "old contents", 12);
  g_assert_cmpuint (test_count_entries (dir), ==, 2);
  test_remove_tree (dir);
}

/* ------------------------------------------------------------------------ */
/* PNG                                                                       */

static SsImage *
ramp_image (int width, int height, int planes)
{
  SsImage *image = new_image (width, height, planes);
  gsize n = ss_image_plane_size (image) * planes;
  /* a shuffled ramp: every value of [0, 1] in steps, min 0 and max 1 */
  for (gsize i = 0; i < n; i++)
    image->data[i] = (float) ((double) ((i * 7919) % n) / (double) (n - 1));
  return image;
}

static void
check_png_roundtrip (const char *dir, int depth, int planes)
{
  g_autofree char *path = g_build_filename (dir, "ramp.png", NULL);
  int width = random_size (2, 90), height = random_size (2, 70);
  g_autoptr (SsImage) image = ramp_image (width, height, planes);
  SsPngWriteOptions options;
  ss_png_write_options_init (&options);
  options.bit_depth = depth;
  GError *error = NULL;
  g_assert_true (ss_png_write (image, path, &options, TRUE, NULL, &error));
  g_assert_no_error (error);
  g_autoptr (SsImage) read = ss_png_read (path, &error);
  g_assert_no_error (error);
  g_assert_cmpint (read->width, ==, width);
  g_assert_cmpint (read->height, ==, height);
  g_assert_cmpint (read->planes, ==, planes);
  double step = depth == 16 ? 1.0 / 65535.0 : 1.0 / 255.0;
  gsize n = ss_image_plane_size (image) * planes;
  double worst = 0.0;
  for (gsize i = 0; i < n; i++)
    worst = MAX (worst, fabs ((double) read->data[i] - image->data[i]));
  /* rounding to the nearest level: half a level (the brief allows a level) */
  double bound = 0.5 * step + 1e-7;
  g_test_message ("PNG %d-bit, %d plane(s): worst error %.3g (bound %.3g)", depth, planes, worst, bound);
  g_assert_cmpfloat (worst, <=, bound);

  /* without the flip the rows come back upside down */
  options.flip_vertical = FALSE;
  g_assert_true (ss_png_write (image, path, &options, TRUE, NULL, &error));
  g_autoptr (SsImage) flipped = ss_png_read (path, &error);
  g_assert_no_error (error);
  for (int y = 0; y < height; y++)
    for (int x = 0; x < width; x++)
      g_assert_cmpfloat (fabs (flipped->data[(gsize) (height - 1 - y) * width + x]
                               - image->data[(gsize) y * width + x]), <=, step);
  g_unlink (path);
}

static void
test_png_roundtrip (void)
{
  g_autofree char *dir = scratch_dir ();
  check_png_roundtrip (dir, 8, 1);
  check_png_roundtrip (dir, 16, 1);
  check_png_roundtrip (dir, 8, 3);
  check_png_roundtrip (dir, 16, 3);
  test_remove_tree (dir);
}

/* Writes a PNG with libpng directly: SAMPLES are the stored samples, row 0
 * at the top, CHANNELS per pixel (palette: indices into PALETTE). */
static void
write_raw_png (const char *path, int width, int height, int colour_type, int depth,
               const guint16 *samples, int channels, const png_color *palette, int palette_size)
{
  FILE *file = g_fopen (path, "wb");
  g_assert_nonnull (file);
  png_structp png = png_create_write_struct (PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
  png_infop info = png_create_info_struct (png);
  if (setjmp (png_jmpbuf (png)))
    g_error ("libpng failed in the test itself");
  png_init_io (png, file);
  png_set_IHDR (png, info, width, height, depth, colour_type, PNG_INTERLACE_ADAM7,
                PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  if (palette)
    png_set_PLTE (png, info, palette, palette_size);
  png_write_info (png, info);
  if (depth < 8)
    png_set_packing (png);
  int bytes = depth == 16 ? 2 : 1;
  g_autofree guchar *rows = g_new0 (guchar, (gsize) height * width * channels * bytes);
  g_autofree png_bytep *pointers = g_new (png_bytep, height);
  for (int y = 0; y < height; y++)
    {
      pointers[y] = rows + (gsize) y * width * channels * bytes;
      for (int i = 0; i < width * channels; i++)
        {
          guint16 s = samples[(gsize) y * width * channels + i];
          if (bytes == 2)
            pointers[y][2 * i] = s >> 8, pointers[y][2 * i + 1] = s & 0xff;
          else
            pointers[y][i] = (guchar) s;
        }
    }
  png_write_image (png, pointers);
  png_write_end (png, NULL);
  png_destroy_write_struct (&png, &info);
  fclose (file);
}

typedef struct {
  const char *label;
  int colour_type;
  int depth;
  int channels;     /* stored */
  int planes;       /* expected */
} PngCase;

static void
test_png_read_colour_types (void)
{
  static const PngCase cases[] = {
    { "grey 8", PNG_COLOR_TYPE_GRAY, 8, 1, 1 },
    { "grey 16", PNG_COLOR_TYPE_GRAY, 16, 1, 1 },
    { "grey 4", PNG_COLOR_TYPE_GRAY, 4, 1, 1 },
    { "grey+alpha 8", PNG_COLOR_TYPE_GRAY_ALPHA, 8, 2, 1 },
    { "grey+alpha 16", PNG_COLOR_TYPE_GRAY_ALPHA, 16, 2, 1 },
    { "RGB 8", PNG_COLOR_TYPE_RGB, 8, 3, 3 },
    { "RGB 16", PNG_COLOR_TYPE_RGB, 16, 3, 3 },
    { "RGBA 8", PNG_COLOR_TYPE_RGB_ALPHA, 8, 4, 3 },
    { "RGBA 16", PNG_COLOR_TYPE_RGB_ALPHA, 16, 4, 3 },
    { "palette 8", PNG_COLOR_TYPE_PALETTE, 8, 1, 3 },
    { "palette 2", PNG_COLOR_TYPE_PALETTE, 2, 1, 3 },
  };
  g_autofree char *dir = scratch_dir ();
  g_autofree char *path = g_build_filename (dir, "colour.png", NULL);
  for (gsize k = 0; k < G_N_ELEMENTS (cases); k++)
    {
      const PngCase *c = &cases[k];
      int width = random_size (1, 40), height = random_size (1, 30);
      gsize count = (gsize) width * height * c->channels;
      g_autofree guint16 *samples = g_new (guint16, count);
      png_color palette[256];
      int palette_size = c->colour_type == PNG_COLOR_TYPE_PALETTE ? 1 << c->depth : 0;
      for (int i = 0; i < palette_size; i++)
        palette[i] = (png_color) { g_test_rand_int_range (0, 256), g_test_rand_int_range (0, 256),
                                   g_test_rand_int_range (0, 256) };
      int top = c->colour_type == PNG_COLOR_TYPE_PALETTE ? palette_size : 1 << c->depth;
      for (gsize i = 0; i < count; i++)
        samples[i] = (guint16) g_test_rand_int_range (0, top);
      write_raw_png (path, width, height, c->colour_type, c->depth, samples, c->channels,
                     c->colour_type == PNG_COLOR_TYPE_PALETTE ? palette : NULL, palette_size);

      GError *error = NULL;
      g_autoptr (SsImage) image = ss_image_load (path, NULL, &error);
      g_assert_no_error (error);
      g_assert_cmpint (image->planes, ==, c->planes);
      gsize plane_size = ss_image_plane_size (image);
      double max = (1 << c->depth) - 1;
      for (int y = 0; y < height; y++)
        for (int x = 0; x < width; x++)
          for (int p = 0; p < c->planes; p++)
            {
              const guint16 *pixel = samples + ((gsize) y * width + x) * c->channels;
              double expected;
              if (c->colour_type == PNG_COLOR_TYPE_PALETTE)
                {
                  const png_color *entry = &palette[pixel[0]];
                  expected = (p == 0 ? entry->red : p == 1 ? entry->green : entry->blue) / 255.0;
                }
              else if (c->depth < 8)
                expected = pixel[0] / max; /* widened by bit replication: exact */
              else
                expected = pixel[p] / max;
              /* PNG top row = the image's last row */
              float got = image->data[p * plane_size + (gsize) (height - 1 - y) * width + x];
              if (fabs (got - expected) > 1e-6)
                g_error ("%s: pixel (%d,%d) plane %d: got %g, expected %g", c->label, x, y, p, got, expected);
            }
    }
  test_remove_tree (dir);
}

static void
test_png_bad_inputs (void)
{
  g_autofree char *dir = scratch_dir ();
  g_autofree char *good = g_build_filename (dir, "good.png", NULL);
  g_autofree char *cut = g_build_filename (dir, "cut.png", NULL);
  g_autofree char *fake = g_build_filename (dir, "fake.png", NULL);
  g_autofree char *missing = g_build_filename (dir, "missing.png", NULL);
  g_autoptr (SsImage) image = random_float_image (50, 40, 1);
  GError *error = NULL;
  g_assert_true (ss_png_write (image, good, NULL, FALSE, NULL, &error));
  g_assert_no_error (error);
  g_autoptr (GBytes) bytes = read_bytes (good);
  gsize length = g_bytes_get_size (bytes);
  write_bytes (cut, g_bytes_get_data (bytes, NULL), g_test_rand_int_range (9, (int) length - 20));
  static const char fake_png[] = "\x89PNG\r\n\x1a\n garbage after the signature";
  write_bytes (fake, fake_png, sizeof fake_png - 1);
  const char *bad[] = { cut, fake, missing, dir };
  for (gsize i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      SsImage *read = ss_png_read (bad[i], &error);
      g_assert_null (read);
      assert_error_names_file (error, bad[i]);
      g_clear_error (&error);
    }
  SsPngWriteOptions options;
  ss_png_write_options_init (&options);
  options.bit_depth = 12;
  g_autofree char *out = g_build_filename (dir, "out.png", NULL);
  g_assert_false (ss_png_write (image, out, &options, FALSE, NULL, &error));
  g_assert_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  g_assert_false (g_file_test (out, G_FILE_TEST_EXISTS));
  test_remove_tree (dir);
}

static void
test_load_by_content (void)
{
  g_autofree char *dir = scratch_dir ();
  g_autofree char *png_named_fits = g_build_filename (dir, "really-a-png.fits", NULL);
  g_autofree char *fits_named_png = g_build_filename (dir, "really-a-fits.png", NULL);
  g_autoptr (SsImage) image = ramp_image (12, 9, 1);
  GError *error = NULL;
  g_assert_true (ss_png_write (image, png_named_fits, NULL, FALSE, NULL, &error));
  test_write_fits_float (fits_named_png, image->data, 12, 9, 1, NULL);
  g_autoptr (SsImage) a = ss_image_load (png_named_fits, NULL, &error);
  g_assert_no_error (error);
  g_autoptr (SsImage) b = ss_image_load (fits_named_png, NULL, &error);
  g_assert_no_error (error);
  g_assert_null (a->header);      /* it was read as a PNG */
  g_assert_nonnull (b->header);   /* and this one as a FITS */
  g_assert_cmpmem (b->data, 12 * 9 * sizeof (float), image->data, 12 * 9 * sizeof (float));
  test_remove_tree (dir);
}

/* ------------------------------------------------------------------------ */
/* Stretch                                                                   */

static int
compare_floats (const void *a, const void *b)
{
  float x = *(const float *) a, y = *(const float *) b;
  return (x > y) - (x < y);
}

/* The oracle: sort, then interpolate between order statistics. */
static double
sorted_percentile (const float *sorted, gsize n, double percent)
{
  double position = percent / 100.0 * (double) (n - 1);
  gsize below = (gsize) floor (position);
  if (below + 1 >= n)
    return sorted[n - 1];
  return sorted[below] + (position - below) * ((double) sorted[below + 1] - sorted[below]);
}

static void
test_stretch (void)
{
  gsize n = (gsize) random_size (50, 5000);
  g_autofree float *in = g_new (float, n);
  g_autofree float *out = g_new (float, n);
  for (gsize i = 0; i < n; i++)
    {
      /* some NaN, many repeats (like a flat sky), the rest continuous */
      int kind = g_test_rand_int_range (0, 10);
      in[i] = kind == 0 ? NAN
              : kind < 5 ? (float) g_test_rand_int_range (-50, 200)
              : (float) g_test_rand_double_range (-50.0, 200.0);
    }
  g_autofree float *sorted = g_new (float, n);
  gsize finite = 0;
  for (gsize i = 0; i < n; i++)
    if (!isnan (in[i]))
      sorted[finite++] = in[i];
  qsort (sorted, finite, sizeof (float), compare_floats);

  double low_percent = g_test_rand_double_range (0.0, 40.0), high_percent = g_test_rand_double_range (60.0, 100.0);
  double low = 0.0, high = 0.0;
  ss_stretch_apply (in, out, n, SS_STRETCH_LINEAR, low_percent, high_percent, &low, &high);
  g_assert_cmpfloat_with_epsilon (low, sorted_percentile (sorted, finite, low_percent), 1e-9);
  g_assert_cmpfloat_with_epsilon (high, sorted_percentile (sorted, finite, high_percent), 1e-9);
  for (gsize i = 0; i < n; i++)
    {
      double expected = isnan (in[i]) ? 0.0 : CLAMP ((in[i] - low) / (high - low), 0.0, 1.0);
      g_assert_cmpfloat_with_epsilon (out[i], expected, 1e-6);
    }

  /* 0 and 100 are exactly min and max; each stretch maps them to 0 and 1 and
   * is increasing in between */
  const SsStretch stretches[] = { SS_STRETCH_LINEAR, SS_STRETCH_LOG, SS_STRETCH_SQRT, SS_STRETCH_ASINH };
  for (gsize s = 0; s < G_N_ELEMENTS (stretches); s++)
    {
      ss_stretch_apply (in, out, n, stretches[s], 0.0, 100.0, &low, &high);
      g_assert_cmpfloat (low, ==, sorted[0]);
      g_assert_cmpfloat (high, ==, sorted[finite - 1]);
      /* A float in [0, 1] resolves steps of about 6e-8 near 1: two inputs
       * closer than that share of the range (random doubles rounded to
       * floats can be a few ulps apart) may map to the same value, never
       * to the wrong order. CI once drew two that did (0.908846617). */
      double apart = 1e-4 * (sorted[finite - 1] - sorted[0]);
      for (gsize i = 0; i < n; i++)
        for (gsize j = 0; j < MIN (n, (gsize) 50); j++)
          if (!isnan (in[i]) && !isnan (in[j]) && in[i] < in[j])
            {
              g_assert_cmpfloat (out[i], <=, out[j]);
              if (in[j] - in[i] > apart)
                g_assert_cmpfloat (out[i], <, out[j]);
            }
      for (gsize i = 0; i < n; i++)
        {
          if (in[i] == sorted[0] || isnan (in[i]))
            g_assert_cmpfloat (out[i], ==, 0.0f);
          if (in[i] == sorted[finite - 1])
            g_assert_cmpfloat_with_epsilon (out[i], 1.0f, 1e-6);
        }
    }
  /* the sqrt stretch at a known point */
  float two[3] = { 0.0f, 0.25f, 1.0f }, mapped[3];
  ss_stretch_apply (two, mapped, 3, SS_STRETCH_SQRT, 0.0, 100.0, NULL, NULL);
  g_assert_cmpfloat_with_epsilon (mapped[1], 0.5f, 1e-6);

  SsStretch stretch;
  GError *error = NULL;
  g_assert_true (ss_stretch_from_string ("ASinh", &stretch, &error));
  g_assert_cmpint (stretch, ==, SS_STRETCH_ASINH);
  g_assert_false (ss_stretch_from_string ("cubic", &stretch, &error));
  g_assert_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
}

/* ------------------------------------------------------------------------ */
/* Header cards                                                              */

static void
test_header_cards (void)
{
  g_autoptr (SsHeader) header = ss_header_new ();
  ss_header_add_card (header, "OBJECT  = 'O''Brien field'     / with a quote");
  ss_header_add_card (header, "EXPTIME =              1.5D+02 / Fortran exponent");
  ss_header_add_card (header, "COMMENT   OBJECT  = 'not a value'");
  g_autofree char *object = ss_header_get_string (header, "object");
  g_assert_cmpstr (object, ==, "O'Brien field");
  double exptime = 0.0;
  g_assert_true (ss_header_get_double (header, "EXPTIME", &exptime));
  g_assert_cmpfloat (exptime, ==, 150.0);
  g_assert_false (ss_header_get_double (header, "OBJECT", &exptime));
  g_assert_null (ss_header_get_string (header, "COMMENT"));

  double value = g_test_rand_double_range (-1e6, 1e6);
  ss_header_set_double (header, "GAIN", value, "e-/ADU");
  ss_header_set_double (header, "GAIN", value * 2, "e-/ADU");
  ss_header_set_string (header, "FILTER", "It's R", NULL);
  double back = 0.0;
  g_assert_true (ss_header_get_double (header, "GAIN", &back));
  g_assert_cmpfloat (back, ==, value * 2);       /* %.17G: exact */
  g_assert_cmpuint (header->cards->len, ==, 5);  /* replaced, not added */
  g_autofree char *filter = ss_header_get_string (header, "FILTER");
  g_assert_cmpstr (filter, ==, "It's R");

  const char *structural[] = { "BITPIX  =                  -32", "NAXIS3  =                    4",
                               "BZERO   =                32768", "ZCMPTYPE= 'RICE_1  '",
                               "ZTILE1  =                  100", "CHECKSUM= 'abc'", "END" };
  const char *kept[] = { "OBJECT  = 'x'", "NAXISFOO=                    1", "ZD      =                 12.5",
                         "CTYPE1  = 'RA---TAN'", "HISTORY BITPIX", "HIERARCH ESO BITPIX = 3" };
  for (gsize i = 0; i < G_N_ELEMENTS (structural); i++)
    g_assert_true (ss_header_card_is_structural (structural[i]));
  for (gsize i = 0; i < G_N_ELEMENTS (kept); i++)
    g_assert_false (ss_header_card_is_structural (kept[i]));

  g_autoptr (SsHeader) copy = ss_header_copy (header);
  ss_header_add_history (copy, "x=%d", 3);
  g_assert_cmpuint (copy->cards->len, ==, header->cards->len);
  g_assert_cmpuint (copy->history->len, ==, 1);
  g_assert_cmpuint (header->history->len, ==, 0);

  /* Removing takes every valued card of the keyword, no comment naming it. */
  ss_header_add_card (copy, "FILTER  = 'again'");
  guint before = copy->cards->len;
  g_assert_cmpuint (ss_header_remove (copy, "filter"), ==, 2);
  g_assert_cmpuint (copy->cards->len, ==, before - 2);
  g_assert_null (ss_header_get_string (copy, "FILTER"));
  g_assert_cmpuint (ss_header_remove (copy, "COMMENT"), ==, 0);
  g_assert_cmpuint (ss_header_remove (copy, "FILTER"), ==, 0);
}

/* ---- the listing of a file's HDUs (the app's HDU chooser) ------------------ */

typedef struct {
  const char *name;        /* EXTNAME, or NULL */
  int bitpix;
  int naxis;               /* 0: no pixels; -1: a binary table */
  long axes[4];
  gboolean compressed;     /* written tile-compressed (Rice) */
} ListedHdu;

/* Writes HDU (pixels: a ramp, or nothing) at the end of FITS. */
static void
write_listed_hdu (fitsfile *fits, const ListedHdu *hdu)
{
  int status = 0;
  if (hdu->naxis < 0)
    {
      char *names[] = { "FLUX" }, *forms[] = { "1E" }, *units[] = { "" };
      fits_create_tbl (fits, BINARY_TBL, 2, 1, names, forms, units, (char *) hdu->name, &status);
      test_check_cfitsio (status);
      return;
    }
  fits_set_compression_type (fits, hdu->compressed ? RICE_1 : 0, &status);
  fits_create_img (fits, hdu->bitpix, hdu->naxis, (long *) hdu->axes, &status);
  if (hdu->name != NULL)
    fits_write_key (fits, TSTRING, "EXTNAME", (void *) hdu->name, NULL, &status);
  LONGLONG n = hdu->naxis > 0 ? 1 : 0;
  for (int i = 0; i < hdu->naxis; i++)
    n *= hdu->axes[i];
  if (n > 0)
    {
      g_autofree int *ramp = g_new (int, n);
      for (LONGLONG i = 0; i < n; i++)
        ramp[i] = (int) (i % 100);
      fits_write_img (fits, TINT, 1, n, ramp, &status);
    }
  fits_set_compression_type (fits, 0, &status);
  test_check_cfitsio (status);
}

static void
test_fits_list_hdus (void)
{
  g_autofree char *dir = test_scratch_dir ("sharpsky-list-XXXXXX");
  g_autofree char *path = g_build_filename (dir, "mef.fits", NULL);
  long w = g_test_rand_int_range (2, 40), h = g_test_rand_int_range (2, 40);
  long planes = g_test_rand_int_range (2, 7), a = g_test_rand_int_range (2, 4);
  /* An empty primary; named images of two pixel types; a table; a cube; a
   * nameless 4-D image; a tile-compressed image. */
  const ListedHdu written[] = {
    { NULL, BYTE_IMG, 0, { 0 }, FALSE },
    { "SCI", SHORT_IMG, 2, { w, h }, FALSE },
    { "ERR", FLOAT_IMG, 2, { w + 1, h + 2 }, FALSE },
    { "CATALOG", 0, -1, { 0 }, FALSE },
    { "CUBE", LONG_IMG, 3, { h, w, planes }, FALSE },
    { NULL, DOUBLE_IMG, 4, { w, 3, planes, a }, FALSE },
    { "RICE", LONG_IMG, 2, { 3 * w, h }, TRUE },   /* compressed: data in its own type */
  };
  fitsfile *fits = NULL;
  int status = 0;
  fits_create_diskfile (&fits, path, &status);
  test_check_cfitsio (status);
  for (gsize i = 0; i < G_N_ELEMENTS (written); i++)
    write_listed_hdu (fits, &written[i]);
  fits_close_file (fits, &status);
  test_check_cfitsio (status);

  GError *error = NULL;
  g_autoptr (GPtrArray) hdus = ss_fits_list_hdus (path, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (hdus->len, ==, G_N_ELEMENTS (written));
  for (guint i = 0; i < hdus->len; i++)
    {
      const SsFitsHdu *hdu = g_ptr_array_index (hdus, i);
      const ListedHdu *want = &written[i];
      g_test_message ("HDU %d %s %s %d: %" G_GINT64_FORMAT " x %" G_GINT64_FORMAT " x %"
                      G_GINT64_FORMAT, hdu->number, hdu->name ? hdu->name : "-", hdu->kind,
                      hdu->bitpix, hdu->width, hdu->height, hdu->planes);
      g_assert_cmpint (hdu->number, ==, (int) i);
      g_assert_cmpstr (hdu->name, ==, want->name);
      g_assert_cmpint (hdu->has_image, ==, want->naxis > 0);
      g_assert_cmpstr (hdu->kind, ==, want->naxis < 0 ? "binary table"
                                      : want->compressed ? "compressed image" : "image");
      if (!hdu->has_image)
        continue;
      g_assert_cmpint (hdu->bitpix, ==, want->bitpix);  /* ZBITPIX when compressed */
      g_assert_cmpint (hdu->width, ==, want->axes[0]);
      g_assert_cmpint (hdu->height, ==, want->axes[1]);
      gint64 want_planes = 1;
      for (int k = 2; k < want->naxis; k++)
        want_planes *= want->axes[k];
      g_assert_cmpint (hdu->planes, ==, want_planes);

      /* What the listing says is what the reader reads at that number. */
      g_autofree char *number = g_strdup_printf ("%d", hdu->number);
      SsFitsReadOptions options = { number, -1 };
      g_autoptr (SsImage) image = ss_fits_read (path, &options, &error);
      g_assert_no_error (error);
      g_assert_cmpint (image->width, ==, hdu->width);
      g_assert_cmpint (image->height, ==, hdu->height);
      g_assert_cmpint (image->planes, ==, hdu->planes);
    }

  /* The first with pixels is what the reader reads by default. */
  g_autoptr (SsImage) first = ss_fits_read (path, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpint (first->width, ==, w);
  g_assert_cmpint (first->height, ==, h);

  /* Headers only: a file whose last HDU lost its data is still listed in
   * full, though that HDU cannot be read. */
  gsize length = 0;
  g_autofree char *bytes = NULL;
  g_assert_true (g_file_get_contents (path, &bytes, &length, NULL));
  g_autofree char *cut = g_build_filename (dir, "cut.fits", NULL);
  const ListedHdu big = { "BIG", FLOAT_IMG, 2, { 60, 50 }, FALSE };  /* 12,000 bytes of data */
  fits_open_diskfile (&fits, path, READWRITE, &status);
  fits_movabs_hdu (fits, (int) G_N_ELEMENTS (written), NULL, &status);
  write_listed_hdu (fits, &big);
  fits_close_file (fits, &status);
  test_check_cfitsio (status);
  g_free (bytes);
  g_assert_true (g_file_get_contents (path, &bytes, &length, NULL));
  g_assert_true (g_file_set_contents (cut, bytes, (gssize) length - 2 * 2880, NULL));
  g_autoptr (GPtrArray) listed = ss_fits_list_hdus (cut, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (listed->len, ==, G_N_ELEMENTS (written) + 1);
  const SsFitsHdu *last = g_ptr_array_index (listed, listed->len - 1);
  g_assert_cmpstr (last->name, ==, "BIG");
  g_assert_true (last->has_image);
  g_assert_cmpint (last->width, ==, 60);
  g_assert_cmpint (last->height, ==, 50);
  SsFitsReadOptions options = { "BIG", -1 };
  g_assert_null (ss_fits_read (cut, &options, &error));
  g_assert_nonnull (error);
  g_test_message ("truncated: %s", error->message);
  g_clear_error (&error);
  test_remove_tree (dir);
}

/* ------------------------------------------------------------------------ */
/* Output formats by name; gzip output                                       */

/* Whether the tests can run sharpsky-cli (meson sets SHARPSKY_CLI); the
 * engine's part of a test runs either way. */
static gboolean
cli_present (void)
{
  if (cli_built ())
    return TRUE;
  g_test_message ("SHARPSKY_CLI is not set to the built sharpsky-cli: its checks are left out");
  return FALSE;
}

/* An image of positive values (a sky, for the CLI's real-image path). */
static SsImage *
random_sky_image (int width, int height, int planes)
{
  SsImage *image = new_image (width, height, planes);
  gsize n = ss_image_plane_size (image) * planes;
  for (gsize i = 0; i < n; i++)
    image->data[i] = (float) g_test_rand_double_range (10.0, 1000.0);
  return image;
}

static gboolean
starts_like_gzip (const char *path)
{
  g_autoptr (GBytes) bytes = read_bytes (path);
  gsize size = 0;
  const guchar *start = g_bytes_get_data (bytes, &size);
  return size >= 2 && start[0] == 0x1f && start[1] == 0x8b;
}

/* The one rule for output names (ss_output_format_from_name), which the
 * CLI, the app's export and ss_fits_write all ask: every case it decides. */
static void
check_output_names (void)
{
  static const struct {
    const char *name;
    SsOutputFormat format;
  } accepted[] = {
    { "a.fits", SS_OUTPUT_FORMAT_FITS }, { "dir/b.FIT", SS_OUTPUT_FORMAT_FITS },
    { "c.Fts", SS_OUTPUT_FORMAT_FITS }, { "c2.fit", SS_OUTPUT_FORMAT_FITS },
    { "c3.fts", SS_OUTPUT_FORMAT_FITS }, { "C4.FITS", SS_OUTPUT_FORMAT_FITS },
    { "d.fits.gz", SS_OUTPUT_FORMAT_FITS_GZIP }, { "d2.fit.gz", SS_OUTPUT_FORMAT_FITS_GZIP },
    { "d3.fts.gz", SS_OUTPUT_FORMAT_FITS_GZIP }, { "D4.Fits.GZ", SS_OUTPUT_FORMAT_FITS_GZIP },
    { "E.FTS.GZ", SS_OUTPUT_FORMAT_FITS_GZIP }, { "f.png", SS_OUTPUT_FORMAT_PNG },
    { "G.PNG", SS_OUTPUT_FORMAT_PNG }, { "dir.fits/h.png", SS_OUTPUT_FORMAT_PNG },
    /* the last suffix decides */
    { "i.png.fits", SS_OUTPUT_FORMAT_FITS }, { "j.fits.png", SS_OUTPUT_FORMAT_PNG },
  };
  for (gsize i = 0; i < G_N_ELEMENTS (accepted); i++)
    {
      SsOutputFormat format = SS_OUTPUT_FORMAT_PNG + 1;
      GError *error = NULL;
      g_assert_true (ss_output_format_from_name (accepted[i].name, &format, &error));
      g_assert_no_error (error);
      g_assert_cmpint (format, ==, accepted[i].format);
      g_assert_true (ss_output_name_is_png (accepted[i].name)
                     == (accepted[i].format == SS_OUTPUT_FORMAT_PNG));
    }
  /* Refused, with what to name instead: fpack's tile compression is known
   * and not written (UNSUPPORTED); the rest give no format (a bare or a
   * PNG's .gz, another suffix, none, a suffix with no stem, no name). */
  static const struct {
    const char *name;
    int code;
    const char *why;
  } refused[] = {
    { "x.fits.fz", SS_ERROR_UNSUPPORTED, "fpack" }, { "x.fz", SS_ERROR_UNSUPPORTED, "fpack" },
    { "X.FITS.FZ", SS_ERROR_UNSUPPORTED, "fpack" },
    { "x.gz", SS_ERROR_INVALID_ARGUMENT, "before .gz" },
    { "x.fz.gz", SS_ERROR_INVALID_ARGUMENT, "before .gz" },
    { "x.png.gz", SS_ERROR_INVALID_ARGUMENT, "PNG" },
    { "x.jpg", SS_ERROR_INVALID_ARGUMENT, "does not say" },
    { "x.fits.bak", SS_ERROR_INVALID_ARGUMENT, "does not say" },
    { "x.fits.", SS_ERROR_INVALID_ARGUMENT, "does not say" },
    { "x.fits/", SS_ERROR_INVALID_ARGUMENT, "does not say" },
    { "noext", SS_ERROR_INVALID_ARGUMENT, "does not say" },
    { ".fits", SS_ERROR_INVALID_ARGUMENT, "does not say" },
    { "dir/.png", SS_ERROR_INVALID_ARGUMENT, "does not say" },
    { "dir/.fits.gz", SS_ERROR_INVALID_ARGUMENT, "before .gz" },
    { "", SS_ERROR_INVALID_ARGUMENT, "no output file" },
  };
  for (gsize i = 0; i < G_N_ELEMENTS (refused); i++)
    {
      SsOutputFormat format;
      GError *error = NULL;
      g_assert_false (ss_output_format_from_name (refused[i].name, &format, &error));
      g_assert_error (error, SS_ERROR, refused[i].code);
      /* No name to look for in the message when there is none (the
       * basename of "" is ".", which every message holds): its "why"
       * checks that it says no output file was given. */
      if (refused[i].name[0] != '\0')
        assert_error_names_file (error, refused[i].name);
      if (strstr (error->message, refused[i].why) == NULL)
        g_error ("%s: no '%s' in: %s", refused[i].name, refused[i].why, error->message);
      g_assert_nonnull (strstr (error->message, ".fits"));   /* the suffixes accepted */
      g_assert_nonnull (strstr (error->message, ".png"));
      g_error_free (error);
      g_assert_false (ss_output_name_is_png (refused[i].name));
    }
  g_assert_false (ss_output_name_is_png (NULL));
}

/* ss_fits_write asks the same rule: FITS bytes go only under a FITS name
 * (a .png, a bare .gz, no suffix were written as FITS before), nothing is
 * written otherwise. */
static void
check_fits_write_names (const char *dir, const SsImage *image)
{
  static const struct {
    const char *name;
    int code;
  } refused[] = {
    { "fits-as.png", SS_ERROR_INVALID_ARGUMENT }, { "bare.gz", SS_ERROR_INVALID_ARGUMENT },
    { "no-suffix", SS_ERROR_INVALID_ARGUMENT }, { "out.fits.fz", SS_ERROR_UNSUPPORTED },
  };
  guint before = test_count_entries (dir);
  for (gsize i = 0; i < G_N_ELEMENTS (refused); i++)
    {
      g_autofree char *path = g_build_filename (dir, refused[i].name, NULL);
      GError *error = NULL;
      g_assert_false (ss_fits_write (image, path, FALSE, NULL, &error));
      g_assert_error (error, SS_ERROR, refused[i].code);
      assert_error_names_file (error, path);
      g_assert_nonnull (strstr (error->message, ".fits"));
      g_error_free (error);
    }
  g_assert_cmpuint (test_count_entries (dir), ==, before);
}

/* deblur and simulate refuse a name that gives no format before any work
 * (exit 2, nothing written), and simulate's .fits.gz is gzip. */
static void
check_cli_output_names (const char *dir, const char *in)
{
  static const char *const bad[] = { "x.jpg", "x.fits.fz", "x.gz", "x.png.gz", "noext" };
  for (gsize i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      g_autofree char *out = g_build_filename (dir, bad[i], NULL);
      CliRun run = RUN_CLI ("deblur", in, "-o", out, "--psf", "gaussian:1");
      g_assert_cmpint (run.status, ==, 2);
      g_assert_nonnull (strstr (run.err, ".fits"));
      g_assert_nonnull (strstr (run.err, ".png"));
      cli_run_clear (&run);
      run = RUN_CLI ("simulate", in, "-o", out, "--psf", "box:3");
      g_assert_cmpint (run.status, ==, 2);
      cli_run_clear (&run);
      g_assert_false (g_file_test (out, G_FILE_TEST_EXISTS));
    }
  g_autofree char *measured = g_build_filename (dir, "measured.FITS.gz", NULL);
  RUN_CLI_OK ("simulate", in, "-o", measured, "--psf", "box:3");
  g_assert_true (starts_like_gzip (measured));
  GError *error = NULL;
  g_autoptr (SsImage) image = ss_fits_read (measured, NULL, &error);
  g_assert_no_error (error);
  g_autofree char *psf = ss_header_get_string (image->header, "SS_PSF");
  g_assert_cmpstr (psf, ==, "box:3");
}

/* The output's name gives its format: FITS (.fits .fit .fts, any case),
 * gzip-compressed FITS (the same + .gz), PNG; anything else is refused
 * rather than written as FITS under a name that says otherwise. */
static void
test_output_format_by_name (void)
{
  check_output_names ();

  g_autofree char *dir = scratch_dir ();
  int width = random_size (8, 40), height = random_size (8, 40);   /* room for the CLI's PSF */
  g_autoptr (SsImage) image = random_sky_image (width, height, 1);
  image->header = ss_header_new ();
  ss_header_set_string (image->header, "OBJECT", "M 31", NULL);
  g_autofree char *gz = g_build_filename (dir, "out.Fits.GZ", NULL);
  GError *error = NULL;
  g_assert_true (ss_fits_write (image, gz, FALSE, NULL, &error));
  g_assert_no_error (error);
  g_assert_true (starts_like_gzip (gz));
  g_assert_cmpuint (test_count_entries (dir), ==, 1);   /* no temporary file left */
  g_autoptr (SsImage) back = read_fits_sized (gz, width, height);
  gsize bytes = ss_image_plane_size (image) * sizeof (float);
  g_assert_cmpmem (back->data, bytes, image->data, bytes);
  g_autofree char *object = ss_header_get_string (back->header, "OBJECT");
  g_assert_cmpstr (object, ==, "M 31");

  /* tile compression is not written: refused, not plain FITS named .fz;
   * nor FITS under a name of another format or of none */
  check_fits_write_names (dir, image);
  g_assert_cmpuint (test_count_entries (dir), ==, 1);

  if (cli_present ())
    {
      g_autofree char *in = g_build_filename (dir, "in.fits", NULL);
      test_write_fits_float (in, image->data, width, height, 1, NULL);
      check_cli_output_names (dir, in);
    }
  test_remove_tree (dir);
}

/* ------------------------------------------------------------------------ */
/* The input's axes kept; PNG planes                                         */

/* The axes of PATH's primary image, into AXES (MAX 9); returns NAXIS. */
static int
read_axes (const char *path, LONGLONG *axes)
{
  fitsfile *fits = NULL;
  int status = 0, naxis = 0;
  fits_open_diskfile (&fits, path, READONLY, &status);
  fits_get_img_dim (fits, &naxis, &status);
  fits_get_img_sizell (fits, 9, axes, &status);
  test_check_cfitsio (status);
  close_fits_checked (fits);
  return naxis;
}

static void
write_float_image_axes (const char *path, const float *data, int naxis, long *axes)
{
  fitsfile *fits = create_fits (path);
  int status = 0;
  LONGLONG count = 1;
  for (int i = 0; i < naxis; i++)
    count *= axes[i];
  fits_create_img (fits, FLOAT_IMG, naxis, axes, &status);
  fits_write_img (fits, TFLOAT, 1, count, (void *) data, &status);
  test_check_cfitsio (status);
  close_fits_checked (fits);
}

/* Reads IN (plane PLANE, -1: all), writes it to OUT and checks OUT has
 * the NAXIS axes EXPECTED and the pixels read. */
static void
check_axes_after_roundtrip (const char *in, int plane, const char *out, int naxis,
                            const LONGLONG *expected)
{
  SsFitsReadOptions options = { NULL, plane };
  GError *error = NULL;
  g_autoptr (SsImage) image = ss_fits_read (in, &options, &error);
  g_assert_no_error (error);
  g_assert_true (ss_fits_write (image, out, TRUE, NULL, &error));
  g_assert_no_error (error);
  LONGLONG axes[9] = { 0 };
  g_assert_cmpint (read_axes (out, axes), ==, naxis);
  for (int i = 0; i < naxis; i++)
    g_assert_cmpint (axes[i], ==, expected[i]);
  g_autoptr (SsImage) back = ss_fits_read (out, NULL, &error);
  g_assert_no_error (error);
  gsize bytes = ss_image_plane_size (image) * image->planes * sizeof (float);
  g_assert_cmpint (back->planes, ==, image->planes);
  g_assert_cmpmem (back->data, bytes, image->data, bytes);
}

/* A PNG shows 1 plane or 3: another count is refused, not cut to plane 0. */
static void
check_png_planes (const char *dir)
{
  g_autofree char *out = g_build_filename (dir, "planes.png", NULL);
  for (int planes = 1; planes <= 5; planes++)
    {
      g_autoptr (SsImage) image = random_sky_image (6, 5, planes);
      GError *error = NULL;
      gboolean written = ss_png_write (image, out, NULL, TRUE, NULL, &error);
      g_assert_cmpint (written, ==, planes == 1 || planes == 3);
      g_assert_cmpint (g_file_test (out, G_FILE_TEST_EXISTS), ==, written);
      if (!written)
        {
          g_assert_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT);
          assert_error_names_file (error, out);
          g_error_free (error);
        }
      g_remove (out);
    }
}

static void
test_fits_axes_kept (void)
{
  g_autofree char *dir = scratch_dir ();
  g_autofree char *in = g_build_filename (dir, "cube4d.fits", NULL);
  g_autofree char *out = g_build_filename (dir, "out.fits", NULL);
  /* at least 8 x 8: the CLI's deblur below needs the PSF to fit in a plane */
  long axes[4] = { random_size (8, 20), random_size (8, 20), random_size (2, 3), random_size (2, 3) };
  g_autoptr (SsImage) cube = random_sky_image (axes[0], axes[1], axes[2] * axes[3]);
  write_float_image_axes (in, cube->data, 4, axes);

  /* every plane: the four axes, not NAXIS3 = their product */
  LONGLONG four[4] = { axes[0], axes[1], axes[2], axes[3] };
  check_axes_after_roundtrip (in, -1, out, 4, four);
  /* one plane picked: an image of two */
  check_axes_after_roundtrip (in, g_test_rand_int_range (0, axes[2] * axes[3]), out, 2, four);
  /* a 1-D spectrum stays 1-D */
  g_autofree char *line = g_build_filename (dir, "line.fits", NULL);
  long length[1] = { random_size (2, 50) };
  g_autoptr (SsImage) spectrum = random_sky_image (length[0], 1, 1);
  write_float_image_axes (line, spectrum->data, 1, length);
  LONGLONG one[1] = { length[0] };
  check_axes_after_roundtrip (line, -1, out, 1, one);

  check_png_planes (dir);
  if (cli_present ())
    {
      g_autofree char *png = g_build_filename (dir, "cube.png", NULL);
      CliRun run = RUN_CLI ("deblur", in, "-o", png, "--psf", "gaussian:1");
      g_assert_cmpint (run.status, ==, 2);
      g_assert_nonnull (strstr (run.err, "--plane"));
      g_assert_false (g_file_test (png, G_FILE_TEST_EXISTS));
      cli_run_clear (&run);
      g_autofree char *deblurred = g_build_filename (dir, "deblurred.fits", NULL);
      RUN_CLI_OK ("deblur", in, "-o", deblurred, "--psf", "gaussian:1", "--iters", "3");
      LONGLONG written[9] = { 0 };
      g_assert_cmpint (read_axes (deblurred, written), ==, 4);
      for (int i = 0; i < 4; i++)
        g_assert_cmpint (written[i], ==, axes[i]);
    }
  test_remove_tree (dir);
}

/* ------------------------------------------------------------------------ */
/* The primary header of a multi-extension file                              */

static guint
count_cards (const GPtrArray *cards, const char *keyword)
{
  guint count = 0;
  for (guint i = 0; i < cards->len; i++)
    count += card_has_keyword (g_ptr_array_index (cards, i), keyword) ? 1 : 0;
  return count;
}

static gboolean
has_card (const GPtrArray *cards, const char *text)
{
  for (guint i = 0; i < cards->len; i++)
    if (strcmp (g_ptr_array_index (cards, i), text) == 0)
      return TRUE;
  return FALSE;
}

/* An empty primary HDU with the observation's cards, then SCI (which sets
 * its own FILTER) and RAW (which says INHERIT = F). */
static void
write_mef_with_primary_cards (const char *path, const float *data, long width, long height)
{
  fitsfile *fits = create_fits (path);
  int status = 0, nextend = 2, no = 0;
  double exptime = 300.0;
  fits_create_img (fits, FLOAT_IMG, 0, NULL, &status);
  fits_write_key (fits, TSTRING, "TELESCOP", "HST", "telescope", &status);
  fits_write_key (fits, TSTRING, "DATE-OBS", "2021-03-04T05:06:07", NULL, &status);
  fits_write_key (fits, TDOUBLE, "EXPTIME", &exptime, "seconds", &status);
  fits_write_key (fits, TSTRING, "FILTER", "F555W", NULL, &status);
  fits_write_key (fits, TINT, "NEXTEND", &nextend, NULL, &status);
  fits_write_history (fits, "a primary history line", &status);
  fits_write_comment (fits, "a primary comment", &status);
  test_check_cfitsio (status);
  append_float_extension (fits, "SCI", data, width, height);
  fits_write_key (fits, TSTRING, "FILTER", "F814W", NULL, &status);
  append_float_extension (fits, "RAW", data, width, height);
  fits_write_key (fits, TLOGICAL, "INHERIT", &no, NULL, &status);
  test_check_cfitsio (status);
  close_fits_checked (fits);
}

/* An image read from an extension keeps the primary header's descriptive
 * cards the extension does not define (INHERIT convention), once each; not
 * the structural, commentary or file-level ones, and none when the
 * extension says INHERIT = F. */
static void
test_fits_primary_cards_inherited (void)
{
  g_autofree char *dir = scratch_dir ();
  g_autofree char *path = g_build_filename (dir, "mef.fits", NULL);
  g_autofree char *out = g_build_filename (dir, "out.fits", NULL);
  int width = random_size (2, 30), height = random_size (2, 30);
  g_autoptr (SsImage) sci = random_float_image (width, height, 1);
  write_mef_with_primary_cards (path, sci->data, width, height);

  g_autoptr (SsImage) image = read_fits_sized (path, width, height);   /* SCI, the first image */
  g_autofree char *telescope = ss_header_get_string (image->header, "TELESCOP");
  g_autofree char *filter = ss_header_get_string (image->header, "FILTER");
  g_autofree char *extname = ss_header_get_string (image->header, "EXTNAME");
  g_autofree char *nextend = ss_header_get_string (image->header, "NEXTEND");
  double exptime = 0.0;
  g_assert_cmpstr (telescope, ==, "HST");
  g_assert_cmpstr (filter, ==, "F814W");   /* the extension's own value wins */
  g_assert_cmpstr (extname, ==, "SCI");
  g_assert_null (nextend);                 /* about the file, not the image */
  g_assert_true (ss_header_get_double (image->header, "EXPTIME", &exptime));
  g_assert_cmpfloat (exptime, ==, 300.0);

  GError *error = NULL;
  g_assert_true (ss_fits_write (image, out, FALSE, NULL, &error));
  g_assert_no_error (error);
  g_autoptr (GPtrArray) cards = read_raw_cards (out);
  static const char *const once[] = { "TELESCOP", "DATE-OBS", "EXPTIME", "FILTER", "EXTNAME" };
  for (gsize i = 0; i < G_N_ELEMENTS (once); i++)
    g_assert_cmpuint (count_cards (cards, once[i]), ==, 1);
  g_assert_cmpuint (count_cards (cards, "NEXTEND"), ==, 0);
  g_assert_cmpuint (count_cards (cards, "INHERIT"), ==, 0);
  g_assert_cmpuint (count_cards (cards, "XTENSION"), ==, 0);
  g_assert_false (has_card (cards, "HISTORY a primary history line"));
  g_assert_false (has_card (cards, "COMMENT a primary comment"));
  g_autoptr (SsImage) back = read_fits_sized (out, width, height);
  g_autofree char *date = ss_header_get_string (back->header, "DATE-OBS");
  g_assert_cmpstr (date, ==, "2021-03-04T05:06:07");

  SsFitsReadOptions raw_options = { "RAW", -1 };
  g_autoptr (SsImage) raw = ss_fits_read (path, &raw_options, &error);
  g_assert_no_error (error);
  g_autofree char *raw_telescope = ss_header_get_string (raw->header, "TELESCOP");
  g_assert_null (raw_telescope);
  test_remove_tree (dir);
}

/* ------------------------------------------------------------------------ */
/* info on a named pipe                                                      */

typedef struct {
  GMainLoop *loop;
  const char *fifo;
  gboolean opened;   /* the command had the FIFO open for reading */
  char *err;
} FifoWatch;

static gboolean
try_fifo_writer (gpointer data)
{
  FifoWatch *watch = data;
  /* Without blocking, opening for writing succeeds only while a reader has
   * the FIFO open or waits in open(): only if the command opened it.
   * Closing at once lets such a reader go on (to an end of file). */
  int fd = open (watch->fifo, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd >= 0)
    {
      watch->opened = TRUE;
      close (fd);
    }
  return G_SOURCE_CONTINUE;
}

static void
command_finished (GObject *source, GAsyncResult *result, gpointer data)
{
  FifoWatch *watch = data;
  GError *error = NULL;
  g_subprocess_communicate_utf8_finish (G_SUBPROCESS (source), result, NULL, &watch->err, &error);
  g_assert_no_error (error);
  g_main_loop_quit (watch->loop);
}

/* `info` refuses a named pipe as deblur does, without opening it: opening
 * one waits for a writer for ever. The test is the writer that would come:
 * should the command open the pipe, the test sees it (and lets it go on). */
static void
test_info_refuses_fifo (void)
{
  g_autofree char *dir = scratch_dir ();
  g_autofree char *fifo = g_build_filename (dir, "pipe.fits", NULL);
  g_assert_cmpint (mkfifo (fifo, 0600), ==, 0);
  GError *error = NULL;
  g_assert_null (ss_fits_describe (fifo, &error));
  g_assert_error (error, SS_ERROR, SS_ERROR_IO);
  g_assert_nonnull (strstr (error->message, "not a regular file"));
  g_clear_error (&error);

  if (cli_present ())
    {
      const char *argv[] = { cli_path (), "info", fifo, NULL };
      g_autoptr (GSubprocess) process = g_subprocess_newv (
        argv, G_SUBPROCESS_FLAGS_STDOUT_SILENCE | G_SUBPROCESS_FLAGS_STDERR_PIPE, &error);
      g_assert_no_error (error);
      FifoWatch watch = { g_main_loop_new (NULL, FALSE), fifo, FALSE, NULL };
      g_subprocess_communicate_utf8_async (process, NULL, NULL, command_finished, &watch);
      guint poll = g_timeout_add (10, try_fifo_writer, &watch);
      g_main_loop_run (watch.loop);
      g_source_remove (poll);
      g_main_loop_unref (watch.loop);
      g_test_message ("stderr: %s", watch.err);
      g_assert_false (watch.opened);
      g_assert_true (g_subprocess_get_if_exited (process));
      g_assert_cmpint (g_subprocess_get_exit_status (process), ==, 1);
      g_assert_nonnull (strstr (watch.err, "not a regular file"));
      g_free (watch.err);
    }
  test_remove_tree (dir);
}

/* ------------------------------------------------------------------------ */
/* HISTORY wrapped between words                                             */

/* The texts of PATH's HISTORY cards, in order. */
static GPtrArray *
read_history_texts (const char *path)
{
  g_autoptr (GPtrArray) cards = read_raw_cards (path);
  GPtrArray *texts = g_ptr_array_new_with_free_func (g_free);
  for (guint i = 0; i < cards->len; i++)
    {
      const char *card = g_ptr_array_index (cards, i);
      if (g_str_has_prefix (card, "HISTORY"))
        g_ptr_array_add (texts, g_strdup (strlen (card) > 8 ? card + 8 : ""));
    }
  return texts;
}

/* Writes an image whose only HISTORY is TEXT into DIR and returns the
 * texts of the HISTORY cards written. */
static GPtrArray *
history_written (const char *dir, const char *text)
{
  g_autofree char *out = g_build_filename (dir, "history.fits", NULL);
  g_autoptr (SsImage) image = random_float_image (4, 3, 1);
  image->header = ss_header_new ();
  ss_header_add_history (image->header, "%s", text);
  GError *error = NULL;
  g_assert_true (ss_fits_write (image, out, TRUE, NULL, &error));
  g_assert_no_error (error);
  return read_history_texts (out);
}

static gsize
first_word_length (const char *text)
{
  return strcspn (text, " ");
}

static void
test_fits_history_wrapped (void)
{
  g_autofree char *dir = scratch_dir ();
  /* what `auto` records (the audit's example), then random words */
  GString *text = g_string_new ("solver=auto: rl or alm, whichever predicts the held-out "
                                "quarter better; each candidate runs on three quarters of "
                                "the pixels, then 5 on all of them");
  for (int i = 0; i < 30; i++)
    {
      g_string_append_c (text, ' ');
      for (int k = random_size (1, 14); k > 0; k--)
        g_string_append_c (text, (char) g_test_rand_int_range ('a', 'z' + 1));
    }
  g_autoptr (GPtrArray) cards = history_written (dir, text->str);
  GString *joined = g_string_new (NULL);
  for (guint i = 0; i < cards->len; i++)
    {
      const char *card = g_ptr_array_index (cards, i);
      g_test_message ("HISTORY %s", card);
      g_assert_cmpuint (strlen (card), <=, 72);
      g_assert_cmpint (card[0], !=, ' ');
      /* as full as the words allow: the next card's first word did not fit */
      if (i + 1 < cards->len)
        g_assert_cmpuint (strlen (card) + 1 + first_word_length (g_ptr_array_index (cards, i + 1)),
                          >, 72);
      g_string_append_printf (joined, "%s%s", i ? " " : "", card);
    }
  /* joined at the blanks broken at: no word was split */
  g_assert_cmpstr (joined->str, ==, text->str);
  g_string_free (joined, TRUE);
  g_string_free (text, TRUE);

  /* a word longer than a card is cut where the card ends */
  g_autofree char *word = g_strnfill (100, 'w');
  g_autofree char *long_word = g_strdup_printf ("before %s after", word);
  g_autoptr (GPtrArray) cut = history_written (dir, long_word);
  g_assert_cmpuint (cut->len, ==, 3);
  g_assert_cmpstr (g_ptr_array_index (cut, 0), ==, "before");
  g_autofree char *first = g_strnfill (72, 'w');
  g_autofree char *rest = g_strdup_printf ("%s after", word + 72);
  g_assert_cmpstr (g_ptr_array_index (cut, 1), ==, first);
  g_assert_cmpstr (g_ptr_array_index (cut, 2), ==, rest);

  /* The program's symbols are spelled in ASCII, not written as '?'. */
  g_autoptr (GPtrArray) spelled = history_written (dir, "psf_fit=moffat FWHM 3.0 px (3.1 × 2.9, "
                                                        "angle 33.5°); α ≥ 2σ");
  g_assert_cmpuint (spelled->len, ==, 1);
  g_assert_cmpstr (g_ptr_array_index (spelled, 0), ==,
                   "psf_fit=moffat FWHM 3.0 px (3.1 x 2.9, angle 33.5 deg); alpha >= 2sigma");
  test_remove_tree (dir);
}

/* Infinities and bad-pixel flags (magnitude 1e30 or more) become blanks,
 * over every plane; NaN stays NaN and is not counted; every other value,
 * up to just under the flag magnitude, is kept to the bit. */
static void
test_image_blank_non_physical (void)
{
  g_autoptr (GError) error = NULL;
  int w = g_test_rand_int_range (8, 40), h = g_test_rand_int_range (8, 40), planes = 3;
  g_autoptr (SsImage) image = ss_image_new (w, h, planes, &error);
  g_assert_no_error (error);
  gsize n = ss_image_plane_size (image) * planes;
  const float flags[] = { INFINITY, -INFINITY, 1e30f, -1e30f, -3e38f, 1.6e38f };
  g_autofree float *kept = g_new (float, n);
  gsize expected = 0;
  for (gsize i = 0; i < n; i++)
    {
      double u = g_test_rand_double ();
      image->data[i] = u < 0.05   ? flags[g_test_rand_int_range (0, G_N_ELEMENTS (flags))]
                       : u < 0.08 ? NAN
                       : u < 0.10 ? (g_test_rand_bit () ? 9.9e29f : -9.9e29f)
                                  : (float) g_test_rand_double_range (-1e4, 1e6);
      expected += u < 0.05 ? 1 : 0;
      kept[i] = image->data[i];
    }
  g_assert_cmpuint (ss_image_blank_non_physical (image), ==, expected);
  for (gsize i = 0; i < n; i++)
    if (isnan (kept[i]) || fabsf (kept[i]) >= 1e30f)
      g_assert_true (isnan (image->data[i]));
    else
      g_assert_cmpfloat (image->data[i], ==, kept[i]);
  g_assert_cmpuint (ss_image_blank_non_physical (image), ==, 0);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/io/header/cards", test_header_cards);
  g_test_add_func ("/io/image/blank-non-physical", test_image_blank_non_physical);
  g_test_add_func ("/io/fits/float32-roundtrip", test_fits_float32_roundtrip);
  g_test_add_func ("/io/fits/integer-bitpix", test_fits_integer_bitpix);
  g_test_add_func ("/io/fits/header-kept", test_fits_header_kept);
  g_test_add_func ("/io/fits/hdu-selection", test_fits_hdu_selection);
  g_test_add_func ("/io/fits/cube", test_fits_cube);
  g_test_add_func ("/io/fits/tile-compressed", test_fits_tile_compressed);
  g_test_add_func ("/io/fits/gzip", test_fits_gzip);
  g_test_add_func ("/io/fits/nonstandard-card-kept", test_fits_nonstandard_card_kept);
  g_test_add_func ("/io/fits/sample-data", test_fits_sample_data);
  g_test_add_func ("/io/fits/bad-inputs", test_fits_bad_inputs);
  g_test_add_func ("/io/fits/scaling-cards", test_fits_scaling_cards);
  g_test_add_func ("/io/fits/too-large-for-memory", test_fits_too_large_for_memory);
  g_test_add_func ("/io/fits/nan-only", test_fits_nan_only_is_not_an_io_error);
  g_test_add_func ("/io/output/rules", test_output_rules);
  g_test_add_func ("/io/output/unwritable-directory", test_output_unwritable_directory);
  g_test_add_func ("/io/output/write-failure", test_output_write_failure_cleans_up);
  g_test_add_func ("/io/output/temporaries-removed", test_output_temporaries_removed);
  g_test_add_func ("/io/png/roundtrip", test_png_roundtrip);
  g_test_add_func ("/io/png/colour-types", test_png_read_colour_types);
  g_test_add_func ("/io/png/bad-inputs", test_png_bad_inputs);
  g_test_add_func ("/io/load-by-content", test_load_by_content);
  g_test_add_func ("/io/stretch", test_stretch);
  g_test_add_func ("/io/fits/list-hdus", test_fits_list_hdus);
  g_test_add_func ("/io/output/format-by-name", test_output_format_by_name);
  g_test_add_func ("/io/fits/axes-kept", test_fits_axes_kept);
  g_test_add_func ("/io/fits/primary-cards-inherited", test_fits_primary_cards_inherited);
  g_test_add_func ("/io/fits/history-wrapped", test_fits_history_wrapped);
  g_test_add_func ("/io/cli/info-refuses-fifo", test_info_refuses_fifo);
  return g_test_run ();
}
