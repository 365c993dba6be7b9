/* ss-cuda-cs.cu: compressed sensing on the GPU (seeds 001, 003, 004): the
 * sensing operators (dense with cuBLAS GEMM/GEMV, the subsampled DCT through
 * a real FFT, sparse CSR with cuSPARSE SpMM), and on a block of problems
 * sharing the operator: NIHT and IHT, FISTA (seed 004's concurrent solves as
 * one GEMM per product) and ALM. The same operator and problems as the CPU:
 * the host SsLinop is uploaded.
 *
 * NIHT without a host wait: every iteration is the same enqueued body of
 * exactly two operator applications. A per-problem flag on the device picks
 * what they compute:
 *   step     d = g on the support T (written on T's list only: d is 0 off
 *            it); A d; μ = ||d||²/||A d||²; x += μg on T and the candidate
 *            x + μg everywhere; the support test (min over T of |x + μg| >
 *            max off T of |μg|, two reductions); r −= μ A d; g = Aᵀ r; then
 *            the decision: keep T, or x = H_k(x + μg) by radix selection and
 *            the problem is marked stale;
 *   refresh  (stale) d = x; r = y − A d; x is left alone; g = Aᵀ r.
 * A support change thus costs one refresh iteration (the extra transform),
 * and a steady iteration is the two transforms plus fused elementwise
 * passes: the residual's updates ride in the DCT's gather and adjoint, the
 * decision in the adjoint's first block. The selection kernels act only on
 * problems whose flag asks for them, and in a graph they sit in a
 * conditional node that the decision skips when no problem does. The top-k
 * is a 3-pass radix select on the keys' bits (11, 10, 10 bits, histogram in
 * shared memory): O(n) and no sort, seed 003's binning made exact.
 */
#include "ss-cuda-internal.h"
#include "ss-cuda-device.cuh"
#include "ss-cs.h"
#include "ss-cs-bench.h"
#include "ss-report.h"

#include <cusparse.h>
#include <math.h>
#include <string.h>

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

static inline dim3
column_grid (const SsCudaContext *ctx, size_t count, int batch)
{
  unsigned blocks = ss_cuda_blocks (ctx, count);
  unsigned per_column = (blocks + batch - 1) / batch;
  return dim3 (per_column > 0 ? per_column : 1, batch);
}

#define COLUMN_LOOP(i, count) \
  for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < (count); \
       i += (size_t) gridDim.x * blockDim.x)

/* ---- per-problem state and small kernels ---------------------------------- */

typedef struct {
  double gw, ad2;            /* ||d||², ||A d||² of this iteration */
  unsigned low_on, high_off; /* the support test's keys, as float bits */
  float mu;
  int stale;                 /* this iteration refreshes the residual */
  int select;                /* this iteration selects a new support */
  unsigned prefix;           /* radix select: the bits of the k-th key found so far */
  unsigned remaining;        /* its rank among the keys with that prefix */
  unsigned ties;             /* keys equal to the k-th still to keep */
  unsigned listed;           /* entries of the support list written by the selection */
  double rho, top;           /* ALM: penalty, max |Aᵀy| */
  double cg_gamma, cg_gamma0, cg_next, cg_q2;   /* CG (HTP, CoSaMP): ||s||², ||A w||² */
  float cg_alpha, cg_beta;
  int cg_active;
  float threshold;           /* FISTA/ALM: this problem's threshold / L */
} Column;

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

/* How the step is decided: K the support's size; ADVANCE (NIHT's loop): a
 * selection makes the next iteration a refresh, and the sums restart from
 * zero for it; TELL: the graph's conditional selection node runs only if
 * some problem selects. */
typedef struct {
  int batch;
  unsigned k;
  bool advance, tell;
  cudaGraphConditionalHandle select_node;
} NihtDecision;

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

/* NIHT's elementwise work on m-vectors, which the subsampled DCT folds into
 * its own passes (a launch and a pass over m floats fewer, twice an
 * iteration; the other operators run the two kernels above): after the
 * gather, the refresh r = y − A d or ||A d||²; as the adjoint reads r, the
 * step r −= μ A d (μ = 0 on a refresh; after a step that changes the
 * support the next iteration refreshes r anyway), and in its first block
 * the decision (niht_decide_block), which no other block of that pass
 * reads. COL NULL: nothing to fold. */
typedef struct {
  Column *col;
  float *r;
  const float *y, *ad;
  bool decides;            /* the adjoint's first block decides the step (HOW) */
  NihtDecision how;
} NihtFold;

/* ---- the operator on the device ------------------------------------------- */

/* The image's operator P C (engine/cuda's device problem) is one more kind. */
#define CS_CIRCULANT SS_N_ENSEMBLES

typedef struct {
  SsCudaContext *ctx;
  SsLinop *host;             /* NULL for the image's circulant operator */
  const SsCudaProblem *problem;   /* the circulant operator's */
  double lipschitz;
  size_t m, n;
  int batch;                 /* the block width the buffers are for */
  /* DCT: the solvers keep their n-vectors in the FFT's even/odd order
   * (v_j = x_2j, v_{n-1-j} = x_{2j+1}): every pass over them is elementwise,
   * so the order is theirs to choose, and the permutation passes around
   * the transforms go (dev_signal_upload/download convert at the ends). */
  gboolean fft_order;
  SsEnsemble kind;
  float *dense;              /* row-major m x n (column-major n x m) */
  float *dense_t;            /* dense: batch x m, A x transposed (see dense_apply) */
  unsigned *rows;            /* DCT: m kept frequencies */
  float *perm;               /* DCT: n x batch, the even/odd reordering */
  float2 *spec;              /* DCT: (n/2+1) x batch */
  int *row_of;               /* DCT: n, the place of frequency k in y, or -1 */
  cufftHandle r2c, c2r;
  cusparseHandle_t sparse;
  cusparseSpMatDescr_t a_mat, t_mat;
  void *a_ptr, *a_col, *a_val, *t_ptr, *t_col, *t_val;
  void *sparse_work;
  size_t sparse_work_bytes;
  size_t bytes;
} DevLinop;

static void
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

static gboolean
upload (SsCudaContext *ctx, void **dev, const void *host, size_t bytes, const char *what,
        GError **error)
{
  return ss_cuda_alloc (ctx, dev, bytes, what, error)
         && CUDA_OK (cudaMemcpy (*dev, host, bytes, cudaMemcpyHostToDevice));
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
  if (!(upload (ctx, &L->a_ptr, h->csr_ptr, (h->rows + 1) * 4, "CSR rows", error)
        && upload (ctx, &L->a_col, h->csr_col, nnz * 4, "CSR columns", error)
        && upload (ctx, &L->a_val, h->csr_val, nnz * 4, "CSR values", error)
        && upload (ctx, &L->t_ptr, h->csr_t_ptr, (h->cols + 1) * 4, "CSR rows", error)
        && upload (ctx, &L->t_col, h->csr_t_col, nnz * 4, "CSR columns", error)
        && upload (ctx, &L->t_val, h->csr_t_val, nnz * 4, "CSR values", error)))
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

static gboolean
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
             && upload (ctx, (void **) &L->dense, host->dense, L->bytes, "the dense matrix", error)
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
      return upload (ctx, (void **) &L->rows, host->dct_rows, L->m * 4, "DCT rows", error)
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
static gboolean
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
static gboolean
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
static gboolean
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
static gboolean
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
static gboolean
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
static gboolean
dev_signal_upload (DevLinop *L, const float *host, float *dev, int batch, GError **error)
{
  SsCudaContext *ctx = L->ctx;
  size_t bytes = L->n * batch * sizeof (float);
  if (!L->fft_order)
    return CUDA_OK (cudaMemcpy (dev, host, bytes, cudaMemcpyHostToDevice));
  if (!CUDA_OK (cudaMemcpy (L->perm, host, bytes, cudaMemcpyHostToDevice)))
    return FALSE;
  dct_permute_kernel<<<column_grid (ctx, L->n / 2, batch), SS_CUDA_THREADS, 0, ctx->stream>>> (
    L->perm, dev, L->n);
  return LAUNCH_OK ("dct_permute_kernel");
}

static gboolean
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

__device__ __forceinline__ float
cs_key (float v, bool nonneg)
{
  return nonneg ? fmaxf (v, 0.0f) : fabsf (v);
}

__device__ __forceinline__ void
block_min_max (float low, float high, unsigned *low_out, unsigned *high_out)
{
  for (int offset = 16; offset > 0; offset >>= 1)
    {
      low = fminf (low, __shfl_down_sync (0xffffffffu, low, offset));
      high = fmaxf (high, __shfl_down_sync (0xffffffffu, high, offset));
    }
  __shared__ float lows[32], highs[32];
  int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (lane == 0)
    {
      lows[warp] = low;
      highs[warp] = high;
    }
  __syncthreads ();
  if (warp == 0)
    {
      int warps = (blockDim.x + 31) >> 5;
      low = lane < warps ? lows[lane] : INFINITY;
      high = lane < warps ? highs[lane] : 0.0f;
      for (int offset = 16; offset > 0; offset >>= 1)
        {
          low = fminf (low, __shfl_down_sync (0xffffffffu, low, offset));
          high = fmaxf (high, __shfl_down_sync (0xffffffffu, high, offset));
        }
      /* Non-negative floats order as their bits do. */
      if (lane == 0)
        {
          atomicMin (low_out, __float_as_uint (low));
          atomicMax (high_out, __float_as_uint (high));
        }
    }
}

/* ---- NIHT's step: its small kernels --------------------------------------- */

__global__ void
niht_reset_kernel (Column *col, int batch)
{
  int b = blockIdx.x * blockDim.x + threadIdx.x;
  if (b >= batch)
    return;
  col[b].gw = col[b].ad2 = 0;
  col[b].low_on = __float_as_uint (INFINITY);
  col[b].high_off = 0;
  col[b].select = 0;
}

/* The direction on the support list (d is 0 off the support: the selection
 * clears it, and HTP's least squares keeps its CG direction there): d =
 * stale ? x : g there; ||d||² (step only). A pass over k entries, not n. */
__global__ void
niht_direction_listed_kernel (const float *__restrict__ x, const float *__restrict__ g,
                              const unsigned *__restrict__ support, float *__restrict__ d,
                              size_t n, unsigned k, Column *__restrict__ col)
{
  size_t off = blockIdx.y * n;
  const unsigned *list = support + (size_t) blockIdx.y * k;
  bool stale = col[blockIdx.y].stale;
  double v[1] = { 0.0 };
  COLUMN_LOOP (j, k)
    {
      size_t i = off + list[j];
      float di = stale ? x[i] : g[i];
      d[i] = di;
      v[0] += (double) di * di;
    }
  if (!stale)
    ss_block_sum_to<1> (v, &col[blockIdx.y].gw);
}

/* μ, the support test's two reductions, and the move, made before the test
 * is decided (no pass can wait for a whole-grid reduction): the candidate
 * x + μg everywhere, for a selection, and x += μg on the support, which is
 * the kept step x + μd (x and d are 0 off it); a selection then overwrites
 * all of x. OMEGA > 0: IHT's fixed step. */
__global__ void
niht_step_kernel (float *__restrict__ x, const float *__restrict__ g,
                  const unsigned char *__restrict__ mask, float *__restrict__ trial, size_t n,
                  Column *__restrict__ col, float omega, bool nonneg)
{
  Column *c = &col[blockIdx.y];
  if (c->stale)
    {
      /* A refresh moves nothing: r keeps its refreshed value. */
      if (blockIdx.x == 0 && threadIdx.x == 0)
        c->mu = 0.0f;
      return;
    }
  float mu = omega > 0 ? omega : (c->ad2 > 0 ? (float) (c->gw / c->ad2) : 0.0f);
  if (blockIdx.x == 0 && threadIdx.x == 0)
    c->mu = mu;
  size_t off = blockIdx.y * n;
  float low = INFINITY, high = 0.0f;
  COLUMN_LOOP (i, n)
    {
      float t = x[off + i] + mu * g[off + i], key = cs_key (t, nonneg);
      trial[off + i] = t;
      if (mask[off + i])
        {
          low = fminf (low, key);
          x[off + i] = t;
        }
      else
        high = fmaxf (high, key);
    }
  block_min_max (low, high, &c->low_on, &c->high_off);
}


/* ---- radix select (problems with col->select set) ------------------------- */

#define RADIX_BINS 2048

/* Histogram of the keys' bits [SHIFT, SHIFT + BITS) among keys whose higher
 * bits equal the prefix found so far. */
__global__ void
select_histogram_kernel (const float *__restrict__ v, size_t n, const Column *__restrict__ col,
                         unsigned *__restrict__ hist, int shift, int bits, bool nonneg)
{
  const Column *c = &col[blockIdx.y];
  if (!c->select)
    return;
  __shared__ unsigned local[RADIX_BINS];
  for (int i = threadIdx.x; i < (1 << bits); i += blockDim.x)
    local[i] = 0;
  __syncthreads ();
  unsigned high_mask = shift + bits >= 32 ? 0u : ~0u << (shift + bits);
  size_t off = blockIdx.y * n;
  COLUMN_LOOP (i, n)
    {
      unsigned key = __float_as_uint (cs_key (v[off + i], nonneg));
      if ((key & high_mask) == c->prefix)
        atomicAdd (&local[(key >> shift) & ((1u << bits) - 1)], 1u);
    }
  __syncthreads ();
  unsigned *h = hist + (size_t) blockIdx.y * RADIX_BINS;
  for (int i = threadIdx.x; i < (1 << bits); i += blockDim.x)
    if (local[i])
      atomicAdd (&h[i], local[i]);
}

/* One block per problem finds the bin holding the remaining-th largest key:
 * each thread sums a run of bins, a scan over the runs (in shared memory)
 * gives the keys above each run, and the one thread whose run holds the
 * rank extends the prefix. The histogram is then cleared for the next pass. */
__global__ void
select_bin_kernel (Column *col, unsigned *hist, int shift, int bits, int batch)
{
  Column *c = &col[blockIdx.x];
  unsigned *h = hist + (size_t) blockIdx.x * RADIX_BINS;
  __shared__ unsigned run_sum[SS_CUDA_THREADS], above[SS_CUDA_THREADS];
  __shared__ unsigned rank;
  const int bins = 1 << bits, per = (bins + blockDim.x - 1) / blockDim.x;
  const int lo = threadIdx.x * per;
  bool active = c->select;
  unsigned mine[RADIX_BINS / SS_CUDA_THREADS], sum = 0;
  for (int j = 0; j < per; j++)
    {
      mine[j] = lo + j < bins ? h[lo + j] : 0;
      sum += mine[j];
    }
  run_sum[threadIdx.x] = sum;
  if (threadIdx.x == 0)
    rank = c->remaining;
  __syncthreads ();
  if (threadIdx.x == 0)
    for (int t = blockDim.x - 1, acc = 0; t >= 0; t--)
      {
        above[t] = (unsigned) acc;
        acc += run_sum[t];
      }
  __syncthreads ();
  unsigned seen = above[threadIdx.x];
  if (active && seen < rank && seen + sum >= rank)
    for (int j = per - 1; j >= 0; j--)
      {
        if (seen + mine[j] >= rank)
          {
            c->prefix |= (unsigned) (lo + j) << shift;
            c->remaining = rank - seen;
            /* After the last pass: the keys equal to the k-th still to keep. */
            c->ties = rank - seen;
            break;
          }
        seen += mine[j];
      }
  for (int j = 0; j < per; j++)
    if (lo + j < bins)
      h[lo + j] = 0;
}

/* x = the candidate's entries with keys above the k-th (and as many equal to
 * it as the rank asks), mask = their places; WRITE_X false keeps x (NIHT's
 * start keeps x = 0 and takes the support of Aᵀy). With SUPPORT (NIHT's),
 * the places also go to that list of K a problem, in no order, and the
 * direction D, which NIHT writes on the support only, is cleared. */
__global__ void
select_threshold_kernel (const float *v, float *x,   /* may be the same array (CoSaMP) */
                         unsigned char *__restrict__ mask, size_t n, Column *__restrict__ col,
                         bool nonneg, bool write_x, unsigned *__restrict__ support,
                         float *__restrict__ d, unsigned k)
{
  Column *c = &col[blockIdx.y];
  if (!c->select)
    return;
  size_t off = blockIdx.y * n;
  float kth = __uint_as_float (c->prefix);
  COLUMN_LOOP (i, n)
    {
      float vi = v[off + i], key = cs_key (vi, nonneg);
      bool keep = key > kth || (key == kth && atomicSub (&c->ties, 1u) - 1u < 0x80000000u);
      mask[off + i] = keep;
      if (write_x)
        x[off + i] = keep ? (nonneg ? fmaxf (vi, 0.0f) : vi) : 0.0f;
      if (support)
        {
          d[off + i] = 0.0f;
          unsigned place = keep ? atomicAdd (&c->listed, 1u) : k;
          if (place < k)
            support[(size_t) blockIdx.y * k + place] = (unsigned) i;
        }
    }
}

typedef struct {
  SsCudaContext *ctx;
  size_t n, m;
  int batch;
  size_t k;
  gboolean nonneg;
  Column *col;
  unsigned *hist;
  unsigned *support;       /* NIHT: the support as a list of k a problem, or NULL */
  float *direction;        /* NIHT: d, cleared with each new support */
} Selector;

/* Top-k of V for the problems whose select flag is set (no host wait). */
static gboolean
select_top_k (Selector *s, const float *v, float *x, unsigned char *mask, gboolean write_x,
              GError **error)
{
  SsCudaContext *ctx = s->ctx;
  /* Keys are >= 0: 31 bits, in passes of 11, 10 and 10. */
  const int shifts[3] = { 20, 10, 0 }, bits[3] = { 11, 10, 10 };
  dim3 grid = column_grid (ctx, s->n, s->batch);
  for (int pass = 0; pass < 3; pass++)
    {
      select_histogram_kernel<<<grid, SS_CUDA_THREADS, 0, ctx->stream>>> (
        v, s->n, s->col, s->hist, shifts[pass], bits[pass], s->nonneg);
      if (!LAUNCH_OK ("select_histogram_kernel"))
        return FALSE;
      select_bin_kernel<<<s->batch, SS_CUDA_THREADS, 0, ctx->stream>>> (
        s->col, s->hist, shifts[pass], bits[pass], s->batch);
      if (!LAUNCH_OK ("select_bin_kernel"))
        return FALSE;
    }
  select_threshold_kernel<<<grid, SS_CUDA_THREADS, 0, ctx->stream>>> (
    v, x, mask, s->n, s->col, s->nonneg, write_x, s->support, s->direction, (unsigned) s->k);
  return LAUNCH_OK ("select_threshold_kernel");
}

/* ---- NIHT / IHT ----------------------------------------------------------- */

typedef struct {
  DevLinop *L;
  Selector sel;
  float *y, *x, *r, *g, *d, *ad, *trial;
  unsigned char *mask;
  unsigned char *merged;   /* CoSaMP: support ∪ the gradient's 2k largest */
  int inner;               /* CG steps a projection (HTP, CoSaMP) */
  float omega;        /* IHT's fixed step, 0 for NIHT */
  cudaGraphExec_t *graph;  /* one iteration, captured on first use (the owner frees it) */
} Niht;

static unsigned
small_blocks (int batch)
{
  return (unsigned) ((batch + SS_CUDA_THREADS - 1) / SS_CUDA_THREADS);
}

__global__ void
force_select_kernel (Column *col, int batch, unsigned k)
{
  int b = blockIdx.x * blockDim.x + threadIdx.x;
  if (b < batch)
    {
      col[b].select = 1;
      col[b].prefix = 0;
      col[b].remaining = k;
      col[b].listed = 0;
      col[b].stale = 0;
      col[b].mu = 1.0f;
    }
}

__global__ void
residual_kernel (float *__restrict__ r, const float *__restrict__ y, size_t count)
{
  for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < count;
       i += (size_t) gridDim.x * blockDim.x)
    r[i] = y[i] - r[i];
}

/* r = y − A x, g = Aᵀ r. */
static gboolean
niht_fresh_gradient (Niht *s, GError **error)
{
  SsCudaContext *ctx = s->L->ctx;
  size_t mb = s->L->m * s->sel.batch;
  if (!dev_apply (s->L, s->x, s->r, s->sel.batch, error))
    return FALSE;
  residual_kernel<<<ss_cuda_blocks (ctx, mb), SS_CUDA_THREADS, 0, ctx->stream>>> (s->r, s->y, mb);
  return LAUNCH_OK ("residual_kernel") && dev_adjoint (s->L, s->r, s->g, s->sel.batch, error);
}

/* x stays (0 from a cold start); the support is the top-k of Aᵀr, so the
 * first step moves on it (as on the CPU). */
static gboolean
niht_start (Niht *s, GError **error)
{
  SsCudaContext *ctx = s->L->ctx;
  if (!niht_fresh_gradient (s, error))
    return FALSE;
  force_select_kernel<<<small_blocks (s->sel.batch), SS_CUDA_THREADS, 0, ctx->stream>>> (
    s->sel.col, s->sel.batch, (unsigned) s->sel.k);
  if (!LAUNCH_OK ("force_select_kernel")
      || !select_top_k (&s->sel, s->g, s->x, s->mask, FALSE, error))
    return FALSE;
  niht_reset_kernel<<<small_blocks (s->sel.batch), SS_CUDA_THREADS, 0, ctx->stream>>> (
    s->sel.col, s->sel.batch);
  return LAUNCH_OK ("niht_reset_kernel");
}

/* An iteration is two parts: the step, its gradient and the decision, then
 * the selection, which changes x and the support but not r or g. SELECT_NODE,
 * when TELL: the graph's conditional node around the selection, which the
 * decision sets. */
static gboolean
niht_step (Niht *s, cudaGraphConditionalHandle select_node, bool tell, GError **error)
{
  SsCudaContext *ctx = s->L->ctx;
  size_t n = s->L->n;
  int batch = s->sel.batch;
  Column *col = s->sel.col;
  niht_direction_listed_kernel<<<column_grid (ctx, s->sel.k, batch), SS_CUDA_THREADS, 0,
                                 ctx->stream>>> (s->x, s->g, s->sel.support, s->d, n,
                                                 (unsigned) s->sel.k, col);
  NihtFold fold = { col, s->r, s->y, s->ad, true,
                    { batch, (unsigned) s->sel.k, true, tell, select_node } };
  if (!LAUNCH_OK ("niht_direction_listed_kernel")
      || !dev_apply_folded (s->L, s->d, s->ad, batch, &fold, error))
    return FALSE;
  niht_step_kernel<<<column_grid (ctx, n, batch), SS_CUDA_THREADS, 0, ctx->stream>>> (
    s->x, s->g, s->mask, s->trial, n, col, s->omega, s->sel.nonneg);
  return LAUNCH_OK ("niht_step_kernel")
         && dev_adjoint_folded (s->L, s->r, s->g, batch, &fold, error);
}

static gboolean
niht_select (Niht *s, GError **error)
{
  return select_top_k (&s->sel, s->trial, s->x, s->mask, TRUE, error);
}

/* One iteration: exactly two operator applications, no host wait. */
static gboolean
niht_iteration (Niht *s, GError **error)
{
  return niht_step (s, 0, false, error) && niht_select (s, error);
}

/* Captures what PART enqueues into GRAPH; LEAF, if not NULL, gets the one
 * node the captured work ends on (the stream is in order, so there is one). */
typedef gboolean (*NihtPart) (Niht *h, cudaGraphConditionalHandle select_node, GError **error);

static gboolean
capture_part (Niht *h, cudaGraph_t graph, NihtPart part, cudaGraphConditionalHandle select_node,
              cudaGraphNode_t *leaf, GError **error)
{
  cudaStream_t stream = h->L->ctx->stream;
  if (!CUDA_OK (cudaStreamBeginCaptureToGraph (stream, graph, NULL, NULL, 0,
                                               cudaStreamCaptureModeThreadLocal)))
    return FALSE;
  GError *part_error = NULL;
  gboolean ok = part (h, select_node, &part_error);
  const cudaGraphNode_t *ends = NULL;
  size_t n_ends = 0;
  cudaStreamCaptureStatus status;
  cudaError_t info = cudaStreamGetCaptureInfo (stream, &status, NULL, NULL, &ends, NULL, &n_ends);
  if (ok && leaf && info == cudaSuccess && n_ends == 1)
    *leaf = ends[0];
  cudaGraph_t same = NULL;
  cudaError_t ended = cudaStreamEndCapture (stream, &same);
  if (!ok)
    {
      g_propagate_error (error, part_error);
      return FALSE;
    }
  if (!CUDA_OK (info) || !CUDA_OK (ended))
    return FALSE;
  if (leaf && n_ends != 1)
    {
      g_set_error (error, SS_ERROR, SS_ERROR_CUDA,
                   "capturing NIHT's iteration: %zu end nodes where one was expected", n_ends);
      return FALSE;
    }
  return TRUE;
}

static gboolean
part_step (Niht *h, cudaGraphConditionalHandle select_node, GError **error)
{
  return niht_step (h, select_node, true, error);
}

static gboolean
part_select (Niht *h, cudaGraphConditionalHandle select_node, GError **error)
{
  return niht_select (h, error);
}

/* The iteration captured as a graph (its buffers are fixed for the solve),
 * with the selection inside a conditional node that the decision sets. In
 * the steady state no problem changes its support, and the selection's
 * seven launches (each a whole grid of blocks that would return at once)
 * are then skipped on the device. */
static gboolean
niht_capture (Niht *h, GError **error)
{
  cudaGraph_t graph = NULL;
  cudaGraphConditionalHandle select_node = 0;
  cudaGraphNode_t decided = NULL, conditional = NULL;
  cudaGraphNodeParams params = {};
  if (!CUDA_OK (cudaGraphCreate (&graph, 0)))
    return FALSE;
  gboolean ok = CUDA_OK (cudaGraphConditionalHandleCreate (&select_node, graph, 0,
                                                           cudaGraphCondAssignDefault))
                && capture_part (h, graph, part_step, select_node, &decided, error);
  if (ok)
    {
      params.type = cudaGraphNodeTypeConditional;
      params.conditional.handle = select_node;
      params.conditional.type = cudaGraphCondTypeIf;
      params.conditional.size = 1;
      ok = CUDA_OK (cudaGraphAddNode (&conditional, graph, &decided, NULL, 1, &params));
    }
  ok = ok
       && capture_part (h, params.conditional.phGraph_out[0], part_select, select_node, NULL,
                        error)
       && CUDA_OK (cudaGraphInstantiate (h->graph, graph, 0));
  cudaGraphDestroy (graph);
  return ok;
}

/* ITERATIONS iterations; with graphs on (the context's setting), one
 * iteration is captured once and replayed: its small launches then cost
 * one graph launch. */
static gboolean
niht_run (Niht *h, int iterations, GError **error)
{
  SsCudaContext *ctx = h->L->ctx;
  if (!ctx->use_graphs || h->graph == NULL)
    {
      for (int i = 0; i < iterations; i++)
        if (!niht_iteration (h, error))
          return FALSE;
      return TRUE;
    }
  if (*h->graph == NULL && !niht_capture (h, error))
    return FALSE;
  for (int i = 0; i < iterations; i++)
    if (!CUDA_OK (cudaGraphLaunch (*h->graph, ctx->stream)))
      return FALSE;
  return TRUE;
}

/* ---- least squares on a support: HTP and CoSaMP (CGLS, device scalars) ----- */

__global__ void
cg_reset_kernel (Column *col, int batch, bool first)
{
  int b = blockIdx.x * blockDim.x + threadIdx.x;
  if (b >= batch)
    return;
  col[b].cg_q2 = 0;
  col[b].cg_next = 0;
  if (first)
    col[b].cg_gamma = 0;
}

/* s = Aᵀr on the support (in place); ||s||² into cg_gamma (FIRST) or cg_next. */
__global__ void
cg_restrict_kernel (float *__restrict__ g, const unsigned char *__restrict__ mask, size_t n,
                    Column *__restrict__ col, bool first)
{
  size_t off = blockIdx.y * n;
  double v[1] = { 0.0 };
  COLUMN_LOOP (i, n)
    {
      float gi = mask[off + i] ? g[off + i] : 0.0f;
      g[off + i] = gi;
      v[0] += (double) gi * gi;
    }
  Column *c = &col[blockIdx.y];
  ss_block_sum_to<1> (v, first ? &c->cg_gamma : &c->cg_next);
}

__global__ void
cg_start_kernel (Column *col, int batch)
{
  int b = blockIdx.x * blockDim.x + threadIdx.x;
  if (b >= batch)
    return;
  col[b].cg_gamma0 = col[b].cg_gamma;
  col[b].cg_active = col[b].cg_gamma > 0;
}

__global__ void
sum_squares_kernel (const float *__restrict__ v, size_t m, Column *__restrict__ col)
{
  size_t off = blockIdx.y * m;
  double acc[1] = { 0.0 };
  COLUMN_LOOP (i, m)
    acc[0] += (double) v[off + i] * v[off + i];
  ss_block_sum_to<1> (acc, &col[blockIdx.y].cg_q2);
}

__global__ void
cg_step_size_kernel (Column *col, int batch)
{
  int b = blockIdx.x * blockDim.x + threadIdx.x;
  if (b >= batch)
    return;
  Column *c = &col[b];
  c->cg_alpha = c->cg_active && c->cg_q2 > 0 ? (float) (c->cg_gamma / c->cg_q2) : 0.0f;
}

/* v += α w (x by the direction, or r by −A w with NEGATE). */
__global__ void
cg_axpy_kernel (float *__restrict__ v, const float *__restrict__ w, size_t len,
                const Column *__restrict__ col, bool negate)
{
  float a = col[blockIdx.y].cg_alpha;
  if (a == 0.0f)
    return;
  if (negate)
    a = -a;
  size_t off = blockIdx.y * len;
  COLUMN_LOOP (i, len)
    v[off + i] += a * w[off + i];
}

/* β = γ'/γ; past float32's seven digits CG only wanders: stop there. */
__global__ void
cg_beta_kernel (Column *col, int batch)
{
  int b = blockIdx.x * blockDim.x + threadIdx.x;
  if (b >= batch)
    return;
  Column *c = &col[b];
  c->cg_beta = c->cg_gamma > 0 ? (float) (c->cg_next / c->cg_gamma) : 0.0f;
  c->cg_gamma = c->cg_next;
  if (c->cg_next <= 1e-14 * c->cg_gamma0)
    c->cg_active = 0;
}

__global__ void
cg_direction_kernel (float *__restrict__ w, const float *__restrict__ g, size_t n,
                     const Column *__restrict__ col)
{
  const Column *c = &col[blockIdx.y];
  size_t off = blockIdx.y * n;
  if (!c->cg_active)
    COLUMN_LOOP (i, n)
      w[off + i] = 0.0f;
  else
    COLUMN_LOOP (i, n)
      w[off + i] = g[off + i] + c->cg_beta * w[off + i];
}

/* x = argmin ||y − A z|| over z on MASKS, by CGLS from x for h->inner
 * steps; leaves r = y − A x and g free. The direction lives in d, A d in ad. */
static gboolean
project_on_supports (Niht *h, const unsigned char *masks, GError **error)
{
  SsCudaContext *ctx = h->L->ctx;
  size_t n = h->L->n, m = h->L->m;
  int batch = h->sel.batch;
  Column *col = h->sel.col;
  dim3 gn = column_grid (ctx, n, batch), gm = column_grid (ctx, m, batch);
  unsigned small = small_blocks (batch);
  if (!niht_fresh_gradient (h, error))
    return FALSE;
  cg_reset_kernel<<<small, SS_CUDA_THREADS, 0, ctx->stream>>> (col, batch, true);
  cg_restrict_kernel<<<gn, SS_CUDA_THREADS, 0, ctx->stream>>> (h->g, masks, n, col, true);
  cg_start_kernel<<<small, SS_CUDA_THREADS, 0, ctx->stream>>> (col, batch);
  if (!LAUNCH_OK ("cg start kernels")
      || !CUDA_OK (cudaMemcpyAsync (h->d, h->g, n * batch * 4, cudaMemcpyDeviceToDevice,
                                    ctx->stream)))
    return FALSE;
  for (int it = 0; it < h->inner; it++)
    {
      if (!dev_apply (h->L, h->d, h->ad, batch, error))
        return FALSE;
      cg_reset_kernel<<<small, SS_CUDA_THREADS, 0, ctx->stream>>> (col, batch, false);
      sum_squares_kernel<<<gm, SS_CUDA_THREADS, 0, ctx->stream>>> (h->ad, m, col);
      cg_step_size_kernel<<<small, SS_CUDA_THREADS, 0, ctx->stream>>> (col, batch);
      cg_axpy_kernel<<<gn, SS_CUDA_THREADS, 0, ctx->stream>>> (h->x, h->d, n, col, false);
      cg_axpy_kernel<<<gm, SS_CUDA_THREADS, 0, ctx->stream>>> (h->r, h->ad, m, col, true);
      if (!LAUNCH_OK ("cg step kernels") || !dev_adjoint (h->L, h->r, h->g, batch, error))
        return FALSE;
      cg_restrict_kernel<<<gn, SS_CUDA_THREADS, 0, ctx->stream>>> (h->g, masks, n, col, false);
      cg_beta_kernel<<<small, SS_CUDA_THREADS, 0, ctx->stream>>> (col, batch);
      cg_direction_kernel<<<gn, SS_CUDA_THREADS, 0, ctx->stream>>> (h->d, h->g, n, col);
      if (!LAUNCH_OK ("cg direction kernels"))
        return FALSE;
    }
  /* The fresh residual (and gradient) the next iteration starts from. */
  return niht_fresh_gradient (h, error);
}

__global__ void
nonneg_kernel (float *x, size_t count)
{
  for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < count;
       i += (size_t) gridDim.x * blockDim.x)
    x[i] = fmaxf (x[i], 0.0f);
}

/* HTP: NIHT's step picks the support (selection only where it changed),
 * then the least-squares fit on it. */
static gboolean
htp_iteration (Niht *h, GError **error)
{
  SsCudaContext *ctx = h->L->ctx;
  size_t n = h->L->n;
  int batch = h->sel.batch;
  Column *col = h->sel.col;
  dim3 gn = column_grid (ctx, n, batch);
  niht_reset_kernel<<<small_blocks (batch), SS_CUDA_THREADS, 0, ctx->stream>>> (col, batch);
  niht_direction_listed_kernel<<<column_grid (ctx, h->sel.k, batch), SS_CUDA_THREADS, 0,
                                 ctx->stream>>> (h->x, h->g, h->sel.support, h->d, n,
                                                 (unsigned) h->sel.k, col);
  NihtFold fold = { col, h->r, h->y, h->ad, false, {} };
  if (!LAUNCH_OK ("niht_direction_listed_kernel")
      || !dev_apply_folded (h->L, h->d, h->ad, batch, &fold, error))
    return FALSE;
  niht_step_kernel<<<gn, SS_CUDA_THREADS, 0, ctx->stream>>> (h->x, h->g, h->mask, h->trial, n, col,
                                                             0.0f, h->sel.nonneg);
  NihtDecision how = { batch, (unsigned) h->sel.k, false, false, 0 };
  niht_decide_kernel<<<1, SS_CUDA_THREADS, 0, ctx->stream>>> (col, how);
  if (!LAUNCH_OK ("htp kernels") || !select_top_k (&h->sel, h->trial, h->x, h->mask, TRUE, error)
      || !project_on_supports (h, h->mask, error))
    return FALSE;
  if (h->sel.nonneg)
    {
      nonneg_kernel<<<ss_cuda_blocks (ctx, n * batch), SS_CUDA_THREADS, 0, ctx->stream>>> (
        h->x, n * batch);
      return LAUNCH_OK ("nonneg_kernel") && niht_fresh_gradient (h, error);
    }
  return TRUE;
}

__global__ void
merge_masks_kernel (unsigned char *__restrict__ merged, const unsigned char *__restrict__ mask,
                    size_t count)
{
  for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < count;
       i += (size_t) gridDim.x * blockDim.x)
    merged[i] |= mask[i];
}

/* Marks every problem to select the WIDTH largest keys. */
static gboolean
select_all (Niht *h, size_t width, GError **error)
{
  SsCudaContext *ctx = h->L->ctx;
  force_select_kernel<<<small_blocks (h->sel.batch), SS_CUDA_THREADS, 0, ctx->stream>>> (
    h->sel.col, h->sel.batch, (unsigned) width);
  return LAUNCH_OK ("force_select_kernel");
}

/* CoSaMP: support ∪ the gradient's 2k largest (either sign, as on the CPU),
 * least squares on that, keep the k largest, fresh residual. */
static gboolean
cosamp_iteration (Niht *h, GError **error)
{
  SsCudaContext *ctx = h->L->ctx;
  size_t n = h->L->n, nb = n * h->sel.batch;
  Selector wide = h->sel;
  wide.k = MIN (2 * h->sel.k, n);
  wide.nonneg = FALSE;
  wide.support = NULL;   /* a wider set than the support list holds */
  wide.direction = NULL;
  if (!select_all (h, wide.k, error) || !select_top_k (&wide, h->g, h->x, h->merged, FALSE, error))
    return FALSE;
  merge_masks_kernel<<<ss_cuda_blocks (ctx, nb), SS_CUDA_THREADS, 0, ctx->stream>>> (h->merged,
                                                                                    h->mask, nb);
  if (!LAUNCH_OK ("merge_masks_kernel") || !project_on_supports (h, h->merged, error)
      || !select_all (h, h->sel.k, error)
      || !select_top_k (&h->sel, h->x, h->x, h->mask, TRUE, error))
    return FALSE;
  niht_reset_kernel<<<small_blocks (h->sel.batch), SS_CUDA_THREADS, 0, ctx->stream>>> (
    h->sel.col, h->sel.batch);
  return LAUNCH_OK ("niht_reset_kernel") && niht_fresh_gradient (h, error);
}

/* ---- FISTA and ALM ---------------------------------------------------------- */

__global__ void
fista_prox_kernel (float *__restrict__ x, float *__restrict__ v, const float *__restrict__ grad,
                   size_t n, const Column *__restrict__ col, float step, float beta, bool nonneg)
{
  float th = col[blockIdx.y].threshold;
  size_t off = blockIdx.y * n;
  COLUMN_LOOP (i, n)
    {
      float a = v[off + i] - step * grad[off + i];
      float xn = ss_soft (a, th, nonneg);
      v[off + i] = xn + beta * (xn - x[off + i]);
      x[off + i] = xn;
    }
}

__global__ void
subtract_kernel (float *__restrict__ a, const float *__restrict__ b, size_t count)
{
  for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < count;
       i += (size_t) gridDim.x * blockDim.x)
    a[i] -= b[i];
}

typedef struct {
  DevLinop *L;
  int batch;
  float *x, *v, *av, *grad, *y;
  Column *col;
  double lipschitz;
  gboolean nonneg;
} Fista;

/* ITERATIONS FISTA steps towards TARGET from x (momentum restarted). */
static gboolean
fista_run (Fista *s, const float *target, int iterations, GError **error)
{
  SsCudaContext *ctx = s->L->ctx;
  size_t n = s->L->n, m = s->L->m, nb = n * s->batch, mb = m * s->batch;
  if (!CUDA_OK (cudaMemcpyAsync (s->v, s->x, nb * 4, cudaMemcpyDeviceToDevice, ctx->stream)))
    return FALSE;
  double t = 1.0;
  float step = (float) (1.0 / s->lipschitz);
  dim3 gn = column_grid (ctx, n, s->batch);
  for (int it = 0; it < iterations; it++)
    {
      double t_next = 0.5 * (1.0 + sqrt (1.0 + 4.0 * t * t));
      float beta = (float) ((t - 1.0) / t_next);
      t = t_next;
      if (!dev_apply (s->L, s->v, s->av, s->batch, error))
        return FALSE;
      subtract_kernel<<<ss_cuda_blocks (ctx, mb), SS_CUDA_THREADS, 0, ctx->stream>>> (s->av,
                                                                                    target, mb);
      if (!LAUNCH_OK ("subtract_kernel") || !dev_adjoint (s->L, s->av, s->grad, s->batch, error))
        return FALSE;
      fista_prox_kernel<<<gn, SS_CUDA_THREADS, 0, ctx->stream>>> (s->x, s->v, s->grad, n, s->col,
                                                                  step, beta, s->nonneg);
      if (!LAUNCH_OK ("fista_prox_kernel"))
        return FALSE;
    }
  return TRUE;
}

__global__ void
set_threshold_kernel (Column *col, int batch, float threshold)
{
  int b = blockIdx.x * blockDim.x + threadIdx.x;
  if (b < batch)
    col[b].threshold = threshold;
}

/* max |Aᵀy| per problem, into col->high_off (for ALM's first ρ). */
__global__ void
column_max_kernel (const float *__restrict__ v, size_t n, Column *__restrict__ col)
{
  size_t off = blockIdx.y * n;
  float high = 0.0f;
  COLUMN_LOOP (i, n)
    high = fmaxf (high, fabsf (v[off + i]));
  /* Into high_off (zeroed with the rest of the column state). */
  Column *c = &col[blockIdx.y];
  block_min_max (INFINITY, high, &c->low_on, &c->high_off);
}

__global__ void
alm_init_kernel (Column *col, int batch, bool bp)
{
  int b = blockIdx.x * blockDim.x + threadIdx.x;
  if (b < batch)
    {
      float top = __uint_as_float (col[b].high_off);
      col[b].rho = bp ? 2.0 / fmax ((double) top, 1e-30) : 1.0;
    }
}

/* target = y − e + λ/ρ; the threshold w/(ρL). */
__global__ void
alm_target_kernel (float *__restrict__ target, const float *__restrict__ y,
                   const float *__restrict__ e, const float *__restrict__ lambda, size_t m,
                   Column *__restrict__ col, float weight, double lipschitz)
{
  Column *c = &col[blockIdx.y];
  float rho = (float) c->rho;
  if (blockIdx.x == 0 && threadIdx.x == 0)
    c->threshold = (float) (weight / (c->rho * lipschitz));
  size_t off = blockIdx.y * m;
  COLUMN_LOOP (i, m)
    target[off + i] = y[off + i] - e[off + i] + lambda[off + i] / rho;
}

/* r = y − A x given A x in R; e and λ move; ρ grows for basis pursuit. */
__global__ void
alm_multiplier_kernel (float *__restrict__ ax, const float *__restrict__ y, float *__restrict__ e,
                       float *__restrict__ lambda, size_t m, const Column *__restrict__ col,
                       bool bp)
{
  float p = (float) col[blockIdx.y].rho;
  size_t off = blockIdx.y * m;
  COLUMN_LOOP (i, m)
    {
      float r = y[off + i] - ax[off + i];
      float ei = bp ? 0.0f : (p * r + lambda[off + i]) / (1.0f + p);
      e[off + i] = ei;
      lambda[off + i] += p * (r - ei);
    }
}

__global__ void
alm_grow_kernel (Column *col, int batch)
{
  int b = blockIdx.x * blockDim.x + threadIdx.x;
  if (b < batch)
    col[b].rho *= 1.5;
}

/* ---- the solve -------------------------------------------------------------- */

typedef struct {
  void *ptr;
  size_t bytes;
} DevBuffer;

static gboolean
alloc_all (SsCudaContext *ctx, DevBuffer *buffers, int count, GError **error)
{
  for (int i = 0; i < count; i++)
    if (buffers[i].bytes
        && !ss_cuda_alloc (ctx, (void **) buffers[i].ptr, buffers[i].bytes, "cs buffers", error))
      return FALSE;
  return TRUE;
}

typedef struct {
  SsCudaContext *ctx;
  const SsCsParams *params;
  DevLinop L;
  int batch;
  float *y, *x, *r, *g, *d, *ad, *trial, *e, *lambda, *target;
  unsigned char *mask, *merged;
  Column *col;
  unsigned *hist;
  unsigned *support;         /* k x batch: the support as a list (NIHT) */
  cudaGraphExec_t niht_graph;
  gboolean borrowed_y;       /* y is the device problem's */
} CsDevice;

static void
cs_device_free (CsDevice *s)
{
  SsCudaContext *ctx = s->ctx;
  void *buffers[] = { s->borrowed_y ? NULL : s->y, s->x, s->r, s->g, s->d, s->ad, s->trial, s->e,
                      s->lambda, s->target, s->mask, s->merged, s->col, s->hist,
                      s->support };
  for (gsize i = 0; i < G_N_ELEMENTS (buffers); i++)
    ss_cuda_free (ctx, buffers[i], 0);
  if (s->niht_graph)
    cudaGraphExecDestroy (s->niht_graph);
  if (s->L.ctx)
    dev_linop_free (&s->L);
}

/* The work buffers of a block solve on L (already made); Y is given by the
 * caller (uploaded or borrowed). */
static gboolean
cs_device_alloc (CsDevice *s, GError **error)
{
  SsCudaContext *ctx = s->ctx;
  size_t n = s->L.n, m = s->L.m, nb = n * s->batch * 4, mb = m * s->batch * 4;
  gboolean alm = s->params->algorithm == SS_CS_ALM;
  DevBuffer buffers[] = {
    { &s->x, nb }, { &s->r, mb }, { &s->g, nb }, { &s->d, nb }, { &s->ad, mb },
    { &s->trial, nb }, { &s->mask, n * s->batch }, { &s->merged, n * s->batch },
    { &s->col, sizeof (Column) * s->batch },
    { &s->hist, sizeof (unsigned) * RADIX_BINS * s->batch },
    { &s->support, sizeof (unsigned) * MAX (s->params->k, 1) * s->batch },
    { &s->e, alm ? mb : 0 }, { &s->lambda, alm ? mb : 0 }, { &s->target, alm ? mb : 0 },
  };
  return alloc_all (ctx, buffers, G_N_ELEMENTS (buffers), error)
         && CUDA_OK (cudaMemset (s->x, 0, nb))
         && CUDA_OK (cudaMemset (s->col, 0, sizeof (Column) * s->batch))
         && CUDA_OK (cudaMemset (s->hist, 0, sizeof (unsigned) * RADIX_BINS * s->batch))
         && CUDA_OK (cudaMemset (s->mask, 0, n * s->batch));
}

static gboolean
cs_device_init (CsDevice *s, SsCudaContext *ctx, const SsCsParams *params, SsLinop *A,
                const float *y, const float *x, int batch, GError **error)
{
  memset (s, 0, sizeof *s);
  s->ctx = ctx;
  s->params = params;
  s->batch = batch;
  size_t mb = A->rows * batch * 4;
  if (!dev_linop_init (&s->L, ctx, A, batch, error))
    return FALSE;
  s->L.fft_order = s->L.kind == SS_ENSEMBLE_DCT;
  return cs_device_alloc (s, error) && upload (ctx, (void **) &s->y, y, mb, "y", error)
         && dev_signal_upload (&s->L, x, s->x, batch, error);
}

static Niht
niht_of (CsDevice *s)
{
  Niht h = { &s->L, { s->ctx, s->L.n, s->L.m, s->batch, s->params->k, s->params->nonneg, s->col,
                      s->hist, s->support, s->d },
             s->y, s->x, s->r, s->g, s->d, s->ad, s->trial, s->mask, s->merged,
             s->params->inner_iterations, 0.0f, &s->niht_graph };
  if (s->params->algorithm == SS_CS_IHT)
    h.omega = (float) (1.0 / s->L.lipschitz);
  return h;
}

static Fista
fista_of (CsDevice *s)
{
  Fista f = { &s->L, s->batch, s->x, s->d, s->ad, s->g, s->y, s->col, s->L.lipschitz,
              s->params->nonneg };
  return f;
}

/* λ = e = 0 and ρ from max |Aᵀy| (as the CPU). */
static gboolean
alm_start (CsDevice *s, GError **error)
{
  SsCudaContext *ctx = s->ctx;
  gboolean bp = !(s->params->alpha > 0);
  size_t n = s->L.n, m = s->L.m;
  dim3 gn = column_grid (ctx, n, s->batch);
  if (!CUDA_OK (cudaMemsetAsync (s->col, 0, sizeof (Column) * s->batch, ctx->stream))
      || !CUDA_OK (cudaMemsetAsync (s->e, 0, m * s->batch * 4, ctx->stream))
      || !CUDA_OK (cudaMemsetAsync (s->lambda, 0, m * s->batch * 4, ctx->stream))
      || !dev_adjoint (&s->L, s->y, s->g, s->batch, error))
    return FALSE;
  column_max_kernel<<<gn, SS_CUDA_THREADS, 0, ctx->stream>>> (s->g, n, s->col);
  alm_init_kernel<<<small_blocks (s->batch), SS_CUDA_THREADS, 0, ctx->stream>>> (s->col, s->batch,
                                                                                bp);
  return LAUNCH_OK ("alm_init_kernel");
}

/* One outer step: FISTA on the x-step, then e, λ and ρ (no host wait). */
static gboolean
alm_outer_step (CsDevice *s, GError **error)
{
  SsCudaContext *ctx = s->ctx;
  const SsCsParams *p = s->params;
  gboolean bp = !(p->alpha > 0);
  size_t m = s->L.m;
  dim3 gm = column_grid (ctx, m, s->batch);
  Fista f = fista_of (s);
  alm_target_kernel<<<gm, SS_CUDA_THREADS, 0, ctx->stream>>> (
    s->target, s->y, s->e, s->lambda, m, s->col, bp ? 1.0f : (float) p->alpha, f.lipschitz);
  if (!LAUNCH_OK ("alm_target_kernel") || !fista_run (&f, s->target, p->inner_iterations, error)
      || !dev_apply (&s->L, s->x, s->ad, s->batch, error))
    return FALSE;
  alm_multiplier_kernel<<<gm, SS_CUDA_THREADS, 0, ctx->stream>>> (s->ad, s->y, s->e, s->lambda,
                                                                  m, s->col, bp);
  if (bp)
    alm_grow_kernel<<<small_blocks (s->batch), SS_CUDA_THREADS, 0, ctx->stream>>> (s->col,
                                                                                  s->batch);
  return LAUNCH_OK ("alm kernels");
}

static gboolean
alm_run (CsDevice *s, GError **error)
{
  if (!alm_start (s, error))
    return FALSE;
  for (int outer = 0; outer < s->params->iterations; outer++)
    if (!alm_outer_step (s, error))
      return FALSE;
  return TRUE;
}

static gboolean
cs_device_run (CsDevice *s, int iterations, GError **error)
{
  SsCudaContext *ctx = s->ctx;
  const SsCsParams *p = s->params;
  switch (p->algorithm)
    {
    case SS_CS_FISTA:
      {
        Fista f = fista_of (s);
        set_threshold_kernel<<<small_blocks (s->batch), SS_CUDA_THREADS, 0, ctx->stream>>> (
          s->col, s->batch, (float) (p->alpha / f.lipschitz));
        return LAUNCH_OK ("set_threshold_kernel") && fista_run (&f, s->y, iterations, error);
      }
    case SS_CS_ALM:
      return alm_run (s, error);
    case SS_CS_HTP:
    case SS_CS_COSAMP:
      {
        Niht h = niht_of (s);
        gboolean ok = p->algorithm == SS_CS_HTP ? niht_start (&h, error)
                                                : niht_fresh_gradient (&h, error);
        for (int it = 0; ok && it < iterations; it++)
          ok = p->algorithm == SS_CS_HTP ? htp_iteration (&h, error)
                                         : cosamp_iteration (&h, error);
        return ok;
      }
    default:
      {
        Niht h = niht_of (s);
        return niht_start (&h, error) && niht_run (&h, iterations, error);
      }
    }
}

gboolean
ss_cuda_cs_solve (SsCudaContext *ctx, const SsCsParams *params, SsLinop *A, const float *y,
                  int batch, float *x, SsCsStats *stats, GError **error)
{
  double start = ss_now ();
  CsDevice s;
  /* The GPU runs every iteration asked for (no stopping test, so no host
   * wait): a converged NIHT iterate stays put. */
  gboolean ok = cs_device_init (&s, ctx, params, A, y, x, batch, error)
                && cs_device_run (&s, params->iterations, error)
                && dev_signal_download (&s.L, s.x, x, batch, error);
  cs_device_free (&s);
  if (ok && stats)
    {
      memset (stats, 0, sizeof *stats);
      stats->iterations = params->iterations;
      stats->seconds = ss_now () - start;
    }
  return ok;
}

/* ---- the image solvers of the solver table ------------------------------------ */

typedef struct {
  SsCudaSolver base;
  CsDevice dev;
  SsCsParams cs;
  float *previous;        /* x before the iteration, for the relative change */
  float *report_real;     /* the reporter's scratch image */
  SsCudaReporter *reporter;
} CsImage;

__global__ void
change_kernel (const float *__restrict__ x, const float *__restrict__ previous, size_t n,
               double *__restrict__ acc)
{
  double v[1] = { 0.0 };
  for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < n;
       i += (size_t) gridDim.x * blockDim.x)
    {
      double d = (double) x[i] - previous[i];
      v[0] += d * d;
    }
  ss_block_sum_to<1> (v, acc);
}

static gboolean
cs_image_iterate (gpointer solver, unsigned flags, GError **error)
{
  CsImage *s = (CsImage *) solver;
  SsCudaContext *ctx = s->base.ctx;
  size_t n = s->dev.L.n;
  if ((flags & SS_ITER_DELTA)
      && !CUDA_OK (cudaMemcpyAsync (s->previous, s->dev.x, n * 4, cudaMemcpyDeviceToDevice,
                                    ctx->stream)))
    return FALSE;
  gboolean ok;
  Niht h = niht_of (&s->dev);
  switch (s->cs.algorithm)
    {
    case SS_CS_ALM: ok = alm_outer_step (&s->dev, error); break;
    case SS_CS_HTP: ok = htp_iteration (&h, error); break;
    case SS_CS_COSAMP: ok = cosamp_iteration (&h, error); break;
    default: ok = niht_iteration (&h, error); break;
    }
  if (ok && (flags & SS_ITER_DELTA))
    {
      change_kernel<<<ss_cuda_blocks (ctx, n), SS_CUDA_THREADS, 0, ctx->stream>>> (
        s->dev.x, s->previous, n, s->reporter->block + SS_ACC_DELTA);
      ok = LAUNCH_OK ("change_kernel");
    }
  return ok;
}

static const float *
cs_image_estimate (gpointer solver)
{
  return ((CsImage *) solver)->dev.x;
}

static void
cs_image_destroy (SsCudaSolver *solver)
{
  CsImage *s = (CsImage *) solver;
  ss_cuda_free (solver->ctx, s->previous, 0);
  ss_cuda_free (solver->ctx, s->report_real, 0);
  cs_device_free (&s->dev);
  g_free (s);
}

static SsCudaSolver *
cs_image_new (SsCudaContext *ctx, const SsCudaProblem *p, const SsSolveParams *params,
              SsCudaIterator *it, SsCudaReporter *reporter, GError **error)
{
  if (!(p->lipschitz > 0))
    {
      g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT, "the operator is zero");
      return NULL;
    }
  CsImage *s = g_new0 (CsImage, 1);
  s->base.ctx = ctx;
  s->base.destroy = cs_image_destroy;
  s->reporter = reporter;
  CsDevice *d = &s->dev;
  d->ctx = ctx;
  d->params = &s->cs;
  d->batch = 1;
  d->y = p->y;
  d->borrowed_y = TRUE;
  gboolean ok = ss_cs_params_from_solve (params, p->n, &s->cs, error)
                && dev_circulant_init (&d->L, ctx, p, error) && cs_device_alloc (d, error)
         && ss_cuda_alloc (ctx, (void **) &s->previous, p->n * 4, "the previous estimate", error)
         && ss_cuda_alloc (ctx, (void **) &s->report_real, p->n * 4, "report scratch", error);
  if (ok && s->cs.algorithm == SS_CS_ALM)
    ok = alm_start (d, error);
  else if (ok)
    {
      Niht h = niht_of (d);
      ok = s->cs.algorithm == SS_CS_COSAMP ? niht_fresh_gradient (&h, error)
                                           : niht_start (&h, error);
    }
  if (!ok)
    {
      cs_image_destroy (&s->base);
      return NULL;
    }
  s->base.bytes = ctx->mem_current;
  ss_cuda_reporter_borrow (reporter, d->L.spec, s->report_real, TRUE);
  ss_cuda_iterator_bind (it, s, cs_image_iterate, cs_image_estimate, NULL, TRUE);
  return &s->base;
}

const SsCudaSolverEntry ss_cuda_cs_entry = { cs_image_new, NULL };

gboolean
ss_cuda_linop_check (SsCudaContext *ctx, SsLinop *A, const float *x, float *ax, const float *y,
                     float *aty, int batch, GError **error)
{
  DevLinop L;
  float *dx = NULL, *dax = NULL, *dy = NULL, *daty = NULL;
  size_t nb = A->cols * batch * 4, mb = A->rows * batch * 4;
  gboolean ok = dev_linop_init (&L, ctx, A, batch, error)
                && upload (ctx, (void **) &dx, x, nb, "x", error)
                && upload (ctx, (void **) &dy, y, mb, "y", error)
                && ss_cuda_alloc (ctx, (void **) &dax, mb, "Ax", error)
                && ss_cuda_alloc (ctx, (void **) &daty, nb, "Aᵀy", error)
                && dev_apply (&L, dx, dax, batch, error) && dev_adjoint (&L, dy, daty, batch, error)
                && CUDA_OK (cudaStreamSynchronize (ctx->stream))
                && CUDA_OK (cudaMemcpy (ax, dax, mb, cudaMemcpyDeviceToHost))
                && CUDA_OK (cudaMemcpy (aty, daty, nb, cudaMemcpyDeviceToHost));
  ss_cuda_free (ctx, dx, nb);
  ss_cuda_free (ctx, dy, mb);
  ss_cuda_free (ctx, dax, mb);
  ss_cuda_free (ctx, daty, nb);
  if (L.ctx)
    dev_linop_free (&L);
  return ok;
}

/* ---- benchmarks -------------------------------------------------------------- */

static double
elapsed (SsCudaContext *ctx, cudaEvent_t a, cudaEvent_t b)
{
  float ms = 0;
  cudaEventElapsedTime (&ms, a, b);
  return ms * 1e-3;
}

typedef gboolean (*DevWork) (gpointer data, GError **error);

/* Median of 5 timings of WORK (after one untimed run), between events. */
static double
time_device (SsCudaContext *ctx, DevWork work, gpointer data, GError **error)
{
  cudaEvent_t a, b;
  if (!CUDA_OK (cudaEventCreate (&a)) || !CUDA_OK (cudaEventCreate (&b)))
    return NAN;
  double times[5];
  gboolean ok = work (data, error) && CUDA_OK (cudaStreamSynchronize (ctx->stream));
  for (int r = 0; ok && r < 5; r++)
    {
      ok = CUDA_OK (cudaEventRecord (a, ctx->stream)) && work (data, error)
           && CUDA_OK (cudaEventRecord (b, ctx->stream)) && CUDA_OK (cudaEventSynchronize (b));
      times[r] = elapsed (ctx, a, b);
    }
  cudaEventDestroy (a);
  cudaEventDestroy (b);
  if (!ok)
    return NAN;
  for (int i = 1; i < 5; i++)
    for (int j = i; j > 0 && times[j] < times[j - 1]; j--)
      {
        double t = times[j];
        times[j] = times[j - 1];
        times[j - 1] = t;
      }
  return times[2];
}

typedef struct {
  CsDevice *s;
  int iterations;
} NihtWork;

static gboolean
niht_work (gpointer data, GError **error)
{
  NihtWork *w = (NihtWork *) data;
  Niht h = niht_of (w->s);
  return niht_run (&h, w->iterations, error);
}

/* The transform pair ITERATIONS times: timed over as long a run as the
 * iterations it is the floor of, so that one pair's launch jitter (a few µs
 * on 40) does not move the floor from run to run. */
typedef struct {
  DevLinop *L;
  int iterations;
} PairWork;

static gboolean
fft_pair_work (gpointer data, GError **error)
{
  PairWork *w = (PairWork *) data;
  DevLinop *L = w->L;
  for (int i = 0; i < w->iterations; i++)
    if (!CUFFT_OK (cufftExecR2C (L->r2c, L->perm, (cufftComplex *) L->spec))
        || !CUFFT_OK (cufftExecC2R (L->c2r, (cufftComplex *) L->spec, L->perm)))
      return FALSE;
  return TRUE;
}

typedef struct {
  CsDevice *s;
  int iterations;
} FistaWork;

static gboolean
fista_work (gpointer data, GError **error)
{
  FistaWork *w = (FistaWork *) data;
  Fista f = fista_of (w->s);
  return fista_run (&f, w->s->y, w->iterations, error);
}

static gboolean
products_work (gpointer data, GError **error)
{
  CsDevice *s = (CsDevice *) data;
  return dev_apply (&s->L, s->d, s->ad, s->batch, error)
         && dev_adjoint (&s->L, s->ad, s->g, s->batch, error);
}

static gboolean
alm_work (gpointer data, GError **error)
{
  return alm_run ((CsDevice *) data, error);
}

/* The device's copy bandwidth (read + write), as ss-cuda-bench.cu measures it. */
static double
device_bandwidth (SsCudaContext *ctx, GError **error)
{
  size_t bytes = 512u << 20;
  void *a = NULL, *b = NULL;
  if (!ss_cuda_alloc (ctx, &a, bytes, "bandwidth test", error)
      || !ss_cuda_alloc (ctx, &b, bytes, "bandwidth test", error))
    {
      ss_cuda_free (ctx, a, bytes);
      return NAN;
    }
  cudaEvent_t e0, e1;
  cudaEventCreate (&e0);
  cudaEventCreate (&e1);
  double best = 0;
  for (int r = 0; r < 5; r++)
    {
      cudaEventRecord (e0, ctx->stream);
      cudaMemcpyAsync (b, a, bytes, cudaMemcpyDeviceToDevice, ctx->stream);
      cudaEventRecord (e1, ctx->stream);
      cudaEventSynchronize (e1);
      double t = elapsed (ctx, e0, e1);
      best = MAX (best, 2.0 * bytes / t);
    }
  cudaEventDestroy (e0);
  cudaEventDestroy (e1);
  ss_cuda_free (ctx, a, bytes);
  ss_cuda_free (ctx, b, bytes);
  return CUDA_OK (cudaGetLastError ()) ? best : NAN;
}

static gboolean
bench_niht (SsCudaContext *ctx, const SsCsBenchParams *bp, double bandwidth, SsCsBenchRow *row,
            GError **error)
{
  gsize n = bp->dct_n, m = (gsize) round (bp->delta * n), k = (gsize) round (bp->rho * m);
  g_autoptr (SsLinop) A = ss_linop_new (SS_ENSEMBLE_DCT, m, n, 0, bp->seed, 0, error);
  if (A == NULL)
    return FALSE;
  g_autofree float *truth = NULL, *y = NULL;
  ss_cs_random_problems (A, k, SS_CS_VALUES_GAUSSIAN, 0, bp->seed + 1, 1, &truth, &y);
  g_autofree float *x0 = g_new0 (float, n);
  SsCsParams p;
  ss_cs_params_init (&p);
  p.algorithm = SS_CS_NIHT;
  p.k = k;
  CsDevice s;
  gboolean ok = cs_device_init (&s, ctx, &p, A, y, x0, 1, error);
  if (ok)
    {
      /* The steady state: 100 iterations find the support first. */
      Niht h = niht_of (&s);
      ok = niht_start (&h, error) && niht_run (&h, 100, error);
    }
  NihtWork work = { &s, bp->niht_iterations };
  double t = ok ? time_device (ctx, niht_work, &work, error) : NAN;
  PairWork pairs = { &s.L, bp->niht_iterations };
  double pair = ok ? time_device (ctx, fft_pair_work, &pairs, error) / bp->niht_iterations : NAN;
  if (ok && !isnan (t) && !isnan (pair))
    {
      g_autofree float *x = g_new (float, n);
      ok = dev_signal_download (&s.L, s.x, x, 1, error);
      ss_cs_bench_row_niht (row, bp, t / bp->niht_iterations, pair, bandwidth,
                            ss_cs_relative_error (x, truth, n));
    }
  cs_device_free (&s);
  return ok && !isnan (t) && !isnan (pair);
}

static gboolean
bench_fista_alm (SsCudaContext *ctx, const SsCsBenchParams *bp, double bandwidth,
                 SsCsBenchResult *result, GError **error)
{
  const SsCsSeedMatrix *mat = ss_cs_seed004_matrix (bp->matrix);
  if (mat == NULL)
    {
      g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT, "matrix %d: 1 to 12", bp->matrix);
      return FALSE;
    }
  g_autoptr (SsLinop) A = ss_linop_new (SS_ENSEMBLE_GAUSSIAN, mat->m, mat->n, 0, bp->seed,
                                        bp->memory_limit, error);
  if (A == NULL)
    return FALSE;
  gboolean ok = TRUE;
  if (bp->which & SS_CS_BENCH_FISTA)
    {
      g_autofree float *truth = NULL, *y = NULL;
      ss_cs_random_problems (A, MIN ((gsize) bp->nonzeros, A->cols), SS_CS_VALUES_GAUSSIAN, 0,
                             bp->seed + 2, bp->batch, &truth, &y);
      g_autofree float *x0 = g_new0 (float, A->cols * bp->batch);
      SsCsParams p;
      ss_cs_params_init (&p);
      p.algorithm = SS_CS_FISTA;
      p.alpha = 1e-2;
      CsDevice s;
      ok = cs_device_init (&s, ctx, &p, A, y, x0, bp->batch, error);
      if (ok)
        {
          Fista f = fista_of (&s);
          set_threshold_kernel<<<small_blocks (bp->batch), SS_CUDA_THREADS, 0, ctx->stream>>> (
            s.col, bp->batch, (float) (p.alpha / f.lipschitz));
          ok = LAUNCH_OK ("set_threshold_kernel");
        }
      FistaWork work = { &s, bp->fista_iterations };
      double t = ok ? time_device (ctx, fista_work, &work, error) : NAN;
      double products = ok ? time_device (ctx, products_work, &s, error) : NAN;
      ok = ok && !isnan (t) && !isnan (products);
      if (ok)
        ss_cs_bench_row_fista (&result->rows[result->n_rows++], bp, t / bp->fista_iterations,
                               products, bandwidth);
      cs_device_free (&s);
    }
  if (ok && (bp->which & SS_CS_BENCH_ALM))
    {
      g_autofree float *truth = NULL, *y = NULL;
      ss_cs_random_problems (A, MIN ((gsize) bp->nonzeros, A->cols), SS_CS_VALUES_GAUSSIAN, 0,
                             bp->seed + 3, 1, &truth, &y);
      g_autofree float *x0 = g_new0 (float, A->cols);
      SsCsParams p;
      ss_cs_params_init (&p);
      p.algorithm = SS_CS_ALM;
      p.iterations = bp->alm_outer;
      p.inner_iterations = bp->alm_inner;
      CsDevice s;
      ok = cs_device_init (&s, ctx, &p, A, y, x0, 1, error);
      double t = ok ? time_device (ctx, alm_work, &s, error) : NAN;
      double products = ok ? time_device (ctx, products_work, &s, error) : NAN;
      ok = ok && !isnan (t) && !isnan (products);
      if (ok)
        ss_cs_bench_row_alm (&result->rows[result->n_rows++], bp, t, products, bandwidth);
      cs_device_free (&s);
    }
  return ok;
}

gboolean
ss_cuda_cs_bench (SsCudaContext *ctx, const SsCsBenchParams *bp, SsCsBenchResult *result,
                  GError **error)
{
  memset (result, 0, sizeof *result);
  result->backend = g_strdup ("cuda");
  result->device = g_strdup (ss_cuda_context_get_device_name (ctx));
  result->bandwidth = device_bandwidth (ctx, error);
  if (isnan (result->bandwidth))
    return FALSE;
  if ((bp->which & SS_CS_BENCH_NIHT)
      && !bench_niht (ctx, bp, result->bandwidth, &result->rows[result->n_rows++], error))
    return FALSE;
  if ((bp->which & (SS_CS_BENCH_FISTA | SS_CS_BENCH_ALM))
      && !bench_fista_alm (ctx, bp, result->bandwidth, result, error))
    return FALSE;
  return TRUE;
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
