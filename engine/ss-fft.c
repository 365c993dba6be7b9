/* ss-fft.c: FFTW plans made once per (size, batch) and kept for the process.
 *
 * Planning is the slow and non-thread-safe part of FFTW, so it happens once,
 * under a lock, on scratch buffers; execution then uses the new-array
 * interface on the caller's (equally aligned) buffers and is thread-safe.
 */
#include "ss-fft.h"
#include "ss-error.h"

#include <fftw3.h>
#include <stdlib.h>

struct _SsFft {
  int width, height, batch;
  fftwf_plan forward;
  fftwf_plan inverse;
};

/* Pixels below which a transform runs on one thread. */
#define SMALL_TRANSFORM (128 * 128)

static GMutex plan_lock;
static GHashTable *plan_cache;  /* "w:h:b" -> SsFft* */
static int fft_thread_count;

static void ensure_fftw_initialised (void);

int
ss_fft_threads (void)
{
  g_mutex_lock (&plan_lock);
  ensure_fftw_initialised ();
  g_mutex_unlock (&plan_lock);
  return fft_thread_count;
}

gsize
ss_fft_spectrum_floats (int width, int height)
{
  return 2 * (gsize) height * (gsize) (width / 2 + 1);
}

static void
ensure_fftw_initialised (void)
{
  if (plan_cache)
    return;
  plan_cache = g_hash_table_new (g_str_hash, g_str_equal);
  fft_thread_count = (int) g_get_num_processors ();
  const char *env = g_getenv ("SHARPSKY_THREADS");
  if (env && atoi (env) > 0)
    fft_thread_count = atoi (env);
  fftwf_init_threads ();
  fftwf_plan_with_nthreads (fft_thread_count);
}

static unsigned
planner_flags (void)
{
  /* MEASURE is worth its seconds for the sizes we iterate on hundreds of
   * times; SHARPSKY_FFTW=estimate keeps test start-up quick. */
  const char *env = g_getenv ("SHARPSKY_FFTW");
  if (env && g_str_equal (env, "estimate"))
    return FFTW_ESTIMATE;
  return FFTW_MEASURE;
}

static SsFft *
make_plans (int width, int height, int batch, GError **error)
{
  int dims[2] = { height, width };
  int real_dist = width * height;
  int complex_dist = height * (width / 2 + 1);
  float *real = fftwf_alloc_real ((size_t) real_dist * batch);
  fftwf_complex *spectrum = fftwf_alloc_complex ((size_t) complex_dist * batch);
  if (real == NULL || spectrum == NULL)
    {
      fftwf_free (real);
      fftwf_free (spectrum);
      g_set_error (error, SS_ERROR, SS_ERROR_OUT_OF_MEMORY,
                   "out of memory planning a %d×%d FFT", width, height);
      return NULL;
    }
  unsigned flags = planner_flags ();
  /* Threads cost more than they give on small transforms (seen: 30×30 ran
   * ten times slower with two threads). */
  fftwf_plan_with_nthreads ((gsize) real_dist * batch >= SMALL_TRANSFORM ? fft_thread_count : 1);
  SsFft *fft = g_new0 (SsFft, 1);
  fft->width = width;
  fft->height = height;
  fft->batch = batch;
  fft->forward = fftwf_plan_many_dft_r2c (2, dims, batch, real, NULL, 1, real_dist,
                                          spectrum, NULL, 1, complex_dist, flags);
  fft->inverse = fftwf_plan_many_dft_c2r (2, dims, batch, spectrum, NULL, 1, complex_dist,
                                          real, NULL, 1, real_dist, flags | FFTW_DESTROY_INPUT);
  fftwf_free (real);
  fftwf_free (spectrum);
  if (fft->forward == NULL || fft->inverse == NULL)
    {
      g_set_error (error, SS_ERROR, SS_ERROR_UNSUPPORTED,
                   "FFTW could not plan a %d×%d transform", width, height);
      g_free (fft);
      return NULL;
    }
  return fft;
}

SsFft *
ss_fft_get (int width, int height, int batch, GError **error)
{
  if (width <= 0 || height <= 0 || batch <= 0)
    {
      g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT,
                   "invalid FFT size %d×%d (batch %d)", width, height, batch);
      return NULL;
    }
  g_mutex_lock (&plan_lock);
  ensure_fftw_initialised ();
  char key[64];
  g_snprintf (key, sizeof key, "%d:%d:%d", width, height, batch);
  SsFft *fft = g_hash_table_lookup (plan_cache, key);
  if (fft == NULL)
    {
      fft = make_plans (width, height, batch, error);
      if (fft)
        g_hash_table_insert (plan_cache, g_strdup (key), fft);
    }
  g_mutex_unlock (&plan_lock);
  return fft;
}

void
ss_fft_forward (const SsFft *fft, float *real_in, float *complex_out)
{
  fftwf_execute_dft_r2c (fft->forward, real_in, (fftwf_complex *) complex_out);
}

void
ss_fft_inverse (const SsFft *fft, float *complex_in, float *real_out)
{
  fftwf_execute_dft_c2r (fft->inverse, (fftwf_complex *) complex_in, real_out);
}
