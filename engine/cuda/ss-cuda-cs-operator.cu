/* ss-cuda-cs-operator.cu: the sensing operators on the device (dense with
 * cuBLAS GEMM/GEMV, the subsampled DCT through a real FFT, sparse CSR with
 * cuSPARSE SpMM, the image's P C), for a block of problems, and NIHT's small
 * kernels that ride along with its products A d and Aᵀ r. */
#include "ss-cuda-cs-private.cuh"

#define CUSPARSE_OK(call) cusparse_ok ((call), #call, error)

static gboolean
cusparse_ok (cusparseStatus_t status, const char *call, GError **error)
{
  if (status == CUSPARSE_STATUS_SUCCESS)
    return TRUE;
  g_autofree char *name = g_strndup (call, strcspn (call, " ("));
  g_set_error (error, SS_ERROR, SS_ERROR_CUDA, "%s failed: %s", name,
               cusparseGetErrorString (status));
  return FALSE;
}

/* ---- NIHT's small kernels around the products ----------------------------- */

/* After A d: refresh r = y − A d, or ||A d||². */
__global__ void
niht_after_apply_kernel (float *__restrict__ r, const float *__restrict__ y,
                         const float *__restrict__ ad, size_t m, Column *__restrict__ col)
{
  size_t off = blockIdx.y * m;
  bool stale = col[blockIdx.y].stale;
  double v[1] = { 0.0 };
  COLUMN_LOOP (i, m)
    {
      float a = ad[off + i];
      if (stale)
        r[off + i] = y[off + i] - a;
      else
        v[0] += (double) a * a;
    }
  if (!stale)
    ss_block_sum_to<1> (v, &col[blockIdx.y].ad2);
}

/* r −= μ A d (μ = 0 on a refresh). */
__global__ void
niht_update_r_kernel (float *__restrict__ r, const float *__restrict__ ad, size_t m,
                      const Column *__restrict__ col)
{
  const Column *c = &col[blockIdx.y];
  if (c->mu == 0.0f)
    return;
  size_t off = blockIdx.y * m;
  COLUMN_LOOP (i, m)
    r[off + i] -= c->mu * ad[off + i];
}

/* Per problem, in one block: keep the support, or select the K largest of
 * the candidate when some entry off the support outgrows one on it. Every
 * thread of the block calls it. */
__device__ void
niht_decide_block (Column *col, const NihtDecision &how)
{
  int any = 0;
  for (int b = threadIdx.x; b < how.batch; b += blockDim.x)
    {
      Column *c = &col[b];
      bool stale = c->stale;
      bool select = !stale && c->mu > 0
                    && !(__uint_as_float (c->low_on) > __uint_as_float (c->high_off));
      c->select = select;
      c->prefix = 0;
      c->remaining = how.k;
      c->listed = 0;
      any |= select;
      if (how.advance)
        {
          c->stale = select;
          c->gw = c->ad2 = 0;
          c->low_on = __float_as_uint (INFINITY);
          c->high_off = 0;
        }
    }
  any = __syncthreads_or (any);
  if (how.tell && threadIdx.x == 0)
    cudaGraphSetConditional (how.select_node, any ? 1u : 0u);
}

__global__ void
niht_decide_kernel (Column *col, NihtDecision how)
{
  niht_decide_block (col, how);
}

/* ---- the operator on the device ------------------------------------------- */

void
dev_linop_free (DevLinop *L)
{
  SsCudaContext *ctx = L->ctx;
  ss_cuda_free (ctx, L->dense, 0);
  ss_cuda_free (ctx, L->dense_t, 0);
  ss_cuda_free (ctx, L->rows, 0);
  ss_cuda_free (ctx, L->perm, 0);
  ss_cuda_free (ctx, L->spec, 0);
  ss_cuda_free (ctx, L->row_of, 0);
  if (L->a_mat)
    cusparseDestroySpMat (L->a_mat);
  if (L->t_mat)
    cusparseDestroySpMat (L->t_mat);
  void *sparse_buffers[] = { L->a_ptr, L->a_col, L->a_val, L->t_ptr, L->t_col, L->t_val,
                             L->sparse_work };
  for (gsize i = 0; i < G_N_ELEMENTS (sparse_buffers); i++)
    ss_cuda_free (ctx, sparse_buffers[i], 0);
  if (L->sparse)
    cusparseDestroy (L->sparse);
  memset (L, 0, sizeof *L);
}

/* ROW_OF from the kept frequencies: -1 everywhere, then i at rows[i]. */
static gboolean dct_index_rows (DevLinop *L, GError **error);

/* The CSR of A (m rows) and of Aᵀ (n rows): the host's, uploaded. */
static gboolean
dev_sparse_init (DevLinop *L, GError **error)
{
  SsCudaContext *ctx = L->ctx;
  const SsLinop *h = L->host;
  size_t nnz = h->cols * (size_t) h->sparse_p;
  if (!(ss_cuda_upload (ctx, &L->a_ptr, h->csr_ptr, (h->rows + 1) * 4, "CSR rows", error)
        && ss_cuda_upload (ctx, &L->a_col, h->csr_col, nnz * 4, "CSR columns", error)
        && ss_cuda_upload (ctx, &L->a_val, h->csr_val, nnz * 4, "CSR values", error)
        && ss_cuda_upload (ctx, &L->t_ptr, h->csr_t_ptr, (h->cols + 1) * 4, "CSR rows", error)
        && ss_cuda_upload (ctx, &L->t_col, h->csr_t_col, nnz * 4, "CSR columns", error)
        && ss_cuda_upload (ctx, &L->t_val, h->csr_t_val, nnz * 4, "CSR values", error)))
    return FALSE;
  return CUSPARSE_OK (cusparseCreate (&L->sparse))
         && CUSPARSE_OK (cusparseSetStream (L->sparse, ctx->stream))
         && CUSPARSE_OK (cusparseCreateCsr (&L->a_mat, (int64_t) h->rows, (int64_t) h->cols,
                                            (int64_t) nnz, L->a_ptr, L->a_col, L->a_val,
                                            CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                                            CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F))
         && CUSPARSE_OK (cusparseCreateCsr (&L->t_mat, (int64_t) h->cols, (int64_t) h->rows,
                                            (int64_t) nnz, L->t_ptr, L->t_col, L->t_val,
                                            CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                                            CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F));
}

gboolean
dev_linop_init (DevLinop *L, SsCudaContext *ctx, SsLinop *host, int batch, GError **error)
{
  memset (L, 0, sizeof *L);
  L->ctx = ctx;
  L->host = host;
  L->m = host->rows;
  L->n = host->cols;
  L->batch = batch;
  L->lipschitz = ss_linop_lipschitz (host);
  if (!ss_cuda_cublas (ctx, error))
    return FALSE;
  if (host->dense)
    {
      L->kind = SS_ENSEMBLE_GAUSSIAN;
      L->bytes = L->m * L->n * sizeof (float);
      return ss_cuda_check_free (ctx, L->bytes, "the dense matrix", error)
             && ss_cuda_upload (ctx, (void **) &L->dense, host->dense, L->bytes, "the dense matrix", error)
             && (batch == 1
                 || ss_cuda_alloc (ctx, (void **) &L->dense_t, L->m * batch * 4,
                                   "a product buffer", error));
    }
  if (host->dct_rows)
    {
      L->kind = SS_ENSEMBLE_DCT;
      if (L->n % 2 != 0)
        {
          g_set_error (error, SS_ERROR, SS_ERROR_UNSUPPORTED,
                       "the GPU DCT needs an even n (n = %zu)", L->n);
          return FALSE;
        }
      size_t half = L->n / 2 + 1;
      return ss_cuda_upload (ctx, (void **) &L->rows, host->dct_rows, L->m * 4, "DCT rows", error)
             && ss_cuda_alloc (ctx, (void **) &L->perm, L->n * batch * 4, "DCT buffer", error)
             && ss_cuda_alloc (ctx, (void **) &L->row_of, L->n * 4, "DCT rows", error)
             && dct_index_rows (L, error)
             && ss_cuda_alloc (ctx, (void **) &L->spec, half * batch * 8, "DCT spectrum", error)
             && ss_cuda_plan (ctx, (int) L->n, 1, batch, CUFFT_R2C, &L->r2c, error)
             && ss_cuda_plan (ctx, (int) L->n, 1, batch, CUFFT_C2R, &L->c2r, error);
    }
  if (host->csr_ptr)
    {
      L->kind = SS_ENSEMBLE_SPARSE;
      return dev_sparse_init (L, error);
    }
  g_set_error (error, SS_ERROR, SS_ERROR_UNSUPPORTED, "the %s operator has no GPU form",
               host->name);
  return FALSE;
}

/* P C on the device problem (one image at a time). */
gboolean
dev_circulant_init (DevLinop *L, SsCudaContext *ctx, const SsCudaProblem *p, GError **error)
{
  memset (L, 0, sizeof *L);
  L->ctx = ctx;
  L->problem = p;
  L->kind = (SsEnsemble) CS_CIRCULANT;
  L->m = L->n = p->n;
  L->batch = 1;
  L->lipschitz = p->lipschitz;
  return ss_cuda_alloc (ctx, (void **) &L->spec, p->spec * sizeof (float2), "a spectrum", error);
}

/* DCT-II through a real FFT (Makhoul): v_j = x_2j, v_{n-1-j} = x_{2j+1};
 * REDFT10(x)_k = 2 Re(e^{-iπk/2n} V_k). */
__global__ void
dct_permute_kernel (const float *__restrict__ x, float *__restrict__ v, size_t n)
{
  const float *xc = x + blockIdx.y * n;
  float *vc = v + blockIdx.y * n;
  size_t half = n / 2;
  COLUMN_LOOP (j, half)
    {
      vc[j] = xc[2 * j];
      vc[n - 1 - j] = xc[2 * j + 1];
    }
}

/* The orthonormal scale of row k: s(0) = 1/(2√n), s(k) = 1/√(2n). */
__device__ __forceinline__ float
dct_scale (unsigned k, size_t n)
{
  return k == 0 ? 0.5f * rsqrtf ((float) n) : rsqrtf (2.0f * (float) n);
}

__global__ void
dct_gather_kernel (const float2 *__restrict__ spec, const unsigned *__restrict__ rows,
                   float *__restrict__ y, size_t m, size_t n, NihtFold fold)
{
  const float2 *s = spec + blockIdx.y * (n / 2 + 1);
  size_t off = blockIdx.y * m;
  float *yc = y + off;
  bool folded = fold.col != NULL, stale = folded && fold.col[blockIdx.y].stale;
  double v2[1] = { 0.0 };
  COLUMN_LOOP (i, m)
    {
      unsigned k = rows[i];
      float2 v = k <= n / 2 ? s[k] : make_float2 (s[n - k].x, -s[n - k].y);
      float sn, cs;
      sincospif ((float) k / (2.0f * (float) n), &sn, &cs);
      /* Re(e^{-iθ} V) = cos θ Re V + sin θ Im V */
      float a = 2.0f * (cs * v.x + sn * v.y) * dct_scale (k, n);
      yc[i] = a;
      if (stale)
        fold.r[off + i] = fold.y[off + i] - a;
      else if (folded)
        v2[0] += (double) a * a;
    }
  if (folded && !stale)
    ss_block_sum_to<1> (v2, &fold.col[blockIdx.y].ad2);
}

/* The inverse of REDFT10 on the kept coefficients, gathered from y: with
 * Y_k = y_i / s(k) where rows[i] = k (0 for frequencies not kept),
 * V_k = ½ e^{iπk/2n} (Y_k − i Y_{n−k}), k = 0..n/2. Reading y through ROW_OF
 * spares the scatter into a zeroed n-vector (a memset, a scatter pass and
 * its n-float read): on n = 2^20, two launches and 8 MB an adjoint. With a
 * kept NIHT step folded in (RC, the same column as YC), y_i −= μ (A d)_i
 * first and is written back: every row is read here once. */
__device__ __forceinline__ float
dct_kept (const float *yc, const int *__restrict__ row_of, size_t k, size_t n, float *rc,
          const float *__restrict__ adc, float mu)
{
  int i = row_of[k];
  if (i < 0)
    return 0.0f;
  float v = yc[i];
  if (rc)
    {
      v -= mu * adc[i];
      rc[i] = v;
    }
  return v / dct_scale ((unsigned) k, n);
}

__global__ void
dct_adjoint_spectrum_kernel (const float *y, const int *__restrict__ row_of,
                             float2 *__restrict__ spec, size_t m, size_t n, float scale,
                             NihtFold fold)
{
  size_t off = blockIdx.y * m;
  const float *yc = y + off;
  float2 *s = spec + blockIdx.y * (n / 2 + 1);
  const Column *c = fold.col ? &fold.col[blockIdx.y] : NULL;
  float mu = c ? c->mu : 0.0f;
  bool moved = mu != 0.0f;
  float *rc = moved ? fold.r + off : NULL;
  const float *adc = moved ? fold.ad + off : NULL;
  COLUMN_LOOP (k, n / 2 + 1)
    {
      /* At k = n/2 the pair is one frequency, read (and updated) once. */
      float a = dct_kept (yc, row_of, k, n, rc, adc, mu);
      float b = k == 0 ? 0.0f : n - k == k ? a : dct_kept (yc, row_of, n - k, n, rc, adc, mu);
      float sn, cs;
      sincospif ((float) k / (2.0f * (float) n), &sn, &cs);
      /* ½ (cos θ + i sin θ)(a − i b), times SCALE (1/n in FFT order: cuFFT's
       * C2R is unnormalised) */
      float h = 0.5f * scale;
      s[k] = make_float2 (h * (cs * a + sn * b), h * (sn * a - cs * b));
    }
  if (fold.decides && blockIdx.x == 0 && blockIdx.y == 0)
    niht_decide_block (fold.col, fold.how);
}

__global__ void
dct_index_rows_kernel (const unsigned *__restrict__ rows, int *__restrict__ row_of, size_t m)
{
  COLUMN_LOOP (i, m)
    row_of[rows[i]] = (int) i;
}

__global__ void
dct_unpermute_kernel (const float *__restrict__ v, float *__restrict__ x, size_t n, float scale)
{
  const float *vc = v + blockIdx.y * n;
  float *xc = x + blockIdx.y * n;
  size_t half = n / 2;
  COLUMN_LOOP (j, half)
    {
      xc[2 * j] = vc[j] * scale;
      xc[2 * j + 1] = vc[n - 1 - j] * scale;
    }
}

/* out (rows x batch) = MAT in (in_rows x batch) by cuSPARSE SpMM (A's CSR for
 * A x, Aᵀ's for Aᵀ y), its work area grown as needed (never during a
 * capture: the first products of a solve come before any). */
static gboolean
sparse_multiply (DevLinop *L, cusparseSpMatDescr_t mat, size_t in_rows, size_t rows,
                 const float *in, float *out, int batch, GError **error)
{
  SsCudaContext *ctx = L->ctx;
  const float one = 1.0f, zero = 0.0f;
  cusparseDnMatDescr_t xd = NULL, yd = NULL;
  size_t need = 0;
  gboolean ok
    = CUSPARSE_OK (cusparseCreateDnMat (&xd, (int64_t) in_rows, batch, (int64_t) in_rows,
                                        (void *) in, CUDA_R_32F, CUSPARSE_ORDER_COL))
      && CUSPARSE_OK (cusparseCreateDnMat (&yd, (int64_t) rows, batch, (int64_t) rows, out,
                                           CUDA_R_32F, CUSPARSE_ORDER_COL))
      && CUSPARSE_OK (cusparseSpMM_bufferSize (L->sparse, CUSPARSE_OPERATION_NON_TRANSPOSE,
                                               CUSPARSE_OPERATION_NON_TRANSPOSE, &one, mat, xd,
                                               &zero, yd, CUDA_R_32F, CUSPARSE_SPMM_ALG_DEFAULT,
                                               &need));
  if (ok && need > L->sparse_work_bytes)
    {
      ss_cuda_free (ctx, L->sparse_work, L->sparse_work_bytes);
      L->sparse_work = NULL;
      ok = ss_cuda_alloc (ctx, &L->sparse_work, need, "cuSPARSE work", error);
      L->sparse_work_bytes = ok ? need : 0;
    }
  ok = ok && CUSPARSE_OK (cusparseSpMM (L->sparse, CUSPARSE_OPERATION_NON_TRANSPOSE,
                                        CUSPARSE_OPERATION_NON_TRANSPOSE, &one, mat, xd, &zero,
                                        yd, CUDA_R_32F, CUSPARSE_SPMM_ALG_DEFAULT,
                                        L->sparse_work));
  if (xd)
    cusparseDestroyDnMat (xd);
  if (yd)
    cusparseDestroyDnMat (yd);
  return ok;
}

/* The subsampled DCT: out (m x batch) = A in (n x batch), FOLD (NULL:
 * none) in its gather. */
static gboolean
dct_apply (DevLinop *L, const float *in, float *out, int batch, const NihtFold *fold,
           GError **error)
{
  SsCudaContext *ctx = L->ctx;
  const NihtFold none = {};
  g_return_val_if_fail (batch == L->batch, FALSE);
  const float *v = in;
  if (!L->fft_order)
    {
      dct_permute_kernel<<<column_grid (ctx, L->n / 2, batch), SS_CUDA_THREADS, 0, ctx->stream>>> (
        in, L->perm, L->n);
      if (!LAUNCH_OK ("dct_permute_kernel"))
        return FALSE;
      v = L->perm;
    }
  /* An out-of-place R2C leaves its input alone. */
  if (!CUFFT_OK (cufftExecR2C (L->r2c, (cufftReal *) v, (cufftComplex *) L->spec)))
    return FALSE;
  dct_gather_kernel<<<column_grid (ctx, L->m, batch), SS_CUDA_THREADS, 0, ctx->stream>>> (
    L->spec, L->rows, out, L->m, L->n, fold ? *fold : none);
  return LAUNCH_OK ("dct_gather_kernel");
}

/* The subsampled DCT's adjoint: out (n x batch) = Aᵀ in (m x batch), FOLD
 * (NULL: none) as it reads IN. */
static gboolean
dct_adjoint (DevLinop *L, const float *in, float *out, int batch, const NihtFold *fold,
             GError **error)
{
  SsCudaContext *ctx = L->ctx;
  const NihtFold none = {};
  g_return_val_if_fail (batch == L->batch, FALSE);
  float inv_n = 1.0f / (float) L->n;
  dct_adjoint_spectrum_kernel<<<column_grid (ctx, L->n / 2 + 1, batch), SS_CUDA_THREADS, 0,
                                ctx->stream>>> (in, L->row_of, L->spec, L->m, L->n,
                                                L->fft_order ? inv_n : 1.0f, fold ? *fold : none);
  if (!LAUNCH_OK ("dct_adjoint_spectrum_kernel")
      || !CUFFT_OK (cufftExecC2R (L->c2r, (cufftComplex *) L->spec, L->fft_order ? out : L->perm)))
    return FALSE;
  if (L->fft_order)
    return TRUE;
  dct_unpermute_kernel<<<column_grid (ctx, L->n / 2, batch), SS_CUDA_THREADS, 0, ctx->stream>>> (
    L->perm, out, L->n, inv_n);
  return LAUNCH_OK ("dct_unpermute_kernel");
}

/* out (m x batch) = A in (n x batch) for a dense A. Row-major m x n is
 * column-major n x m (M = Aᵀ), so A X = Mᵀ X. With a block, cuBLAS is
 * faster at the transposed product Xᵀ M (a batch x m result from a sum over
 * n): on the H100, for seed 004's 256 x 2^20 matrix and 60 problems,
 * 1.26 ms against 1.49 ms; the batch x m result is then transposed, a pass
 * over m x batch floats. */
static gboolean
dense_apply (DevLinop *L, const float *in, float *out, int batch, GError **error)
{
  SsCudaContext *ctx = L->ctx;
  const float one = 1.0f, zero = 0.0f;
  int m = (int) L->m, n = (int) L->n;
  if (batch == 1)
    return CUBLAS_OK (cublasSgemv (ctx->cublas, CUBLAS_OP_T, n, m, &one, L->dense, n, in, 1,
                                   &zero, out, 1));
  if (L->dense_t == NULL || batch > L->batch)
    return CUBLAS_OK (cublasSgemm (ctx->cublas, CUBLAS_OP_T, CUBLAS_OP_N, m, batch, n, &one,
                                   L->dense, n, in, n, &zero, out, m));
  return CUBLAS_OK (cublasSgemm (ctx->cublas, CUBLAS_OP_T, CUBLAS_OP_N, batch, m, n, &one, in, n,
                                 L->dense, n, &zero, L->dense_t, batch))
         && CUBLAS_OK (cublasSgeam (ctx->cublas, CUBLAS_OP_T, CUBLAS_OP_N, m, batch, &one,
                                    L->dense_t, batch, &zero, out, m, out, m));
}

/* out (m x batch) = A in (n x batch). */
gboolean
dev_apply (DevLinop *L, const float *in, float *out, int batch, GError **error)
{
  SsCudaContext *ctx = L->ctx;
  switch ((int) L->kind)
    {
    case CS_CIRCULANT:
      return ss_cuda_apply_operator (ctx, L->problem, in, L->spec, out, FALSE, error);
    case SS_ENSEMBLE_DCT:
      return dct_apply (L, in, out, batch, NULL, error);
    case SS_ENSEMBLE_SPARSE:
      return sparse_multiply (L, L->a_mat, L->n, L->m, in, out, batch, error);
    default:
      return dense_apply (L, in, out, batch, error);
    }
}

/* out (n x batch) = Aᵀ in (m x batch). */
gboolean
dev_adjoint (DevLinop *L, const float *in, float *out, int batch, GError **error)
{
  SsCudaContext *ctx = L->ctx;
  const float one = 1.0f, zero = 0.0f;
  int m = (int) L->m, n = (int) L->n;
  switch ((int) L->kind)
    {
    case CS_CIRCULANT:
      return ss_cuda_apply_operator (ctx, L->problem, in, L->spec, out, TRUE, error);
    case SS_ENSEMBLE_DCT:
      return dct_adjoint (L, in, out, batch, NULL, error);
    case SS_ENSEMBLE_SPARSE:
      return sparse_multiply (L, L->t_mat, L->m, L->n, in, out, batch, error);
    default:
      if (batch == 1)
        return CUBLAS_OK (cublasSgemv (ctx->cublas, CUBLAS_OP_N, n, m, &one, L->dense, n, in, 1,
                                       &zero, out, 1));
      return CUBLAS_OK (cublasSgemm (ctx->cublas, CUBLAS_OP_N, CUBLAS_OP_N, n, batch, m, &one,
                                     L->dense, n, in, m, &zero, out, n));
    }
}

/* A d for NIHT, with the refresh or ||A d||² after it (FOLD). */
gboolean
dev_apply_folded (DevLinop *L, const float *in, float *out, int batch, const NihtFold *fold,
                  GError **error)
{
  SsCudaContext *ctx = L->ctx;
  if (L->kind == SS_ENSEMBLE_DCT)
    return dct_apply (L, in, out, batch, fold, error);
  if (!dev_apply (L, in, out, batch, error))
    return FALSE;
  niht_after_apply_kernel<<<column_grid (ctx, L->m, batch), SS_CUDA_THREADS, 0, ctx->stream>>> (
    fold->r, fold->y, out, L->m, fold->col);
  return LAUNCH_OK ("niht_after_apply_kernel");
}

/* Aᵀ r for NIHT, with the step r −= μ A d before it and the decision
 * (FOLD). */
gboolean
dev_adjoint_folded (DevLinop *L, float *r, float *out, int batch, const NihtFold *fold,
                    GError **error)
{
  SsCudaContext *ctx = L->ctx;
  if (L->kind == SS_ENSEMBLE_DCT)
    return dct_adjoint (L, r, out, batch, fold, error);
  if (fold->decides)
    {
      niht_decide_kernel<<<1, SS_CUDA_THREADS, 0, ctx->stream>>> (fold->col, fold->how);
      if (!LAUNCH_OK ("niht_decide_kernel"))
        return FALSE;
    }
  niht_update_r_kernel<<<column_grid (ctx, L->m, batch), SS_CUDA_THREADS, 0, ctx->stream>>> (
    r, fold->ad, L->m, fold->col);
  return LAUNCH_OK ("niht_update_r_kernel") && dev_adjoint (L, r, out, batch, error);
}

/* Host n-vectors (n x batch) to the solvers' order on the device, and back. */
gboolean
dev_signal_upload (DevLinop *L, const float *host, float *dev, int batch, GError **error)
{
  SsCudaContext *ctx = L->ctx;
  size_t bytes = L->n * batch * sizeof (float);
  if (!L->fft_order)
    return CUDA_OK (cudaMemcpyAsync (dev, host, bytes, cudaMemcpyHostToDevice, ctx->stream));
  if (!CUDA_OK (cudaMemcpyAsync (L->perm, host, bytes, cudaMemcpyHostToDevice, ctx->stream)))
    return FALSE;
  dct_permute_kernel<<<column_grid (ctx, L->n / 2, batch), SS_CUDA_THREADS, 0, ctx->stream>>> (
    L->perm, dev, L->n);
  return LAUNCH_OK ("dct_permute_kernel");
}

gboolean
dev_signal_download (DevLinop *L, const float *dev, float *host, int batch, GError **error)
{
  SsCudaContext *ctx = L->ctx;
  size_t bytes = L->n * batch * sizeof (float);
  if (L->fft_order)
    {
      dct_unpermute_kernel<<<column_grid (ctx, L->n / 2, batch), SS_CUDA_THREADS, 0,
                             ctx->stream>>> (dev, L->perm, L->n, 1.0f);
      if (!LAUNCH_OK ("dct_unpermute_kernel"))
        return FALSE;
      dev = L->perm;
    }
  return CUDA_OK (cudaMemcpyAsync (host, dev, bytes, cudaMemcpyDeviceToHost, ctx->stream))
         && CUDA_OK (cudaStreamSynchronize (ctx->stream));
}

static gboolean
dct_index_rows (DevLinop *L, GError **error)
{
  SsCudaContext *ctx = L->ctx;
  if (!CUDA_OK (cudaMemsetAsync (L->row_of, 0xff, L->n * sizeof (int), ctx->stream)))
    return FALSE;
  dct_index_rows_kernel<<<ss_cuda_blocks (ctx, L->m), SS_CUDA_THREADS, 0, ctx->stream>>> (
    L->rows, L->row_of, L->m);
  return LAUNCH_OK ("dct_index_rows_kernel");
}
