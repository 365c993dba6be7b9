/* ss-cuda-direct.cu: the direct Tikhonov solvers on the GPU.
 *
 * FFT direct: x^ = conj(c^) y^ / (|c^|^2 + lambda), exact when every pixel is
 * observed (as ss-cpu-direct-fft.c; with a mask it refuses, as the CPU does).
 *
 * Dense direct (seed 002): x = (A^T A + lambda I)^-1 A^T y with A = P C.
 *   normal matrix: without a mask C^T C is circulant, its first column the
 *     autocorrelation a = irfft(|c^|^2)/n, so N[i][j] = a[i - j (2-D, wrapped)]
 *     is written directly (no O(n^3) product); with a mask the observed rows
 *     of C are built in chunks and accumulated with cuBLAS SSYRK;
 *   Cholesky: cuSOLVER potrf (64-bit API);
 *   solve: cuSOLVER potrs; or inverse: GETS (ss-cuda-gets.cu) R = L^-1, then
 *     x = R^T (R A^T y), two triangular matrix-vector products.
 * The memory need is checked before anything is allocated: a clear
 * SS_ERROR_TOO_LARGE says what would fit on this card.
 */
#include "ss-cuda-internal.h"
#include "ss-cuda-device.cuh"

#include <math.h>
#include <string.h>

/* ---- FFT direct ------------------------------------------------------------ */

typedef struct {
  SsCudaSolver base;
  const SsCudaProblem *p;
  float lambda;
  cufftHandle r2c, c2r;
  float *x, *scratch;
  float2 *spec;
} DirectFft;

__global__ void
tikhonov_spectrum_kernel (float2 *__restrict__ s, const float2 *__restrict__ c, size_t count,
                          float lambda, float inv_n)
{
  for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < count;
       i += (size_t) gridDim.x * blockDim.x)
    {
      float2 cv = c[i], yv = s[i];
      float den = cv.x * cv.x + cv.y * cv.y + lambda;
      /* A zero transfer with lambda = 0 carries nothing: that frequency is 0. */
      float scale = den > 0 ? inv_n / den : 0.0f;
      s[i] = make_float2 ((cv.x * yv.x + cv.y * yv.y) * scale,
                          (cv.x * yv.y - cv.y * yv.x) * scale);
    }
}

static gboolean
direct_fft_iterate (gpointer solver, unsigned flags, GError **error)
{
  DirectFft *s = (DirectFft *) solver;
  SsCudaContext *ctx = s->base.ctx;
  const SsCudaProblem *p = s->p;
  if (!CUFFT_OK (cufftExecR2C (s->r2c, p->y, (cufftComplex *) s->spec)))
    return FALSE;
  tikhonov_spectrum_kernel<<<ss_cuda_blocks (ctx, p->spec), SS_CUDA_THREADS, 0, ctx->stream>>> (
    s->spec, p->chat, p->spec, s->lambda, 1.0f / (float) p->n);
  return LAUNCH_OK ("tikhonov_spectrum_kernel")
         && CUFFT_OK (cufftExecC2R (s->c2r, (cufftComplex *) s->spec, s->x));
}

static const float *
direct_fft_estimate (gpointer solver)
{
  return ((DirectFft *) solver)->x;
}

static void
direct_fft_destroy (SsCudaSolver *solver)
{
  DirectFft *s = (DirectFft *) solver;
  ss_cuda_free (solver->ctx, s->x, s->p->n * sizeof (float));
  ss_cuda_free (solver->ctx, s->scratch, s->p->n * sizeof (float));
  ss_cuda_free (solver->ctx, s->spec, s->p->spec * sizeof (float2));
  g_free (s);
}

SsCudaSolver *
ss_cuda_direct_fft_new (SsCudaContext *ctx, const SsCudaProblem *p, const SsSolveParams *params,
                        SsCudaIterator *it, SsCudaReporter *reporter, GError **error)
{
  if (p->mask)
    {
      g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT,
                   "Direct FFT needs every pixel observed, but %" G_GSIZE_FORMAT
                   " of %" G_GSIZE_FORMAT " are not (sampling or blank pixels): "
                   "use CPADMM, FISTA or dense Direct", (gsize) (p->n - p->m), (gsize) p->n);
      return NULL;
    }
  if (!(params->alpha > 0) && !(p->lipschitz > 0))
    {
      g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT, "the operator is zero");
      return NULL;
    }
  g_autofree char *what = g_strdup_printf ("a %d×%d FFT direct solve", p->width, p->height);
  DirectFft *s = g_new0 (DirectFft, 1);
  s->base.ctx = ctx;
  s->base.destroy = direct_fft_destroy;
  s->base.bytes = 2 * p->n * sizeof (float) + p->spec * sizeof (float2);
  s->p = p;
  s->lambda = (float) params->alpha;
  if (!ss_cuda_plan (ctx, p->width, p->height, 1, CUFFT_R2C, &s->r2c, error)
      || !ss_cuda_plan (ctx, p->width, p->height, 1, CUFFT_C2R, &s->c2r, error)
      || !ss_cuda_alloc (ctx, (void **) &s->x, p->n * sizeof (float), what, error)
      || !ss_cuda_alloc (ctx, (void **) &s->scratch, p->n * sizeof (float), what, error)
      || !ss_cuda_alloc (ctx, (void **) &s->spec, p->spec * sizeof (float2), what, error))
    {
      direct_fft_destroy (&s->base);
      return NULL;
    }
  ss_cuda_reporter_borrow (reporter, s->spec, s->scratch, FALSE);
  ss_cuda_iterator_bind (it, s, direct_fft_iterate, direct_fft_estimate, NULL, FALSE);
  return &s->base;
}

/* ---- dense direct: memory ---------------------------------------------------- */

/* Chunk of observed rows of A built at once for SSYRK. */
#define MAX_CHUNK_BYTES ((size_t) 1 << 30)
#define SLACK_BYTES ((size_t) 256 << 20)

static size_t
chunk_rows (size_t n, size_t m)
{
  size_t rows = MAX_CHUNK_BYTES / (n * sizeof (float));
  rows = MAX (rows, (size_t) 64);
  return MIN (rows, m);
}

/* Device bytes of the dense path: the n x n matrix (twice for the inverse),
 * a chunk of A's rows when masked, vectors, and cuSOLVER's workspace (a few
 * panels, included in the slack). */
static double
dense_need (size_t n, size_t m, gboolean masked, SsDirectMethod method)
{
  double matrix = (double) n * (double) n * sizeof (float);
  double matrices = method == SS_DIRECT_INVERSE ? 2.0 : 1.0;
  double chunk = masked ? (double) chunk_rows (n, m) * n * sizeof (float) : 0.0;
  return matrices * matrix + chunk + 6.0 * n * sizeof (float) + (double) SLACK_BYTES;
}

static gboolean
dense_check_fits (SsCudaContext *ctx, const SsCudaProblem *p, SsDirectMethod method,
                  size_t memory_limit, GError **error)
{
  gsize free_now = 0, total = 0;
  ss_cuda_context_get_memory (ctx, &free_now, &total);
  double available = (double) free_now;
  if (memory_limit > 0 && (double) memory_limit < available)
    available = (double) memory_limit;
  double need = dense_need (p->n, p->m, p->mask != NULL, method);
  if (need <= available)
    return TRUE;

  double matrices = method == SS_DIRECT_INVERSE ? 2.0 : 1.0;
  double room = available - (double) SLACK_BYTES;
  double fraction = (double) p->m / (double) p->n;
  /* n^2 floats per matrix, plus the chunk (about 1 GiB when masked). */
  if (p->mask)
    room -= (double) MAX_CHUNK_BYTES * MIN (1.0, fraction * 4);
  size_t unknowns = room > 0 ? (size_t) floor (sqrt (room / (matrices * sizeof (float)))) : 0;
  int side = (int) floor (sqrt ((double) unknowns));
  g_autofree char *need_text = ss_cuda_format_bytes (need);
  g_autofree char *have_text = ss_cuda_format_bytes (available);
  g_set_error (error, SS_ERROR, SS_ERROR_TOO_LARGE,
               "the dense direct solver (%s) needs %s of device memory for a %d×%d image "
               "(a %" G_GSIZE_FORMAT "² system); %s is available on %s%s: the largest square "
               "image that fits is %d×%d (%" G_GSIZE_FORMAT " unknowns); use a smaller region, "
               "Direct FFT (no mask) or an iterative solver",
               method == SS_DIRECT_INVERSE ? "explicit inverse" : "solve", need_text,
               p->width, p->height, (gsize) p->n, have_text, ctx->name,
               memory_limit > 0 ? " under the memory limit" : "", side, side,
               (gsize) unknowns);
  return FALSE;
}

/* ---- dense direct: normal matrix ------------------------------------------- */

__global__ void
power_spectrum_kernel (float2 *__restrict__ s, const float2 *__restrict__ c, size_t count,
                       float inv_n)
{
  for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < count;
       i += (size_t) gridDim.x * blockDim.x)
    {
      float2 cv = c[i];
      s[i] = make_float2 ((cv.x * cv.x + cv.y * cv.y) * inv_n, 0.0f);
    }
}

__global__ void
scale_spectrum_kernel (float2 *__restrict__ s, const float2 *__restrict__ c, size_t count,
                       float inv_n)
{
  for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < count;
       i += (size_t) gridDim.x * blockDim.x)
    s[i] = make_float2 (c[i].x * inv_n, c[i].y * inv_n);
}

/* out[i + j*ld] = col[(i - j) wrapped in 2-D], for the rows ROW0.. of the
 * full matrix (ROWS of them) or, with INDEX, the observed pixels INDEX[r]. */
__global__ void
circulant_fill_kernel (float *__restrict__ out, long long ld, const float *__restrict__ col,
                       const int *__restrict__ index, long long rows, long long cols, int width,
                       int height, float diagonal)
{
  for (long long j = blockIdx.y; j < cols; j += gridDim.y)
    {
      int jy = (int) (j / width), jx = (int) (j % width);
      for (long long r = blockIdx.x * (long long) blockDim.x + threadIdx.x; r < rows;
           r += (long long) gridDim.x * blockDim.x)
        {
          long long i = index ? index[r] : r;
          int iy = (int) (i / width), ix = (int) (i % width);
          int dy = iy - jy, dx = ix - jx;
          dy += dy < 0 ? height : 0;
          dx += dx < 0 ? width : 0;
          float v = col[(size_t) dy * width + dx];
          if (!index && i == j)
            v += diagonal;
          out[r + j * ld] = v;
        }
    }
}

__global__ void
add_diagonal_kernel (float *__restrict__ N, long long n, float lambda)
{
  for (long long i = blockIdx.x * (long long) blockDim.x + threadIdx.x; i < n;
       i += (long long) gridDim.x * blockDim.x)
    N[i + i * n] += lambda;
}

static dim3
matrix_grid (long long rows, long long cols)
{
  return dim3 ((unsigned) MIN ((rows + 255) / 256, 64LL), (unsigned) MIN (cols, 65535LL));
}

/* The first column of C (or of C^T C when POWER) as an image in COL. */
static gboolean
operator_column (SsCudaContext *ctx, const SsCudaProblem *p, gboolean power, float2 *spec,
                 float *col, GError **error)
{
  cufftHandle c2r;
  if (!ss_cuda_plan (ctx, p->width, p->height, 1, CUFFT_C2R, &c2r, error))
    return FALSE;
  unsigned blocks = ss_cuda_blocks (ctx, p->spec);
  float inv_n = (float) (1.0 / (double) p->n);
  if (power)
    power_spectrum_kernel<<<blocks, SS_CUDA_THREADS, 0, ctx->stream>>> (spec, p->chat, p->spec,
                                                                         inv_n);
  else
    scale_spectrum_kernel<<<blocks, SS_CUDA_THREADS, 0, ctx->stream>>> (spec, p->chat, p->spec,
                                                                         inv_n);
  return LAUNCH_OK ("operator_column") && CUFFT_OK (cufftExecC2R (c2r, (cufftComplex *) spec, col));
}

/* Indices of the observed pixels, on the device. */
static gboolean
observed_index (SsCudaContext *ctx, const SsCudaProblem *p, int **index_d, size_t *count,
                GError **error)
{
  g_autofree unsigned char *mask = (unsigned char *) g_malloc (p->n);
  if (!CUDA_OK (cudaMemcpyAsync (mask, p->mask, p->n, cudaMemcpyDeviceToHost, ctx->stream))
      || !CUDA_OK (cudaStreamSynchronize (ctx->stream)))
    return FALSE;
  g_autofree int *index = g_new (int, p->n);
  size_t m = 0;
  for (size_t i = 0; i < p->n; i++)
    if (mask[i])
      index[m++] = (int) i;
  *count = m;
  if (m == 0)   /* a buffer all the same: the kernels index none of it */
    return ss_cuda_alloc (ctx, (void **) index_d, sizeof (int), "the observed pixels", error);
  return ss_cuda_upload (ctx, (void **) index_d, index, m * sizeof (int), "the observed pixels",
                         error);
}

static gboolean
normal_matrix (SsCudaContext *ctx, const SsCudaProblem *p, float lambda, float *N, float2 *spec,
               float *col, GError **error)
{
  long long n = (long long) p->n;
  if (p->mask == NULL)
    {
      /* C^T C is circulant: its first column is the autocorrelation of c. */
      if (!operator_column (ctx, p, TRUE, spec, col, error))
        return FALSE;
      circulant_fill_kernel<<<matrix_grid (n, n), 256, 0, ctx->stream>>> (
        N, n, col, NULL, n, n, p->width, p->height, lambda);
      return LAUNCH_OK ("circulant_fill_kernel");
    }

  /* A^T A = sum over observed rows of C: SSYRK over chunks of rows. */
  int *index = NULL;
  size_t m = 0;
  float *chunk = NULL;
  size_t rows = chunk_rows (p->n, p->m);
  gboolean ok = ss_cuda_cublas (ctx, error) && operator_column (ctx, p, FALSE, spec, col, error)
                && observed_index (ctx, p, &index, &m, error)
                && ss_cuda_alloc (ctx, (void **) &chunk, rows * p->n * sizeof (float),
                                  "rows of the sensing matrix", error);
  const float one = 1.0f;
  for (size_t r0 = 0; ok && r0 < m; r0 += rows)
    {
      long long k = (long long) MIN (rows, m - r0);
      float beta = r0 == 0 ? 0.0f : 1.0f;
      circulant_fill_kernel<<<matrix_grid (k, n), 256, 0, ctx->stream>>> (
        chunk, k, col, index + r0, k, n, p->width, p->height, 0.0f);
      ok = LAUNCH_OK ("circulant_fill_kernel")
           && CUBLAS_OK (cublasSsyrk_64 (ctx->cublas, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_T, n, k,
                                         &one, chunk, k, &beta, N, n));
    }
  if (ok)
    {
      add_diagonal_kernel<<<ss_cuda_blocks (ctx, p->n), SS_CUDA_THREADS, 0, ctx->stream>>> (
        N, n, lambda);
      ok = LAUNCH_OK ("add_diagonal_kernel");
    }
  ss_cuda_free (ctx, chunk, rows * p->n * sizeof (float));
  ss_cuda_free (ctx, index, MAX (m, (size_t) 1) * sizeof (int));
  return ok;
}

/* ---- dense direct: the pipeline -------------------------------------------- */

static gboolean
cholesky (SsCudaContext *ctx, float *N, long long n, GError **error)
{
  if (!ss_cuda_cusolver (ctx, error))
    return FALSE;
  cusolverDnParams_t params = NULL;
  size_t device_bytes = 0, host_bytes = 0;
  void *work = NULL;
  int *info_d = NULL, info = 0;
  if (!CUSOLVER_OK (cusolverDnCreateParams (&params)))
    return FALSE;
  gboolean ok =
    CUSOLVER_OK (cusolverDnXpotrf_bufferSize (ctx->cusolver, params, CUBLAS_FILL_MODE_LOWER, n,
                                              CUDA_R_32F, N, n, CUDA_R_32F, &device_bytes,
                                              &host_bytes));
  g_autofree char *host_work = ok && host_bytes ? (char *) g_malloc (host_bytes) : NULL;
  ok = ok && ss_cuda_alloc (ctx, &work, device_bytes, "the Cholesky workspace", error)
       && ss_cuda_alloc (ctx, (void **) &info_d, sizeof (int), "a status word", error)
       && CUSOLVER_OK (cusolverDnXpotrf (ctx->cusolver, params, CUBLAS_FILL_MODE_LOWER, n,
                                         CUDA_R_32F, N, n, CUDA_R_32F, work, device_bytes,
                                         host_work, host_bytes, info_d))
       && CUDA_OK (cudaMemcpyAsync (&info, info_d, sizeof info, cudaMemcpyDeviceToHost,
                                    ctx->stream))
       && CUDA_OK (cudaStreamSynchronize (ctx->stream));
  if (ok && info != 0)
    {
      g_set_error (error, SS_ERROR, SS_ERROR_NUMERIC,
                   info > 0 ? "the normal matrix is not positive definite (leading minor %d): "
                              "increase alpha"
                            : "cusolverDnXpotrf rejected argument %d",
                   info > 0 ? info : -info);
      ok = FALSE;
    }
  ss_cuda_free (ctx, work, device_bytes);
  ss_cuda_free (ctx, info_d, sizeof (int));
  cusolverDnDestroyParams (params);
  return ok;
}

static gboolean
cholesky_solve (SsCudaContext *ctx, const float *L, long long n, float *x, GError **error)
{
  cusolverDnParams_t params = NULL;
  int *info_d = NULL, info = 0;
  if (!CUSOLVER_OK (cusolverDnCreateParams (&params)))
    return FALSE;
  gboolean ok = ss_cuda_alloc (ctx, (void **) &info_d, sizeof (int), "a status word", error)
                && CUSOLVER_OK (cusolverDnXpotrs (ctx->cusolver, params, CUBLAS_FILL_MODE_LOWER,
                                                  n, 1, CUDA_R_32F, L, n, CUDA_R_32F, x, n,
                                                  info_d))
                && CUDA_OK (cudaMemcpyAsync (&info, info_d, sizeof info, cudaMemcpyDeviceToHost,
                                             ctx->stream))
                && CUDA_OK (cudaStreamSynchronize (ctx->stream));
  if (ok && info != 0)
    {
      g_set_error (error, SS_ERROR, SS_ERROR_CUDA, "cusolverDnXpotrs rejected argument %d",
                   -info);
      ok = FALSE;
    }
  ss_cuda_free (ctx, info_d, sizeof (int));
  cusolverDnDestroyParams (params);
  return ok;
}

typedef struct {
  cudaEvent_t marks[6];
} PhaseClock;

static double
phase_seconds (PhaseClock *clock, int from, int to)
{
  float ms = 0;
  if (cudaEventElapsedTime (&ms, clock->marks[from], clock->marks[to]) != cudaSuccess)
    {
      cudaGetLastError ();
      return NAN;
    }
  return ms * 1e-3;
}

gboolean
ss_cuda_dense_solve (SsCudaContext *ctx, const SsCudaProblem *p, double lambda,
                     SsDirectMethod method, size_t memory_limit, gboolean time_reference,
                     float *x_out, SsCudaDenseTiming *timing, GError **error)
{
  memset (timing, 0, sizeof *timing);
  timing->reference_seconds = NAN;
  if (!(lambda > 0))
    {
      g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT,
                   "the direct solver needs a positive Tikhonov weight (alpha = %g)", lambda);
      return FALSE;
    }
  if (p->n > (size_t) G_MAXINT)
    return dense_check_fits (ctx, p, method, 1, error);
  /* The plan cache may hold large work areas from earlier solves. */
  ss_cuda_plans_clear (ctx);
  if (!dense_check_fits (ctx, p, method, memory_limit, error))
    return FALSE;

  long long n = (long long) p->n;
  size_t matrix_bytes = (size_t) n * n * sizeof (float);
  float *N = NULL, *R = NULL, *col = NULL;
  float2 *spec = NULL;
  PhaseClock clock;
  memset (&clock, 0, sizeof clock);
  gboolean ok = TRUE;
  for (int i = 0; i < 6 && ok; i++)
    ok = CUDA_OK (cudaEventCreate (&clock.marks[i]));
  ok = ok && ss_cuda_alloc (ctx, (void **) &N, matrix_bytes, "the normal matrix", error)
       && (method != SS_DIRECT_INVERSE
           || ss_cuda_alloc (ctx, (void **) &R, matrix_bytes, "the inverse factor", error))
       && ss_cuda_alloc (ctx, (void **) &col, p->n * sizeof (float), "a column", error)
       && ss_cuda_alloc (ctx, (void **) &spec, p->spec * sizeof (float2), "a spectrum", error)
       && CUDA_OK (cudaEventRecord (clock.marks[0], ctx->stream))
       && normal_matrix (ctx, p, (float) lambda, N, spec, col, error)
       /* A^T y = C^T (P^T y), by FFT, into X_OUT */
       && ss_cuda_apply_operator (ctx, p, p->y, spec, x_out, TRUE, error)
       && CUDA_OK (cudaEventRecord (clock.marks[1], ctx->stream))
       && cholesky (ctx, N, n, error)
       && CUDA_OK (cudaEventRecord (clock.marks[2], ctx->stream));
  if (ok && method == SS_DIRECT_SOLVE)
    ok = cholesky_solve (ctx, N, n, x_out, error)
         && CUDA_OK (cudaEventRecord (clock.marks[3], ctx->stream))
         && CUDA_OK (cudaEventRecord (clock.marks[4], ctx->stream));
  else if (ok)
    {
      ok = ss_cuda_gets_device (ctx, N, n, n, R, n, error)
           && CUDA_OK (cudaEventRecord (clock.marks[3], ctx->stream))
           && ss_cuda_cublas (ctx, error)
           && CUBLAS_OK (cublasStrmv_64 (ctx->cublas, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N,
                                         CUBLAS_DIAG_NON_UNIT, n, R, n, x_out, 1))
           && CUBLAS_OK (cublasStrmv_64 (ctx->cublas, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_T,
                                         CUBLAS_DIAG_NON_UNIT, n, R, n, x_out, 1))
           && CUDA_OK (cudaEventRecord (clock.marks[4], ctx->stream));
      /* The library's triangular inverse on L itself (no longer needed). A
       * refusal (cuSOLVER's trtri rejects n = 65536) leaves the reference NaN. */
      if (ok && time_reference)
        {
          g_autoptr (GError) reference_error = NULL;
          if (ss_cuda_trtri_device (ctx, N, n, n, &reference_error))
            ok = CUDA_OK (cudaEventRecord (clock.marks[5], ctx->stream));
          else
            {
              g_debug ("no library reference at n = %lld: %s", n, reference_error->message);
              time_reference = FALSE;
            }
        }
    }
  if (ok)
    ok = CUDA_OK (cudaStreamSynchronize (ctx->stream));
  if (ok)
    {
      timing->phase_seconds[0] = phase_seconds (&clock, 0, 1);
      timing->phase_seconds[1] = phase_seconds (&clock, 1, 2);
      timing->phase_seconds[2] = phase_seconds (&clock, 2, 3);
      timing->phase_seconds[3] = phase_seconds (&clock, 3, 4);
      if (method == SS_DIRECT_INVERSE && time_reference)
        timing->reference_seconds = phase_seconds (&clock, 4, 5);
    }
  else
    cudaStreamSynchronize (ctx->stream);
  timing->peak_bytes = ctx->mem_peak;
  for (int i = 0; i < 6; i++)
    if (clock.marks[i])
      cudaEventDestroy (clock.marks[i]);
  ss_cuda_free (ctx, N, matrix_bytes);
  ss_cuda_free (ctx, R, matrix_bytes);
  ss_cuda_free (ctx, col, p->n * sizeof (float));
  ss_cuda_free (ctx, spec, p->spec * sizeof (float2));
  return ok;
}
