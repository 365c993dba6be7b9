/* ss-fits.h: reading and writing FITS images with cfitsio.
 *
 * Reading: the first HDU holding an image by default, or one chosen by number
 * (0 = primary) or EXTNAME; every BITPIX (8/16/32/64/-32/-64) with BZERO/BSCALE
 * applied; BLANK (integer data) and NaN (float data) become NaN; a cube gives
 * one plane (plane >= 0) or every plane (plane < 0); tile-compressed images
 * are read transparently. Zero-size images, missing or truncated data and
 * absurd sizes are clear errors.
 *
 * An image read from an extension keeps the primary header's descriptive
 * cards that the extension does not define itself (TELESCOP, DATE-OBS, ...
 * of a multi-extension file), as the INHERIT convention has it, unless the
 * extension says INHERIT = F.
 *
 * Writing: float32, with the source's axes when they still describe the
 * image (a 4-D cube stays 4-D), the source header's cards kept except the
 * structural ones, HISTORY cards appended (wrapped between words); through
 * a temporary file renamed into place (ss-output.h), never over the input;
 * the name must be a FITS output's (ss_output_format_from_name in ss-io.h),
 * gzip-compressed for NAME.fits.gz and the like (.fz, tile compression, is
 * refused).
 */
#pragma once

#include "ss-image.h"

G_BEGIN_DECLS

typedef struct {
  const char *hdu;    /* NULL: first image HDU; "N" (0 = primary) or an EXTNAME */
  int plane;          /* cube plane; -1 = all planes */
} SsFitsReadOptions;

#define SS_FITS_READ_OPTIONS_DEFAULT ((SsFitsReadOptions) { NULL, -1 })

SsImage *ss_fits_read (const char *path, const SsFitsReadOptions *options, GError **error);

/* Writes IMAGE as float32 to PATH: plain for .fits, .fit or .fts, gzip-
 * compressed for the same followed by .gz (any case). Fails (SS_ERROR_IO)
 * if PATH exists and FORCE is FALSE, or if PATH is the same file as any
 * path in INPUTS (NULL-terminated, may be NULL); SS_ERROR_UNSUPPORTED when
 * PATH ends in .fz, SS_ERROR_INVALID_ARGUMENT for a name that is not a
 * FITS output's by ss_output_format_from_name (".png", ".gz" alone, no
 * suffix), before anything is written. */
gboolean ss_fits_write (const SsImage *image, const char *path, gboolean force,
                        const char *const *inputs, GError **error);

/* The same as uint16 (BITPIX 16, BZERO 32768), what cameras write: every
 * pixel must be a whole number in [0, 65535] (SS_ERROR_INVALID_ARGUMENT
 * otherwise, before anything is written). */
gboolean ss_fits_write_uint16 (const SsImage *image, const char *path, gboolean force,
                               const char *const *inputs, GError **error);

/* A multi-line human-readable description: HDUs, sizes, BITPIX, main cards. */
char *ss_fits_describe (const char *path, GError **error);

/* One HDU of a file, as ss_fits_list_hdus sees it from its header. */
typedef struct {
  int number;              /* 0 = primary: what --hdu and SsFitsReadOptions.hdu take */
  char *name;              /* EXTNAME (or HDUNAME); NULL when it has none */
  const char *kind;        /* "image", "compressed image", "binary table", "ASCII table" */
  gboolean has_image;      /* holds pixels that ss_fits_read can read */
  int bitpix;              /* of the pixels (ZBITPIX when compressed) */
  gint64 width, height;    /* NAXIS1, NAXIS2 (1 for a 1-D image) */
  gint64 planes;           /* the product of the further axes (1 for a plain image) */
} SsFitsHdu;

void ss_fits_hdu_free (SsFitsHdu *hdu);

/* Every HDU of PATH, in order, read from the headers only (no pixel is
 * decoded): a GPtrArray of SsFitsHdu (freed with it). The first with
 * has_image is the one ss_fits_read reads by default. An HDU after the
 * first that cannot be read ends the list (the file is damaged there). */
GPtrArray *ss_fits_list_hdus (const char *path, GError **error);
/* How many HDUS (SsFitsHdu, may be NULL) hold an image; *FIRST (may be
 * NULL) gets the first one's number, -1 when none does. */
guint ss_fits_count_images (const GPtrArray *hdus, int *first);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SsFitsHdu, ss_fits_hdu_free)

G_END_DECLS
