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
 */
#pragma once

#include <glib.h>
#include "ss-image.h"

G_BEGIN_DECLS

typedef enum {
  SS_PSF_NONE,
  SS_PSF_BOX_ROW,
  SS_PSF_BOX,
  SS_PSF_GAUSSIAN,
  SS_PSF_MOFFAT,
  SS_PSF_FILE,
} SsPsfKind;

typedef struct {
  SsPsfKind kind;
  int size;        /* L for box kinds */
  double fwhm;     /* pixels, Gaussian and Moffat */
  double beta;     /* Moffat */
  char *path;      /* SS_PSF_FILE */
} SsPsfSpec;

gboolean ss_psf_spec_parse (const char *text, SsPsfSpec *spec, GError **error);
char *ss_psf_spec_to_string (const SsPsfSpec *spec);
void ss_psf_spec_clear (SsPsfSpec *spec);
void ss_psf_spec_copy (const SsPsfSpec *src, SsPsfSpec *dst);

/* How far from (0,0) (wrapped, in rows or columns) a rendered model PSF can
 * be non-zero; -1 when only the file knows (file:). */
int ss_psf_reach (const SsPsfSpec *spec);

/* Renders the PSF at the problem size; fails (SS_ERROR_INVALID_ARGUMENT) when
 * the PSF is larger than the image or a file PSF sums to <= 0. */
SsImage *ss_psf_render (const SsPsfSpec *spec, int width, int height, GError **error);

/* Normalises an arbitrary PSF image (any size, peak anywhere near its centre)
 * and wraps it so its centre lands on (0,0) of a width x height image. The
 * centre of an odd size is the middle pixel, of an even size pixel size/2. */
SsImage *ss_psf_wrap (const SsImage *psf, int width, int height, GError **error);

G_END_DECLS
