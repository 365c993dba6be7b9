/* ss-png.h: reading PNG (8/16-bit grey or RGB) and writing stretched PNG. */
#pragma once

#include "ss-image.h"

G_BEGIN_DECLS

typedef enum {
  SS_STRETCH_LINEAR,
  SS_STRETCH_LOG,
  SS_STRETCH_SQRT,
  SS_STRETCH_ASINH,
} SsStretch;

typedef struct {
  SsStretch stretch;
  double low_percent;   /* limits as percentiles of the finite pixels: */
  double high_percent;  /* 0 and 100 mean min and max */
  int bit_depth;        /* 8 or 16 */
  gboolean flip_vertical; /* TRUE: row 0 at the bottom of the PNG, as displayed */
} SsPngWriteOptions;

void ss_png_write_options_init (SsPngWriteOptions *options); /* linear, 0..100, 8 bits, flipped */

gboolean ss_stretch_from_string (const char *text, SsStretch *stretch, GError **error);

/* Grey PNGs give one plane, RGB(A) three; values scaled to [0, 1]. The PNG's
 * top row becomes the image's last row (so that display matches the PNG). */
SsImage *ss_png_read (const char *path, GError **error);

/* A PNG's header, as stored (before any transform). */
typedef struct {
  guint32 width, height;
  int bit_depth;
  int colour_type;   /* PNG_COLOR_TYPE_*: 0 grey, 2 RGB, 3 palette, 4 and 6 with alpha */
} SsPngHeader;

/* Decodes every row of the PNG at PATH and its end (the chunks' CRCs and
 * IEND), one row at a time and keeping none, as `info` needs: the header
 * alone says nothing of a file cut short or corrupted after it. Fills
 * HEADER (may be NULL) from what it read. Fails (SS_ERROR_FORMAT, "NAME:
 * damaged PNG: ...") on the first damage found, and as ss_png_read does on
 * a file that is no PNG or cannot be opened. */
gboolean ss_png_verify (const char *path, SsPngHeader *header, GError **error);

/* Writes IMAGE, of 1 plane (grey) or 3 (RGB; any other count is refused,
 * SS_ERROR_INVALID_ARGUMENT); same overwrite rules as FITS. */
gboolean ss_png_write (const SsImage *image, const char *path, const SsPngWriteOptions *options,
                       gboolean force, const char *const *inputs, GError **error);

/* Writes 8-bit RGB rows (RGB: HEIGHT rows of WIDTH pixels, top row first)
 * as they are, with DESCRIPTION (or NULL) as the PNG's Description text:
 * for drawings made by the engine (the phase-transition heat map). Same
 * overwrite rules as ss_png_write. */
gboolean ss_png_write_rgb8 (const guint8 *rgb, int width, int height, const char *description,
                            const char *path, gboolean force, GError **error);

/* Maps N values to [0, 1] with the stretch and limits of OPTIONS (shared by the
 * PNG writer and the app's display). LOW/HIGH receive the limits used. */
void ss_stretch_apply (const float *in, float *out, gsize n, SsStretch stretch,
                       double low_percent, double high_percent, double *low, double *high);

G_END_DECLS
