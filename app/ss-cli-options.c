/* ss-cli-options.c: option tables, value parsing, validation and messages
 * shared by the sharpsky-cli subcommands. */
#include "ss-cli-common.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>

/* ---- messages ---------------------------------------------------------- */

/* Messages must fit on one line: a multi-line engine message is joined. */
static char *
one_line (const char *text)
{
  g_autofree char *copy = g_strdup (text ? text : "unknown error");
  g_strstrip (copy);
  GString *out = g_string_new (NULL);
  for (const char *p = copy; *p != '\0'; p++)
    {
      if (*p == '\n' || *p == '\r')
        {
          while (p[1] == '\n' || p[1] == '\r' || p[1] == ' ')
            p++;
          g_string_append (out, "; ");
        }
      else
        g_string_append_c (out, *p);
    }
  return g_string_free (out, FALSE);
}

static void
print_message (const char *file, const char *message)
{
  g_autofree char *line = one_line (message);
  if (file != NULL && strstr (line, file) == NULL)
    fprintf (stderr, CLI_PROGRAM ": %s: %s\n", file, line);
  else
    fprintf (stderr, CLI_PROGRAM ": %s\n", line);
  fflush (stderr);
}

void
cli_error (const char *file, const char *format, ...)
{
  va_list args;
  va_start (args, format);
  g_autofree char *message = g_strdup_vprintf (format, args);
  va_end (args);
  print_message (file, message);
}

int
cli_fail (int status, const char *file, const GError *error)
{
  print_message (file, error ? error->message : NULL);
  return status;
}

void
cli_note (const CliOptions *options, const char *format, ...)
{
  if (options != NULL && options->quiet)
    return;
  va_list args;
  va_start (args, format);
  g_autofree char *message = g_strdup_vprintf (format, args);
  va_end (args);
  g_autofree char *line = one_line (message);
  fprintf (stderr, CLI_PROGRAM ": %s\n", line);
  fflush (stderr);
}

/* ---- number parsing ---------------------------------------------------- */

gboolean
cli_parse_double (const char *option, const char *text, double *value, GError **error)
{
  char *end = NULL;
  errno = 0;
  double parsed = g_ascii_strtod (text, &end);
  if (text[0] == '\0' || end == text || *end != '\0')
    {
      g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT,
                   "%s '%s': not a number", option, text);
      return FALSE;
    }
  if (!isfinite (parsed) || errno == ERANGE)
    {
      g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT,
                   "%s '%s': must be a finite number", option, text);
      return FALSE;
    }
  *value = parsed;
  return TRUE;
}

gboolean
cli_parse_int (const char *option, const char *text, gint64 min, gint64 max,
               gint64 *value, GError **error)
{
  g_autoptr (GError) local = NULL;
  if (!g_ascii_string_to_signed (text, 10, min, max, value, &local))
    {
      if (g_error_matches (local, G_NUMBER_PARSER_ERROR, G_NUMBER_PARSER_ERROR_OUT_OF_BOUNDS))
        g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT,
                     "%s %s: must be between %" G_GINT64_FORMAT " and %" G_GINT64_FORMAT,
                     option, text, min, max);
      else
        g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT,
                     "%s '%s': not an integer", option, text);
      return FALSE;
    }
  return TRUE;
}

/* ---- option tables ----------------------------------------------------- */

void
cli_options_clear (CliOptions *o)
{
  char **strings[] = {
    &o->output, &o->truth, &o->hdu, &o->plane, &o->stretch, &o->psf, &o->ratio, &o->sensing,
    &o->noise, &o->seed, &o->sky, &o->solver, &o->report_every, &o->backend, &o->devices,
    &o->output_dir, &o->batch, &o->size,
    &o->width, &o->height, &o->boundary, &o->margin, &o->psf_from_star, &o->psf_model,
  };
  for (gsize i = 0; i < G_N_ELEMENTS (strings); i++)
    g_clear_pointer (strings[i], g_free);
  for (int id = 0; id < SS_N_PARAMS; id++)
    g_clear_pointer (&o->param[id], g_free);
  g_clear_pointer (&o->positional, g_strfreev);
}

#define STRING_OPTION(long_name, short_name, field, text, arg) \
  { long_name, short_name, 0, G_OPTION_ARG_STRING, &o->field, text, arg }
#define FLAG_OPTION(long_name, field, text) \
  { long_name, 0, 0, G_OPTION_ARG_NONE, &o->field, text, NULL }
#define END_OPTIONS { NULL, 0, 0, 0, NULL, NULL, NULL }

/* Which solvers read a parameter, for its help: "(cpadmm)". */
static char *
used_by (SsParamId id)
{
  GString *names = g_string_new (NULL);
  guint users = 0;
  for (guint i = 0; i < ss_solver_count (); i++)
    if (ss_solver_uses (ss_solver_nth (i), id))
      {
        g_string_append_printf (names, "%s%s", users++ ? ", " : "", ss_solver_nth (i)->name);
      }
  if (users == ss_solver_count ())
    g_string_assign (names, "all solvers");
  return g_string_free (names, FALSE);
}

/* The solvers whose own default for parameter ID differs from the table's:
 * "; rl 1000, admm 1000", or "". */
static char *
own_defaults (SsParamId id)
{
  const SsParamInfo *info = ss_param_info (id);
  GString *text = g_string_new (NULL);
  for (guint i = 0; i < ss_solver_count (); i++)
    {
      const SsSolverInfo *solver = ss_solver_nth (i);
      for (int d = 0; d < solver->n_defaults; d++)
        if (solver->defaults[d].id == id && solver->defaults[d].value != info->default_value)
          {
            g_autofree char *value = ss_param_format (info, solver->defaults[d].value);
            g_string_append_printf (text, "%s%s %s", text->len ? ", " : "; ", solver->name,
                                    value);
          }
    }
  return g_string_free (text, FALSE);
}

/* One option per solver parameter, from the solver table. GOption keeps
 * pointers to the names and help, so the texts live as long as the process
 * (a command line is parsed once). */
static void
add_parameter_options (GOptionContext *context, CliOptions *o)
{
  GOptionEntry *entries = g_new0 (GOptionEntry, SS_N_PARAMS + 1);
  for (int id = 0; id < SS_N_PARAMS; id++)
    {
      const SsParamInfo *info = ss_param_info ((SsParamId) id);
      g_autofree char *users = used_by ((SsParamId) id);
      g_autofree char *fallback = ss_param_format (info, info->default_value);
      g_autofree char *own = own_defaults ((SsParamId) id);
      GOptionEntry *e = &entries[id];
      e->long_name = info->name;
      if (info->type == SS_PARAM_BOOL)
        {
          e->arg = G_OPTION_ARG_NONE;
          e->arg_data = &o->flag[id];
          e->description = g_strdup_printf ("%s (%s)", info->help, users);
        }
      else
        {
          e->arg = G_OPTION_ARG_STRING;
          e->arg_data = &o->param[id];
          e->description = g_strdup_printf ("%s%s (%s; default %s%s)", info->help,
                                            info->allows_auto ? ", or auto (from the noise)" : "",
                                            users, fallback, own);
          e->arg_description = info->type == SS_PARAM_CHOICE ? "NAME" : "VALUE";
        }
    }
  g_option_context_add_main_entries (context, entries, NULL);
}

static void
add_groups (GOptionContext *context, CliGroups groups, CliOptions *o)
{
  if (groups & CLI_GROUP_OUTPUT)
    {
      const GOptionEntry entries[] = {
        STRING_OPTION ("output", 'o', output,
                       "Write the result to FILE (FITS float32; a name ending in .png writes "
                       "a stretched PNG)", "FILE"),
        FLAG_OPTION ("force", force, "Replace FILE if it exists (never the input)"),
        STRING_OPTION ("stretch", 0, stretch,
                       "PNG output stretch: linear, log, sqrt or asinh (default linear)", "NAME"),
        END_OPTIONS,
      };
      g_option_context_add_main_entries (context, entries, NULL);
    }
  if (groups & CLI_GROUP_MANY)
    {
      const GOptionEntry entries[] = {
        STRING_OPTION ("output-dir", 0, output_dir, "Deblur every input into DIR, each output "
                       "named from its input (instead of -o, which takes one input)", "DIR"),
        END_OPTIONS,
      };
      g_option_context_add_main_entries (context, entries, NULL);
    }
  if (groups & CLI_GROUP_INPUT)
    {
      const GOptionEntry entries[] = {
        STRING_OPTION ("hdu", 0, hdu, "FITS HDU to read: a number (0 = primary) or an EXTNAME "
                       "(default: the first holding an image)", "HDU"),
        STRING_OPTION ("plane", 0, plane, "Plane of a cube or colour image to use, from 0 "
                       "(default: deblur processes every plane in turn, the others use 0)", "N"),
        END_OPTIONS,
      };
      g_option_context_add_main_entries (context, entries, NULL);
    }
  if (groups & CLI_GROUP_TRUTH)
    {
      const GOptionEntry entries[] = {
        STRING_OPTION ("truth", 0, truth, "Report MSE and PSNR against this image", "FILE"),
        STRING_OPTION ("psf", 0, psf, "Blur model: box:L, box2d:L, gaussian:FWHM, "
                       "moffat:FWHM,BETA, file:PATH, none, or auto (fitted to the brightest "
                       "isolated unsaturated stars); required for a real image unless "
                       "--psf-from-star is given; must agree with a recorded acquisition",
                       "SPEC"),
        STRING_OPTION ("psf-from-star", 0, psf_from_star, "Fit the PSF to the star nearest "
                       "column X, row Y (0-based; row 0 is the first row of the file)", "X,Y"),
        STRING_OPTION ("psf-model", 0, psf_model, "Profile fitted to stars: gaussian or moffat "
                       "(default moffat)", "NAME"),
        STRING_OPTION ("boundary", 0, boundary, "Real images: periodic, mirror or taper padding "
                       "to an FFT-friendly size, cropped back after solving (default mirror)",
                       "MODE"),
        FLAG_OPTION ("exclude-border", exclude_border, "Real images: leave the padded border "
                     "out of the data term (linear instead of reflexive boundary)"),
        FLAG_OPTION ("allow-negative", allow_negative, "Real images: no x >= 0 constraint "
                     "(non-negativity is the default there)"),
        END_OPTIONS,
      };
      g_option_context_add_main_entries (context, entries, NULL);
    }
  if (groups & CLI_GROUP_ACQUISITION)
    {
      const GOptionEntry entries[] = {
        STRING_OPTION ("psf", 0, psf, "Blur model: box:L (seed 000's blur order L), box2d:L, "
                       "gaussian:FWHM, moffat:FWHM,BETA, file:PATH or none (default box:5)",
                       "SPEC"),
        STRING_OPTION ("ratio", 0, ratio, "Fraction of pixels observed, in (0, 1]", "R"),
        STRING_OPTION ("sensing", 0, sensing, "auto (circulant when ratio < 1), none or circulant "
                       "(default auto)", "MODE"),
        STRING_OPTION ("noise", 0, noise, "Gaussian noise sigma in scaled units (default 0)", "S"),
        STRING_OPTION ("seed", 0, seed, "Random seed of sensing, sampling and noise (default 1)",
                       "N"),
        END_OPTIONS,
      };
      g_option_context_add_main_entries (context, entries, NULL);
    }
  if (groups & CLI_GROUP_SKY)
    {
      const GOptionEntry entries[] = {
        STRING_OPTION ("sky", 0, sky, "Sky level to subtract: median, clipped (3-sigma clipped "
                       "median), none or a value in input units (default median)", "MODE"),
        END_OPTIONS,
      };
      g_option_context_add_main_entries (context, entries, NULL);
    }
  if (groups & CLI_GROUP_SOLVER)
    {
      /* GOption keeps the pointer: interned, it lives as long as the process. */
      g_autofree char *names = ss_solver_list_names ();
      const SsSolverInfo *fallback = ss_solver_info ((groups & CLI_GROUP_TRUTH)
                                                     ? ss_solver_default_for_real_data ()
                                                     : SS_SOLVER_CPADMM);
      g_autofree char *text = g_strdup_printf ("%s (default %s)", names, fallback->name);
      const char *solver_help = g_intern_string (text);
      const GOptionEntry entries[] = {
        STRING_OPTION ("solver", 0, solver, solver_help, "NAME"),
        STRING_OPTION ("report-every", 0, report_every, "Report every N iterations (default 10)",
                       "N"),
        STRING_OPTION ("backend", 0, backend, "auto, cpu or cuda (default auto)", "NAME"),
        STRING_OPTION ("devices", 0, devices, "CUDA devices: all or numbers such as 0,1 as "
                       "'info' lists them (default 0; a solve uses the first)", "LIST"),
        END_OPTIONS,
      };
      g_option_context_add_main_entries (context, entries, NULL);
      add_parameter_options (context, o);
    }
  if (groups & CLI_GROUP_BENCH)
    {
      const GOptionEntry entries[] = {
        STRING_OPTION ("backend", 0, backend, "auto, cpu or cuda (default auto)", "NAME"),
        STRING_OPTION ("solver", 0, solver, "cpadmm, fista, ista, direct, direct-fft, "
                       "admm or rl (rl on the GPU only; default cpadmm)", "NAME"),
        STRING_OPTION ("size", 0, size, "Square image side (default 1024; 64 for direct)", "N"),
        STRING_OPTION ("width", 0, width, "Image width (overrides --size)", "W"),
        STRING_OPTION ("height", 0, height, "Image height (overrides --size)", "H"),
        STRING_OPTION ("iters", 0, param[SS_PARAM_ITERATIONS],
                       "Iterations to time (default 50; 1 for direct)", "N"),
        STRING_OPTION ("seed", 0, seed, "Seed of the random problem (default 1)", "N"),
        STRING_OPTION ("direct-method", 0, param[SS_PARAM_DIRECT_METHOD],
                       "Dense direct: solve or inverse (default inverse, to time GETS)", "M"),
        STRING_OPTION ("prior", 0, param[SS_PARAM_PRIOR],
                       "admm: tv, starlet or tv+starlet (default tv)", "NAME"),
        STRING_OPTION ("boundary", 0, boundary, "Pad the size as deblur pads a real image: "
                       "periodic (default, no padding), mirror or taper", "MODE"),
        STRING_OPTION ("margin", 0, margin, "Padding margin in pixels (default: the reach of "
                       "the bench's PSF)", "N"),
        STRING_OPTION ("batch", 0, batch, "Time N CPADMM frames of one operator solved as one "
                       "batch against N separate solves (and all --devices against the first)",
                       "N"),
        STRING_OPTION ("devices", 0, devices, "CUDA devices: all or numbers such as 0,1 "
                       "(default 0); a batch is spread over them", "LIST"),
        FLAG_OPTION ("whole", whole, "Time the whole deblur path on a synthetic uint16 frame "
                     "of --width x --height, file to file"),
        END_OPTIONS,
      };
      g_option_context_add_main_entries (context, entries, NULL);
    }
  if (groups & CLI_GROUP_PRINT)
    {
      const GOptionEntry entries[] = {
        FLAG_OPTION ("json", json, "Print JSON objects (one per line) instead of text"),
        FLAG_OPTION ("quiet", quiet, "No progress lines or notes"),
        END_OPTIONS,
      };
      g_option_context_add_main_entries (context, entries, NULL);
    }
  const GOptionEntry remaining[] = {
    { G_OPTION_REMAINING, 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &o->positional, NULL, NULL },
    END_OPTIONS,
  };
  g_option_context_add_main_entries (context, remaining, NULL);
}

gboolean
cli_option_context_parse (GOptionContext *context, int argc, char **argv, GError **error)
{
  /* GOption edits the vector it is given; parse a copy so ARGV stays whole. */
  g_auto (GStrv) args = g_new0 (char *, argc + 1);
  for (int i = 0; i < argc; i++)
    args[i] = g_strdup_printf (i == 0 ? CLI_PROGRAM " %s" : "%s", argv[i]);
  g_autofree char **view = g_memdup2 (args, sizeof (char *) * (argc + 1));
  int count = argc;
  char **vector = view;
  return g_option_context_parse (context, &count, &vector, error);
}

int
cli_parse_command_line (const char *command, const char *parameters, const char *summary,
                        const char *description, CliGroups groups,
                        int argc, char **argv, CliOptions *options)
{
  /* GOption's usage line starts with the program name: make it name the command. */
  g_autofree char *program = g_strdup_printf (CLI_PROGRAM " %s", command);
  g_set_prgname (program);
  GOptionContext *context = g_option_context_new (parameters);
  g_option_context_set_summary (context, summary);
  if (description != NULL)
    g_option_context_set_description (context, description);
  add_groups (context, groups, options);

  g_autoptr (GError) error = NULL;
  gboolean ok = cli_option_context_parse (context, argc, argv, &error);
  g_option_context_free (context);
  if (!ok)
    {
      cli_error (NULL, "%s: %s (see '" CLI_PROGRAM " %s --help')", command, error->message,
                 command);
      return CLI_EXIT_USAGE;
    }
  return -1;
}

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

/* Boundary handling of real images. */
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
  if (acq->noise < 0.0)
    {
      g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT,
                   "--noise %s: must be >= 0", o->noise);
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
    }
  return TRUE;
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
      if (!params_from_options (options, &real, TRUE, &error))
        return cli_fail (CLI_EXIT_USAGE, NULL, error);
      config->real_params = real.params;
    }
  if ((groups & CLI_GROUP_TRUTH) && !boundary_from_options (options, config, &error))
    return cli_fail (CLI_EXIT_USAGE, NULL, error);
  return -1;
}

/* ---- files ------------------------------------------------------------- */

static gboolean
same_file (const char *a, const char *b)
{
  struct stat sa, sb;
  if (stat (a, &sa) != 0 || stat (b, &sb) != 0)
    return FALSE;
  return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

int
cli_check_output (const char *output, gboolean force, const char *const *inputs)
{
  if (output == NULL || output[0] == '\0')
    {
      cli_error (NULL, "an output file is required (-o FILE)");
      return CLI_EXIT_USAGE;
    }
  g_autoptr (GError) error = NULL;
  if (ss_output_check (output, force, inputs, &error))
    return -1;

  /* Refusals the user fixes on the command line are usage errors (2);
   * a directory that cannot be written is a failed I/O (1). */
  gboolean is_input = FALSE;
  for (gsize i = 0; inputs != NULL && inputs[i] != NULL; i++)
    is_input = is_input || same_file (output, inputs[i]) || g_str_equal (output, inputs[i]);
  gboolean exists = g_file_test (output, G_FILE_TEST_EXISTS);
  int status = is_input || (exists && !force) ? CLI_EXIT_USAGE : CLI_EXIT_FAILURE;
  return cli_fail (status, output, error);
}

SsBackend *
cli_backend_new (const CliConfig *config, const CliOptions *options)
{
  g_autoptr (GError) error = NULL;
  SsBackend *backend = ss_backend_new_with_devices (config->backend, config->devices,
                                                    config->n_devices, &error);
  if (backend == NULL)
    cli_error (NULL, "--backend %s%s%s: %s", options->backend ? options->backend : "auto",
               options->devices ? " --devices " : "", options->devices ? options->devices : "",
               error->message);
  return backend;
}

gsize
cli_count_finite (const float *data, gsize n)
{
  gsize count = 0;
  for (gsize i = 0; i < n; i++)
    count += isfinite (data[i]) ? 1 : 0;
  return count;
}

int
cli_load_image (const char *path, const CliConfig *config, const CliOptions *options,
                gboolean keep_planes, SsImage **image)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (SsImage) loaded = ss_image_load (path, &config->read, &error);
  if (loaded == NULL)
    return cli_fail (CLI_EXIT_FAILURE, path, error);

  if (loaded->planes > 1 && !keep_planes)
    {
      cli_note (options, "%s: the image has %d planes; using plane 0 (--plane to choose)",
                path, loaded->planes);
      SsImage *plane = ss_image_extract_plane (loaded, 0, &error);
      if (plane == NULL)
        return cli_fail (CLI_EXIT_FAILURE, path, error);
      g_clear_pointer (&loaded, ss_image_free);
      loaded = plane;
    }

  gsize n = ss_image_plane_size (loaded);
  for (int p = 0; p < loaded->planes; p++)
    {
      float *data = ss_image_plane (loaded, p);
      if (cli_count_finite (data, n) > 0)
        continue;
      if (loaded->planes > 1)
        cli_error (path, "plane %d has no finite pixels (every pixel is NaN, blank or "
                   "infinite)", p);
      else
        cli_error (path, "no finite pixels (every pixel is NaN, blank or infinite)");
      return CLI_EXIT_FAILURE;
    }
  /* Infinities cannot be scaled or solved; they are treated like blanks. */
  gsize infinite = 0, total = n * (gsize) loaded->planes;
  for (gsize i = 0; i < total; i++)
    if (isinf (loaded->data[i]))
      {
        loaded->data[i] = NAN;
        infinite++;
      }
  if (infinite > 0)
    cli_note (options, "%s: %" G_GSIZE_FORMAT " infinite pixels treated as blank", path,
              infinite);

  *image = g_steal_pointer (&loaded);
  return -1;
}
