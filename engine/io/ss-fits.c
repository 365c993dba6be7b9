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
 * file-name syntax. The checks that keep damaged files away from cfitsio's
 * weak spots are in ss-fits-guard.c.
 */
#include "ss-fits.h"
#include "ss-fits-private.h"
#include "ss-io.h"
#include "ss-error.h"
#include "ss-mem.h"
#include "ss-output.h"
#include "ss-gunzip.h"

#include <errno.h>
#include <fitsio.h>
#include <gio/gio.h>
#include <glib/gstdio.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

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
      if (ss_fits_is_end_card (card))
        end = (offset + FITS_BLOCK - 1) / FITS_BLOCK * FITS_BLOCK;
    }
  fclose (file);
  return end;
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
      || !ss_fits_check_raw_headers (path, name, *file_size, error))
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

/* The bytes the current HDU's header says its data unit holds: the pixels
 * for a plain image, the binary table and its heap for a compressed one. */
static guint64
claimed_data_bytes (fitsfile *fits, const HduInfo *info, const ImageSize *size)
{
  if (!info->compressed)
    return checked_bytes (size->pixels, (guint64) ABS (info->bitpix) / 8);
  /* For a compressed image these keys are the binary table's own. */
  LONGLONG row_bytes = ss_fits_read_key_longlong (fits, "NAXIS1");
  LONGLONG rows = ss_fits_read_key_longlong (fits, "NAXIS2");
  LONGLONG heap = ss_fits_read_key_longlong (fits, "PCOUNT");
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

static void
add_integer_card (SsHeader *header, const char *keyword, gint64 value)
{
  g_autofree char *card = g_strdup_printf ("%-8s= %20" G_GINT64_FORMAT, keyword, value);
  ss_header_add_card (header, card);
}

/* The header of the image a tile-compressed HDU holds: its size and type
 * (INFO: what cfitsio parsed), then every card of the table that is not
 * about the table or the compression. cfitsio's own conversion
 * (fits_convert_hdr2str) is not used: it fails on tables that put an image
 * card before ZTENSION, as some writers do, and leaks its buffer then. */
static SsHeader *
read_compressed_header_cards (fitsfile *fits, const char *name, const HduInfo *info,
                              GError **error)
{
  SsHeader *header = ss_header_new ();
  add_integer_card (header, "BITPIX", info->bitpix);
  add_integer_card (header, "NAXIS", info->naxis);
  for (int i = 0; i < MIN (info->naxis, MAX_AXES); i++)
    {
      g_autofree char *keyword = g_strdup_printf ("NAXIS%d", i + 1);
      add_integer_card (header, keyword, info->naxes[i]);
    }
  int count = 0, status = 0;
  fits_get_hdrspace (fits, &count, NULL, &status);
  for (int i = 1; status == 0 && i <= count; i++)
    {
      char card[FLEN_CARD] = "";
      /* fpack's default EXTNAME names the compression, not the image;
       * cfitsio drops it too when it rebuilds the header. */
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

/* Every card of the current HDU, verbatim; for a compressed image, the
 * header of the image it holds. */
static SsHeader *
read_header_cards (fitsfile *fits, const char *name, const HduInfo *info, GError **error)
{
  if (info->compressed)
    return read_compressed_header_cards (fits, name, info, error);
  char *text = NULL;
  int count = 0, status = 0;
  if (fits_convert_hdr2str (fits, 0, NULL, 0, &text, &count, &status) != 0)
    {
      if (text)
        fits_free_memory (text, &status);
      set_fits_error (error, SS_ERROR_FORMAT, name, "cannot read the header", status);
      return NULL;
    }
  SsHeader *header = ss_header_new ();
  gsize length = strlen (text);
  for (gsize offset = 0; offset + FITS_CARD <= length; offset += FITS_CARD)
    {
      if (ss_fits_is_end_card (text + offset))
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

  if (info.compressed && !ss_fits_check_compressed_tiles (fits, name, error))
    goto out;
  image = ss_image_new (size.width, size.height, planes_read, error);
  if (image == NULL)
    goto out;
  if (!read_pixels (fits, name, &info, plane, image->data, count, error)
      || (image->header = read_header_cards (fits, name, &info, error)) == NULL)
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

/* BITPIX is FLOAT_IMG or USHORT_IMG (cfitsio writes BITPIX 16 with BZERO
 * 32768 and converts the floats, already whole numbers in range). */
static gboolean
write_fits_file (const SsImage *image, const char *temp, const char *name, int bitpix,
                 GError **error)
{
  fitsfile *fits = NULL;
  int status = 0;
  LONGLONG axes[3] = { image->width, image->height, image->planes };
  int naxis = image->planes > 1 ? 3 : 2;
  guint64 count = (guint64) image->width * image->height * image->planes;

  fits_create_diskfile (&fits, temp, &status);
  if (status == 0)
    fits_create_imgll (fits, bitpix, naxis, axes, &status);
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

static gboolean
write_fits (const SsImage *image, const char *path, gboolean force, const char *const *inputs,
            int bitpix, GError **error)
{
  g_autofree char *name = g_filename_display_name (path ? path : "");
  if (!check_image (image, name, error) || !ss_output_check (path, force, inputs, error))
    return FALSE;
  g_autofree char *temp = ss_output_temp_path (path);
  if (!write_fits_file (image, temp, name, bitpix, error))
    {
      ss_output_abort (temp);
      return FALSE;
    }
  return ss_output_commit (temp, path, error);
}

gboolean
ss_fits_write (const SsImage *image, const char *path, gboolean force,
               const char *const *inputs, GError **error)
{
  return write_fits (image, path, force, inputs, FLOAT_IMG, error);
}

gboolean
ss_fits_write_uint16 (const SsImage *image, const char *path, gboolean force,
                      const char *const *inputs, GError **error)
{
  gsize count = ss_image_plane_size (image) * (gsize) image->planes;
  for (gsize i = 0; i < count; i++)
    if (!(image->data[i] >= 0.0f && image->data[i] <= 65535.0f
          && image->data[i] == rintf (image->data[i])))
      {
        g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT,
                     "pixel %" G_GSIZE_FORMAT " (%g) is not a whole number in [0, 65535]",
                     i, image->data[i]);
        return FALSE;
      }
  return write_fits (image, path, force, inputs, USHORT_IMG, error);
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
