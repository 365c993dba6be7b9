/* ss-quality.h: how close a restored image is to the truth, as the quality
 * suite (sharpsky-cli quality, QUALITY.md) measures it.
 *
 * Restorations come in arbitrary units and with an arbitrary offset (a sky
 * left or removed, a scale), so every score first fits the restoration to the
 * truth with the best affine map a·x + b (least squares), as issue 10 does:
 * PSNR = 10 log10(R² / MSE) with R = max(truth) − min(truth). SSIM (Wang et
 * al. 2004) is computed on the fitted restoration and the truth, both mapped
 * to [0, 1] by the truth's range, with the standard 11×11 Gaussian window of
 * σ = 1.5, K1 = 0.01, K2 = 0.03 and L = 1, averaged over the windows that lie
 * inside the image (the reference implementation's 'valid' filtering).
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* a, b minimising ||a x + b − t||² over N pixels (a = 0 when x is constant). */
void ss_affine_fit (const float *x, const float *truth, gsize n, double *a, double *b);

/* PSNR of X against TRUTH after the affine fit; +inf for a perfect fit. */
double ss_psnr_affine (const float *x, const float *truth, gsize n);

/* Writes a·x + b (the fit) into OUT (N floats; may be X). */
void ss_affine_apply (const float *x, float *out, gsize n, double a, double b);

#define SS_SSIM_WINDOW 11
#define SS_SSIM_SIGMA 1.5

/* Mean SSIM of X (fitted to TRUTH first) against TRUTH, W x H (each at
 * least SS_SSIM_WINDOW); NAN for a smaller image or a constant truth. */
double ss_ssim_affine (const float *x, const float *truth, int width, int height);

/* Mean SSIM of two images already in [0, 1] units (L = 1), no fitting. */
double ss_ssim (const float *x, const float *y, int width, int height);

G_END_DECLS
