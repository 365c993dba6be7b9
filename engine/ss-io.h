/* ss-io.h: reading any supported image by its content (FITS or PNG). */
#pragma once

#include "ss-fits.h"
#include "ss-png.h"

G_BEGIN_DECLS

/* Detects the format from the first bytes (FITS "SIMPLE  =", PNG signature). */
SsImage *ss_image_load (const char *path, const SsFitsReadOptions *options, GError **error);

G_END_DECLS
