/* ss-fits-describe.c: what a FITS file holds, read from its headers only:
 * ss_fits_describe's text for people and ss_fits_list_hdus's list of HDUs
 * for the callers that offer a choice. */
#include "ss-fits.h"
#include "ss-fits-private.h"
#include "ss-error.h"

#include <fitsio.h>
#include <string.h>

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
  g_autofree char *extname = ss_fits_read_key_string (fits, "EXTNAME");
  g_string_append_printf (out, "HDU %d", number);
  if (extname && extname[0])
    g_string_append_printf (out, " '%s'", extname);
  g_string_append_printf (out, "  %s", ss_fits_hdu_type_name (info));
  if (info->compressed)
    {
      /* the table's own key: fits_get_compression_type is the setting for
       * writing, not what this HDU holds */
      g_autofree char *type = ss_fits_read_key_string (fits, "ZCMPTYPE");
      g_string_append_printf (out, " (%s)", type ? type : "unknown");
    }
  if (info->hdu_type == IMAGE_HDU)
    {
      g_string_append_printf (out, "  BITPIX %d", info->bitpix);
      describe_axes (out, info);
      ImageSize size;
      g_autoptr (GError) size_error = NULL;
      gboolean has_pixels = ss_fits_hdu_has_pixels (info);
      /* Axes past what a read takes (an int a side) are said, not skipped:
       * the listing is where a user looks to learn why a file will not open. */
      if (has_pixels && !ss_fits_image_size (info, "HDU", &size, &size_error))
        g_string_append_printf (out, "  UNREADABLE: %s", size_error->message);
      else if (has_pixels)
        {
          LONGLONG header_start = 0, data_start = 0, data_end = 0;
          int status = 0;
          fits_get_hduaddrll (fits, &header_start, &data_start, &data_end, &status);
          fits_clear_errmsg ();
          guint64 claimed = ss_fits_claimed_data_bytes (fits, info, &size);
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

/* What walk_hdus calls for each HDU it can read. */
typedef void (*HduVisit) (fitsfile *fits, int number, const HduInfo *info, gpointer data);

/* Calls VISIT on each HDU of FITS in turn. TRUE when the walk reached the
 * end of the file; FALSE at the first HDU that cannot be read, its number
 * in *FAILED and cfitsio's status in *STATUS. */
static gboolean
walk_hdus (fitsfile *fits, HduVisit visit, gpointer data, int *failed, int *status)
{
  for (int number = 0;; number++)
    {
      HduInfo info;
      *status = ss_fits_move_to_hdu (fits, number);
      if (*status == END_OF_FILE && number > 0)
        return TRUE;
      if (*status != 0 || !ss_fits_read_hdu_info (fits, &info, status))
        {
          *failed = number;
          return FALSE;
        }
      visit (fits, number, &info, data);
    }
}

typedef struct {
  GString *out;
  goffset file_size;
} Description;

static void
describe_visit (fitsfile *fits, int number, const HduInfo *info, gpointer data)
{
  Description *d = data;
  describe_hdu (d->out, fits, number, info, d->file_size);
}

char *
ss_fits_describe (const char *path, GError **error)
{
  g_return_val_if_fail (path != NULL, NULL);
  g_autofree char *name = g_filename_display_name (path);
  goffset file_size = 0;
  fitsfile *fits = ss_fits_open (path, name, &file_size, error);
  if (fits == NULL)
    return NULL;
  Description d = { g_string_new (NULL), file_size };
  g_string_append_printf (d.out, "%s: FITS, %" G_GINT64_FORMAT " bytes\n", name,
                          (gint64) file_size);
  int failed, status;
  if (!walk_hdus (fits, describe_visit, &d, &failed, &status))
    {
      g_autofree char *text = ss_fits_status_text (status);
      g_string_append_printf (d.out, "HDU %d  unreadable: %s\n", failed, text);
    }
  ss_fits_close (fits);
  return g_string_free (d.out, FALSE);
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
  hdu->name = ss_fits_read_key_string (fits, "EXTNAME");
  if (hdu->name == NULL)
    hdu->name = ss_fits_read_key_string (fits, "HDUNAME");
  if (hdu->name != NULL && hdu->name[0] == '\0')
    g_clear_pointer (&hdu->name, g_free);
  hdu->kind = ss_fits_hdu_type_name (info);
  hdu->has_image = ss_fits_hdu_has_pixels (info) && info->naxis <= MAX_AXES;
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

static void
list_visit (fitsfile *fits, int number, const HduInfo *info, gpointer data)
{
  g_ptr_array_add (data, hdu_entry (fits, number, info));
}

guint
ss_fits_count_images (const GPtrArray *hdus, int *first)
{
  guint count = 0;
  if (first != NULL)
    *first = -1;
  for (guint i = 0; hdus != NULL && i < hdus->len; i++)
    {
      const SsFitsHdu *hdu = g_ptr_array_index (hdus, i);
      if (!hdu->has_image)
        continue;
      if (count++ == 0 && first != NULL)
        *first = hdu->number;
    }
  return count;
}

GPtrArray *
ss_fits_list_hdus (const char *path, GError **error)
{
  g_return_val_if_fail (path != NULL, NULL);
  g_autofree char *name = g_filename_display_name (path);
  goffset file_size = 0;
  fitsfile *fits = ss_fits_open (path, name, &file_size, error);
  if (fits == NULL)
    return NULL;
  GPtrArray *hdus = g_ptr_array_new_with_free_func ((GDestroyNotify) ss_fits_hdu_free);
  int failed, status;
  /* An unreadable HDU after the first ends the list; the list needs the first. */
  if (!walk_hdus (fits, list_visit, hdus, &failed, &status) && failed == 0)
    {
      ss_fits_set_error (error, SS_ERROR_FORMAT, name, "HDU 0", status);
      g_clear_pointer (&hdus, g_ptr_array_unref);
    }
  ss_fits_close (fits);
  return hdus;
}
