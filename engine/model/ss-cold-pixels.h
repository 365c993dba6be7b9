/* ss-cold-pixels.h: pixels far below all the light around them.
 *
 * A blurred image has no sharp dips: the PSF spreads every source over its
 * neighbours, so a pixel far below its neighbours is a defect (a dead
 * pixel, a column of them, a flag such as -32768 written as data), not sky.
 * Fitted, one such pixel did harm far beyond it: on a 64² star field with
 * one pixel at -32768 on a sky of 100, Richardson–Lucy's offset (which
 * lifts the lowest datum to 0) took it, and `auto` gave back an image
 * shifted under its sky, 3353 of 4096 pixels below 99 and a crater of
 * -1317; admm, fitting it by least squares, rang from -3120 to 13994.
 *
 * A pixel is cold when it lies more than SS_COLD_SIGMAS noise σ below the
 * sky, which no light and no noise of x >= 0 gives, and below the third
 * lowest of its eight neighbours (so a dead column, two of whose neighbours
 * are dead too, is found) by more than that and by more than half that
 * neighbour's height above the sky. Below the sky: a sharp image's dark
 * lanes dip by ten σ too (twenty pixels of the bundled AIA image did,
 * between its loops), but not under the sky; below the neighbours: a
 * vignetted corner lies under the median sky, but smoothly. Pixels on the
 * image's edge, or with fewer than six finite neighbours, are not judged.
 * Only for non-negative images (x >= 0, the default for real data): with
 * --allow-negative, light below the sky is allowed to be real.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

#define SS_COLD_SIGMAS 10.0

/* Sets SCALED[i] to NAN (a blank) where DATA (WIDTH × HEIGHT, input units)
 * has a cold pixel for SKY and NOISE (input units; NOISE may be 0 for
 * noiseless data); returns how many that were finite in SCALED. */
gsize ss_cold_pixels_blank (const float *data, int width, int height, double sky, double noise,
                            float *scaled);

G_END_DECLS
