/* ss-cuda-cs-private.cuh: what the compressed-sensing files (ss-cuda-cs*.cu,
 * never C code) share: the per-problem state on the device, the operator and
 * the solvers' state, the device helpers of the support test and the
 * selection, and the functions that one of those files calls in another.
 * The design is described at the top of ss-cuda-cs.cu. */
#pragma once

#include "ss-cuda-internal.h"
#include "ss-cuda-device.cuh"
#include "ss-cs.h"

#include <cusparse.h>
#include <math.h>
#include <string.h>

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

/* ---- per-problem state ---------------------------------------------------- */

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
  double fit_size;           /* the fit (debias): the estimate's nonzeros, a count summed
                                as a double by the block sums (exact below 2^53) */
} Column;

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

/* NIHT's elementwise work on m-vectors, which the subsampled DCT folds into
 * its own passes (a launch and a pass over m floats fewer, twice an
 * iteration; the other operators run niht_after_apply_kernel and
 * niht_update_r_kernel): after the gather, the refresh r = y − A d or
 * ||A d||²; as the adjoint reads r, the step r −= μ A d (μ = 0 on a
 * refresh; after a step that changes the support the next iteration
 * refreshes r anyway), and in its first block the decision
 * (niht_decide_block), which no other block of that pass reads. COL NULL:
 * nothing to fold. */
typedef struct {
  Column *col;
  float *r;
  const float *y, *ad;
  bool decides;            /* the adjoint's first block decides the step (HOW) */
  NihtDecision how;
} NihtFold;

/* ---- the operator on the device (ss-cuda-cs-operator.cu) ------------------ */

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

/* A uploaded for blocks of BATCH problems (the buffers are for that width). */
gboolean dev_linop_init (DevLinop *L, SsCudaContext *ctx, SsLinop *host, int batch,
                         GError **error);
/* P C on the device problem (one image at a time). */
gboolean dev_circulant_init (DevLinop *L, SsCudaContext *ctx, const SsCudaProblem *p,
                             GError **error);
/* Frees what either init made; L is zeroed. */
void dev_linop_free (DevLinop *L);
/* out (m x batch) = A in (n x batch). */
gboolean dev_apply (DevLinop *L, const float *in, float *out, int batch, GError **error);
/* out (n x batch) = Aᵀ in (m x batch). */
gboolean dev_adjoint (DevLinop *L, const float *in, float *out, int batch, GError **error);
/* NIHT's A d and Aᵀ r, with the elementwise work of FOLD around them. */
gboolean dev_apply_folded (DevLinop *L, const float *in, float *out, int batch,
                           const NihtFold *fold, GError **error);
gboolean dev_adjoint_folded (DevLinop *L, float *r, float *out, int batch, const NihtFold *fold,
                             GError **error);
/* Host n-vectors (n x batch) to the solvers' order on the device, and back
 * (the download waits for the stream). */
gboolean dev_signal_upload (DevLinop *L, const float *host, float *dev, int batch,
                            GError **error);
gboolean dev_signal_download (DevLinop *L, const float *dev, float *host, int batch,
                              GError **error);
/* The step's decision, one block for the whole batch (also HTP's). */
__global__ void niht_decide_kernel (Column *col, NihtDecision how);

/* ---- the support test's and the selection's device helpers ---------------- */

/* The key an entry is ranked by: |v|, or max (v, 0) for a non-negative solve. */
static __device__ __forceinline__ float
cs_key (float v, bool nonneg)
{
  return nonneg ? fmaxf (v, 0.0f) : fabsf (v);
}

/* The block's min of LOW and max of HIGH, into *LOW_OUT and *HIGH_OUT
 * (non-negative floats as their bits, by atomics). Every thread calls it. */
static __device__ __forceinline__ void
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

/* ---- radix select (ss-cuda-cs-select.cu) ---------------------------------- */

/* Histogram bins a problem (the widest pass's 11 bits). */
#define RADIX_BINS 2048

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
gboolean select_top_k (Selector *s, const float *v, float *x, unsigned char *mask,
                       gboolean write_x, GError **error);

/* ---- NIHT / IHT, HTP and CoSaMP (ss-cuda-cs-greedy.cu) -------------------- */

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

/* Blocks of SS_CUDA_THREADS for one thread a problem. */
unsigned small_blocks (int batch);
/* r = y − A x, g = Aᵀ r. */
gboolean niht_fresh_gradient (Niht *s, GError **error);
/* NIHT's (and HTP's) start: the support is the top-k of Aᵀr; x stays. */
gboolean niht_start (Niht *s, GError **error);
/* One NIHT iteration (two products, no host wait). */
gboolean niht_iteration (Niht *s, GError **error);
/* ITERATIONS NIHT iterations, as a graph replayed when graphs are on. */
gboolean niht_run (Niht *h, int iterations, GError **error);
/* One HTP or CoSaMP iteration. */
gboolean htp_iteration (Niht *h, GError **error);
gboolean cosamp_iteration (Niht *h, GError **error);
/* CGLS on the supports MASKS (n x batch) from x, as HTP's and CoSaMP's least
 * squares run it: the start (r = y − A x, the restricted gradient, the
 * direction; a problem with nothing to fit is inactive), and one step, which
 * moves only the problems still active (their stopping test is on the
 * device: no host wait). */
gboolean cg_begin (Niht *h, const unsigned char *masks, GError **error);
gboolean cg_step (Niht *h, const unsigned char *masks, GError **error);

/* ---- FISTA and ALM (ss-cuda-cs-fista.cu) ---------------------------------- */

typedef struct {
  DevLinop *L;
  int batch;
  float *x, *v, *av, *grad, *y;
  Column *col;
  double lipschitz;
  gboolean nonneg;
} Fista;

/* ITERATIONS FISTA steps towards TARGET from x (momentum restarted). */
gboolean fista_run (Fista *s, const float *target, int iterations, GError **error);
/* Sets every problem's threshold (FISTA's: alpha / L). */
__global__ void set_threshold_kernel (Column *col, int batch, float threshold);

/* ---- the block solve (ss-cuda-cs.cu) -------------------------------------- */

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

/* The operator A, the work buffers and Y and X uploaded, for BATCH problems. */
gboolean cs_device_init (CsDevice *s, SsCudaContext *ctx, const SsCsParams *params, SsLinop *A,
                         const float *y, const float *x, int batch, GError **error);
void cs_device_free (CsDevice *s);
/* The NIHT (IHT, HTP, CoSaMP) and FISTA views of a block solve's buffers. */
Niht niht_of (CsDevice *s);
Fista fista_of (CsDevice *s);

/* ss_cs_debias on the device after a block solve (ss-cuda-cs-debias.cu):
 * into s->trial, the least-squares fit of each problem on the support of
 * its estimate s->x (left as it is), by CGLS from it for at most
 * ITERATIONS steps, then max (·, 0) under nonneg; a problem whose support
 * is empty or has more than m entries keeps its estimate. */
gboolean cs_device_fit (CsDevice *s, int iterations, GError **error);

/* ALM on a block solve (ss-cuda-cs-fista.cu): its start (λ = e = 0, ρ from
 * max |Aᵀy|), one outer step, and the whole run of params->iterations. */
gboolean alm_start (CsDevice *s, GError **error);
gboolean alm_outer_step (CsDevice *s, GError **error);
gboolean alm_run (CsDevice *s, GError **error);
