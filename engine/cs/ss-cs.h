/* ss-cs.h: compressed sensing on any SsLinop: the greedy solvers of seed 003
 * (IHT, NIHT, HTP, CoSaMP), FISTA and ALM for l1 (seeds 001, 004), top-k
 * selection, random k-sparse problems and their phase transitions.
 *
 * Every solver takes a block of BATCH problems sharing A (x: n x BATCH,
 * y: m x BATCH, each vector contiguous): the operator is applied to the whole
 * block at once (one GEMM, seed 004's concurrency), the per-problem work
 * (steps, supports, stopping) is per column.
 */
#pragma once

#include "ss-linop.h"
#include "ss-solver.h"

G_BEGIN_DECLS

typedef enum {
  SS_CS_IHT,      /* x ← H_k(x + ω Aᵀ(y − Ax)), ω = 1/||A||² */
  SS_CS_NIHT,     /* the same with the optimal step on the current support (Blumensath–Davies) */
  SS_CS_HTP,      /* NIHT's support, then least squares on it (CG) */
  SS_CS_COSAMP,   /* support ∪ top-2k of the gradient, least squares, keep k */
  SS_CS_FISTA,    /* LASSO ½||Ax − y||² + α||x||₁ */
  SS_CS_ALM,      /* basis pursuit (α = 0) or its noisy form α||x||₁ + ½||Ax − y||² */
  SS_N_CS_ALGORITHMS
} SsCsAlgorithm;

const char *ss_cs_algorithm_to_string (SsCsAlgorithm algorithm);
gboolean ss_cs_algorithm_from_string (const char *text, SsCsAlgorithm *algorithm, GError **error);
gboolean ss_cs_algorithm_is_greedy (SsCsAlgorithm algorithm);

/* Called at report points with the current block; FALSE (with ERROR set)
 * stops the solve. */
typedef gboolean (*SsCsProgressFunc) (int iteration, const float *x, gboolean last,
                                      gpointer user_data, GError **error);

typedef struct {
  SsCsAlgorithm algorithm;
  gsize k;                /* greedy: the sparsity */
  int iterations;         /* at most this many (ALM: outer iterations) */
  int inner_iterations;   /* ALM: FISTA steps per outer; HTP/CoSaMP: CG steps per projection */
  double tolerance;       /* stop a problem when ||y − Ax|| <= tolerance ||y||, or when its
                             residual stalls; 0: run every iteration */
  double alpha;           /* FISTA, ALM: the l1 weight */
  gboolean nonneg;        /* x >= 0 */
  int report_every;       /* progress every this many iterations (0: never) */
  SsCsProgressFunc progress;
  gpointer user_data;
} SsCsParams;

void ss_cs_params_init (SsCsParams *params);   /* NIHT, k 1, 300 iterations, tol 1e-6 */

/* The image solvers of the solver table (iht, niht, htp, cosamp, alm) on an
 * image of N pixels: the algorithm, k from the sparsity, the iterations and
 * weights of PARAMS, no stopping test (the user chose the count). FALSE
 * with an error when the sparsity gives no k in 1..N. */
gboolean ss_cs_params_from_solve (const SsSolveParams *params, gsize n, SsCsParams *cs,
                                  GError **error);

typedef struct {
  int iterations;         /* iterations run (the most any problem of the batch ran) */
  double seconds;
  int support_searches;   /* greedy: top-k selections made (the rest were skipped) */
  int support_checks;     /* greedy: times the support was checked */
} SsCsStats;

/* Solves the BATCH problems A x_b = y_b; X (n x BATCH) is the start on entry
 * (zeros for a cold start) and the estimate on return. */
gboolean ss_cs_solve (const SsCsParams *params, SsLinop *A, const float *y, int batch, float *x,
                      SsCsStats *stats, GError **error);

/* The sparsity parameter as a count: values < 1 are a fraction of N
 * (rounded up), larger values a count. */
gsize ss_cs_sparsity_count (double sparsity, gsize n);
/* The count into *K, or FALSE with an error when it is not in 1..N. */
gboolean ss_cs_sparsity_check (double sparsity, gsize n, gsize *k, GError **error);
/* The index of TEXT (case-insensitive) among the COUNT NAMES, or FALSE
 * with "unknown WHAT "TEXT": expected a, b or c". */
gboolean ss_cs_name_lookup (const char *const *names, int count, const char *text,
                            const char *what, int *index, GError **error);

/* ---- selection ----------------------------------------------------------
 * The k largest keys, key = |v| (or max(v, 0) with NONNEG), by quickselect
 * (O(n), never a sort). Ties at the k-th key are broken by lower index.
 * Writes the k indices, ascending, to INDICES (k entries); SCRATCH: n floats.
 * Returns the k-th largest key. */
float ss_cs_top_k (const float *v, gsize n, gsize k, gboolean nonneg, float *scratch,
                   guint32 *indices);
/* The k-th largest of N keys (k in 1..n), reordering KEYS. */
float ss_cs_select_kth_largest (float *keys, gsize n, gsize k);

/* ---- random problems ---------------------------------------------------- */

/* The nonzero values; a non-negative problem (x >= 0) draws the same
 * values and keeps their magnitudes |v| (half-normal, 1, U(0, 1)). */
typedef enum {
  SS_CS_VALUES_GAUSSIAN,   /* N(0, 1) */
  SS_CS_VALUES_SIGN,       /* ±1: the hardest for greedy methods (seed 003) */
  SS_CS_VALUES_UNIFORM,    /* U(−1, 1) */
  SS_N_CS_VALUES
} SsCsValues;

const char *ss_cs_values_to_string (SsCsValues values);
gboolean ss_cs_values_from_string (const char *text, SsCsValues *values, GError **error);

/* BATCH k-sparse vectors (n x BATCH, support uniform at random), their
 * measurements y = A x + noise·N(0, 1) (m x BATCH). g_free both. */
void ss_cs_random_problems (SsLinop *A, gsize k, SsCsValues values, double noise, guint64 seed,
                            int batch, float **truth, float **y);
/* The same with NONNEG: every nonzero is |v| of the value the signed
 * problem of the same seed has there (same supports, same draws), so a
 * solver constrained to x >= 0 has a problem it can recover. */
void ss_cs_random_problems_full (SsLinop *A, gsize k, SsCsValues values, gboolean nonneg,
                                 double noise, guint64 seed, int batch, float **truth,
                                 float **y);

/* The least-squares fit on a found support ("debiasing", a standard step
 * after the LASSO, whose l1 weight shrinks every entry it keeps): for each
 * of the BATCH columns of X (n x BATCH), x_b ← argmin ||y_b − A z|| over z
 * supported where x_b != 0, by CGLS from x_b for at most ITERATIONS
 * steps, then max(x, 0) with NONNEG. A column whose support has more than
 * m entries (no unique fit) or none is left as it is; *FITTED (may be
 * NULL): how many were fitted. FALSE only when memory runs out. */
gboolean ss_cs_debias (SsLinop *A, const float *y, int batch, float *x, int iterations,
                       gboolean nonneg, int *fitted, GError **error);
/* M distinct values of [0, N), ascending. g_free. */
guint32 *ss_cs_random_subset (gsize m, gsize n, guint64 seed);

/* ||a − b|| / ||b|| (||a − b|| when b = 0). */
double ss_cs_relative_error (const float *a, const float *b, gsize n);

G_END_DECLS
