/* ss-hot-pixels.h: single pixels brighter than any blurred star can make.
 *
 * Under a blur no star's brightest pixel stands further above its brightest
 * neighbour than the blur's own centre does: a star centred on a pixel puts
 * the most of its light there, and any other position shares it with a
 * neighbour. A pixel that stands much further above, a hot pixel or a cosmic
 * ray's hit, is no light through the telescope, and a solver fitting it
 * makes a sharp star of it, or rings around it. So a pixel is hot when, over
 * the sky, it exceeds SS_HOT_MARGIN times the blur's peak ratio (its centre
 * pixel over its brightest neighbour) times its brightest neighbour's height
 * over the sky, plus SS_HOT_SIGMAS noise σ. The margin leaves room for a
 * blur given a little too wide: stars twice as sharp as a Gaussian blur of
 * FWHM 4 says are still not hot. Pixels on the image's edge are not judged;
 * a hit on two touching pixels is not found (each is the other's neighbour).
 */
#pragma once

#include <glib.h>

#include "ss-psf-fit.h"

G_BEGIN_DECLS

#define SS_HOT_MARGIN 2.0
#define SS_HOT_SIGMAS 10.0

/* The blur's peak ratio: KERNEL's (WIDTH × HEIGHT, centred on pixel 0 after
 * wrap-around, as ss_psf_render makes it) centre value over its largest of
 * the 8 around it; INFINITY for a kernel of one pixel (no blur: nothing is
 * hot then). */
double ss_hot_pixels_peak_ratio (const float *kernel, int width, int height);

/* The peak ratio of FIT's profile (may be NULL) or else of SPEC, rendered
 * small; INFINITY (nothing is hot) for a PSF too wide to render so. */
double ss_hot_pixels_psf_ratio (const SsPsfSpec *spec, const SsPsfFit *fit);

/* Sets SCALED[i] to NAN (a blank) where DATA (WIDTH × HEIGHT, input units)
 * has a hot pixel for SKY, NOISE (input units) and the blur's PEAK_RATIO;
 * returns how many that were finite in SCALED. */
gsize ss_hot_pixels_blank (const float *data, int width, int height, double sky, double noise,
                           double peak_ratio, float *scaled);

G_END_DECLS
