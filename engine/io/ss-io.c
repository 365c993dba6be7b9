/* ss-io.c: open any supported image by what its first bytes say, not by its
 * file name (a ".fits" that is really a PNG, or the reverse, still works,
 * and a misnamed file gets a message about its content). Outputs, having
 * no content yet, are told by their names (ss_output_format_from_name).
 */
#include "ss-io.h"
#include "ss-gunzip.h"
#include "ss-error.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <png.h>
#include <stdio.h>
#include <string.h>

typedef enum {
  FORMAT_UNKNOWN,
  FORMAT_FITS,
  FORMAT_PNG,
} ImageFormat;

gboolean
ss_io_peek_file (const char *path, guchar *start, gsize size, gsize *got, goffset *file_size,
                 GError **error)
{
  g_autofree char *name = g_filename_display_name (path);
  GStatBuf st;
  if (g_stat (path, &st) != 0)
    {
      int saved = errno;
      g_set_error (error, SS_ERROR, SS_ERROR_IO, "%s: %s", name, g_strerror (saved));
      return FALSE;
    }
  if (S_ISDIR (st.st_mode))
    {
      g_set_error (error, SS_ERROR, SS_ERROR_IO, "%s: is a directory, not an image file", name);
      return FALSE;
    }
  if (!S_ISREG (st.st_mode))
    {
      g_set_error (error, SS_ERROR, SS_ERROR_IO, "%s: is not a regular file", name);
      return FALSE;
    }
  if (st.st_size == 0)
    {
      g_set_error (error, SS_ERROR, SS_ERROR_FORMAT, "%s: empty file", name);
      return FALSE;
    }
  FILE *file = g_fopen (path, "rb");
  if (file == NULL)
    {
      int saved = errno;
      g_set_error (error, SS_ERROR, SS_ERROR_IO, "%s: %s", name, g_strerror (saved));
      return FALSE;
    }
  memset (start, 0, size);
  *got = fread (start, 1, size, file);
  fclose (file);
  if (file_size)
    *file_size = st.st_size;
  return TRUE;
}

/* Names the format from the first bytes of PATH. */
static gboolean
detect_format (const char *path, ImageFormat *format, GError **error)
{
  guchar start[16];
  gsize got = 0;
  if (!ss_io_peek_file (path, start, sizeof start, &got, NULL, error))
    return FALSE;
  if (got >= 9 && memcmp (start, "SIMPLE  =", 9) == 0)
    *format = FORMAT_FITS;
  else if (got >= 8 && png_sig_cmp (start, 0, 8) == 0)
    *format = FORMAT_PNG;
  else if (ss_gunzip_is_gzip (start, got))
    *format = FORMAT_FITS; /* frame.fits.gz: the FITS reader decompresses it */
  else
    *format = FORMAT_UNKNOWN;
  return TRUE;
}

/* A PNG has no HDUs; a plane can still be picked from an RGB one. */
static SsImage *
load_png (const char *path, const char *name, const SsFitsReadOptions *options, GError **error)
{
  if (options && options->hdu && options->hdu[0])
    {
      g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT,
                   "%s: is a PNG file; HDU selection applies to FITS files only", name);
      return NULL;
    }
  SsImage *image = ss_png_read (path, error);
  if (image == NULL || options == NULL || options->plane < 0)
    return image;
  if (options->plane >= image->planes)
    {
      g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT,
                   "%s: plane %d does not exist (the PNG has %d, numbered from 0)",
                   name, options->plane, image->planes);
      ss_image_free (image);
      return NULL;
    }
  SsImage *plane = ss_image_extract_plane (image, options->plane, error);
  ss_image_free (image);
  return plane;
}

SsImage *
ss_image_load (const char *path, const SsFitsReadOptions *options, GError **error)
{
  g_return_val_if_fail (path != NULL, NULL);
  g_autofree char *name = g_filename_display_name (path);
  ImageFormat format = FORMAT_UNKNOWN;
  if (!detect_format (path, &format, error))
    return NULL;
  switch (format)
    {
    case FORMAT_FITS:
      return ss_fits_read (path, options, error);
    case FORMAT_PNG:
      return load_png (path, name, options, error);
    case FORMAT_UNKNOWN:
    default:
      g_set_error (error, SS_ERROR, SS_ERROR_FORMAT, "%s: not a FITS or PNG file", name);
      return NULL;
    }
}

/* ------------------------------------------------------------------------ */
/* Output formats by name                                                    */

static gboolean
has_suffix (const char *lower, const char *suffix)
{
  gsize length = strlen (lower), suffix_length = strlen (suffix);
  /* ".fits" alone names no file: a stem is needed before the suffix. */
  return length > suffix_length && g_str_has_suffix (lower, suffix)
         && lower[length - suffix_length - 1] != G_DIR_SEPARATOR;
}

static gboolean
has_fits_suffix (const char *lower)
{
  static const char *const suffixes[] = { ".fits", ".fit", ".fts" };
  for (gsize i = 0; i < G_N_ELEMENTS (suffixes); i++)
    if (has_suffix (lower, suffixes[i]))
      return TRUE;
  return FALSE;
}

/* The format LOWER (a lower-case copy of the name, cut here) names, or
 * FALSE. ".gz" is gzip only after a FITS suffix: a PNG is compressed
 * already, and a bare "x.gz" says nothing of what is inside. */
static gboolean
format_of_lower (char *lower, SsOutputFormat *format)
{
  gboolean gzip = has_suffix (lower, ".gz");
  if (gzip)
    lower[strlen (lower) - 3] = '\0';   /* "frame.fits.gz": the FITS suffix before it */
  if (has_fits_suffix (lower))
    {
      *format = gzip ? SS_OUTPUT_FORMAT_FITS_GZIP : SS_OUTPUT_FORMAT_FITS;
      return TRUE;
    }
  if (!gzip && has_suffix (lower, ".png"))
    {
      *format = SS_OUTPUT_FORMAT_PNG;
      return TRUE;
    }
  return FALSE;
}

/* Why the name LOWER (lower case, whole) gives no format, for the message. */
static const char *
refusal_reason (const char *lower)
{
  if (g_str_has_suffix (lower, ".fz"))
    return "tile-compressed FITS (.fz) is not written (write .fits or .fits.gz, then fpack it)";
  if (g_str_has_suffix (lower, ".png.gz"))
    return "a PNG is not gzip-compressed (it is compressed already)";
  if (g_str_has_suffix (lower, ".gz"))
    return "gzip needs a FITS suffix before .gz (NAME.fits.gz)";
  return "the name does not say the output format";
}

static void
refuse_name (const char *path, GError **error)
{
  if (path[0] == '\0')
    {
      g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT,
                   "no output file given; name the output " SS_OUTPUT_SUFFIXES);
      return;
    }
  g_autofree char *lower = g_ascii_strdown (path, -1);
  g_autofree char *name = g_filename_display_name (path);
  /* .fz is a format we know and do not write, not a mistyped name. */
  int code = g_str_has_suffix (lower, ".fz") ? SS_ERROR_UNSUPPORTED : SS_ERROR_INVALID_ARGUMENT;
  g_set_error (error, SS_ERROR, code, "%s: %s; name the output " SS_OUTPUT_SUFFIXES, name,
               refusal_reason (lower));
}

gboolean
ss_output_format_from_name (const char *path, SsOutputFormat *format, GError **error)
{
  g_return_val_if_fail (path != NULL && format != NULL, FALSE);
  g_autofree char *lower = g_ascii_strdown (path, -1);
  if (format_of_lower (lower, format))
    return TRUE;
  refuse_name (path, error);
  return FALSE;
}

gboolean
ss_output_name_is_png (const char *path)
{
  SsOutputFormat format;
  return path != NULL && ss_output_format_from_name (path, &format, NULL)
         && format == SS_OUTPUT_FORMAT_PNG;
}
