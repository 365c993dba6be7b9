/* ss-cli-quality.c: `quality`, the benchmark of issue 10.
 *
 * Each case is a noiseless scene (a crop of a bundled image, or a synthetic
 * field of stars and galaxies from ss-synth.c) blurred by a Gaussian or
 * Moffat PSF and exposed with Poisson photon noise, sky and read noise
 * (ss_synth_expose). Every solver of the table is then run as a user runs
 * `deblur blurred.fits --psf PSF --alpha auto` (the same code:
 * ss-cli-deblur.h), and beside them the references with parameters chosen
 * WITH THE TRUTH, which a user cannot do: Richardson–Lucy stopped at its best
 * iteration, Wiener (the direct-fft solver) at its best α, and Siril's RL at
 * its best iteration count when siril-cli is installed. Scores: PSNR after
 * the best affine fit to the truth, and SSIM (ss-quality.h); time is the
 * solve's, setup and I/O excluded.
 *
 * The scene is blurred with a margin around the crop (the bundled image
 * itself, or its mirror where the crop touches its edge), so the blurred
 * image is not periodic, as a real frame is not.
 */
#include "ss-cli-deblur.h"
#include "ss-cli-json.h"
#include "ss-config.h"

#include <errno.h>
#include <math.h>
#include <string.h>
#include <glib/gstdio.h>

typedef enum {
  SOURCE_HDF,       /* data/hubble_deep_field.fits */
  SOURCE_AIA,       /* data/aia_171_level1.fits */
  SOURCE_STARS,     /* synthetic: stars dominate */
  SOURCE_GALAXIES,  /* synthetic: galaxies dominate */
} CaseSource;

/* Which --cases a case belongs to. */
typedef enum {
  CASES_FULL,       /* the published table */
  CASES_SMALL,      /* CI-sized crops */
  CASES_FRAMES,     /* frames large enough that `auto` judges them on a crop (a GPU's work) */
} CaseSet;

typedef struct {
  const char *name;
  CaseSource source;
  int x0, y0, size;     /* the crop (file sources) or the field's size */
  const char *psf;
  double peak, sky, read_noise;
  guint32 seed;
  CaseSet set;
} QualityCase;

/* Photon peaks 1e2-1e4 electrons, FWHM 2-5 px, both PSF shapes, four kinds of
 * scene; the small cases are crops of 128-192 px for CI; the frames are the
 * synthetic full cases at 2048², past SS_SOLVER_CHOICE_CROP_FRAMES crops. */
static const QualityCase cases[] = {
  { "hdf-gauss3", SOURCE_HDF, 244, 180, 512, "gaussian:3", 1e3, 100, 5, 11, CASES_FULL },
  { "hdf-moffat4", SOURCE_HDF, 244, 180, 512, "moffat:4,2.5", 1e4, 200, 5, 12, CASES_FULL },
  { "galaxies", SOURCE_GALAXIES, 0, 0, 512, "gaussian:2.5", 3e3, 50, 3, 13, CASES_FULL },
  { "stars-bright", SOURCE_STARS, 0, 0, 512, "moffat:3,3", 1e4, 100, 5, 14, CASES_FULL },
  { "stars-faint", SOURCE_STARS, 0, 0, 512, "gaussian:4", 1e2, 20, 3, 15, CASES_FULL },
  { "sun-gauss2", SOURCE_AIA, 0, 0, 128, "gaussian:2", 1e4, 10, 2, 16, CASES_FULL },
  { "sun-moffat5", SOURCE_AIA, 0, 0, 128, "moffat:5,2.5", 1e3, 10, 2, 17, CASES_FULL },
  { "small-hdf", SOURCE_HDF, 400, 300, 160, "gaussian:3", 1e3, 100, 5, 21, CASES_SMALL },
  { "small-stars", SOURCE_STARS, 0, 0, 128, "moffat:3,3", 3e2, 20, 3, 22, CASES_SMALL },
  { "small-sun", SOURCE_AIA, 0, 0, 128, "gaussian:2.5", 3e3, 10, 2, 23, CASES_SMALL },
  { "frame-galaxies", SOURCE_GALAXIES, 0, 0, 2048, "gaussian:2.5", 3e3, 50, 3, 31, CASES_FRAMES },
  { "frame-stars-bright", SOURCE_STARS, 0, 0, 2048, "moffat:3,3", 1e4, 100, 5, 32, CASES_FRAMES },
  { "frame-stars-faint", SOURCE_STARS, 0, 0, 2048, "gaussian:4", 1e2, 20, 3, 33, CASES_FRAMES },
};

/* The margin blurred around each crop: the PSF's reach at FWHM 5 with room. */
#define CASE_MARGIN 32
/* The mosaic's tiles are crops of this size (or the whole image). */
#define TILE 128
#define MOSAIC_COLUMNS 4

typedef struct {
  const QualityCase *spec;
  SsImage *truth;       /* electrons, no sky */
  SsImage *blurred;     /* electrons, sky included, header with GAIN/RDNOISE */
  SsPsfSpec psf;
} CaseData;

typedef struct {
  char *method;         /* "fista", "rl (best, truth)", ... */
  char *note;           /* parameters chosen, or why it failed */
  double psnr, ssim, seconds;
  int iterations;
  float *x;             /* electrons, the crop's size, or NULL */
} MethodRow;

typedef struct {
  gboolean json;
  gboolean quiet;
  char *cases;          /* "small", "full" or "frames" */
  char *only;           /* comma-separated case names, or NULL */
  char **methods;       /* --methods: the rows to run (solver names, rl-best, rl-tv-best,
                           wiener-best, siril), NULL for all */
  char *markdown;
  char *mosaics;
  char *write_cases;
  char *trace;          /* --trace: CSV of the best-iteration runs' curves */
  FILE *trace_file;
  char *backend;
  char *data_dir;
  gboolean no_siril;
  char **set;           /* --set NAME=VALUE: parameters for every solver row, as deblur's options */
  int draw;             /* --draw: 0 the published cases, N > 0 other scenes and noise */
} QualityOptions;

/* A case's seed for the draw asked for: draw 0 keeps the published cases;
 * another draw gives the same kind of case (scene recipe, PSF, exposure)
 * with other synthetic scenes and other noise, to check that a rule tuned
 * on the published cases holds on cases it has not seen. */
static guint32
case_seed (const QualityOptions *q, const QualityCase *spec)
{
  return spec->seed + 1000u * (guint32) q->draw;
}

static void
method_row_free (gpointer data)
{
  MethodRow *row = data;
  g_free (row->method);
  g_free (row->note);
  g_free (row->x);
  g_free (row);
}

static void
case_data_clear (CaseData *data)
{
  g_clear_pointer (&data->truth, ss_image_free);
  g_clear_pointer (&data->blurred, ss_image_free);
  ss_psf_spec_clear (&data->psf);
}

/* ---- building the cases --------------------------------------------------- */

static SsImage *
load_source (const QualityOptions *q, const QualityCase *spec, GError **error)
{
  if (spec->source == SOURCE_HDF || spec->source == SOURCE_AIA)
    {
      const char *file = spec->source == SOURCE_HDF ? "hubble_deep_field.fits"
                                                     : "aia_171_level1.fits";
      g_autofree char *path = g_build_filename (q->data_dir, file, NULL);
      return ss_fits_read (path, &SS_FITS_READ_OPTIONS_DEFAULT, error);
    }
  SsSynthSky sky;
  int side = spec->size + 2 * CASE_MARGIN;
  ss_synth_sky_init (&sky, side, side, case_seed (q, spec));
  if (spec->source == SOURCE_GALAXIES)
    {
      sky.stars /= 4;
      sky.galaxies *= 6;
    }
  return ss_synth_sky_render (&sky, error);
}

/* The scene around the crop, made non-negative (a bundled image has its own
 * sky and noise, below which it dips): the light a telescope would see. */
static float *
case_scene (const SsImage *source, const QualityCase *spec, int *side)
{
  gboolean synthetic = spec->source == SOURCE_STARS || spec->source == SOURCE_GALAXIES;
  int x0 = synthetic ? 0 : spec->x0 - CASE_MARGIN, y0 = synthetic ? 0 : spec->y0 - CASE_MARGIN;
  *side = spec->size + 2 * CASE_MARGIN;
  float *scene = ss_synth_window (source, x0, y0, *side, *side);
  gsize n = (gsize) *side * *side;
  float low = INFINITY;
  for (gsize i = 0; i < n; i++)
    low = isfinite (scene[i]) ? fminf (low, scene[i]) : low;
  for (gsize i = 0; i < n; i++)
    scene[i] = isfinite (scene[i]) ? scene[i] - low : 0.0f;
  return scene;
}

static void
crop_center (const float *in, int side, int size, float *out)
{
  for (int y = 0; y < size; y++)
    memcpy (out + (gsize) y * size, in + (gsize) (y + CASE_MARGIN) * side + CASE_MARGIN,
            size * sizeof (float));
}

static gboolean
build_case (const QualityOptions *q, const QualityCase *spec, CaseData *data, GError **error)
{
  memset (data, 0, sizeof *data);
  data->spec = spec;
  if (!ss_psf_spec_parse (spec->psf, &data->psf, error))
    return FALSE;
  g_autoptr (SsImage) source = load_source (q, spec, error);
  if (source == NULL)
    return FALSE;
  int side, size = spec->size;
  g_autofree float *scene = case_scene (source, spec, &side);
  SsSynthExposure exposure = { spec->peak, spec->sky, spec->read_noise,
                               case_seed (q, spec) * 7919u };
  double flux_scale;
  g_autoptr (SsImage) exposed = ss_synth_expose (scene, side, side, &data->psf, &exposure,
                                                 &flux_scale, error);
  if (exposed == NULL || !(data->truth = ss_image_new (size, size, 1, error))
      || !(data->blurred = ss_image_new (size, size, 1, error)))
    return FALSE;
  crop_center (exposed->data, side, size, data->blurred->data);
  data->blurred->header = ss_header_copy (exposed->header);
  crop_center (scene, side, size, data->truth->data);
  for (gsize i = 0; i < (gsize) size * size; i++)
    data->truth->data[i] *= (float) flux_scale;
  data->truth->header = ss_header_new ();
  ss_header_set_string (data->truth->header, "OBJECT", spec->name, "sharpsky-cli quality case");
  ss_header_set_string (data->blurred->header, "OBJECT", spec->name, "sharpsky-cli quality case");
  return TRUE;
}

/* The PSF as a centred (2r+1)² stamp for other tools. */
static SsImage *
psf_stamp (const SsPsfSpec *psf, GError **error)
{
  const int full = 64, r = 24, side = 2 * r + 1;
  g_autoptr (SsImage) wrapped = ss_psf_render (psf, full, full, error);
  if (wrapped == NULL)
    return NULL;
  SsImage *stamp = ss_image_new (side, side, 1, error);
  if (stamp == NULL)
    return NULL;
  for (int y = -r; y <= r; y++)
    for (int x = -r; x <= r; x++)
      stamp->data[(gsize) (y + r) * side + x + r]
        = wrapped->data[(gsize) ((y + full) % full) * full + (x + full) % full];
  stamp->header = ss_header_new ();
  g_autofree char *text = ss_psf_spec_to_string (psf);
  ss_header_set_string (stamp->header, "PSF", text, "centred on the middle pixel, sum 1");
  return stamp;
}

static gboolean
write_case (const char *dir, const CaseData *data, GError **error)
{
  g_autofree char *case_dir = g_build_filename (dir, data->spec->name, NULL);
  if (g_mkdir_with_parents (case_dir, 0755) != 0)
    {
      g_set_error (error, SS_ERROR, SS_ERROR_IO, "%s: %s", case_dir, g_strerror (errno));
      return FALSE;
    }
  g_autofree char *truth = g_build_filename (case_dir, "truth.fits", NULL);
  g_autofree char *blurred = g_build_filename (case_dir, "blurred.fits", NULL);
  g_autofree char *psf = g_build_filename (case_dir, "psf.fits", NULL);
  g_autoptr (SsImage) stamp = psf_stamp (&data->psf, error);
  return stamp != NULL && ss_fits_write (data->truth, truth, TRUE, NULL, error)
         && ss_fits_write (data->blurred, blurred, TRUE, NULL, error)
         && ss_fits_write (stamp, psf, TRUE, NULL, error);
}

/* ---- scoring ------------------------------------------------------------------ */

static MethodRow *
score_row (const char *method, const CaseData *data, const float *x, double seconds,
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

static MethodRow *
failed_row (const char *method, const GError *error)
{
  MethodRow *row = g_new0 (MethodRow, 1);
  row->method = g_strdup (method);
  row->note = g_strdup_printf ("failed: %s", error ? error->message : "unknown error");
  row->psnr = row->ssim = row->seconds = NAN;
  return row;
}

/* ---- running a solver as deblur does --------------------------------------- */

/* What a method sets on the command line besides --psf and --solver. */
typedef struct {
  const char *name;
  const char *value;
} OptionValue;

/* Parses the options a user would give deblur into a config. */
static gboolean
config_for (const QualityOptions *q, const CaseData *data, const SsSolverInfo *solver,
            const OptionValue *extra, int n_extra, CliOptions *o, CliConfig *c, GError **error)
{
  memset (o, 0, sizeof *o);
  memset (c, 0, sizeof *c);
  o->quiet = TRUE;
  o->json = TRUE;   /* keeps deblur's per-plane notes off our table */
  o->psf = g_strdup (data->spec->psf);
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

/* Are the --set pairs NAME=VALUE with NAME a solver parameter's option
 * name? A misspelt name would otherwise leave every row at its default and
 * the table would silently answer another question. */
static gboolean
set_names_known (char **set)
{
  for (guint i = 0; set && set[i]; i++)
    {
      g_auto (GStrv) kv = g_strsplit (set[i], "=", 2);
      const SsParamInfo *known = NULL;
      for (int id = 0; kv[1] && id < SS_N_PARAMS && !known; id++)
        if (g_str_equal (ss_param_info ((SsParamId) id)->name, kv[0]))
          known = ss_param_info ((SsParamId) id);
      if (!known)
        {
          cli_error (NULL, "--set '%s': expected NAME=VALUE with NAME one of deblur's solver "
                     "options (iters, alpha, inner-iters, ...)", set[i]);
          return FALSE;
        }
      double value;
      g_autoptr (GError) error = NULL;
      if (known->type == SS_PARAM_BOOL && !ss_param_parse (known, kv[1], &value, &error))
        {
          cli_error (NULL, "--set %s: %s", set[i], error->message);
          return FALSE;
        }
    }
  return TRUE;
}

/* Tracks the best iterate against the truth (the references' oracle). */
typedef struct {
  const CliDeblurInput *in;
  CliPlaneJob *job;
  const CaseData *data;
  float *scratch;       /* the crop, input units */
  float *best;          /* NULL until the first report */
  double best_psnr;
  int best_iteration;
  double best_elapsed;  /* seconds into the solve at the best report */
  int last_iteration;
  GCancellable *past_best;   /* cancelled once the best lies far enough behind, or NULL */
  FILE *trace;          /* or NULL */
  const char *method;
} BestTracker;

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

/* One prepared deblur of the case: the config, the input, the plane job. */
typedef struct {
  CliOptions o;
  CliConfig c;
  CliDeblurInput in;
  CliPlaneJob job;
} Prepared;

static void
prepared_clear (Prepared *p)
{
  cli_plane_job_clear (&p->job);
  cli_config_clear (&p->c);
  cli_options_clear (&p->o);
}

static gboolean
prepare (const QualityOptions *q, const CaseData *data, const SsSolverInfo *solver,
         const OptionValue *extra, int n_extra, Prepared *p, GError **error)
{
  memset (p, 0, sizeof *p);
  if (!config_for (q, data, solver, extra, n_extra, &p->o, &p->c, error))
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
static gboolean
solve_prepared (Prepared *p, SsBackend *backend, BestTracker *tracker, SsSolveResult *result,
                GError **error)
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

/* The solver exactly as `deblur --psf PSF --solver NAME --alpha auto` runs it. */
static MethodRow *
run_as_user (const QualityOptions *q, const CaseData *data, const SsSolverInfo *solver,
             SsBackend *backend)
{
  g_autoptr (GError) error = NULL;
  Prepared p;
  SsSolveResult result = { 0 };
  MethodRow *row = NULL;
  /* --set NAME=VALUE pairs, as deblur's --NAME VALUE would set them. */
  guint n_set = q->set ? g_strv_length (q->set) : 0;
  g_autofree OptionValue *extra = g_new0 (OptionValue, n_set + 1);
  g_auto (GStrv) pairs = g_new0 (char *, 2 * n_set + 1);
  for (guint i = 0; i < n_set; i++)
    {
      char **kv = g_strsplit (q->set[i], "=", 2);
      pairs[2 * i] = kv[0];
      pairs[2 * i + 1] = kv[1] ? kv[1] : g_strdup ("");
      extra[i] = (OptionValue) { pairs[2 * i], pairs[2 * i + 1] };
      g_free (kv);
    }
  if (prepare (q, data, solver, extra, (int) n_set, &p, &error)
      && solve_prepared (&p, backend, NULL, &result, &error))
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
                "stop %s after %d",
                ss_param_info (SS_PARAM_RL_STOP)->choices[p.job.params.rl_stop],
                result.iterations);
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
          row = score_row (solver->name, data, x, result.seconds, result.iterations, note);
        }
    }
  if (row == NULL)
    row = failed_row (solver->name, error);
  ss_solve_result_clear (&result);
  prepared_clear (&p);
  return row;
}

/* Richardson–Lucy (or RL-TV) run long, scored every 2 iterations, the best kept. */
static MethodRow *
run_best_iteration (const QualityOptions *q, const CaseData *data, SsBackend *backend,
                    const char *method, const char *tv, int iterations)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *iters = g_strdup_printf ("%d", iterations);
  const OptionValue extra[] = { { "stop", "none" }, { "iters", iters }, { "tv", tv } };
  Prepared p;
  SsSolveResult result = { 0 };
  MethodRow *row = NULL;
  const SsSolverInfo *rl = ss_solver_info (SS_SOLVER_RL);
  gsize n = (gsize) data->spec->size * data->spec->size;
  g_autoptr (GCancellable) past_best = g_cancellable_new ();
  BestTracker tracker = { .data = data, .scratch = g_new (float, n), .trace = q->trace_file,
                          .method = method, .past_best = past_best };
  if (prepare (q, data, rl, extra, G_N_ELEMENTS (extra), &p, &error))
    {
      p.job.params.report_every = 2;
      tracker.in = &p.in;
      tracker.job = &p.job;
      /* Stopped past the best (track_best) is how the run is meant to end. */
      gboolean solved = solve_prepared (&p, backend, &tracker, &result, &error);
      if (!solved && g_cancellable_is_cancelled (past_best))
        {
          g_clear_error (&error);
          solved = TRUE;
        }
      if (solved && tracker.best)
        {
          char *note = g_strdup_printf ("best iteration %d of %d%s%s", tracker.best_iteration,
                                        tracker.last_iteration,
                                        g_str_equal (tv, "0") ? "" : ", tv ",
                                        g_str_equal (tv, "0") ? "" : tv);
          /* The time a user would spend to reach that iterate (scoring included). */
          row = score_row (method, data, tracker.best, tracker.best_elapsed,
                           tracker.best_iteration, note);
        }
    }
  if (row == NULL)
    row = failed_row (method, error);
  g_free (tracker.best);
  g_free (tracker.scratch);
  ss_solve_result_clear (&result);
  prepared_clear (&p);
  return row;
}

/* Wiener (direct-fft) at one α: its affine PSNR, and the estimate in X. */
static double
wiener_at (Prepared *p, SsBackend *backend, double log_alpha, float *x, double *seconds,
           const CaseData *data)
{
  SsSolveResult result = { 0 };
  double psnr = -INFINITY;
  p->job.params.alpha = pow (10, log_alpha);
  if (solve_prepared (p, backend, NULL, &result, NULL)
      && cli_deblur_crop_plane (&p->in, &p->job, result.x, x, NULL))
    {
      psnr = ss_psnr_affine (x, data->truth->data, (gsize) data->spec->size * data->spec->size);
      *seconds = result.seconds;
    }
  ss_solve_result_clear (&result);
  return psnr;
}

/* Wiener at its best α: a grid of half decades, then golden-section search
 * on log α around the best grid point. */
static MethodRow *
run_best_wiener (const QualityOptions *q, const CaseData *data, SsBackend *backend)
{
  g_autoptr (GError) error = NULL;
  const char *method = "wiener (best α, truth)";
  Prepared p;
  if (!prepare (q, data, ss_solver_info (SS_SOLVER_DIRECT_FFT), NULL, 0, &p, &error))
    {
      prepared_clear (&p);
      return failed_row (method, error);
    }
  gsize n = (gsize) data->spec->size * data->spec->size;
  g_autofree float *x = g_new (float, n);
  double seconds = NAN, best = -INFINITY, best_log = -3;
  for (double l = -7; l <= 2.01; l += 0.5)
    {
      double psnr = wiener_at (&p, backend, l, x, &seconds, data);
      if (psnr > best)
        {
          best = psnr;
          best_log = l;
        }
    }
  const double golden = 0.6180339887498949;
  double a = best_log - 0.5, b = best_log + 0.5;
  double c = b - golden * (b - a), d = a + golden * (b - a);
  double fc = wiener_at (&p, backend, c, x, &seconds, data);
  double fd = wiener_at (&p, backend, d, x, &seconds, data);
  for (int k = 0; k < 14; k++)
    if (fc > fd)
      {
        b = d, d = c, fd = fc;
        c = b - golden * (b - a);
        fc = wiener_at (&p, backend, c, x, &seconds, data);
      }
    else
      {
        a = c, c = d, fc = fd;
        d = a + golden * (b - a);
        fd = wiener_at (&p, backend, d, x, &seconds, data);
      }
  double log_alpha = fc > fd ? c : d;
  if (MAX (fc, fd) < best)
    log_alpha = best_log;
  wiener_at (&p, backend, log_alpha, x, &seconds, data);
  MethodRow *row = score_row (method, data, x, seconds, 1,
                              g_strdup_printf ("alpha %.3g", pow (10, log_alpha)));
  prepared_clear (&p);
  return row;
}

/* ---- Siril ---------------------------------------------------------------------- */

/* Siril 1.0.6 (Debian 12) has `rl sigma corner_radius_boost iterations`: RL
 * with a Gaussian PSF given by its sigma, and no Wiener command (1.2 added
 * `wiener`, `sb` and PSF files). A Moffat case gets the Gaussian of the same
 * FWHM. Counts 5..80 are tried and the best kept, as for our RL. */
/* Siril 1.0.6 refuses `rl` with a larger sigma ("Error in line 3"). */
#define SIRIL_MAX_SIGMA 2.0

static char *
find_siril (void)
{
  return g_find_program_in_path ("siril-cli");
}

static gboolean
siril_rl_once (const char *siril, const char *dir, double sigma, int iterations, float *x,
               gsize n, GError **error)
{
  g_autofree char *script = g_build_filename (dir, "rl.ssf", NULL);
  g_autofree char *text = g_strdup_printf ("requires 1.0.0\nload blurred.fits\n"
                                           "rl %.4f 0 %d\nsave restored\n", sigma, iterations);
  if (!g_file_set_contents (script, text, -1, error))
    return FALSE;
  g_autofree char *restored = g_build_filename (dir, "restored.fit", NULL);
  g_unlink (restored);
  const char *argv[] = { siril, "-d", dir, "-s", script, NULL };
  int status = 0;
  g_autofree char *out = NULL, *err = NULL;
  if (!g_spawn_sync (dir, (char **) argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out, &err,
                     &status, error))
    return FALSE;
  if (!g_spawn_check_wait_status (status, NULL))
    {
      /* Siril says what it refused on stdout ("Error in line 3: 'rl'."). */
      g_auto (GStrv) lines = g_strsplit (out ? out : "", "\n", -1);
      const char *why = "no message";
      for (int i = 0; lines[i]; i++)
        if (strstr (lines[i], "Error"))
          why = lines[i];
      g_set_error (error, SS_ERROR, SS_ERROR_IO, "siril-cli failed: %s", why);
      return FALSE;
    }
  g_autoptr (SsImage) image = ss_fits_read (restored, &SS_FITS_READ_OPTIONS_DEFAULT, error);
  if (image == NULL)
    return FALSE;
  if (ss_image_plane_size (image) != n)
    {
      g_set_error (error, SS_ERROR, SS_ERROR_IO, "siril wrote a %dx%d image", image->width,
                   image->height);
      return FALSE;
    }
  memcpy (x, image->data, n * sizeof (float));
  return TRUE;
}

static MethodRow *
run_siril (const char *siril, const CaseData *data)
{
  g_autoptr (GError) error = NULL;
  const char *method = "siril rl (best, truth)";
  g_autofree char *dir = g_dir_make_tmp ("sharpsky-siril-XXXXXX", &error);
  if (dir == NULL)
    return failed_row (method, error);
  g_autofree char *blurred = g_build_filename (dir, "blurred.fits", NULL);
  gsize n = (gsize) data->spec->size * data->spec->size;
  g_autofree float *x = g_new (float, n);
  g_autofree float *best = NULL;
  double best_psnr = -INFINITY, best_seconds = NAN;
  int best_count = 0;
  double sigma = data->psf.fwhm / (2 * sqrt (2 * log (2)));
  if (sigma > SIRIL_MAX_SIGMA)
    {
      g_rmdir (dir);
      g_set_error (&error, SS_ERROR, SS_ERROR_UNSUPPORTED,
                   "not run: Siril 1.0.6's rl takes a Gaussian sigma of at most %.0f px "
                   "(FWHM %.1f), this PSF needs %.2f", SIRIL_MAX_SIGMA,
                   SIRIL_MAX_SIGMA * 2 * sqrt (2 * log (2)), sigma);
      return failed_row (method, error);
    }
  if (ss_fits_write (data->blurred, blurred, TRUE, NULL, &error))
    for (int count = 5; count <= 80; count *= 2)
      {
        double start = ss_now ();
        if (!siril_rl_once (siril, dir, sigma, count, x, n, &error))
          break;
        double psnr = ss_psnr_affine (x, data->truth->data, n);
        if (psnr > best_psnr)
          {
            best_psnr = psnr;
            best_count = count;
            best_seconds = ss_now () - start;
            g_free (best);
            best = g_memdup2 (x, n * sizeof (float));
          }
      }
  g_autofree char *restored = g_build_filename (dir, "restored.fit", NULL);
  g_autofree char *script = g_build_filename (dir, "rl.ssf", NULL);
  g_unlink (restored);
  g_unlink (script);
  g_unlink (blurred);
  g_rmdir (dir);
  if (best == NULL)
    return failed_row (method, error);
  return score_row (method, data, best, best_seconds, best_count,
                    g_strdup_printf ("Gaussian sigma %.2f, best of 5-80 iterations; time "
                                     "includes siril's start-up", sigma));
}

/* ---- output ------------------------------------------------------------------------ */

/* Tiles of the centre crop: truth, blurred, each method, all fitted to the
 * truth so one stretch shows them alike. */
static gboolean
write_mosaic (const char *path, const CaseData *data, GPtrArray *rows, GError **error)
{
  int size = data->spec->size, tile = MIN (TILE, size), gap = 2;
  int x0 = (size - tile) / 2, y0 = (size - tile) / 2;
  guint tiles = 2 + rows->len;
  int columns = MIN (MOSAIC_COLUMNS, (int) tiles), lines = (tiles + columns - 1) / columns;
  int mw = columns * tile + (columns - 1) * gap, mh = lines * tile + (lines - 1) * gap;
  g_autoptr (SsImage) mosaic = ss_image_new (mw, mh, 1, error);
  if (mosaic == NULL)
    return FALSE;
  gsize n = (gsize) size * size;
  const float *truth = data->truth->data;
  double low = INFINITY;
  for (gsize i = 0; i < n; i++)
    low = MIN (low, truth[i]);
  for (gsize i = 0; i < (gsize) mw * mh; i++)
    mosaic->data[i] = (float) low;
  g_autofree float *fitted = g_new (float, n);
  for (guint t = 0; t < tiles; t++)
    {
      const float *source = t == 0 ? truth : t == 1 ? data->blurred->data
                                                    : ((MethodRow *) rows->pdata[t - 2])->x;
      if (source == NULL)
        continue;
      double a, b;
      ss_affine_fit (source, truth, n, &a, &b);
      ss_affine_apply (source, fitted, n, a, b);
      int ox = (t % columns) * (tile + gap), oy = (lines - 1 - t / columns) * (tile + gap);
      for (int y = 0; y < tile; y++)
        memcpy (mosaic->data + (gsize) (oy + y) * mw + ox,
                fitted + (gsize) (y0 + y) * size + x0, tile * sizeof (float));
    }
  SsPngWriteOptions png;
  ss_png_write_options_init (&png);
  png.stretch = SS_STRETCH_ASINH;
  png.low_percent = 0.5;
  png.high_percent = 99.8;
  return ss_png_write (mosaic, path, &png, TRUE, NULL, error);
}

static void
print_text_case (const CaseData *data, double blurred_psnr, double blurred_ssim, GPtrArray *rows)
{
  printf ("\n%s: %dx%d, %s, peak %g e-, sky %g e-, read noise %g e-\n", data->spec->name,
          data->spec->size, data->spec->size, data->spec->psf, data->spec->peak,
          data->spec->sky, data->spec->read_noise);
  printf ("  %-26s %8s %7s %9s %6s  %s\n", "method", "PSNR", "SSIM", "seconds", "iters", "note");
  printf ("  %-26s %8.2f %7.4f %9s %6s\n", "blurred (input)", blurred_psnr, blurred_ssim, "", "");
  for (guint i = 0; i < rows->len; i++)
    {
      const MethodRow *r = rows->pdata[i];
      printf ("  %-26s %8.2f %7.4f %9.3f %6d  %s\n", r->method, r->psnr, r->ssim, r->seconds,
              r->iterations, r->note ? r->note : "");
    }
  fflush (stdout);
}

static void
print_json_row (const CaseData *data, const char *method, double psnr, double ssim,
                double seconds, int iterations, const char *note)
{
  SsJsonObject o;
  ss_json_begin (&o);
  ss_json_add_string (&o, "type", "quality");
  ss_json_add_string (&o, "case", data->spec->name);
  ss_json_add_int (&o, "size", data->spec->size);
  ss_json_add_string (&o, "psf", data->spec->psf);
  ss_json_add_number (&o, "peak", data->spec->peak);
  ss_json_add_string (&o, "method", method);
  ss_json_add_number (&o, "psnr", psnr);
  ss_json_add_number (&o, "ssim", ssim);
  ss_json_add_number (&o, "seconds", seconds);
  ss_json_add_int (&o, "iterations", iterations);
  ss_json_add_string (&o, "note", note);
  g_autofree char *text = ss_json_end (&o);
  printf ("%s\n", text);
  fflush (stdout);
}

/* MOSAIC is the link: relative to the markdown file's folder. */
static void
append_markdown_case (GString *md, const CaseData *data, double blurred_psnr,
                      double blurred_ssim, GPtrArray *rows, const char *mosaic)
{
  const QualityCase *s = data->spec;
  g_string_append_printf (md, "\n### %s\n\n%d×%d, PSF %s, peak %g e⁻, sky %g e⁻, read noise "
                          "%g e⁻\n\n", s->name, s->size, s->size, s->psf, s->peak, s->sky,
                          s->read_noise);
  g_string_append (md, "| method | PSNR (dB) | SSIM | seconds | iterations | note |\n"
                       "| --- | ---: | ---: | ---: | ---: | --- |\n");
  g_string_append_printf (md, "| blurred (input) | %.2f | %.4f | | | |\n", blurred_psnr,
                          blurred_ssim);
  double top = -INFINITY;
  for (guint i = 0; i < rows->len; i++)
    top = MAX (top, ((MethodRow *) rows->pdata[i])->psnr);
  for (guint i = 0; i < rows->len; i++)
    {
      const MethodRow *r = rows->pdata[i];
      const char *bold = r->psnr == top ? "**" : "";
      if (!isfinite (r->psnr))
        {
          /* A method that could not run: say why, no numbers. */
          g_string_append_printf (md, "| %s | — | — | — | — | %s |\n", r->method,
                                  r->note ? r->note : "");
          continue;
        }
      g_string_append_printf (md, "| %s | %s%.2f%s | %.4f | %.3f | %d | %s |\n", r->method, bold,
                              r->psnr, bold, r->ssim, r->seconds, r->iterations,
                              r->note ? r->note : "");
    }
  if (mosaic)
    g_string_append_printf (md, "\n![%s: truth, blurred, then each method in the table's "
                            "order, left to right, top to bottom](%s)\n", s->name, mosaic);
}

/* PATH as seen from the folder of FILE: the folder's prefix removed when
 * PATH lies inside it, else PATH made absolute. */
static char *
relative_link (const char *file, const char *path)
{
  g_autoptr (GFile) markdown = g_file_new_for_path (file);
  g_autoptr (GFile) folder = g_file_get_parent (markdown);
  g_autoptr (GFile) target = g_file_new_for_path (path);
  char *relative = folder ? g_file_get_relative_path (folder, target) : NULL;
  return relative ? relative : g_file_get_path (target);
}

/* The summary matrix: one line per case, one column per method. */
static void
append_markdown_summary (GString *md, GPtrArray *all_rows, GPtrArray *names,
                         const double *blurred)
{
  g_string_append (md, "\n| case (PSNR dB) | blurred |");
  GPtrArray *first = all_rows->pdata[0];
  for (guint i = 0; i < first->len; i++)
    g_string_append_printf (md, " %s |", ((MethodRow *) first->pdata[i])->method);
  g_string_append (md, "\n| --- | ---: |");
  for (guint i = 0; i < first->len; i++)
    g_string_append (md, " ---: |");
  g_string_append_c (md, '\n');
  for (guint c = 0; c < all_rows->len; c++)
    {
      GPtrArray *rows = all_rows->pdata[c];
      g_string_append_printf (md, "| %s | %.2f |", (char *) names->pdata[c], blurred[c]);
      for (guint i = 0; i < rows->len; i++)
        {
          double psnr = ((MethodRow *) rows->pdata[i])->psnr;
          if (isfinite (psnr))
            g_string_append_printf (md, " %.2f |", psnr);
          else
            g_string_append (md, " — |");
        }
      g_string_append_c (md, '\n');
    }
}

/* ---- the command -------------------------------------------------------------------- */

static gboolean
case_selected (const QualityOptions *q, const QualityCase *spec)
{
  if (q->only)
    {
      g_auto (GStrv) names = g_strsplit (q->only, ",", -1);
      return g_strv_contains ((const char *const *) names, spec->name);
    }
  CaseSet set = g_str_equal (q->cases, "small")    ? CASES_SMALL
                : g_str_equal (q->cases, "frames") ? CASES_FRAMES
                                                   : CASES_FULL;
  return spec->set == set;
}

static gboolean
method_selected (const QualityOptions *q, const char *key)
{
  return q->methods == NULL || g_strv_contains ((const char *const *) q->methods, key);
}

/* Every method on one case, in the order of the tables. */
static GPtrArray *
run_methods (const QualityOptions *q, const CaseData *data, SsBackend *backend,
             const char *siril)
{
  GPtrArray *rows = g_ptr_array_new_with_free_func (method_row_free);
  for (guint i = 0; i < ss_solver_count (); i++)
    {
      const SsSolverInfo *solver = ss_solver_nth (i);
      /* The dense solver needs a region of interest, not a whole frame. */
      if ((solver->caps & SS_SOLVER_NEEDS_REGION) || !method_selected (q, solver->name))
        continue;
      if (!q->quiet && !q->json)
        g_printerr ("%s: %s\n", data->spec->name, solver->name);
      g_ptr_array_add (rows, run_as_user (q, data, solver, backend));
    }
  /* A limit only: the runs stop once their best iterate lies well behind
   * them (track_best). Fixed limits of 500 (512²) and 1000 (2048²) cut the
   * bright star fields short: their best came at 846-1382 iterations. */
  int long_run = 20000;
  if (method_selected (q, "rl-best"))
    g_ptr_array_add (rows, run_best_iteration (q, data, backend, "rl (best, truth)", "0",
                                               long_run));
  if (method_selected (q, "rl-tv-best"))
    g_ptr_array_add (rows, run_best_iteration (q, data, backend, "rl-tv 0.002 (best, truth)",
                                               "0.002", long_run));
  if (method_selected (q, "wiener-best"))
    g_ptr_array_add (rows, run_best_wiener (q, data, backend));
  if (siril && method_selected (q, "siril"))
    g_ptr_array_add (rows, run_siril (siril, data));
  return rows;
}

static int
run_quality (QualityOptions *q)
{
  g_autoptr (GError) error = NULL;
  SsBackendKind kind = SS_BACKEND_AUTO;
  if (q->backend && !ss_backend_kind_from_string (q->backend, &kind, &error))
    return cli_fail (CLI_EXIT_USAGE, NULL, error);
  g_autoptr (SsBackend) backend = ss_backend_new (kind, &error);
  if (backend == NULL)
    return cli_fail (CLI_EXIT_FAILURE, NULL, error);
  g_autofree char *siril = q->no_siril ? NULL : find_siril ();
  if (q->trace && !(q->trace_file = fopen (q->trace, "w")))
    {
      cli_error (q->trace, "cannot write: %s", g_strerror (errno));
      return CLI_EXIT_FAILURE;
    }
  g_autofree char *mosaics = q->mosaics ? g_strdup (q->mosaics)
                             : q->markdown ? g_path_get_dirname (q->markdown) : NULL;
  if (mosaics && g_mkdir_with_parents (mosaics, 0755) != 0)
    {
      cli_error (mosaics, "cannot create: %s", g_strerror (errno));
      return CLI_EXIT_FAILURE;
    }

  g_autoptr (GString) md = g_string_new (NULL);
  g_autoptr (GPtrArray) all_rows = g_ptr_array_new_with_free_func ((GDestroyNotify)
                                                                   g_ptr_array_unref);
  g_autoptr (GPtrArray) names = g_ptr_array_new ();
  g_autoptr (GArray) blurred_psnr = g_array_new (FALSE, FALSE, sizeof (double));
  if (!q->json)
    printf ("sharpsky-cli quality: backend %s, device %s%s\n", ss_backend_get_name (backend),
            ss_backend_get_device (backend), siril ? ", with siril-cli" : "");
  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      if (!case_selected (q, &cases[i]))
        continue;
      CaseData data;
      if (!build_case (q, &cases[i], &data, &error)
          || (q->write_cases && !write_case (q->write_cases, &data, &error)))
        {
          case_data_clear (&data);
          return cli_fail (CLI_EXIT_FAILURE, cases[i].name, error);
        }
      gsize n = (gsize) cases[i].size * cases[i].size;
      double bp = ss_psnr_affine (data.blurred->data, data.truth->data, n);
      double bs = ss_ssim_affine (data.blurred->data, data.truth->data, cases[i].size,
                                  cases[i].size);
      GPtrArray *rows = run_methods (q, &data, backend, siril);
      g_autofree char *mosaic = mosaics ? g_strdup_printf ("%s/quality-%s.png", mosaics,
                                                           cases[i].name) : NULL;
      if (mosaic && !write_mosaic (mosaic, &data, rows, &error))
        {
          g_ptr_array_unref (rows);
          case_data_clear (&data);
          return cli_fail (CLI_EXIT_FAILURE, mosaic, error);
        }
      if (q->json)
        {
          print_json_row (&data, "blurred", bp, bs, NAN, 0, NULL);
          for (guint r = 0; r < rows->len; r++)
            {
              const MethodRow *row = rows->pdata[r];
              print_json_row (&data, row->method, row->psnr, row->ssim, row->seconds,
                              row->iterations, row->note);
            }
        }
      else
        print_text_case (&data, bp, bs, rows);
      g_autofree char *link = mosaic && q->markdown ? relative_link (q->markdown, mosaic) : NULL;
      append_markdown_case (md, &data, bp, bs, rows, link);
      g_ptr_array_add (all_rows, rows);
      g_ptr_array_add (names, (gpointer) cases[i].name);
      g_array_append_val (blurred_psnr, bp);
      case_data_clear (&data);
    }
  if (all_rows->len == 0)
    {
      cli_error (NULL, "quality: no case selected (--only %s)", q->only ? q->only : "");
      return CLI_EXIT_USAGE;
    }
  if (q->markdown)
    {
      g_autoptr (GString) doc = g_string_new (NULL);
      g_autoptr (GDateTime) now = g_date_time_new_now_utc ();
      g_autofree char *date = g_date_time_format (now, "%Y-%m-%d %H:%M UTC");
      g_string_append_printf (doc, "Measured %s with sharpsky-cli %s, backend %s (%s)%s.\n\n",
                              date, SHARPSKY_VERSION, ss_backend_get_name (backend),
                              ss_backend_get_device (backend),
                              siril ? ", siril-cli on the PATH" : ", no siril-cli");
      if (q->draw != 0)
        g_string_append_printf (doc, "Draw %d: held-out scenes and noise (`--draw %d`).\n\n",
                                q->draw, q->draw);
      append_markdown_summary (doc, all_rows, names, (const double *) blurred_psnr->data);
      g_string_append (doc, md->str);
      if (!g_file_set_contents (q->markdown, doc->str, -1, &error))
        return cli_fail (CLI_EXIT_FAILURE, q->markdown, error);
    }
  return CLI_EXIT_OK;
}

/* $SHARPSKY_DATA, the source tree's data/ (a build), or the installed one. */
static char *
default_data_dir (void)
{
  const char *dirs[] = { g_getenv ("SHARPSKY_DATA"), SHARPSKY_SOURCE_DATADIR, SHARPSKY_DATADIR };
  for (gsize i = 0; i < G_N_ELEMENTS (dirs); i++)
    if (dirs[i] && g_file_test (dirs[i], G_FILE_TEST_IS_DIR))
      return g_strdup (dirs[i]);
  return g_strdup (SHARPSKY_DATADIR);
}

static void
quality_options_clear (QualityOptions *q)
{
  g_free (q->cases);
  g_free (q->only);
  g_strfreev (q->methods);
  g_strfreev (q->set);
  g_free (q->markdown);
  g_free (q->mosaics);
  g_free (q->write_cases);
  g_free (q->trace);
  if (q->trace_file)
    fclose (q->trace_file);
  g_free (q->backend);
  g_free (q->data_dir);
}

int
cli_quality (int argc, char **argv)
{
  QualityOptions q = { 0 };
  GOptionEntry entries[] = {
    { "cases", 0, 0, G_OPTION_ARG_STRING, &q.cases,
      "small (CI-sized crops of 128-192 px), full (the default) or frames (2048² synthetic "
      "fields, judged by auto on a crop: for a GPU)", "SET" },
    { "only", 0, 0, G_OPTION_ARG_STRING, &q.only, "Only these cases (comma-separated names)",
      "NAMES" },
    { "methods", 0, 0, G_OPTION_ARG_STRING_ARRAY, &q.methods,
      "Run only METHOD (repeatable): a solver's name, rl-best, rl-tv-best, wiener-best, siril",
      "METHOD" },
    { "json", 0, 0, G_OPTION_ARG_NONE, &q.json, "One JSON object per case and method", NULL },
    { "quiet", 'q', 0, G_OPTION_ARG_NONE, &q.quiet, "No progress on stderr", NULL },
    { "markdown", 0, 0, G_OPTION_ARG_FILENAME, &q.markdown,
      "Write the tables as markdown (QUALITY.md's body) to FILE; mosaics go beside it", "FILE" },
    { "mosaics", 0, 0, G_OPTION_ARG_FILENAME, &q.mosaics,
      "Write a PNG mosaic per case (truth | blurred | each method) into DIR", "DIR" },
    { "write-cases", 0, 0, G_OPTION_ARG_FILENAME, &q.write_cases,
      "Write DIR/CASE/{truth,blurred,psf}.fits for other tools", "DIR" },
    { "trace", 0, 0, G_OPTION_ARG_FILENAME, &q.trace,
      "Write the best-iteration runs' curves to FILE as CSV: case, method, iteration, PSNR, "
      "SSIM-free residual and relative change at every scored report", "FILE" },
    { "backend", 0, 0, G_OPTION_ARG_STRING, &q.backend, "auto, cpu or cuda", "NAME" },
    { "data", 0, 0, G_OPTION_ARG_FILENAME, &q.data_dir,
      "Where the bundled images are (default: the installed or source data/)", "DIR" },
    { "set", 0, 0, G_OPTION_ARG_STRING_ARRAY, &q.set,
      "Set a solver parameter for every solver row (repeatable), e.g. prior=tv or alpha=0.01",
      "NAME=VALUE" },
    { "no-siril", 0, 0, G_OPTION_ARG_NONE, &q.no_siril, "Skip siril-cli even when installed",
      NULL },
    { "draw", 0, 0, G_OPTION_ARG_INT, &q.draw,
      "Draw N >= 1: the same kinds of case with other synthetic scenes and noise (held-out "
      "cases for a rule tuned on the published ones, draw 0)", "N" },
    { NULL },
  };
  GOptionContext *context = g_option_context_new ("");
  g_option_context_set_summary (context,
    "Scores every solver, as 'deblur --alpha auto' runs it, against Richardson-Lucy and\n"
    "Wiener with parameters chosen with the truth, on simulated noisy exposures of\n"
    "the bundled images and of synthetic star and galaxy fields.");
  g_option_context_set_description (context,
    "PSNR is after the best affine fit to the truth; SSIM uses the 11x11 Gaussian\n"
    "window on data scaled to the truth's range. Plans are FFTW_ESTIMATE unless\n"
    "SHARPSKY_FFTW says otherwise, so that no method pays for planning.");
  g_option_context_add_main_entries (context, entries, NULL);
  g_autoptr (GError) error = NULL;
  gboolean ok = g_option_context_parse (context, &argc, &argv, &error);
  g_option_context_free (context);
  int status = CLI_EXIT_OK;
  if (!ok)
    status = cli_fail (CLI_EXIT_USAGE, NULL, error);
  else if (argc > 1)
    {
      cli_error (NULL, "quality: unexpected argument '%s'", argv[1]);
      status = CLI_EXIT_USAGE;
    }
  else if (q.cases && !g_str_equal (q.cases, "small") && !g_str_equal (q.cases, "full")
           && !g_str_equal (q.cases, "frames"))
    {
      cli_error (NULL, "--cases '%s': expected small, full or frames", q.cases);
      status = CLI_EXIT_USAGE;
    }
  else if (q.draw < 0 || q.draw > 1000000)
    {
      cli_error (NULL, "--draw %d: expected 0 (the published cases) to 1000000", q.draw);
      status = CLI_EXIT_USAGE;
    }
  else if (!set_names_known (q.set))
    status = CLI_EXIT_USAGE;
  else
    {
      if (q.cases == NULL)
        q.cases = g_strdup ("full");
      if (q.data_dir == NULL)
        q.data_dir = default_data_dir ();
      g_setenv ("SHARPSKY_FFTW", "estimate", FALSE);
      status = run_quality (&q);
    }
  quality_options_clear (&q);
  return status;
}
