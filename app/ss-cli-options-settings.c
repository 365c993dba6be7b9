/* ss-cli-options-settings.c: the validation of the options: the raw strings
 * of CliOptions turned into a CliConfig (acquisition and PSF source, sky,
 * solver parameters and the real-image default solver, boundary, reading),
 * and the names of settings for HISTORY cards and summaries. */
#include "ss-cli-common.h"
#include "ss-cli-solve.h"

#include <string.h>

/* ---- settings ---------------------------------------------------------- */

const char *
cli_sky_mode_to_string (SsSkyMode mode)
{
  switch (mode)
    {
    case SS_SKY_NONE: return "none";
    case SS_SKY_MEDIAN: return "median";
    case SS_SKY_CLIPPED_MEDIAN: return "clipped";
    case SS_SKY_VALUE: return "value";
    }
  return "?";
}

const char *
cli_sensing_to_string (SsSensing sensing)
{
  switch (sensing)
    {
    case SS_SENSING_AUTO: return "auto";
    case SS_SENSING_NONE: return "none";
    case SS_SENSING_CIRCULANT: return "circulant";
    }
  return "?";
}

void
cli_config_clear (CliConfig *config)
{
  ss_acquisition_clear (&config->acquisition);
  g_clear_pointer (&config->devices, g_free);
  config->n_devices = 0;
}

static gboolean
parse_sky (const char *text, CliConfig *config, GError **error)
{
  if (g_str_equal (text, "median"))
    config->sky_mode = SS_SKY_MEDIAN;
  else if (g_str_equal (text, "none"))
    config->sky_mode = SS_SKY_NONE;
  else if (g_str_equal (text, "clipped"))
    config->sky_mode = SS_SKY_CLIPPED_MEDIAN;
  else
    {
      g_autoptr (GError) local = NULL;
      if (!cli_parse_double ("--sky", text, &config->sky_value, &local))
        {
          g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT,
                       "--sky '%s': expected median, clipped, none or a finite number", text);
          return FALSE;
        }
      config->sky_mode = SS_SKY_VALUE;
    }
  return TRUE;
}

static gboolean
parse_sensing (const char *text, SsSensing *sensing, GError **error)
{
  if (g_str_equal (text, "auto"))
    *sensing = SS_SENSING_AUTO;
  else if (g_str_equal (text, "none"))
    *sensing = SS_SENSING_NONE;
  else if (g_str_equal (text, "circulant"))
    *sensing = SS_SENSING_CIRCULANT;
  else
    {
      g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT,
                   "--sensing '%s': expected auto, none or circulant", text);
      return FALSE;
    }
  return TRUE;
}

/* Prefixes an engine message with the option it came from, unless it names it. */
static gboolean
option_error (GError **error, const char *option, const char *text, GError *local)
{
  if (strstr (local->message, option) != NULL)
    g_propagate_error (error, local);
  else if (strstr (local->message, text) != NULL)
    {
      g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT, "%s: %s", option, local->message);
      g_error_free (local);
    }
  else
    {
      g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT, "%s '%s': %s", option, text,
                   local->message);
      g_error_free (local);
    }
  return FALSE;
}

/* "X,Y": two finite numbers, the star's column and row (0-based). */
static gboolean
parse_star_position (const char *text, CliConfig *c, GError **error)
{
  g_auto (GStrv) parts = g_strsplit (text, ",", -1);
  if (g_strv_length (parts) != 2
      || !cli_parse_double ("--psf-from-star", g_strstrip (parts[0]), &c->star_x, NULL)
      || !cli_parse_double ("--psf-from-star", g_strstrip (parts[1]), &c->star_y, NULL))
    {
      g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT,
                   "--psf-from-star '%s': expected X,Y (column and row, e.g. 120.5,88)", text);
      return FALSE;
    }
  return TRUE;
}

/* Boundary handling and saturation of real images. */
static gboolean
boundary_from_options (const CliOptions *o, CliConfig *c, GError **error)
{
  c->boundary = SS_BOUNDARY_MIRROR;
  c->boundary_given = o->boundary != NULL;
  c->exclude_border = o->exclude_border;
  if (o->boundary)
    {
      GError *local = NULL;
      if (!ss_boundary_from_string (o->boundary, &c->boundary, &local))
        return option_error (error, "--boundary", o->boundary, local);
    }
  c->saturation_mode = SS_SATURATION_AUTO;
  if (o->saturation == NULL || g_str_equal (o->saturation, "auto"))
    ;
  else if (g_str_equal (o->saturation, "none"))
    c->saturation_mode = SS_SATURATION_NONE;
  else if (cli_parse_double ("--saturation", o->saturation, &c->saturation_value, NULL))
    c->saturation_mode = SS_SATURATION_VALUE;
  else
    {
      g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT,
                   "--saturation '%s': expected auto, none or a finite number", o->saturation);
      return FALSE;
    }
  c->bad_pixels = o->bad_pixels == NULL || g_str_equal (o->bad_pixels, "auto");
  if (o->bad_pixels != NULL && !c->bad_pixels && !g_str_equal (o->bad_pixels, "none"))
    {
      g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT,
                   "--bad-pixels '%s': expected auto or none", o->bad_pixels);
      return FALSE;
    }
  if (c->exclude_border && c->boundary == SS_BOUNDARY_PERIODIC)
    {
      g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT,
                   "--exclude-border needs a padded boundary (mirror or taper), not periodic");
      return FALSE;
    }
  return TRUE;
}

static gboolean
acquisition_from_options (const CliOptions *o, CliGroups groups, double default_ratio,
                          const char *default_psf, CliConfig *c, GError **error)
{
  GError *local = NULL;
  SsAcquisition *acq = &c->acquisition;

  const char *psf = o->psf ? o->psf : default_psf;
  c->psf_given = o->psf != NULL || o->psf_from_star != NULL;
  c->psf_source = CLI_PSF_SPEC;
  c->psf_model = SS_PSF_MODEL_MOFFAT;
  if (o->psf_model && !ss_psf_model_from_string (o->psf_model, &c->psf_model, &local))
    return option_error (error, "--psf-model", o->psf_model, local);
  if (o->psf_from_star != NULL)
    {
      if (o->psf != NULL)
        {
          g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT,
                       "--psf %s and --psf-from-star %s: give one of them", o->psf,
                       o->psf_from_star);
          return FALSE;
        }
      if (!parse_star_position (o->psf_from_star, c, error))
        return FALSE;
      c->psf_source = CLI_PSF_STAR;
      psf = NULL;
    }
  else if (psf != NULL && g_str_equal (psf, "auto"))
    {
      if (!(groups & CLI_GROUP_TRUTH))
        {
          g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT,
                       "--psf auto: only deblur measures the PSF from stars");
          return FALSE;
        }
      c->psf_source = CLI_PSF_AUTO;
      psf = NULL;
    }
  if (psf != NULL)
    {
      ss_psf_spec_clear (&acq->psf);
      if (!ss_psf_spec_parse (psf, &acq->psf, &local))
        return option_error (error, "--psf", psf, local);
    }
  if (!(groups & CLI_GROUP_ACQUISITION))
    return TRUE;

  acq->ratio = default_ratio;
  if (o->ratio && !cli_parse_double ("--ratio", o->ratio, &acq->ratio, error))
    return FALSE;
  if (!(acq->ratio > 0.0 && acq->ratio <= 1.0))
    {
      g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT,
                   "--ratio %s: must be in (0, 1]", o->ratio ? o->ratio : "?");
      return FALSE;
    }
  acq->noise = 0.0;
  if (o->noise && !cli_parse_double ("--noise", o->noise, &acq->noise, error))
    return FALSE;
  if (!(acq->noise >= 0.0 && acq->noise <= SS_NOISE_MAX))
    {
      g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT,
                   "--noise %s: must be >= 0 and at most 1e30 (scaled units: the image's range "
                   "is about 1; float32 data overflow past it)", o->noise);
      return FALSE;
    }
  gint64 seed = 1;
  if (o->seed && !cli_parse_int ("--seed", o->seed, 0, G_MAXUINT32, &seed, error))
    return FALSE;
  acq->seed = (guint32) seed;
  acq->sensing = SS_SENSING_AUTO;
  if (o->sensing && !parse_sensing (o->sensing, &acq->sensing, error))
    return FALSE;

  if (!ss_acquisition_validate (acq, &local))
    {
      g_propagate_error (error, local);
      return FALSE;
    }
  return TRUE;
}

/* One solver parameter from its option, checked against the table's range. */
static gboolean
param_from_option (const CliOptions *o, SsParamId id, CliConfig *c, GError **error)
{
  const SsParamInfo *info = ss_param_info (id);
  SsSolveParams *p = &c->params;
  if (info->type == SS_PARAM_BOOL)
    {
      if (o->flag[id])
        ss_param_set (p, info, 1);
      return TRUE;
    }
  const char *text = o->param[id];
  if (text == NULL)
    return TRUE;
  /* auto is resolved once the operator and the noise are known. */
  if (info->allows_auto && g_str_equal (text, "auto"))
    {
      c->alpha_auto = TRUE;
      return TRUE;
    }
  double value;
  if (!ss_param_parse (info, text, &value, error))
    return FALSE;
  ss_param_set (p, info, value);
  return TRUE;
}

/* Whether solver option ID was given a value; "auto" (--alpha auto) is
 * the recipe for every solver, a solver without α included. */
static gboolean
option_valued (const CliOptions *o, SsParamId id)
{
  return o->flag[id] || (o->param[id] != NULL && !g_str_equal (o->param[id], "auto"));
}

static gboolean
options_all_used_by (const CliOptions *o, const SsSolverInfo *info)
{
  for (int id = 0; id < SS_N_PARAMS; id++)
    if (option_valued (o, (SsParamId) id) && !ss_solver_uses (info, (SsParamId) id))
      return FALSE;
  return TRUE;
}

void
cli_note_unused_options (const CliOptions *o, const SsSolveParams *params)
{
  const SsSolverInfo *info = ss_solver_info (params->kind);
  for (int id = 0; id < SS_N_PARAMS; id++)
    if (option_valued (o, (SsParamId) id) && !ss_solver_uses (info, (SsParamId) id))
      cli_note (o, "warning: --%s has no effect on %s (its own rules set it; 'deblur --help' "
                "says which solvers take it)", ss_param_info ((SsParamId) id)->name, info->name);
}

/* The real-image default, unless options were given that it takes no part
 * of: `auto`'s candidates run with their own settings, so `deblur --iters
 * 50` is the first candidate that takes every option given (Richardson–Lucy,
 * 50 iterations), not `auto` with the option dropped. */
static SsSolverKind
real_data_solver (const CliOptions *o)
{
  const SsSolverInfo *info = ss_solver_info (ss_solver_default_for_real_data ());
  if (options_all_used_by (o, info))
    return info->kind;
  for (int c = 0; c < info->n_candidates; c++)
    if (options_all_used_by (o, ss_solver_info (info->candidates[c])))
      return info->candidates[c];
  return info->kind;
}

/* The solver settings: the solver's defaults, then what was given. */
static gboolean
params_from_options (const CliOptions *o, CliConfig *c, gboolean real_data, GError **error)
{
  SsSolveParams *p = &c->params;
  GError *local = NULL;

  if (o->solver && !ss_solver_kind_from_string (o->solver, &p->kind, &local))
    return option_error (error, "--solver", o->solver, local);
  /* Real images default to the solver measured best on real-like data;
   * run, simulate and deblur of their files keep the seed's. */
  if (o->solver == NULL && real_data)
    p->kind = real_data_solver (o);
  ss_solve_params_set_defaults (p, p->kind);
  for (int id = 0; id < SS_N_PARAMS; id++)
    if (!param_from_option (o, (SsParamId) id, c, error))
      return FALSE;

  if (o->report_every)
    {
      gint64 value;
      if (!cli_parse_int ("--report-every", o->report_every, 1, 1000000000, &value, error))
        return FALSE;
      p->report_every = (int) value;
    }
  if (o->flag[SS_PARAM_NONNEG] && o->allow_negative)
    {
      g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT,
                   "--nonneg and --allow-negative contradict each other");
      return FALSE;
    }
  c->nonneg_given = o->flag[SS_PARAM_NONNEG] || o->allow_negative;

  if (o->backend && !ss_backend_kind_from_string (o->backend, &c->backend, &local))
    return option_error (error, "--backend", o->backend, local);
  if (o->devices && !ss_backend_parse_devices (o->devices, &c->devices, &c->n_devices, &local))
    return option_error (error, "--devices", o->devices, local);

  /* With --alpha auto, the solver's rules are checked again once alpha is known. */
  SsSolveParams check = *p;
  if (c->alpha_auto && !(check.alpha > 0))
    check.alpha = ss_param_info (SS_PARAM_ALPHA)->default_value;
  if (!ss_solve_params_validate (&check, &local))
    {
      g_propagate_error (error, local);
      return FALSE;
    }
  return TRUE;
}

static gboolean
read_options_from_options (const CliOptions *o, CliConfig *c, GError **error)
{
  c->read = SS_FITS_READ_OPTIONS_DEFAULT;
  /* An empty name would quietly mean the default HDU. */
  if (o->hdu != NULL && o->hdu[0] == '\0')
    {
      g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT,
                   "--hdu '': give an HDU number (0 = primary) or an EXTNAME");
      return FALSE;
    }
  c->read.hdu = o->hdu;
  c->plane = 0;
  c->plane_given = o->plane != NULL;
  if (o->plane)
    {
      gint64 plane;
      if (!cli_parse_int ("--plane", o->plane, 0, G_MAXINT - 1, &plane, error))
        return FALSE;
      c->plane = (int) plane;
      c->read.plane = c->plane;
    }
  c->stretch = SS_STRETCH_LINEAR;
  if (o->stretch)
    {
      GError *local = NULL;
      if (!ss_stretch_from_string (o->stretch, &c->stretch, &local))
        return option_error (error, "--stretch", o->stretch, local);
      /* A stretch maps values to a PNG's grey levels; a FITS output keeps
       * the values, so the option would be ignored without a word. */
      if (!ss_output_name_is_png (o->output))
        {
          g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT,
                       "--stretch %s: a stretch applies to a PNG output (-o NAME.png) only; "
                       "FITS keeps the values", o->stretch);
          return FALSE;
        }
    }
  return TRUE;
}

/* A sampling ratio under 1 leaves pixels out, which a solver without masks
 * (direct-fft) cannot take: a conflict of the command line, said before any
 * file is read, rather than a refusal that names the input image. */
static gboolean
check_solver_takes_ratio (const CliOptions *o, const CliConfig *c, GError **error)
{
  const SsSolverInfo *info = ss_solver_info (c->params.kind);
  if (c->acquisition.ratio >= 1.0 || info == NULL || (info->caps & SS_SOLVER_MASKS))
    return TRUE;
  g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT,
               "--solver %s needs every pixel observed, and --ratio is %g%s: give --ratio 1, or "
               "a solver that takes a mask (cpadmm, fista, direct)", info->name,
               c->acquisition.ratio, o->ratio ? "" : " (the default here)");
  return FALSE;
}

int
cli_config_from_options (const CliOptions *options, CliGroups groups, double default_ratio,
                         const char *default_psf, CliConfig *config)
{
  g_autoptr (GError) error = NULL;

  memset (config, 0, sizeof *config);
  ss_acquisition_init (&config->acquisition);
  ss_solve_params_init (&config->params);
  config->backend = SS_BACKEND_AUTO;
  config->sky_mode = SS_SKY_MEDIAN;
  config->sky_given = options->sky != NULL;

  if (!read_options_from_options (options, config, &error))
    return cli_fail (CLI_EXIT_USAGE, NULL, error);
  if ((groups & (CLI_GROUP_ACQUISITION | CLI_GROUP_TRUTH))
      && !acquisition_from_options (options, groups, default_ratio, default_psf, config, &error))
    return cli_fail (CLI_EXIT_USAGE, NULL, error);
  if ((groups & CLI_GROUP_SKY) && options->sky && !parse_sky (options->sky, config, &error))
    return cli_fail (CLI_EXIT_USAGE, NULL, error);
  if ((groups & CLI_GROUP_SOLVER) && !params_from_options (options, config, FALSE, &error))
    return cli_fail (CLI_EXIT_USAGE, NULL, error);
  config->real_params = config->params;
  if ((groups & (CLI_GROUP_SOLVER | CLI_GROUP_TRUTH)) == (CLI_GROUP_SOLVER | CLI_GROUP_TRUTH))
    {
      /* The same options on deblur's default solver for real images; the
       * copy keeps config's own flags as the first pass set them. */
      CliConfig real = *config;
      /* The pass parses --devices again: into a list of its own, freed
       * here, not over config's. */
      real.devices = NULL;
      real.n_devices = 0;
      gboolean ok = params_from_options (options, &real, TRUE, &error);
      g_free (real.devices);
      if (!ok)
        return cli_fail (CLI_EXIT_USAGE, NULL, error);
      config->real_params = real.params;
    }
  if ((groups & CLI_GROUP_TRUTH) && !boundary_from_options (options, config, &error))
    return cli_fail (CLI_EXIT_USAGE, NULL, error);
  if ((groups & CLI_GROUP_ACQUISITION) && (groups & CLI_GROUP_SOLVER)
      && !check_solver_takes_ratio (options, config, &error))
    return cli_fail (CLI_EXIT_USAGE, NULL, error);
  return -1;
}
