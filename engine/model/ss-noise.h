/* ss-noise.h: the noise level of an image and the automatic LASSO weight.
 *
 * Noise estimate (ss_noise_estimate)
 *   The image is high-passed with the 3x3 kernel
 *        1 -2  1
 *       -2  4 -2
 *        1 -2  1
 *   (the outer product of [1 -2 1] with itself: it is blind to any locally
 *   linear sky and to slow gradients, and sees mostly noise). For white noise
 *   of standard deviation s every output is Gaussian with standard deviation
 *   s * sqrt(sum of the kernel's squares) = s * sqrt(36) = 6 s, and the median
 *   absolute deviation (MAD) of a Gaussian is 0.6744898 of its standard
 *   deviation, so
 *       s = MAD(high-pass) / (6 * 0.6744898) = 0.247101 * MAD.
 *   The MAD ignores the few large responses at stars and edges. A window
 *   holding a NaN is skipped. An image less than 3 pixels across (a 1-D
 *   signal), or one whose blanks leave fewer than 256 whole windows and
 *   under a quarter of them (59% of the pixels blank at random, every third
 *   column blank), uses [1 -2 1] along its rows and columns instead:
 *   s = MAD / (sqrt(6) * 0.6744898). When the
 *   MAD is 0 (integer data with noise under one count) the mean absolute
 *   deviation is used instead (s = mean|h - median| * sqrt(pi/2) / norm).
 *   Past 2^22 interior windows every k-th row of windows is taken, k the
 *   smallest stride that keeps at most 2^22 (so 2^21 to 2^22 of them): the
 *   estimate moves by a few 1e-4 and costs a seventh of the time on a 26 Mpx
 *   frame.
 *
 * Automatic alpha: the rule behind `--alpha auto`
 *   For the LASSO  min_x 1/2 ||P C x - y||^2 + alpha ||x||_1  on data in the
 *   engine's scaled units, with noise of standard deviation s (scaled units),
 *       alpha = SS_ALPHA_AUTO_FACTOR * s * ||c|| * sqrt(m / n) * sqrt(2 ln n)
 *   where ||c|| is the Euclidean norm of one column of C (the PSF's l2 norm,
 *   times the sensing's gain in compressed mode; from the half-spectrum by
 *   Parseval), m of the n pixels are observed, and sqrt(m/n) ||c|| is the
 *   typical column norm of A = P C. s * ||a_j|| is the standard deviation of
 *   the noise seen by one coefficient of A^T y, and sqrt(2 ln n) is the
 *   largest of n such Gaussians (Donoho and Johnstone's universal threshold),
 *   so with factor 1 pure noise almost never creates a non-zero pixel. The
 *   factor SS_ALPHA_AUTO_FACTOR was chosen from a sweep of alpha against the
 *   MSE (tests/test-noise.c: 128x128 fields of 80 point stars of 0.2-1,
 *   Gaussian blur FWHM 2.5-4, noise 0.005 and 0.02 in scaled units, FISTA
 *   400 iterations, alpha on a grid of 4 points a decade): over 8 random
 *   draws the rule's alpha was 0.78-1.64 times the best alpha of the sweep
 *   (the test requires within a factor of 3), and its MSE within 3% of the
 *   best. In numbers, with the noise estimated from the data:
 *   alpha ~ 0.5 * s * 0.22 * 4.4 ~ 0.5 s for FWHM 3 at 128x128.
 *   Caveat: the l1 weight regularises only where the sky is dark. On a
 *   positive background with x >= 0, ||x||_1 is the total flux, which the
 *   data fix, so alpha does nothing there: subtract the sky first.
 *   The noise s is estimated on the data in input units and divided by the
 *   scaling's scale (ss-scaling.h) to bring it to scaled units.
 */
#pragma once

#include <glib.h>
#include "ss-model.h"
#include "ss-scaling.h"
#include "ss-solver.h"

G_BEGIN_DECLS

/* See the rule above; the value is set by the sweep in tests/test-noise.c. */
#define SS_ALPHA_AUTO_FACTOR 0.5

/* Standard deviation of the white noise in DATA (w x h floats, NaN skipped),
 * in the units of DATA. Returns NAN when no 3x3 window (or, for a 1-D image,
 * no 3 neighbours) is free of NaN, or for a non-positive size. */
double ss_noise_estimate (const float *data, int width, int height);

/* The noise σ and the median of PROBLEM's observed y: the caller's when it
 * measured them (SsProblem.stats), else measured here on the image's own
 * pixels (SsProblem.image, when the frame is padded) with the unobserved
 * ones skipped: they are 0 in y, and a hole read as data is a step the
 * high-pass takes for noise. Either pointer may be NULL. */
void ss_problem_noise_and_median (const SsProblem *problem, double *noise, double *median);

/* Euclidean norm of a column of A = P C, averaged over the columns:
 * sqrt(m/n) * ||c||, with ||c||^2 = (1/n) sum |c^_k|^2 over the full spectrum. */
double ss_operator_column_norm (const SsOperator *op);

/* The rule above. NOISE_SIGMA is in scaled units. Returns a value > 0, or 0
 * when NOISE_SIGMA is 0; NAN when NOISE_SIGMA is negative or not finite or
 * OP is NULL. */
double ss_alpha_auto (double noise_sigma, const SsOperator *op);

/* The noise where the light is: the square root of the mean over the pixels
 * of the noise variance, each 3x3 window's variance that of the windows of
 * its level: the same high-pass and MAD as ss_noise_estimate, in 16
 * equal-count bins of the windows' mean, from a regular grid of at most
 * 262144 windows; a bin over 1.5 times as noisy as every brighter one (a
 * sharp limb's edges) is cut to their least. On Poisson data it exceeds
 * ss_noise_estimate, the
 * typical pixel's, where bright light covers much of the frame: a planet or
 * the Moon on a black sky, whose MAD is the sky's read noise. Input units;
 * NAN as ss_noise_estimate. Images under 3 pixels on a side: that estimate. */
double ss_noise_estimate_mean (const float *data, int width, int height);

/* The σ the α rule takes from TYPICAL (ss_noise_estimate) and MEAN
 * (ss_noise_estimate_mean): TYPICAL × max(1, MEAN/TYPICAL − 1). Up to a
 * ratio of 2 it is TYPICAL, for which the rule's factor was measured; on
 * quality's seven cases and six other synthetic scenes the ratio is
 * 1.00-1.77, and there the mean's σ made admm 0.05-0.27 dB worse (the Sun
 * crops, 1.77 and 1.30). On a planet on a black sky (ratio 5.5) TYPICAL is
 * the sky's read noise and the α it gives let admm and direct-fft fit the
 * disk's photon noise, 3.0 and 1.8 dB under their input; with 4.5 times it
 * they are 4.8 and 2.6 dB over it. The ratio minus one grows continuously
 * from 2, so no α jumps between two nearly equal images. */
double ss_noise_for_alpha (double typical, double mean);

/* Estimates the noise of DATA (input units; NOISE when it is already known,
 * ss_noise_estimate's value: NAN to estimate it here), scales it by 1/SCALE
 * and applies the rule to ss_noise_for_alpha's σ; fails with SS_ERROR_INVALID_ARGUMENT
 * when the noise cannot be estimated (too few finite pixels) or SCALE is not
 * > 0. Returns alpha in *ALPHA and, when not NULL, the scaled noise of the
 * typical pixel in *NOISE_SCALED (ss_noise_estimate's: the one the solvers'
 * other rules take) and the scaled σ the α rule took in
 * *ALPHA_NOISE_SCALED. */
gboolean ss_alpha_auto_from_data (const float *data, int width, int height, double noise,
                                  double scale, const SsOperator *op, double *alpha,
                                  double *noise_scaled,
                                  double *alpha_noise_scaled, GError **error);

/* The statistics deblur's preparation leaves for the solvers
 * (SsProblem.stats): NOISE, scaled units (NAN: not measured), and the scaled
 * data's median, which is 0 by construction when the sky subtracted was the
 * median (SS_SKY_MEDIAN); any other sky leaves it unknown (NAN). Both are
 * the image's own, before padding: the mirrored border of the padded copy
 * lowered the noise estimate by 2-3% on synthetic frames of 700×500 to
 * 1600×1200 (the median stayed 0). */
SsDataStats ss_data_stats_from_estimates (double noise, SsSkyMode sky_mode);

G_END_DECLS
