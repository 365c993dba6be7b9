/* ss-cli-cs.c: `cs`, compressed sensing on random k-sparse problems (seeds
 * 001, 003, 004): one solve, a batch of problems sharing the matrix solved
 * as one block, a phase transition over δ = m/n and ρ = k/m (CSV and a PNG
 * heat map), or the benchmarks against their floors. The solves, the sweep
 * and its files are engine/cs's (ss-cs-phase.h), which the app's Phase
 * transition window shares: here only the options and the printing. */
#include "ss-cli-common.h"
#include "ss-cli-json.h"
#include "ss-cli-solve.h"

#include <glib/gstdio.h>
#include <math.h>
#include <stdarg.h>
#include <string.h>

typedef struct {
  char *solver, *ensemble, *values, *n, *m, *delta, *k, *rho, *noise, *p, *seed, *iters,
       *inner, *tol, *alpha, *batch, *trials, *deltas, *rhos, *output, *backend, *matrix,
       *bench_n, *bench_iters, *bench_which;
  gboolean phase, bench, json, quiet, force, nonneg;
  char **rest;
} CsOptions;

typedef struct {
  SsCsParams solve;
  SsEnsemble ensemble;
  SsCsValues values;
  gsize n, m, k;
  gboolean m_given, k_given;
  double delta, rho;
  double noise, tol;
  int p, batch, trials;
  guint64 seed;
  GArray *deltas, *rhos;   /* double */
  SsBackendKind backend;
} CsConfig;

static void
cs_options_clear (CsOptions *o)
{
  char **strings[] = { &o->solver, &o->ensemble, &o->values, &o->n, &o->m, &o->delta, &o->k,
                       &o->rho, &o->noise, &o->p, &o->seed, &o->iters, &o->inner, &o->tol,
                       &o->alpha, &o->batch, &o->trials, &o->deltas, &o->rhos, &o->output,
                       &o->backend, &o->matrix, &o->bench_n, &o->bench_iters, &o->bench_which };
  for (gsize i = 0; i < G_N_ELEMENTS (strings); i++)
    g_clear_pointer (strings[i], g_free);
  g_clear_pointer (&o->rest, g_strfreev);
}

#define STR(name, field, help, arg) \
  { name, 0, 0, G_OPTION_ARG_STRING, &o->field, help, arg }
#define FLAG(name, field, help) { name, 0, 0, G_OPTION_ARG_NONE, &o->field, help, NULL }

static int
cs_parse (int argc, char **argv, CsOptions *o)
{
  const GOptionEntry entries[] = {
    STR ("solver", solver, "iht, niht, htp, cosamp, fista or alm (default niht)", "NAME"),
    STR ("ensemble", ensemble, "Sensing matrix: gaussian, sign, dct or sparse (default gaussian)",
         "NAME"),
    STR ("values", values, "Nonzero values: gaussian N(0, 1), sign ±1 or uniform U(−1, 1); "
         "with --nonneg their magnitudes |v| (default gaussian)", "NAME"),
    STR ("n", n, "Signal length (default 1024)", "N"),
    STR ("m", m, "Measurements (default delta·n)", "M"),
    STR ("delta", delta, "δ = m/n (default 0.5)", "D"),
    STR ("k", k, "Nonzeros (default rho·m)", "K"),
    STR ("rho", rho, "ρ = k/m (default 0.2)", "R"),
    STR ("noise", noise, "Gaussian noise sigma added to y (default 0)", "S"),
    STR ("p", p, "Nonzeros per column of the sparse ensemble (default 8)", "P"),
    STR ("seed", seed, "Seed of matrix and problems (default 1)", "N"),
    STR ("iters", iters, "Most iterations (default: niht/iht 1000, htp/cosamp 100, fista 1000, "
         "alm 30 outer)", "N"),
    STR ("inner-iters", inner, "ALM: FISTA steps per outer step (default 200); HTP/CoSaMP: CG "
         "steps per projection (default 50)", "N"),
    STR ("tol", tol, "Success: relative error <= TOL (default 1e-4); fista and alm with "
         "--alpha > 0 after a least-squares fit on the support they found", "TOL"),
    STR ("alpha", alpha, "l1 weight of fista and alm (default: fista 1e-3, alm 0 = basis "
         "pursuit)", "A"),
    FLAG ("nonneg", nonneg, "Constrain x >= 0; the problems' nonzeros are then non-negative, "
          "the magnitudes |v| of --values"),
    STR ("batch", batch, "Solve N problems sharing the matrix as one block (default 1)", "N"),
    FLAG ("phase-transition", phase, "Sweep δ and ρ; success fraction per cell"),
    STR ("trials", trials, "Phase transition: problems per cell (default 10)", "N"),
    STR ("deltas", deltas, "Phase transition: δ values, comma-separated, sorted and "
         "duplicates dropped (default 0.1,...,0.9)", "LIST"),
    STR ("rhos", rhos, "Phase transition: ρ values, sorted and duplicates dropped (default "
         "0.05,0.1,...,0.5)", "LIST"),
    { "output", 'o', 0, G_OPTION_ARG_STRING, &o->output,
      "Phase transition: write PREFIX.csv and PREFIX.png", "PREFIX" },
    FLAG ("force", force, "Replace existing output files"),
    FLAG ("bench", bench, "Time NIHT on the DCT, concurrent FISTA and ALM against their floors"),
    STR ("bench-which", bench_which, "Benchmarks to run: all, niht, fista or alm (default all)",
         "NAME"),
    STR ("bench-n", bench_n, "Bench: DCT length for NIHT (default 1048576)", "N"),
    STR ("bench-iters", bench_iters, "Bench: FISTA iterations timed (default 100)", "N"),
    STR ("matrix", matrix, "Bench: seed 004's matrix 1..12 (default 7: 256 x 1048576)", "ROW"),
    STR ("backend", backend, "auto, cpu or cuda (default auto)", "NAME"),
    FLAG ("json", json, "Print JSON objects (one per line)"),
    FLAG ("quiet", quiet, "No notes"),
    { G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_STRING_ARRAY, &o->rest, NULL, NULL },
    { NULL },
  };
  const CliCommandHelp help = {
    "cs", "",
    "Compressed sensing on random k-sparse problems: y = A x (+ noise), A an m x n matrix of an "
    "ensemble, x with k nonzeros. One solve, --batch N problems sharing A solved as one block, "
    "--phase-transition over δ = m/n and ρ = k/m, or --bench. An option the chosen mode or "
    "solver takes no part of gets a warning; --m with --delta, --k with --rho, and -o without "
    "--phase-transition are refused.",
    NULL,
  };
  int status = cli_parse_options (&help, cli_add_option_table, (gpointer) entries, argc, argv);
  if (status < 0)
    status = cli_refuse_arguments ("cs", o->rest);
  return status;
}

/* ---- settings ------------------------------------------------------------ */

/* What a run does: the options that take part differ (note_unused_options). */
typedef enum {
  MODE_SOLVE = 1 << 0,
  MODE_PHASE = 1 << 1,
  MODE_BENCH = 1 << 2,
} CsMode;

static CsMode
cs_mode (const CsOptions *o)
{
  return o->bench ? MODE_BENCH : o->phase ? MODE_PHASE : MODE_SOLVE;
}

/* A note or warning on stderr, one line, unless --quiet (cli_note's form). */
static void G_GNUC_PRINTF (2, 3)
cs_note (const CsOptions *o, const char *format, ...)
{
  if (o->quiet)
    return;
  va_list args;
  va_start (args, format);
  g_autofree char *message = g_strdup_vprintf (format, args);
  va_end (args);
  cli_note (NULL, "%s", message);
}

static gboolean
parse_size (const char *option, const char *text, gint64 min, gint64 max, gint64 *value,
            GError **error)
{
  return text == NULL || cli_parse_int (option, text, min, max, value, error);
}

static gboolean
parse_fraction (const char *option, const char *text, double *value, GError **error)
{
  if (text == NULL)
    return TRUE;
  if (!cli_parse_double (option, text, value, error))
    return FALSE;
  if (*value <= 0 || *value > 1)
    {
      g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT, "%s %s: must be in (0, 1]", option,
                   text);
      return FALSE;
    }
  return TRUE;
}

/* The values of a comma-separated list, sorted and each once: the heat map
 * draws δ left to right and ρ bottom to top, which an unsorted list would
 * scramble, and a repeated value would be the same cell twice (each cell's
 * seed comes from its values, ss_cs_phase_cell_seed). */
static gboolean
parse_list (const char *option, const char *text, GArray *list, GError **error)
{
  g_auto (GStrv) parts = g_strsplit (text, ",", -1);
  for (int i = 0; parts[i]; i++)
    {
      double v;
      if (!parse_fraction (option, g_strstrip (parts[i]), &v, error))
        return FALSE;
      g_array_append_val (list, v);
    }
  if (list->len == 0)
    {
      g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT, "%s: empty list", option);
      return FALSE;
    }
  g_array_sort (list, ss_compare_doubles);
  guint kept = 1;
  for (guint i = 1; i < list->len; i++)
    if (g_array_index (list, double, i) != g_array_index (list, double, kept - 1))
      g_array_index (list, double, kept++) = g_array_index (list, double, i);
  g_array_set_size (list, kept);
  return TRUE;
}

/* COUNT values of the engine's grid (GRID: ss_cs_phase_deltas or _rhos),
 * the app's window's too: 9 δ and 10 ρ are the defaults. */
static void
default_list (GArray *list, void (*grid) (int, double *), int count)
{
  g_array_set_size (list, count);
  grid (count, (double *) list->data);
}

static void
cs_config_clear (CsConfig *c)
{
  if (c->deltas)
    g_array_unref (c->deltas);
  if (c->rhos)
    g_array_unref (c->rhos);
}

/* Two options that set one number: refused even when they agree, as one of
 * them would otherwise be dropped without a word. */
static gboolean
check_one_of (const char *a, const char *a_name, const char *b, const char *b_name,
              const char *what, GError **error)
{
  if (a == NULL || b == NULL)
    return TRUE;
  g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT, "%s and %s both set %s: give one",
               a_name, b_name, what);
  return FALSE;
}

static gboolean
config_numbers (const CsOptions *o, CsConfig *c, GError **error)
{
  gint64 n = 1024, m = 0, k = 0, p = 8, seed = 1, iters = 0, inner = 0, batch = 1, trials = 10;
  if (!(parse_size ("--n", o->n, 1, G_MAXINT32, &n, error)
        && parse_size ("--m", o->m, 1, G_MAXINT32, &m, error)
        && parse_size ("--k", o->k, 1, G_MAXINT32, &k, error)
        && parse_size ("--p", o->p, 1, 1 << 20, &p, error)
        && parse_size ("--seed", o->seed, 0, G_MAXINT64, &seed, error)
        && parse_size ("--iters", o->iters, 1, 100000000, &iters, error)
        && parse_size ("--inner-iters", o->inner, 1, 1000000, &inner, error)
        && parse_size ("--batch", o->batch, 1, 1 << 20, &batch, error)
        && parse_size ("--trials", o->trials, 1, 1 << 20, &trials, error)
        && parse_fraction ("--delta", o->delta, &c->delta, error)
        && parse_fraction ("--rho", o->rho, &c->rho, error)))
    return FALSE;
  if (o->noise && !(cli_parse_double ("--noise", o->noise, &c->noise, error)))
    return FALSE;
  if (o->tol && !cli_parse_double ("--tol", o->tol, &c->tol, error))
    return FALSE;
  if (o->alpha && !cli_parse_double ("--alpha", o->alpha, &c->solve.alpha, error))
    return FALSE;
  /* Each option named by itself; the noise bounded as an acquisition's
   * (float32 data overflow past SS_NOISE_MAX). */
  const char *bad = !(c->noise >= 0 && c->noise <= SS_NOISE_MAX)
                      ? "--noise: need 0 <= noise <= 1e30"
                    : !(c->tol > 0) ? "--tol: need tol > 0"
                    : !(c->solve.alpha >= 0) ? "--alpha: need alpha >= 0" : NULL;
  if (bad != NULL)
    {
      g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT, "%s", bad);
      return FALSE;
    }
  c->n = (gsize) n;
  c->m = m ? (gsize) m : (gsize) MAX (1, round (c->delta * n));
  c->m_given = m != 0;
  c->k = k ? (gsize) k : (gsize) MAX (1, round (c->rho * c->m));
  c->k_given = k != 0;
  c->p = (int) p;
  c->seed = (guint64) seed;
  c->batch = (int) batch;
  c->trials = (int) trials;
  if (iters)
    c->solve.iterations = (int) iters;
  if (inner)
    c->solve.inner_iterations = (int) inner;
  /* m, k and p of one problem; the sweep sizes each cell itself and the
   * bench has its own problems (their options get warnings instead). */
  if (cs_mode (o) != MODE_SOLVE)
    return TRUE;
  if (!(check_one_of (o->m, "--m", o->delta, "--delta", "m (m = δ n)", error)
        && check_one_of (o->k, "--k", o->rho, "--rho", "k (k = ρ m)", error)))
    return FALSE;
  if (c->m > c->n || c->k > c->m)
    {
      g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT,
                   "need k <= m <= n: k %" G_GSIZE_FORMAT ", m %" G_GSIZE_FORMAT
                   ", n %" G_GSIZE_FORMAT, c->k, c->m, c->n);
      return FALSE;
    }
  if (c->ensemble == SS_ENSEMBLE_SPARSE && (gsize) c->p > c->m)
    {
      g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT,
                   "--p %d: more nonzeros a column than the m = %" G_GSIZE_FORMAT
                   " rows (need p <= m)", c->p, c->m);
      return FALSE;
    }
  return TRUE;
}

/* -o PREFIX names PREFIX.csv and PREFIX.png: an empty name, or one that
 * ends in a directory, would write the hidden files ".csv" and ".png"; a
 * device or pipe (`-o /dev/null`, meant to discard the output) would have
 * the files written beside it, in /dev. */
static gboolean
check_prefix (const char *prefix, GError **error)
{
  g_autofree char *base = g_path_get_basename (prefix);
  if (prefix[0] == '\0' || g_str_has_suffix (prefix, G_DIR_SEPARATOR_S)
      || g_str_equal (base, ".") || g_str_equal (base, ".."))
    {
      g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT,
                   "-o '%s': need a file name PREFIX (it writes PREFIX.csv and PREFIX.png)",
                   prefix);
      return FALSE;
    }
  if (g_file_test (prefix, G_FILE_TEST_EXISTS)
      && !g_file_test (prefix, G_FILE_TEST_IS_REGULAR | G_FILE_TEST_IS_DIR))
    {
      g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT,
                   "-o '%s' is a device or pipe, not a file name PREFIX (it writes PREFIX.csv "
                   "and PREFIX.png beside it)", prefix);
      return FALSE;
    }
  return TRUE;
}

/* Contradictions between the mode and the options (exit 2). */
static gboolean
check_mode (const CsOptions *o, GError **error)
{
  if (o->phase && o->bench)
    {
      g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT,
                   "--phase-transition and --bench: one at a time");
      return FALSE;
    }
  if (o->output != NULL && !o->phase)
    {
      g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT,
                   "-o PREFIX: only --phase-transition writes files (%s writes none)",
                   o->bench ? "--bench" : "a single solve");
      return FALSE;
    }
  if (o->phase && o->output == NULL)
    {
      g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT,
                   "--phase-transition needs -o PREFIX (it writes PREFIX.csv and PREFIX.png)");
      return FALSE;
    }
  return o->output == NULL || check_prefix (o->output, error);
}

/* A warning for each option given that this run takes no part of, in the
 * form deblur gives its own ("--X has no effect on SOLVER"). */
static void
note_unused_options (const CsOptions *o, const CsConfig *c)
{
  const struct {
    gboolean given;
    const char *name;
    CsMode modes;        /* where it takes part */
  } options[] = {
    { o->solver != NULL, "solver", MODE_SOLVE | MODE_PHASE },
    { o->ensemble != NULL, "ensemble", MODE_SOLVE | MODE_PHASE },
    { o->values != NULL, "values", MODE_SOLVE | MODE_PHASE },
    { o->n != NULL, "n", MODE_SOLVE | MODE_PHASE },
    { o->m != NULL, "m", MODE_SOLVE },
    { o->delta != NULL, "delta", MODE_SOLVE },
    { o->k != NULL, "k", MODE_SOLVE },
    { o->rho != NULL, "rho", MODE_SOLVE },
    { o->noise != NULL, "noise", MODE_SOLVE | MODE_PHASE },
    { o->p != NULL, "p", MODE_SOLVE | MODE_PHASE },
    { o->iters != NULL, "iters", MODE_SOLVE | MODE_PHASE },
    { o->inner != NULL, "inner-iters", MODE_SOLVE | MODE_PHASE },
    { o->tol != NULL, "tol", MODE_SOLVE | MODE_PHASE },
    { o->alpha != NULL, "alpha", MODE_SOLVE | MODE_PHASE },
    { o->nonneg, "nonneg", MODE_SOLVE | MODE_PHASE },
    { o->batch != NULL, "batch", MODE_SOLVE },
    { o->trials != NULL, "trials", MODE_PHASE },
    { o->deltas != NULL, "deltas", MODE_PHASE },
    { o->rhos != NULL, "rhos", MODE_PHASE },
    { o->force, "force", MODE_PHASE },
    { o->bench_which != NULL, "bench-which", MODE_BENCH },
    { o->bench_n != NULL, "bench-n", MODE_BENCH },
    { o->bench_iters != NULL, "bench-iters", MODE_BENCH },
    { o->matrix != NULL, "matrix", MODE_BENCH },
  };
  CsMode mode = cs_mode (o);
  for (gsize i = 0; i < G_N_ELEMENTS (options); i++)
    {
      if (!options[i].given || (options[i].modes & mode))
        continue;
      const char *name = options[i].name;
      if (mode == MODE_BENCH)
        cs_note (o, "warning: --%s has no effect on --bench (it times its own problems: NIHT "
                 "on the DCT, FISTA and ALM on seed 004's --matrix)", name);
      else if (mode == MODE_PHASE)
        cs_note (o, "warning: --%s has no effect on --phase-transition (each cell's m and k "
                 "come from --deltas and --rhos, its problems from --trials)", name);
      else if (options[i].modes & MODE_PHASE)
        cs_note (o, "warning: --%s has no effect without --phase-transition", name);
      else
        cs_note (o, "warning: --%s has no effect without --bench", name);
    }
  if (mode == MODE_BENCH)
    return;
  SsCsAlgorithm algorithm = c->solve.algorithm;
  const char *solver = ss_cs_algorithm_to_string (algorithm);
  if (o->alpha && ss_cs_algorithm_is_greedy (algorithm))
    cs_note (o, "warning: --alpha has no effect on %s (fista and alm take an l1 weight; the "
             "greedy solvers keep k entries)", solver);
  if (o->inner && algorithm != SS_CS_HTP && algorithm != SS_CS_COSAMP && algorithm != SS_CS_ALM)
    cs_note (o, "warning: --inner-iters has no effect on %s (htp, cosamp and alm take it)",
             solver);
  if (o->p && c->ensemble != SS_ENSEMBLE_SPARSE)
    cs_note (o, "warning: --p has no effect on the %s ensemble (the sparse one takes it)",
             ss_ensemble_to_string (c->ensemble));
  else if (mode == MODE_PHASE && c->ensemble == SS_ENSEMBLE_SPARSE)
    {
      /* A cell whose m is below p has full columns: said once, not refused,
       * as a grid over δ may reach such cells at any p. */
      gsize smallest = (gsize) MAX (1, round (g_array_index (c->deltas, double, 0) * c->n));
      if ((gsize) c->p > smallest)
        cs_note (o, "warning: --p %d exceeds m in the cells with m < %d (m %" G_GSIZE_FORMAT
                 " at δ %g): there every entry of a column is nonzero", c->p, c->p, smallest,
                 g_array_index (c->deltas, double, 0));
    }
}

static int
cs_config (const CsOptions *o, CsConfig *c)
{
  g_autoptr (GError) error = NULL;
  memset (c, 0, sizeof *c);
  c->delta = 0.5;
  c->rho = 0.2;
  c->tol = 1e-4;
  c->deltas = g_array_new (FALSE, FALSE, sizeof (double));
  c->rhos = g_array_new (FALSE, FALSE, sizeof (double));
  SsCsAlgorithm algorithm = SS_CS_NIHT;
  gboolean ok = (o->solver == NULL || ss_cs_algorithm_from_string (o->solver, &algorithm, &error));
  ss_cs_params_defaults (&c->solve, algorithm);
  ok = ok && (o->ensemble == NULL || ss_ensemble_from_string (o->ensemble, &c->ensemble, &error))
       && (o->values == NULL || ss_cs_values_from_string (o->values, &c->values, &error))
       && (o->backend == NULL || ss_backend_kind_from_string (o->backend, &c->backend, &error))
       && check_mode (o, &error)
       && config_numbers (o, c, &error)
       && (o->deltas == NULL || parse_list ("--deltas", o->deltas, c->deltas, &error))
       && (o->rhos == NULL || parse_list ("--rhos", o->rhos, c->rhos, &error));
  if (!ok)
    return cli_fail (CLI_EXIT_USAGE, NULL, error);
  if (o->deltas == NULL)
    default_list (c->deltas, ss_cs_phase_deltas, 9);
  if (o->rhos == NULL)
    default_list (c->rhos, ss_cs_phase_rhos, 10);
  c->solve.k = c->k;
  c->solve.nonneg = o->nonneg;
  c->solve.tolerance = MIN (1e-6, c->tol * 1e-2);
  note_unused_options (o, c);
  return -1;
}

/* ---- Ctrl-C ----------------------------------------------------------------- */

/* Ctrl-C (cli_install_interrupt_handler) stops a solve at its next report
 * point (every 10 iterations on the CPU; the GPU finishes its solve first)
 * and a sweep before its files are written, so it ends with one line and
 * exit 1, as deblur's does, never with a half-written file. */

/* The solver's report points: the highest iteration reached, and a stop
 * when Ctrl-C came. */
static gboolean
check_interrupt (int iteration, const float *x, gboolean last, gpointer user_data,
                 GError **error)
{
  int *reached = user_data;
  *reached = MAX (*reached, iteration);
  return !cli_interrupted_error (error);
}

/* PARAMS with check_interrupt at its report points, counting into REACHED. */
static SsCsParams
interruptible (const SsCsParams *params, int *reached)
{
  SsCsParams p = *params;
  /* Reporting only reads x: the solve computes what it would without it. */
  p.progress = check_interrupt;
  p.user_data = reached;
  p.report_every = 10;
  return p;
}

/* ---- one solve or a batch ------------------------------------------------- */

/* Solves BATCH random problems of (m, k) sharing one matrix with SOLVE. */
static gboolean
solve_cell (const CsConfig *c, const SsCsParams *solve, gsize m, gsize k, int batch,
            guint64 seed, SsCsTrialsResult *out, GError **error)
{
  SsCsProblemSpec spec = { .ensemble = c->ensemble, .values = c->values, .n = c->n, .m = m,
                           .k = k, .p = c->p, .noise = c->noise, .success_tol = c->tol,
                           .batch = batch, .seed = seed };
  return ss_cs_solve_random (&spec, solve, c->backend, out, error);
}

/* What "recovered" means for a LASSO solve (ss_cs_params_debiased), after
 * "relative error <= TOL". */
#define DEBIASED_RULE " after a least-squares fit on the support found"

static int
run_solve (const CsOptions *o, const CsConfig *c)
{
  g_autoptr (GError) error = NULL;
  SsCsTrialsResult r;
  int reached = 0;
  SsCsParams solve = interruptible (&c->solve, &reached);
  gboolean ok = solve_cell (c, &solve, c->m, c->k, c->batch, c->seed, &r, &error);
  /* The GPU runs its solve to the end: a Ctrl-C during it still stops here. */
  if (ok && cli_interrupted_error (&error))
    {
      reached = r.iterations;
      ok = FALSE;
    }
  if (!ok && g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    {
      cli_error (NULL, "cs: interrupted after %d iterations", reached);
      return CLI_EXIT_FAILURE;
    }
  if (!ok)
    return cli_fail (error->code == SS_ERROR_TOO_LARGE || error->code == SS_ERROR_INVALID_ARGUMENT
                     || error->code == SS_ERROR_NO_DEVICE ? CLI_EXIT_USAGE : CLI_EXIT_FAILURE,
                     NULL, error);
  const char *solver = ss_cs_algorithm_to_string (c->solve.algorithm);
  if (o->json)
    {
      SsJsonObject j;
      ss_json_begin (&j);
      ss_json_add_string (&j, "type", "cs");
      ss_json_add_string (&j, "solver", solver);
      ss_json_add_string (&j, "ensemble", ss_ensemble_to_string (c->ensemble));
      ss_json_add_string (&j, "values", ss_cs_values_to_string (c->values));
      ss_json_add_bool (&j, "nonneg", c->solve.nonneg);
      ss_json_add_int (&j, "n", (gint64) c->n);
      ss_json_add_int (&j, "m", (gint64) c->m);
      ss_json_add_int (&j, "k", (gint64) c->k);
      ss_json_add_int (&j, "batch", c->batch);
      ss_json_add_number (&j, "noise", c->noise);
      ss_json_add_int (&j, "iterations", r.iterations);
      ss_json_add_number (&j, "seconds", r.seconds);
      ss_json_add_int (&j, "recovered", r.recovered);
      ss_json_add_number (&j, "tolerance", c->tol);
      ss_json_add_bool (&j, "debiased", r.debiased);
      ss_json_add_number (&j, "median_relative_error", r.median_error);
      ss_json_add_number (&j, "max_relative_error", r.max_error);
      if (r.debiased)
        ss_json_add_number (&j, "solver_median_relative_error", r.solver_median_error);
      ss_json_add_string (&j, "backend", r.backend);
      g_autofree char *text = ss_json_end (&j);
      printf ("%s\n", text);
    }
  else
    {
      printf ("solver           %s (%s)\n", solver, r.backend);
      printf ("problem          %s A, m %zu x n %zu; k %zu %s%s nonzeros; noise %g; seed %"
              G_GUINT64_FORMAT "\n", ss_ensemble_to_string (c->ensemble), c->m, c->n, c->k,
              c->solve.nonneg ? "non-negative " : "", ss_cs_values_to_string (c->values),
              c->noise, c->seed);
      printf ("batch            %d problem%s sharing A, solved as one block\n", c->batch,
              c->batch == 1 ? "" : "s");
      printf ("iterations       %d in %.4f s\n", r.iterations, r.seconds);
      printf ("recovered        %d of %d (relative error <= %g%s)\n", r.recovered, c->batch,
              c->tol, r.debiased ? DEBIASED_RULE : "");
      printf ("relative error   median %.3g, max %.3g\n", r.median_error, r.max_error);
      if (r.debiased)
        printf ("before the fit   median %.3g (the l1 weight shrinks what it keeps)\n",
                r.solver_median_error);
    }
  return CLI_EXIT_OK;
}

/* ---- phase transition ----------------------------------------------------- */

/* Both files checked before the sweep, with deblur's path checks
 * (cli_check_output_path): what would stop the write at the end (a file
 * kept without --force, a folder in the way, a missing or read-only
 * folder) is better said before minutes of solving. */
static int
check_outputs (const CsOptions *o, const char *csv, const char *png)
{
  const char *paths[] = { csv, png };
  int status = -1;
  for (int i = 0; i < 2 && status < 0; i++)
    status = cli_check_output_path (paths[i], o->force, NULL);
  return status;
}

typedef struct {
  const CsOptions *o;
  GArray *cells;            /* SsCsPhaseCell */
  double *fraction;
} Sweep;

static gboolean
on_cell (const SsCsPhaseCell *cell, gpointer user_data, GError **error)
{
  Sweep *s = user_data;
  /* A GPU cell runs to its end: Ctrl-C during it stops the sweep here. */
  if (cli_interrupted_error (error))
    return FALSE;
  g_array_append_vals (s->cells, cell, 1);
  s->fraction[cell->index] = cell->fraction;
  if (s->o->json)
    {
      SsJsonObject jo;
      ss_json_begin (&jo);
      ss_json_add_string (&jo, "type", "cs-cell");
      ss_json_add_number (&jo, "delta", cell->delta);
      ss_json_add_number (&jo, "rho", cell->rho);
      ss_json_add_int (&jo, "m", (gint64) cell->m);
      ss_json_add_int (&jo, "k", (gint64) cell->k);
      ss_json_add_int (&jo, "trials", cell->trials);
      ss_json_add_int (&jo, "recovered", cell->result.recovered);
      ss_json_add_number (&jo, "median_relative_error", cell->result.median_error);
      g_autofree char *text = ss_json_end (&jo);
      printf ("%s\n", text);
      /* One line a cell as it comes: a reader follows the sweep live. */
      fflush (stdout);
    }
  return TRUE;
}

/* Both files or neither: SIGINT is held while they are written (a second
 * Ctrl-C would otherwise kill between them), and the CSV goes when the
 * PNG cannot be written. */
static int
write_phase_files (const CsOptions *o, const char *csv_path, const char *png_path,
                   GArray *cells, const double *fraction, int cols, int rows)
{
  g_autoptr (GError) error = NULL;
  sigset_t hold, saved;
  sigemptyset (&hold);
  sigaddset (&hold, SIGINT);
  sigprocmask (SIG_BLOCK, &hold, &saved);
  int status = -1;
  /* --force was checked above; the writers still never replace a file
   * that appeared meanwhile without it. */
  if (!ss_cs_phase_write_csv (csv_path, (const SsCsPhaseCell *) cells->data, cells->len,
                              o->force, &error))
    status = cli_fail (CLI_EXIT_FAILURE, csv_path, error);
  else if (!ss_cs_phase_write_png (png_path, fraction, cols, rows, o->force, &error))
    {
      status = cli_fail (CLI_EXIT_FAILURE, png_path, error);
      g_remove (csv_path);
    }
  sigprocmask (SIG_SETMASK, &saved, NULL);
  return status;
}

/* A sweep's worst case, every trial of every cell running all its
 * iterations, counted in the operator's multiply-adds (A and Aᵀ a step):
 * past 10¹³ (hours on a CPU) it is said before it starts, since a cell's
 * block solve stops only at its report points. */
static void
note_sweep_work (const CsOptions *o, const CsConfig *c)
{
  double work = 0;
  for (guint i = 0; i < c->deltas->len; i++)
    {
      double m = MAX (1.0, round (g_array_index (c->deltas, double, i) * c->n));
      double per_apply = c->ensemble == SS_ENSEMBLE_SPARSE ? (double) c->p * c->n
                         : c->ensemble == SS_ENSEMBLE_DCT ? 5.0 * c->n * log2 (MAX (c->n, 2))
                                                          : m * c->n;
      work += 2.0 * per_apply * c->rhos->len;
    }
  work *= (double) c->trials * MAX (c->solve.iterations, 1);
  if (work >= 1e13)
    cs_note (o, "this sweep may take up to %.1e operations (every trial of its %u cells running "
             "its %d iterations): hours on a CPU; fewer --trials, a smaller --n or the GPU is "
             "faster (a cell stops for Ctrl-C only at its report points; a second Ctrl-C ends "
             "at once)", work, c->deltas->len * c->rhos->len, c->solve.iterations);
}

static int
run_phase_transition (const CsOptions *o, const CsConfig *c)
{
  g_autofree char *csv_path = g_strdup_printf ("%s.csv", o->output);
  g_autofree char *png_path = g_strdup_printf ("%s.png", o->output);
  int status = check_outputs (o, csv_path, png_path);
  if (status >= 0)
    return status;
  note_sweep_work (o, c);
  int cols = (int) c->deltas->len, rows = (int) c->rhos->len;
  SsCsPhaseParams params;
  ss_cs_phase_params_init (&params);
  params.problem = (SsCsProblemSpec) { .ensemble = c->ensemble, .values = c->values, .n = c->n,
                                       .p = c->p, .noise = c->noise, .success_tol = c->tol,
                                       .seed = c->seed };
  int reached = 0;
  params.solve = interruptible (&c->solve, &reached);
  params.backend = c->backend;
  params.trials = c->trials;
  params.deltas = (const double *) c->deltas->data;
  params.n_deltas = cols;
  params.rhos = (const double *) c->rhos->data;
  params.n_rhos = rows;
  g_autofree double *fraction = g_new0 (double, (gsize) cols * rows);
  g_autoptr (GArray) cells = g_array_new (FALSE, FALSE, sizeof (SsCsPhaseCell));
  Sweep sweep = { o, cells, fraction };
  g_autoptr (GError) error = NULL;
  gboolean ok = ss_cs_phase_transition (&params, on_cell, &sweep, NULL, &error);
  if (ok)
    cli_interrupted_error (&error);
  if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    {
      cli_error (NULL, "cs: interrupted after %u of %d cells; nothing written", cells->len,
                 cols * rows);
      return CLI_EXIT_FAILURE;
    }
  if (!ok)
    return cli_fail (CLI_EXIT_FAILURE, NULL, error);
  status = write_phase_files (o, csv_path, png_path, cells, fraction, cols, rows);
  if (status >= 0)
    return status;
  if (!o->json)
    {
      printf ("%s on %s, n %zu, %d trials a cell, success: relative error <= %g%s\n",
              ss_cs_algorithm_to_string (c->solve.algorithm), ss_ensemble_to_string (c->ensemble),
              c->n, c->trials, c->tol, ss_cs_params_debiased (&c->solve) ? DEBIASED_RULE : "");
      printf ("rho \\ delta");
      for (int i = 0; i < cols; i++)
        printf ("%6.2f", g_array_index (c->deltas, double, i));
      printf ("\n");
      for (int j = rows - 1; j >= 0; j--)
        {
          printf ("%11.3f", g_array_index (c->rhos, double, j));
          for (int i = 0; i < cols; i++)
            printf ("%6.2f", fraction[j * cols + i]);
          printf ("\n");
        }
      printf ("wrote %s and %s\n", csv_path, png_path);
    }
  return CLI_EXIT_OK;
}

/* ---- bench ------------------------------------------------------------------ */

static int
bench_config (const CsOptions *o, SsCsBenchParams *bp)
{
  g_autoptr (GError) error = NULL;
  ss_cs_bench_params_init (bp);
  gint64 n = (gint64) bp->dct_n, iters = bp->fista_iterations, matrix = bp->matrix;
  gint64 seed = (gint64) bp->seed;
  if (!(parse_size ("--bench-n", o->bench_n, 16, G_MAXINT32, &n, &error)
        && parse_size ("--bench-iters", o->bench_iters, 1, 100000, &iters, &error)
        && parse_size ("--matrix", o->matrix, 1, SS_CS_SEED004_MATRICES, &matrix, &error)
        && parse_size ("--seed", o->seed, 0, G_MAXINT64, &seed, &error)))
    return cli_fail (CLI_EXIT_USAGE, NULL, error);
  if (o->bench_which)
    {
      const char *names[] = { "niht", "fista", "alm" };
      bp->which = 0;
      for (int i = 0; i < 3; i++)
        if (g_ascii_strcasecmp (o->bench_which, names[i]) == 0)
          bp->which = 1 << i;
      if (g_ascii_strcasecmp (o->bench_which, "all") == 0)
        bp->which = SS_CS_BENCH_ALL;
      if (bp->which == 0)
        {
          cli_error (NULL, "--bench-which '%s': expected all, niht, fista or alm",
                     o->bench_which);
          return CLI_EXIT_USAGE;
        }
    }
  bp->dct_n = (gsize) n;
  bp->fista_iterations = (int) iters;
  bp->matrix = (int) matrix;
  bp->seed = (guint64) seed;
  return -1;
}

static void
print_bench_row_json (const SsCsBenchResult *r, const SsCsBenchRow *row)
{
  SsJsonObject j;
  ss_json_begin (&j);
  ss_json_add_string (&j, "type", "cs-bench");
  ss_json_add_string (&j, "name", row->name);
  ss_json_add_string (&j, "backend", r->backend);
  ss_json_add_string (&j, "device", r->device);
  ss_json_add_string (&j, "size", row->size);
  ss_json_add_int (&j, "iterations", row->iterations);
  ss_json_add_number (&j, "seconds_per_iteration", row->seconds);
  ss_json_add_number (&j, "floor_seconds", row->floor_seconds);
  ss_json_add_number (&j, "floor_ops_seconds", row->floor_ops_seconds);
  ss_json_add_number (&j, "floor_bytes", row->floor_bytes);
  ss_json_add_number (&j, "bandwidth", r->bandwidth);
  ss_json_add_number (&j, "ratio", row->ratio);
  ss_json_add_number (&j, "total_seconds", row->total_seconds);
  ss_json_add_number (&j, "seed_seconds", row->seed_seconds);
  ss_json_add_bool (&j, "seed_per_iteration", row->seed_per_iteration);
  ss_json_add_number (&j, "speedup_over_seed", row->speedup);
  ss_json_add_string (&j, "seed_note", row->seed_note);
  g_autofree char *text = ss_json_end (&j);
  printf ("%s\n", text);
}

static void
print_bench_row_text (const SsCsBenchRow *row)
{
  printf ("\n%s             %s\n", row->name, row->size);
  printf ("  measured       %.4f ms per iteration (%d timed)\n", 1e3 * row->seconds,
          row->iterations);
  printf ("  floor          %.4f ms = operator %.4f ms + %.1f MB at the copy bandwidth\n",
          1e3 * row->floor_seconds, 1e3 * row->floor_ops_seconds, row->floor_bytes / 1e6);
  printf ("  ratio          %.3f (measured over floor)\n", row->ratio);
  /* %.3g: a speed-up below 0.05 (a CPU against the seed's GPU) once
   * printed as "0.0x". */
  if (isfinite (row->seed_seconds) && row->seed_per_iteration)
    printf ("  seed           %.4g ms per iteration vs ours %.4g ms: %.3gx (%s)\n",
            1e3 * row->seed_seconds, 1e3 * row->seconds, row->speedup, row->seed_note);
  else if (isfinite (row->seed_seconds))
    printf ("  seed           %.4g s vs ours %.4g s: %.3gx (%s)\n", row->seed_seconds,
            row->total_seconds, row->speedup, row->seed_note);
  else if (row->seed_per_iteration)
    printf ("  seed           no figure at this size (%s)\n", row->seed_note);
  else
    printf ("  total          %.4g s (%s)\n", row->total_seconds, row->seed_note);
}

/* What the bench has printed: every row goes out as soon as it is measured
 * (a whole bench takes minutes), so that an interrupted one has shown all
 * it measured. */
typedef struct {
  const CsOptions *o;
  gboolean device_printed;  /* the text's first line */
  int rows_printed;
} BenchOutput;

/* The bench's progress (SsCsBenchParams.progress): the device once it is
 * measured, then each new row. */
static void
print_bench_progress (const SsCsBenchResult *r, gpointer user_data)
{
  BenchOutput *out = user_data;
  if (!out->o->json && !out->device_printed)
    printf ("device           %s (%s); copy bandwidth %.1f GB/s\n", r->device, r->backend,
            r->bandwidth / 1e9);
  out->device_printed = TRUE;
  for (; out->rows_printed < r->n_rows; out->rows_printed++)
    {
      if (out->o->json)
        print_bench_row_json (r, &r->rows[out->rows_printed]);
      else
        print_bench_row_text (&r->rows[out->rows_printed]);
    }
  fflush (stdout);
}

/* How many benchmarks BP runs (bits of SsCsBenchWhich). */
static int
bench_count (const SsCsBenchParams *bp)
{
  return ((bp->which & SS_CS_BENCH_NIHT) != 0) + ((bp->which & SS_CS_BENCH_FISTA) != 0)
         + ((bp->which & SS_CS_BENCH_ALM) != 0);
}

/* Ctrl-C stops the bench at its next check (ss-cs-bench.h: between timed
 * repetitions, at each iteration of a timed CPU solve): the rows measured
 * before it are printed and complete, the one under way is dropped. A
 * bench that ended before it looked at the flag has measured everything:
 * it succeeded. */
static int
run_bench (const CsOptions *o, const CsConfig *c)
{
  SsCsBenchParams bp;
  int status = bench_config (o, &bp);
  if (status >= 0)
    return status;
  BenchOutput output = { o, FALSE, 0 };
  bp.stop = cli_interrupt_flag ();
  bp.progress = print_bench_progress;
  bp.user_data = &output;
  g_autoptr (GError) error = NULL;
  SsCsBenchResult result = { 0 };
  /* Every row comes through ss_cs_bench_add_row, which reports it: the
   * progress has printed all of them by the time the bench returns. */
  if (ss_cs_bench (c->backend, &bp, &result, &error))
    status = CLI_EXIT_OK;
  else if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
    {
      cli_error (NULL, "cs: interrupted after %d of %d benchmarks; %s", result.n_rows,
                 bench_count (&bp), result.n_rows > 0 ? "the rows printed are complete"
                                                      : "nothing measured");
      status = CLI_EXIT_FAILURE;
    }
  else
    status = cli_fail (error->code == SS_ERROR_NO_DEVICE ? CLI_EXIT_USAGE : CLI_EXIT_FAILURE,
                       NULL, error);
  ss_cs_bench_result_clear (&result);
  return status;
}

int
cli_cs (int argc, char **argv)
{
  CsOptions o = { 0 };
  CsConfig c = { 0 };
  int status = cs_parse (argc, argv, &o);
  if (status < 0)
    status = cs_config (&o, &c);
  if (status < 0)
    cli_install_interrupt_handler ();
  if (status < 0)
    status = o.bench ? run_bench (&o, &c)
             : o.phase ? run_phase_transition (&o, &c) : run_solve (&o, &c);
  cs_config_clear (&c);
  cs_options_clear (&o);
  return status;
}
