/* ss-boundary.h: solving on real (non-periodic) images.
 *
 * The engine's operators are circulant: they treat the image as periodic, so
 * a sky that is brighter on the left than on the right, or a star cut by the
 * edge, looks to them like a sharp step at the wrap-around, and the solver
 * answers with ringing along the edges. The cure is to solve on a larger,
 * padded image whose extra border the data do not describe, then crop:
 *
 *   ss_boundary_margin_for_psf   how wide the border must be (the PSF's reach)
 *   ss_boundary_pad              pad to an FFT-friendly size (2^a 3^b 5^c)
 *   ss_boundary_exclude_border   optional: mark the border as unobserved
 *   (build the operator at the padded size, solve)
 *   ss_boundary_crop             back to the input's size
 *
 * Modes
 *   periodic  no padding: the image is taken as periodic (the old behaviour).
 *   mirror    symmetric reflection at each edge (... c b a | a b c ...). The
 *             two reflections meeting in the middle of the border (right edge
 *             reflected rightwards, left edge reflected leftwards across the
 *             wrap-around) are cross-faded with a raised cosine, so the padded
 *             image is periodic without a step anywhere.
 *   taper     each edge value is extended outwards and blended with a raised
 *             cosine into the opposite edge's value across the border: the
 *             padded image is smooth and periodic, but flat (no structure) in
 *             the border.
 *
 * The border in the data term
 *   Two standard ways to use the padded image, both supported:
 *   (a) keep the border in the data term (RECOMMENDED, the default the CLI
 *       should use): the padded values are treated as observations. With
 *       mirror padding this is the classical "reflexive boundary" model: near
 *       an edge the sky is assumed to continue as its mirror image, which is
 *       right for smooth skies and symmetric PSFs and harmless elsewhere. It
 *       works with every solver, DIRECT_FFT included (every pixel observed).
 *   (b) ss_boundary_exclude_border: the border is set to NaN so that
 *       ss_operator_new_blur leaves it out of the data term. The solution is
 *       free in the border, the data near the edges are explained by the
 *       linear (not circular) convolution of the unknowns, and nothing is
 *       assumed about the sky outside the frame. But the solvers start from
 *       zero (the API takes no initial guess), so the padded values then do
 *       not matter (mirror = taper), and the l1 prior does not pin down the
 *       pixels next to an unobserved border, which trade flux with the border
 *       freely; it needs a solver that honours the mask (CPADMM, FISTA, ISTA,
 *       DIRECT).
 *   Measured (tests/test-boundary.c: 90-130 px frames cut from a larger sky
 *   with a gradient and stars, Gaussian blur FWHM 2.5-4, noise 0.002, CPADMM
 *   300 iterations, automatic alpha, 16 random draws): RMS error in the band of
 *   twice the PSF's reach along the edges, relative to periodic:
 *   mirror 0.53-0.79, taper 0.53-0.79 (within 1% of mirror), (b) 0.76-0.95;
 *   the interior is the same for all (within 0.5%). Hence (a).
 *
 * NaN pixels of the image stay NaN (unobserved) in the padded image, and the
 * border pixels derived from them are NaN too.
 */
#pragma once

#include <glib.h>
#include "ss-psf.h"

G_BEGIN_DECLS

typedef enum {
  SS_BOUNDARY_PERIODIC,
  SS_BOUNDARY_MIRROR,
  SS_BOUNDARY_TAPER,
} SsBoundary;

/* "periodic", "mirror" or "taper"; SS_ERROR_INVALID_ARGUMENT otherwise. */
gboolean ss_boundary_from_string (const char *text, SsBoundary *mode, GError **error);
const char *ss_boundary_to_string (SsBoundary mode);

/* The size to pad N (>= 1) to: the smallest 2^a 3^b 5^c >= N, or the next
 * power of two when that is at most 10% larger (it transforms faster);
 * -1 when N < 1 or none fits in an int. (2^a 3^b 5^c 7^d as the issue
 * allows, with d = 0: factors of 7 are slow; PERFORMANCE.md.) */
int ss_fft_good_size (int n);

/* The border a PSF needs: the smallest radius r (pixels) such that the square
 * |dx|, |dy| <= r around the PSF's centre holds at least 99.5% of its sum, as
 * rendered at WIDTH x HEIGHT; at least 1. */
int ss_boundary_margin_for_psf (const SsPsfSpec *spec, int width, int height, GError **error);
/* The same for a rendered KERNEL (WIDTH x HEIGHT, centred on pixel (0,0)). */
int ss_boundary_margin_for_kernel (const float *kernel, int width, int height);

/* The size ss_boundary_pad gives a W x H image: ss_fft_good_size (W + 2 MARGIN)
 * by the same for the height, or W x H for PERIODIC. Fails as ss_boundary_pad. */
gboolean ss_boundary_padded_size (int w, int h, SsBoundary mode, int margin, int *pw, int *ph,
                                  GError **error);

/* Pads IN (W x H floats) into a new array *OUT (g_free) of *PW x *PH floats,
 * with *PW = ss_fft_good_size (W + 2 MARGIN) and the same for the height; the
 * image lands at (*X0, *Y0), centred in the padding. PERIODIC copies IN as it
 * is (*PW = W, *PH = H, *X0 = *Y0 = 0) whatever MARGIN. Fails with
 * SS_ERROR_INVALID_ARGUMENT for a bad size or a negative margin and with
 * SS_ERROR_TOO_LARGE when the padded size does not fit. */
gboolean ss_boundary_pad (const float *in, int w, int h, SsBoundary mode, int margin,
                          float **out, int *pw, int *ph, int *x0, int *y0, GError **error);

/* Sets every pixel of PADDED outside the W x H image at (X0, Y0) to NaN, so
 * that ss_operator_new_blur (psf, padded, ...) leaves the border out of the
 * data term (option (b) above). */
void ss_boundary_exclude_border (float *padded, int pw, int ph, int x0, int y0, int w, int h);

/* Copies the W x H image at (X0, Y0) of IN (PW x PH) into OUT (W x H floats);
 * SS_ERROR_INVALID_ARGUMENT when that rectangle is not inside IN. */
gboolean ss_boundary_crop (const float *in, int pw, int ph, int x0, int y0, int w, int h,
                           float *out, GError **error);

G_END_DECLS
