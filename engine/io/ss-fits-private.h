/* ss-fits-private.h: what the FITS reader (ss-fits.c) and its guards against
 * cfitsio's failures on damaged files (ss-fits-guard.c) share. */
#pragma once

#include <fitsio.h>
#include <glib.h>
#include <string.h>

#define FITS_BLOCK 2880
#define FITS_CARD 80

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
