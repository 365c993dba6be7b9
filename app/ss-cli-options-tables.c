/* ss-cli-options-tables.c: the GOption tables of the sharpsky-cli
 * subcommands (a group of options per CliGroups flag, an option per solver
 * parameter with its help from the solver table), with which
 * cli_parse_command_line parses a command line into CliOptions. */
#include "ss-cli-common.h"

/* ---- option tables ----------------------------------------------------- */

void
cli_options_clear (CliOptions *o)
{
  char **strings[] = {
    &o->output, &o->truth, &o->hdu, &o->plane, &o->stretch, &o->psf, &o->ratio, &o->sensing,
    &o->noise, &o->seed, &o->sky, &o->solver, &o->report_every, &o->backend, &o->devices,
    &o->output_dir, &o->batch, &o->size,
    &o->width, &o->height, &o->boundary, &o->margin, &o->psf_from_star, &o->psf_model,
    &o->saturation, &o->bad_pixels,
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
      /* A measurement's acquisition lives in its FITS header: no PNG there. */
      gboolean png = (groups & CLI_GROUP_PNG) != 0;
      GOptionEntry entries[] = {
        STRING_OPTION ("output", 'o', output,
                       png ? "Write the result to FILE (.fits/.fit/.fts: FITS float32, + .gz "
                             "gzipped; .png: a stretched PNG)"
                           : "Write the result to FILE (.fits/.fit/.fts: FITS float32, + .gz "
                             "gzipped)", "FILE"),
        FLAG_OPTION ("force", force, "Replace FILE if it exists (never the input)"),
        STRING_OPTION ("stretch", 0, stretch,
                       "PNG output stretch: linear, log, sqrt or asinh (default linear)", "NAME"),
        END_OPTIONS,
      };
      if (!png)
        entries[2] = entries[3];   /* no --stretch */
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
                       "moffat:FWHM,BETA (FWHM 0.1-10000 px, BETA in (1, 100]), file:PATH, "
                       "none, or auto (fitted to the brightest isolated unsaturated stars); "
                       "required for a real image unless "
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
        STRING_OPTION ("saturation", 0, saturation, "Real images: pixels at or above this "
                       "level (input units) are clipped, left out of the data term and filled "
                       "in the result; auto takes the header's SATURATE or SATLEVEL, else a flat "
                       "top at the image's maximum; none keeps every pixel (default auto)",
                       "LEVEL"),
        STRING_OPTION ("bad-pixels", 0, bad_pixels, "Real images: auto leaves out of the data "
                       "term the pixels no blurred sky can give, dead ones far below the sky and "
                       "their neighbours (with x >= 0) and hot ones sharper than the PSF (hot "
                       "pixels, cosmic rays), and fills them in the result; none keeps them "
                       "(default auto)", "MODE"),
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
        STRING_OPTION ("solver", 0, solver, cli_bench_solver_help (), "NAME"),
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
        STRING_OPTION ("accel", 0, param[SS_PARAM_RL_ACCEL],
                       "rl: the extrapolation's cap, 0 to 0.9 (default 0, plain RL)", "A"),
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

/* add_groups as a CliAddOptions. */
typedef struct {
  CliGroups groups;
  CliOptions *options;
} GroupsToAdd;

static void
add_groups_to (GOptionContext *context, gpointer data)
{
  const GroupsToAdd *add = data;
  add_groups (context, add->groups, add->options);
}

int
cli_parse_command_line (const char *command, const char *parameters, const char *summary,
                        const char *description, CliGroups groups,
                        int argc, char **argv, CliOptions *options)
{
  const CliCommandHelp help = { command, parameters, summary, description };
  GroupsToAdd add = { groups, options };
  return cli_parse_options (&help, add_groups_to, &add, argc, argv);
}
