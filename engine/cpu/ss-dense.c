/* ss-dense.c: the dense normal matrix A^T A + lambda I of A = P C, and the
 * memory arithmetic that decides whether the dense path fits (seed 002).
 *
 * C is circulant, given by its half-spectrum c^ (FFTW's unnormalised rfft2 of
 * its first column c), so C x = irfft2(c^ . rfft2(x)) / n and
 *   C[i][j] = c[(ri - rj) mod h, (ci - cj) mod w]   (pixel i at row ri, column ci).
 * Without a mask, C^T C is circulant too: entry (j, k) is the autocorrelation
 *   acf = irfft2(|c^|^2) / n   at   ((rj - rk) mod h, (cj - ck) mod w),
 * so the matrix is filled by copying shifted rows of acf, in O(n^2) with no
 * matrix product. With a mask, column k of A^T A is C^T P (C e_k), and C e_k
 * is c shifted by pixel k: one masked shift plus one FFT pair per column.
 */
#include "ss-dense.h"
#include "ss-error.h"
#include "ss-fft.h"
#include "ss-mem.h"

#include <cblas.h>
#include <complex.h>
#include <math.h>
#include <string.h>

/* Columns transformed together when the normal matrix of a masked operator is
 * built with FFTs: large enough for FFTW's threads to have work, small enough
 * to stay in cache for small images. */
#define DENSE_FFT_BATCH 16

/* Work vectors of n floats besides the matrices: A^T y, x, P C x, the
 * operator's FFT buffers, a preview, and the FFT batch (real and spectrum,
 * each at most 3 n floats for any h x w with h w = n). */
#define DENSE_VECTOR_FLOATS (8 + 4 * DENSE_FFT_BATCH)

/* n * n floats, or G_MAXSIZE when that cannot be counted in a gsize. */
static gsize
square_matrix_bytes (gsize n)
{
  gsize elements, bytes;
  if (!g_size_checked_mul (&elements, n, n)
      || !g_size_checked_mul (&bytes, elements, sizeof (float)))
    return G_MAXSIZE;
  return bytes;
}

gsize
ss_dense_bytes_needed (gsize n, gsize m, SsDirectMethod method)
{
  /* The masked normal matrix is built column by column with FFTs, so the
   * observation count m adds nothing beyond the work vectors. SOLVE factors
   * in place (one matrix); INVERSE keeps the factor while GETS writes L^-1
   * (two). */
  gsize matrices = method == SS_DIRECT_INVERSE ? 2 : 1;
  gsize matrix = square_matrix_bytes (n), total, vectors;
  if (matrix == G_MAXSIZE
      || !g_size_checked_mul (&total, matrix, matrices)
      || !g_size_checked_mul (&vectors, n, DENSE_VECTOR_FLOATS * sizeof (float))
      || !g_size_checked_add (&total, total, vectors))
    return G_MAXSIZE;
  return total;
}

gsize
ss_dense_max_unknowns (gsize bytes, double observed_fraction, SsDirectMethod method)
{
  if (!(observed_fraction >= 0) || observed_fraction > 1)
    observed_fraction = 1;
  /* Solve q 4 n^2 + 4 V n = bytes for n, then settle the rounding against
   * ss_dense_bytes_needed itself so both always agree. */
  double q = method == SS_DIRECT_INVERSE ? 2 : 1;
  double a = 4.0 * q, b = 4.0 * DENSE_VECTOR_FLOATS;
  double root = (-b + sqrt (b * b + 4.0 * a * (double) bytes)) / (2.0 * a);
  gsize n = root > 0 ? (gsize) root : 0;
#define NEED(k) ss_dense_bytes_needed ((k), (gsize) llround (observed_fraction * (double) (k)), method)
  while (n > 0 && NEED (n) > bytes)
    n--;
  while (NEED (n + 1) <= bytes)
    n++;
#undef NEED
  return n;
}

gboolean
ss_dense_check_fits (int width, int height, gsize m, SsDirectMethod method, gsize limit,
                     GError **error)
{
  if (width <= 0 || height <= 0)
    {
      g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT,
                   "invalid problem size %d×%d", width, height);
      return FALSE;
    }
  gsize n = (gsize) width * (gsize) height;
  gsize available = limit ? limit : ss_mem_available ();
  gsize need = ss_dense_bytes_needed (n, m, method);
  /* LAPACK indexes with int, so n itself must be an int as well. */
  if (need <= available && n <= (gsize) G_MAXINT)
    return TRUE;

  double fraction = MIN (1.0, (double) m / (double) n);
  gsize max_n = ss_dense_max_unknowns (available, fraction, method);
  gsize side = (gsize) floor (sqrt ((double) max_n));
  while (side * side > max_n)
    side--;
  while ((side + 1) * (side + 1) <= max_n)
    side++;
  g_autofree char *need_text = need == G_MAXSIZE ? g_strdup ("more than 16 EiB")
                                                 : ss_format_bytes (need);
  g_autofree char *available_text = ss_format_bytes (available);
  if (side == 0)
    g_set_error (error, SS_ERROR, SS_ERROR_TOO_LARGE,
                 "dense direct needs %s for %d×%d pixels (%" G_GSIZE_FORMAT " unknowns); "
                 "%s available does not fit even one pixel: use Direct FFT",
                 need_text, width, height, n, available_text);
  else
    g_set_error (error, SS_ERROR, SS_ERROR_TOO_LARGE,
                 "dense direct needs %s for %d×%d pixels (%" G_GSIZE_FORMAT " unknowns); "
                 "%s available fits at most %" G_GSIZE_FORMAT "×%" G_GSIZE_FORMAT " pixels "
                 "(%" G_GSIZE_FORMAT " unknowns): deblur a region that small or use Direct FFT",
                 need_text, width, height, n, available_text, side, side, side * side);
  return FALSE;
}

/* --- building the normal matrix ------------------------------------------------ */

/* Scratch for the FFT routes, freed together. */
typedef struct {
  SsFft *fft;              /* batch of DENSE_FFT_BATCH, or 1 */
  float *real;
  float *spectrum;
  float *doubled;          /* h rows of 2 w floats: each row twice, for shifted copies */
} DenseScratch;

static void
dense_scratch_free (DenseScratch *s)
{
  ss_mem_free (NULL, s->real, 0);
  ss_mem_free (NULL, s->spectrum, 0);
  ss_mem_free (NULL, s->doubled, 0);
  memset (s, 0, sizeof *s);
}

static gboolean
dense_scratch_init (DenseScratch *s, int width, int height, int batch, GError **error)
{
  memset (s, 0, sizeof *s);
  gsize n = (gsize) width * height;
  s->fft = ss_fft_get (width, height, batch, error);
  if (s->fft == NULL)
    return FALSE;
  s->real = ss_mem_alloc (NULL, batch * n * sizeof (float), error);
  s->spectrum = s->real ? ss_mem_alloc (NULL, batch * ss_fft_spectrum_floats (width, height)
                                              * sizeof (float), error) : NULL;
  s->doubled = s->spectrum ? ss_mem_alloc (NULL, 2 * n * sizeof (float), error) : NULL;
  if (s->doubled == NULL)
    {
      dense_scratch_free (s);
      return FALSE;
    }
  return TRUE;
}

/* Fills s->doubled with IMAGE's rows each written twice in a row, so that a
 * cyclic shift of a row by any amount is one contiguous copy. */
static void
fill_doubled_rows (DenseScratch *s, const float *image, int width, int height)
{
  for (int r = 0; r < height; r++)
    {
      const float *row = image + (gsize) r * width;
      float *dst = s->doubled + (gsize) r * 2 * width;
      memcpy (dst, row, width * sizeof (float));
      memcpy (dst + width, row, width * sizeof (float));
    }
}

/* out[i] = image[(ri - rk) mod h, (ci - ck) mod w] for every pixel i: IMAGE
 * (given as doubled rows) shifted so that its (0, 0) lands on pixel k. */
static void
copy_shifted (const DenseScratch *s, int width, int height, int rk, int ck, float *out)
{
  for (int ri = 0; ri < height; ri++)
    {
      int dr = ri - rk;
      if (dr < 0)
        dr += height;
      memcpy (out + (gsize) ri * width, s->doubled + (gsize) dr * 2 * width + (width - ck),
              width * sizeof (float));
    }
}

/* irfft2 (spectrum) / n into s->real (one image), with spectrum[k] = f(c^[k]). */
static void
inverse_of_chat_function (DenseScratch *s, const SsOperator *op, gboolean squared_modulus)
{
  gsize count = (gsize) op->height * op->spec_width;
  gsize n = (gsize) op->width * op->height;
  const float complex *c = (const float complex *) op->chat;
  float complex *spec = (float complex *) s->spectrum;
  double inv_n = 1.0 / (double) n;
  for (gsize k = 0; k < count; k++)
    {
      float complex v = c[k];
      if (squared_modulus)
        v = crealf (v) * crealf (v) + cimagf (v) * cimagf (v);
      spec[k] = v * (float) inv_n;
    }
  ss_fft_inverse (s->fft, s->spectrum, s->real);
}

static void
add_to_diagonal (float *N, gsize n, float lambda)
{
  for (gsize k = 0; k < n; k++)
    N[k * n + k] += lambda;
}

/* P = I: C^T C is circulant; column k is the autocorrelation shifted to pixel k. */
static gboolean
fill_unmasked_normal_matrix (const SsOperator *op, float *N, GError **error)
{
  int w = op->width, h = op->height;
  gsize n = (gsize) w * h;
  DenseScratch s;
  if (!dense_scratch_init (&s, w, h, 1, error))
    return FALSE;
  inverse_of_chat_function (&s, op, TRUE);
  fill_doubled_rows (&s, s.real, w, h);
  for (gsize k = 0; k < n; k++)
    copy_shifted (&s, w, h, (int) (k / w), (int) (k % w), N + k * n);
  dense_scratch_free (&s);
  return TRUE;
}

/* Masked: column k of C^T P C is C^T applied to the masked shift of c to
 * pixel k, done for DENSE_FFT_BATCH columns per batched FFT pair.
 * Measured against the alternative (build A^T = (P C)^T, n x m, by shifted
 * copies of c and form A^T A with cblas_ssyrk, O(m n^2)), 2 cores, gaussian
 * blur, ratio 0.5, both including the first touch of the matrix:
 *   16x16  0.6 ms vs 0.6 ms     32x32  7.6 ms vs 11 ms    48x48  40 ms vs 93 ms
 *   64x64  0.23 s vs 0.65 s     96x96  1.5 s  vs 11.5 s
 * The FFT route's O(n^2 log n) is never slower, so it is the only one kept. */
static gboolean
fill_masked_normal_matrix (const SsOperator *op, float *N, GError **error)
{
  int w = op->width, h = op->height;
  gsize n = (gsize) w * h;
  gsize spectrum_floats = ss_fft_spectrum_floats (w, h);
  gsize count = spectrum_floats / 2;
  DenseScratch one, batch;
  if (!dense_scratch_init (&one, w, h, 1, error))
    return FALSE;
  if (!dense_scratch_init (&batch, w, h, DENSE_FFT_BATCH, error))
    {
      dense_scratch_free (&one);
      return FALSE;
    }
  inverse_of_chat_function (&one, op, FALSE);   /* c, the first column of C */
  fill_doubled_rows (&batch, one.real, w, h);
  dense_scratch_free (&one);

  const float complex *c = (const float complex *) op->chat;
  float inv_n = 1.0f / (float) n;
  for (gsize k0 = 0; k0 < n; k0 += DENSE_FFT_BATCH)
    {
      gsize kb = MIN ((gsize) DENSE_FFT_BATCH, n - k0);
      for (gsize b = 0; b < DENSE_FFT_BATCH; b++)
        {
          float *column = batch.real + b * n;
          if (b >= kb)
            {
              memset (column, 0, n * sizeof (float));   /* padding of the last batch */
              continue;
            }
          gsize k = k0 + b;
          copy_shifted (&batch, w, h, (int) (k / w), (int) (k % w), column);
          for (gsize i = 0; i < n; i++)
            if (!op->mask[i])
              column[i] = 0.0f;
        }
      ss_fft_forward (batch.fft, batch.real, batch.spectrum);
      float complex *spec = (float complex *) batch.spectrum;
      for (gsize b = 0; b < kb; b++)
        for (gsize j = 0; j < count; j++)
          spec[b * count + j] *= conjf (c[j]) * inv_n;
      ss_fft_inverse (batch.fft, batch.spectrum, batch.real);
      memcpy (N + k0 * n, batch.real, kb * n * sizeof (float));
    }
  dense_scratch_free (&batch);
  return TRUE;
}

float *
ss_dense_normal_matrix (const SsOperator *op, double lambda, GError **error)
{
  if (op == NULL || op->chat == NULL || op->width <= 0 || op->height <= 0)
    {
      g_set_error_literal (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT,
                           "dense normal matrix: no operator");
      return NULL;
    }
  if (!(lambda >= 0) || !isfinite (lambda))
    {
      g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT,
                   "dense normal matrix: lambda %g must be finite and >= 0", lambda);
      return NULL;
    }
  gsize n = (gsize) op->width * op->height;
  gsize bytes = square_matrix_bytes (n);
  if (bytes == G_MAXSIZE || n > (gsize) G_MAXINT)
    {
      g_set_error (error, SS_ERROR, SS_ERROR_TOO_LARGE,
                   "dense normal matrix: %d×%d pixels is too many unknowns",
                   op->width, op->height);
      return NULL;
    }
  float *N = ss_mem_alloc (NULL, bytes, error);
  if (N == NULL)
    return NULL;
  gboolean ok = op->mask ? fill_masked_normal_matrix (op, N, error)
                         : fill_unmasked_normal_matrix (op, N, error);
  if (!ok)
    {
      ss_mem_free (NULL, N, bytes);
      return NULL;
    }
  add_to_diagonal (N, n, (float) lambda);
  return N;
}
