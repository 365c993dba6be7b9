/* ss-cuda-internal.h: what the CUDA backend's .cu files share (never included by C code).
 *
 * The context (device, stream, cuFFT plan cache with one shared work area,
 * lazily created cuBLAS/cuSOLVER handles, pinned report buffers), the status
 * checks that turn every CUDA/cuFFT/cuBLAS/cuSOLVER code into a GError naming
 * the call, device allocation with a running peak, the problem as it lives
 * on the device, and the report pipeline shared by the iterative solvers.
 */
#pragma once

#include <cuda_runtime.h>
#include <cufft.h>
#include <cublas_v2.h>
#include <cusolverDn.h>

#include "ss-cuda.h"
#include "ss-error.h"
#include "ss-starlet.h"

/* ---- context ------------------------------------------------------------ */

typedef struct {
  int width, height, batch;
  cufftType type;
  cufftHandle handle;
  size_t work_bytes;
} SsCudaPlan;

struct _SsCudaContext {
  int device;
  char *name;
  int sm_count;
  size_t total_memory;
  cudaStream_t stream;
  cublasHandle_t cublas;        /* created on first use */
  cusolverDnHandle_t cusolver;  /* created on first use */
  GArray *plans;                /* SsCudaPlan */
  void *fft_work;               /* one work area shared by every cached plan */
  size_t fft_work_bytes;
  void *pinned;                 /* report slots */
  size_t pinned_bytes;
  size_t mem_current, mem_peak; /* bytes from ss_cuda_alloc */
  gboolean use_graphs;
  double batch_phases[SS_BATCH_PHASES]; /* ss_cuda_solve_batch's phases, seconds */
  int blocks_per_sm;            /* grid cap of the elementwise kernels (0: none) */
};

/* ---- status checks -------------------------------------------------------- */

gboolean ss_cuda_ok (cudaError_t status, const char *call, GError **error);
gboolean ss_cufft_ok (cufftResult status, const char *call, GError **error);
gboolean ss_cublas_ok (cublasStatus_t status, const char *call, GError **error);
gboolean ss_cusolver_ok (cusolverStatus_t status, const char *call, GError **error);

/* Each names the call it checks (the text of the call, cut at its '('). */
#define CUDA_OK(call) ss_cuda_ok ((call), #call, error)
#define CUFFT_OK(call) ss_cufft_ok ((call), #call, error)
#define CUBLAS_OK(call) ss_cublas_ok ((call), #call, error)
#define CUSOLVER_OK(call) ss_cusolver_ok ((call), #call, error)
/* After a kernel launch: the launch's own status. */
#define LAUNCH_OK(name) ss_cuda_ok (cudaGetLastError (), name, error)

/* ---- memory --------------------------------------------------------------- */

/* cudaMalloc with the running count; SS_ERROR_OUT_OF_MEMORY names WHAT, the
 * bytes asked for and the bytes free. */
gboolean ss_cuda_alloc (SsCudaContext *ctx, void **ptr, size_t bytes, const char *what,
                        GError **error);
void ss_cuda_free (SsCudaContext *ctx, void *ptr, size_t bytes);
/* *DEV = a device copy of BYTES at HOST (allocated with ss_cuda_alloc,
 * named WHAT), copied on the context's stream; HOST may be freed on
 * return. */
gboolean ss_cuda_upload (SsCudaContext *ctx, void **dev, const void *host, size_t bytes,
                         const char *what, GError **error);
/* Fails with SS_ERROR_OUT_OF_MEMORY when NEED bytes are not free now. */
gboolean ss_cuda_check_free (SsCudaContext *ctx, size_t need, const char *what, GError **error);
void ss_cuda_reset_peak (SsCudaContext *ctx);
char *ss_cuda_format_bytes (double bytes);

/* Pinned host memory of at least BYTES, owned by the context. */
void *ss_cuda_pinned (SsCudaContext *ctx, size_t bytes, GError **error);

gboolean ss_cuda_cublas (SsCudaContext *ctx, GError **error);
gboolean ss_cuda_cusolver (SsCudaContext *ctx, GError **error);

/* ---- cuFFT plans ---------------------------------------------------------- */

/* A cached 2-D (1-D when height is 1) R2C or C2R plan for BATCH contiguous
 * images, on the context's stream, using the shared work area. Never call
 * while the stream is being captured (it may allocate). */
gboolean ss_cuda_plan (SsCudaContext *ctx, int width, int height, int batch, cufftType type,
                       cufftHandle *plan, GError **error);
/* Work-area bytes the plan for this shape would need (0 on failure). */
size_t ss_cuda_plan_work_estimate (int width, int height, int batch, cufftType type);
/* The work-area bytes a plan would add on CTX: 0 when it is cached (its
 * work area is allocated already), else ss_cuda_plan_work_estimate. Cheap
 * for cached plans: no cuFFT call. */
size_t ss_cuda_plan_work_needed (SsCudaContext *ctx, int width, int height, int batch,
                                 cufftType type);
/* ss_cuda_check_free for a solver of WIDTH × HEIGHT images: BYTES of its own
 * buffers and the work area its R2C and C2R plans of BATCH transforms would
 * add (ss_cuda_plan_work_needed). */
gboolean ss_cuda_check_solver_room (SsCudaContext *ctx, int width, int height, int batch,
                                    size_t bytes, const char *what, GError **error);
/* Destroys every cached plan and frees the work area. */
void ss_cuda_plans_clear (SsCudaContext *ctx);
/* At the start of a solve (nothing holds a plan): drops plans of other sizes,
 * so the cache holds one size (at most four plans) and a right-sized work area. */
void ss_cuda_plans_prepare (SsCudaContext *ctx, int width, int height);

/* ---- launch shapes -------------------------------------------------------- */

#define SS_CUDA_THREADS 256

/* Blocks for a grid-stride loop over COUNT items. */
static inline unsigned
ss_cuda_blocks (const SsCudaContext *ctx, size_t count)
{
  size_t blocks = (count + SS_CUDA_THREADS - 1) / SS_CUDA_THREADS;
  size_t cap = ctx->blocks_per_sm > 0 ? (size_t) ctx->sm_count * ctx->blocks_per_sm
                                      : (size_t) G_MAXINT;
  if (blocks > cap)
    blocks = cap;
  return (unsigned) (blocks > 0 ? blocks : 1);
}

/* ---- the problem on the device -------------------------------------------- */

typedef struct {
  int width, height;
  size_t n;          /* pixels */
  size_t spec;       /* complex values of one half-spectrum: height * (width/2+1) */
  size_t m;          /* observed pixels */
  double lipschitz;  /* max |c^|^2 */
  float2 *chat;      /* spec */
  float *y;          /* n: P^T y */
  unsigned char *mask; /* n bytes or NULL (all observed) */
  float *truth;      /* n or NULL */
  float *held_y;     /* n or NULL: SsProblem.held_out's data at every pixel */
  unsigned char *held_counted; /* n bytes or NULL: its counted held-out pixels */
  const SsProblem *host; /* what was uploaded (for host-side setup, e.g. RL's), or NULL */
  struct SsCudaHostEstimate *estimate_host; /* the estimate's host buffer, made while the
                                               device works (ss-cuda-solve.cu), or NULL */
} SsCudaProblem;

gboolean ss_cuda_problem_upload (SsCudaContext *ctx, const SsProblem *problem,
                                 SsCudaProblem *dev, GError **error);
/* OP's c^ into the device half-spectrum CHAT: copied, or for a deferred
 * operator made here from its kernel with cuFFT. */
gboolean ss_cuda_upload_spectrum (SsCudaContext *ctx, const SsOperator *op, float2 *chat,
                                  GError **error);
/* A random problem for benchmarks, drawn on the device: c^ = the box:5 row
 * blur's transfer function times a random circulant's spectrum, half the
 * pixels observed, random data. */
gboolean ss_cuda_problem_random (SsCudaContext *ctx, int width, int height, guint32 seed,
                                 SsCudaProblem *dev, GError **error);
void ss_cuda_problem_free (SsCudaContext *ctx, SsCudaProblem *dev);

/* ---- kernels shared by the solvers (ss-cuda-kernels.cu) ------------------- */

/* s[k] *= (CONJ ? conj(c[k]) : c[k]) * scale, for COUNT values in each of BATCH spectra. */
gboolean ss_cuda_spectrum_multiply (SsCudaContext *ctx, float2 *s, const float2 *c,
                                    size_t count, int batch, gboolean conjugate, float scale,
                                    GError **error);
/* out = C x (P applied when MASK): R2C, multiply, C2R; SPEC is scratch. X is kept. */
gboolean ss_cuda_apply_operator (SsCudaContext *ctx, const SsCudaProblem *p, const float *x,
                                 float2 *spec, float *out, gboolean adjoint, GError **error);
/* Fills with uniform values in [lo, hi) from a counter-based hash (seeded). */
gboolean ss_cuda_fill_random (SsCudaContext *ctx, float *x, size_t count, guint32 seed,
                              float lo, float hi, GError **error);

/* ---- reports (ss-cuda-report.cu) ------------------------------------------ */

/* Device accumulators of one report, in this order, then the preview floats. */
enum {
  SS_ACC_RESIDUAL,   /* sum over observed pixels of (C x - y)^2 */
  SS_ACC_L1,         /* sum |x| */
  SS_ACC_ERROR,      /* sum (x - truth)^2 */
  SS_ACC_NORM,       /* sum x^2 */
  SS_ACC_DELTA,      /* sum (x_k - x_{k-1})^2, filled by the solver's last iteration */
  SS_ACC_HELD_OUT,   /* a validation run's held-out error: RL's fills it in its last
                        iteration, the reporter for a problem with SsProblem.held_out */
  SS_ACC_COUNT = 8
};

typedef struct {
  SsCudaContext *ctx;
  const SsCudaProblem *p;
  const SsSolveParams *params;
  double *block;       /* device: SS_ACC_COUNT doubles, then the preview */
  float *preview;      /* device, inside block */
  int pw, ph;
  size_t block_bytes;
  float2 *spec;        /* scratch half-spectrum (borrowed) */
  float *real;         /* scratch image (borrowed) */
  gboolean has_delta;  /* the solver fills SS_ACC_DELTA */
} SsCudaReporter;

gboolean ss_cuda_reporter_init (SsCudaReporter *r, SsCudaContext *ctx, const SsCudaProblem *p,
                                const SsSolveParams *params, GError **error);
void ss_cuda_reporter_clear (SsCudaReporter *r);
/* Zeroes the accumulators (before the iteration that fills SS_ACC_DELTA). */
gboolean ss_cuda_reporter_reset (SsCudaReporter *r, GError **error);
/* Enqueues C x, the metric reductions and the preview of the estimate X. */
gboolean ss_cuda_reporter_enqueue (SsCudaReporter *r, const float *x, GError **error);
/* The reductions and the preview alone, with CX = C x already computed
 * (a batch transforms all its estimates at once). */
gboolean ss_cuda_reporter_enqueue_metrics (SsCudaReporter *r, const float *x, const float *cx,
                                           GError **error);
/* Turns a copied block into a report. */
void ss_cuda_reporter_fill (const SsCudaReporter *r, const void *host_block, SsReport *report);

/* The solver's scratch the reports borrow (a half-spectrum SPEC and an image
 * REAL, both free between iterations), and whether the solver's last
 * iteration of an interval fills SS_ACC_DELTA. */
static inline void
ss_cuda_reporter_borrow (SsCudaReporter *r, float2 *spec, float *real, gboolean has_delta)
{
  r->spec = spec;
  r->real = real;
  r->has_delta = has_delta;
}

/* ---- the iteration driver (ss-cuda-iterate.cu) ---------------------------- */

/* Iteration flags: the estimate is written to its own buffer, and the squared
 * change of the estimate is accumulated into SS_ACC_DELTA. */
/* SS_ITER_LAST marks a run's last iteration (it comes with the other two):
 * RL blends its estimate there (ss-rl-blend.h), before the final report
 * reads it. */
enum { SS_ITER_WRITE_ESTIMATE = 1, SS_ITER_DELTA = 2, SS_ITER_LAST = 4 };

#define SS_CUDA_GRAPH_CHUNK 16

typedef struct {
  gpointer solver;
  /* Enqueues one iteration (no host synchronisation, capturable). */
  gboolean (*iterate) (gpointer solver, unsigned flags, GError **error);
  /* The iteration as its stages (transforms, kernels), for timing each. */
  int stage_count;
  const char *const *stage_names;
  gboolean (*stage) (gpointer solver, int stage, unsigned flags, GError **error);
  /* Device pointer of the estimate, valid after an iteration with WRITE_ESTIMATE. */
  const float *(*estimate) (gpointer solver);
  /* Back to the starting state (all zero), for a second timed run. */
  gboolean (*reset) (gpointer solver, GError **error);
  /* FALSE when an iteration waits on the host (FISTA backtracking): never
   * captured into a graph. */
  gboolean capturable;
  /* A stopping rule read from each report (RL's discrepancy), or NULL. TRUE
   * ends the run at that report, which is then the final one. With a rule
   * the driver waits for each report before enqueuing the next interval, so
   * the estimate is still the report's when the rule fires: one host wait
   * per report, none per iteration. ACC is the report's copied block, its
   * SS_ACC_* accumulators (a solver's own, SS_ACC_HELD_OUT, among them). */
  gboolean (*stop) (gpointer solver, const SsReport *report, const double *acc);
  /* A solve in several runs (RL's hold-out rule: a validation run, then the
   * run on all the data), or NULL for one. Called before each run with DONE
   * iterations behind it: TRUE when a run follows, with RUN's iteration count
   * and report interval set for it and the solver ready to start it. */
  gboolean (*next_run) (gpointer solver, SsSolveParams *run, int done, GError **error);
  /* While TRUE no report is final (a run that more runs follow). */
  gboolean provisional;
  /* What the solver adds to a successful solve's result (RL's floor, and
   * which of a solve's runs were validation), or NULL. */
  void (*finish) (gpointer solver, SsSolveResult *result);
  /* Added to the run's own iteration count in reports: the iterations of the
   * runs before it. */
  int iteration_offset;
  /* CUDA graphs of 1..SS_CUDA_GRAPH_CHUNK plain iterations, captured on first
   * use and kept for the solver's life (they hold its buffer addresses). */
  cudaGraphExec_t graphs[SS_CUDA_GRAPH_CHUNK + 1];
} SsCudaIterator;

/* What every solver's constructor hands the driver: SOLVER's iteration,
 * its estimate, its reset (NULL: it cannot restart) and whether graphs may
 * capture it. */
static inline void
ss_cuda_iterator_bind (SsCudaIterator *it, gpointer solver,
                       gboolean (*iterate) (gpointer solver, unsigned flags, GError **error),
                       const float *(*estimate) (gpointer solver),
                       gboolean (*reset) (gpointer solver, GError **error), gboolean capturable)
{
  it->solver = solver;
  it->iterate = iterate;
  it->estimate = estimate;
  it->reset = reset;
  it->capturable = capturable;
}

/* The iteration as COUNT stages named NAMES, for the bench's timing of each. */
static inline void
ss_cuda_iterator_stages (SsCudaIterator *it,
                         gboolean (*stage) (gpointer solver, int stage, unsigned flags,
                                            GError **error),
                         const char *const *names, int count)
{
  it->stage = stage;
  it->stage_names = names;
  it->stage_count = count;
}

/* Enqueues COUNT plain iterations (flags 0), as graphs when the context and
 * the iterator allow; no host synchronisation. */
gboolean ss_cuda_iterator_enqueue_plain (SsCudaContext *ctx, SsCudaIterator *it, int count,
                                         GError **error);

/* Destroys the iterator's graphs (before its solver is freed). */
void ss_cuda_iterator_clear (SsCudaIterator *it);

typedef struct {
  int iterations;      /* done */
  SsReport last;       /* metrics of the last report (preview pointer cleared) */
  gboolean cancelled;
} SsCudaRunOutcome;

/* Runs PARAMS->iterations iterations, reporting every params->report_every
 * and at the end. One host wait per report, for the report before it. */
gboolean ss_cuda_run_iterations (SsCudaContext *ctx, SsCudaIterator *it, SsCudaReporter *reporter,
                                 const SsSolveParams *params, SsReportFunc report,
                                 gpointer user_data, GCancellable *cancellable, double start,
                                 SsCudaRunOutcome *outcome, GError **error);

/* ---- solvers -------------------------------------------------------------- */

typedef struct _SsCudaSolver SsCudaSolver;

/* The part every solver's state starts with. */
struct _SsCudaSolver {
  SsCudaContext *ctx;
  void (*destroy) (SsCudaSolver *solver);
  size_t bytes;            /* device bytes the solver allocated */
};

/* Iterative solvers on a device problem: create (allocates, checks memory),
 * then run through ss_cuda_run_iterations, then copy out and free. */
SsCudaSolver *ss_cuda_cpadmm_new (SsCudaContext *ctx, const SsCudaProblem *p,
                                  const SsSolveParams *params, SsCudaIterator *it,
                                  SsCudaReporter *reporter, GError **error);
SsCudaSolver *ss_cuda_fista_new (SsCudaContext *ctx, const SsCudaProblem *p,
                                 const SsSolveParams *params, SsCudaIterator *it,
                                 SsCudaReporter *reporter, GError **error);
/* Elementwise bytes of one plain RL iteration, for the benchmark's floor. */
double ss_cuda_rl_iteration_bytes (const SsCudaProblem *p, const SsSolveParams *params);
SsCudaSolver *ss_cuda_rl_new (SsCudaContext *ctx, const SsCudaProblem *p,
                              const SsSolveParams *params, SsCudaIterator *it,
                              SsCudaReporter *reporter, GError **error);
/* Richardson–Lucy's setup (ss-rl.h) with its transforms here: fills SETUP
 * and WEIGHT (n floats) with RL's normaliser 1/Cᵀ(P1); SCRATCH and SUM (n
 * floats) and SPEC (a half-spectrum) are work space. Needs p->host. */
typedef struct SsRlSetup SsRlSetup;
gboolean ss_cuda_rl_setup (SsCudaContext *ctx, const SsCudaProblem *p,
                           const SsSolveParams *params, float *weight, float *scratch,
                           float *sum, float2 *spec, SsRlSetup *setup, GError **error);
/* WEIGHT = 1/Cᵀ(P1) as above, with P the observed pixels that RL fits: all of
 * them, or in the hold-out rule's validation run (HOLDOUT) the fitted half of
 * IMAGE's (ss-rl-holdout.h). SCRATCH and SPEC are work space. */
gboolean ss_cuda_rl_normaliser (SsCudaContext *ctx, const SsCudaProblem *p, gboolean holdout,
                                SsRegion image, float *weight, float *scratch, float2 *spec,
                                GError **error);
/* ADMM with the TV and starlet priors (ss-cuda-admm-prior.cu). */
SsCudaSolver *ss_cuda_admm_prior_new (SsCudaContext *ctx, const SsCudaProblem *p,
                                      const SsSolveParams *params, SsCudaIterator *it,
                                      SsCudaReporter *reporter, GError **error);

/* admm's starlet splits (ss-cuda-starlet.cu): SCALES detail scales, each
 * with its threshold λ_j/σ and its reweighting ε_j; NU, U, and Z and
 * REWEIGHT (both NULL without reweighting, which alone reads z) hold SCALES
 * images each, SMOOTH two images of work space. With MERGED (dual step 1,
 * no reweighting) NU holds each scale's b = w + ν before the shrinkage
 * instead, from which ν and u follow, and U is NULL. */
typedef struct {
  int scales;
  gboolean merged;
  float threshold[SS_STARLET_SCALES];
  float eps[SS_STARLET_SCALES];
  float *z, *nu, *u, *reweight, *smooth[2];
} SsCudaStarletSplits;

/* From X: every scale's split (prox and dual step τ) and U = z − ν. */
gboolean ss_cuda_starlet_splits (SsCudaContext *ctx, const SsCudaStarletSplits *s,
                                 const float *x, int width, int height, float tau,
                                 GError **error);
/* SUM += Σ_j ψ_jᵀ u_j. */
gboolean ss_cuda_starlet_adjoint_add (SsCudaContext *ctx, const SsCudaStarletSplits *s,
                                      float *sum, int width, int height, GError **error);
/* REWEIGHT = ε_j/(ε_j + |z_j|). */
gboolean ss_cuda_starlet_reweight (SsCudaContext *ctx, const SsCudaStarletSplits *s, size_t n,
                                   GError **error);
/* Elementwise bytes of the two above in one iteration on a WIDTH × HEIGHT
 * image, for the floor. */
double ss_cuda_starlet_iteration_bytes (int scales, gboolean reweighted, gboolean merged,
                                        int width, int height);
SsCudaSolver *ss_cuda_direct_fft_new (SsCudaContext *ctx, const SsCudaProblem *p,
                                      const SsSolveParams *params, SsCudaIterator *it,
                                      SsCudaReporter *reporter, GError **error);
void ss_cuda_solver_free (SsCudaSolver *solver);

typedef SsCudaSolver *(*SsCudaSolverNew) (SsCudaContext *ctx, const SsCudaProblem *p,
                                          const SsSolveParams *params, SsCudaIterator *it,
                                          SsCudaReporter *reporter, GError **error);
typedef gboolean (*SsCudaSolveDevice) (SsCudaContext *ctx, const SsCudaProblem *p,
                                       const SsSolveParams *params, SsReportFunc report,
                                       gpointer user_data, GCancellable *cancellable,
                                       double start, SsSolveResult *result, GError **error);

/* A solver's CUDA entry, named by its descriptor in the solver table. An
 * iterative solver gives CREATE and runs through ss_cuda_run_iterations (a
 * one-shot one too, for one iteration); any other gives SOLVE. */
struct _SsCudaSolverEntry {
  SsCudaSolverNew create;
  SsCudaSolveDevice solve;
};

/* Floor accounting: elementwise bytes one iteration moves (fused passes). */
double ss_cuda_cpadmm_iteration_bytes (const SsCudaProblem *p);
double ss_cuda_fista_iteration_bytes (const SsCudaProblem *p);
/* admm's with PARAMS's prior. */
double ss_cuda_admm_prior_iteration_bytes (const SsCudaProblem *p, const SsSolveParams *params);

/* Dense direct (ss-cuda-direct.cu). X_OUT: n floats on the device (caller allocates). */
typedef struct {
  double phase_seconds[4];   /* normal matrix, Cholesky, inverse or solve, apply */
  double reference_seconds;  /* library triangular inverse (when asked) */
  size_t peak_bytes;
} SsCudaDenseTiming;

gboolean ss_cuda_dense_solve (SsCudaContext *ctx, const SsCudaProblem *p, double lambda,
                              SsDirectMethod method, size_t memory_limit,
                              gboolean time_reference, float *x_out,
                              SsCudaDenseTiming *timing, GError **error);

/* GETS (ss-cuda-gets.cu): R = L^-1 for a lower-triangular column-major device
 * matrix; R's strict upper triangle is zeroed. SS_ERROR_NUMERIC on a zero pivot. */
gboolean ss_cuda_gets_device (SsCudaContext *ctx, const float *L, int64_t n, int64_t lda,
                              float *R, int64_t ldr, GError **error);
gboolean ss_cuda_gets_unblocked_device (SsCudaContext *ctx, const float *L, int64_t n,
                                        int64_t lda, float *R, int64_t ldr, GError **error);
/* The library's triangular inverse in place (cusolverDnXtrtri). */
gboolean ss_cuda_trtri_device (SsCudaContext *ctx, float *A, int64_t n, int64_t lda,
                               GError **error);
