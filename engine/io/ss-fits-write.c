/* ss-fits-write.c: ss_fits_write and ss_fits_write_uint16: an image, with
 * its source's axes, and its header's cards (less the structural ones)
 * written to a temporary file that replaces the target only once complete
 * (ss-output.h); gzip-compressed when the name says so (NAME.fits.gz, by
 * ss_output_format_from_name's rule). */
#include "ss-fits.h"
#include "ss-fits-private.h"
#include "ss-error.h"
#include "ss-io.h"
#include "ss-output.h"

#include <errno.h>
#include <fcntl.h>
#include <fitsio.h>
#include <gio/gio.h>
#include <glib/gstdio.h>
#include <unistd.h>
#include <math.h>
#include <string.h>

/* A HISTORY card's text: the 80 columns less the keyword's 8. */
#define HISTORY_CHUNK 72

/* ------------------------------------------------------------------------ */
/* Writing                                                                   */

/* The symbols the program's own texts use, in ASCII: g_str_to_ascii would
 * write each as '?' ("angle 33.5?", "? is too large"). */
static const char *const ascii_words[][2] = {
  { "°", " deg" }, { "×", "x" }, { "·", "*" }, { "−", "-" }, { "–", "-" }, { "—", "-" },
  { "≥", ">=" }, { "≤", "<=" }, { "≠", "!=" }, { "≈", "~" }, { "…", "..." }, { "²", "^2" },
  { "³", "^3" }, { "⁻", "^-" }, { "√", "sqrt" }, { "‖", "||" }, { "α", "alpha" },
  { "β", "beta" }, { "γ", "gamma" }, { "λ", "lambda" }, { "μ", "mu" }, { "ν", "nu" },
  { "ρ", "rho" }, { "σ", "sigma" }, { "τ", "tau" }, { "ψ", "psi" }, { "Δ", "Delta" },
  { "⊙", "*" }, { "⊘", "/" }, { "ᵀ", "^T" }, { "₁", "1" }, { "₂", "2" },
};

/* Printable ASCII only: what FITS allows in a card. */
static char *
sanitised_text (const char *text)
{
  GString *spelled = g_string_new (text);
  for (gsize i = 0; i < G_N_ELEMENTS (ascii_words); i++)
    g_string_replace (spelled, ascii_words[i][0], ascii_words[i][1], 0);
  g_autofree char *words = g_string_free (spelled, FALSE);
  char *ascii = g_str_to_ascii (words, "C");
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

/* How much of TEXT (LENGTH characters) the next HISTORY card takes: all of
 * it when it fits, else up to the last blank that fits, so that no word is
 * split between two cards; a word longer than a card is cut where the card
 * ends, as there is no blank to break at. */
static gsize
history_piece_length (const char *text, gsize length)
{
  if (length <= HISTORY_CHUNK)
    return length;
  for (gsize i = HISTORY_CHUNK; i > 0; i--)
    if (text[i] == ' ')
      return i;
  return HISTORY_CHUNK;
}

/* HISTORY texts, wrapped at blanks into pieces that fit one card each. */
static gboolean
write_history (fitsfile *fits, const char *history, int *status)
{
  g_autofree char *text = sanitised_text (history);
  gsize length = strlen (text);
  if (length == 0)
    return fits_write_history (fits, "", status) == 0;
  for (gsize offset = 0; offset < length;)
    {
      gsize piece_length = history_piece_length (text + offset, length - offset);
      g_autofree char *piece = g_strchomp (g_strndup (text + offset, piece_length));
      if (fits_write_history (fits, piece, status) != 0)
        return FALSE;
      offset += piece_length;
      /* The blanks at a break start no card: the next one starts on a word. */
      while (offset < length && text[offset] == ' ')
        offset++;
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

/* An axis length from HEADER's KEYWORD (NAXIS, NAXISn): FALSE when it is
 * missing or not a positive whole number. */
static gboolean
header_axis (const SsHeader *header, const char *keyword, gint64 *value)
{
  g_autofree char *text = ss_header_get_string (header, keyword);
  return text != NULL && g_ascii_string_to_signed (text, 10, 1, G_MAXINT64, value, NULL);
}

/* The axes of the image IMAGE's header came with, into AXES, when they
 * still describe IMAGE (NAXIS1 its width, NAXIS2 its height, the further
 * axes' product its planes): a (2, 2, 64, 64) cube must come back with
 * four axes, not as 4 planes of three, and a 1-D spectrum with one. 0 when
 * they do not (no header, a single plane picked, a region cut out). */
static int
source_axes (const SsImage *image, LONGLONG *axes)
{
  gint64 naxis = 0;
  if (image->header == NULL || !header_axis (image->header, "NAXIS", &naxis)
      || naxis > MAX_AXES)
    return 0;
  guint64 planes = 1;
  for (int i = 0; i < naxis; i++)
    {
      g_autofree char *keyword = g_strdup_printf ("NAXIS%d", i + 1);
      gint64 length = 0;
      if (!header_axis (image->header, keyword, &length)
          || (i >= 2 && !g_uint64_checked_mul (&planes, planes, (guint64) length)))
        return 0;
      axes[i] = length;
    }
  LONGLONG height = naxis >= 2 ? axes[1] : 1;
  if (axes[0] != image->width || height != image->height || planes != (guint64) image->planes)
    return 0;
  return (int) naxis;
}

/* The axes to write into AXES (MAX_AXES long); returns their number. */
static int
output_axes (const SsImage *image, LONGLONG *axes)
{
  int naxis = source_axes (image, axes);
  if (naxis > 0)
    return naxis;
  axes[0] = image->width;
  axes[1] = image->height;
  axes[2] = image->planes;
  return image->planes > 1 ? 3 : 2;
}

/* TRUE, with the message, when the file system holding TEMP (written in
 * part) has less room than BYTES. */
static gboolean
disk_lacks (const char *temp, guint64 bytes, GError **error, const char *name)
{
  g_autoptr (GFile) file = g_file_new_for_path (temp);
  g_autoptr (GFile) dir = g_file_get_parent (file);
  g_autoptr (GFileInfo) info = dir ? g_file_query_filesystem_info (
                                       dir, G_FILE_ATTRIBUTE_FILESYSTEM_FREE, NULL, NULL)
                                   : NULL;
  if (info == NULL || !g_file_info_has_attribute (info, G_FILE_ATTRIBUTE_FILESYSTEM_FREE))
    return FALSE;
  guint64 free_bytes = g_file_info_get_attribute_uint64 (info, G_FILE_ATTRIBUTE_FILESYSTEM_FREE);
  if (free_bytes >= bytes)
    return FALSE;
  g_autofree char *have = g_format_size (free_bytes);
  g_autofree char *need = g_format_size (bytes);
  g_set_error (error, SS_ERROR, SS_ERROR_IO,
               "%s: cannot write: the disk is full (%s free, the file needs about %s)", name,
               have, need);
  return TRUE;
}

/* The message for a failed write of TEMP, about BYTES long. cfitsio says
 * "couldn't create the named file" or "error writing to FITS file"; the
 * system's reason for the first, and a full disk, the usual cause of the
 * second, say more. */
static void
set_write_error (GError **error, const char *temp, const char *name, guint64 bytes, int status)
{
  if (status == FILE_NOT_CREATED)
    {
      /* Create it as cfitsio tried to, for errno. */
      int fd = g_open (temp, O_WRONLY | O_CREAT | O_EXCL, 0644);
      int saved = errno;
      if (fd < 0)
        {
          g_set_error (error, SS_ERROR, SS_ERROR_IO, "%s: cannot create a file there: %s", name,
                       g_strerror (saved));
          return;
        }
      close (fd);
      g_unlink (temp);
    }
  else if (disk_lacks (temp, bytes, error, name))
    return;
  ss_fits_set_error (error, SS_ERROR_IO, name, "cannot write", status);
}

/* BITPIX is FLOAT_IMG or USHORT_IMG (cfitsio writes BITPIX 16 with BZERO
 * 32768 and converts the floats, already whole numbers in range). */
static gboolean
write_fits_file (const SsImage *image, const char *temp, const char *name, int bitpix,
                 GError **error)
{
  fitsfile *fits = NULL;
  int status = 0;
  LONGLONG axes[MAX_AXES];
  int naxis = output_axes (image, axes);
  guint64 count = (guint64) image->width * image->height * image->planes;

  fits_create_diskfile (&fits, temp, &status);
  if (status == 0)
    fits_create_imgll (fits, bitpix, naxis, axes, &status);
  if (status == 0)
    write_header (fits, image->header, &status);
  if (status == 0)
    fits_write_img (fits, TFLOAT, 1, (LONGLONG) count, image->data, &status);
  /* The data and a few header blocks: what a full disk would lack. */
  guint64 bytes = count * (bitpix == FLOAT_IMG ? 4 : 2) + 4 * 2880;
  if (status != 0)
    {
      set_write_error (error, temp, name, bytes, status);
      if (fits)
        ss_fits_close (fits);
      return FALSE;
    }
  /* Closing flushes cfitsio's buffers: a full disk shows up here. */
  fits_close_file (fits, &status);
  if (status != 0)
    {
      set_write_error (error, temp, name, bytes, status);
      return FALSE;
    }
  return TRUE;
}

/* Compresses the complete FITS file PLAIN into ZIPPED, a new file, in
 * gzip's format (what gunzip, cfitsio, astropy and our reader open).
 * Closing the streams flushes them: a full disk shows up as an error. */
static gboolean
gzip_file (const char *plain, const char *zipped, const char *name, GError **error)
{
  g_autoptr (GError) local = NULL;
  g_autoptr (GFile) in_file = g_file_new_for_path (plain);
  g_autoptr (GFile) out_file = g_file_new_for_path (zipped);
  g_autoptr (GFileInputStream) in = g_file_read (in_file, NULL, &local);
  /* G_FILE_CREATE_NONE: created, never opened if it exists (O_EXCL) */
  g_autoptr (GFileOutputStream) out = in ? g_file_create (out_file, G_FILE_CREATE_NONE, NULL,
                                                          &local)
                                         : NULL;
  if (out != NULL)
    {
      g_autoptr (GZlibCompressor) compressor = g_zlib_compressor_new (G_ZLIB_COMPRESSOR_FORMAT_GZIP,
                                                                      -1);
      g_autoptr (GOutputStream) stream = g_converter_output_stream_new (G_OUTPUT_STREAM (out),
                                                                        G_CONVERTER (compressor));
      if (g_output_stream_splice (stream, G_INPUT_STREAM (in),
                                  G_OUTPUT_STREAM_SPLICE_CLOSE_SOURCE
                                  | G_OUTPUT_STREAM_SPLICE_CLOSE_TARGET, NULL, &local) >= 0)
        return TRUE;
    }
  g_set_error (error, SS_ERROR, SS_ERROR_IO, "%s: cannot write the gzip file: %s", name,
               local->message);
  return FALSE;
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

/* Whether PATH's name asks for gzip, by the one rule for output names
 * (ss_output_format_from_name, so the writer and every front end agree):
 * a name of another format or of none is refused, since FITS bytes under
 * ".png", ".fz" (whose readers expect tiles) or no suffix would be read as
 * something else, or not at all. */
static gboolean
fits_name_asks_gzip (const char *path, const char *name, gboolean *gzip, GError **error)
{
  SsOutputFormat format;
  if (!ss_output_format_from_name (path, &format, error))
    return FALSE;
  if (format == SS_OUTPUT_FORMAT_PNG)
    {
      g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT,
                   "%s: the name says PNG, but this writes FITS; name it .fits, .fit or .fts "
                   "(.gz after them for gzip)", name);
      return FALSE;
    }
  *gzip = format == SS_OUTPUT_FORMAT_FITS_GZIP;
  return TRUE;
}

/* PATH's bytes through TEMP (and, gzipped, ZIPPED), each beside PATH so
 * that the final rename is atomic; neither is left behind. A gzip output is
 * written plain, then compressed: cfitsio's own .gz writer also builds the
 * whole file first (in memory, a frame's size more), and the compression
 * dominates: on a 26 Mpx float frame zlib's level 6 takes 4.2 s, writing
 * and reading back the plain copy 0.1 s (this VM, 2026-11-26). */
static gboolean
write_fits_through_temp (const SsImage *image, const char *path, const char *name, int bitpix,
                         gboolean gzip, GError **error)
{
  g_autofree char *temp = ss_output_temp_path (path);
  g_autofree char *zipped = gzip ? ss_output_temp_path (path) : NULL;
  gboolean ok = write_fits_file (image, temp, name, bitpix, error)
                && (!gzip || gzip_file (temp, zipped, name, error));
  if (gzip)
    ss_output_abort (temp);   /* the plain copy: compressed, or failed */
  const char *complete = gzip ? zipped : temp;
  if (!ok)
    {
      ss_output_abort (complete);
      return FALSE;
    }
  return ss_output_commit (complete, path, error);
}

static gboolean
write_fits (const SsImage *image, const char *path, gboolean force, const char *const *inputs,
            int bitpix, GError **error)
{
  g_autofree char *name = g_filename_display_name (path ? path : "");
  gboolean gzip = FALSE;
  if (!check_image (image, name, error)
      || !fits_name_asks_gzip (path ? path : "", name, &gzip, error)
      || !ss_output_check (path, force, inputs, error))
    return FALSE;
  return write_fits_through_temp (image, path, name, bitpix, gzip, error);
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
