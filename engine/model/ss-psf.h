/* ss-psf.h: blur models (point spread functions).
 *
 * A PSF is rendered as a full-size image of the problem (width x height),
 * normalised to sum 1 and centred on pixel (0,0) after wrap-around, so that
 * its FFT is the blur's transfer function b^.
 *
 * Text forms (CLI and saved headers):
 *   box:L            seed 000's "blur order L": L taps of 1/L along a row, centred
 *   box2d:L          L x L box
 *   gaussian:FWHM    circular Gaussian, FWHM in pixels
 *   moffat:FWHM,BETA Moffat profile
 *   file:PATH        a PSF image read from FITS (normalised and centred here)
 *   none             identity (no blur)
 * The parser refuses values outside the ranges below: beyond them the
 * rendering overflows or underflows (a FWHM of 1e10 px, 1e-300 px) instead
 * of drawing a blur.
 */
#pragma once

#include <glib.h>
#include <math.h>
#include "ss-image.h"

G_BEGIN_DECLS

/* FWHM (Gaussian, Moffat), pixels: finite, in [MIN, MAX]. At 0.1 px every
 * neighbour of the centre is already below float precision (the identity,
 * as none); narrower only nears sigma^2 = 0 and a 0/0 PSF. 10000 px needs
 * a support of 34000 px or more, beyond any frame, and keeps the support's
 * arithmetic far from int overflow. */
#define SS_PSF_MIN_FWHM 0.1
#define SS_PSF_MAX_FWHM 10000.0
/* Box order L: an integer in [1, MAX]. */
#define SS_PSF_MAX_BOX 10000
/* Moffat beta: finite, in (MIN, MAX]. A Moffat's flux pi a^2 / (beta - 1) is
 * finite only for beta > 1; beyond 100 it is a Gaussian for any data. */
#define SS_PSF_MIN_BETA 1.0
#define SS_PSF_MAX_BETA 100.0

/* Whether BETA is a Moffat β the PSF models take: finite, in (MIN, MAX]. */
static inline gboolean
ss_psf_beta_valid (double beta)
{
  return isfinite (beta) && beta > SS_PSF_MIN_BETA && beta <= SS_PSF_MAX_BETA;
}

typedef enum {
  SS_PSF_NONE,
  SS_PSF_BOX_ROW,
  SS_PSF_BOX,
  SS_PSF_GAUSSIAN,
  SS_PSF_MOFFAT,
  SS_PSF_FILE,
} SsPsfKind;

/* A PSF file as ss_psf_spec_load read it: its image and its notes.
 * Read-only once made and reference counted (atomically): copies of a
 * spec share it, from any thread. */
typedef struct _SsPsfFileData SsPsfFileData;

typedef struct {
  SsPsfKind kind;
  int size;        /* L for box kinds */
  double fwhm;     /* pixels, Gaussian and Moffat */
  double beta;     /* Moffat */
  char *path;      /* SS_PSF_FILE */
  /* SS_PSF_FILE: the file as ss_psf_spec_load read it, or NULL (read at
   * every render). Owned (a reference): ss_psf_spec_copy shares it,
   * ss_psf_spec_clear releases it; a spec written field by field or
   * zeroed has none. */
  SsPsfFileData *file;
} SsPsfSpec;

gboolean ss_psf_spec_parse (const char *text, SsPsfSpec *spec, GError **error);
char *ss_psf_spec_to_string (const SsPsfSpec *spec);
/* The file a file PSF reads (its path less an [HDU] suffix: "psf.fits[1]"
 * reads HDU 1 of psf.fits), g_free; NULL for a model PSF. What an output
 * must not replace. */
char *ss_psf_spec_file_name (const SsPsfSpec *spec);
void ss_psf_spec_clear (SsPsfSpec *spec);
void ss_psf_spec_copy (const SsPsfSpec *src, SsPsfSpec *dst);

/* Reads a file PSF once (ss_psf_read_file: checked, small negative wings
 * zeroed) and keeps the image and its notes in SPEC, so that every later
 * ss_psf_render (and ss_boundary_margin_for_psf, ss_operator_new, ...) of
 * SPEC or of its copies renders that reading, whatever becomes of the file,
 * and the notes can be shown (ss_psf_spec_get_notes). TRUE at once for a
 * model PSF or a file already loaded for SPEC->path. Fails
 * (SS_ERROR_INVALID_ARGUMENT, or the FITS reader's error; the message
 * names the file) when the file is missing, damaged or refused, SPEC then
 * unchanged. Slow for a large file: call it off the main thread of a GUI. */
gboolean ss_psf_spec_load (SsPsfSpec *spec, GError **error);
/* Whether SPEC is a file PSF whose file ss_psf_spec_load has read. */
gboolean ss_psf_spec_is_loaded (const SsPsfSpec *spec);
/* FALSE when SPEC holds a reading of a file that has changed since (or
 * gone): its device, inode, size or modification time differ from what
 * they were when it was read. TRUE otherwise, a model PSF or a spec not
 * loaded included. A stat, no read: for a front end that keeps a loaded
 * spec between runs and must not solve with an edited file's old PSF. */
gboolean ss_psf_spec_file_unchanged (const SsPsfSpec *spec);
/* What the user should be told about the file as it was read (negative
 * wings zeroed, an off-centre centroid: ss_psf_read_file's notes), one
 * sentence each naming the file; NULL-terminated, empty for a model PSF or
 * a file not loaded. Owned by SPEC's file data: valid while SPEC (or a
 * copy) holds it. */
const char *const *ss_psf_spec_get_notes (const SsPsfSpec *spec);

/* How far from (0,0) (wrapped, in rows or columns) a rendered PSF can be
 * non-zero; for a file PSF that ss_psf_spec_load has read, from its size,
 * else -1 (only the file knows). */
int ss_psf_reach (const SsPsfSpec *spec);

/* Renders the PSF at the problem size; fails (SS_ERROR_INVALID_ARGUMENT) when
 * the PSF is larger than the image or a file PSF is refused by
 * ss_psf_read_file or sums to <= 0 (the message naming the file). A file
 * PSF renders the reading ss_psf_spec_load kept in SPEC; one not loaded is
 * read with ss_psf_read_file at every call, its notes dropped: a caller
 * that shows them, or renders at several sizes (a margin, then the blur),
 * loads SPEC first. */
SsImage *ss_psf_render (const SsPsfSpec *spec, int width, int height, GError **error);

/* Normalises an arbitrary PSF image (any size, peak anywhere near its centre)
 * and wraps it so its centre lands on (0,0) of a width x height image. The
 * centre of an odd size is the middle pixel, of an even size pixel size/2. */
SsImage *ss_psf_wrap (const SsImage *psf, int width, int height, GError **error);

/* The first plane of the PSF image in the FITS file PATH, checked: fails
 * (SS_ERROR_INVALID_ARGUMENT, the message naming PATH) when a pixel is not
 * finite or when the negative pixels hold SS_PSF_MAX_NEGATIVE_SHARE or more
 * of the absolute sum; smaller negatives (background-subtraction noise in
 * the wings) are set to 0. When NOTES is not NULL, what the user should be
 * told is appended to it (char *, freed by the array): the negatives zeroed,
 * and a centroid more than SS_PSF_MAX_CENTROID_OFFSET pixels from the centre
 * pixel ss_psf_wrap puts at (0,0), which shifts a deblurred image by as much. */
#define SS_PSF_MAX_NEGATIVE_SHARE 0.05
#define SS_PSF_MAX_CENTROID_OFFSET 1.0
SsImage *ss_psf_read_file (const char *path, GPtrArray *notes, GError **error);

G_END_DECLS
