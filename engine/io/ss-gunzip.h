/* ss-gunzip.h: gzip-compressed files (frame.fits.gz, as archives serve them).
 *
 * The FITS reader works on a plain file it can check before cfitsio sees it,
 * so a gzip file is first decompressed to a temporary file (in TMPDIR). Its
 * size is bounded by the input's: deflate cannot expand more than 1032:1,
 * and SS_GUNZIP_MAX_RATIO enforces a bound of our own above that, so that a
 * broken stream or zlib never fills the disk.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Above deflate's 1032:1 (an all-zero image comes close to it). */
#define SS_GUNZIP_MAX_RATIO 2000

/* TRUE when BYTES start with the gzip magic number. */
gboolean ss_gunzip_is_gzip (const guchar *bytes, gsize length);

/* Decompresses PATH into a new temporary file and returns its path (g_free;
 * the caller removes the file). NAME is PATH for messages. Fails with
 * SS_ERROR_FORMAT for a damaged or truncated stream, SS_ERROR_TOO_LARGE past
 * the bound, SS_ERROR_IO when the temporary file cannot be written; nothing
 * is left behind on failure. */
char *ss_gunzip_to_temp (const char *path, const char *name, GError **error);

G_END_DECLS
