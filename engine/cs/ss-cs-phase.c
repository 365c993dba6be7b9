/* ss-cs-phase.c: phase transitions over δ = m/n and ρ = k/m (seed 003),
 * shared by `sharpsky-cli cs --phase-transition` and the app's window. */
#include "ss-cs-phase.h"
#include "ss-cs-bench.h"
#include "ss-report.h"
#include "ss-error.h"
#include "ss-output.h"
#include "ss-png.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The heat map's cell in the PNG, and the grid's and pending cells' greys. */
#define PNG_CELL 24
#define GRID_GREY 128
#define PENDING_GREY 224

void
ss_cs_params_defaults (SsCsParams *p, SsCsAlgorithm algorithm)
{
  ss_cs_params_init (p);
  p->algorithm = algorithm;
  switch (algorithm)
    {
    case SS_CS_HTP:
    case SS_CS_COSAMP: p->iterations = 100; p->inner_iterations = 50; break;
    case SS_CS_FISTA: p->iterations = 1000; p->alpha = 1e-3; break;
    case SS_CS_ALM: p->iterations = 30; p->inner_iterations = 200; break;
    default: p->iterations = 1000; break;
    }
}

/* ---- one block of random problems ------------------------------------------ */

gboolean
ss_cs_params_debiased (const SsCsParams *params)
{
  return params->algorithm == SS_CS_FISTA
         || (params->algorithm == SS_CS_ALM && params->alpha > 0);
}

/* CGLS steps of the fit on a support: it stops far sooner (a gradient 1e-7
 * of its start) on any support well inside m. */
#define DEBIAS_ITERATIONS 200

/* The median of the BATCH problems' relative errors into *MEDIAN (and the
 * largest into *MAX); returns how many are at most TOL. */
static int
block_errors (const float *x, const float *truth, gsize n, int batch, double tol,
              double *median, double *max)
{
  g_autofree double *errors = g_new (double, batch);
  int recovered = 0;
  for (int b = 0; b < batch; b++)
    {
      errors[b] = ss_cs_relative_error (x + b * n, truth + b * n, n);
      recovered += errors[b] <= tol;
    }
  *median = ss_median_of_doubles (errors, batch);
  if (max)
    *max = errors[batch - 1];
  return recovered;
}

/* ss_cs_solve_random in SESSION (a sweep's: its GPU context serves every
 * cell). */
static gboolean
solve_random_in (SsCsSession *session, const SsCsProblemSpec *spec, const SsCsParams *solve,
                 SsCsTrialsResult *out, GError **error)
{
  gsize n = spec->n;
  int batch = spec->batch;
  g_autoptr (SsLinop) A = ss_linop_new (spec->ensemble, spec->m, n,
                                        MIN ((gsize) spec->p, spec->m), spec->seed, 0, error);
  if (A == NULL)
    return FALSE;
  g_autofree float *truth = NULL, *y = NULL;
  ss_cs_random_problems_full (A, spec->k, spec->values, solve->nonneg, spec->noise,
                              spec->seed + 1, batch, &truth, &y);
  g_autofree float *x = g_new0 (float, n * batch);
  SsCsParams p = *solve;
  p.k = spec->k;
  SsCsStats stats;
  out->debiased = ss_cs_params_debiased (&p);
  /* The backend fits where it solved: on the GPU the block never comes back
   * to the host for a CGLS over it there. */
  g_autofree float *fitted = out->debiased ? g_new (float, n * batch) : NULL;
  if (!ss_cs_session_solve (session, &p, A, y, batch, x, fitted, DEBIAS_ITERATIONS, &stats,
                            &out->backend, error))
    return FALSE;
  out->recovered = block_errors (x, truth, n, batch, spec->success_tol, &out->median_error,
                                 &out->max_error);
  out->solver_median_error = out->median_error;
  if (out->debiased)
    out->recovered = block_errors (fitted, truth, n, batch, spec->success_tol,
                                   &out->median_error, &out->max_error);
  out->seconds = stats.seconds;
  out->iterations = stats.iterations;
  return TRUE;
}

gboolean
ss_cs_solve_random (const SsCsProblemSpec *spec, const SsCsParams *solve, SsBackendKind backend,
                    SsCsTrialsResult *out, GError **error)
{
  g_autoptr (SsCsSession) session = ss_cs_session_new (backend);
  return solve_random_in (session, spec, solve, out, error);
}

/* ---- the sweep ----------------------------------------------------------------- */

/* Three decimals, as the CLI's default lists: the CSV prints them exactly. */
static double
grid_value (double v)
{
  return round (v * 1000) / 1000;
}

void
ss_cs_phase_deltas (int n_deltas, double *deltas)
{
  for (int i = 0; i < n_deltas; i++)
    deltas[i] = grid_value ((i + 1.0) / (n_deltas + 1.0));
}

void
ss_cs_phase_rhos (int n_rhos, double *rhos)
{
  for (int j = 0; j < n_rhos; j++)
    rhos[j] = grid_value (0.5 * (j + 1.0) / n_rhos);
}

void
ss_cs_phase_params_init (SsCsPhaseParams *params)
{
  memset (params, 0, sizeof *params);
  ss_cs_params_defaults (&params->solve, SS_CS_NIHT);
  params->problem.ensemble = SS_ENSEMBLE_GAUSSIAN;
  params->problem.values = SS_CS_VALUES_GAUSSIAN;
  params->problem.n = 1024;
  params->problem.p = 8;
  params->problem.success_tol = 1e-4;
  params->problem.seed = 1;
  /* The solver stops a problem well inside the success test. */
  params->solve.tolerance = MIN (1e-6, params->problem.success_tol * 1e-2);
  params->backend = SS_BACKEND_AUTO;
  params->trials = 10;
}

/* splitmix64's finaliser: every input bit moves every output bit. */
static guint64
mix64 (guint64 z)
{
  z = (z ^ (z >> 30)) * G_GUINT64_CONSTANT (0xBF58476D1CE4E5B9);
  z = (z ^ (z >> 27)) * G_GUINT64_CONSTANT (0x94D049BB133111EB);
  return z ^ (z >> 31);
}

static guint64
double_bits (double v)
{
  guint64 bits;
  v += 0.0;   /* −0 and +0 are one value, so one seed */
  memcpy (&bits, &v, sizeof bits);
  return bits;
}

guint64
ss_cs_phase_cell_seed (guint64 seed, double delta, double rho)
{
  /* Chained, not XORed: (δ, ρ) and (ρ, δ) are different cells. */
  guint64 h = mix64 (seed + G_GUINT64_CONSTANT (0x9E3779B97F4A7C15));
  h = mix64 (h ^ double_bits (delta));
  return mix64 (h ^ double_bits (rho));
}

gboolean
ss_cs_phase_cell_size (const SsCsPhaseParams *params, int column, int row, gsize *m, gsize *k)
{
  gsize n = params->problem.n;
  *m = (gsize) MAX (1, round (params->deltas[column] * n));
  *k = (gsize) MAX (1, round (params->rhos[row] * *m));
  return *k <= *m && *m <= n;
}

typedef struct {
  GCancellable *cancellable;
  SsCsProgressFunc chained;
  gpointer chained_data;
} CancelCheck;

/* At the solver's report points: a Stop takes effect within a cell. */
static gboolean
check_cancelled (int iteration, const float *x, gboolean last, gpointer user_data,
                 GError **error)
{
  CancelCheck *c = user_data;
  if (g_cancellable_set_error_if_cancelled (c->cancellable, error))
    return FALSE;
  return c->chained == NULL || c->chained (iteration, x, last, c->chained_data, error);
}

gboolean
ss_cs_phase_transition (const SsCsPhaseParams *params, SsCsPhaseCellFunc func,
                        gpointer user_data, GCancellable *cancellable, GError **error)
{
  int cols = params->n_deltas, rows = params->n_rhos;
  if (cols < 1 || rows < 1 || params->trials < 1 || params->problem.n < 1)
    {
      g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT,
                   "phase transition: need at least one δ, one ρ, one trial and n >= 1");
      return FALSE;
    }
  SsCsParams solve = params->solve;
  CancelCheck check = { cancellable, solve.progress, solve.user_data };
  /* One GPU context for the whole sweep: made once, not once a cell. */
  g_autoptr (SsCsSession) session = ss_cs_session_new (params->backend);
  if (cancellable != NULL)
    {
      /* Reporting only reads x: the solve computes what it would without it. */
      solve.progress = check_cancelled;
      solve.user_data = &check;
      if (solve.report_every <= 0)
        solve.report_every = 10;
    }
  for (int row = 0; row < rows; row++)
    for (int column = 0; column < cols; column++)
      {
        if (g_cancellable_set_error_if_cancelled (cancellable, error))
          return FALSE;
        SsCsPhaseCell cell = { .index = row * cols + column, .column = column, .row = row,
                               .delta = params->deltas[column], .rho = params->rhos[row],
                               .trials = params->trials };
        if (!ss_cs_phase_cell_size (params, column, row, &cell.m, &cell.k))
          {
            g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT,
                         "δ %g, ρ %g: need k <= m <= n (k %" G_GSIZE_FORMAT ", m %"
                         G_GSIZE_FORMAT ", n %" G_GSIZE_FORMAT ")", cell.delta, cell.rho, cell.k,
                         cell.m, params->problem.n);
            return FALSE;
          }
        SsCsProblemSpec spec = params->problem;
        spec.m = cell.m;
        spec.k = cell.k;
        spec.batch = params->trials;
        /* From the cell's values, never its index: the same cell gives the
         * same counts in any grid (a coarse sweep and a fine one agree). */
        spec.seed = ss_cs_phase_cell_seed (params->problem.seed, cell.delta, cell.rho);
        if (!solve_random_in (session, &spec, &solve, &cell.result, error))
          return FALSE;
        cell.fraction = (double) cell.result.recovered / params->trials;
        if (func && !func (&cell, user_data, error))
          return FALSE;
      }
  return TRUE;
}

/* ---- the CSV and the heat map ------------------------------------------------ */

static void
csv_append (GString *csv, const SsCsPhaseCell *c)
{
  /* g_ascii_formatd keeps the decimal point whatever the locale (the app
   * runs in the user's); %.4g as the CLI has always written. */
  char v[5][G_ASCII_DTOSTR_BUF_SIZE];
  g_ascii_formatd (v[0], sizeof v[0], "%.4g", c->delta);
  g_ascii_formatd (v[1], sizeof v[1], "%.4g", c->rho);
  g_ascii_formatd (v[2], sizeof v[2], "%.4g", c->fraction);
  g_ascii_formatd (v[3], sizeof v[3], "%.4g", c->result.median_error);
  g_ascii_formatd (v[4], sizeof v[4], "%.4g", c->result.seconds);
  g_string_append_printf (csv, "%s,%s,%" G_GSIZE_FORMAT ",%" G_GSIZE_FORMAT ",%d,%d,%s,%s,%s\n",
                          v[0], v[1], c->m, c->k, c->trials, c->result.recovered, v[2], v[3],
                          v[4]);
}

char *
ss_cs_phase_csv (const SsCsPhaseCell *cells, guint n)
{
  GString *csv = g_string_new ("delta,rho,m,k,trials,recovered,fraction,median_error,seconds\n");
  for (guint i = 0; i < n; i++)
    csv_append (csv, &cells[i]);
  return g_string_free (csv, FALSE);
}

gboolean
ss_cs_phase_write_csv (const char *path, const SsCsPhaseCell *cells, guint n, gboolean force,
                       GError **error)
{
  if (!ss_output_check (path, force, NULL, error))
    return FALSE;
  g_autofree char *text = ss_cs_phase_csv (cells, n);
  return ss_output_write_text (path, text, -1, error);
}

void
ss_cs_phase_colour (double t, guint8 rgb[3])
{
  static const double stops[3][3] = { { 68, 1, 84 }, { 33, 145, 140 }, { 253, 231, 37 } };
  t = CLAMP (t, 0, 1) * 2;
  int i = MIN ((int) t, 1);
  double f = t - i;
  for (int c = 0; c < 3; c++)
    rgb[c] = (guint8) round (stops[i][c] + f * (stops[i + 1][c] - stops[i][c]));
}

guint8 *
ss_cs_phase_render (const double *fraction, int cols, int rows, int cell, int *width_out,
                    int *height_out)
{
  int width = cols * cell + 1, height = rows * cell + 1;
  guint8 *pixels = g_new (guint8, (gsize) width * height * 3);
  memset (pixels, GRID_GREY, (gsize) width * height * 3);
  for (int j = 0; j < rows; j++)
    for (int i = 0; i < cols; i++)
      {
        guint8 rgb[3] = { PENDING_GREY, PENDING_GREY, PENDING_GREY };
        double f = fraction[j * cols + i];
        if (!isnan (f))
          ss_cs_phase_colour (f, rgb);
        int top = (rows - 1 - j) * cell + 1;
        for (int y = top; y < top + cell - 1; y++)
          for (int x = i * cell + 1; x < (i + 1) * cell; x++)
            memcpy (pixels + ((gsize) y * width + x) * 3, rgb, 3);
      }
  *width_out = width;
  *height_out = height;
  return pixels;
}

gboolean
ss_cs_phase_write_png (const char *path, const double *fraction, int cols, int rows,
                       gboolean force, GError **error)
{
  int width, height;
  g_autofree guint8 *pixels = ss_cs_phase_render (fraction, cols, rows, PNG_CELL, &width,
                                                  &height);
  g_autofree char *axes = g_strdup_printf ("x: delta = m/n (%d values, left to right); y: rho = "
                                           "k/m (%d values, bottom to top); colour: success "
                                           "fraction, blue 0 to yellow 1", cols, rows);
  return ss_png_write_rgb8 (pixels, width, height, axes, path, force, error);
}
