/* ss-linop.h: sensing matrices as operators (compressed sensing, seed 003).
 *
 * A is m x n (rows x cols) and is never formed unless it is dense: each
 * ensemble gives apply (y = A x) and adjoint (x = Aᵀ y). Both work on a block
 * of BATCH vectors stored one after the other (column-major n x BATCH, and
 * m x BATCH), so problems sharing A are one GEMM, one batched transform or
 * one sparse product (seed 004's concurrent solves), not a loop of GEMVs.
 *
 * Ensembles (GAGA's names in brackets):
 *   gaussian [gen]  dense, i.i.d. N(0, 1/m)            cblas_sgemm / sgemv
 *   sign            dense, i.i.d. ±1/√m                cblas_sgemm / sgemv
 *   dct      [dct]  m rows of the orthonormal DCT-II    FFTW r2r (REDFT10 / REDFT01)
 *   sparse   [smv]  p nonzeros ±1/√p in each column     CSR of A and of Aᵀ
 * Entries are drawn from a counter-based generator keyed by (seed, row), so
 * the matrix is the same whatever the thread count and on every backend.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef enum {
  SS_ENSEMBLE_GAUSSIAN,
  SS_ENSEMBLE_SIGN,
  SS_ENSEMBLE_DCT,
  SS_ENSEMBLE_SPARSE,
  SS_N_ENSEMBLES
} SsEnsemble;

const char *ss_ensemble_to_string (SsEnsemble ensemble);
gboolean ss_ensemble_from_string (const char *text, SsEnsemble *ensemble, GError **error);

typedef struct _SsLinop SsLinop;

typedef void (*SsLinopFunc) (const SsLinop *op, const float *in, float *out, int batch);

struct _SsLinop {
  gsize rows, cols;          /* m, n */
  SsLinopFunc apply;         /* out (m x batch) = A in (n x batch) */
  SsLinopFunc adjoint;       /* out (n x batch) = Aᵀ in (m x batch) */
  double lipschitz;          /* ||A||₂² (or an upper bound); 0: not yet known */
  const char *name;          /* "gaussian", "dct", ... */
  gpointer data;             /* the ensemble's own (matrix, plans, indices) */
  GDestroyNotify free_data;
  gsize bytes;               /* what the operator holds */
  /* Dense ensembles: A row-major, m x n; NULL otherwise. */
  const float *dense;
  /* DCT: the m kept rows of the DCT, ascending; NULL otherwise. */
  const guint32 *dct_rows;
  /* Sparse: CSR of A (row_ptr m+1, col, val) and of Aᵀ (n+1, ...); NULL otherwise. */
  const guint32 *csr_ptr, *csr_col, *csr_t_ptr, *csr_t_col;
  const float *csr_val, *csr_t_val;
  int sparse_p;
};

/* Dense checks m·n floats against LIMIT (0: the memory available now) first,
 * with SS_ERROR_TOO_LARGE naming the largest n that would fit. P: nonzeros
 * per column of the sparse ensemble (ignored by the others). */
SsLinop *ss_linop_new (SsEnsemble ensemble, gsize m, gsize n, int p, guint64 seed,
                       gsize limit, GError **error);
void ss_linop_free (SsLinop *op);
/* ||A||₂², by power iteration (cached in op->lipschitz) when not known exactly. */
double ss_linop_lipschitz (SsLinop *op);
/* Bytes a dense m x n matrix needs, and the check made before allocating it. */
gboolean ss_linop_dense_fits (gsize m, gsize n, gsize limit, GError **error);

/* A deterministic stream of numbers keyed by (seed, stream): splitmix64. */
typedef struct {
  guint64 state;
} SsCounterRng;

void ss_counter_rng_init (SsCounterRng *rng, guint64 seed, guint64 stream);
guint64 ss_counter_rng_next (SsCounterRng *rng);
double ss_counter_rng_uniform (SsCounterRng *rng);      /* [0, 1) */
double ss_counter_rng_gaussian (SsCounterRng *rng);     /* N(0, 1) */

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SsLinop, ss_linop_free)

G_END_DECLS
