/* ss-model.c: the acquisition model and its circulant operator (CPU side).
 *
 * The operator is kept in the Fourier domain only (c^ and the mask); every
 * backend uploads these same arrays, so the random draws happen once, here.
 */
#include "ss-model.h"
#include "ss-error.h"
#include "ss-fft.h"
#include "ss-mem.h"

#include <complex.h>
#include <math.h>
#include <string.h>

void
ss_acquisition_init (SsAcquisition *acq)
{
  memset (acq, 0, sizeof *acq);
  acq->psf.kind = SS_PSF_NONE;
  acq->ratio = 1.0;
  acq->sensing = SS_SENSING_AUTO;
  acq->seed = 1;
}

void
ss_acquisition_clear (SsAcquisition *acq)
{
  ss_psf_spec_clear (&acq->psf);
}

gboolean
ss_acquisition_validate (const SsAcquisition *acq, GError **error)
{
  if (!(acq->ratio > 0 && acq->ratio <= 1))
    {
      g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT,
                   "sampling ratio %g is outside (0, 1]", acq->ratio);
      return FALSE;
    }
  /* The noise is in scaled units (the image's range is about 1): past
   * 1e30 the float32 data overflow, and a run writes an image of infinities
   * or a flat one. */
  if (!(acq->noise >= 0) || !(acq->noise <= SS_NOISE_MAX))
    {
      g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT,
                   "noise level %g must be >= 0 and at most %g (scaled units: the image's "
                   "range is about 1)", acq->noise, SS_NOISE_MAX);
      return FALSE;
    }
  return TRUE;
}

gboolean
ss_acquisition_uses_sensing (const SsAcquisition *acq)
{
  if (acq->sensing == SS_SENSING_AUTO)
    return acq->ratio < 1.0;
  return acq->sensing == SS_SENSING_CIRCULANT;
}

double
ss_rand_normal (GRand *rng)
{
  double u1 = g_rand_double (rng), u2 = g_rand_double (rng);
  if (u1 < 1e-300)
    u1 = 1e-300;
  return sqrt (-2.0 * log (u1)) * cos (2.0 * G_PI * u2);
}

/* An operator of WIDTH x HEIGHT with every pixel observed and no spectrum
 * yet (a deferred one's state; operator_alloc adds the spectrum). */
static SsOperator *
operator_alloc_deferred (int width, int height, GError **error)
{
  if (width <= 0 || height <= 0)
    {
      g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT,
                   "invalid problem size %d×%d", width, height);
      return NULL;
    }
  SsOperator *op = g_new0 (SsOperator, 1);
  op->width = width;
  op->height = height;
  op->spec_width = width / 2 + 1;
  op->m = (gsize) width * height;
  return op;
}

static SsOperator *
operator_alloc (int width, int height, GError **error)
{
  SsOperator *op = operator_alloc_deferred (width, height, error);
  if (op == NULL)
    return NULL;
  op->chat = ss_mem_alloc (NULL, ss_fft_spectrum_floats (width, height) * sizeof (float), error);
  if (op->chat == NULL)
    {
      g_free (op);
      return NULL;
    }
  return op;
}

void
ss_operator_free (SsOperator *op)
{
  if (op == NULL)
    return;
  ss_mem_free (NULL, op->chat, 0);
  g_free (op->kernel);
  g_free (op->mask);
  g_free (op);
}

static void
update_lipschitz (SsOperator *op)
{
  gsize count = (gsize) op->height * op->spec_width;
  double best = 0;
#pragma omp parallel for reduction(max : best) schedule(static) if (count > SS_PARALLEL_PIXELS)
  for (gsize k = 0; k < count; k++)
    {
      double re = op->chat[2 * k], im = op->chat[2 * k + 1];
      best = MAX (best, re * re + im * im);
    }
  op->lipschitz = best;
}

/* OUT = rfft2 (IMAGE). FFTW's out-of-place r2c leaves its input as it was,
 * so an aligned IMAGE is transformed where it lies; an unaligned one (the
 * plans assume ss_mem_alloc's alignment) goes through a copy. */
static gboolean
forward_transform_into (const float *image, int width, int height, float *out, GError **error)
{
  SsFft *fft = ss_fft_get_once (width, height, error);
  if (fft == NULL)
    return FALSE;
  if (ss_fft_is_aligned (image))
    {
      ss_fft_forward (fft, (float *) image, out);
      return TRUE;
    }
  gsize bytes = (gsize) width * height * sizeof (float);
  float *real = ss_mem_alloc (NULL, bytes, error);
  if (real == NULL)
    return FALSE;
  memcpy (real, image, bytes);
  ss_fft_forward (fft, real, out);
  ss_mem_free (NULL, real, 0);
  return TRUE;
}

/* rfft2 of a real image into a fresh half-spectrum buffer. */
static float *
forward_transform (const float *image, int width, int height, GError **error)
{
  float *spectrum = ss_mem_alloc (NULL, ss_fft_spectrum_floats (width, height) * sizeof (float),
                                  error);
  if (spectrum != NULL && !forward_transform_into (image, width, height, spectrum, error))
    {
      ss_mem_free (NULL, spectrum, 0);
      return NULL;
    }
  return spectrum;
}

/* Chooses m of n pixels uniformly (partial Fisher–Yates). */
static guint8 *
random_mask (GRand *rng, gsize n, gsize m)
{
  guint32 *order = g_new (guint32, n);
  for (gsize i = 0; i < n; i++)
    order[i] = (guint32) i;
  guint8 *mask = g_new0 (guint8, n);
  for (gsize i = 0; i < m; i++)
    {
      gsize j = i + (gsize) g_rand_double_range (rng, 0, (double) (n - i));
      if (j >= n)
        j = n - 1;
      guint32 t = order[i];
      order[i] = order[j];
      order[j] = t;
      mask[order[i]] = 1;
    }
  g_free (order);
  return mask;
}

/* Multiplies c^ by the spectrum of a random circulant whose first column is
 * i.i.d. N(0, 1/m). */
static gboolean
apply_random_sensing (SsOperator *op, GRand *rng, GError **error)
{
  gsize n = (gsize) op->width * op->height;
  float *s = g_new (float, n);
  double std = 1.0 / sqrt ((double) op->m);
  for (gsize i = 0; i < n; i++)
    s[i] = (float) (std * ss_rand_normal (rng));
  float *shat = forward_transform (s, op->width, op->height, error);
  g_free (s);
  if (shat == NULL)
    return FALSE;
  float complex *c = (float complex *) op->chat;
  const float complex *sc = (const float complex *) shat;
  for (gsize k = 0; k < (gsize) op->height * op->spec_width; k++)
    c[k] *= sc[k];
  ss_mem_free (NULL, shat, 0);
  return TRUE;
}

/* Whether a kernel whose values span [LOW, HIGH] (both taken with 0) is a
 * blur: no pixel below -1e-4 of its peak (a measured PSF keeps a little
 * noise around zero). Seen where the kernel is at hand, Richardson–Lucy
 * need not transform the spectrum back to check it. */
static gboolean
kernel_range_is_blur (float low, float high)
{
  return high > 0 && low >= -1e-4f * high;
}

static gboolean
kernel_is_nonnegative (const float *kernel, gsize n)
{
  float low = 0, high = 0;
#pragma omp parallel for reduction(min : low) reduction(max : high) schedule(static) \
  if (n > SS_PARALLEL_PIXELS)
  for (gsize i = 0; i < n; i++)
    {
      low = fminf (low, kernel[i]);
      high = fmaxf (high, kernel[i]);
    }
  return kernel_range_is_blur (low, high);
}

static gboolean
set_blur_spectrum (SsOperator *op, const SsPsfSpec *psf, GError **error)
{
  g_autoptr (SsImage) kernel = ss_psf_render (psf, op->width, op->height, error);
  if (kernel == NULL
      || !forward_transform_into (kernel->data, op->width, op->height, op->chat, error))
    return FALSE;
  op->kernel_nonnegative
    = kernel_is_nonnegative (kernel->data, (gsize) op->width * op->height);
  return TRUE;
}

SsOperator *
ss_operator_new (const SsAcquisition *acq, int width, int height, GError **error)
{
  if (!ss_acquisition_validate (acq, error))
    return NULL;
  g_autoptr (SsOperator) op = operator_alloc (width, height, error);
  if (op == NULL || !set_blur_spectrum (op, &acq->psf, error))
    return NULL;

  gsize n = (gsize) width * height;
  g_autoptr (GRand) rng = g_rand_new_with_seed (acq->seed);
  if (acq->ratio < 1.0)
    {
      op->m = (gsize) llround (acq->ratio * (double) n);
      if (op->m == 0)
        {
          g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT,
                       "sampling ratio %g keeps no pixel of a %d×%d image",
                       acq->ratio, width, height);
          return NULL;
        }
      op->mask = random_mask (rng, n, op->m);
    }
  if (ss_acquisition_uses_sensing (acq))
    {
      if (!apply_random_sensing (op, rng, error))
        return NULL;
      op->kernel_nonnegative = FALSE;
    }
  update_lipschitz (op);
  return g_steal_pointer (&op);
}

/* The mask and m from OBSERVED (NaN: not observed; NULL: all observed). */
static gboolean
set_observed (SsOperator *op, const float *observed, GError **error)
{
  gsize n = (gsize) op->width * op->height;
  if (observed == NULL)
    return TRUE;
  gsize finite = 0;
#pragma omp parallel for reduction(+ : finite) schedule(static) if (n > SS_PARALLEL_PIXELS)
  for (gsize i = 0; i < n; i++)
    finite += isfinite (observed[i]) ? 1 : 0;
  if (finite == 0)
    {
      g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT, "the image has no finite pixels");
      return FALSE;
    }
  if (finite < n)
    {
      op->mask = g_new (guint8, n);
#pragma omp parallel for schedule(static) if (n > SS_PARALLEL_PIXELS)
      for (gsize i = 0; i < n; i++)
        op->mask[i] = isfinite (observed[i]) ? 1 : 0;
    }
  op->m = finite;
  return TRUE;
}

SsOperator *
ss_operator_new_from_kernel (const float *kernel, const float *observed, int width, int height,
                             GError **error)
{
  g_autoptr (SsOperator) op = operator_alloc (width, height, error);
  if (op == NULL || !forward_transform_into (kernel, width, height, op->chat, error))
    return NULL;
  gsize n = (gsize) width * height;
  op->kernel_nonnegative = kernel_is_nonnegative (kernel, n);
  if (!set_observed (op, observed, error))
    return NULL;
  update_lipschitz (op);
  return g_steal_pointer (&op);
}

/* One parallel pass over a deferred operator's kernel: whether it is a blur
 * (kernel_range_is_blur) and which rows hold anything. A camera frame's
 * kernel is 27 million floats, nearly all 0 beyond the PSF's reach (tens
 * of milliseconds a pass on one core). */
static gboolean
kernel_scan_rows (const float *kernel, int width, int height, guint8 *busy)
{
  float low = 0, high = 0;
#pragma omp parallel for reduction(min : low) reduction(max : high) schedule(static) \
  if ((gsize) width * height > SS_PARALLEL_PIXELS)
  for (int y = 0; y < height; y++)
    {
      const float *row = kernel + (gsize) y * width;
      float row_low = 0, row_high = 0;
      for (int x = 0; x < width; x++)
        {
          row_low = fminf (row_low, row[x]);
          row_high = fmaxf (row_high, row[x]);
        }
      busy[y] = row_low != 0.0f || row_high != 0.0f;
      low = fminf (low, row_low);
      high = fmaxf (high, row_high);
    }
  return kernel_range_is_blur (low, high);
}

/* Σ KERNEL in index order, the bits a plain loop gives, over only the BUSY
 * rows: a 0 added to the running sum leaves it as it is. */
static double
kernel_sum_in_order (const float *kernel, int width, int height, const guint8 *busy)
{
  double sum = 0;
  for (int y = 0; y < height; y++)
    if (busy[y])
      for (int x = 0; x < width; x++)
        sum += kernel[(gsize) y * width + x];
  return sum;
}

SsOperator *
ss_operator_new_deferred (const float *kernel, const float *observed, int width, int height,
                          GError **error)
{
  gsize n = width > 0 && height > 0 ? (gsize) width * height : 0;
  return ss_operator_new_deferred_take (g_memdup2 (kernel, n * sizeof (float)), observed, width,
                                        height, error);
}

SsOperator *
ss_operator_new_deferred_take (float *kernel, const float *observed, int width, int height,
                               GError **error)
{
  g_autofree float *owned = kernel;
  if (width <= 0 || height <= 0)
    return ss_operator_new_from_kernel (kernel, observed, width, height, error);
  g_autofree guint8 *busy = g_new (guint8, height);
  if (!kernel_scan_rows (kernel, width, height, busy))
    return ss_operator_new_from_kernel (kernel, observed, width, height, error);
  g_autoptr (SsOperator) op = operator_alloc_deferred (width, height, error);
  if (op == NULL || !set_observed (op, observed, error))
    return NULL;
  op->kernel = g_steal_pointer (&owned);
  op->kernel_nonnegative = TRUE;
  /* Summed once: RL's set-up and the floors ask for the DC term of every
   * run. */
  double sum = kernel_sum_in_order (op->kernel, width, height, busy);
  op->kernel_sum = sum;
  op->lipschitz = sum * sum;
  return g_steal_pointer (&op);
}

/* Serialises the realisation of deferred spectra (rare: a CPU fallback). */
static GMutex realize_lock;

gboolean
ss_operator_realize (const SsOperator *op, GError **error)
{
  /* The spectrum is a cache of the kernel: filling it changes no value
   * the operator stands for, hence the casts. */
  SsOperator *mutable_op = (SsOperator *) op;
  if (g_atomic_pointer_get (&mutable_op->chat) != NULL)
    return TRUE;
  if (op->kernel == NULL)
    {
      g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT, "the operator has no spectrum");
      return FALSE;
    }
  g_mutex_lock (&realize_lock);
  gboolean ok = op->chat != NULL;
  if (!ok)
    {
      float *chat = forward_transform (op->kernel, op->width, op->height, error);
      ok = chat != NULL;
      if (ok)
        g_atomic_pointer_set (&mutable_op->chat, chat);
    }
  g_mutex_unlock (&realize_lock);
  return ok;
}

double
ss_operator_dc (const SsOperator *op)
{
  return op->chat != NULL ? op->chat[0] : op->kernel_sum;
}

SsOperator *
ss_operator_new_blur (const SsPsfSpec *psf, const float *observed, int width, int height,
                      GError **error)
{
  if (width <= 0 || height <= 0)
    return operator_alloc (width, height, error);
  g_autoptr (SsImage) kernel = ss_psf_render (psf, width, height, error);
  if (kernel == NULL)
    return NULL;
  return ss_operator_new_from_kernel (kernel->data, observed, width, height, error);
}

SsOperator *
ss_operator_new_from_parts (int width, int height, const float *chat, const guint8 *mask,
                            GError **error)
{
  g_autoptr (SsOperator) op = operator_alloc (width, height, error);
  if (op == NULL)
    return NULL;
  memcpy (op->chat, chat, ss_fft_spectrum_floats (width, height) * sizeof (float));
  gsize n = (gsize) width * height;
  if (mask)
    {
      op->mask = g_memdup2 (mask, n);
      op->m = 0;
      for (gsize i = 0; i < n; i++)
        op->m += mask[i] ? 1 : 0;
      if (op->m == 0)
        {
          g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT, "the mask observes no pixel");
          return NULL;
        }
    }
  update_lipschitz (op);
  return g_steal_pointer (&op);
}

/* out = irfft2(H . rfft2(in)) / n, with H = c^ or conj(c^). */
static gboolean
circulant_product (const SsOperator *op, const float *in, float *out, gboolean adjoint,
                   GError **error)
{
  if (!ss_operator_realize (op, error))
    return FALSE;
  SsFft *fft = ss_fft_get_once (op->width, op->height, error);
  if (fft == NULL)
    return FALSE;
  gsize n = (gsize) op->width * op->height;
  gsize spectrum_floats = ss_fft_spectrum_floats (op->width, op->height);
  float *real = ss_mem_alloc (NULL, n * sizeof (float), error);
  float *spectrum = real ? ss_mem_alloc (NULL, spectrum_floats * sizeof (float), error) : NULL;
  if (spectrum == NULL)
    {
      ss_mem_free (NULL, real, 0);
      return FALSE;
    }
  memcpy (real, in, n * sizeof (float));
  ss_fft_forward (fft, real, spectrum);
  float complex *s = (float complex *) spectrum;
  const float complex *c = (const float complex *) op->chat;
  float inv_n = 1.0f / (float) n;
  for (gsize k = 0; k < spectrum_floats / 2; k++)
    s[k] *= (adjoint ? conjf (c[k]) : c[k]) * inv_n;
  ss_fft_inverse (fft, spectrum, real);
  memcpy (out, real, n * sizeof (float));
  ss_mem_free (NULL, real, 0);
  ss_mem_free (NULL, spectrum, 0);
  return TRUE;
}

/* Offset D modulo SIZE, without a division for the offsets that fit. */
static inline int
fold_offset (int d, int size)
{
  if (d >= 0)
    return d < size ? d : d % size;
  return d >= -size ? d + size : ((d % size) + size) % size;
}

float *
ss_operator_blur_kernel_at (const SsOperator *op, int width, int height, GError **error)
{
  gsize n = (gsize) op->width * op->height;
  const float *full = op->kernel;
  g_autofree float *from_spectrum = NULL;
  if (full == NULL)
    {
      /* C δ: the kernel that c^ is the spectrum of. */
      g_autofree float *delta = g_new0 (float, n);
      delta[0] = 1.0f;
      from_spectrum = g_new (float, n);
      if (!circulant_product (op, delta, from_spectrum, FALSE, error))
        return NULL;
      full = from_spectrum;
    }
  /* Each tap goes to its signed offset modulo the new size. Each row of
   * the result is summed by one thread, from the frame's rows in order, so
   * the sums do not depend on the threads (a camera frame's kernel is 100
   * MB to read; a rendered PSF is zero beyond its reach). */
  float *folded = g_new0 (float, (gsize) width * height);
  int frame_width = op->width, frame_height = op->height;
#pragma omp parallel for schedule(dynamic) if (n > SS_PARALLEL_PIXELS)
  for (int fy = 0; fy < height; fy++)
    for (int y = 0; y < frame_height; y++)
      {
        int dy = y <= frame_height / 2 ? y : y - frame_height;
        if (fold_offset (dy, height) != fy)
          continue;
        const float *row = full + (gsize) y * frame_width;
        float *out = folded + (gsize) fy * width;
        for (int x = 0; x < frame_width; x++)
          if (row[x] != 0.0f)
            out[fold_offset (x <= frame_width / 2 ? x : x - frame_width, width)] += row[x];
      }
  return folded;
}

gboolean
ss_operator_apply (const SsOperator *op, const float *x, float *y, GError **error)
{
  if (!circulant_product (op, x, y, FALSE, error))
    return FALSE;
  if (op->mask)
    for (gsize i = 0; i < (gsize) op->width * op->height; i++)
      if (!op->mask[i])
        y[i] = 0.0f;
  return TRUE;
}

gboolean
ss_operator_apply_adjoint (const SsOperator *op, const float *y, float *x, GError **error)
{
  gsize n = (gsize) op->width * op->height;
  g_autofree float *masked = g_new (float, n);
  for (gsize i = 0; i < n; i++)
    masked[i] = (op->mask == NULL || op->mask[i]) ? y[i] : 0.0f;
  return circulant_product (op, masked, x, TRUE, error);
}

float *
ss_simulate (const SsOperator *op, const SsAcquisition *acq, const float *truth, GError **error)
{
  gsize n = (gsize) op->width * op->height;
  float *y = g_try_new (float, n);
  if (y == NULL)
    {
      g_set_error (error, SS_ERROR, SS_ERROR_OUT_OF_MEMORY, "out of memory simulating");
      return NULL;
    }
  if (!ss_operator_apply (op, truth, y, error))
    {
      g_free (y);
      return NULL;
    }
  if (acq->noise > 0)
    {
      g_autoptr (GRand) rng = g_rand_new_with_seed (acq->seed + 1);
      for (gsize i = 0; i < n; i++)
        if (op->mask == NULL || op->mask[i])
          y[i] += (float) (acq->noise * ss_rand_normal (rng));
    }
  return y;
}

static const char *
sensing_name (const SsAcquisition *acq)
{
  return ss_acquisition_uses_sensing (acq) ? "circulant" : "none";
}

void
ss_acquisition_to_header (const SsAcquisition *acq, SsHeader *header)
{
  g_autofree char *psf = ss_psf_spec_to_string (&acq->psf);
  /* A file by its absolute path: the recording is read from anywhere. */
  if (acq->psf.kind == SS_PSF_FILE && acq->psf.path != NULL
      && !g_path_is_absolute (acq->psf.path))
    {
      g_autofree char *absolute = g_canonicalize_filename (acq->psf.path, NULL);
      g_free (psf);
      psf = g_strdup_printf ("file:%s", absolute);
    }
  ss_header_set_string (header, "SS_PSF", psf, "Sharpsky blur model");
  ss_header_set_double (header, "SS_RATIO", acq->ratio, "sampling ratio m/n");
  ss_header_set_string (header, "SS_SENS", sensing_name (acq), "sensing operator");
  ss_header_set_double (header, "SS_SEED", acq->seed, "random seed of mask and sensing");
  ss_header_set_double (header, "SS_NOISE", acq->noise, "noise sigma, scaled units");
}

gboolean
ss_acquisition_from_header (const SsHeader *header, SsAcquisition *acq, gboolean *found,
                            GError **error)
{
  ss_acquisition_init (acq);
  *found = FALSE;
  g_autofree char *psf = header ? ss_header_get_string (header, "SS_PSF") : NULL;
  if (psf == NULL)
    return TRUE;
  *found = TRUE;
  if (!ss_psf_spec_parse (psf, &acq->psf, error))
    return FALSE;
  double seed = 1;
  g_autofree char *sensing = ss_header_get_string (header, "SS_SENS");
  if (!ss_header_get_double (header, "SS_RATIO", &acq->ratio)
      || !ss_header_get_double (header, "SS_SEED", &seed) || sensing == NULL)
    {
      g_set_error (error, SS_ERROR, SS_ERROR_FORMAT,
                   "the header records a simulation (SS_PSF) but lacks SS_RATIO, SS_SEED or SS_SENS");
      return FALSE;
    }
  if (!ss_header_get_double (header, "SS_NOISE", &acq->noise))
    acq->noise = 0;
  if (!(seed >= 0 && seed <= G_MAXUINT32 && seed == floor (seed)))
    {
      g_set_error (error, SS_ERROR, SS_ERROR_FORMAT,
                   "the header's SS_SEED (%g) is not a seed this program records (a whole "
                   "number from 0 to 4294967295): the recorded operator cannot be rebuilt", seed);
      return FALSE;
    }
  acq->seed = (guint32) seed;
  if (g_str_equal (sensing, "circulant"))
    acq->sensing = SS_SENSING_CIRCULANT;
  else if (g_str_equal (sensing, "none"))
    acq->sensing = SS_SENSING_NONE;
  else
    {
      g_set_error (error, SS_ERROR, SS_ERROR_FORMAT,
                   "the header's SS_SENS ('%s') is neither circulant nor none: the recorded "
                   "operator cannot be rebuilt", sensing);
      return FALSE;
    }
  return ss_acquisition_validate (acq, error);
}

void
ss_acquisition_resolve_psf (SsAcquisition *acq, const char *source)
{
  if (acq->psf.kind != SS_PSF_FILE || acq->psf.path == NULL || source == NULL
      || g_path_is_absolute (acq->psf.path))
    return;
  g_autofree char *directory = g_path_get_dirname (source);
  char *resolved = g_build_filename (directory, acq->psf.path, NULL);
  g_free (acq->psf.path);
  acq->psf.path = resolved;
}
