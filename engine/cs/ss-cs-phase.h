/* ss-cs-phase.h: phase transitions of compressed sensing (seed 003): the
 * success rate of a solver on random k-sparse problems over a grid of
 * δ = m/n and ρ = k/m, their CSV and their heat map.
 *
 * Here, not in app/, because two front ends draw the same diagram:
 * `sharpsky-cli cs --phase-transition` and the app's Phase transition
 * window. Both run the sweep, write the CSV and the PNG through these
 * functions, so the window's numbers and files are the CLI's by
 * construction (tests/test-ui.c checks it). The heat map is an RGB raster
 * written with libpng (engine/io), no cairo: the engine never links GTK or
 * cairo; the window paints the same raster and adds its axes itself.
 */
#pragma once

#include <gio/gio.h>
#include "ss-backend.h"
#include "ss-cs.h"

G_BEGIN_DECLS

/* ss_cs_params_init, then ALGORITHM with the iteration counts and l1
 * weight `sharpsky-cli cs` gives it when none are asked for. */
void ss_cs_params_defaults (SsCsParams *params, SsCsAlgorithm algorithm);

/* ---- one block of random problems ---------------------------------------- */

/* The problems of a cell: A m x n of ENSEMBLE (P nonzeros a column for the
 * sparse one) and BATCH k-sparse problems sharing it. */
typedef struct {
  SsEnsemble ensemble;
  SsCsValues values;
  gsize n, m, k;
  int p;
  double noise;           /* sigma of the Gaussian noise added to y */
  double success_tol;     /* a problem is recovered when its relative error <= this */
  int batch;
  guint64 seed;           /* A from SEED, the problems from SEED + 1 */
} SsCsProblemSpec;

typedef struct {
  int recovered;          /* of the batch */
  double median_error, max_error;   /* relative errors (after the fit when debiased) */
  gboolean debiased;      /* judged after a least-squares fit on the found support */
  double solver_median_error;       /* the solver's own estimate, before that fit
                                       (= median_error when not debiased) */
  double seconds;         /* the solve (the fit not included) */
  int iterations;
  const char *backend;    /* "cpu" or "cuda" (static) */
} SsCsTrialsResult;

/* Whether a solve with PARAMS is judged after ss_cs_debias: the LASSO
 * (FISTA, ALM with alpha > 0), whose l1 weight shrinks every entry it
 * keeps by about alpha, so its estimate never meets a relative-error test
 * of 1e-4 even where it finds the support exactly. Greedy solvers and
 * basis pursuit are judged on their own estimates. */
gboolean ss_cs_params_debiased (const SsCsParams *params);

/* Draws SPEC's problems and solves them as one block with SOLVE (its k is
 * replaced by SPEC's) on BACKEND. With SOLVE's nonneg the problems are
 * non-negative (ss_cs_random_problems_full): x >= 0 on signed values
 * would recover nothing. A problem is recovered when its relative error is
 * at most SPEC's success_tol, for a LASSO solve (ss_cs_params_debiased)
 * after the least-squares fit on the support it found, made on the backend
 * that solved (ss_cs_session_solve). */
gboolean ss_cs_solve_random (const SsCsProblemSpec *spec, const SsCsParams *solve,
                             SsBackendKind backend, SsCsTrialsResult *result, GError **error);

/* ---- the sweep -------------------------------------------------------------- */

/* The app's grids: N_DELTAS values (i + 1)/(N_DELTAS + 1), evenly inside
 * (0, 1), and N_RHOS values 0.5 (j + 1)/N_RHOS up to ρ = 0.5 (greedy
 * methods recover nothing much above it at useful δ), rounded to 3 decimals
 * as the CLI's lists are. 9 and 10 give the CLI's defaults, 0.1…0.9 and
 * 0.05…0.5. */
void ss_cs_phase_deltas (int n_deltas, double *deltas);
void ss_cs_phase_rhos (int n_rhos, double *rhos);

typedef struct {
  SsCsProblemSpec problem;  /* m, k, batch and seed are set per cell */
  SsCsParams solve;
  SsBackendKind backend;
  int trials;               /* problems a cell, solved as one batch */
  const double *deltas;     /* N_DELTAS values in (0, 1] */
  int n_deltas;
  const double *rhos;       /* N_RHOS values in (0, 1] */
  int n_rhos;
} SsCsPhaseParams;

/* `sharpsky-cli cs`'s defaults: NIHT with its defaults (stopping at
 * residual 1e-6), Gaussian A and values, n 1024, p 8, no noise, success
 * at relative error 1e-4, 10 trials, seed 1, AUTO; no grid (the caller's). */
void ss_cs_phase_params_init (SsCsPhaseParams *params);

typedef struct {
  int index;                /* row * n_deltas + column: rows are ρ, bottom to top */
  int column, row;
  double delta, rho;
  gsize m, k;
  int trials;
  SsCsTrialsResult result;
  double fraction;          /* recovered / trials */
} SsCsPhaseCell;

/* Called on the sweep's thread after each cell; FALSE (with ERROR) stops. */
typedef gboolean (*SsCsPhaseCellFunc) (const SsCsPhaseCell *cell, gpointer user_data,
                                       GError **error);

/* m = max(1, round(δ n)), k = max(1, round(ρ m)) of cell (COLUMN, ROW);
 * FALSE when k > m or m > n would make it no problem. */
gboolean ss_cs_phase_cell_size (const SsCsPhaseParams *params, int column, int row, gsize *m,
                                gsize *k);

/* The seed of the cell at (DELTA, RHO) of a sweep seeded SEED: a hash of
 * the seed and the two values' bit patterns, so a cell draws the same
 * matrix and problems in any grid that holds it (its place in the grid
 * takes no part). */
guint64 ss_cs_phase_cell_seed (guint64 seed, double delta, double rho);

/* Runs the cells row by row (ρ outer, δ inner); each cell draws its matrix
 * from ss_cs_phase_cell_seed (problem.seed, δ, ρ), its problems from that
 * + 1 (ss_cs_solve_random). CANCELLABLE is checked between cells and,
 * on the CPU, every 10 iterations inside a solve (the GPU runs a cell to
 * its end); a cancelled sweep fails with G_IO_ERROR_CANCELLED after the
 * cells FUNC was given. */
gboolean ss_cs_phase_transition (const SsCsPhaseParams *params, SsCsPhaseCellFunc func,
                                 gpointer user_data, GCancellable *cancellable, GError **error);

/* ---- the CSV and the heat map ------------------------------------------- */

/* The CSV of N cells in their order: a header "delta,rho,m,k,trials,
 * recovered,fraction,median_error,seconds", then a line a cell. g_free. */
char *ss_cs_phase_csv (const SsCsPhaseCell *cells, guint n);
/* Writes it to PATH, with the overwrite rules of every output (ss-output.h). */
gboolean ss_cs_phase_write_csv (const char *path, const SsCsPhaseCell *cells, guint n,
                                gboolean force, GError **error);

/* Success FRACTION 0..1 as a blue-to-yellow ramp (viridis' ends and middle). */
void ss_cs_phase_colour (double fraction, guint8 rgb[3]);

/* The heat map as 8-bit RGB rows, top row first: CELL pixels a cell (its
 * last row and column the one-pixel grey grid), δ left to right, ρ bottom
 * to top; FRACTION[row * cols + column], NAN for a cell not yet done (drawn
 * light grey). *WIDTH = cols CELL + 1, *HEIGHT = rows CELL + 1. g_free. */
guint8 *ss_cs_phase_render (const double *fraction, int cols, int rows, int cell, int *width,
                            int *height);

/* The heat map at 24 pixels a cell as a PNG, its axes in the Description
 * text; same overwrite rules as every output (ss-output.h). */
gboolean ss_cs_phase_write_png (const char *path, const double *fraction, int cols, int rows,
                                gboolean force, GError **error);

G_END_DECLS
