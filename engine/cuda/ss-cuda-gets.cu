/* ss-cuda-gets.cu: GETS, the triangular inverse by Gaussian elimination on
 * [L | I] (seed 002), made coalesced and blocked.
 *
 * The seed's kernel eliminates one pivot per launch over the whole matrix.
 * Here the elimination runs by pivot blocks of GETS_NB rows (right-looking):
 *   1. our kernel eliminates inside the diagonal block: L_kk^-1 by GETS in
 *      shared memory, one thread per column of the result (so every access
 *      is coalesced or a broadcast), GETS_ROWS row groups per column;
 *   2. the block row's earlier columns are scaled by it: R_k,<k = L_kk^-1 R_k,<k
 *      (a triangular product, cuBLAS TRMM);
 *   3. the rows below are eliminated with the block row at once:
 *      R_>k,<=k -= L_>k,k R_k,<=k, one matrix product (cuBLAS SGEMM), which is
 *      where nearly all of the n^3/3 operations go.
 * The seed's one-pivot-per-launch form is kept (coalesced: column-major with
 * consecutive threads on consecutive rows) as a second algorithm for tests.
 */
#include "ss-cuda-internal.h"

#include <math.h>
#include <string.h>

#define GETS_NB 128
#define GETS_ROWS 8  /* row groups: GETS_NB * GETS_ROWS threads per block */
#define GETS_SHARED_BYTES ((GETS_NB * (GETS_NB + 1) + GETS_NB * GETS_NB) * sizeof (float))

/* Inverts the B x B lower-triangular block at L (leading dimension LDA) into R
 * (leading dimension LDR), zeroing R's strict upper part of the block. A zero
 * or non-finite pivot sets *INFO to its 1-based global index (the smallest). */
__global__ void __launch_bounds__ (GETS_NB *GETS_ROWS)
gets_diagonal_kernel (const float *__restrict__ L, long long lda, float *__restrict__ R,
                      long long ldr, int b, long long offset, int *__restrict__ info)
{
  extern __shared__ float shared[];
  float *lcol = shared;                          /* [p][i] = L[i][p], stride NB + 1 */
  float *x = shared + GETS_NB * (GETS_NB + 1);   /* [i][j], stride NB */
  const int j = threadIdx.x % GETS_NB, group = threadIdx.x / GETS_NB;

  /* Coalesced load: consecutive threads read consecutive rows of a column. */
  for (int t = threadIdx.x; t < GETS_NB * GETS_NB; t += blockDim.x)
    {
      int i = t % GETS_NB, p = t / GETS_NB;
      lcol[p * (GETS_NB + 1) + i] = (i < b && p < b && i >= p) ? L[i + p * lda] : 0.0f;
      x[i * GETS_NB + p] = (i == p) ? 1.0f : 0.0f;
    }
  __syncthreads ();
  if (group == 0 && j < b)
    {
      float d = lcol[j * (GETS_NB + 1) + j];
      if (d == 0.0f || !isfinite (d))
        atomicMin (info, (int) (offset + j + 1));
    }

  for (int p = 0; p < b; p++)
    {
      /* Row p of [L | I] divided by its pivot: only columns j <= p are nonzero. */
      if (group == 0 && j <= p)
        x[p * GETS_NB + j] /= lcol[p * (GETS_NB + 1) + p];
      __syncthreads ();
      if (j <= p)
        {
          float xp = x[p * GETS_NB + j];
          for (int i = p + 1 + group; i < b; i += GETS_ROWS)
            x[i * GETS_NB + j] -= lcol[p * (GETS_NB + 1) + i] * xp;
        }
      __syncthreads ();
    }

  for (int t = threadIdx.x; t < b * b; t += blockDim.x)
    {
      int i = t % b, jj = t / b;
      R[i + jj * ldr] = (i >= jj) ? x[i * GETS_NB + jj] : 0.0f;
    }
}

/* Seed form, one pivot: row p scaled by 1/L[p][p] (columns 0..p). */
__global__ void
gets_scale_row_kernel (const float *__restrict__ L, long long lda, float *__restrict__ R,
                       long long ldr, long long p, int *__restrict__ info)
{
  float d = L[p + p * lda];
  if (blockIdx.x == 0 && threadIdx.x == 0 && (d == 0.0f || !isfinite (d)))
    atomicMin (info, (int) (p + 1));
  for (long long j = blockIdx.x * (long long) blockDim.x + threadIdx.x; j <= p;
       j += (long long) gridDim.x * blockDim.x)
    R[p + j * ldr] /= d;
}

/* Seed form, one pivot: rows i > p minus L[i][p] times row p; consecutive
 * threads take consecutive rows of one column (coalesced, column-major). */
__global__ void
gets_eliminate_kernel (const float *__restrict__ L, long long lda, float *__restrict__ R,
                       long long ldr, long long n, long long p)
{
  long long rows = n - p - 1;
  for (long long j = blockIdx.y; j <= p; j += gridDim.y)
    {
      float rp = R[p + j * ldr];
      for (long long t = blockIdx.x * (long long) blockDim.x + threadIdx.x; t < rows;
           t += (long long) gridDim.x * blockDim.x)
        {
          long long i = p + 1 + t;
          R[i + j * ldr] -= L[i + p * lda] * rp;
        }
    }
}

__global__ void
set_identity_kernel (float *__restrict__ R, long long n, long long ldr)
{
  for (long long j = blockIdx.y; j < n; j += gridDim.y)
    for (long long i = blockIdx.x * (long long) blockDim.x + threadIdx.x; i < n;
         i += (long long) gridDim.x * blockDim.x)
      R[i + j * ldr] = (i == j) ? 1.0f : 0.0f;
}

static gboolean
check_info (SsCudaContext *ctx, int *info_d, const char *what, GError **error)
{
  int info = 0;
  if (!CUDA_OK (cudaMemcpyAsync (&info, info_d, sizeof info, cudaMemcpyDeviceToHost, ctx->stream))
      || !CUDA_OK (cudaStreamSynchronize (ctx->stream)))
    return FALSE;
  if (info != 0 && info != G_MAXINT)
    {
      g_set_error (error, SS_ERROR, SS_ERROR_NUMERIC,
                   "%s: pivot %d of the triangular factor is zero or not finite", what, info);
      return FALSE;
    }
  return TRUE;
}

static gboolean
info_alloc (SsCudaContext *ctx, int **info_d, GError **error)
{
  int none = G_MAXINT;
  return ss_cuda_upload (ctx, (void **) info_d, &none, sizeof none, "a status word", error);
}

gboolean
ss_cuda_gets_device (SsCudaContext *ctx, const float *L, int64_t n, int64_t lda, float *R,
                     int64_t ldr, GError **error)
{
  if (n <= 0)
    return TRUE;
  if (!ss_cuda_cublas (ctx, error))
    return FALSE;
  static gboolean attribute_set = FALSE;
  if (!attribute_set)
    {
      if (!CUDA_OK (cudaFuncSetAttribute (gets_diagonal_kernel,
                                          cudaFuncAttributeMaxDynamicSharedMemorySize,
                                          (int) GETS_SHARED_BYTES)))
        return FALSE;
      attribute_set = TRUE;
    }
  int *info_d = NULL;
  if (!info_alloc (ctx, &info_d, error))
    return FALSE;
  /* The strict upper triangle outside the diagonal blocks stays 0. */
  gboolean ok = CUDA_OK (cudaMemset2DAsync (R, (size_t) ldr * sizeof (float), 0,
                                            (size_t) n * sizeof (float), (size_t) n, ctx->stream));
  const float one = 1.0f, minus_one = -1.0f;
  for (int64_t k0 = 0; ok && k0 < n; k0 += GETS_NB)
    {
      int b = (int) MIN ((int64_t) GETS_NB, n - k0);
      float *rkk = R + k0 + k0 * ldr;
      gets_diagonal_kernel<<<1, GETS_NB * GETS_ROWS, GETS_SHARED_BYTES, ctx->stream>>> (
        L + k0 + k0 * lda, lda, rkk, ldr, b, k0, info_d);
      ok = LAUNCH_OK ("gets_diagonal_kernel");
      /* R_k,<k = L_kk^-1 R_k,<k (in place: cuBLAS TRMM writes C, here = B). */
      if (ok && k0 > 0)
        ok = CUBLAS_OK (cublasStrmm_64 (ctx->cublas, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER,
                                        CUBLAS_OP_N, CUBLAS_DIAG_NON_UNIT, b, k0, &one, rkk, ldr,
                                        R + k0, ldr, R + k0, ldr));
      /* R_>k,<=k -= L_>k,k R_k,<=k */
      int64_t below = n - k0 - b;
      if (ok && below > 0)
        ok = CUBLAS_OK (cublasSgemm_64 (ctx->cublas, CUBLAS_OP_N, CUBLAS_OP_N, below, k0 + b, b,
                                        &minus_one, L + (k0 + b) + k0 * lda, lda, R + k0, ldr,
                                        &one, R + k0 + b, ldr));
    }
  if (ok)
    ok = check_info (ctx, info_d, "GETS", error);
  ss_cuda_free (ctx, info_d, sizeof (int));
  return ok;
}

gboolean
ss_cuda_gets_unblocked_device (SsCudaContext *ctx, const float *L, int64_t n, int64_t lda,
                               float *R, int64_t ldr, GError **error)
{
  int *info_d = NULL;
  if (!info_alloc (ctx, &info_d, error))
    return FALSE;
  dim3 grid ((unsigned) MIN ((n + 255) / 256, (int64_t) 1024), (unsigned) MIN (n, (int64_t) 65535));
  set_identity_kernel<<<grid, 256, 0, ctx->stream>>> (R, n, ldr);
  gboolean ok = LAUNCH_OK ("set_identity_kernel");
  for (int64_t p = 0; ok && p < n; p++)
    {
      gets_scale_row_kernel<<<(unsigned) MIN ((p + 256) / 256, (int64_t) 1024), 256, 0,
                              ctx->stream>>> (L, lda, R, ldr, p, info_d);
      int64_t rows = n - p - 1;
      if (rows > 0)
        {
          dim3 g ((unsigned) MIN ((rows + 255) / 256, (int64_t) 64),
                  (unsigned) MIN (p + 1, (int64_t) 65535));
          gets_eliminate_kernel<<<g, 256, 0, ctx->stream>>> (L, lda, R, ldr, n, p);
        }
      ok = LAUNCH_OK ("gets_eliminate_kernel");
    }
  if (ok)
    ok = check_info (ctx, info_d, "GETS", error);
  ss_cuda_free (ctx, info_d, sizeof (int));
  return ok;
}

gboolean
ss_cuda_trtri_device (SsCudaContext *ctx, float *A, int64_t n, int64_t lda, GError **error)
{
  if (!ss_cuda_cusolver (ctx, error))
    return FALSE;
  size_t device_bytes = 0, host_bytes = 0;
  if (!CUSOLVER_OK (cusolverDnXtrtri_bufferSize (ctx->cusolver, CUBLAS_FILL_MODE_LOWER,
                                                 CUBLAS_DIAG_NON_UNIT, n, CUDA_R_32F, A, lda,
                                                 &device_bytes, &host_bytes)))
    return FALSE;
  void *work = NULL;
  int *info_d = NULL;
  g_autofree char *host_work = host_bytes ? (char *) g_malloc (host_bytes) : NULL;
  gboolean ok = ss_cuda_alloc (ctx, &work, device_bytes, "the triangular inverse's workspace",
                               error)
                && ss_cuda_alloc (ctx, (void **) &info_d, sizeof (int), "a status word", error)
                && CUSOLVER_OK (cusolverDnXtrtri (ctx->cusolver, CUBLAS_FILL_MODE_LOWER,
                                                  CUBLAS_DIAG_NON_UNIT, n, CUDA_R_32F, A, lda,
                                                  work, device_bytes, host_work, host_bytes,
                                                  info_d));
  if (ok)
    ok = check_info (ctx, info_d, "cusolverDnXtrtri", error);
  ss_cuda_free (ctx, work, device_bytes);
  ss_cuda_free (ctx, info_d, sizeof (int));
  return ok;
}

/* ---- public entry points (tests, benchmarks) -------------------------------- */

gboolean
ss_cuda_gets_lower_inverse (SsCudaContext *ctx, const float *L, int n, int lda, float *R,
                            int ldr, gboolean blocked, GError **error)
{
  if (n <= 0 || lda < n || ldr < n || L == NULL || R == NULL)
    {
      g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT,
                   "invalid triangular matrix (n %d, lda %d, ldr %d)", n, lda, ldr);
      return FALSE;
    }
  if (!CUDA_OK (cudaSetDevice (ctx->device)))
    return FALSE;
  size_t bytes = (size_t) n * n * sizeof (float);
  float *Ld = NULL, *Rd = NULL;
  gboolean ok = ss_cuda_alloc (ctx, (void **) &Ld, bytes, "the triangular matrix", error)
                && ss_cuda_alloc (ctx, (void **) &Rd, bytes, "its inverse", error)
                && CUDA_OK (cudaMemcpy2DAsync (Ld, n * sizeof (float), L, lda * sizeof (float),
                                               n * sizeof (float), n, cudaMemcpyHostToDevice,
                                               ctx->stream));
  if (ok)
    ok = blocked ? ss_cuda_gets_device (ctx, Ld, n, n, Rd, n, error)
                 : ss_cuda_gets_unblocked_device (ctx, Ld, n, n, Rd, n, error);
  if (ok)
    ok = CUDA_OK (cudaMemcpy2DAsync (R, ldr * sizeof (float), Rd, n * sizeof (float),
                                     n * sizeof (float), n, cudaMemcpyDeviceToHost, ctx->stream))
         && CUDA_OK (cudaStreamSynchronize (ctx->stream));
  ss_cuda_free (ctx, Ld, bytes);
  ss_cuda_free (ctx, Rd, bytes);
  return ok;
}

/* A well-conditioned random lower-triangular matrix: entries uniform in
 * [-1, 1) / sqrt(n) below the diagonal, 1 + |u| on it. */
__global__ void
random_lower_kernel (float *__restrict__ L, long long n, unsigned long long seed)
{
  for (long long j = blockIdx.y; j < n; j += gridDim.y)
    for (long long i = blockIdx.x * (long long) blockDim.x + threadIdx.x; i < n;
         i += (long long) gridDim.x * blockDim.x)
      {
        unsigned long long key = (seed << 40) ^ (unsigned long long) (i + j * n);
        key += 0x9e3779b97f4a7c15ull;
        key = (key ^ (key >> 30)) * 0xbf58476d1ce4e5b9ull;
        key = (key ^ (key >> 27)) * 0x94d049bb133111ebull;
        key ^= key >> 31;
        float u = (float) (key >> 40) * (1.0f / 16777216.0f) * 2.0f - 1.0f;
        float v = i > j ? u * rsqrtf ((float) n) : (i == j ? 1.0f + fabsf (u) : 0.0f);
        L[i + j * n] = v;
      }
}

gboolean
ss_cuda_gets_bench (SsCudaContext *ctx, int n, double *gets_seconds, double *trtri_seconds,
                    double *trsm_seconds, GError **error)
{
  if (!CUDA_OK (cudaSetDevice (ctx->device)) || !ss_cuda_cublas (ctx, error))
    return FALSE;
  size_t bytes = (size_t) n * n * sizeof (float);
  if (!ss_cuda_check_free (ctx, 2 * bytes + (64u << 20), "the GETS benchmark", error))
    return FALSE;
  float *L = NULL, *R = NULL;
  cudaEvent_t ev[2] = { NULL, NULL };
  gboolean ok = ss_cuda_alloc (ctx, (void **) &L, bytes, "the GETS benchmark", error)
                && ss_cuda_alloc (ctx, (void **) &R, bytes, "the GETS benchmark", error)
                && CUDA_OK (cudaEventCreate (&ev[0])) && CUDA_OK (cudaEventCreate (&ev[1]));
  dim3 grid ((unsigned) MIN ((n + 255) / 256, 1024), (unsigned) MIN (n, 65535));
  float ms = 0;
  if (ok)
    {
      random_lower_kernel<<<grid, 256, 0, ctx->stream>>> (L, n, 12345);
      ok = LAUNCH_OK ("random_lower_kernel")
           /* warm-up at a small size: handles, kernels, library code */
           && ss_cuda_gets_device (ctx, L, MIN (n, 512), n, R, n, error)
           && CUDA_OK (cudaEventRecord (ev[0], ctx->stream))
           && ss_cuda_gets_device (ctx, L, n, n, R, n, error)
           && CUDA_OK (cudaEventRecord (ev[1], ctx->stream))
           && CUDA_OK (cudaEventSynchronize (ev[1]))
           && CUDA_OK (cudaEventElapsedTime (&ms, ev[0], ev[1]));
      if (gets_seconds)
        *gets_seconds = ms * 1e-3;
    }
  if (ok && trtri_seconds)
    {
      ok = CUDA_OK (cudaMemcpyAsync (R, L, bytes, cudaMemcpyDeviceToDevice, ctx->stream))
           && ss_cuda_trtri_device (ctx, R, MIN (n, 512), n, error)
           && CUDA_OK (cudaMemcpyAsync (R, L, bytes, cudaMemcpyDeviceToDevice, ctx->stream))
           && CUDA_OK (cudaEventRecord (ev[0], ctx->stream))
           && ss_cuda_trtri_device (ctx, R, n, n, error)
           && CUDA_OK (cudaEventRecord (ev[1], ctx->stream))
           && CUDA_OK (cudaEventSynchronize (ev[1]))
           && CUDA_OK (cudaEventElapsedTime (&ms, ev[0], ev[1]));
      *trtri_seconds = ms * 1e-3;
    }
  if (ok && trsm_seconds)
    {
      /* L X = I with cuBLAS TRSM: n^3 operations (no use of the identity). */
      const float one = 1.0f;
      set_identity_kernel<<<grid, 256, 0, ctx->stream>>> (R, n, n);
      ok = LAUNCH_OK ("set_identity_kernel")
           && CUDA_OK (cudaEventRecord (ev[0], ctx->stream))
           && CUBLAS_OK (cublasStrsm_64 (ctx->cublas, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER,
                                         CUBLAS_OP_N, CUBLAS_DIAG_NON_UNIT, n, n, &one, L, n, R,
                                         n))
           && CUDA_OK (cudaEventRecord (ev[1], ctx->stream))
           && CUDA_OK (cudaEventSynchronize (ev[1]))
           && CUDA_OK (cudaEventElapsedTime (&ms, ev[0], ev[1]));
      *trsm_seconds = ms * 1e-3;
    }
  for (int i = 0; i < 2; i++)
    if (ev[i])
      cudaEventDestroy (ev[i]);
  ss_cuda_free (ctx, L, bytes);
  ss_cuda_free (ctx, R, bytes);
  return ok;
}
