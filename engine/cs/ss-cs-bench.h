/* ss-cs-bench.h: the compressed-sensing benchmarks of `sharpsky-cli cs
 * --bench`, each a measured time against its floor measured in the same run
 * (DESIGN.md, "How we measure speed"), and against the seed's figure:
 *
 *   niht-dct   one NIHT iteration on the subsampled DCT (seed 003, Table 6:
 *              6.05 + 4.68 δ ms on a C2050 at n = 2^20); floor = the two
 *              transforms (DCT-II, DCT-III) + the elementwise bytes;
 *   fista-60   concurrent FISTA, 60 problems sharing a dense Gaussian A, 100
 *              iterations, at one of seed 004's matrix sizes (Tables 3–5);
 *              floor = the two GEMMs of an iteration (A·X, Aᵀ·R) + bytes;
 *   alm        ALM, 10 outer × 50 inner steps (seed 001's setting) on the
 *              same A, one problem with 1024 nonzeros; floor = two GEMVs a
 *              step + bytes.
 */
#pragma once

#include "ss-backend.h"
#include "ss-cs.h"

G_BEGIN_DECLS

#define SS_CS_SEED004_MATRICES 12

typedef struct {
  int m, n;
  double best_seconds;   /* the best of TB/SM on the K40c and the GTX 1070 (Tables 4, 5) */
} SsCsSeedMatrix;

/* Seed 004's Table 3 (rows 1..12) with its best concurrent-FISTA times. */
const SsCsSeedMatrix *ss_cs_seed004_matrix (int row);

typedef enum {
  SS_CS_BENCH_NIHT = 1 << 0,
  SS_CS_BENCH_FISTA = 1 << 1,
  SS_CS_BENCH_ALM = 1 << 2,
  SS_CS_BENCH_ALL = 7,
} SsCsBenchWhich;

typedef struct _SsCsBenchResult SsCsBenchResult;

/* Called on the bench's thread once the device is measured (no row yet)
 * and after each row is added to RESULT: `cs --bench` prints every row as
 * it comes, so that an interrupted bench has shown what it measured. */
typedef void (*SsCsBenchProgressFunc) (const SsCsBenchResult *result, gpointer user_data);

typedef struct {
  SsCsBenchWhich which;
  gsize dct_n;           /* default 2^20 */
  double delta, rho;     /* NIHT's problem: default 0.5, 0.1 */
  int niht_iterations;   /* timed NIHT iterations (default 50) */
  int matrix;            /* seed 004's row, 1..12 (default 7: 256 × 1048576) */
  int batch;             /* default 60 */
  int fista_iterations;  /* default 100 */
  int alm_outer, alm_inner;  /* default 10 × 50 */
  int nonzeros;          /* of each FISTA/ALM problem: default 1024 */
  guint64 seed;
  gsize memory_limit;    /* 0: what the machine has */
  /* NULL, or a flag a signal handler sets (Ctrl-C), looked at between the
   * benchmarks, between timed repetitions and, on the CPU, at every
   * iteration of a timed solve: once it is non-zero the bench fails with
   * G_IO_ERROR_CANCELLED, the rows measured before it kept in the result. */
  const volatile gint *stop;
  SsCsBenchProgressFunc progress;   /* NULL: none */
  gpointer user_data;
} SsCsBenchParams;

void ss_cs_bench_params_init (SsCsBenchParams *params);

typedef struct {
  char *name;            /* "niht-dct", "fista-60", "alm" */
  char *size;            /* "n 1048576, m 524288, k 52429" */
  int iterations;        /* timed */
  double seconds;        /* measured, per iteration */
  double floor_seconds;  /* per iteration */
  double floor_ops_seconds;   /* the transforms or products part of the floor */
  double floor_bytes;
  double ratio;          /* seconds / floor_seconds */
  double total_seconds;  /* the whole run as the seed timed it (setup excluded) */
  double seed_seconds;   /* the seed's figure for the same run, NAN when it has none */
  gboolean seed_per_iteration;   /* seed_seconds is an iteration's (niht-dct: Table 6) */
  double speedup;        /* seed_seconds / total_seconds, or / seconds when the seed's
                            figure is per iteration */
  char *seed_note;       /* where the seed's figure comes from */
} SsCsBenchRow;

struct _SsCsBenchResult {
  SsCsBenchRow rows[3];
  int n_rows;            /* the rows measured, in the order run */
  char *device;
  char *backend;
  double bandwidth;      /* measured copy bandwidth, bytes/s */
};

void ss_cs_bench_result_clear (SsCsBenchResult *result);

gboolean ss_cs_bench (SsBackendKind backend, const SsCsBenchParams *params,
                      SsCsBenchResult *result, GError **error);

/* The CPU's own (the CUDA one is ss_cuda_cs_bench). */
gboolean ss_cs_bench_cpu (const SsCsBenchParams *params, SsCsBenchResult *result,
                          GError **error);

/* Where a run of solves goes (a sweep's cells): its backend and, on the
 * GPU, one context made at the first solve and kept for the others, with
 * its stream, library handles and plans, instead of one a solve. Used from
 * one thread at a time. */
typedef struct _SsCsSession SsCsSession;
SsCsSession *ss_cs_session_new (SsBackendKind backend);
void ss_cs_session_free (SsCsSession *session);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SsCsSession, ss_cs_session_free)

/* ss_cs_solve on SESSION's backend (AUTO takes the GPU when there is one,
 * else the CPU; *USED: "cpu" or "cuda"; the GPU runs every iteration asked
 * for, no stopping test); with FITTED (n x batch, or NULL), then the
 * least-squares fit of ss_cs_debias (A, y, batch, ·, ITERATIONS,
 * params->nonneg) on each problem's support into it, X keeping the
 * solver's own estimate: on the GPU where the solve ran there (the block
 * stays on the device between the two), else ss_cs_debias on a copy of X.
 * STATS times the solve alone. */
gboolean ss_cs_session_solve (SsCsSession *session, const SsCsParams *params, SsLinop *A,
                              const float *y, int batch, float *x, float *fitted, int iterations,
                              SsCsStats *stats, const char **used, GError **error);

/* Helpers both backends use: a row from its measured times (floors with
 * their byte counts, the seed's figure, ratio and speed-up), and the seed's
 * figures. ERROR: the NIHT solve's relative error at the end. */
void ss_cs_bench_row_niht (SsCsBenchRow *row, const SsCsBenchParams *bp, double seconds,
                           double pair_seconds, double bandwidth, double error);
void ss_cs_bench_row_fista (SsCsBenchRow *row, const SsCsBenchParams *bp, double seconds,
                            double products_seconds, double bandwidth);
void ss_cs_bench_row_alm (SsCsBenchRow *row, const SsCsBenchParams *bp, double total_seconds,
                          double products_seconds, double bandwidth);
void ss_cs_bench_row_finish (SsCsBenchRow *row);
/* Seed 004's dense Gaussian matrix number BP->matrix (1 to 12), from
 * BP->seed, within BP->memory_limit: what both backends' FISTA and ALM
 * benches run on. */
SsLinop *ss_cs_bench_seed_matrix (const SsCsBenchParams *bp, GError **error);
/* TRUE, with G_IO_ERROR_CANCELLED, once BP->stop is set. */
gboolean ss_cs_bench_stopped (const SsCsBenchParams *bp, GError **error);
/* Counts RESULT->rows[RESULT->n_rows], just filled, among the rows
 * measured and tells BP->progress. */
void ss_cs_bench_add_row (const SsCsBenchParams *bp, SsCsBenchResult *result);
/* Tells BP->progress that RESULT's device and bandwidth are known. */
void ss_cs_bench_device_measured (const SsCsBenchParams *bp, const SsCsBenchResult *result);
double ss_cs_seed003_niht_dct_seconds (gsize n, double delta);

G_END_DECLS
