/* ss-gets.c: GETS, the inverse of a lower-triangular matrix by Gaussian
 * elimination on the augmented matrix [L | I] (seed 002, section 5.2.3).
 *
 * Because L is lower triangular, eliminating with pivot k never changes the
 * pivots or the multipliers of later steps: the multiplier of row i at pivot k
 * is the original L[i][k]. So L is only read, and the elimination acts on the
 * right-hand block alone, which ends up holding L^-1. No pivoting is needed:
 * a Cholesky factor has a non-zero diagonal.
 *
 * The seed runs one elimination step per pivot (a rank-1 update of the rows
 * below). The blocked form here takes NB pivots at a time: the diagonal block
 * is inverted by the seed's steps, its rows are brought up to date with one
 * triangular product, and all the rows below are updated at once with
 * cblas_sgemm, so almost all of the n^3/3 flops run in the BLAS matrix
 * product. Everything is column-major.
 */
#include "ss-dense.h"
#include "ss-error.h"

#include <cblas.h>
#include <math.h>
#include <string.h>

/* Pivots per block: the inner dimension of the row update's sgemm. Measured
 * on 2 shared cores, best of 31 (ms; LAPACKE_strtri 4.5 and 31):
 *   NB       32    64    96   128   192   256
 *   n 1024  4.9   5.0   5.2   5.6  12.8  10.4
 *   n 2048 33.0  35.1  32.3  34.0  38.1  44.8
 * 32 to 128 are within the noise there; every block pass reads and writes the
 * whole trailing part of R, so for the sizes the inverse is used at
 * (4096 to 16384 unknowns) the larger of them moves the least memory. */
#define GETS_BLOCK 128

static gboolean
check_gets_arguments (const float *L, int n, int lda, const float *R, int ldr, GError **error)
{
  if (L == NULL || R == NULL || n <= 0 || lda < n || ldr < n)
    {
      g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT,
                   "triangular inverse: invalid arguments (n %d, lda %d, ldr %d)", n, lda, ldr);
      return FALSE;
    }
  if (L == R)
    {
      g_set_error_literal (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT,
                           "triangular inverse: the result must not overwrite L");
      return FALSE;
    }
  /* The pivots are the diagonal; checking them all first leaves R untouched
   * on failure. */
  for (int k = 0; k < n; k++)
    {
      float pivot = L[(gsize) k * lda + k];
      if (pivot == 0.0f || !isfinite (pivot))
        {
          g_set_error (error, SS_ERROR, SS_ERROR_NUMERIC,
                       "triangular inverse: pivot %d of %d is %g, the matrix is singular",
                       k + 1, n, (double) pivot);
          return FALSE;
        }
    }
  return TRUE;
}

/* R = I (n x n inside leading dimension ldr). */
static void
set_identity (float *R, int n, int ldr)
{
  for (int j = 0; j < n; j++)
    {
      float *column = R + (gsize) j * ldr;
      memset (column, 0, (gsize) n * sizeof (float));
      column[j] = 1.0f;
    }
}

/* The seed's elimination on [L | R] for an n x n block whose R part is the
 * identity on entry: for each pivot k, row k of R is divided by L[k][k], then
 * L[i][k] times it is taken from every row i below. Only columns 0..k of R are
 * non-zero at step k, so the step is a scaling of k + 1 entries of row k and a
 * rank-1 update of R[k+1:n, 0:k+1]: done with cblas_sscal and cblas_sger,
 * which ran 4x faster than the plain loops (GCC -O2 leaves them scalar;
 * 128 x 128 block: 0.075 ms against 0.32 ms). */
static void
gets_eliminate (const float *L, int n, int lda, float *R, int ldr)
{
  for (int k = 0; k < n; k++)
    {
      const float *multipliers = L + (gsize) k * lda;   /* column k of L */
      cblas_sscal (k + 1, 1.0f / multipliers[k], R + k, ldr);
      if (k + 1 < n)
        cblas_sger (CblasColMajor, n - k - 1, k + 1, -1.0f, multipliers + k + 1, 1,
                    R + k, ldr, R + k + 1, ldr);
    }
}

gboolean
ss_gets_lower_inverse_unblocked (const float *L, int n, int lda, float *R, int ldr,
                                 GError **error)
{
  if (!check_gets_arguments (L, n, lda, R, ldr, error))
    return FALSE;
  set_identity (R, n, ldr);
  gets_eliminate (L, n, lda, R, ldr);
  return TRUE;
}

gboolean
ss_gets_lower_inverse (const float *L, int n, int lda, float *R, int ldr, GError **error)
{
  if (!check_gets_arguments (L, n, lda, R, ldr, error))
    return FALSE;
  set_identity (R, n, ldr);

  for (int k0 = 0; k0 < n; k0 += GETS_BLOCK)
    {
      int kb = MIN (GETS_BLOCK, n - k0);
      int k1 = k0 + kb;
      const float *L_kk = L + (gsize) k0 * lda + k0;
      float *R_kk = R + (gsize) k0 * ldr + k0;

      /* Pivots k0..k1-1 acting on their own rows: the diagonal block of R
       * (still the identity) becomes L_kk^-1 ... */
      gets_eliminate (L_kk, kb, lda, R_kk, ldr);
      /* ... and the columns left of it, filled by earlier blocks, are
       * multiplied by the same L_kk^-1. */
      if (k0 > 0)
        cblas_strmm (CblasColMajor, CblasLeft, CblasLower, CblasNoTrans, CblasNonUnit,
                     kb, k0, 1.0f, R_kk, ldr, R + k0, ldr);
      /* The same pivots acting on every row below: subtract the multipliers
       * L[k1:n, k0:k1] times the finished pivot rows R[k0:k1, 0:k1]. */
      if (k1 < n)
        cblas_sgemm (CblasColMajor, CblasNoTrans, CblasNoTrans, n - k1, k1, kb,
                     -1.0f, L + (gsize) k0 * lda + k1, lda, R + k0, ldr,
                     1.0f, R + k1, ldr);
    }
  return TRUE;
}
