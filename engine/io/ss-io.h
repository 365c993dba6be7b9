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

/* The format PATH's suffix names (any case). Any other name, among them
 * tile-compressed ".fz" and a bare ".gz", is refused with
 * SS_ERROR_INVALID_ARGUMENT and a message naming the accepted suffixes:
 * writing FITS into "x.jpg" silently would surprise whoever opens it. */
gboolean ss_output_format_from_name (const char *path, SsOutputFormat *format, GError **error);

G_END_DECLS
