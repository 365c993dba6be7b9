/* ss-cli-solve.c: simulate and run, and what every solving subcommand shares
 * (ss-cli-solve.h); deblur is in ss-cli-deblur.c.
 *
 * simulate TRUTH -o MEASURED.fits   y = P(S(B x)) + e written with its acquisition record
 * run [TRUTH]                       simulate and recover in memory, MSE against the
 *                                   scaled truth (teaching)
 *
 * Units: the engine works in scaled units, scaled = (input - sky) / scale.
 * A measured file stores y * scale (NaN where unobserved) with the sky and
 * scale in SS_SKY / SS_SCALE, so deblur maps its result back to the truth's
 * units with x * scale + sky.
 *
 * This file holds simulate and run; the small helpers, HISTORY cards, the
 * solve with its progress output and Ctrl-C, and writing the result are in
 * ss-cli-solve-shared.c, the phase times and the summaries in
 * ss-cli-solve-summary.c.
 */
#include "ss-cli-solve.h"
#include "ss-cli-json.h"
#include "ss-config.h"

#include <math.h>

#define SAMPLE_NAME "hubble_deep_field.fits"

/* ---- shared pieces of simulate and run --------------------------------- */

/* Sky and scale of TRUTH, and the truth in scaled units. Returns -1 when fine. */
static int
scale_truth (const char *path, const SsImage *image, const CliConfig *config,
             SsScaling *scaling, float **truth)
{
  g_autoptr (GError) error = NULL;
  gsize n = ss_image_plane_size (image);
  if (!ss_scaling_estimate (image->data, n, config->sky_mode, config->sky_value, scaling,
                            &error))
    return cli_fail (CLI_EXIT_FAILURE, path, error);
  *truth = cli_scaled_truth (image->data, n, scaling);
  return -1;
}

/* The operator of the acquisition and a simulated measurement of TRUTH. */
static int
simulate_measurement (const char *path, const SsAcquisition *acq, const float *truth,
                      int width, int height, SsOperator **op, float **y)
{
  g_autoptr (GError) error = NULL;
  *op = ss_operator_new (acq, width, height, &error);
  if (*op == NULL)
    return cli_operator_failure (path, &acq->psf, error);
  *y = ss_simulate (*op, acq, truth, &error);
  if (*y == NULL)
    {
      g_clear_pointer (op, ss_operator_free);
      return cli_fail (CLI_EXIT_FAILURE, path, error);
    }
  return -1;
}

/* The truth loaded, scaled and measured: what simulate and run both start from. */
typedef struct {
  SsImage *image;             /* the truth as read (input units, header) */
  SsScaling scaling;
  float *truth;               /* scaled */
  SsOperator *op;
  float *y;                   /* the simulated measurement, scaled */
  int width, height;
  gsize n;
} SimulatedProblem;

static void
simulated_problem_clear (SimulatedProblem *sp)
{
  g_clear_pointer (&sp->image, ss_image_free);
  g_clear_pointer (&sp->truth, g_free);
  g_clear_pointer (&sp->op, ss_operator_free);
  g_clear_pointer (&sp->y, g_free);
}

static int
load_and_simulate (const char *truth_path, const CliConfig *c, const CliOptions *o,
                   SimulatedProblem *sp)
{
  int status;
  if ((status = cli_load_image (truth_path, c, o, FALSE, &sp->image)) >= 0)
    return status;
  sp->width = sp->image->width;
  sp->height = sp->image->height;
  sp->n = ss_image_plane_size (sp->image);
  /* The truth MSE is measured against: the input after the same sky
   * subtraction (negatives 0) and division by the maximum as the data. */
  if ((status = scale_truth (truth_path, sp->image, c, &sp->scaling, &sp->truth)) >= 0)
    return status;
  return simulate_measurement (truth_path, &c->acquisition, sp->truth, sp->width, sp->height,
                               &sp->op, &sp->y);
}

/* HISTORY of a simulation: the command, the truth, the acquisition, the scaling. */
static void
history_of_simulation (CliHistory *history, const char *command, const char *truth_path,
                       const CliConfig *c, const SsScaling *scaling)
{
  cli_history_init (history, command);
  cli_history_add (history, "truth=%s", truth_path);
  cli_history_add_acquisition (history, &c->acquisition);
  cli_history_add_scaling (history, c->sky_mode, scaling);
}

/* Options that only deblur of real images understands are refused here. */
static int
refuse_real_data_options (const char *command, const CliConfig *c)
{
  if (c->psf_source != CLI_PSF_SPEC)
    {
      cli_error (NULL, "%s: the PSF cannot be measured from stars here (deblur does that)",
                 command);
      return CLI_EXIT_USAGE;
    }
  return -1;
}

/* ---- simulate ---------------------------------------------------------- */

static void
print_simulate_summary (const CliOptions *o, const CliConfig *c, const char *truth_path,
                        const SsOperator *op, const SsScaling *scaling, double baseline)
{
  int w = op->width, h = op->height;
  g_autofree char *psf = ss_psf_spec_to_string (&c->acquisition.psf);
  gboolean sensing = ss_acquisition_uses_sensing (&c->acquisition);
  if (o->json)
    {
      SsJsonObject j;
      ss_json_begin (&j);
      ss_json_add_string (&j, "type", "summary");
      ss_json_add_string (&j, "command", "simulate");
      ss_json_add_string (&j, "input", truth_path);
      ss_json_add_string (&j, "output", o->output);
      ss_json_add_int (&j, "width", w);
      ss_json_add_int (&j, "height", h);
      ss_json_add_int (&j, "observed", (gint64) op->m);
      ss_json_add_string (&j, "psf", psf);
      ss_json_add_number (&j, "ratio", c->acquisition.ratio);
      ss_json_add_bool (&j, "sensing", sensing);
      ss_json_add_int (&j, "seed", c->acquisition.seed);
      ss_json_add_number (&j, "noise", c->acquisition.noise);
      ss_json_add_string (&j, "sky_mode", cli_sky_mode_to_string (c->sky_mode));
      ss_json_add_number (&j, "sky", scaling->sky);
      ss_json_add_number (&j, "scale", scaling->scale);
      ss_json_add_number (&j, "baseline_mse", baseline);
      g_autofree char *text = ss_json_end (&j);
      printf ("%s\n", text);
    }
  else
    printf ("simulated    %s: %d x %d, psf %s, %" G_GSIZE_FORMAT " of %" G_GSIZE_FORMAT
            " pixels observed%s, noise %g, seed %u\nscaling      sky %g (%s), scale %g\n"
            "output       %s\n", truth_path, w, h, psf, op->m, (gsize) w * h,
            sensing ? " (circulant sensing)" : "", c->acquisition.noise, c->acquisition.seed,
            scaling->sky, cli_sky_mode_to_string (c->sky_mode), scaling->scale, o->output);
}

static int
write_measurement (const CliOptions *o, const CliConfig *c, const char *truth_path,
                   const SimulatedProblem *sp, const char *const *inputs)
{
  const SsOperator *op = sp->op;
  const SsScaling *scaling = &sp->scaling;
  /* The file holds y * scale; unobserved pixels are NaN so that nothing can
   * mistake them for measurements. */
  g_autoptr (GError) error = NULL;
  g_autoptr (SsImage) measured = ss_image_new (sp->width, sp->height, 1, &error);
  if (measured == NULL)
    return cli_fail (CLI_EXIT_FAILURE, o->output, error);
  for (gsize i = 0; i < sp->n; i++)
    measured->data[i] = op->mask && !op->mask[i] ? NAN : (float) (sp->y[i] * scaling->scale);

  measured->header = sp->image->header ? ss_header_copy (sp->image->header) : ss_header_new ();
  cli_header_remove_acquisition (measured->header);
  ss_acquisition_to_header (&c->acquisition, measured->header);
  ss_header_set_double (measured->header, "SS_SKY", scaling->sky,
                        "sky level subtracted from the truth (input units)");
  ss_header_set_double (measured->header, "SS_SCALE", scaling->scale,
                        "data = y * SS_SCALE; recovered = x * SS_SCALE + SS_SKY");

  CliHistory history;
  history_of_simulation (&history, "simulate", truth_path, c, scaling);
  cli_history_apply (&history, measured->header);
  cli_history_clear (&history);

  if (!ss_fits_write (measured, o->output, o->force, inputs, &error))
    return cli_fail (CLI_EXIT_FAILURE, o->output, error);

  print_simulate_summary (o, c, truth_path, op, scaling,
                          cli_baseline_mse (&c->acquisition, sp->y, sp->truth, sp->n));
  return CLI_EXIT_OK;
}

static int
simulate_with (CliOptions *o, CliConfig *c)
{
  if (o->positional == NULL || g_strv_length (o->positional) != 1)
    {
      cli_error (NULL, "simulate: expected one TRUTH image (see '" CLI_PROGRAM
                 " simulate --help')");
      return CLI_EXIT_USAGE;
    }
  const char *truth_path = o->positional[0];
  if (o->output != NULL && ss_output_name_is_png (o->output))
    {
      cli_error (o->output, "simulate writes FITS only (the acquisition is recorded in the "
                 "FITS header)");
      return CLI_EXIT_USAGE;
    }
  const char *inputs[4];
  g_autofree char *psf_file = ss_psf_spec_file_name (&c->acquisition.psf);
  cli_collect_inputs (inputs, truth_path, psf_file, NULL);
  int status = cli_check_output (o->output, o->force, inputs);
  if (status >= 0)
    return status;

  SimulatedProblem sp = { 0 };
  if ((status = load_and_simulate (truth_path, c, o, &sp)) < 0)
    status = write_measurement (o, c, truth_path, &sp, inputs);
  simulated_problem_clear (&sp);
  return status;
}

int
cli_simulate (int argc, char **argv)
{
  CliOptions o = { 0 };
  const CliGroups groups = CLI_GROUP_OUTPUT | CLI_GROUP_INPUT | CLI_GROUP_ACQUISITION
                           | CLI_GROUP_SKY | CLI_GROUP_PRINT;
  int status = cli_parse_command_line (
    "simulate", "TRUTH -o MEASURED.fits",
    "Simulates a measurement y = P(S(B x)) + e of the image TRUTH (FITS or PNG, first plane).",
    "TRUTH is scaled as (TRUTH - sky) / max, negatives set to 0. MEASURED holds y times the\n"
    "scale as float32 FITS (NaN where unobserved) with TRUTH's header, the acquisition\n"
    "(SS_PSF, SS_RATIO, SS_SENS, SS_SEED, SS_NOISE, SS_SKY, SS_SCALE) and HISTORY cards,\n"
    "so that 'deblur' rebuilds the same operator. --ratio defaults to 1 (plain blur).",
    groups, argc, argv, &o);
  CliConfig c = { 0 };
  if (status < 0)
    status = cli_config_from_options (&o, groups, 1.0, "box:5", &c);
  if (status < 0)
    status = refuse_real_data_options ("simulate", &c);
  if (status < 0)
    status = simulate_with (&o, &c);
  cli_config_clear (&c);
  cli_options_clear (&o);
  return status;
}

/* ---- run --------------------------------------------------------------- */

static char *
find_sample (void)
{
  const char *candidates[] = {
    SHARPSKY_SOURCE_DATADIR G_DIR_SEPARATOR_S SAMPLE_NAME,
    SHARPSKY_DATADIR G_DIR_SEPARATOR_S SAMPLE_NAME,
  };
  for (gsize i = 0; i < G_N_ELEMENTS (candidates); i++)
    if (g_file_test (candidates[i], G_FILE_TEST_IS_REGULAR))
      return g_strdup (candidates[i]);
  return NULL;
}

/* --alpha auto in run: the noise of the simulation is known exactly. */
static int
resolve_run_alpha (const CliConfig *c, const SsOperator *op, SsSolveParams *params)
{
  if (!c->alpha_auto)
    return -1;
  ss_solver_apply_alpha_auto (params, ss_alpha_auto (c->acquisition.noise, op));
  g_autoptr (GError) error = NULL;
  if (!ss_solve_params_validate (params, &error))
    {
      cli_error (NULL, "--alpha auto (noise %g): %s; give --noise or --alpha",
                 c->acquisition.noise, error->message);
      return CLI_EXIT_USAGE;
    }
  return -1;
}

/* Recovers SP's truth from its measurement; reports, and writes it with -o. */
static int
solve_and_report (const CliOptions *o, const CliConfig *c, const char *truth_path,
                  const SimulatedProblem *sp, const char *const *inputs)
{
  int status;
  int w = sp->width, h = sp->height;
  gsize n = sp->n;
  const SsOperator *op = sp->op;
  const SsScaling *scaling = &sp->scaling;
  SsSolveParams params = c->params;
  if ((status = resolve_run_alpha (c, op, &params)) >= 0)
    return status;

  SsSolveResult result = { 0 };
  SsProblem problem = { .op = op, .y = sp->y, .truth = sp->truth };
  status = cli_solve (c, &params, o, truth_path, -1, &problem, &result);

  if (status < 0 && o->output != NULL)
    {
      g_autoptr (GError) error = NULL;
      g_autoptr (SsImage) out = ss_image_new (w, h, 1, &error);
      if (out == NULL)
        status = cli_fail (CLI_EXIT_FAILURE, o->output, error);
      else
        {
          ss_scaling_unapply (scaling, result.x, out->data, n);
          out->header = sp->image->header ? ss_header_copy (sp->image->header) : ss_header_new ();
          cli_header_remove_acquisition (out->header);
          CliHistory history;
          history_of_simulation (&history, "run", truth_path, c, scaling);
          cli_history_add_solver (&history, &params, &result);
          cli_history_add (&history, "mse=%.6g psnr=%.4g", result.mse, result.psnr);
          cli_history_apply (&history, out->header);
          cli_history_clear (&history);
          status = cli_write_image (o->output, o, c, out, inputs);
        }
    }
  if (status < 0)
    {
      g_autofree char *psf = ss_psf_spec_to_string (&c->acquisition.psf);
      CliSummary s;
      cli_summary_init (&s, "run");
      s.input = truth_path;
      s.output = o->output;
      s.width = s.padded_width = w;
      s.height = s.padded_height = h;
      s.observed = op->m;
      s.acq = &c->acquisition;
      s.psf = psf;
      s.sky_mode = c->sky_mode;
      s.scaling = *scaling;
      s.baseline_mse = cli_baseline_mse (&c->acquisition, sp->y, sp->truth, n);
      s.alpha = params.alpha;
      s.alpha_auto = c->alpha_auto;
      s.params = &params;   /* as solved: --alpha auto's α and hold-out rule */
      s.noise = c->alpha_auto ? c->acquisition.noise : NAN;
      s.mse = result.mse;
      s.psnr = result.psnr;
      cli_print_summary (&s, o, c, &result);
      status = CLI_EXIT_OK;
    }
  ss_solve_result_clear (&result);
  return status;
}

static int
run_with (CliOptions *o, CliConfig *c)
{
  guint count = o->positional ? g_strv_length (o->positional) : 0;
  if (count > 1)
    {
      cli_error (NULL, "run: expected at most one TRUTH image (see '" CLI_PROGRAM
                 " run --help')");
      return CLI_EXIT_USAGE;
    }
  g_autofree char *truth_path = count == 1 ? g_strdup (o->positional[0]) : find_sample ();
  if (truth_path == NULL)
    {
      cli_error (NULL, "the bundled sample %s is in neither %s nor %s; give a TRUTH image",
                 SAMPLE_NAME, SHARPSKY_SOURCE_DATADIR, SHARPSKY_DATADIR);
      return CLI_EXIT_FAILURE;
    }
  const char *inputs[4];
  g_autofree char *psf_file = ss_psf_spec_file_name (&c->acquisition.psf);
  cli_collect_inputs (inputs, truth_path, psf_file, NULL);
  int status;
  if (o->output != NULL && (status = cli_check_output (o->output, o->force, inputs)) >= 0)
    return status;

  SimulatedProblem sp = { 0 };
  if ((status = load_and_simulate (truth_path, c, o, &sp)) < 0)
    status = solve_and_report (o, c, truth_path, &sp, inputs);
  simulated_problem_clear (&sp);
  return status;
}

int
cli_run (int argc, char **argv)
{
  CliOptions o = { 0 };
  const CliGroups groups = CLI_GROUP_OUTPUT | CLI_GROUP_PNG | CLI_GROUP_INPUT
                           | CLI_GROUP_ACQUISITION | CLI_GROUP_SKY | CLI_GROUP_SOLVER
                           | CLI_GROUP_PRINT;
  int status = cli_parse_command_line (
    "run", "[TRUTH]",
    "Simulates a measurement of TRUTH and recovers it, in memory (teaching).",
    "Without TRUTH the bundled Hubble Deep Field sample is used. MSE and PSNR are measured\n"
    "against TRUTH after the same sky subtraction (negatives set to 0) and division by the\n"
    "maximum as the measurement. --ratio defaults to 0.5 (seed 000, section 7). With -o\n"
    "the recovered image is written in TRUTH's units. --alpha auto uses the --noise given.\n\n"
    "Seed 000 section 7:  " CLI_PROGRAM " run --psf box:5 --ratio 0.5 --alpha 1e-3 "
    "--iters 300 --nonneg",
    groups, argc, argv, &o);
  CliConfig c = { 0 };
  if (status < 0)
    status = cli_config_from_options (&o, groups, 0.5, "box:5", &c);
  if (status < 0)
    status = refuse_real_data_options ("run", &c);
  /* As deblur does: an option the solver takes no part of is said. */
  if (status < 0)
    cli_note_unused_options (&o, &c.params);
  if (status < 0)
    status = run_with (&o, &c);
  cli_config_clear (&c);
  cli_options_clear (&o);
  return status;
}
