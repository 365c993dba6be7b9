/* ss-fft.h: FFTW single-precision real transforms, planned once per size.
 *
 * Plans are cached per (width, height, batch, rigour) for the life of the
 * process and used with fftwf_execute_dft_r2c/c2r on any 64-byte aligned
 * arrays (ss_mem_alloc). A batch of B transforms takes B contiguous real
 * images (n floats each) and B contiguous half-spectra (height * (width/2+1)
 * complex each). FFTW is unnormalised: inverse(forward(x)) = n x.
 *
 * Measured plans come from FFTW wisdom kept in the user's cache when it has
 * them (ss-fft-wisdom.h says where, and how to turn it off).
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct _SsFft SsFft;

typedef enum {
  SS_FFT_REPEATED,   /* an iteration's transforms: FFTW_MEASURE, kept as wisdom */
  SS_FFT_ONCE,       /* used once or a few times: FFTW_ESTIMATE, planned in milliseconds */
} SsFftRigour;

/* Cached plans; never freed by the caller. Planning is serialised internally.
 * ss_fft_get plans for repeated use; ss_fft_get_once (batch 1) for a
 * transform used once, and returns the measured plan when there is one. */
SsFft *ss_fft_get (int width, int height, int batch, GError **error);
SsFft *ss_fft_get_once (int width, int height, GError **error);

void ss_fft_forward (const SsFft *fft, float *real_in, float *complex_out);
/* Destroys COMPLEX_IN (FFTW's multi-dimensional c2r does). */
void ss_fft_inverse (const SsFft *fft, float *complex_in, float *real_out);

/* Whether DATA has the alignment the plans were made for (ss_mem_alloc's):
 * only such arrays may be given to ss_fft_forward and ss_fft_inverse. */
gboolean ss_fft_is_aligned (const float *data);

int ss_fft_threads (void);
/* FFTW's planner is not thread-safe: other planners (the DCT of engine/cs)
 * plan under this lock, which also initialises FFTW's threads. */
void ss_fft_plan_lock (void);
void ss_fft_plan_unlock (void);
/* The planner flags for transforms used as RIGOUR says (FFTW_ESTIMATE for
 * everything with SHARPSKY_FFTW=estimate, as the tests run). */
unsigned ss_fft_planner_flags (SsFftRigour rigour);
gsize ss_fft_spectrum_floats (int width, int height); /* 2 * height * (width/2+1) */

typedef enum {
  SS_FFT_WISDOM_OFF,        /* SHARPSKY_FFTW_WISDOM=0, or no cache directory */
  SS_FFT_WISDOM_NONE,       /* no file yet (the first run on this machine) */
  SS_FFT_WISDOM_LOADED,     /* the file was read */
  SS_FFT_WISDOM_UNREADABLE, /* a file that FFTW refused (damaged): ignored, rewritten */
} SsFftWisdomState;

/* What planning cost this process so far. */
typedef struct {
  double planning_seconds;  /* wall time inside the planner, every plan */
  int plans_measured;       /* FFTW_MEASURE plans measured now (then saved as wisdom) */
  int plans_from_wisdom;    /* FFTW_MEASURE plans taken from wisdom */
  int plans_estimated;      /* FFTW_ESTIMATE plans */
  SsFftWisdomState wisdom;  /* what the wisdom file gave at start */
} SsFftStats;

void ss_fft_get_stats (SsFftStats *stats);
const char *ss_fft_wisdom_state_to_string (SsFftWisdomState state);

G_END_DECLS
