/* ss-fits.c: FITS images in and out, with cfitsio.
 *
 * cfitsio does the format work (every BITPIX, BZERO/BSCALE, BLANK, tile
 * compression); this file adds what a desktop tool needs around it: the HDU
 * choice, checks that a header's claims fit the file and the memory BEFORE
 * anything is allocated, one-line messages that name the file and the
 * problem, and writes that never leave a half-written file (ss-output.h).
 *
 * Files are opened with fits_open_diskfile/fits_create_diskfile so that a
 * name such as "m31[1].fits" is a plain file name, not cfitsio's extended
 * file-name syntax.
 */
#include "ss-fits.h"
#include "ss-io.h"
#include "ss-error.h"
#include "ss-mem.h"
#include "ss-output.h"

#include <errno.h>
#include "ss-gunzip.h"

#include <fitsio.h>
#include <gio/gio.h>
#include <glib/gstdio.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define FITS_BLOCK 2880
#define FITS_CARD 80
#define MAX_AXES 9
/* A tile-compressed image claiming more than this many bytes per byte of
 * compressed data is refused as damaged: real data (even all-constant
 * images under GZIP, ~1000:1) stay far below, and it keeps a few bytes of
 * hostile header from making us allocate gigabytes. */
#define MAX_COMPRESSION_RATIO 10000.0
#define HISTORY_CHUNK 72

typedef struct {
  int hdu_type;          /* IMAGE_HDU, BINARY_TBL, ASCII_TBL */
  gboolean compressed;   /* a tile-compressed image stored in a binary table */
  int bitpix;            /* of the image (ZBITPIX when compressed) */
  int naxis;
  LONGLONG naxes[MAX_AXES];
} HduInfo;

typedef struct {
  int width;
  int height;
  int planes;
  guint64 pixels;        /* width * height * planes */
} ImageSize;

/* ------------------------------------------------------------------------ */
/* Messages                                                                  */

/* cfitsio's text for STATUS plus the oldest message on its stack (the most
 * specific one), and the stack cleared so it cannot leak into a later call. */
static char *
fits_status_text (int status)
{
  char text[FLEN_STATUS] = "";
  char detail[FLEN_ERRMSG] = "";
  fits_get_errstatus (status, text);
  fits_read_errmsg (detail);
  fits_clear_errmsg ();
  g_strchomp (detail);
  if (detail[0] && g_ascii_strcasecmp (detail, text) != 0)
    return g_strdup_printf ("%s (%s)", text, detail);
  return g_strdup (text);
}

static void
set_fits_error (GError **error, int code, const char *name, const char *what, int status)
{
  g_autofree char *text = fits_status_text (status);
  g_set_error (error, SS_ERROR, code, "%s: %s: %s", name, what, text);
}

/* ------------------------------------------------------------------------ */
/* Opening                                                                   */

/* Checks PATH is a non-empty regular file that starts like a FITS file, so
 * that the common mistakes get a precise message instead of cfitsio's. */
static gboolean
check_fits_file (const char *path, const char *name, goffset *file_size, GError **error)
{
  guchar start[10];
  gsize got = 0;
  if (!ss_io_peek_file (path, start, sizeof start, &got, file_size, error))
    return FALSE;
  if (ss_gunzip_is_gzip (start, got))   /* inside a gzip file */
    {
      g_set_error (error, SS_ERROR, SS_ERROR_UNSUPPORTED,
                   "%s: gzip-compressed twice: decompress it first (gunzip)", name);
      return FALSE;
    }
  if (got < 9 || memcmp (start, "SIMPLE  =", 9) != 0)
    {
      g_set_error (error, SS_ERROR, SS_ERROR_FORMAT,
                   "%s: not a FITS file (it does not start with \"SIMPLE  =\")", name);
      return FALSE;
    }
  return TRUE;
}

/* As cfitsio decides: the keyword field is END (the rest is not looked at). */
static gboolean
is_end_card (const char *card)
{
  return memcmp (card, "END     ", 8) == 0;
}

/* Where the primary header ends (its END card's block rounded up to whole
 * 2880-byte blocks), or -1 when no END card is in the file: used to explain
 * why cfitsio could not open a file. */
static goffset
primary_header_end (const char *path)
{
  FILE *file = g_fopen (path, "rb");
  if (file == NULL)
    return -1;
  char card[FITS_CARD];
  goffset offset = 0, end = -1;
  while (end < 0 && fread (card, 1, FITS_CARD, file) == FITS_CARD)
    {
      offset += FITS_CARD;
      if (is_end_card (card))
        end = (offset + FITS_BLOCK - 1) / FITS_BLOCK * FITS_BLOCK;
    }
  fclose (file);
  return end;
}

/* ------------------------------------------------------------------------ */
/* Headers checked before cfitsio parses them                                */
/*                                                                           */
/* cfitsio 4.2 can die while merely moving to a damaged HDU, before we get   */
/* any say (found by tests/fuzz): a compressed-image header with ZTILEn = 0  */
/* or a Rice block size of 0 divides by zero (fixed in cfitsio 4.6), and an  */
/* integer keyword whose value is a long non-number overflows a message      */
/* buffer in ffc2j (glibc aborts). So every header in the file is read here  */
/* first, and such headers are refused with a message.                      */

#define MAX_SCANNED_HDUS 100000
/* ffc2j copies up to 30 characters of a bad value into a message with room
 * for 28: a shorter token is safe whatever it holds. */
#define LONGEST_SAFE_BAD_VALUE 28

/* The header at OFFSET as cards; *END receives where its last block ends,
 * or -1 when the file ends before its END card (the cards read are still
 * returned: cfitsio parses them before it notices). */
static SsHeader *
read_raw_header (FILE *file, goffset offset, goffset *end)
{
  SsHeader *header = ss_header_new ();
  *end = -1;
  if (fseeko (file, offset, SEEK_SET) != 0)
    return header;
  char card[FITS_CARD + 1] = "";
  goffset position = offset;
  while (fread (card, 1, FITS_CARD, file) == FITS_CARD)
    {
      position += FITS_CARD;
      if (is_end_card (card))
        {
          *end = (position - offset + FITS_BLOCK - 1) / FITS_BLOCK * FITS_BLOCK + offset;
          break;
        }
      /* NUL bytes would cut the card short: blanks keep the columns */
      for (int i = 0; i < FITS_CARD; i++)
        if (card[i] == '\0')
          card[i] = ' ';
      ss_header_add_card (header, card);
    }
  return header;
}

static gboolean
header_integer (const SsHeader *header, const char *keyword, gint64 *value)
{
  double number = 0.0;
  if (!ss_header_get_double (header, keyword, &number) || !(fabs (number) < 9e18))
    return FALSE;
  *value = (gint64) number; /* cfitsio truncates reals read as integers */
  return TRUE;
}

/* A structural card (the ones cfitsio reads as numbers) whose unquoted value
 * is long and not a number: the text for a message, or NULL. */
static gboolean
is_commentary_card (const char *card)
{
  return strncmp (card, "HISTORY ", 8) == 0 || strncmp (card, "COMMENT ", 8) == 0
         || strncmp (card, "CONTINUE", 8) == 0 || strncmp (card, "        ", 8) == 0;
}

/* The unquoted value token of a "KEYWORD =" CARD, read from column 10 as
 * cfitsio does, or NULL for a quoted or absent value. */
static char *
card_value_token (const char *card)
{
  if (strlen (card) < 9 || card[8] != '=' || is_commentary_card (card))
    return NULL;
  const char *value = card + 9;
  while (*value == ' ')
    value++;
  if (*value == '\'')
    return NULL;
  const char *slash = strchr (value, '/');
  return g_strstrip (slash ? g_strndup (value, slash - value) : g_strdup (value));
}

static gboolean
is_number (const char *token)
{
  g_autofree char *copy = g_strdup (token);
  for (char *p = copy; *p; p++)
    if (*p == 'D' || *p == 'd')
      *p = 'E';
  char *end = NULL;
  g_ascii_strtod (copy, &end);
  return end != copy && *end == '\0';
}

/* "(re, im)" with two numbers. */
static gboolean
is_complex (const char *token)
{
  gsize length = strlen (token);
  if (length < 5 || token[0] != '(' || token[length - 1] != ')')
    return FALSE;
  g_autofree char *inside = g_strndup (token + 1, length - 2);
  g_auto (GStrv) parts = g_strsplit (inside, ",", -1);
  return g_strv_length (parts) == 2 && is_number (g_strstrip (parts[0])) && is_number (g_strstrip (parts[1]));
}

/* Whether cfitsio reads KEYWORD's value as a number or a column name on its
 * own when it opens or reads an HDU: the structural and scaling keywords,
 * and the table (T...n) and compression (Z...) families. Other cards are
 * only ever copied, so a non-standard value there (DSS plates write
 * "SKEW = a, b") is harmless. */
static gboolean
is_parsed_by_cfitsio (const char *card)
{
  static const char *const keys[] = { "SIMPLE", "BITPIX", "EXTEND", "PCOUNT", "GCOUNT",
                                      "GROUPS", "BSCALE", "BZERO", "BLANK", "TFIELDS", "THEAP" };
  char keyword[9] = { 0 };
  memcpy (keyword, card, 8);
  g_strchomp (keyword);
  for (gsize i = 0; i < G_N_ELEMENTS (keys); i++)
    if (strcmp (keyword, keys[i]) == 0)
      return TRUE;
  gsize length = strlen (keyword);
  gboolean indexed = length > 0 && g_ascii_isdigit (keyword[length - 1]);
  return keyword[0] == 'Z' || g_str_has_prefix (keyword, "NAXIS")
         || (keyword[0] == 'T' && indexed);
}

/* A card cfitsio parses whose unquoted value is long and neither a number
 * nor a complex pair (never valid FITS; cfitsio overflows a buffer on it):
 * the text for a message, or NULL. */
static char *
bad_long_value (const SsHeader *header)
{
  for (guint i = 0; i < header->cards->len; i++)
    {
      const char *card = g_ptr_array_index (header->cards, i);
      if (!is_parsed_by_cfitsio (card))
        continue;
      g_autofree char *token = card_value_token (card);
      if (token && strlen (token) > LONGEST_SAFE_BAD_VALUE && !is_number (token) && !is_complex (token))
        {
          g_autofree char *keyword = g_strchomp (g_strndup (card, 8));
          return g_strdup_printf ("%s has a malformed value", keyword);
        }
    }
  return NULL;
}

/* The integer value of a "KEYWORD = value" CARD (cfitsio truncates reals
 * read as integers); FALSE when it is not a plain number. */
static gboolean
card_integer (const char *card, gint64 *value)
{
  g_autofree char *token = card_value_token (card);
  if (token == NULL || !is_number (token))
    return FALSE;
  for (char *p = token; *p; p++)
    if (*p == 'D' || *p == 'd')
      *p = 'E';
  double number = g_ascii_strtod (token, NULL);
  if (!(fabs (number) < 9e18))
    return FALSE;
  *value = (gint64) number;
  return TRUE;
}

/* Every card named KEYWORD (cfitsio does not always find the first of
 * duplicates) holds an integer in [LOW, HIGH]; FALSE if one does not. */
static gboolean
every_card_in_range (const SsHeader *header, const char *keyword, gint64 low, gint64 high)
{
  gsize length = strlen (keyword);
  for (guint i = 0; i < header->cards->len; i++)
    {
      const char *card = g_ptr_array_index (header->cards, i);
      gint64 value = 0;
      if (strncmp (card, keyword, length) != 0 || (card[length] != ' ' && card[length] != '='))
        continue;
      if (!card_integer (card, &value) || value < low || value > high)
        return FALSE;
    }
  return TRUE;
}

/* What cfitsio would divide by zero on in a compressed image's header, or
 * NULL. Unreadable values are refused too: cfitsio reads them as 0. */
static char *
bad_compression_keys (const SsHeader *header)
{
  gint64 axes = 0;
  if (!header_integer (header, "ZNAXIS", &axes)
      || !every_card_in_range (header, "ZNAXIS", 1, MAX_COMPRESS_DIM))
    return g_strdup ("invalid ZNAXIS");
  for (int i = 1; i <= axes; i++)
    {
      g_autofree char *axis_key = g_strdup_printf ("ZNAXIS%d", i);
      g_autofree char *tile_key = g_strdup_printf ("ZTILE%d", i);
      gint64 length = 0;
      if (!header_integer (header, axis_key, &length) || !every_card_in_range (header, axis_key, 1, G_MAXINT64))
        return g_strdup_printf ("invalid %s", axis_key);
      if (!every_card_in_range (header, tile_key, 1, G_MAXLONG))
        return g_strdup_printf ("invalid %s", tile_key);
    }
  g_autofree char *type = ss_header_get_string (header, "ZCMPTYPE");
  if (type && (g_ascii_strcasecmp (type, "RICE_1") == 0 || g_ascii_strcasecmp (type, "RICE_ONE") == 0))
    {
      /* ZVAL1 is the block size (ZVAL2 the bytes a pixel, swapped back by
       * cfitsio when both are given the wrong way round, still >= 1). */
      gint64 block = 0;
      if (!header_integer (header, "ZVAL1", &block) || !every_card_in_range (header, "ZVAL1", 1, G_MAXINT)
          || !every_card_in_range (header, "ZVAL2", G_MININT, G_MAXINT))
        return g_strdup ("invalid Rice parameters (ZVAL1, ZVAL2)");
    }
  return NULL;
}

/* Bytes of the data unit HEADER describes (FITS 4.0 §4.4.1.1), or -1. */
static goffset
raw_data_size (const SsHeader *header)
{
  gint64 bitpix = 0, naxis = 0, pcount = 0, gcount = 1;
  if (!header_integer (header, "BITPIX", &bitpix) || !header_integer (header, "NAXIS", &naxis)
      || naxis < 0 || naxis > 999)
    return -1;
  header_integer (header, "PCOUNT", &pcount);
  header_integer (header, "GCOUNT", &gcount);
  if (naxis == 0)
    return 0;
  g_autofree char *groups = ss_header_get_string (header, "GROUPS");
  guint64 product = 1;
  for (int i = 1; i <= naxis; i++)
    {
      g_autofree char *key = g_strdup_printf ("NAXIS%d", i);
      gint64 length = 0;
      if (!header_integer (header, key, &length) || length < 0)
        return -1;
      if (i == 1 && length == 0 && groups && strcmp (groups, "T") == 0)
        continue;                       /* random groups */
      if (!g_uint64_checked_mul (&product, product, (guint64) length))
        return -1;
    }
  guint64 bytes = 0;
  if (pcount < 0 || gcount < 0 || product > G_MAXINT64 - (guint64) pcount
      || !g_uint64_checked_mul (&bytes, (guint64) ABS (bitpix) / 8, (guint64) gcount)
      || !g_uint64_checked_mul (&bytes, bytes, product + (guint64) pcount) || bytes > G_MAXINT64 / 2)
    return -1;
  return (goffset) bytes;
}

static gboolean
has_keyword (const SsHeader *header, const char *keyword)
{
  gsize length = strlen (keyword);
  for (guint i = 0; i < header->cards->len; i++)
    {
      const char *card = g_ptr_array_index (header->cards, i);
      if (strncmp (card, keyword, length) == 0 && (card[length] == ' ' || card[length] == '='))
        return TRUE;
    }
  return FALSE;
}

static gboolean
block_starts_extension (FILE *file, goffset offset)
{
  char start[8];
  return fseeko (file, offset, SEEK_SET) == 0 && fread (start, 1, 8, file) == 8
         && memcmp (start, "XTENSION", 8) == 0;
}

/* Reads every header in the file and refuses the ones that would crash
 * cfitsio. Headers are followed by their data sizes; where that fails (a
 * size that cannot be worked out, or no extension where one should start)
 * every later block that starts with XTENSION is checked instead, since
 * cfitsio may still find it there. */
static gboolean
check_raw_headers (const char *path, const char *name, goffset file_size, GError **error)
{
  FILE *file = g_fopen (path, "rb");
  if (file == NULL)
    return TRUE;                        /* cfitsio will say why */
  goffset offset = 0, end = 0;
  gboolean following = TRUE;
  g_autofree char *problem = NULL;
  for (int number = 0; number < MAX_SCANNED_HDUS && offset < file_size && problem == NULL; number++)
    {
      if (!following)
        {
          while (offset < file_size && !block_starts_extension (file, offset))
            offset += FITS_BLOCK;
          if (offset >= file_size)
            break;
        }
      g_autoptr (SsHeader) header = read_raw_header (file, offset, &end);
      problem = bad_long_value (header);
      /* cfitsio allocates a column description per field before it looks
       * further: a damaged TFIELDS of millions costs gigabytes (fuzzing). */
      if (problem == NULL && !every_card_in_range (header, "TFIELDS", 0, 999))
        problem = g_strdup ("invalid TFIELDS (FITS allows 0 to 999 columns)");
      if (problem == NULL && has_keyword (header, "ZIMAGE"))
        problem = bad_compression_keys (header);
      if (problem)
        {
          g_autofree char *where = following ? g_strdup_printf ("HDU %d", number)
                                             : g_strdup_printf ("header at byte %" G_GINT64_FORMAT,
                                                                (gint64) offset);
          g_set_error (error, SS_ERROR, SS_ERROR_FORMAT, "%s: %s: damaged header: %s", name, where, problem);
          break;
        }
      if (end < 0)
        break;                          /* no END: cfitsio stops here too */
      goffset size = raw_data_size (header);
      goffset next = size >= 0 && end <= G_MAXINT64 / 2 - size
                     ? end + (size + FITS_BLOCK - 1) / FITS_BLOCK * FITS_BLOCK : -1;
      if (following && next >= 0 && (next >= file_size || block_starts_extension (file, next)))
        offset = next;
      else
        {
          following = FALSE;
          offset = end;
        }
    }
  fclose (file);
  return problem == NULL;
}

static fitsfile *open_plain_fits (const char *path, const char *name, goffset *file_size,
                                   GError **error);

/* Opens PATH, a FITS file or a gzip-compressed one (read from a decompressed
 * temporary copy, removed as soon as cfitsio holds it open). */
static fitsfile *
open_fits (const char *path, const char *name, goffset *file_size, GError **error)
{
  guchar start[2];
  gsize got = 0;
  if (!ss_io_peek_file (path, start, sizeof start, &got, NULL, error))
    return NULL;
  if (!ss_gunzip_is_gzip (start, got))
    return open_plain_fits (path, name, file_size, error);
  g_autofree char *plain = ss_gunzip_to_temp (path, name, error);
  if (plain == NULL)
    return NULL;
  fitsfile *fits = open_plain_fits (plain, name, file_size, error);
  g_unlink (plain);
  return fits;
}

static fitsfile *
open_plain_fits (const char *path, const char *name, goffset *file_size, GError **error)
{
  if (!check_fits_file (path, name, file_size, error)
      || !check_raw_headers (path, name, *file_size, error))
    return NULL;
  fitsfile *fits = NULL;
  int status = 0;
  if (fits_open_diskfile (&fits, path, READONLY, &status) == 0)
    return fits;
  if (fits)
    {
      int ignored = 0;
      fits_close_file (fits, &ignored);
    }
  goffset header_end = primary_header_end (path);
  if (header_end < 0 || header_end > *file_size)
    {
      fits_clear_errmsg ();
      if (header_end < 0)
        g_set_error (error, SS_ERROR, SS_ERROR_FORMAT,
                     "%s: truncated header: no END card in the file's %" G_GINT64_FORMAT " bytes",
                     name, (gint64) *file_size);
      else
        g_set_error (error, SS_ERROR, SS_ERROR_FORMAT,
                     "%s: truncated header: it ends at byte %" G_GINT64_FORMAT ", the file has %"
                     G_GINT64_FORMAT, name, (gint64) header_end, (gint64) *file_size);
      return NULL;
    }
  set_fits_error (error, SS_ERROR_FORMAT, name, "not a valid FITS file", status);
  return NULL;
}

static void
close_fits (fitsfile *fits)
{
  int status = 0;
  if (fits)
    fits_close_file (fits, &status);
  fits_clear_errmsg ();
}

/* ------------------------------------------------------------------------ */
/* HDUs                                                                      */

/* Moves to HDU NUMBER (0 = primary). Returns the cfitsio status:
 * END_OF_FILE when there is no such HDU. */
static int
move_to_hdu (fitsfile *fits, int number)
{
  int status = 0, type = 0;
  fits_movabs_hdu (fits, number + 1, &type, &status);
  return status;
}

static gboolean
read_hdu_info (fitsfile *fits, HduInfo *info, int *status)
{
  memset (info, 0, sizeof *info);
  fits_get_hdu_type (fits, &info->hdu_type, status);
  if (*status == 0 && info->hdu_type == IMAGE_HDU)
    {
      fits_get_img_paramll (fits, MAX_AXES, &info->bitpix, &info->naxis, info->naxes, status);
      info->compressed = fits_is_compressed_image (fits, status);
    }
  return *status == 0;
}

static gboolean
hdu_has_pixels (const HduInfo *info)
{
  if (info->hdu_type != IMAGE_HDU || info->naxis <= 0)
    return FALSE;
  for (int i = 0; i < MIN (info->naxis, MAX_AXES); i++)
    if (info->naxes[i] <= 0)
      return FALSE;
  return TRUE;
}

/* The value of a string keyword of the current HDU, or NULL. */
static char *
read_key_string (fitsfile *fits, const char *keyword)
{
  char value[FLEN_VALUE] = "";
  int status = 0;
  if (fits_read_key (fits, TSTRING, keyword, value, NULL, &status) != 0)
    {
      fits_clear_errmsg ();
      return NULL;
    }
  return g_strstrip (g_strdup (value));
}

static gboolean
hdu_is_named (fitsfile *fits, const char *wanted)
{
  static const char *const keys[] = { "EXTNAME", "HDUNAME" };
  for (gsize i = 0; i < G_N_ELEMENTS (keys); i++)
    {
      g_autofree char *value = read_key_string (fits, keys[i]);
      if (value && g_ascii_strcasecmp (value, wanted) == 0)
        return TRUE;
    }
  return FALSE;
}

static const char *
hdu_type_name (const HduInfo *info)
{
  switch (info->hdu_type)
    {
    case IMAGE_HDU: return info->compressed ? "compressed image" : "image";
    case BINARY_TBL: return "binary table";
    case ASCII_TBL: return "ASCII table";
    default: return "unknown HDU";
    }
}

/* An explanation of why a chosen HDU cannot be read as an image, or NULL. */
static char *
hdu_problem (const HduInfo *info)
{
  if (info->hdu_type != IMAGE_HDU)
    return g_strdup_printf ("is a %s, not an image", hdu_type_name (info));
  if (info->naxis == 0)
    return g_strdup ("holds no image (NAXIS = 0)");
  if (info->naxis > MAX_AXES)
    return g_strdup_printf ("has %d axes; at most %d are supported", info->naxis, MAX_AXES);
  for (int i = 0; i < info->naxis; i++)
    if (info->naxes[i] <= 0)
      return g_strdup_printf ("zero-size image (NAXIS%d = %lld)", i + 1, (long long) info->naxes[i]);
  return NULL;
}

static gboolean
parse_hdu_number (const char *text, int *number)
{
  guint64 value = 0;
  if (!g_ascii_string_to_unsigned (text, 10, 0, 100000, &value, NULL))
    return FALSE;
  *number = (int) value;
  return TRUE;
}

/* The default choice: the first HDU with pixels (an empty primary is
 * skipped, as in most multi-extension files). */
static gboolean
select_first_image (fitsfile *fits, const char *name, int *chosen, HduInfo *info, GError **error)
{
  g_autofree char *first_problem = NULL;
  int first_problem_hdu = -1;
  for (int number = 0;; number++)
    {
      int status = move_to_hdu (fits, number);
      if (status == END_OF_FILE && number > 0)
        {
          fits_clear_errmsg ();
          break;
        }
      g_autofree char *what = g_strdup_printf ("HDU %d", number);
      if (status != 0 || !read_hdu_info (fits, info, &status))
        {
          set_fits_error (error, SS_ERROR_FORMAT, name, what, status);
          return FALSE;
        }
      if (hdu_has_pixels (info) && info->naxis <= MAX_AXES)
        {
          *chosen = number;
          return TRUE;
        }
      /* Remember a real problem (a zero-size image) rather than NAXIS = 0. */
      if (first_problem == NULL && info->hdu_type == IMAGE_HDU && info->naxis > 0)
        {
          first_problem = hdu_problem (info);
          first_problem_hdu = number;
        }
    }
  if (first_problem)
    g_set_error (error, SS_ERROR, SS_ERROR_FORMAT, "%s: HDU %d: %s", name, first_problem_hdu, first_problem);
  else
    g_set_error (error, SS_ERROR, SS_ERROR_FORMAT, "%s: no HDU holds an image (NAXIS = 0 everywhere)", name);
  return FALSE;
}

static int
count_hdus (fitsfile *fits)
{
  int count = 0, status = 0;
  fits_get_num_hdus (fits, &count, &status);
  fits_clear_errmsg ();
  return count;
}

static gboolean
select_hdu_by_number (fitsfile *fits, const char *name, int number, HduInfo *info, GError **error)
{
  int status = move_to_hdu (fits, number);
  if (status == END_OF_FILE || status == BAD_HDU_NUM)
    {
      fits_clear_errmsg ();
      g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT,
                   "%s: HDU %d does not exist (the file has %d, numbered from 0)",
                   name, number, count_hdus (fits));
      return FALSE;
    }
  g_autofree char *what = g_strdup_printf ("HDU %d", number);
  if (status != 0 || !read_hdu_info (fits, info, &status))
    {
      set_fits_error (error, SS_ERROR_FORMAT, name, what, status);
      return FALSE;
    }
  return TRUE;
}

static gboolean
select_hdu_by_name (fitsfile *fits, const char *name, const char *wanted, int *chosen,
                    HduInfo *info, GError **error)
{
  for (int number = 0;; number++)
    {
      int status = move_to_hdu (fits, number);
      if (status == END_OF_FILE && number > 0)
        break;
      g_autofree char *what = g_strdup_printf ("HDU %d", number);
      if (status != 0 || !read_hdu_info (fits, info, &status))
        {
          set_fits_error (error, SS_ERROR_FORMAT, name, what, status);
          return FALSE;
        }
      if (hdu_is_named (fits, wanted))
        {
          *chosen = number;
          return TRUE;
        }
    }
  fits_clear_errmsg ();
  g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT, "%s: no HDU is named '%s'", name, wanted);
  return FALSE;
}

/* Moves to the HDU OPTIONS ask for and checks it holds an image. */
static gboolean
select_hdu (fitsfile *fits, const char *name, const char *hdu, int *chosen, HduInfo *info, GError **error)
{
  if (hdu == NULL || hdu[0] == '\0')
    return select_first_image (fits, name, chosen, info, error);

  int number = -1;
  if (parse_hdu_number (hdu, &number))
    {
      *chosen = number;
      if (!select_hdu_by_number (fits, name, number, info, error))
        return FALSE;
    }
  else if (!select_hdu_by_name (fits, name, hdu, chosen, info, error))
    return FALSE;

  g_autofree char *problem = hdu_problem (info);
  if (problem)
    {
      if (number >= 0)
        g_set_error (error, SS_ERROR, SS_ERROR_FORMAT, "%s: HDU %d %s", name, *chosen, problem);
      else
        g_set_error (error, SS_ERROR, SS_ERROR_FORMAT, "%s: HDU %d ('%s') %s", name, *chosen, hdu, problem);
      return FALSE;
    }
  return TRUE;
}

/* ------------------------------------------------------------------------ */
/* Size checks, all before allocating                                        */

static gboolean
image_size_from_axes (const HduInfo *info, const char *name, ImageSize *size, GError **error)
{
  LONGLONG width = info->naxes[0];
  LONGLONG height = info->naxis >= 2 ? info->naxes[1] : 1; /* 1-D: an image of height 1 */
  guint64 planes = 1;
  gboolean overflow = FALSE;
  for (int i = 2; i < info->naxis; i++)
    overflow |= !g_uint64_checked_mul (&planes, planes, (guint64) info->naxes[i]);
  if (overflow || width > G_MAXINT || height > G_MAXINT || planes > G_MAXINT)
    {
      g_set_error (error, SS_ERROR, SS_ERROR_TOO_LARGE,
                   "%s: image dimensions too large (%lld x %lld x %" G_GUINT64_FORMAT ")",
                   name, (long long) width, (long long) height, planes);
      return FALSE;
    }
  size->width = (int) width;
  size->height = (int) height;
  size->planes = (int) planes;
  overflow = !g_uint64_checked_mul (&size->pixels, (guint64) width, (guint64) height)
             || !g_uint64_checked_mul (&size->pixels, size->pixels, planes);
  if (overflow)
    {
      g_set_error (error, SS_ERROR, SS_ERROR_TOO_LARGE, "%s: image dimensions too large", name);
      return FALSE;
    }
  return TRUE;
}

static guint64
checked_bytes (guint64 count, guint64 item_size)
{
  guint64 bytes = 0;
  return g_uint64_checked_mul (&bytes, count, item_size) ? bytes : G_MAXUINT64;
}

static LONGLONG
read_key_longlong (fitsfile *fits, const char *keyword)
{
  LONGLONG value = 0;
  int status = 0;
  if (fits_read_key_lnglng (fits, keyword, &value, NULL, &status) != 0)
    {
      fits_clear_errmsg ();
      return 0;
    }
  return value;
}

/* The bytes the current HDU's header says its data unit holds: the pixels
 * for a plain image, the binary table and its heap for a compressed one. */
static guint64
claimed_data_bytes (fitsfile *fits, const HduInfo *info, const ImageSize *size)
{
  if (!info->compressed)
    return checked_bytes (size->pixels, (guint64) ABS (info->bitpix) / 8);
  /* For a compressed image these keys are the binary table's own. */
  LONGLONG row_bytes = read_key_longlong (fits, "NAXIS1");
  LONGLONG rows = read_key_longlong (fits, "NAXIS2");
  LONGLONG heap = read_key_longlong (fits, "PCOUNT");
  if (row_bytes < 0 || rows < 0 || heap < 0)
    return G_MAXUINT64;
  guint64 table = checked_bytes ((guint64) row_bytes, (guint64) rows);
  return table > G_MAXUINT64 - (guint64) heap ? G_MAXUINT64 : table + (guint64) heap;
}

/* Refuses a header whose data cannot be in the file (truncated or lying)
 * and an image that cannot fit in memory. */
static gboolean
check_sizes (fitsfile *fits, const char *name, goffset file_size, const HduInfo *info,
             const ImageSize *size, guint64 pixels_to_read, GError **error)
{
  LONGLONG header_start = 0, data_start = 0, data_end = 0;
  int status = 0;
  if (fits_get_hduaddrll (fits, &header_start, &data_start, &data_end, &status) != 0)
    {
      set_fits_error (error, SS_ERROR_FORMAT, name, "cannot locate the data", status);
      return FALSE;
    }
  guint64 claimed = claimed_data_bytes (fits, info, size);
  guint64 present = file_size > data_start ? (guint64) (file_size - data_start) : 0;
  if (claimed > present)
    {
      g_set_error (error, SS_ERROR, SS_ERROR_FORMAT,
                   "%s: truncated: header says %" G_GUINT64_FORMAT " bytes of data, file has %"
                   G_GUINT64_FORMAT, name, claimed, present);
      return FALSE;
    }
  if (info->compressed)
    {
      guint64 raw = checked_bytes (size->pixels, (guint64) ABS (info->bitpix) / 8);
      if ((double) raw > MAX_COMPRESSION_RATIO * (double) MAX (claimed, (guint64) FITS_BLOCK))
        {
          g_set_error (error, SS_ERROR, SS_ERROR_FORMAT,
                       "%s: damaged compressed image: %d x %d x %d pixels claimed from only %"
                       G_GUINT64_FORMAT " bytes", name, size->width, size->height, size->planes, claimed);
          return FALSE;
        }
    }
  guint64 needed = checked_bytes (pixels_to_read, sizeof (float));
  guint64 available = ss_mem_available ();
  if (needed > available)
    {
      g_autofree char *need_text = ss_format_bytes (needed > G_MAXSIZE ? G_MAXSIZE : (gsize) needed);
      g_autofree char *have_text = ss_format_bytes ((gsize) available);
      g_set_error (error, SS_ERROR, SS_ERROR_TOO_LARGE,
                   "%s: the image (%d x %d x %d) needs %s of memory; %s is available",
                   name, size->width, size->height, size->planes, need_text, have_text);
      return FALSE;
    }
  return TRUE;
}

/* ------------------------------------------------------------------------ */
/* Compressed tiles checked before cfitsio decodes them                      */
/*                                                                           */
/* cfitsio's tile decoders (4.2, and still 4.6) trust the compressed bytes:  */
/* - Rice (fits_rdecomp*) reads past a damaged tile's buffer and crashes     */
/*   (found by tests/fuzz);                                                  */
/* - PLIO (pl_l2pi) takes its read length and start from the stream;        */
/* - HCOMPRESS (fits_hdecompress) is not even told the input's length and    */
/*   takes the output size from the stream: a crafted tile writes past the  */
/*   output buffer.                                                          */
/* So before reading, every Rice and PLIO tile is walked as the decoder     */
/* would, bounds checked, with the parameters cfitsio itself parsed         */
/* (fitsfile->Fptr); HCOMPRESS is refused (funpack converts such files).    */
/* GZIP tiles are inflated once here (GIO's zlib decompressor) to make sure  */
/* each stream ends within its tile: on some damaged streams cfitsio's own   */
/* inflate loop grows its buffer for ever (a hang found by tests/fuzz).      */

/* Follows fits_rdecomp's reads over NX pixels coded in blocks of NBLOCK;
 * FALSE if it would read beyond the LENGTH bytes at BYTES. */
static gboolean
rice_stream_fits (const guchar *bytes, gsize length, gsize nx, int nblock, int bytepix)
{
  int fsbits = bytepix == 1 ? 3 : bytepix == 2 ? 4 : 5;
  int fsmax = bytepix == 1 ? 6 : bytepix == 2 ? 14 : 25;
  int bbits = 1 << fsbits;
  int first = bytepix == 1 ? 1 : bytepix == 2 ? 2 : 4; /* raw first pixel */
  if (nblock <= 0 || length < (gsize) first + 1)
    return FALSE;
  const guchar *c = bytes + first, *end = bytes + length;
  guint32 b = *c++;
  int nbits = 8;
#define NEXT_BYTE(into) G_STMT_START { if (c >= end) return FALSE; (into) = *c++; } G_STMT_END
  for (gsize i = 0; i < nx;)
    {
      guint32 byte = 0;
      nbits -= fsbits;
      while (nbits < 0)
        {
          NEXT_BYTE (byte);
          b = (b << 8) | byte;
          nbits += 8;
        }
      int fs = (int) (b >> nbits) - 1;
      b &= (1u << nbits) - 1;
      gsize imax = MIN (i + (gsize) nblock, nx);
      if (fs < 0)
        i = imax;                       /* all differences zero: no bits */
      else if (fs == fsmax)
        for (; i < imax; i++)           /* pixels stored directly */
          {
            int k = bbits - nbits;
            for (k -= 8; k >= 0; k -= 8)
              NEXT_BYTE (b);
            if (nbits > 0)
              {
                NEXT_BYTE (b);
                b &= (1u << nbits) - 1;
              }
            else
              b = 0;
          }
      else
        for (; i < imax; i++)           /* Rice codes */
          {
            while (b == 0)
              {
                nbits += 8;
                NEXT_BYTE (b);
              }
            int nzero = nbits - (int) g_bit_storage (b);
            nbits -= nzero + 1;
            b ^= 1u << nbits;
            nbits -= fs;
            while (nbits < 0)
              {
                NEXT_BYTE (byte);
                b = (b << 8) | byte;
                nbits += 8;
              }
            b &= (1u << nbits) - 1;
          }
    }
#undef NEXT_BYTE
  return TRUE;
}

/* Follows pl_l2pi's reads of the COUNT 16-bit words at WORDS; FALSE if it
 * would read outside them. */
static gboolean
plio_stream_fits (const short *words, gsize count)
{
  if (count < 5)
    return FALSE;
  /* the header, as pl_l2pi reads it (its arrays are 1-based) */
  long length, first;
  if (words[2] > 0)
    length = words[2], first = 4;
  else
    length = (long) words[4] * 32768 + words[3], first = words[1] + 1; /* (w4 << 15) + w3 */
  if (length <= 0)
    return TRUE;                        /* decodes nothing */
  if (first < 1 || (gsize) length > count)
    return FALSE;
  gboolean skip = FALSE;
  for (long ip = first; ip <= length; ip++)
    {
      if (skip)
        {
          skip = FALSE;
          continue;
        }
      /* opcode 1 takes the following word as data */
      if (words[ip - 1] / 4096 == 1)
        {
          if ((gsize) ip + 1 > count)
            return FALSE;
          skip = TRUE;
        }
    }
  return TRUE;
}

/* Pixels in tile ROW (0-based) of the compressed image: edge tiles are cut
 * to the image, as cfitsio does. */
static guint64
tile_length (const FITSfile *file, LONGLONG row)
{
  guint64 length = 1;
  for (int axis = 0; axis < file->zndim && axis < MAX_COMPRESS_DIM; axis++)
    {
      long tile = MAX (file->tilesize[axis], 1);
      LONGLONG tiles = (file->znaxis[axis] + tile - 1) / tile;
      LONGLONG index = tiles > 0 ? row % tiles : 0;
      row = tiles > 0 ? row / tiles : 0;
      length *= (guint64) MIN ((LONGLONG) tile, file->znaxis[axis] - index * tile);
    }
  return length;
}

/* Reads tile ROW's data in COLUMN (bytes, or 16-bit words for PLIO) into a
 * new buffer; NULL with *COUNT = 0 for a tile not stored in that column,
 * NULL with *COUNT < 0 when the tile is damaged. */
static gpointer
read_compressed_tile (fitsfile *fits, int column, LONGLONG row, gboolean words, LONGLONG heap,
                      LONGLONG *count)
{
  LONGLONG offset = 0;
  int status = 0;
  *count = 0;
  fits_read_descriptll (fits, column, row + 1, count, &offset, &status);
  if (status == 0 && *count == 0)
    return NULL;
  LONGLONG size = *count * (words ? 2 : 1);
  if (status != 0 || *count < 0 || offset < 0 || size > heap || offset > heap - size)
    {
      fits_clear_errmsg ();
      *count = -1;
      return NULL;
    }
  gpointer data = g_try_malloc ((gsize) MAX (size, 1));
  if (data)
    {
      if (words)
        {
          short null_word = 0;
          fits_read_col (fits, TSHORT, column, row + 1, 1, *count, &null_word, data, NULL, &status);
        }
      else
        {
          unsigned char null_byte = 0;
          fits_read_col (fits, TBYTE, column, row + 1, 1, *count, &null_byte, data, NULL, &status);
        }
    }
  if (data == NULL || status != 0)
    {
      fits_clear_errmsg ();
      g_free (data);
      *count = -1;
      return NULL;
    }
  return data;
}

/* TRUE if the gzip stream in LENGTH BYTES ends (trailer and CRC checked)
 * within CAPACITY bytes of output. cfitsio's inflate loop grows its buffer
 * without end on some damaged streams (found by tests/fuzz: a hang). The
 * output goes to a small scratch buffer: only its amount matters. */
static gboolean
gzip_stream_fits (const guchar *bytes, gsize length, guint64 capacity)
{
  g_autoptr (GZlibDecompressor) inflater = g_zlib_decompressor_new (G_ZLIB_COMPRESSOR_FORMAT_GZIP);
  guchar scratch[65536];
  gsize in = 0;
  guint64 out = 0;
  for (;;)
    {
      gsize read = 0, written = 0;
      GConverterResult result = g_converter_convert (G_CONVERTER (inflater), bytes + in, length - in,
                                                     scratch, sizeof scratch, G_CONVERTER_INPUT_AT_END,
                                                     &read, &written, NULL);
      in += read;
      out += written;
      if (result == G_CONVERTER_ERROR || out > capacity)
        return FALSE;
      if (result == G_CONVERTER_FINISHED)
        return TRUE;
      if (read == 0 && written == 0)
        return FALSE;                   /* no progress: truncated stream */
    }
}

/* Checks the tile stored in COLUMN of row ROW as TYPE's data. */
static gboolean
tile_is_sound (fitsfile *fits, int column, int type, LONGLONG row, LONGLONG heap, gboolean *present)
{
  const FITSfile *file = fits->Fptr;
  LONGLONG count = 0;
  gpointer data = read_compressed_tile (fits, column, row, type == PLIO_1, heap, &count);
  *present = count != 0;
  if (data == NULL)
    return count == 0;
  guint64 pixels = tile_length (file, row);
  gboolean sound;
  if (type == PLIO_1)
    sound = plio_stream_fits (data, (gsize) count);
  else if (type == RICE_1)
    sound = rice_stream_fits (data, (gsize) count, pixels, file->rice_blocksize, file->rice_bytepix);
  else /* gzip: at most 8 bytes a pixel (doubles stored losslessly) */
    sound = gzip_stream_fits (data, (gsize) count, pixels * 8 + 64);
  g_free (data);
  return sound;
}

static const char *
compression_label (int type)
{
  return type == PLIO_1 ? "PLIO" : type == RICE_1 ? "Rice" : "gzip";
}

static gboolean
check_compressed_tiles (fitsfile *fits, const char *name, GError **error)
{
  const FITSfile *file = fits->Fptr;
  int type = file->compress_type;
  if (type == HCOMPRESS_1)
    {
      g_set_error (error, SS_ERROR, SS_ERROR_UNSUPPORTED,
                   "%s: HCOMPRESS_1 tile compression is not read (its decoder in cfitsio is unsafe "
                   "on damaged data); uncompress it first with funpack", name);
      return FALSE;
    }
  if (type != RICE_1 && type != PLIO_1 && type != GZIP_1 && type != GZIP_2)
    {
      g_set_error (error, SS_ERROR, SS_ERROR_UNSUPPORTED, "%s: unsupported tile compression", name);
      return FALSE;
    }
  LONGLONG heap = read_key_longlong (fits, "PCOUNT");
  for (LONGLONG row = 0; row < file->numrows; row++)
    {
      gboolean present = FALSE, sound = TRUE;
      int failed = type;
      if (file->cn_compressed > 0)
        sound = tile_is_sound (fits, file->cn_compressed, type, row, heap, &present);
      /* a float tile that could not be quantized is gzipped in its own column */
      if (sound && !present && file->cn_gzip_data > 0)
        {
          failed = GZIP_1;
          sound = tile_is_sound (fits, file->cn_gzip_data, GZIP_1, row, heap, &present);
        }
      if (!sound)
        {
          g_set_error (error, SS_ERROR, SS_ERROR_FORMAT,
                       "%s: damaged compressed image: the %s data of tile %lld are corrupt",
                       name, compression_label (failed), row + 1);
          return FALSE;
        }
    }
  return TRUE;
}

/* ------------------------------------------------------------------------ */
/* Reading                                                                   */

/* Keywords of a tile-compressed image's table that describe the table or
 * the compression, not the image. */
static gboolean
is_compression_keyword (const char *card)
{
  static const char *const exact[] = {
    "XTENSION", "BITPIX", "NAXIS", "PCOUNT", "GCOUNT", "TFIELDS", "THEAP", "ZIMAGE",
    "ZCMPTYPE", "ZBITPIX", "ZNAXIS", "ZMASKCMP", "ZQUANTIZ", "ZDITHER0", "ZSIMPLE",
    "ZTENSION", "ZEXTEND", "ZBLOCKED", "ZPCOUNT", "ZGCOUNT", "ZHECKSUM", "ZDATASUM",
    "CHECKSUM", "DATASUM",
  };
  /* Indexed families: NAXISn, TTYPEn, TFORMn, TUNITn, TDIMn, ZNAXISn, ZTILEn, ZNAMEn, ZVALn. */
  static const char *const indexed[] = { "NAXIS", "TTYPE", "TFORM", "TUNIT", "TDIM", "ZNAXIS",
                                         "ZTILE", "ZNAME", "ZVAL" };
  char keyword[9] = { 0 };
  memcpy (keyword, card, 8);
  g_strchomp (keyword);
  for (gsize i = 0; i < G_N_ELEMENTS (exact); i++)
    if (strcmp (keyword, exact[i]) == 0)
      return TRUE;
  for (gsize i = 0; i < G_N_ELEMENTS (indexed); i++)
    {
      gsize n = strlen (indexed[i]);
      if (strncmp (keyword, indexed[i], n) == 0 && keyword[n] != '\0'
          && strspn (keyword + n, "0123456789") == strlen (keyword + n))
        return TRUE;
    }
  return FALSE;
}

/* The image's own cards of a tile-compressed HDU, read from its table. The
 * fallback when cfitsio cannot rebuild the image header (it fails on files
 * without ZSIMPLE or ZTENSION, which some writers omit); the structural
 * cards it would rebuild are rewritten on output anyway. */
static SsHeader *
read_compressed_header_cards (fitsfile *fits, const char *name, GError **error)
{
  int count = 0, status = 0;
  fits_get_hdrspace (fits, &count, NULL, &status);
  SsHeader *header = ss_header_new ();
  for (int i = 1; status == 0 && i <= count; i++)
    {
      char card[FLEN_CARD] = "";
      /* fpack's default EXTNAME names the compression, not the image; cfitsio
       * drops it too when it rebuilds the header. */
      if (fits_read_record (fits, i, card, &status) == 0 && !is_compression_keyword (card)
          && !g_str_has_prefix (card, "EXTNAME = 'COMPRESSED_IMAGE'"))
        ss_header_add_card (header, card);
    }
  if (status != 0)
    {
      ss_header_free (header);
      set_fits_error (error, SS_ERROR_FORMAT, name, "cannot read the header", status);
      return NULL;
    }
  return header;
}

/* Every card of the current HDU, verbatim; for a compressed image cfitsio
 * gives the header of the equivalent uncompressed image. */
static SsHeader *
read_header_cards (fitsfile *fits, const char *name, gboolean compressed, GError **error)
{
  char *text = NULL;
  int count = 0, status = 0;
  if (fits_convert_hdr2str (fits, 0, NULL, 0, &text, &count, &status) != 0)
    {
      if (text)
        fits_free_memory (text, &status);
      if (compressed)
        {
          fits_clear_errmsg ();
          return read_compressed_header_cards (fits, name, error);
        }
      set_fits_error (error, SS_ERROR_FORMAT, name, "cannot read the header", status);
      return NULL;
    }
  SsHeader *header = ss_header_new ();
  gsize length = strlen (text);
  for (gsize offset = 0; offset + FITS_CARD <= length; offset += FITS_CARD)
    {
      if (is_end_card (text + offset))
        break;
      g_autofree char *card = g_strndup (text + offset, FITS_CARD);
      ss_header_add_card (header, card);
    }
  int ignored = 0;
  fits_free_memory (text, &ignored);
  return header;
}

/* The first pixel (1-based, per axis) of cube plane PLANE (0-based over all
 * axes beyond the second, first axis fastest). */
static void
first_pixel_of_plane (const HduInfo *info, int plane, LONGLONG *first)
{
  for (int i = 0; i < MAX_AXES; i++)
    first[i] = 1;
  LONGLONG rest = plane;
  for (int i = 2; i < info->naxis; i++)
    {
      first[i] = 1 + rest % info->naxes[i];
      rest /= info->naxes[i];
    }
}

static gboolean
read_pixels (fitsfile *fits, const char *name, const HduInfo *info, int plane, float *data,
             guint64 count, GError **error)
{
  LONGLONG first[MAX_AXES];
  first_pixel_of_plane (info, plane < 0 ? 0 : plane, first);
  /* BLANK (integer data) and compressed blanks become NaN. Float data are
   * read without cfitsio's null check: NaN passes through anyway, and the
   * check would also flush subnormal values to zero, breaking bit-exact
   * round trips. */
  float nan_value = NAN;
  gboolean null_check = info->bitpix > 0 || info->compressed;
  int any_null = 0, status = 0;
  fits_read_pixll (fits, TFLOAT, first, (LONGLONG) count, null_check ? &nan_value : NULL,
                   data, &any_null, &status);
  if (status == NUM_OVERFLOW)
    {
      fits_clear_errmsg ();
      g_set_error (error, SS_ERROR, SS_ERROR_UNSUPPORTED,
                   "%s: pixel values beyond the float32 range (after BSCALE/BZERO)", name);
      return FALSE;
    }
  if (status != 0)
    {
      set_fits_error (error, SS_ERROR_FORMAT, name, "cannot read the pixels", status);
      return FALSE;
    }
  return TRUE;
}

SsImage *
ss_fits_read (const char *path, const SsFitsReadOptions *options, GError **error)
{
  g_return_val_if_fail (path != NULL, NULL);
  SsFitsReadOptions opts = options ? *options : SS_FITS_READ_OPTIONS_DEFAULT;
  g_autofree char *name = g_filename_display_name (path);
  goffset file_size = 0;
  fitsfile *fits = open_fits (path, name, &file_size, error);
  if (fits == NULL)
    return NULL;

  SsImage *image = NULL;
  HduInfo info;
  ImageSize size;
  int chosen = 0;
  if (!select_hdu (fits, name, opts.hdu, &chosen, &info, error)
      || !image_size_from_axes (&info, name, &size, error))
    goto out;

  int plane = opts.plane < 0 ? -1 : opts.plane;
  if (plane >= size.planes)
    {
      g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT,
                   "%s: plane %d does not exist (HDU %d has %d plane%s, numbered from 0)",
                   name, plane, chosen, size.planes, size.planes == 1 ? "" : "s");
      goto out;
    }
  int planes_read = plane < 0 ? size.planes : 1;
  guint64 count = (guint64) size.width * (guint64) size.height * (guint64) planes_read;
  if (!check_sizes (fits, name, file_size, &info, &size, count, error))
    goto out;

  if (info.compressed && !check_compressed_tiles (fits, name, error))
    goto out;
  image = ss_image_new (size.width, size.height, planes_read, error);
  if (image == NULL)
    goto out;
  if (!read_pixels (fits, name, &info, plane, image->data, count, error)
      || (image->header = read_header_cards (fits, name, info.compressed, error)) == NULL)
    g_clear_pointer (&image, ss_image_free);

out:
  close_fits (fits);
  return image;
}

/* ------------------------------------------------------------------------ */
/* Writing                                                                   */

/* Printable ASCII only: what FITS allows in a card. */
static char *
sanitised_text (const char *text)
{
  char *ascii = g_str_to_ascii (text, "C");
  for (char *p = ascii; *p; p++)
    if (*p < 32 || *p > 126)
      *p = ' ';
  return ascii;
}

/* The cards cfitsio wrote itself when creating the image (the two standard
 * COMMENT lines of a primary HDU): not repeated from the input. */
static GHashTable *
cards_already_written (fitsfile *fits)
{
  GHashTable *cards = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  int count = 0, more = 0, status = 0;
  fits_get_hdrspace (fits, &count, &more, &status);
  for (int i = 1; status == 0 && i <= count; i++)
    {
      char card[FLEN_CARD] = "";
      if (fits_read_record (fits, i, card, &status) == 0)
        g_hash_table_add (cards, g_strchomp (g_strdup (card)));
    }
  fits_clear_errmsg ();
  return cards;
}

/* Writes CARD verbatim; a card cfitsio refuses (bad characters, a malformed
 * keyword) is kept as a COMMENT so its information is not lost. */
static gboolean
write_card (fitsfile *fits, const char *card, int *status)
{
  if (fits_write_record (fits, card, status) == 0)
    return TRUE;
  *status = 0;
  fits_clear_errmsg ();
  g_autofree char *text = sanitised_text (card);
  return fits_write_comment (fits, g_strstrip (text), status) == 0;
}

/* HISTORY texts, cut into pieces that fit one card each. */
static gboolean
write_history (fitsfile *fits, const char *history, int *status)
{
  g_autofree char *text = sanitised_text (history);
  gsize length = strlen (text);
  if (length == 0)
    return fits_write_history (fits, "", status) == 0;
  for (gsize offset = 0; offset < length; offset += HISTORY_CHUNK)
    {
      g_autofree char *piece = g_strndup (text + offset, HISTORY_CHUNK);
      if (fits_write_history (fits, piece, status) != 0)
        return FALSE;
    }
  return TRUE;
}

static gboolean
write_header (fitsfile *fits, const SsHeader *header, int *status)
{
  if (header == NULL)
    return TRUE;
  g_autoptr (GHashTable) written = cards_already_written (fits);
  for (guint i = 0; header->cards && i < header->cards->len; i++)
    {
      const char *card = g_ptr_array_index (header->cards, i);
      g_autofree char *trimmed = g_strchomp (g_strndup (card, FITS_CARD));
      if (ss_header_card_is_structural (card) || g_hash_table_contains (written, trimmed))
        continue;
      if (!write_card (fits, card, status))
        return FALSE;
    }
  for (guint i = 0; header->history && i < header->history->len; i++)
    if (!write_history (fits, g_ptr_array_index (header->history, i), status))
      return FALSE;
  return TRUE;
}

static gboolean
write_fits_file (const SsImage *image, const char *temp, const char *name, GError **error)
{
  fitsfile *fits = NULL;
  int status = 0;
  LONGLONG axes[3] = { image->width, image->height, image->planes };
  int naxis = image->planes > 1 ? 3 : 2;
  guint64 count = (guint64) image->width * image->height * image->planes;

  fits_create_diskfile (&fits, temp, &status);
  if (status == 0)
    fits_create_imgll (fits, FLOAT_IMG, naxis, axes, &status);
  if (status == 0)
    write_header (fits, image->header, &status);
  if (status == 0)
    fits_write_img (fits, TFLOAT, 1, (LONGLONG) count, image->data, &status);
  if (status != 0)
    {
      set_fits_error (error, SS_ERROR_IO, name, "cannot write", status);
      if (fits)
        close_fits (fits);
      return FALSE;
    }
  /* Closing flushes cfitsio's buffers: a full disk shows up here. */
  fits_close_file (fits, &status);
  if (status != 0)
    {
      set_fits_error (error, SS_ERROR_IO, name, "cannot write", status);
      return FALSE;
    }
  return TRUE;
}

static gboolean
check_image (const SsImage *image, const char *name, GError **error)
{
  if (image == NULL || image->data == NULL || image->width <= 0 || image->height <= 0
      || image->planes <= 0)
    {
      g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT, "%s: no image to write", name);
      return FALSE;
    }
  return TRUE;
}

gboolean
ss_fits_write (const SsImage *image, const char *path, gboolean force,
               const char *const *inputs, GError **error)
{
  g_autofree char *name = g_filename_display_name (path ? path : "");
  if (!check_image (image, name, error) || !ss_output_check (path, force, inputs, error))
    return FALSE;
  g_autofree char *temp = ss_output_temp_path (path);
  if (!write_fits_file (image, temp, name, error))
    {
      ss_output_abort (temp);
      return FALSE;
    }
  return ss_output_commit (temp, path, error);
}

/* ------------------------------------------------------------------------ */
/* Description                                                               */

static void
describe_axes (GString *out, const HduInfo *info)
{
  if (info->naxis == 0)
    {
      g_string_append (out, "  no data");
      return;
    }
  g_string_append (out, "  ");
  for (int i = 0; i < MIN (info->naxis, MAX_AXES); i++)
    g_string_append_printf (out, "%s%lld", i ? " x " : "", (long long) info->naxes[i]);
  if (info->naxis > MAX_AXES)
    g_string_append_printf (out, " (%d axes)", info->naxis);
}

static void
describe_table (GString *out, fitsfile *fits)
{
  long rows = 0;
  int columns = 0, status = 0;
  fits_get_num_rows (fits, &rows, &status);
  fits_get_num_cols (fits, &columns, &status);
  fits_clear_errmsg ();
  g_string_append_printf (out, "  %ld rows x %d columns", rows, columns);
}

static void
describe_main_cards (GString *out, fitsfile *fits)
{
  static const char *const keys[] = {
    "OBJECT", "TELESCOP", "INSTRUME", "DATE-OBS", "EXPTIME", "BUNIT",
    "CTYPE1", "CTYPE2", "CTYPE3", "CRVAL1", "CRVAL2", "CRVAL3",
  };
  for (gsize i = 0; i < G_N_ELEMENTS (keys); i++)
    {
      char value[FLEN_VALUE] = "";
      int status = 0;
      if (fits_read_keyword (fits, keys[i], value, NULL, &status) == 0)
        g_string_append_printf (out, "    %-8s = %s\n", keys[i], g_strstrip (value));
      fits_clear_errmsg ();
    }
  int count = 0, more = 0, status = 0;
  fits_get_hdrspace (fits, &count, &more, &status);
  for (int i = 1; status == 0 && i <= count; i++)
    {
      char card[FLEN_CARD] = "";
      if (fits_read_record (fits, i, card, &status) == 0 && strncmp (card, "HISTORY", 7) == 0)
        g_string_append_printf (out, "    %s\n", g_strchomp (card));
    }
  fits_clear_errmsg ();
}

static void
describe_hdu (GString *out, fitsfile *fits, int number, const HduInfo *info, goffset file_size)
{
  g_autofree char *extname = read_key_string (fits, "EXTNAME");
  g_string_append_printf (out, "HDU %d", number);
  if (extname && extname[0])
    g_string_append_printf (out, " '%s'", extname);
  g_string_append_printf (out, "  %s", hdu_type_name (info));
  if (info->compressed)
    {
      /* the table's own key: fits_get_compression_type is the setting for
       * writing, not what this HDU holds */
      g_autofree char *type = read_key_string (fits, "ZCMPTYPE");
      g_string_append_printf (out, " (%s)", type ? type : "unknown");
    }
  if (info->hdu_type == IMAGE_HDU)
    {
      g_string_append_printf (out, "  BITPIX %d", info->bitpix);
      describe_axes (out, info);
      ImageSize size;
      if (hdu_has_pixels (info) && image_size_from_axes (info, "", &size, NULL))
        {
          LONGLONG header_start = 0, data_start = 0, data_end = 0;
          int status = 0;
          fits_get_hduaddrll (fits, &header_start, &data_start, &data_end, &status);
          fits_clear_errmsg ();
          guint64 claimed = claimed_data_bytes (fits, info, &size);
          guint64 present = file_size > data_start ? (guint64) (file_size - data_start) : 0;
          if (status == 0 && claimed > present)
            g_string_append_printf (out, "  TRUNCATED: %" G_GUINT64_FORMAT " of %" G_GUINT64_FORMAT
                                    " data bytes present", present, claimed);
        }
    }
  else
    describe_table (out, fits);
  g_string_append_c (out, '\n');
  describe_main_cards (out, fits);
}

char *
ss_fits_describe (const char *path, GError **error)
{
  g_return_val_if_fail (path != NULL, NULL);
  g_autofree char *name = g_filename_display_name (path);
  goffset file_size = 0;
  fitsfile *fits = open_fits (path, name, &file_size, error);
  if (fits == NULL)
    return NULL;
  GString *out = g_string_new (NULL);
  g_string_append_printf (out, "%s: FITS, %" G_GINT64_FORMAT " bytes\n", name, (gint64) file_size);
  for (int number = 0;; number++)
    {
      int status = move_to_hdu (fits, number);
      HduInfo info;
      if (status == END_OF_FILE && number > 0)
        break;
      if (status != 0 || !read_hdu_info (fits, &info, &status))
        {
          g_autofree char *text = fits_status_text (status);
          g_string_append_printf (out, "HDU %d  unreadable: %s\n", number, text);
          break;
        }
      describe_hdu (out, fits, number, &info, file_size);
    }
  close_fits (fits);
  return g_string_free (out, FALSE);
}

/* ------------------------------------------------------------------------ */
/* Listing                                                                   */

void
ss_fits_hdu_free (SsFitsHdu *hdu)
{
  if (hdu == NULL)
    return;
  g_free (hdu->name);
  g_free (hdu);
}

static SsFitsHdu *
hdu_entry (fitsfile *fits, int number, const HduInfo *info)
{
  SsFitsHdu *hdu = g_new0 (SsFitsHdu, 1);
  hdu->number = number;
  hdu->name = read_key_string (fits, "EXTNAME");
  if (hdu->name == NULL)
    hdu->name = read_key_string (fits, "HDUNAME");
  if (hdu->name != NULL && hdu->name[0] == '\0')
    g_clear_pointer (&hdu->name, g_free);
  hdu->kind = hdu_type_name (info);
  hdu->has_image = hdu_has_pixels (info) && info->naxis <= MAX_AXES;
  hdu->bitpix = info->bitpix;
  if (hdu->has_image)
    {
      hdu->width = info->naxes[0];
      hdu->height = info->naxis > 1 ? info->naxes[1] : 1;
      /* Saturates rather than overflows: the reader refuses such sizes anyway. */
      hdu->planes = 1;
      for (int i = 2; i < info->naxis; i++)
        hdu->planes = hdu->planes > G_MAXINT64 / info->naxes[i] ? G_MAXINT64
                                                               : hdu->planes * info->naxes[i];
    }
  return hdu;
}

GPtrArray *
ss_fits_list_hdus (const char *path, GError **error)
{
  g_return_val_if_fail (path != NULL, NULL);
  g_autofree char *name = g_filename_display_name (path);
  goffset file_size = 0;
  fitsfile *fits = open_fits (path, name, &file_size, error);
  if (fits == NULL)
    return NULL;
  GPtrArray *hdus = g_ptr_array_new_with_free_func ((GDestroyNotify) ss_fits_hdu_free);
  for (int number = 0;; number++)
    {
      HduInfo info;
      int status = move_to_hdu (fits, number);
      if (status == END_OF_FILE && number > 0)
        break;
      if (status != 0 || !read_hdu_info (fits, &info, &status))
        {
          if (number == 0)
            {
              g_autofree char *what = g_strdup_printf ("HDU %d", number);
              set_fits_error (error, SS_ERROR_FORMAT, name, what, status);
              g_ptr_array_unref (hdus);
              close_fits (fits);
              return NULL;
            }
          break;
        }
      g_ptr_array_add (hdus, hdu_entry (fits, number, &info));
    }
  close_fits (fits);
  return hdus;
}
