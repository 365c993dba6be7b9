/* ss-fft.c: FFTW plans made once per (size, batch, rigour) and kept for the process.
 *
 * Planning is the slow and non-thread-safe part of FFTW, so it happens once,
 * under a lock, on scratch buffers; execution then uses the new-array
 * interface on the caller's (equally aligned) buffers and is thread-safe.
 *
 * Two rigours: transforms an iteration repeats hundreds of times are planned
 * with FFTW_MEASURE, whose choices are kept as FFTW wisdom in the user's
 * cache (ss-fft-wisdom.c), so only the first run on a machine pays for
 * measuring; transforms used once (a PSF's spectrum, a report's C x) are
 * planned with FFTW_ESTIMATE: measuring a 26-megapixel transform took ten
 * seconds on two cores to save a fraction of one execution.
 */
#include "ss-fft.h"
#include "ss-fft-wisdom.h"
#include "ss-error.h"
#include "ss-report.h"

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
static GHashTable *plan_cache;  /* "w:h:b:r" -> SsFft* */
static int fft_thread_count;
static SsFftStats stats;

static void ensure_fftw_initialised (void);
static unsigned planner_flags (SsFftRigour rigour);

int
ss_fft_threads (void)
{
  g_mutex_lock (&plan_lock);
  ensure_fftw_initialised ();
  g_mutex_unlock (&plan_lock);
  return fft_thread_count;
}

gboolean
ss_fft_is_aligned (const float *data)
{
  return fftwf_alignment_of ((float *) data) == 0;
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
ss_fft_planner_flags (SsFftRigour rigour)
{
  return planner_flags (rigour);
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
  stats.wisdom = ss_fft_wisdom_load ();
}

/* SHARPSKY_FFTW=estimate makes every plan an estimate, wisdom unused (the
 * test suites plan many sizes once each). */
static gboolean
estimate_everything (void)
{
  const char *env = g_getenv ("SHARPSKY_FFTW");
  return env && g_str_equal (env, "estimate");
}

/* FFTW's flags for RIGOUR. */
static unsigned
planner_flags (SsFftRigour rigour)
{
  return rigour == SS_FFT_ONCE || estimate_everything () ? FFTW_ESTIMATE : FFTW_MEASURE;
}

static void
destroy_plans (SsFft *fft)
{
  if (fft->forward)
    fftwf_destroy_plan (fft->forward);
  if (fft->inverse)
    fftwf_destroy_plan (fft->inverse);
  g_free (fft);
}

/* Both plans of FFT on the scratch arrays with FLAGS; FALSE if FFTW gives
 * none (with FFTW_WISDOM_ONLY: no wisdom for this problem). */
static gboolean
plan_pair (SsFft *fft, float *real, fftwf_complex *spectrum, int plan_batch, unsigned flags)
{
  int dims[2] = { fft->height, fft->width };
  int real_dist = (int) fft->real_stride;
  int complex_dist = (int) (fft->complex_stride / 2);
  fft->forward = fftwf_plan_many_dft_r2c (2, dims, plan_batch, real, NULL, 1, real_dist,
                                          spectrum, NULL, 1, complex_dist, flags);
  fft->inverse = fftwf_plan_many_dft_c2r (2, dims, plan_batch, spectrum, NULL, 1, complex_dist,
                                          real, NULL, 1, real_dist, flags | FFTW_DESTROY_INPUT);
  return fft->forward != NULL && fft->inverse != NULL;
}

/* Plans FFT: from wisdom when it has this problem (a measured plan, even for
 * a one-off transform: on two cores a measured 6400×4320 pair ran in 0.24 s,
 * an estimated one in 0.37 s), else by measuring (then the wisdom file
 * learns it) or estimating, per FLAGS. */
static gboolean
plan_with_wisdom (SsFft *fft, float *real, fftwf_complex *spectrum, int plan_batch,
                  unsigned flags)
{
  unsigned measured = (flags & ~FFTW_ESTIMATE) | FFTW_MEASURE;
  if (!estimate_everything () && plan_pair (fft, real, spectrum, plan_batch,
                                            measured | FFTW_WISDOM_ONLY))
    {
      stats.plans_from_wisdom++;
      return TRUE;
    }
  if (fft->forward)
    fftwf_destroy_plan (fft->forward);
  if (fft->inverse)
    fftwf_destroy_plan (fft->inverse);
  fft->forward = fft->inverse = NULL;
  if (!plan_pair (fft, real, spectrum, plan_batch, flags))
    return FALSE;
  if (flags & FFTW_ESTIMATE)
    stats.plans_estimated++;
  else
    {
      stats.plans_measured++;
      ss_fft_wisdom_save ();
    }
  return TRUE;
}

static SsFft *
make_plans (int width, int height, int batch, SsFftRigour rigour, GError **error)
{
  int real_dist = width * height;
  int complex_dist = height * (width / 2 + 1);
  /* FFTW threads a batch over its transforms: with more threads than
   * transforms most threads idle (seen on 16 cores: a batch-of-2 pair at
   * 1024² took 4.6 ms, two single pairs 1.5 ms). Then each transform of the
   * batch runs as its own threaded plan, one after the other. */
  int loops = (batch > 1 && fft_thread_count > batch) ? batch : 1;
  int plan_batch = batch / loops;
  float *real = fftwf_alloc_real ((size_t) real_dist * plan_batch);
  fftwf_complex *spectrum = fftwf_alloc_complex ((size_t) complex_dist * plan_batch);
  if (real == NULL || spectrum == NULL)
    {
      fftwf_free (real);
      fftwf_free (spectrum);
      g_set_error (error, SS_ERROR, SS_ERROR_OUT_OF_MEMORY,
                   "out of memory planning a %d×%d FFT", width, height);
      return NULL;
    }
  unsigned flags = planner_flags (rigour);
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
  gboolean ok = plan_with_wisdom (fft, real, spectrum, plan_batch, flags);
  fftwf_free (real);
  fftwf_free (spectrum);
  if (!ok)
    {
      g_set_error (error, SS_ERROR, SS_ERROR_UNSUPPORTED,
                   "FFTW could not plan a %d×%d transform", width, height);
      destroy_plans (fft);
      return NULL;
    }
  return fft;
}

static SsFft *
lookup (int width, int height, int batch, SsFftRigour rigour)
{
  char key[64];
  g_snprintf (key, sizeof key, "%d:%d:%d:%d", width, height, batch, (int) rigour);
  return g_hash_table_lookup (plan_cache, key);
}

static SsFft *
get_plans (int width, int height, int batch, SsFftRigour rigour, GError **error)
{
  if (width <= 0 || height <= 0 || batch <= 0)
    {
      g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT,
                   "invalid FFT size %d×%d (batch %d)", width, height, batch);
      return NULL;
    }
  g_mutex_lock (&plan_lock);
  ensure_fftw_initialised ();
  /* A measured plan serves a one-off transform too: it is at least as fast. */
  SsFft *fft = lookup (width, height, batch, SS_FFT_REPEATED);
  if (fft == NULL)
    fft = lookup (width, height, batch, rigour);
  if (fft == NULL)
    {
      double start = ss_now ();
      fft = make_plans (width, height, batch, rigour, error);
      if (fft)
        g_hash_table_insert (plan_cache,
                             g_strdup_printf ("%d:%d:%d:%d", width, height, batch, (int) rigour),
                             fft);
      double spent = ss_now () - start;
      stats.planning_seconds += spent;
      ss_planning_add (spent);
    }
  g_mutex_unlock (&plan_lock);
  return fft;
}

SsFft *
ss_fft_get (int width, int height, int batch, GError **error)
{
  return get_plans (width, height, batch, SS_FFT_REPEATED, error);
}

SsFft *
ss_fft_get_once (int width, int height, GError **error)
{
  return get_plans (width, height, 1, SS_FFT_ONCE, error);
}

void
ss_fft_get_stats (SsFftStats *out)
{
  g_mutex_lock (&plan_lock);
  *out = stats;
  g_mutex_unlock (&plan_lock);
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
