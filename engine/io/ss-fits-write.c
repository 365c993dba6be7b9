/* ss-fits-write.c: ss_fits_write and ss_fits_write_uint16: an image and its
 * header's cards (less the structural ones) written to a temporary file that
 * replaces the target only once complete (ss-output.h). */
#include "ss-fits.h"
#include "ss-fits-private.h"
#include "ss-error.h"
#include "ss-output.h"

#include <fitsio.h>
#include <math.h>
#include <string.h>

#define HISTORY_CHUNK 72

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
      ss_fits_set_error (error, SS_ERROR_IO, name, "cannot write", status);
      if (fits)
        ss_fits_close (fits);
      return FALSE;
    }
  /* Closing flushes cfitsio's buffers: a full disk shows up here. */
  fits_close_file (fits, &status);
  if (status != 0)
    {
      ss_fits_set_error (error, SS_ERROR_IO, name, "cannot write", status);
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
