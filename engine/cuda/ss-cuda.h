/* ss-cuda.h: the CUDA backend behind a plain C interface.
 *
 * An opaque context owns the device choice, a stream, cuFFT plans cached per
 * size, cuBLAS/cuSOLVER handles and pinned host buffers for reports. Every
 * CUDA, cuFFT, cuBLAS and cuSOLVER status is checked and becomes a GError
 * (SS_ERROR_CUDA naming the call; SS_ERROR_OUT_OF_MEMORY naming need and free
 * memory). The engine includes this header only when SHARPSKY_HAVE_CUDA is 1.
 */
#pragma once

#include "ss-solver.h"
#include "ss-bench.h"
#include "ss-cs-bench.h"

G_BEGIN_DECLS

typedef struct _SsCudaContext SsCudaContext;

/* Usable devices; 0 when there is no driver or device (never fails). */
int ss_cuda_device_count (void);

/* DEVICE's product name (MODEL), its name as a context on it reports it
 * (NAME) and its memory, without making a context's stream or handles: for
 * listings. The calling thread's current device is left as it was. */
gboolean ss_cuda_device_query (int device, char **model, char **name, gsize *free_bytes,
                               gsize *total_bytes, GError **error);

SsCudaContext *ss_cuda_context_new (int device, GError **error);
void ss_cuda_context_free (SsCudaContext *ctx);
const char *ss_cuda_context_get_device_name (const SsCudaContext *ctx);
int ss_cuda_context_get_device (const SsCudaContext *ctx);
/* Free and total device memory now, bytes. */
void ss_cuda_context_get_memory (SsCudaContext *ctx, gsize *free_bytes, gsize *total_bytes);
/* Device bytes CTX holds now through its allocator (ss_cuda_alloc): what a
 * leak check compares, which the card's free memory is not when another
 * process shares the card. */
gsize ss_cuda_context_get_allocated (const SsCudaContext *ctx);

/* Same contract as ss_backend_solve (ss-backend.h). */
gboolean ss_cuda_solve (SsCudaContext *ctx, const SsProblem *problem,
                        const SsSolveParams *params, SsReportFunc report,
                        gpointer user_data, GCancellable *cancellable,
                        SsSolveResult *result, GError **error);

/* RL's floor β − b for PROBLEM (ss-rl.h; what ss_pixel_l1_floor measures on
 * the host), with RL's setup transforms on the device: FALSE with an error
 * when C is not a blur. */
gboolean ss_cuda_rl_floor (SsCudaContext *ctx, const SsProblem *problem,
                           const SsSolveParams *params, double *floor, GError **error);


/* Same contract as ss_backend_solve_batch on one device (ss-cuda-batch.cu),
 * for CPADMM problems sharing one operator (ss_problems_share_operator;
 * anything else fails with SS_ERROR_UNSUPPORTED): one batched iteration, in
 * as many sub-batches as the free memory needs. */
gboolean ss_cuda_solve_batch (SsCudaContext *ctx, const SsProblem *problems, int count,
                              const double *alphas, const SsSolveParams *params,
                              SsBatchReportFunc report, gpointer user_data,
                              GCancellable *cancellable, SsSolveResult *results,
                              GError **error);

/* Adds the seconds of each SsBatchPhase that ss_cuda_solve_batch spent on
 * CTX since the last call into SECONDS (SS_BATCH_PHASES values), and
 * starts the count afresh. */
void ss_cuda_context_take_batch_phases (SsCudaContext *ctx, double *seconds);

gboolean ss_cuda_bench (SsCudaContext *ctx, const SsBenchParams *params,
                        SsBenchResult *result, GError **error);

/* The solvers' entries, for their descriptors in the solver table. */
extern const SsCudaSolverEntry ss_cuda_cpadmm_entry;
extern const SsCudaSolverEntry ss_cuda_fista_entry;
extern const SsCudaSolverEntry ss_cuda_direct_entry;
extern const SsCudaSolverEntry ss_cuda_direct_fft_entry;
extern const SsCudaSolverEntry ss_cuda_rl_entry;
extern const SsCudaSolverEntry ss_cuda_admm_entry;
extern const SsCudaSolverEntry ss_cuda_cs_entry;   /* iht, niht, htp, cosamp, alm */

/* Compressed sensing (ss-cuda-cs.cu) on the host operator A, uploaded: the
 * same contract as ss_cs_solve (every iteration asked for runs: there is no
 * stopping test, so no host wait). */
gboolean ss_cuda_cs_solve (SsCudaContext *ctx, const SsCsParams *params, SsLinop *A,
                           const float *y, int batch, float *x, SsCsStats *stats,
                           GError **error);
/* The same, then the least-squares fit of ss_cs_debias (A, y, batch, ·,
 * ITERATIONS, params->nonneg) on each problem's support (where its
 * estimate is nonzero), on the device, into FITTED (n x batch; NULL: no
 * fit); X gets the solver's own estimate. The fit is the host's CGLS
 * (float rounding aside) on the estimate where the solve left it: no trip
 * to the host and back between the two, X and FITTED come back once each.
 * STATS times the solve alone, as on the CPU. */
gboolean ss_cuda_cs_solve_debiased (SsCudaContext *ctx, const SsCsParams *params, SsLinop *A,
                                    const float *y, int batch, float *x, float *fitted,
                                    int iterations, SsCsStats *stats, GError **error);
/* The cs benchmarks (ss-cs-bench.h) on the GPU. */
gboolean ss_cuda_cs_bench (SsCudaContext *ctx, const SsCsBenchParams *params,
                           SsCsBenchResult *result, GError **error);
/* AX = A X and ATY = Aᵀ Y (BATCH columns) computed on the GPU, for tests. */
gboolean ss_cuda_linop_check (SsCudaContext *ctx, SsLinop *A, const float *x, float *ax,
                              const float *y, float *aty, int batch, GError **error);

/* Added for tests and benchmarks. */

/* Iteration bodies as CUDA graphs (default on; SHARPSKY_CUDA_GRAPHS=0 turns
 * them off when a context is created), for measuring both ways. */
void ss_cuda_context_set_graphs (SsCudaContext *ctx, gboolean use_graphs);
gboolean ss_cuda_context_get_graphs (const SsCudaContext *ctx);

/* R = L^-1 on the GPU for a lower-triangular column-major N x N host matrix L
 * (leading dimension LDA) into host R (LDR): BLOCKED selects GETS by pivot
 * blocks (the solver's), else the seed's one-pivot-per-launch form.
 * SS_ERROR_NUMERIC on a zero pivot. */
gboolean ss_cuda_gets_lower_inverse (SsCudaContext *ctx, const float *L, int n, int lda,
                                     float *R, int ldr, gboolean blocked, GError **error);

/* Times GETS (blocked), cuSOLVER's triangular inverse (cusolverDnXtrtri) and
 * cuBLAS TRSM with an identity right-hand side on one random well-conditioned
 * N x N lower-triangular matrix; any output may be NULL to skip it. */
gboolean ss_cuda_gets_bench (SsCudaContext *ctx, int n, double *gets_seconds,
                             double *trtri_seconds, double *trsm_seconds, GError **error);

/* A developer's table: the time of cuFFT plan creation, of each stage of one
 * iteration (transforms and kernels, each repeated alone) at WIDTH x HEIGHT,
 * and of the whole iteration. g_free the text. */
char *ss_cuda_bench_breakdown (SsCudaContext *ctx, SsSolverKind kind, int width, int height,
                               GError **error);

G_END_DECLS
