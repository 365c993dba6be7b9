/* ss-bad-pixels.h: pixels no blurred sky can give, left out of the data
 * term by `--bad-pixels auto` (the default) and the app's "Leave bad pixels
 * out": dead ones far below the sky (cold) and single spikes sharper than
 * the PSF (hot).
 *
 * Cold pixels (ss_cold_pixels_blank)
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
 *
 * Hot pixels (ss_hot_pixels_blank)
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
 * FWHM 4 says are still not hot. A hit on two touching pixels (side by side
 * or corner to corner), each the other's brightest neighbour, is held the
 * same way: the weaker of the two against the brightest pixel touching
 * either, by the same factor (a star midway between two pixels is the worst
 * case, and its ratio is the peak ratio's). A cosmic ray's track, one
 * pixel wide and three or more long, at any angle, is found pixel by pixel
 * across it: a pixel stands across a line when, over the line's level (the
 * sky, or the data's first percentile where lower: on a frame the Sun fills
 * the median sits far above the dark lanes), it exceeds the brighter of its
 * two opposite neighbours on one of the 4 lines through it (left and right,
 * above and below, either diagonal) by SS_HOT_MARGIN times the blur's line
 * ratio squared, plus SS_HOT_SIGMAS σ; a track pixel stands so, and so do
 * two more chained to it (one or two pixels standing alone are the peak
 * and pair rules' to judge). The line ratio is the most a blur's centre
 * stands above both neighbours on a line (its diagonal, for a round blur);
 * a star stands no more than that on any line through any of its pixels
 * (exactly for a Gaussian, up to 6% more in the far wings of
 * pixel-integrated ones of FWHM 2). The square is that ratio for a blur √2
 * times sharper (so for a Gaussian): with the ratio itself, a blur given
 * twice too wide made the compact elongated galaxies of the HDF stand
 * across lines (6 and 17 pixels with Gaussians of FWHM 4 and 5, its own
 * being about 2); with the square, none. A track two pixels wide is found
 * the same way by pairs: a pixel and its neighbour on one of the 4 lines
 * stand across it together when the weaker of the two exceeds the brighter
 * of the pixels beyond them on it by SS_HOT_MARGIN times the blur's wide
 * ratio on that line squared, plus SS_HOT_SIGMAS σ, and three of its
 * neighbours stand so too (its partner and the track's next pixels: an
 * isolated pair is the pair rule's, and a profile cut off to exactly 0
 * showed a pair standing over the zeros at its corner, with one pixel
 * more). The wide ratio, the pixel beside the centre over the one
 * beyond it (rows and columns apart from diagonals), bounds a pair under
 * the blur: the worst is a star midway between the two, whose ratio is a
 * Gaussian's at half a step over one and a half steps, under the centred
 * one's at one over two. Last, the hits found grow: a pixel touching one
 * is taken when, the hits set aside, it stands as a hot pixel over its
 * other neighbours, or as a hot pair with the brightest of them (a
 * slanting track two pixels wide is three wide along a row, and such
 * pixels hold each other on every line; a star under a track is held by
 * its own brighter pixels). Pixels on the image's edge are not judged, nor
 * pairs or growth within 2 pixels of it, nor tracks within 3; a hit on a
 * block of pixels wider than two is found only by growth from a hit beside
 * it.
 */
#pragma once

#include <glib.h>

#include "ss-psf-fit.h"
#include "ss-saturation.h"

G_BEGIN_DECLS

#define SS_COLD_SIGMAS 10.0

/* Sets SCALED[i] to NAN (a blank) where DATA (WIDTH × HEIGHT, input units)
 * has a cold pixel for SKY and NOISE (input units; NOISE may be 0 for
 * noiseless data); returns how many that were finite in SCALED. */
gsize ss_cold_pixels_blank (const float *data, int width, int height, double sky, double noise,
                            float *scaled);

#define SS_HOT_MARGIN 2.0
/* Rounds of growth from the hits found (ss_hot_pixels_blank), each a
 * pixel further: a track's missed pixels lie within one or two of a found
 * one; the bound keeps a frame full of hits from costing more. */
#define SS_HOT_GROWTH_ROUNDS 8
#define SS_HOT_SIGMAS 10.0

/* How far a blur's centre stands above the pixels around it: each at least
 * 1, INFINITY for a kernel of one pixel (no blur: nothing is hot then). */
typedef struct {
  double peak;   /* over the largest of the 8 around it */
  double line;   /* over the larger of two opposite neighbours, the largest of the 4 lines */
  double wide;            /* a pixel beside it along a row or column over the pixel beyond
                             that, the largest of the four ways: the most two pixels side by
                             side stand above the pixels beyond them on their line */
  double wide_diagonal;   /* the same along the diagonals */
} SsHotRatios;

/* KERNEL's (WIDTH × HEIGHT, wrapped around) ratios at its largest value. */
SsHotRatios ss_hot_pixels_kernel_ratios (const float *kernel, int width, int height);

/* The ratios of FIT's profile (may be NULL) or else of SPEC, rendered
 * small; INFINITY (nothing is hot) for a PSF too wide to render so. */
SsHotRatios ss_hot_pixels_psf_ratios (const SsPsfSpec *spec, const SsPsfFit *fit);

/* Sets SCALED[i] to NAN (a blank) where DATA (WIDTH × HEIGHT, input units)
 * has a hot pixel for SKY, NOISE (input units) and the blur's RATIOS;
 * returns how many that were finite in SCALED. */
gsize ss_hot_pixels_blank (const float *data, int width, int height, double sky, double noise,
                           const SsHotRatios *ratios, float *scaled);

/* The rules deblur takes for a real image's defects, the CLI's prepare
 * step and the app's job alike. */
typedef struct {
  SsSaturationMode saturation_mode;
  double saturation_value;    /* with SS_SATURATION_VALUE */
  gboolean bad_pixels;        /* the cold rule (with NONNEG) and the hot rule */
  gboolean nonneg;            /* x >= 0 */
  gboolean leaves_out;        /* the solver can leave pixels out (SS_SOLVER_MASKS) */
} SsDefectRules;

/* What they found. */
typedef struct {
  SsSaturation saturation;    /* the level resolved; clipped: pixels left out */
  gsize kept_clipped;         /* clipped pixels kept in the fit: a solver that cannot leave
                                 them out (direct-fft) */
  gsize cold, hot;
  double noise;               /* ss_noise_estimate of the data when a rule or the star search
                                 took it (a caller may set it between the two steps
                                 below, and ss_defects_blank then uses it), else NAN */
} SsDefects;

/* Resolves the saturation level of DATA (WIDTH × HEIGHT, input units, with
 * HEADER, may be NULL) into DEFECTS, which it starts afresh: first, since
 * --psf auto fits only stars under that level. */
void ss_defects_find_saturation (const SsDefectRules *rules, const SsHeader *header,
                                 const float *data, int width, int height, SsDefects *defects);

/* Then blanks in SCALED (NAN: out of the data term) the clipped pixels at
 * DEFECTS' level, the cold ones and the hot ones (for the PSF FIT, may be
 * NULL, else SPEC), as RULES ask, counting them in DEFECTS. */
void ss_defects_blank (const SsDefectRules *rules, const float *data, int width, int height,
                       double sky, const SsPsfSpec *spec, const SsPsfFit *fit, float *scaled,
                       SsDefects *defects);

G_END_DECLS
