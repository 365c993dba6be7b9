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
  int loops;            /* executions of the plans per call: batch, or 1 */
  gsize real_stride;    /* floats between loop executions */
  gsize complex_stride;
  fftwf_plan forward;
  fftwf_plan inverse;
};

/* Pixels below which a transform runs on one thread. */
#define SMALL_TRANSFORM (128 * 128)

static GMutex plan_lock;
static GHashTable *plan_cache;  /* "w:h:b" -> SsFft* */
static int fft_thread_count;

static void ensure_fftw_initialised (void);
static unsigned planner_flags (void);

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

void
ss_fft_plan_lock (void)
{
  g_mutex_lock (&plan_lock);
  ensure_fftw_initialised ();
}

void
ss_fft_plan_unlock (void)
{
  g_mutex_unlock (&plan_lock);
}

unsigned
ss_fft_planner_flags (void)
{
  return planner_flags ();
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
  /* FFTW threads a batch over its transforms: with more threads than
   * transforms most threads idle (seen on 16 cores: a batch-of-2 pair at
   * 1024² took 4.6 ms, two single pairs 1.5 ms). Then each transform of the
   * batch runs as its own threaded plan, one after the other. */
  int loops = (batch > 1 && fft_thread_count > batch) ? batch : 1;
  int plan_batch = batch / loops;
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
  /* The second transform of a looped batch starts n floats in: it may not
   * share the first one's SIMD alignment. */
  if (loops > 1 && (real_dist % 16 != 0 || complex_dist % 8 != 0))
    flags |= FFTW_UNALIGNED;
  SsFft *fft = g_new0 (SsFft, 1);
  fft->width = width;
  fft->height = height;
  fft->batch = batch;
  fft->loops = loops;
  fft->real_stride = (gsize) real_dist;
  fft->complex_stride = 2 * (gsize) complex_dist;
  fft->forward = fftwf_plan_many_dft_r2c (2, dims, plan_batch, real, NULL, 1, real_dist,
                                          spectrum, NULL, 1, complex_dist, flags);
  fft->inverse = fftwf_plan_many_dft_c2r (2, dims, plan_batch, spectrum, NULL, 1, complex_dist,
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
  for (int i = 0; i < fft->loops; i++)
    fftwf_execute_dft_r2c (fft->forward, real_in + i * fft->real_stride,
                           (fftwf_complex *) (complex_out + i * fft->complex_stride));
}

void
ss_fft_inverse (const SsFft *fft, float *complex_in, float *real_out)
{
  for (int i = 0; i < fft->loops; i++)
    fftwf_execute_dft_c2r (fft->inverse, (fftwf_complex *) (complex_in + i * fft->complex_stride),
                           real_out + i * fft->real_stride);
}
