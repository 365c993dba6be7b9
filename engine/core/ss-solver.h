/* ss-solver.h: solver parameters, progress reports and results.
 *
 * The problem is the LASSO  min_x 1/2 ||P C x - y||^2 + alpha ||x||_1  (with
 * optional x >= 0), or, for the direct solvers, the Tikhonov system
 * (A^T A + alpha I) x = A^T y with A = P C.
 * Solvers are run through a backend (ss-backend.h).
 */
#pragma once

#include <gio/gio.h>
#include "ss-model.h"

G_BEGIN_DECLS

typedef enum {
  SS_SOLVER_CPADMM,
  SS_SOLVER_FISTA,
  SS_SOLVER_ISTA,
  SS_SOLVER_DIRECT,       /* dense Cholesky, then solve or explicit (GETS) inverse */
  SS_SOLVER_DIRECT_FFT,   /* Fourier-diagonal Tikhonov, exact when every pixel is observed */
  /* planned: SS_SOLVER_NIHT, SS_SOLVER_HTP, SS_SOLVER_COSAMP (seed 003) */
} SsSolverKind;

typedef enum {
  SS_DIRECT_SOLVE,        /* two triangular solves */
  SS_DIRECT_INVERSE,      /* explicit L^-1 by GETS, then two triangular products */
} SsDirectMethod;

typedef struct {
  SsSolverKind kind;
  double alpha;           /* l1 weight (LASSO) / Tikhonov lambda (direct); >= 0 */
  double rho;             /* CPADMM penalty on v = P C x; > 0 */
  double sigma;           /* CPADMM penalty on z = x; > 0 */
  double tau;             /* CPADMM dual step, (0, (1+sqrt5)/2) */
  int iterations;         /* > 0 for iterative solvers */
  int report_every;       /* report every k iterations (and at the end); >= 1 */
  gboolean nonneg;        /* x >= 0 */
  gboolean backtracking;  /* FISTA: backtracking on the step (starts at 1/L) */
  gboolean continuation;  /* FISTA: lambda continuation from max|A^T y| down to alpha */
  SsDirectMethod direct_method;
  int preview_width;      /* 0: no preview in reports */
  int preview_height;
  gsize memory_limit;     /* bytes the dense direct path may use; 0 = what the machine has */
} SsSolveParams;

/* Defaults: CPADMM, alpha 1e-3, rho 1, sigma 1, tau 1, 300 iterations, report every 10. */
void ss_solve_params_init (SsSolveParams *params);
gboolean ss_solve_params_validate (const SsSolveParams *params, GError **error);
const char *ss_solver_kind_to_string (SsSolverKind kind);
gboolean ss_solver_kind_from_string (const char *text, SsSolverKind *kind, GError **error);
gboolean ss_solver_is_iterative (SsSolverKind kind);

/* What a backend solves. All arrays are n = width * height floats, scaled units. */
typedef struct {
  const SsOperator *op;
  const float *y;         /* P^T y: the observations, 0 where unobserved */
  const float *truth;     /* optional (NULL): MSE/PSNR are reported against it */
} SsProblem;

typedef struct {
  int iteration;          /* iterations done */
  double elapsed;         /* seconds since the solve started */
  double mse;             /* ||x - truth||^2 / n, NAN without a truth */
  double psnr;            /* 10 log10(1 / mse), NAN without a truth */
  double residual;        /* ||P C x - y||^2 / m */
  double rel_change;      /* ||x_k - x_{k-1}|| / ||x_k|| */
  double objective;       /* 1/2 ||P C x - y||^2 + alpha ||x||_1 */
  const float *preview;   /* preview_width x preview_height box-averaged estimate, or NULL;
                             valid only during the callback */
  int preview_width;
  int preview_height;
  gboolean final;
} SsReport;

/* Runs on the solver's thread; a UI hands the data to its main loop itself. */
typedef void (*SsReportFunc) (const SsReport *report, gpointer user_data);

typedef struct {
  float *x;               /* n floats, scaled units (g_free) */
  int width, height;
  int iterations;
  double seconds;         /* solve time, setup included, file I/O excluded */
  double mse, psnr, residual, objective, rel_change;
  gsize peak_memory_bytes;/* engine buffers (host for CPU, device for CUDA) */
  char *backend;          /* "cpu" or "cuda" */
  char *device;
  char *warning;          /* e.g. a fall-back from CUDA to the CPU, or NULL */
  double phase_seconds[4];/* direct: normal matrix, Cholesky, inverse/solve, apply */
} SsSolveResult;

void ss_solve_result_clear (SsSolveResult *result);

G_END_DECLS
