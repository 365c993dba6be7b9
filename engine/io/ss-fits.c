/* ss-fits.c: FITS images in and out, with cfitsio.
 *
 * cfitsio does the format work (every BITPIX, BZERO/BSCALE, BLANK, tile
 * compression); ss-fits*.c add what a desktop tool needs around it: the HDU
 * choice, checks that a header's claims fit the file and the memory BEFORE
 * anything is allocated, one-line messages that name the file and the
 * problem, and writes that never leave a half-written file (ss-output.h).
 *
 * Files are opened with fits_open_diskfile/fits_create_diskfile so that a
 * name such as "m31[1].fits" is a plain file name, not cfitsio's extended
 * file-name syntax. The checks that keep damaged files away from cfitsio's
 * weak spots are in ss-fits-guard.c.
 *
 * This file opens files, chooses the HDU and reads an image (ss_fits_read);
 * the size checks and the reading of pixels and headers are in ss-fits-read.c,
 * the writing in ss-fits-write.c, ss_fits_describe and ss_fits_list_hdus in
 * ss-fits-describe.c.
 */
#include "ss-fits.h"
#include "ss-fits-private.h"
#include "ss-io.h"
#include "ss-error.h"
#include "ss-gunzip.h"

#include <errno.h>
#include <fitsio.h>
#include <gio/gio.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* Messages                                                                  */

/* cfitsio's text for STATUS plus the oldest message on its stack (the most
 * specific one), and the stack cleared so it cannot leak into a later call. */
char *
ss_fits_status_text (int status)
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

void
ss_fits_set_error (GError **error, int code, const char *name, const char *what, int status)
{
  g_autofree char *text = ss_fits_status_text (status);
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
fitsfile *
ss_fits_open (const char *path, const char *name, goffset *file_size, GError **error)
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
  ss_fits_set_error (error, SS_ERROR_FORMAT, name, "not a valid FITS file", status);
  return NULL;
}

void
ss_fits_close (fitsfile *fits)
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
int
ss_fits_move_to_hdu (fitsfile *fits, int number)
{
  int status = 0, type = 0;
  fits_movabs_hdu (fits, number + 1, &type, &status);
  return status;
}

gboolean
ss_fits_read_hdu_info (fitsfile *fits, HduInfo *info, int *status)
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

gboolean
ss_fits_hdu_has_pixels (const HduInfo *info)
{
  if (info->hdu_type != IMAGE_HDU || info->naxis <= 0)
    return FALSE;
  for (int i = 0; i < MIN (info->naxis, MAX_AXES); i++)
    if (info->naxes[i] <= 0)
      return FALSE;
  return TRUE;
}

/* The value of a string keyword of the current HDU, or NULL. */
char *
ss_fits_read_key_string (fitsfile *fits, const char *keyword)
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
      g_autofree char *value = ss_fits_read_key_string (fits, keys[i]);
      if (value && g_ascii_strcasecmp (value, wanted) == 0)
        return TRUE;
    }
  return FALSE;
}

const char *
ss_fits_hdu_type_name (const HduInfo *info)
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
    return g_strdup_printf ("is a %s, not an image", ss_fits_hdu_type_name (info));
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
      int status = ss_fits_move_to_hdu (fits, number);
      if (status == END_OF_FILE && number > 0)
        {
          fits_clear_errmsg ();
          break;
        }
      g_autofree char *what = g_strdup_printf ("HDU %d", number);
      if (status != 0 || !ss_fits_read_hdu_info (fits, info, &status))
        {
          ss_fits_set_error (error, SS_ERROR_FORMAT, name, what, status);
          return FALSE;
        }
      if (ss_fits_hdu_has_pixels (info) && info->naxis <= MAX_AXES)
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
  int status = ss_fits_move_to_hdu (fits, number);
  if (status == END_OF_FILE || status == BAD_HDU_NUM)
    {
      fits_clear_errmsg ();
      g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT,
                   "%s: HDU %d does not exist (the file has %d, numbered from 0)",
                   name, number, count_hdus (fits));
      return FALSE;
    }
  g_autofree char *what = g_strdup_printf ("HDU %d", number);
  if (status != 0 || !ss_fits_read_hdu_info (fits, info, &status))
    {
      ss_fits_set_error (error, SS_ERROR_FORMAT, name, what, status);
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
      int status = ss_fits_move_to_hdu (fits, number);
      if (status == END_OF_FILE && number > 0)
        break;
      g_autofree char *what = g_strdup_printf ("HDU %d", number);
      if (status != 0 || !ss_fits_read_hdu_info (fits, info, &status))
        {
          ss_fits_set_error (error, SS_ERROR_FORMAT, name, what, status);
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
/* Reading                                                                   */

/* Adds the primary header's cards that an extension's image inherits
 * (ss_header_inherit) to HEADER: a multi-extension file keeps TELESCOP,
 * DATE-OBS, EXPTIME ... in its primary header, and the output, written as
 * one HDU, would otherwise lose them. Leaves FITS on the primary HDU. */
static gboolean
inherit_primary_cards (fitsfile *fits, const char *name, SsHeader *header, GError **error)
{
  HduInfo info;
  int status = ss_fits_move_to_hdu (fits, 0);
  if (status != 0 || !ss_fits_read_hdu_info (fits, &info, &status))
    {
      ss_fits_set_error (error, SS_ERROR_FORMAT, name, "HDU 0", status);
      return FALSE;
    }
  g_autoptr (SsHeader) primary = ss_fits_read_header_cards (fits, name, &info, error);
  if (primary == NULL)
    return FALSE;
  ss_header_inherit (header, primary);
  return TRUE;
}

/* One plane P of a cube, read alone, is the third axis' pixel P + 1 of the
 * file: CRPIX3 moves by P so that its world coordinate (a wavelength, a
 * time) stays that plane's, and not the first's, in a header written from
 * this one, for the readers that keep a third WCS axis on a 2-D image (a
 * WCSAXES = 3 card says so; without one most take the image's two). */
static void
shift_third_axis_reference (SsHeader *header, int plane)
{
  double crpix;
  if (ss_header_get_double (header, "CRPIX3", &crpix))
    ss_header_set_double (header, "CRPIX3", crpix - plane,
                          "reference pixel (moved: one plane of the cube)");
}

/* BSCALE and BZERO turn the stored integers into values. cfitsio reads a
 * string in either card (BSCALE = '2.0') as absent, scale 1 and zero 0,
 * which would give silently wrong values: such a header is refused. */
static gboolean
check_scaling_cards (fitsfile *fits, const char *name, GError **error)
{
  static const char *const keys[] = { "BSCALE", "BZERO" };
  for (gsize i = 0; i < G_N_ELEMENTS (keys); i++)
    {
      char value[FLEN_VALUE] = "";
      char type = 0;
      int status = 0;
      if (fits_read_keyword (fits, keys[i], value, NULL, &status) != 0)
        {
          fits_clear_errmsg ();   /* no such card: nothing to scale by */
          continue;
        }
      if (fits_get_keytype (value, &type, &status) == 0 && (type == 'I' || type == 'F'))
        continue;
      fits_clear_errmsg ();
      g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT,
                   "%s: its %s card is not a number (%s), so its pixel values cannot be "
                   "scaled; give it a number, or remove it if no scaling is meant",
                   name, keys[i], g_strstrip (value));
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
  fitsfile *fits = ss_fits_open (path, name, &file_size, error);
  if (fits == NULL)
    return NULL;

  SsImage *image = NULL;
  HduInfo info;
  ImageSize size;
  int chosen = 0;
  if (!select_hdu (fits, name, opts.hdu, &chosen, &info, error)
      || !ss_fits_image_size (&info, name, &size, error))
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
  if (!ss_fits_check_sizes (fits, name, file_size, &info, &size, count, error)
      || !check_scaling_cards (fits, name, error))
    goto out;

  if (info.compressed && !ss_fits_check_compressed_tiles (fits, name, error))
    goto out;
  image = ss_image_new (size.width, size.height, planes_read, error);
  if (image == NULL)
    goto out;
  if (!ss_fits_read_pixels (fits, name, &info, plane, image->data, count, error)
      || (image->header = ss_fits_read_header_cards (fits, name, &info, error)) == NULL
      || (chosen > 0 && !inherit_primary_cards (fits, name, image->header, error)))
    g_clear_pointer (&image, ss_image_free);
  else if (plane > 0 && info.naxis == 3)
    shift_third_axis_reference (image->header, plane);

out:
  ss_fits_close (fits);
  return image;
}
