/* ss-fits-private.h: what the FITS code (ss-fits.c, ss-fits-read.c,
 * ss-fits-write.c, ss-fits-describe.c) and its guards against cfitsio's
 * failures on damaged files (ss-fits-guard.c) share. */
#pragma once

#include "ss-header.h"

#include <fitsio.h>
#include <glib.h>
#include <string.h>

#define FITS_BLOCK 2880
#define FITS_CARD 80
#define MAX_AXES 9

typedef struct {
  int hdu_type;          /* IMAGE_HDU, BINARY_TBL, ASCII_TBL */
  gboolean compressed;   /* a tile-compressed image stored in a binary table */
  int bitpix;            /* of the image (ZBITPIX when compressed) */
  int naxis;
  LONGLONG naxes[MAX_AXES];
} HduInfo;

typedef struct {
  int width;
  int height;
  int planes;
  guint64 pixels;        /* width * height * planes */
} ImageSize;

/* As cfitsio decides: the keyword field is END (the rest is not looked at). */
static inline gboolean
ss_fits_is_end_card (const char *card)
{
  return memcmp (card, "END     ", 8) == 0;
}

/* A keyword's integer value in the current HDU, or 0 when it is missing
 * or unreadable (the callers treat 0 as "nothing claimed"). */
static inline LONGLONG
ss_fits_read_key_longlong (fitsfile *fits, const char *keyword)
{
  LONGLONG value = 0;
  int status = 0;
  if (fits_read_key_lnglng (fits, keyword, &value, NULL, &status) != 0)
    {
      fits_clear_errmsg ();
      return 0;
    }
  return value;
}

/* Reads every header of the FILE_SIZE bytes at PATH (NAME in messages) as
 * text and refuses, with a message, those cfitsio would crash or stall on
 * while merely opening the file or moving to an HDU. */
gboolean ss_fits_check_raw_headers (const char *path, const char *name, goffset file_size,
                                    GError **error);

/* Walks every tile of the current HDU, a tile-compressed image, as its
 * decoder would and refuses the file when one would read or write out of
 * bounds (or is HCOMPRESS, whose decoder cannot be bounded). */
gboolean ss_fits_check_compressed_tiles (fitsfile *fits, const char *name, GError **error);

/* ss-fits.c: messages, opening and HDUs */

/* cfitsio's text for STATUS and its most specific message (newly allocated). */
char *ss_fits_status_text (int status);
/* Sets ERROR to "NAME: WHAT: cfitsio's message for STATUS". */
void ss_fits_set_error (GError **error, int code, const char *name, const char *what, int status);
/* Opens PATH (gzip-compressed or not) read-only after the checks, or NULL. */
fitsfile *ss_fits_open (const char *path, const char *name, goffset *file_size, GError **error);
/* Closes FITS (NULL allowed), ignoring errors, and clears cfitsio's stack. */
void ss_fits_close (fitsfile *fits);
/* Moves to HDU NUMBER (0 = primary); the cfitsio status. */
int ss_fits_move_to_hdu (fitsfile *fits, int number);
/* Fills INFO from the current HDU; FALSE with *STATUS set on failure. */
gboolean ss_fits_read_hdu_info (fitsfile *fits, HduInfo *info, int *status);
/* Whether INFO describes an image with at least one pixel. */
gboolean ss_fits_hdu_has_pixels (const HduInfo *info);
/* A string keyword's value in the current HDU, stripped, or NULL. */
char *ss_fits_read_key_string (fitsfile *fits, const char *keyword);
/* "image", "compressed image", "binary table", ... for INFO. */
const char *ss_fits_hdu_type_name (const HduInfo *info);

/* ss-fits-read.c: size checks and reading */

/* SIZE from INFO's axes; FALSE (SS_ERROR_TOO_LARGE) when it overflows int. */
gboolean ss_fits_image_size (const HduInfo *info, const char *name, ImageSize *size,
                             GError **error);
/* The bytes the current HDU's header claims for its data unit (saturating). */
guint64 ss_fits_claimed_data_bytes (fitsfile *fits, const HduInfo *info, const ImageSize *size);
/* Refuses data that cannot be in the file or whose pixels cannot fit in memory. */
gboolean ss_fits_check_sizes (fitsfile *fits, const char *name, goffset file_size,
                              const HduInfo *info, const ImageSize *size, guint64 pixels_to_read,
                              GError **error);
/* Reads COUNT pixels from plane PLANE (-1: all) as float, blanks as NaN. */
gboolean ss_fits_read_pixels (fitsfile *fits, const char *name, const HduInfo *info, int plane,
                              float *data, guint64 count, GError **error);
/* The current HDU's cards (the image's own when compressed), or NULL. */
SsHeader *ss_fits_read_header_cards (fitsfile *fits, const char *name, const HduInfo *info,
                                     GError **error);
