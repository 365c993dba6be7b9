/* ss-header.h: the FITS header cards of an image, kept verbatim.
 *
 * The reader stores every 80-character card of the source HDU; the writer
 * re-emits them except the structural ones it must recompute (BITPIX, NAXISn,
 * BZERO/BSCALE, BLANK, DATAMIN/DATAMAX, CHECKSUM/DATASUM, ...), then appends
 * HISTORY cards. WCS cards pass through untouched.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct {
  GPtrArray *cards;    /* char*, each exactly the card text (<= 80 chars, no padding needed) */
  GPtrArray *history;  /* char*, HISTORY texts added by Sharpsky, in order */
} SsHeader;

SsHeader *ss_header_new (void);
SsHeader *ss_header_copy (const SsHeader *header);
void ss_header_free (SsHeader *header);

/* Appends a card verbatim (the reader uses this). */
void ss_header_add_card (SsHeader *header, const char *card);

/* Appends a HISTORY text; long texts are split over several cards by the writer. */
void ss_header_add_history (SsHeader *header, const char *fmt, ...) G_GNUC_PRINTF (2, 3);

/* The value of KEYWORD as a newly allocated string with quotes removed and
 * trailing blanks trimmed, or NULL when absent. Only the first match counts. */
char *ss_header_get_string (const SsHeader *header, const char *keyword);
gboolean ss_header_get_double (const SsHeader *header, const char *keyword, double *value);

/* Removes every valued card of KEYWORD; returns how many there were. */
guint ss_header_remove (SsHeader *header, const char *keyword);

/* Sets KEYWORD (replacing an existing card of that name, else appending). */
void ss_header_set_string (SsHeader *header, const char *keyword, const char *value, const char *comment);
void ss_header_set_double (SsHeader *header, const char *keyword, double value, const char *comment);

/* TRUE for cards that describe the data layout and must be recomputed when
 * writing (BITPIX, NAXIS*, BZERO, BSCALE, BLANK, DATAMIN, DATAMAX, CHECKSUM,
 * DATASUM, SIMPLE, XTENSION, EXTEND, PCOUNT, GCOUNT, END, ZIMAGE and the
 * tile-compression Z* keys). */
gboolean ss_header_card_is_structural (const char *card);

/* Adds to HEADER, an extension's cards, the cards of PRIMARY (its file's
 * primary header) that the INHERIT convention passes on: those with a value
 * whose keyword HEADER does not define itself, less the structural ones,
 * the commentary ones (COMMENT, HISTORY, blank) and those that name an HDU
 * or count the file's extensions (EXTNAME, NEXTEND, ...). They go after
 * HEADER's leading structural cards, in PRIMARY's order. Nothing is added
 * when HEADER says INHERIT = F. Returns the number of cards added. */
guint ss_header_inherit (SsHeader *header, const SsHeader *primary);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SsHeader, ss_header_free)

G_END_DECLS
