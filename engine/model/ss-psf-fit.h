/* ss-psf-fit.h: measuring the PSF from stars in the image.
 *
 * A star is fitted by Levenberg-Marquardt (normal equations solved with
 * LAPACKE) with an elliptical 2-D profile plus a flat background, sampled at
 * pixel centres (the convention of ss_psf_render):
 *   Gaussian  f = B + A exp(-Q/2)
 *   Moffat    f = B + A (1 + Q)^-beta
 *   Q = a dx^2 + 2 b dx dy + c dy^2,  dx = column - x0,  dy = row - y0,
 * with (a, b, c) positive definite. Fitting the quadratic form rather than
 * (widths, angle) keeps the problem well posed for round stars, where the
 * angle is undefined. Reported: centre, FWHM along the major and minor axes,
 * their geometric mean, the major axis' angle, ellipticity 1 - minor/major,
 * and beta for Moffat.
 *
 * Automatic search (ss_psf_find_stars): local maxima higher than
 * sky + threshold * noise (sky: 3-sigma clipped median; noise: ss_noise_estimate),
 * with no pixel of the 3x3 core at or above the saturation level (the
 * search's, else the image header's SATURATE or SATLEVEL card, else a flat
 * top at the image's maximum (ss-saturation.h), else none) and no flat
 * top (a neighbour equal to the peak), no other maximum 5 noise sigmas above
 * the sky within the isolation radius that is more than a tenth of the star's
 * height, and a full
 * cutout inside the image. The brightest max_stars that fit well are kept,
 * fits more than 3 robust sigmas from the others' medians in FWHM, ellipticity
 * or beta are dropped (blends of two stars too close to show two maxima,
 * cosmic rays, galaxies), and the rest are combined by medians (FWHM, beta,
 * and the ellipticity's components e cos 2t, e sin 2t, so angles near +-90
 * degrees average correctly).
 */
#pragma once

#include <gio/gio.h>
#include "ss-image.h"
#include "ss-psf.h"
#include "ss-model.h"

G_BEGIN_DECLS

typedef enum {
  SS_PSF_MODEL_GAUSSIAN,
  SS_PSF_MODEL_MOFFAT,
} SsPsfModel;

/* "gaussian" or "moffat". */
gboolean ss_psf_model_from_string (const char *text, SsPsfModel *model, GError **error);
const char *ss_psf_model_to_string (SsPsfModel model);

typedef struct {
  SsPsfModel model;
  double x, y;            /* centre: column and row, pixel centres at integers */
  double amplitude;       /* peak height above the background, data units */
  double background;      /* data units */
  double fwhm;            /* sqrt (fwhm_major * fwhm_minor), pixels */
  double fwhm_major;      /* pixels */
  double fwhm_minor;
  double angle;           /* major axis, radians from +x (columns) towards +y (rows), (-pi/2, pi/2] */
  double ellipticity;     /* 1 - fwhm_minor / fwhm_major */
  double beta;            /* Moffat; NAN for Gaussian */
  double rms_residual;    /* sqrt (mean squared residual) of the fit, data units */
  int pixels;             /* pixels fitted */
  int iterations;         /* LM iterations (for a combination: the number of stars) */
} SsPsfFit;

/* Fits MODEL to the star nearest (X, Y) (column, row; within 3 pixels) in the
 * first plane of IMAGE; NaN pixels are skipped, and so are the pixels at or
 * above SATURATION (the image's units; NAN or INFINITY: none): a clipped
 * core is no profile (fitted through, a star of FWHM 3 clipped over 21
 * pixels measured 4.5), and the fit is centred on it and takes the shape
 * from the wings. The cutout's radius follows the star's size (about 4
 * FWHM). Fails with SS_ERROR_INVALID_ARGUMENT when (X, Y) is outside the
 * image or no star stands out of the noise there, and with
 * SS_ERROR_NUMERIC when the fit does not converge to a sensible star. */
gboolean ss_psf_fit_star (const SsImage *image, double x, double y, SsPsfModel model,
                          double saturation, SsPsfFit *fit, GError **error);

/* The level ss_psf_fit_star takes for IMAGE: LEVEL when finite, else (NAN)
 * what --saturation auto resolves from its header and data (the SATURATE or
 * SATLEVEL card, else a flat top at the maximum), as the star search does;
 * INFINITY when none. */
double ss_psf_fit_saturation_for (const SsImage *image, double level);

typedef struct {
  SsPsfModel model;
  int plane;              /* plane of IMAGE searched */
  double threshold;       /* peaks above sky + threshold * noise; default 20 */
  double saturation;      /* data level treated as saturated, in the image's units (as
                             read, sky included); INFINITY: none (a caller that looked
                             already); NAN (default): the header's SATURATE or SATLEVEL card
                             when above the sky, else a flat top at the maximum, else none */
  double noise;           /* the plane's ss_noise_estimate when the caller has it; NAN
                             (default): measured (on a 26-megapixel frame that is a pass
                             as long as an iteration) */
  double isolation;       /* pixels; 0 (default): about 4 FWHM of each candidate, at least 8 */
  int max_stars;          /* brightest good fits combined; default 25 */
} SsStarSearch;

void ss_star_search_init (SsStarSearch *search);

/* Finds the brightest isolated unsaturated stars, fits each and combines the
 * fits into *COMBINED (centre: that of the brightest star used; iterations:
 * the number of stars used). When FITS is not NULL it receives a new GArray
 * (g_array_unref) of the individual SsPsfFit used, brightest first. Fails with
 * SS_ERROR_INVALID_ARGUMENT when no star qualifies, and with
 * G_IO_ERROR_CANCELLED (nothing written) when CANCELLABLE (may be NULL) is
 * cancelled: it is looked at around the sky and noise estimates, between
 * bands of rows of the peak scan and before each candidate star's fit. */
gboolean ss_psf_find_stars (const SsImage *image, const SsStarSearch *search,
                            SsPsfFit *combined, GArray **fits, GCancellable *cancellable,
                            GError **error);

/* Medians of FITS (N >= 1) into *COMBINED, as ss_psf_find_stars does. */
void ss_psf_fit_combine (const SsPsfFit *fits, int n, SsPsfFit *combined);

/* The circular PSF closest to FIT: gaussian:FWHM or moffat:FWHM,BETA with
 * FWHM the geometric mean of the axes (ellipticity is dropped: use
 * ss_psf_fit_render or ss_psf_fit_operator to keep it). SPEC is overwritten
 * (not cleared first). */
void ss_psf_fit_to_spec (const SsPsfFit *fit, SsPsfSpec *spec);

/* One-line description: "moffat FWHM 3.21 px (3.40 x 3.03, angle 12.0 deg),
 * beta 2.85, ellipticity 0.11, at (123.4, 56.7)". */
char *ss_psf_fit_describe (const SsPsfFit *fit);

/* FIT's profile (background removed, sum 1) rendered at WIDTH x HEIGHT and
 * centred on pixel (0, 0) after wrap-around, as ss_psf_render does (same cut
 * off: 4 sigma for a Gaussian, 1e-4 of the peak for a Moffat); ellipticity and
 * angle are kept. SS_ERROR_INVALID_ARGUMENT for a bad fit or a PSF larger than
 * the image. */
SsImage *ss_psf_fit_render (const SsPsfFit *fit, int width, int height, GError **error);

/* The same profile on a SIZE x SIZE stamp (SIZE odd; 0: just large enough
 * for the cut-off) centred on its middle pixel, e.g. to save as a PSF FITS
 * file or show in the app. */
SsImage *ss_psf_fit_render_stamp (const SsPsfFit *fit, int size, GError **error);

/* A blur operator for a WIDTH x HEIGHT problem whose PSF is FIT's profile
 * (elliptical); pixels where OBSERVED is NaN are left out of the data term
 * (OBSERVED may be NULL), as with ss_operator_new_blur. */
SsOperator *ss_psf_fit_operator (const SsPsfFit *fit, const float *observed,
                                 int width, int height, GError **error);

G_END_DECLS
