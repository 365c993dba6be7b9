/* ss-bench.h: per-iteration time against the floor measured in the same run.
 *
 * The floor is the transforms an iteration cannot avoid plus its unavoidable
 * elementwise bytes at the copy bandwidth measured in the same process
 * (DESIGN.md, "How we measure speed"). The ratio is measured / floor.
 */
#pragma once

#include "ss-solver.h"
#include "ss-boundary.h"

G_BEGIN_DECLS

typedef struct {
  SsSolverKind solver;
  int width, height;
  int iterations;
  guint32 seed;
  SsDirectMethod direct_method;
  SsPrior prior;              /* admm: the prior timed (default TV) */
  double rl_accel;            /* rl: the extrapolation's cap timed (default 0, plain RL) */
  /* Real images are padded before they are solved (ss-boundary.h);
   * ss_backend_bench pads WIDTH x HEIGHT the same way, so the size timed is
   * the one a deblur of such an image solves. */
  SsBoundary boundary;        /* default PERIODIC: no padding */
  int margin;                 /* pixels; -1 (default): the reach of the bench's PSF */
} SsBenchParams;

typedef struct {
  int width, height;          /* size measured (after any padding) */
  int margin;                 /* the padding's margin; 0 when periodic */
  int iterations;
  double seconds_per_iteration;
  double floor_fft_seconds;   /* the transforms of one iteration */
  double floor_bytes;         /* elementwise bytes of one iteration */
  double bandwidth;           /* measured copy bandwidth, bytes/s (read + write) */
  double floor_seconds;       /* floor_fft_seconds + floor_bytes / bandwidth */
  double ratio;               /* seconds_per_iteration / floor_seconds */
  double iterations_per_second;
  double total_seconds;       /* all iterations */
  gsize peak_memory_bytes;
  gsize fft_work_bytes;       /* library work areas, not in peak_memory_bytes */
  double phase_seconds[4];    /* direct: normal matrix, Cholesky, inverse/solve, apply */
  double reference_seconds;   /* direct: the library's triangular inverse of an n×n L ... */
  double gets_seconds;        /* ... and GETS on the same L */
  int triangular_n;           /* that n */
  char *device;
} SsBenchResult;

void ss_bench_params_init (SsBenchParams *params);
void ss_bench_result_clear (SsBenchResult *result);

/* The solve parameters an iterative bench times PARAMS's solver with, the
 * same on every backend: the solver's own for most; admm with the bench's
 * prior on the unweighted data; plain RL, every iteration (the rules' runs
 * are timed by `bench --whole`). The caller sets the counts. */
SsSolveParams ss_bench_solve_params (const SsBenchParams *params);

/* RL's benchmark problem, the same on every backend: a Gaussian blur (FWHM
 * 2.5; RL refuses the other benches' random sensing) of WIDTH x HEIGHT and
 * data in [0.5, 1.5) drawn from SEED (its values do not change an
 * iteration's work). *OP (ss_operator_free) and *Y (g_free) on success. */
gboolean ss_bench_rl_problem (int width, int height, guint32 seed, SsOperator **op, float **y,
                              GError **error);

/* The elementwise bytes an RL iteration (no TV) must move, for its floor;
 * ACCELERATED: with the extrapolation (ss-rl-accel.h). */
double ss_bench_rl_iteration_bytes (int width, int height, gboolean masked,
                                    gboolean accelerated);

G_END_DECLS
