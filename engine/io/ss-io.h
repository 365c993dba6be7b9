/* ss-io.h: reading any supported image by its content (FITS or PNG). */
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

G_END_DECLS
