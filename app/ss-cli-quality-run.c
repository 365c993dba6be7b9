/* ss-cli-quality-run.c: `quality`'s methods run as a user runs them: the
 * options deblur would parse, its preparation and solve (ss-cli-deblur.h),
 * the best-iterate tracker that the references' runs feed, and the scored
 * rows of the tables. */
#include "ss-cli-quality-private.h"

#include <math.h>
#include <string.h>

/* ---- scoring ------------------------------------------------------------------ */

MethodRow *
cli_quality_score_row (const char *method, const CaseData *data, const float *x, double seconds,
                       int iterations, char *note)
{
  MethodRow *row = g_new0 (MethodRow, 1);
  int size = data->spec->size;
  gsize n = (gsize) size * size;
  row->method = g_strdup (method);
  row->note = note;
  row->seconds = seconds;
  row->iterations = iterations;
  row->psnr = row->ssim = NAN;
  if (x != NULL)
    {
      row->x = g_memdup2 (x, n * sizeof (float));
      row->psnr = ss_psnr_affine (x, data->truth->data, n);
      row->ssim = ss_ssim_affine (x, data->truth->data, size, size);
    }
  return row;
}

MethodRow *
cli_quality_failed_row (const char *method, const GError *error)
{
  MethodRow *row = g_new0 (MethodRow, 1);
  row->method = g_strdup (method);
  row->note = g_strdup_printf ("failed: %s", error ? error->message : "unknown error");
  row->psnr = row->ssim = row->seconds = NAN;
  return row;
}

/* ---- running a solver as deblur does --------------------------------------- */

/* Parses the options a user would give deblur on a case blurred by PSF into a config. */
static gboolean
config_for (const QualityOptions *q, const char *psf, const SsSolverInfo *solver,
            const OptionValue *extra, int n_extra, CliOptions *o, CliConfig *c, GError **error)
{
  memset (o, 0, sizeof *o);
  memset (c, 0, sizeof *c);
  o->quiet = TRUE;
  o->json = TRUE;   /* keeps deblur's per-plane notes off our table */
  o->psf = g_strdup (psf);
  o->solver = g_strdup (solver->name);
  o->backend = g_strdup (q->backend);
  /* As a user would: --alpha auto also sets what the data choose for a
   * solver without α (the greedy solvers' hold-out rule). */
  if (ss_solver_uses (solver, SS_PARAM_ALPHA) || ss_solver_uses (solver, SS_PARAM_HOLDOUT))
    o->param[SS_PARAM_ALPHA] = g_strdup ("auto");
  for (int i = 0; i < n_extra; i++)
    for (int id = 0; id < SS_N_PARAMS; id++)
      if (g_str_equal (ss_param_info ((SsParamId) id)->name, extra[i].name))
        {
          /* A switch is a flag on deblur's command line (--holdout); its
           * value, yes or no, was checked with the others (set_names_known). */
          const SsParamInfo *info = ss_param_info ((SsParamId) id);
          double on = 0;
          if (info->type == SS_PARAM_BOOL)
            {
              o->flag[id] = ss_param_parse (info, extra[i].value, &on, NULL) && on != 0;
              continue;
            }
          g_free (o->param[id]);
          o->param[id] = g_strdup (extra[i].value);
        }
  const CliGroups groups = CLI_GROUP_INPUT | CLI_GROUP_TRUTH | CLI_GROUP_SKY | CLI_GROUP_SOLVER
                           | CLI_GROUP_PRINT;
  if (cli_config_from_options (o, groups, 1.0, NULL, c) >= 0)
    {
      g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT, "options refused for %s",
                   solver->name);
      return FALSE;
    }
  return TRUE;
}

/* The reference runs until the best iterate is this far behind: twice its
 * iteration count, and at least this many iterations. RL's PSNR rises to one
 * maximum and then falls as the estimate fits the noise. */
#define BEST_PAST_MIN 200

static void
track_best (const SsReport *report, gpointer user_data)
{
  BestTracker *t = user_data;
  if (report->preview == NULL)
    return;
  gsize n = (gsize) t->data->spec->size * t->data->spec->size;
  if (!cli_deblur_crop_plane (t->in, t->job, report->preview, t->scratch, NULL))
    return;
  double psnr = ss_psnr_affine (t->scratch, t->data->truth->data, n);
  if (t->trace)
    fprintf (t->trace, "%s,\"%s\",%d,%.4f,%.6g,%.6g\n", t->data->spec->name, t->method,
             report->iteration, psnr, report->residual, report->rel_change);
  if (t->best == NULL || psnr > t->best_psnr)
    {
      if (t->best == NULL)
        t->best = g_new (float, n);
      memcpy (t->best, t->scratch, n * sizeof (float));
      t->best_psnr = psnr;
      t->best_iteration = report->iteration;
      t->best_elapsed = report->elapsed;
    }
  t->last_iteration = report->iteration;
  if (t->past_best
      && report->iteration >= MAX (2 * t->best_iteration, t->best_iteration + BEST_PAST_MIN))
    g_cancellable_cancel (t->past_best);
}

void
cli_quality_prepared_clear (Prepared *p)
{
  cli_plane_job_clear (&p->job);
  cli_config_clear (&p->c);
  cli_options_clear (&p->o);
}

gboolean
cli_quality_prepare (const QualityOptions *q, const CaseData *data, const SsSolverInfo *solver,
                     const OptionValue *extra, int n_extra, Prepared *p, GError **error)
{
  memset (p, 0, sizeof *p);
  if (!config_for (q, data->spec->psf, solver, extra, n_extra, &p->o, &p->c, error))
    return FALSE;
  p->in.in_path = data->spec->name;
  p->in.image = data->blurred;
  cli_plane_job_init (&p->job, -1, &p->c);
  if (cli_deblur_prepare_real (&p->in, &p->o, &p->c, &p->job) >= 0)
    {
      g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT, "deblur's preparation failed");
      return FALSE;
    }
  return TRUE;
}

/* Solves P's problem; with TRACKER, a full-size preview at every report feeds it. */
gboolean
cli_quality_solve_prepared (Prepared *p, SsBackend *backend, BestTracker *tracker,
                            SsSolveResult *result, GError **error)
{
  SsProblem problem = cli_plane_job_problem (&p->job);
  if (tracker)
    {
      p->job.params.preview_width = p->job.pw;
      p->job.params.preview_height = p->job.ph;
    }
  return ss_backend_solve (backend, &problem, &p->job.params, tracker ? track_best : NULL,
                           tracker, tracker ? tracker->past_best : NULL, result, error);
}

/* The --set NAME=VALUE pairs, as deblur's --NAME VALUE would set them. */
typedef struct {
  OptionValue *values;
  char **strings;       /* the names and values VALUES points into */
  int count;
} SetPairs;

static void
set_pairs_init (SetPairs *pairs, char **set)
{
  guint n = set ? g_strv_length (set) : 0;
  pairs->count = (int) n;
  pairs->values = g_new0 (OptionValue, n + 1);
  pairs->strings = g_new0 (char *, 2 * n + 1);
  for (guint i = 0; i < n; i++)
    {
      char **kv = g_strsplit (set[i], "=", 2);
      pairs->strings[2 * i] = kv[0];
      pairs->strings[2 * i + 1] = kv[1] ? kv[1] : g_strdup ("");
      pairs->values[i] = (OptionValue) { pairs->strings[2 * i], pairs->strings[2 * i + 1] };
      g_free (kv);
    }
}

static void
set_pairs_clear (SetPairs *pairs)
{
  g_clear_pointer (&pairs->values, g_free);
  g_clear_pointer (&pairs->strings, g_strfreev);
}

gboolean
cli_quality_options_accepted (const QualityOptions *q, const SsSolverInfo *solver,
                              const char *psf)
{
  /* The very parsing each row does (config_for): a value deblur would
   * refuse for this solver must stop the command before its first case,
   * not turn every row into "options refused" minutes later. */
  CliOptions o;
  CliConfig c;
  SetPairs set;
  set_pairs_init (&set, q->set);
  gboolean ok = config_for (q, psf, solver, set.values, set.count, &o, &c, NULL);
  cli_config_clear (&c);
  cli_options_clear (&o);
  set_pairs_clear (&set);
  return ok;
}

/* The solver exactly as `deblur --psf PSF --solver NAME --alpha auto` runs it. */
MethodRow *
cli_quality_run_as_user (const QualityOptions *q, const CaseData *data, const SsSolverInfo *solver,
                         SsBackend *backend)
{
  g_autoptr (GError) error = NULL;
  Prepared p;
  SsSolveResult result = { 0 };
  MethodRow *row = NULL;
  SetPairs set;
  set_pairs_init (&set, q->set);
  if (cli_quality_prepare (q, data, solver, set.values, set.count, &p, &error)
      && cli_quality_solve_prepared (&p, backend, NULL, &result, &error))
    {
      gsize n = (gsize) data->spec->size * data->spec->size;
      g_autofree float *x = g_new (float, n);
      if (cli_deblur_crop_plane (&p.in, &p.job, result.x, x, &error))
        {
          char *note = ss_solver_uses (solver, SS_PARAM_ALPHA)
                       ? g_strdup_printf ("alpha auto = %.3g", p.job.params.alpha)
                       : g_strdup ("defaults");
          if (solver->kind == SS_SOLVER_RL)
            {
              g_free (note);
              note = g_strdup_printf (
                "stop %s after %d%s", ss_param_info (SS_PARAM_RL_STOP)->choices[p.job.params.rl_stop],
                result.iterations, result.blend_early_iterations > 0 ? ", blended" : "");
            }
          else if (result.sparsity > 0)
            {
              g_free (note);
              note = g_strdup_printf ("k %g chosen, hold-out", result.sparsity);
            }
          else if (result.choice != NULL)
            {
              /* "alm chosen: held-out error ..." -> "alm chosen by hold-out". */
              g_free (note);
              note = g_strdup_printf ("%.*s by hold-out", (int) strcspn (result.choice, ":"),
                                      result.choice);
            }
          row = cli_quality_score_row (solver->name, data, x, result.seconds, result.iterations,
                                       note);
        }
    }
  if (row == NULL)
    row = cli_quality_failed_row (solver->name, error);
  ss_solve_result_clear (&result);
  cli_quality_prepared_clear (&p);
  set_pairs_clear (&set);
  return row;
}
