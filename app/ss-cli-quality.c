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
 *
 * This file holds the case table, building the cases and the command; the
 * methods run in ss-cli-quality-run.c, the references in
 * ss-cli-quality-references.c, the tables and mosaics in ss-cli-quality-output.c.
 */
#include "ss-cli-quality-private.h"
#include "ss-config.h"

#include <errno.h>
#include <math.h>
#include <string.h>

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

/* ---- the command -------------------------------------------------------------------- */

static CaseSet
case_set_named (const char *name)
{
  return g_str_equal (name, "small")    ? CASES_SMALL
         : g_str_equal (name, "frames") ? CASES_FRAMES
                                        : CASES_FULL;
}

/* --only picks among every case, or among --cases' set when that was given
 * too (only_names_known has refused a name outside it). */
static gboolean
case_selected (const QualityOptions *q, const QualityCase *spec)
{
  if (q->only)
    {
      g_auto (GStrv) names = g_strsplit (q->only, ",", -1);
      return g_strv_contains ((const char *const *) names, spec->name);
    }
  return spec->set == case_set_named (q->cases);
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
      g_ptr_array_add (rows, cli_quality_run_as_user (q, data, solver, backend));
    }
  /* A limit only: the runs stop once their best iterate lies well behind
   * them (track_best). Fixed limits of 500 (512²) and 1000 (2048²) cut the
   * bright star fields short: their best came at 846-1382 iterations. */
  int long_run = 20000;
  if (method_selected (q, "rl-best"))
    g_ptr_array_add (rows, cli_quality_run_best_iteration (q, data, backend, "rl (best, truth)",
                                                           "0", long_run));
  if (method_selected (q, "rl-tv-best"))
    g_ptr_array_add (rows, cli_quality_run_best_iteration (q, data, backend,
                                                           "rl-tv 0.002 (best, truth)", "0.002",
                                                           long_run));
  if (method_selected (q, "wiener-best"))
    g_ptr_array_add (rows, cli_quality_run_best_wiener (q, data, backend));
  if (siril && method_selected (q, "siril"))
    g_ptr_array_add (rows, cli_quality_run_siril (siril, data));
  return rows;
}

/* Where the mosaics go: --mosaics, else beside the markdown, else nowhere. */
static char *
mosaic_dir (const QualityOptions *q)
{
  return q->mosaics ? g_strdup (q->mosaics)
         : q->markdown ? g_path_get_dirname (q->markdown) : NULL;
}

static char *
mosaic_path (const char *dir, const QualityCase *spec)
{
  return g_strdup_printf ("%s/quality-%s.png", dir, spec->name);
}

/* The columns of --trace, one line per scored report (track_best). */
#define TRACE_HEADER "case,method,iteration,psnr,residual,rel_change\n"

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
  g_autofree char *siril = q->no_siril ? NULL : cli_quality_find_siril ();
  /* Siril's row asked for by name and impossible: say so rather than leave
   * the row out of the tables without a word. */
  if (siril == NULL && q->methods != NULL
      && g_strv_contains ((const char *const *) q->methods, "siril"))
    {
      cli_error (NULL, "--methods siril: %s", q->no_siril ? "--no-siril forbids it"
                                                          : "no siril-cli on the PATH");
      return CLI_EXIT_USAGE;
    }
  if (q->trace && !(q->trace_file = fopen (q->trace, "w")))
    {
      cli_error (q->trace, "cannot write: %s", g_strerror (errno));
      return CLI_EXIT_FAILURE;
    }
  if (q->trace_file)
    fputs (TRACE_HEADER, q->trace_file);
  g_autofree char *mosaics = mosaic_dir (q);
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
          || (q->write_cases && !cli_quality_write_case (q->write_cases, &data, &error)))
        {
          case_data_clear (&data);
          return cli_fail (CLI_EXIT_FAILURE, cases[i].name, error);
        }
      gsize n = (gsize) cases[i].size * cases[i].size;
      double bp = ss_psnr_affine (data.blurred->data, data.truth->data, n);
      double bs = ss_ssim_affine (data.blurred->data, data.truth->data, cases[i].size,
                                  cases[i].size);
      GPtrArray *rows = run_methods (q, &data, backend, siril);
      g_autofree char *mosaic = mosaics ? mosaic_path (mosaics, &cases[i]) : NULL;
      if (mosaic && !cli_quality_write_mosaic (mosaic, &data, rows, &error))
        {
          g_ptr_array_unref (rows);
          case_data_clear (&data);
          return cli_fail (CLI_EXIT_FAILURE, mosaic, error);
        }
      if (q->json)
        {
          cli_quality_print_json_row (&data, "blurred", bp, bs, NAN, 0, NULL);
          for (guint r = 0; r < rows->len; r++)
            {
              const MethodRow *row = rows->pdata[r];
              cli_quality_print_json_row (&data, row->method, row->psnr, row->ssim, row->seconds,
                                          row->iterations, row->note);
            }
        }
      else
        cli_quality_print_text_case (&data, bp, bs, rows);
      g_autofree char *link
        = mosaic && q->markdown ? cli_quality_relative_link (q->markdown, mosaic) : NULL;
      cli_quality_append_markdown_case (md, &data, bp, bs, rows, link);
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
      cli_quality_append_markdown_summary (doc, all_rows, names,
                                           (const double *) blurred_psnr->data);
      g_string_append (doc, md->str);
      if (!g_file_set_contents (q->markdown, doc->str, -1, &error))
        return cli_fail (CLI_EXIT_FAILURE, q->markdown, error);
    }
  return CLI_EXIT_OK;
}

/* Are the --only names cases of the table, and of the set SET_NAME when
 * --cases was given (NULL: any set)? */
static gboolean
only_names_known (const char *only, const char *set_name)
{
  if (only == NULL)
    return TRUE;
  g_auto (GStrv) names = g_strsplit (only, ",", -1);
  for (guint i = 0; names[i]; i++)
    {
      gboolean known = FALSE;
      for (gsize c = 0; c < G_N_ELEMENTS (cases) && !known; c++)
        known = g_str_equal (names[i], cases[c].name)
                && (set_name == NULL || cases[c].set == case_set_named (set_name));
      if (!known)
        {
          g_autoptr (GString) list = g_string_new (NULL);
          for (gsize c = 0; c < G_N_ELEMENTS (cases); c++)
            if (set_name == NULL || cases[c].set == case_set_named (set_name))
              g_string_append_printf (list, "%s%s", list->len ? ", " : "", cases[c].name);
          cli_error (NULL, "--only '%s': no such case%s%s (cases: %s)", names[i],
                     set_name ? " in --cases " : "", set_name ? set_name : "", list->str);
          return FALSE;
        }
    }
  return TRUE;
}

/* The references, which --methods names besides the solvers. */
static const char *const reference_methods[] = { "rl-best", "rl-tv-best", "wiener-best", "siril",
                                                 NULL };

/* Are the --methods names rows that quality runs? A misspelt name would
 * otherwise run every case with its input row alone. */
static gboolean
method_names_known (char **methods)
{
  for (guint i = 0; methods && methods[i]; i++)
    {
      const char *name = methods[i];
      gboolean known = g_strv_contains ((const char *const *) reference_methods, name);
      for (guint k = 0; k < ss_solver_count () && !known; k++)
        {
          const SsSolverInfo *solver = ss_solver_nth (k);
          if (!g_str_equal (solver->name, name))
            continue;
          if (solver->caps & SS_SOLVER_NEEDS_REGION)
            {
              cli_error (NULL, "--methods %s: this solver needs a region of interest, not a "
                         "whole case; quality does not run it", name);
              return FALSE;
            }
          known = TRUE;
        }
      if (!known)
        {
          g_autoptr (GString) list = g_string_new (NULL);
          for (guint k = 0; k < ss_solver_count (); k++)
            if (!(ss_solver_nth (k)->caps & SS_SOLVER_NEEDS_REGION))
              g_string_append_printf (list, "%s%s", list->len ? ", " : "",
                                      ss_solver_nth (k)->name);
          g_autofree char *references = g_strjoinv (", ", (char **) reference_methods);
          cli_error (NULL, "--methods '%s': expected a solver (%s) or a reference (%s)", name,
                     list->str, references);
          return FALSE;
        }
    }
  return TRUE;
}

/* Are the --set pairs NAME=VALUE with NAME a solver parameter's option name
 * and VALUE one deblur accepts for it? A misspelt name would otherwise leave
 * every row at its default and the table would silently answer another
 * question; a bad value would fail every row, after the cases were built. */
static gboolean
set_values_valid (const QualityOptions *q)
{
  char **set = q->set;
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
      /* The table's own parsing and range, as deblur's --NAME VALUE. */
      double value;
      g_autoptr (GError) error = NULL;
      if (!(known->allows_auto && g_str_equal (kv[1], "auto"))
          && !ss_param_parse (known, kv[1], &value, &error))
        {
          cli_error (NULL, "--set %s: %s", set[i], error->message);
          return FALSE;
        }
    }
  /* Then what deblur checks across the parameters, for each solver row to
   * run; the PSF is any case's (the checks do not depend on it). */
  for (guint k = 0; set && k < ss_solver_count (); k++)
    {
      const SsSolverInfo *solver = ss_solver_nth (k);
      if ((solver->caps & SS_SOLVER_NEEDS_REGION) || !method_selected (q, solver->name))
        continue;
      if (!cli_quality_options_accepted (q, solver, cases[0].psf))
        {
          g_autofree char *pairs = g_strjoinv (" ", set);
          cli_error (NULL, "--set %s: refused for %s (--methods runs only the solvers named)",
                     pairs, solver->name);
          return FALSE;
        }
    }
  return TRUE;
}

/* Refuses, before any work, to replace a file the run would write, unless
 * --force, with deblur's path checks (cli_check_output_path: exit 2, or 1
 * when its folder cannot be written). A path whose folder does not exist
 * yet is free: the run makes it (--mosaics, --write-cases DIR/CASE). Not
 * cli_check_output: that one also wants an image's suffix, and these are
 * markdown, CSV and PNG files. */
static int
check_one_output (const char *path, gboolean force)
{
  g_autofree char *dir = g_path_get_dirname (path);
  if (!g_file_test (dir, G_FILE_TEST_IS_DIR))
    return -1;
  return cli_check_output_path (path, force, NULL);
}

/* Every file the run would write: --markdown, --trace, each selected case's
 * mosaic and --write-cases files. Returns -1, or the status after the message. */
static int
check_outputs (const QualityOptions *q)
{
  int status = -1;
  if (q->markdown && (status = check_one_output (q->markdown, q->force)) >= 0)
    return status;
  if (q->trace && (status = check_one_output (q->trace, q->force)) >= 0)
    return status;
  g_autofree char *mosaics = mosaic_dir (q);
  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      if (!case_selected (q, &cases[i]))
        continue;
      if (mosaics)
        {
          g_autofree char *mosaic = mosaic_path (mosaics, &cases[i]);
          if ((status = check_one_output (mosaic, q->force)) >= 0)
            return status;
        }
      const char *files[] = { "truth.fits", "blurred.fits", "psf.fits" };
      for (gsize f = 0; q->write_cases && f < G_N_ELEMENTS (files); f++)
        {
          g_autofree char *path = g_build_filename (q->write_cases, cases[i].name, files[f],
                                                    NULL);
          if ((status = check_one_output (path, q->force)) >= 0)
            return status;
        }
    }
  return -1;
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
  g_strfreev (q->rest);
  g_free (q->markdown);
  g_free (q->mosaics);
  g_free (q->write_cases);
  g_free (q->trace);
  if (q->trace_file)
    fclose (q->trace_file);
  g_free (q->backend);
  g_free (q->data_dir);
}

/* The values GOption cannot check: every one is bad usage (exit 2), found
 * before any case is made. Returns -1 when all are valid. */
static int
refuse_bad_values (const QualityOptions *q)
{
  if (q->cases && !g_str_equal (q->cases, "small") && !g_str_equal (q->cases, "full")
      && !g_str_equal (q->cases, "frames"))
    {
      cli_error (NULL, "--cases '%s': expected small, full or frames", q->cases);
      return CLI_EXIT_USAGE;
    }
  if (q->draw < 0 || q->draw > 1000000)
    {
      cli_error (NULL, "--draw %d: expected 0 (the published cases) to 1000000", q->draw);
      return CLI_EXIT_USAGE;
    }
  if (!only_names_known (q->only, q->cases) || !method_names_known (q->methods)
      || !set_values_valid (q))
    return CLI_EXIT_USAGE;
  return -1;
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
    { "force", 0, 0, G_OPTION_ARG_NONE, &q.force,
      "Replace existing files (--markdown, --trace, mosaics, --write-cases)", NULL },
    { "markdown", 0, 0, G_OPTION_ARG_FILENAME, &q.markdown,
      "Write the tables as markdown (QUALITY.md's body) to FILE; mosaics go beside it", "FILE" },
    { "mosaics", 0, 0, G_OPTION_ARG_FILENAME, &q.mosaics,
      "Write a PNG mosaic per case (truth | blurred | each method) into DIR", "DIR" },
    { "write-cases", 0, 0, G_OPTION_ARG_FILENAME, &q.write_cases,
      "Write DIR/CASE/{truth,blurred,psf}.fits for other tools", "DIR" },
    { "trace", 0, 0, G_OPTION_ARG_FILENAME, &q.trace,
      "Write the best-iteration runs' curves to FILE as CSV: case, method, iteration, PSNR, "
      "residual and relative change at every scored report, after a header line naming them",
      "FILE" },
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
    { G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_STRING_ARRAY, &q.rest, NULL, NULL },
    { NULL },
  };
  const CliCommandHelp help = {
    "quality", "",
    "Scores every solver, as 'deblur --alpha auto' runs it, against Richardson-Lucy and\n"
    "Wiener with parameters chosen with the truth, on simulated noisy exposures of\n"
    "the bundled images and of synthetic star and galaxy fields.",
    "PSNR is after the best affine fit to the truth; SSIM uses the 11x11 Gaussian\n"
    "window on data scaled to the truth's range. Plans are FFTW_ESTIMATE unless\n"
    "SHARPSKY_FFTW says otherwise, so that no method pays for planning.",
  };
  int status = cli_parse_options (&help, cli_add_option_table, entries, argc, argv);
  if (status < 0)
    status = cli_refuse_arguments ("quality", q.rest);
  if (status < 0)
    status = refuse_bad_values (&q);
  if (status < 0)
    {
      if (q.cases == NULL)
        q.cases = g_strdup ("full");
      status = check_outputs (&q);
    }
  if (status < 0)
    {
      if (q.data_dir == NULL)
        q.data_dir = default_data_dir ();
      g_setenv ("SHARPSKY_FFTW", "estimate", FALSE);
      status = run_quality (&q);
    }
  quality_options_clear (&q);
  return status;
}
