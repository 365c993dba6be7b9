/* ss-fft.h: FFTW single-precision real transforms, planned once per size.
 *
 * Plans are cached per (width, height, batch) for the life of the process and
 * used with fftwf_execute_dft_r2c/c2r on any 64-byte aligned arrays (ss_mem_alloc).
 * A batch of B transforms takes B contiguous real images (n floats each) and B
 * contiguous half-spectra (height * (width/2+1) complex each).
 * FFTW is unnormalised: inverse(forward(x)) = n x.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct _SsFft SsFft;

/* Cached plans; never freed by the caller. Planning is serialised internally. */
SsFft *ss_fft_get (int width, int height, int batch, GError **error);

void ss_fft_forward (const SsFft *fft, float *real_in, float *complex_out);
/* Destroys COMPLEX_IN (FFTW's multi-dimensional c2r does). */
void ss_fft_inverse (const SsFft *fft, float *complex_in, float *real_out);

int ss_fft_threads (void);
/* FFTW's planner is not thread-safe: other planners (the DCT of engine/cs)
 * plan under this lock, which also initialises FFTW's threads. */
void ss_fft_plan_lock (void);
void ss_fft_plan_unlock (void);
/* FFTW_MEASURE, or FFTW_ESTIMATE with SHARPSKY_FFTW=estimate (tests). */
unsigned ss_fft_planner_flags (void);
gsize ss_fft_spectrum_floats (int width, int height); /* 2 * height * (width/2+1) */

G_END_DECLS
