/* test-dense.c: the dense direct solver (seed 002) against oracles.
 *
 * - GETS: L^-1 of a random Cholesky factor checked by the residual of
 *   GETS(L) L - I, against the unblocked seed form and against LAPACKE_strtri.
 * - The normal matrix against A^T A + lambda I built in double from scratch.
 * - The dense solve (both methods) against the Fourier closed form in double
 *   (every pixel observed) and against a double normal-equations solve
 *   (half the pixels observed).
 * - Memory checks, cancellation and a singular system fail cleanly.
 * All inputs are fresh random draws from g_test_rand_* (the seed is printed
 * in the TAP output; --seed replays it).
 */
#include "sharpsky.h"
#include "ss-cpu.h"
#include "ss-dense.h"

#include <cblas.h>
#include <complex.h>
#include <lapacke.h>
#include <math.h>
#include <string.h>

/* ---------------------------------------------------------------- helpers */

static double
max_abs_difference (const float *a, const float *b, gsize count)
{
  double worst = 0;
  for (gsize i = 0; i < count; i++)
    worst = MAX (worst, fabs ((double) a[i] - b[i]));
  return worst;
}

static double
max_abs (const float *a, gsize count)
{
  double worst = 0;
  for (gsize i = 0; i < count; i++)
    worst = MAX (worst, fabs ((double) a[i]));
  return worst;
}

/* ||x - ref||_2 / ||ref||_2 with x in float and ref in double. */
static double
relative_error (const float *x, const double *ref, gsize n)
{
  double diff = 0, norm = 0;
  for (gsize i = 0; i < n; i++)
    {
      diff += (x[i] - ref[i]) * (x[i] - ref[i]);
      norm += ref[i] * ref[i];
    }
  return sqrt (diff / norm);
}

/* A lower-triangular Cholesky factor (leading dimension lda) of the random SPD
 * matrix B B^T / n + I / 2 (B i.i.d. N(0,1)-like uniform): its eigenvalues lie
 * in about [0.5, 4.5], so L is well conditioned. Strict upper part zeroed. */
static float *
random_cholesky_factor (int n, int lda)
{
  float *B = g_new (float, (gsize) n * n);
  for (gsize i = 0; i < (gsize) n * n; i++)
    B[i] = (float) g_test_rand_double_range (-1.7320508, 1.7320508);   /* variance 1 */
  float *L = g_new0 (float, (gsize) lda * n);
  cblas_ssyrk (CblasColMajor, CblasLower, CblasNoTrans, n, n, 1.0f / n, B, n, 0.0f, L, lda);
  for (int k = 0; k < n; k++)
    L[(gsize) k * lda + k] += 0.5f;
  g_assert_cmpint (LAPACKE_spotrf (LAPACK_COL_MAJOR, 'L', n, L, lda), ==, 0);
  for (int j = 0; j < n; j++)
    for (int i = 0; i < j; i++)
      L[(gsize) j * lda + i] = 0.0f;
  g_free (B);
  return L;
}

/* max |(R L - I)_ij| in double, both lower triangular. */
static double
inverse_residual (const float *R, int ldr, const float *L, int lda, int n)
{
  double worst = 0;
  for (int j = 0; j < n; j++)
    for (int i = 0; i < n; i++)
      {
        double sum = 0;
        for (int k = j; k <= i; k++)
          sum += (double) R[(gsize) k * ldr + i] * L[(gsize) j * lda + k];
        worst = MAX (worst, fabs (sum - (i == j ? 1.0 : 0.0)));
      }
  return worst;
}

/* 1-norm of a lower-triangular matrix (max column sum). */
static double
lower_norm1 (const float *M, int ld, int n)
{
  double worst = 0;
  for (int j = 0; j < n; j++)
    {
      double sum = 0;
      for (int i = j; i < n; i++)
        sum += fabs (M[(gsize) j * ld + i]);
      worst = MAX (worst, sum);
    }
  return worst;
}

/* n x n block of a column-major matrix with leading dimension ld, packed. */
static float *
pack_square (const float *M, int ld, int n)
{
  float *out = g_new (float, (gsize) n * n);
  for (int j = 0; j < n; j++)
    memcpy (out + (gsize) j * n, M + (gsize) j * ld, n * sizeof (float));
  return out;
}

/* In-place 2-D DFT of an h x w complex image (row-major), unnormalised,
 * sign -1 forward, +1 backward: the plain O(n (h + w)) separable sum. */
static void
plain_dft2 (double complex *a, int h, int w, int sign)
{
  int longest = MAX (h, w);
  double complex *line = g_new (double complex, longest);
  double complex *out = g_new (double complex, longest);
  for (int pass = 0; pass < 2; pass++)
    {
      int count = pass == 0 ? h : w;        /* lines */
      int len = pass == 0 ? w : h;          /* points per line */
      for (int l = 0; l < count; l++)
        {
          for (int t = 0; t < len; t++)
            line[t] = pass == 0 ? a[(gsize) l * w + t] : a[(gsize) t * w + l];
          for (int f = 0; f < len; f++)
            {
              double complex sum = 0;
              for (int t = 0; t < len; t++)
                sum += line[t] * cexp (sign * 2.0 * G_PI * I * (double) ((gint64) f * t % len) / len);
              out[f] = sum;
            }
          for (int t = 0; t < len; t++)
            {
              if (pass == 0)
                a[(gsize) l * w + t] = out[t];
              else
                a[(gsize) t * w + l] = out[t];
            }
        }
    }
  g_free (line);
  g_free (out);
}

/* The full h x w spectrum c^ in double from the operator's half-spectrum,
 * completed by Hermitian symmetry. */
static double complex *
full_spectrum (const SsOperator *op)
{
  int h = op->height, w = op->width, sw = op->spec_width;
  double complex *c = g_new (double complex, (gsize) h * w);
  for (int r = 0; r < h; r++)
    for (int k = 0; k < w; k++)
      {
        if (k < sw)
          c[(gsize) r * w + k] = op->chat[2 * ((gsize) r * sw + k)]
                                 + I * (double) op->chat[2 * ((gsize) r * sw + k) + 1];
        else
          {
            gsize mirror = (gsize) ((h - r) % h) * sw + (w - k);
            c[(gsize) r * w + k] = op->chat[2 * mirror] - I * (double) op->chat[2 * mirror + 1];
          }
      }
  return c;
}

/* c, the first column of C, in double: IDFT(c^) / n. */
static double *
first_column (const SsOperator *op)
{
  gsize n = (gsize) op->width * op->height;
  double complex *c = full_spectrum (op);
  plain_dft2 (c, op->height, op->width, +1);
  double *out = g_new (double, n);
  for (gsize i = 0; i < n; i++)
    out[i] = creal (c[i]) / (double) n;
  g_free (c);
  return out;
}

/* A = P C as a dense m x n... kept n x n with zero rows off the mask, double. */
static double *
dense_operator (const SsOperator *op)
{
  int h = op->height, w = op->width;
  gsize n = (gsize) w * h;
  double *c = first_column (op);
  double *A = g_new0 (double, n * n);   /* row-major: A[i * n + j] */
  for (gsize i = 0; i < n; i++)
    {
      if (op->mask && !op->mask[i])
        continue;
      int ri = (int) (i / w), ci = (int) (i % w);
      for (gsize j = 0; j < n; j++)
        {
          int rj = (int) (j / w), cj = (int) (j % w);
          A[i * n + j] = c[(gsize) (((ri - rj) % h + h) % h) * w + ((ci - cj) % w + w) % w];
        }
    }
  g_free (c);
  return A;
}

/* A^T A + lambda I in double (symmetric, n x n). */
static double *
normal_matrix_oracle (const double *A, gsize n, double lambda)
{
  double *N = g_new0 (double, n * n);
  for (gsize i = 0; i < n; i++)
    for (gsize j = 0; j < n; j++)
      {
        double a = A[i * n + j];
        if (a == 0)
          continue;
        for (gsize k = 0; k < n; k++)
          N[j * n + k] += a * A[i * n + k];
      }
  for (gsize k = 0; k < n; k++)
    N[k * n + k] += lambda;
  return N;
}

/* x = (A^T A + lambda I)^-1 A^T y in double: naive Cholesky and substitution. */
static double *
normal_equations_oracle (const SsOperator *op, const float *y, double lambda)
{
  gsize n = (gsize) op->width * op->height;
  double *A = dense_operator (op);
  double *N = normal_matrix_oracle (A, n, lambda);
  double *x = g_new0 (double, n);
  for (gsize i = 0; i < n; i++)
    for (gsize j = 0; j < n; j++)
      x[j] += A[i * n + j] * y[i];
  /* N = G G^T, G lower, stored over N's lower part (row-major). */
  for (gsize j = 0; j < n; j++)
    {
      double d = N[j * n + j];
      for (gsize k = 0; k < j; k++)
        d -= N[j * n + k] * N[j * n + k];
      g_assert_cmpfloat (d, >, 0);
      d = sqrt (d);
      N[j * n + j] = d;
      for (gsize i = j + 1; i < n; i++)
        {
          double s = N[i * n + j];
          for (gsize k = 0; k < j; k++)
            s -= N[i * n + k] * N[j * n + k];
          N[i * n + j] = s / d;
        }
    }
  for (gsize i = 0; i < n; i++)          /* G z = b */
    {
      double s = x[i];
      for (gsize k = 0; k < i; k++)
        s -= N[i * n + k] * x[k];
      x[i] = s / N[i * n + i];
    }
  for (gsize i = n; i-- > 0;)            /* G^T x = z */
    {
      double s = x[i];
      for (gsize k = i + 1; k < n; k++)
        s -= N[k * n + i] * x[k];
      x[i] = s / N[i * n + i];
    }
  g_free (A);
  g_free (N);
  return x;
}

/* x^ = conj(c^) y^ / (|c^|^2 + lambda), in double with a plain DFT. */
static double *
fourier_oracle (const SsOperator *op, const float *y, double lambda)
{
  int h = op->height, w = op->width;
  gsize n = (gsize) w * h;
  double complex *c = full_spectrum (op);
  double complex *s = g_new (double complex, n);
  for (gsize i = 0; i < n; i++)
    s[i] = y[i];
  plain_dft2 (s, h, w, -1);
  for (gsize k = 0; k < n; k++)
    s[k] = conj (c[k]) * s[k] / (creal (c[k]) * creal (c[k]) + cimag (c[k]) * cimag (c[k]) + lambda);
  plain_dft2 (s, h, w, +1);
  double *x = g_new (double, n);
  for (gsize i = 0; i < n; i++)
    x[i] = creal (s[i]) / (double) n;
  g_free (c);
  g_free (s);
  return x;
}

static SsOperator *
blur_operator (const char *psf_text, int width, int height, const guint8 *mask)
{
  g_autoptr (GError) error = NULL;
  SsPsfSpec spec = { 0 };
  g_assert_true (ss_psf_spec_parse (psf_text, &spec, &error));
  g_assert_no_error (error);
  g_autoptr (SsOperator) blur = ss_operator_new_blur (&spec, NULL, width, height, &error);
  g_assert_no_error (error);
  ss_psf_spec_clear (&spec);
  SsOperator *op = ss_operator_new_from_parts (width, height, blur->chat, mask, &error);
  g_assert_no_error (error);
  return op;
}

/* Exactly m of n pixels observed, uniformly at random. */
static guint8 *
random_mask (gsize n, gsize m)
{
  guint8 *mask = g_new0 (guint8, n);
  guint32 *order = g_new (guint32, n);
  for (gsize i = 0; i < n; i++)
    order[i] = (guint32) i;
  for (gsize i = 0; i < m; i++)
    {
      gsize j = i + (gsize) g_test_rand_int_range (0, (gint32) (n - i));
      guint32 t = order[i];
      order[i] = order[j];
      order[j] = t;
      mask[order[i]] = 1;
    }
  g_free (order);
  return mask;
}

/* P(C truth) + noise, 0 off the mask, for a random truth in [0, 1]. */
static float *
random_observation (const SsOperator *op, float **truth_out)
{
  gsize n = (gsize) op->width * op->height;
  float *truth = g_new (float, n);
  for (gsize i = 0; i < n; i++)
    truth[i] = (float) g_test_rand_double ();
  float *y = g_new (float, n);
  g_autoptr (GError) error = NULL;
  g_assert_true (ss_operator_apply (op, truth, y, &error));
  g_assert_no_error (error);
  for (gsize i = 0; i < n; i++)
    if (op->mask == NULL || op->mask[i])
      y[i] += (float) g_test_rand_double_range (-0.01, 0.01);
  *truth_out = truth;
  return y;
}

/* ------------------------------------------------------------------- GETS */

static void
test_gets_inverse (gconstpointer data)
{
  int n = GPOINTER_TO_INT (data);
  int lda = n + g_test_rand_int_range (0, 8);   /* exercise leading dimensions */
  int ldr = n + g_test_rand_int_range (0, 8);
  g_autoptr (GError) error = NULL;
  float *L = random_cholesky_factor (n, lda);
  float *R = g_new (float, (gsize) ldr * n);
  float *R_unblocked = g_new (float, (gsize) n * n);
  for (gsize i = 0; i < (gsize) ldr * n; i++)
    R[i] = NAN;                                  /* GETS must write every entry */

  g_assert_true (ss_gets_lower_inverse (L, n, lda, R, ldr, &error));
  g_assert_no_error (error);
  g_assert_true (ss_gets_lower_inverse_unblocked (L, n, lda, R_unblocked, n, &error));
  g_assert_no_error (error);

  /* The strict upper triangle is zero. */
  for (int j = 0; j < n; j++)
    for (int i = 0; i < j; i++)
      g_assert_cmpfloat (R[(gsize) j * ldr + i], ==, 0.0f);

  /* ||R L - I||_max <= 1e-6 * kappa_1(L) (float eps ~ 6e-8 times growth
   * ~ sqrt n, scaled by the condition number; kappa here is about 10). */
  double kappa = lower_norm1 (L, lda, n) * lower_norm1 (R, ldr, n);
  double residual = inverse_residual (R, ldr, L, lda, n);
  g_test_message ("n %d: kappa_1(L) %.3g, ||GETS(L) L - I||_max %.3g", n, kappa, residual);
  g_assert_cmpfloat (residual, <=, 1e-6 * kappa);
  g_assert_cmpfloat (residual, <=, 1e-4);

  /* Blocked and unblocked elimination agree to 1e-5 of max |L^-1|. */
  float *R_packed = pack_square (R, ldr, n);
  double scale = max_abs (R_unblocked, (gsize) n * n);
  double blocked_vs_unblocked = max_abs_difference (R_packed, R_unblocked, (gsize) n * n) / scale;
  g_test_message ("blocked vs unblocked: %.3g", blocked_vs_unblocked);
  g_assert_cmpfloat (blocked_vs_unblocked, <=, 1e-5);

  /* And LAPACK's triangular inverse, to 1e-4 of max |L^-1|. */
  float *R_lapack = pack_square (L, lda, n);
  g_assert_cmpint (LAPACKE_strtri (LAPACK_COL_MAJOR, 'L', 'N', n, R_lapack, n), ==, 0);
  for (int j = 0; j < n; j++)
    for (int i = 0; i < j; i++)
      R_lapack[(gsize) j * n + i] = 0.0f;
  double gets_vs_lapack = max_abs_difference (R_packed, R_lapack, (gsize) n * n) / scale;
  g_test_message ("GETS vs LAPACKE_strtri: %.3g", gets_vs_lapack);
  g_assert_cmpfloat (gets_vs_lapack, <=, 1e-4);

  g_free (L);
  g_free (R);
  g_free (R_unblocked);
  g_free (R_packed);
  g_free (R_lapack);
}

static void
test_gets_singular (void)
{
  int n = g_test_rand_int_range (2, 40);
  float *L = random_cholesky_factor (n, n);
  int zero = g_test_rand_int_range (0, n);
  L[(gsize) zero * n + zero] = 0.0f;
  float *R = g_new (float, (gsize) n * n);
  for (int blocked = 0; blocked < 2; blocked++)
    {
      g_autoptr (GError) error = NULL;
      gboolean ok = blocked ? ss_gets_lower_inverse (L, n, n, R, n, &error)
                            : ss_gets_lower_inverse_unblocked (L, n, n, R, n, &error);
      g_assert_false (ok);
      g_assert_error (error, SS_ERROR, SS_ERROR_NUMERIC);
    }
  g_autoptr (GError) error = NULL;
  g_assert_false (ss_gets_lower_inverse (L, n, n - 1, R, n, &error));   /* lda < n */
  g_assert_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  g_assert_false (ss_gets_lower_inverse (L, 0, n, R, n, &error));
  g_assert_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  g_assert_false (ss_gets_lower_inverse (L, n, n, L, n, &error));       /* in place */
  g_assert_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT);
  g_free (L);
  g_free (R);
}

/* ---------------------------------------------------------- normal matrix */

/* ss_dense_normal_matrix equals A^T A + lambda I built in double, for a random
 * circulant (random first column) on a random small size, masked or not:
 * max difference <= 1e-5 of max |N| (float FFT rounding). */
static void
test_normal_matrix (gconstpointer data)
{
  gboolean masked = GPOINTER_TO_INT (data);
  int w = g_test_rand_int_range (3, 14), h = g_test_rand_int_range (1, 12);
  gsize n = (gsize) w * h;
  double lambda = g_test_rand_double_range (0, 1);
  g_autoptr (GError) error = NULL;

  /* A random real first column, transformed by the plain DFT. */
  double complex *cfull = g_new (double complex, n);
  for (gsize i = 0; i < n; i++)
    cfull[i] = g_test_rand_double_range (-1, 1);
  plain_dft2 (cfull, h, w, -1);
  int sw = w / 2 + 1;
  float *chat = g_new (float, 2 * (gsize) h * sw);
  for (int r = 0; r < h; r++)
    for (int k = 0; k < sw; k++)
      {
        chat[2 * ((gsize) r * sw + k)] = (float) creal (cfull[(gsize) r * w + k]);
        chat[2 * ((gsize) r * sw + k) + 1] = (float) cimag (cfull[(gsize) r * w + k]);
      }
  g_autofree guint8 *mask = masked ? random_mask (n, MAX (1, n / 2)) : NULL;
  g_autoptr (SsOperator) op = ss_operator_new_from_parts (w, h, chat, mask, &error);
  g_assert_no_error (error);

  float *N = ss_dense_normal_matrix (op, lambda, &error);
  g_assert_no_error (error);
  g_assert_nonnull (N);
  double *A = dense_operator (op);
  double *oracle = normal_matrix_oracle (A, n, lambda);
  double worst = 0, scale = 0;
  for (gsize i = 0; i < n * n; i++)   /* symmetric: row- or column-major alike */
    {
      worst = MAX (worst, fabs (N[i] - oracle[i]));
      scale = MAX (scale, fabs (oracle[i]));
    }
  g_test_message ("%d×%d %s: max |N - oracle| / max |oracle| = %.3g", w, h,
                  masked ? "masked" : "unmasked", worst / scale);
  g_assert_cmpfloat (worst / scale, <=, 1e-5);

  ss_mem_free (NULL, N, n * n * sizeof (float));
  g_free (A);
  g_free (oracle);
  g_free (cfull);
  g_free (chat);
}

/* ------------------------------------------------------------ dense solve */

typedef struct {
  int calls;
  int finals;
  double residual;
} ReportLog;

static void
log_report (const SsReport *report, gpointer user_data)
{
  ReportLog *log = user_data;
  log->calls++;
  log->finals += report->final ? 1 : 0;
  log->residual = report->residual;
}

/* ||P C x - y||^2 / m in double. */
static double
data_residual (const SsOperator *op, const float *x, const float *y)
{
  gsize n = (gsize) op->width * op->height;
  g_autofree float *cx = g_new (float, n);
  g_assert_true (ss_operator_apply (op, x, cx, NULL));
  double sum = 0;
  for (gsize i = 0; i < n; i++)
    if (op->mask == NULL || op->mask[i])
      sum += ((double) cx[i] - y[i]) * ((double) cx[i] - y[i]);
  return sum / (double) op->m;
}

/* Runs the dense solver on OP and checks it against ORACLE (relative 1e-4),
 * and checks the result's bookkeeping. */
static void
check_dense_solve (const SsOperator *op, SsDirectMethod method, double lambda,
                   const float *y, const float *truth, const double *oracle)
{
  gsize n = (gsize) op->width * op->height;
  SsProblem problem = { .op = op, .y = y, .truth = truth };
  SsSolveParams params;
  ss_solve_params_init (&params);
  params.kind = SS_SOLVER_DIRECT;
  params.direct_method = method;
  params.alpha = lambda;
  params.preview_width = 8;
  params.preview_height = 5;
  SsSolveResult result = { 0 };
  ReportLog log = { 0 };
  g_autoptr (GError) error = NULL;

  g_assert_true (ss_cpu_direct_dense (&problem, &params, log_report, &log, NULL, &result, &error));
  g_assert_no_error (error);
  g_assert_nonnull (result.x);

  double rel = relative_error (result.x, oracle, n);
  g_test_message ("%d×%d %s lambda %.3g: ||x - oracle|| / ||oracle|| = %.3g", op->width,
                  op->height, method == SS_DIRECT_INVERSE ? "inverse" : "solve", lambda, rel);
  g_assert_cmpfloat (rel, <=, 1e-4);

  /* One final report, metrics as computed here (relative 1e-6: same floats,
   * sums in double), MSE against the truth. */
  g_assert_cmpint (log.calls, ==, 1);
  g_assert_cmpint (log.finals, ==, 1);
  double residual = data_residual (op, result.x, y);
  g_assert_cmpfloat (fabs (result.residual - residual), <=, 1e-6 * residual + 1e-12);
  g_assert_cmpfloat (log.residual, ==, result.residual);
  g_assert_cmpfloat (fabs (result.mse - ss_mse (result.x, truth, n)), <=, 1e-12);
  g_assert_cmpstr (result.backend, ==, "cpu");
  g_assert_cmpint (result.width, ==, op->width);
  g_assert_cmpint (result.height, ==, op->height);

  /* Phases are timed and add up to no more than the whole; the apply phase
   * exists only for the explicit inverse. */
  double phases = 0;
  for (int p = 0; p < 4; p++)
    {
      g_assert_cmpfloat (result.phase_seconds[p], >=, 0);
      phases += result.phase_seconds[p];
    }
  g_assert_cmpfloat (phases, <=, result.seconds + 1e-6);
  if (method == SS_DIRECT_SOLVE)
    g_assert_cmpfloat (result.phase_seconds[3], ==, 0);

  /* Peak memory counts the matrices: one n x n for SOLVE, two for INVERSE. */
  gsize matrices = (method == SS_DIRECT_INVERSE ? 2 : 1) * n * n * sizeof (float);
  g_assert_cmpuint (result.peak_memory_bytes, >=, matrices);
  g_assert_cmpuint (result.peak_memory_bytes, <=, ss_dense_bytes_needed (n, op->m, method));
  ss_solve_result_clear (&result);
}

static SsDirectMethod
method_of (gconstpointer data)
{
  return GPOINTER_TO_INT (data) ? SS_DIRECT_INVERSE : SS_DIRECT_SOLVE;
}

/* Every pixel observed: the Fourier closed form in double is exact. */
static void
test_dense_vs_fourier (gconstpointer data)
{
  const char *psf = g_test_rand_bit () ? "box:3" : "gaussian:2.5";
  double lambda = g_test_rand_double_range (0.02, 0.1);
  g_autoptr (SsOperator) op = blur_operator (psf, 32, 32, NULL);
  g_test_message ("psf %s", psf);
  float *truth;
  g_autofree float *y = random_observation (op, &truth);
  g_autofree double *oracle = fourier_oracle (op, y, lambda);
  check_dense_solve (op, method_of (data), lambda, y, truth, oracle);
  g_free (truth);
}

/* Half the pixels observed: a double normal-equations solve built here. */
static void
test_dense_vs_normal_equations (gconstpointer data)
{
  int w = 16, h = 16;
  gsize n = (gsize) w * h;
  const char *psf = g_test_rand_bit () ? "box:3" : "gaussian:2";
  double lambda = g_test_rand_double_range (0.02, 0.1);
  g_autofree guint8 *mask = random_mask (n, n / 2);
  g_autoptr (SsOperator) op = blur_operator (psf, w, h, mask);
  g_assert_cmpuint (op->m, ==, n / 2);
  g_test_message ("psf %s", psf);
  float *truth;
  g_autofree float *y = random_observation (op, &truth);
  g_autofree double *oracle = normal_equations_oracle (op, y, lambda);
  check_dense_solve (op, method_of (data), lambda, y, truth, oracle);
  g_free (truth);
}

/* --------------------------------------------------------- failure paths */

static SsOperator *
identity_operator (int width, int height)
{
  gsize floats = 2 * (gsize) height * (width / 2 + 1);
  g_autofree float *chat = g_new0 (float, floats);
  for (gsize k = 0; k < floats; k += 2)
    chat[k] = 1.0f;
  g_autoptr (GError) error = NULL;
  SsOperator *op = ss_operator_new_from_parts (width, height, chat, NULL, &error);
  g_assert_no_error (error);
  return op;
}

static void
run_expecting_error (const SsOperator *op, const SsSolveParams *params,
                     GCancellable *cancellable, GQuark domain, int code, char **message)
{
  gsize n = (gsize) op->width * op->height;
  g_autofree float *y = g_new0 (float, n);
  SsProblem problem = { .op = op, .y = y };
  SsSolveResult result = { 0 };
  ReportLog log = { 0 };
  g_autoptr (GError) error = NULL;
  g_assert_false (ss_cpu_direct_dense (&problem, params, log_report, &log, cancellable,
                                       &result, &error));
  g_assert_error (error, domain, code);
  g_assert_null (result.x);
  g_assert_cmpint (log.calls, ==, 0);
  if (code == SS_ERROR_TOO_LARGE)
    g_assert_cmpuint (result.peak_memory_bytes, ==, 0);   /* nothing was allocated */
  if (message)
    *message = g_strdup (error->message);
  ss_solve_result_clear (&result);
}

/* The largest n that fits, by ss_dense_max_unknowns, is exactly the edge of
 * ss_dense_bytes_needed. */
static void
check_max_unknowns (gsize limit, SsDirectMethod method)
{
  gsize max_n = ss_dense_max_unknowns (limit, 1.0, method);
  g_assert_cmpuint (ss_dense_bytes_needed (max_n, max_n, method), <=, limit);
  g_assert_cmpuint (ss_dense_bytes_needed (max_n + 1, max_n + 1, method), >, limit);
  /* and it is at least the matrices' own size */
  gsize matrices = (method == SS_DIRECT_INVERSE ? 2 : 1) * max_n * max_n * sizeof (float);
  g_assert_cmpuint (ss_dense_bytes_needed (max_n, max_n, method), >=, matrices);
}

static void
test_too_large (gconstpointer data)
{
  SsDirectMethod method = method_of (data);
  g_autoptr (SsOperator) op = identity_operator (1000, 872);
  SsSolveParams params;
  ss_solve_params_init (&params);
  params.kind = SS_SOLVER_DIRECT;
  params.direct_method = method;
  params.alpha = 0.1;

  /* What this machine has: 2.8 TiB fits nowhere. */
  g_autofree char *message = NULL;
  run_expecting_error (op, &params, NULL, SS_ERROR, SS_ERROR_TOO_LARGE, &message);
  g_test_message ("%s", message);
  g_assert_nonnull (strstr (message, "1000×872 pixels (872000 unknowns)"));
  g_assert_nonnull (strstr (message, "available"));
  g_assert_nonnull (strstr (message, "Direct FFT"));

  /* A stated limit (64 MiB, then a random one) gives a deterministic answer:
   * the largest square side is floor(sqrt(ss_dense_max_unknowns)). */
  gsize limits[2] = { 64u << 20, (gsize) g_test_rand_int_range (1 << 20, 1 << 30) };
  for (int l = 0; l < 2; l++)
    {
      params.memory_limit = limits[l];
      check_max_unknowns (limits[l], method);
      gsize side = (gsize) floor (sqrt ((double) ss_dense_max_unknowns (limits[l], 1.0, method)));
      g_autofree char *limited = NULL;
      run_expecting_error (op, &params, NULL, SS_ERROR, SS_ERROR_TOO_LARGE, &limited);
      g_test_message ("%s", limited);
      g_autofree char *expected = g_strdup_printf ("at most %" G_GSIZE_FORMAT "×%" G_GSIZE_FORMAT
                                                   " pixels (%" G_GSIZE_FORMAT " unknowns)",
                                                   side, side, side * side);
      g_assert_nonnull (strstr (limited, expected));
      g_autofree char *limit_text = ss_format_bytes (limits[l]);
      g_assert_nonnull (strstr (limited, limit_text));
      /* that side does fit, one more does not */
      g_autoptr (GError) error = NULL;
      g_assert_true (ss_dense_check_fits ((int) side, (int) side, side * side, method,
                                          limits[l], &error));
      g_assert_no_error (error);
      g_assert_false (ss_dense_check_fits ((int) side + 1, (int) side + 1,
                                           (side + 1) * (side + 1), method, limits[l], &error));
      g_assert_error (error, SS_ERROR, SS_ERROR_TOO_LARGE);
    }
  g_assert_cmpuint (ss_dense_max_unknowns (64u << 20, 1.0, SS_DIRECT_SOLVE), <=, 4096);
  g_assert_cmpuint (ss_dense_max_unknowns (64u << 20, 1.0, SS_DIRECT_SOLVE), >=, 4000);
}

static void
test_cancelled (void)
{
  g_autoptr (SsOperator) op = identity_operator (8, 8);
  SsSolveParams params;
  ss_solve_params_init (&params);
  params.kind = SS_SOLVER_DIRECT;
  params.alpha = 0.1;
  g_autoptr (GCancellable) cancellable = g_cancellable_new ();
  g_cancellable_cancel (cancellable);
  run_expecting_error (op, &params, cancellable, G_IO_ERROR, G_IO_ERROR_CANCELLED, NULL);
}

/* A zero operator with lambda 0 gives a zero normal matrix: Cholesky fails at
 * the first minor, with an error rather than a crash; so does a bad lambda. */
static void
test_singular_system (void)
{
  int w = g_test_rand_int_range (2, 9), h = g_test_rand_int_range (2, 9);
  g_autofree float *chat = g_new0 (float, 2 * (gsize) h * (w / 2 + 1));
  g_autoptr (GError) error = NULL;
  g_autoptr (SsOperator) op = ss_operator_new_from_parts (w, h, chat, NULL, &error);
  g_assert_no_error (error);
  SsSolveParams params;
  ss_solve_params_init (&params);
  params.kind = SS_SOLVER_DIRECT;
  params.alpha = 0;
  g_autofree char *message = NULL;
  run_expecting_error (op, &params, NULL, SS_ERROR, SS_ERROR_NUMERIC, &message);
  g_assert_nonnull (strstr (message, "positive definite"));
  params.alpha = -1;
  run_expecting_error (op, &params, NULL, SS_ERROR, SS_ERROR_INVALID_ARGUMENT, NULL);
  params.alpha = NAN;
  run_expecting_error (op, &params, NULL, SS_ERROR, SS_ERROR_INVALID_ARGUMENT, NULL);
}

int
main (int argc, char **argv)
{
  /* Quick FFTW plans: these tests time nothing. */
  g_setenv ("SHARPSKY_FFTW", "estimate", TRUE);
  g_test_init (&argc, &argv, NULL);

  static const int gets_sizes[] = { 64, 257, 600 };
  for (guint i = 0; i < G_N_ELEMENTS (gets_sizes); i++)
    {
      g_autofree char *path = g_strdup_printf ("/dense/gets/inverse/%d", gets_sizes[i]);
      g_test_add_data_func (path, GINT_TO_POINTER (gets_sizes[i]), test_gets_inverse);
    }
  g_test_add_func ("/dense/gets/singular", test_gets_singular);
  g_test_add_data_func ("/dense/normal-matrix/unmasked", GINT_TO_POINTER (0), test_normal_matrix);
  g_test_add_data_func ("/dense/normal-matrix/masked", GINT_TO_POINTER (1), test_normal_matrix);
  g_test_add_data_func ("/dense/solve/fourier", GINT_TO_POINTER (0), test_dense_vs_fourier);
  g_test_add_data_func ("/dense/inverse/fourier", GINT_TO_POINTER (1), test_dense_vs_fourier);
  g_test_add_data_func ("/dense/solve/masked", GINT_TO_POINTER (0), test_dense_vs_normal_equations);
  g_test_add_data_func ("/dense/inverse/masked", GINT_TO_POINTER (1), test_dense_vs_normal_equations);
  g_test_add_data_func ("/dense/too-large/solve", GINT_TO_POINTER (0), test_too_large);
  g_test_add_data_func ("/dense/too-large/inverse", GINT_TO_POINTER (1), test_too_large);
  g_test_add_func ("/dense/cancelled", test_cancelled);
  g_test_add_func ("/dense/singular-system", test_singular_system);
  return g_test_run ();
}
