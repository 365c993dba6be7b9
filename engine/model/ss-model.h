/* ss-model.h: the acquisition model y = P(S(B x)) + e and its operator.
 *
 * All operators are 2-D circulant, so the engine keeps C = S o B only as its
 * half-spectrum c^ = rfft2(first column of C) (FFTW's unnormalised forward
 * transform, height x (width/2+1) complex values), plus the sampling mask P.
 * Applying C:  C x = irfft2(c^ . rfft2(x)) / n.
 * Random numbers come from GRand (MT19937) seeded with the acquisition seed,
 * drawn on the host, so every backend sees the same operator.
 */
#pragma once

#include <glib.h>
#include "ss-image.h"
#include "ss-psf.h"
#include "ss-host-device.h"

G_BEGIN_DECLS

typedef enum {
  SS_SENSING_AUTO,       /* circulant when ratio < 1, none when ratio == 1 */
  SS_SENSING_NONE,
  SS_SENSING_CIRCULANT,  /* first column i.i.d. N(0, 1/m) */
} SsSensing;

typedef struct {
  SsPsfSpec psf;
  double ratio;          /* (0, 1]: m = round(ratio * n) pixels kept */
  SsSensing sensing;
  guint32 seed;
  double noise;          /* standard deviation of the added noise, scaled units */
} SsAcquisition;

void ss_acquisition_init (SsAcquisition *acq);   /* box:5 is NOT implied: psf none, ratio 1 */
void ss_acquisition_clear (SsAcquisition *acq);
/* The largest noise σ an acquisition takes (scaled units): float32 data
 * of a larger one overflow. */
#define SS_NOISE_MAX 1e30

gboolean ss_acquisition_validate (const SsAcquisition *acq, GError **error);
/* TRUE when sensing is on after resolving SS_SENSING_AUTO. */
gboolean ss_acquisition_uses_sensing (const SsAcquisition *acq);

typedef struct {
  int width, height;
  int spec_width;        /* width / 2 + 1 */
  float *chat;           /* interleaved complex, height * spec_width pairs */
  guint8 *mask;          /* width * height bytes, 1 = observed; NULL = all observed */
  gsize m;               /* observed pixel count */
  double lipschitz;      /* max |c^|^2: the Lipschitz constant of C^T C */
  gboolean kernel_nonnegative; /* built from a kernel seen to be >= 0 (to 1e-4 of its
                                  peak), with no sensing: a blur, as Richardson–Lucy
                                  needs. FALSE also means "not known" (from parts) */
  float *kernel;         /* a deferred operator's kernel (n floats), c^ made from it where
                            it is used: NULL otherwise (see ss_operator_new_deferred) */
  double kernel_sum;     /* a deferred operator's Σ kernel, its DC term, summed once */
} SsOperator;

/* Builds C = S o B and P for a width x height problem from ACQ. */
SsOperator *ss_operator_new (const SsAcquisition *acq, int width, int height, GError **error);
/* Builds a plain blur operator; pixels where OBSERVED is NaN are left out of
 * the data term (OBSERVED may be NULL: all pixels observed). */
SsOperator *ss_operator_new_blur (const SsPsfSpec *psf, const float *observed,
                                  int width, int height, GError **error);
/* The same from a rendered kernel (n floats, sum 1, centred on pixel (0,0)
 * after wrap-around, as ss_psf_render gives): what fitted PSFs use. */
SsOperator *ss_operator_new_from_kernel (const float *kernel, const float *observed,
                                         int width, int height, GError **error);
/* The blur of a non-negative KERNEL (as ss_operator_new_from_kernel) with
 * its spectrum deferred: chat stays NULL and the kernel is kept, for a GPU
 * backend to transform where it solves (no host FFTW on that path). What the
 * host needs without the spectrum comes from the kernel: the Lipschitz
 * constant max|c^|² = (Σ k)² (a non-negative kernel's spectrum peaks at
 * frequency 0), the DC term (ss_operator_dc) and the column norm (Parseval).
 * Host code that needs c^ itself calls ss_operator_realize first (the CPU
 * backend's entry points and ss_operator_apply do). A kernel with negative
 * values gives an ordinary operator. */
SsOperator *ss_operator_new_deferred (const float *kernel, const float *observed, int width,
                                      int height, GError **error);
/* The same, taking KERNEL (freed with g_free, or kept as the operator's):
 * a camera frame's kernel is 110 MB, and its copy was a tenth of the time
 * before the solve on two cores. */
SsOperator *ss_operator_new_deferred_take (float *kernel, const float *observed, int width,
                                           int height, GError **error);
/* Makes a deferred operator's c^ on the host (FFTW), once, whichever thread
 * asks first; TRUE when chat is there. The one change a built operator
 * sees: filling its deferred spectrum. */
gboolean ss_operator_realize (const SsOperator *op, GError **error);
/* OP's blur kernel (centred on pixel (0,0) after wrap-around) folded onto a
 * WIDTH x HEIGHT grid, each tap at its offset modulo the new size: the same
 * blur on a smaller frame, exact when the kernel's reach fits in it. From a
 * deferred operator's kernel, or from c^ by an inverse transform. */
float *ss_operator_blur_kernel_at (const SsOperator *op, int width, int height, GError **error);
/* A standard normal deviate from RNG (Box–Muller; one of the pair is
 * dropped so the stream is a plain function of the seed). */
double ss_rand_normal (GRand *rng);
/* c^ at frequency 0 (real): the kernel's sum. */
double ss_operator_dc (const SsOperator *op);
/* From an explicit half-spectrum and mask (copied); used by tests and backends. */
SsOperator *ss_operator_new_from_parts (int width, int height, const float *chat,
                                        const guint8 *mask, GError **error);
void ss_operator_free (SsOperator *op);

/* y = P(C x) as a full image (0 where unobserved), on the CPU with FFTW. */
gboolean ss_operator_apply (const SsOperator *op, const float *x, float *y, GError **error);
/* x = C^T P^T y, on the CPU with FFTW. */
gboolean ss_operator_apply_adjoint (const SsOperator *op, const float *y, float *x, GError **error);

/* Simulates a measurement of TRUTH (scaled units, n floats): returns P^T y as a
 * full image (0 where unobserved) with Gaussian noise of sigma acq->noise added
 * to the observed samples, drawn from GRand seeded with acq->seed + 1. */
float *ss_simulate (const SsOperator *op, const SsAcquisition *acq, const float *truth, GError **error);

/* Records ACQ in HEADER (keywords SS_PSF, SS_RATIO, SS_SENS, SS_SEED, SS_NOISE)
 * and reads it back; ss_acquisition_from_header returns FALSE without error
 * when the header holds no acquisition, and refuses a card that does not
 * say what the writer writes (SS_SENS other than circulant or none, SS_SEED
 * not a whole number of 32 bits): another operator, read silently, would
 * deblur with the wrong one. A PSF file is recorded by its absolute path;
 * a relative one (an older recording) is ss_acquisition_resolve_psf's. */
void ss_acquisition_to_header (const SsAcquisition *acq, SsHeader *header);
gboolean ss_acquisition_from_header (const SsHeader *header, SsAcquisition *acq,
                                     gboolean *found, GError **error);
/* A recorded PSF file named relative to a directory is taken relative to
 * the recording's own (SOURCE, the measurement file's path), not to the
 * current one, where another file of that name would give the wrong
 * operator. */
void ss_acquisition_resolve_psf (SsAcquisition *acq, const char *source);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SsOperator, ss_operator_free)

/* How many entries of a WIDTH-wide image's full spectrum the half-spectrum
 * column KX stands for: 1 for column 0 and, for an even width, width / 2
 * (each its own mirror), 2 for the others. Sums over a half-spectrum (energy
 * by Parseval) weight each column by it. */
SS_HOST_DEVICE_FN double
ss_half_spectrum_weight (int kx, int width)
{
  return kx == 0 || (width % 2 == 0 && kx == width / 2) ? 1.0 : 2.0;
}

G_END_DECLS
