/* ss-fits-read.c: the reading side of ss-fits.c: the checks that a header's
 * sizes fit the file and the memory (made before anything is allocated), the
 * header cards of an image (plain or tile-compressed) and its pixels as
 * float, with BZERO/BSCALE applied and blanks as NaN. */
#include "ss-fits-private.h"
#include "ss-error.h"
#include "ss-header.h"
#include "ss-mem.h"

#include <fitsio.h>
#include <math.h>
#include <string.h>

/* A tile-compressed image claiming more than this many bytes per byte of
 * compressed data is refused as damaged: real data (even all-constant
 * images under GZIP, ~1000:1) stay far below, and it keeps a few bytes of
 * hostile header from making us allocate gigabytes. */
#define MAX_COMPRESSION_RATIO 10000.0

/* ------------------------------------------------------------------------ */
/* Size checks, all before allocating                                        */

gboolean
ss_fits_image_size (const HduInfo *info, const char *name, ImageSize *size, GError **error)
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
guint64
ss_fits_claimed_data_bytes (fitsfile *fits, const HduInfo *info, const ImageSize *size)
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
gboolean
ss_fits_check_sizes (fitsfile *fits, const char *name, goffset file_size, const HduInfo *info,
                     const ImageSize *size, guint64 pixels_to_read, GError **error)
{
  LONGLONG header_start = 0, data_start = 0, data_end = 0;
  int status = 0;
  if (fits_get_hduaddrll (fits, &header_start, &data_start, &data_end, &status) != 0)
    {
      ss_fits_set_error (error, SS_ERROR_FORMAT, name, "cannot locate the data", status);
      return FALSE;
    }
  guint64 claimed = ss_fits_claimed_data_bytes (fits, info, size);
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
      ss_fits_set_error (error, SS_ERROR_FORMAT, name, "cannot read the header", status);
      return NULL;
    }
  return header;
}

/* Every card of the current HDU, verbatim; for a compressed image, the
 * header of the image it holds. */
SsHeader *
ss_fits_read_header_cards (fitsfile *fits, const char *name, const HduInfo *info, GError **error)
{
  if (info->compressed)
    return read_compressed_header_cards (fits, name, info, error);
  char *text = NULL;
  int count = 0, status = 0;
  if (fits_convert_hdr2str (fits, 0, NULL, 0, &text, &count, &status) != 0)
    {
      if (text)
        fits_free_memory (text, &status);
      ss_fits_set_error (error, SS_ERROR_FORMAT, name, "cannot read the header", status);
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

gboolean
ss_fits_read_pixels (fitsfile *fits, const char *name, const HduInfo *info, int plane, float *data,
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
      ss_fits_set_error (error, SS_ERROR_FORMAT, name, "cannot read the pixels", status);
      return FALSE;
    }
  return TRUE;
}
