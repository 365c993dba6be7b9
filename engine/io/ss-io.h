/* ss-io.h: reading any supported image by its content (FITS or PNG), and
 * the format an output file's name asks for. */
#pragma once

#include "ss-fits.h"
#include "ss-png.h"

G_BEGIN_DECLS

/* Checks PATH is a non-empty regular file and reads up to SIZE of its first
 * bytes into START (*GOT of them); the usual mistakes (missing, a directory,
 * empty) get a message naming the file. Shared by every reader, so a file
 * is looked at once per check. FILE_SIZE may be NULL. */
gboolean ss_io_peek_file (const char *path, guchar *start, gsize size, gsize *got,
                          goffset *file_size, GError **error);

/* Detects the format from the first bytes (FITS "SIMPLE  =", PNG signature). */
SsImage *ss_image_load (const char *path, const SsFitsReadOptions *options, GError **error);

/* What an image output holds, told by its name (an output has no content
 * to look at yet). */
typedef enum {
  SS_OUTPUT_FORMAT_FITS,       /* .fits .fit .fts */
  SS_OUTPUT_FORMAT_FITS_GZIP,  /* the same followed by .gz: gzip-compressed FITS */
  SS_OUTPUT_FORMAT_PNG,        /* .png */
} SsOutputFormat;

/* The suffixes ss_output_format_from_name accepts, for messages and help. */
#define SS_OUTPUT_SUFFIXES ".fits, .fit, .fts (FITS; .gz after them for gzip) or .png"

/* The one rule for output names, which every writer and front end asks
 * (the CLI, the app's export, ss_fits_write): the format PATH's suffix
 * names, in any case, after a non-empty stem:
 *   NAME.fits, NAME.fit, NAME.fts       SS_OUTPUT_FORMAT_FITS
 *   the same followed by .gz            SS_OUTPUT_FORMAT_FITS_GZIP
 *   NAME.png                            SS_OUTPUT_FORMAT_PNG
 * Refused, with a message naming the accepted suffixes: fpack's
 * tile-compressed ".fz" (SS_ERROR_UNSUPPORTED: known, not written), and
 * any other name (SS_ERROR_INVALID_ARGUMENT): a bare ".gz", ".png.gz",
 * ".jpg", no suffix, a suffix with no stem (".fits"), an empty path.
 * Writing FITS into "x.jpg" silently would surprise whoever opens it. */
gboolean ss_output_format_from_name (const char *path, SsOutputFormat *format, GError **error);

/* Whether PATH names a PNG output by that rule; FALSE for FITS and for a
 * refused name (whose refusal comes from ss_output_format_from_name). */
gboolean ss_output_name_is_png (const char *path);

G_END_DECLS
