/* ss-starlet.h: the isotropic undecimated (starlet) wavelet transform with
 * the B3-spline, periodic, as circulant filters.
 *
 * Scale j (1..J) is w_j = (φ_{j-1} − φ_j) * x and the coarse part is φ_J * x,
 * with φ_0 = δ and φ_j = h_{j-1} * φ_{j-1}, h_i the B3 kernel (1 4 6 4 1)/16
 * along each axis with 2^i − 1 holes (à trous). The sum telescopes, so
 * Σ_j w_j + coarse = x exactly: the transform is its own left inverse by
 * summation. Every filter is symmetric about pixel (0,0), so its DFT is real.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* The default number of detail scales: structures up to ~2^4 pixels. */
#define SS_STARLET_SCALES 4

/* The real DFT responses of the J detail filters then the coarse one,
 * (J + 1) arrays of height * (width/2 + 1) floats, one after another (g_free). */
float *ss_starlet_spectra (int width, int height, int scales);

/* Direct (spatial, à trous, periodic) transform: OUT holds (J + 1) images of
 * width * height floats, scales 1..J then the coarse part. The reference the
 * Fourier filters are tested against. */
void ss_starlet_transform (const float *x, int width, int height, int scales, float *out);

/* POWER (height * (width/2 + 1) floats) = Σ_j |ψ^_j|² over the J detail
 * scales, and NORMS as ss_starlet_noise_norms gives them, without making
 * the spectra: what a backend that filters in pixel space needs. */
void ss_starlet_power_and_norms (int width, int height, int scales, float *power,
                                 double *norms);

/* ||ψ_j||₂ for each detail scale from its spectrum (Parseval): the standard
 * deviation of scale j of unit white noise; NORMS has SCALES entries. */
void ss_starlet_noise_norms (const float *spectra, int width, int height, int scales,
                             double *norms);

G_END_DECLS
