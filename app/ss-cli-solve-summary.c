/* ss-cli-solve-summary.c: where a solving command's time went (CliPhases)
 * and its summary, one JSON object or the text block (ss-cli-solve.h). */
#include "ss-cli-solve.h"
#include "ss-cli-json.h"
#include "ss-fft.h"

#include <math.h>
#include <string.h>

/* ---- where the time went ------------------------------------------------ */

void
cli_phases_start (CliPhases *phases)
{
  memset (phases, 0, sizeof *phases);
  phases->start = phases->lap_start = ss_now ();
  phases->planning_mark = ss_planning_seconds ();
}

void
cli_phases_lap (CliPhases *phases, double *phase)
{
  double now = ss_now (), planning = ss_planning_seconds ();
  double planned = planning - phases->planning_mark;
  *phase += MAX (now - phases->lap_start - planned, 0.0);
  phases->plan += planned;
  phases->lap_start = now;
  phases->planning_mark = planning;
}

void
cli_phases_finish (CliPhases *phases)
{
  phases->wall = ss_now () - phases->start;
}

static void
add_phases_json (SsJsonObject *o, const CliPhases *phases)
{
  ss_json_add_number (o, "seconds_read", phases->read);
  ss_json_add_number (o, "seconds_prepare", phases->prepare);
  ss_json_add_number (o, "seconds_plan", phases->plan);
  ss_json_add_number (o, "seconds_solve", phases->solve);
  ss_json_add_number (o, "seconds_write", phases->write);
  ss_json_add_number (o, "seconds_wall", phases->wall);
  SsFftStats fft;
  ss_fft_get_stats (&fft);
  ss_json_add_string (o, "fftw_wisdom", ss_fft_wisdom_state_to_string (fft.wisdom));
  ss_json_add_int (o, "fftw_plans_measured", fft.plans_measured);
  ss_json_add_int (o, "fftw_plans_from_wisdom", fft.plans_from_wisdom);
  ss_json_add_int (o, "fftw_plans_estimated", fft.plans_estimated);
}

static void
add_phases_text (GString *t, const CliPhases *phases)
{
  g_string_append_printf (t, "time         read %.3f s, prepare %.3f s, plan %.3f s, solve "
                          "%.3f s, write %.3f s; wall %.3f s\n", phases->read,
                          phases->prepare, phases->plan, phases->solve, phases->write,
                          phases->wall);
}

/* ---- summaries --------------------------------------------------------- */

void
cli_summary_init (CliSummary *s, const char *command)
{
  memset (s, 0, sizeof *s);
  s->type = "summary";
  s->command = command;
  s->plane = -1;
  s->planes = 1;
  s->baseline_mse = NAN;
  s->alpha = NAN;   /* NAN: the parameters' own α */
  s->noise = s->alpha_noise = NAN;
  s->mse = NAN;
  s->psnr = NAN;
}

/* What the parameter callbacks below write into, and the summary whose α
 * they report: a colour image's summary gives the planes' mean α, which no
 * one plane's parameters hold. */
typedef struct {
  const CliSummary *summary;
  gpointer out;           /* the SsJsonObject or the GString */
} ParamSink;

/* The value to report for parameter INFO: the summary's α, else VALUE. */
static double
param_value (const ParamSink *sink, const SsParamInfo *info, double value, const char *text,
             char **formatted)
{
  *formatted = g_strdup (text);
  if (info->id == SS_PARAM_ALPHA && isfinite (sink->summary->alpha))
    {
      value = sink->summary->alpha;
      g_free (*formatted);
      *formatted = ss_param_format (info, value);
    }
  return value;
}

/* JSON keys are identifiers: direct-method becomes direct_method. */
static void
json_add_param (const SsParamInfo *info, double value, const char *text, gpointer user_data)
{
  const ParamSink *sink = user_data;
  g_autofree char *key = g_strdelimit (g_strdup (info->name), "-", '_');
  g_autofree char *formatted = NULL;
  value = param_value (sink, info, value, text, &formatted);
  if (info->type == SS_PARAM_REAL || info->type == SS_PARAM_INT)
    ss_json_add_number (sink->out, key, value);
  else if (info->type == SS_PARAM_BOOL)
    ss_json_add_bool (sink->out, key, value != 0);
  else
    ss_json_add_string (sink->out, key, formatted);
}

static void
text_add_param (const SsParamInfo *info, double value, const char *text, gpointer user_data)
{
  const ParamSink *sink = user_data;
  g_autofree char *formatted = NULL;
  value = param_value (sink, info, value, text, &formatted);
  if (info->type == SS_PARAM_BOOL)
    {
      if (value != 0)
        g_string_append_printf (sink->out, "  %s", info->name);
    }
  else
    g_string_append_printf (sink->out, "  %s %s", info->name, formatted);
}

static void
print_summary_json (const CliSummary *s, const CliConfig *config, const SsSolveResult *result)
{
  /* A real image may run another solver than the command line named. */
  const SsSolveParams *p = s->params ? s->params : &config->params;
  SsJsonObject o;
  ss_json_begin (&o);
  ss_json_add_string (&o, "type", s->type);
  ss_json_add_string (&o, "command", s->command);
  if (s->plane >= 0)
    ss_json_add_int (&o, "plane", s->plane);
  ss_json_add_int (&o, "planes", s->planes);
  ss_json_add_string (&o, "input", s->input);
  ss_json_add_string (&o, "output", s->output);
  ss_json_add_string (&o, "solver", ss_solver_kind_to_string (p->kind));
  ss_json_add_string (&o, "backend", result->backend);
  ss_json_add_string (&o, "device", result->device);
  ss_json_add_int (&o, "width", s->width);
  ss_json_add_int (&o, "height", s->height);
  ss_json_add_int (&o, "padded_width", s->padded_width);
  ss_json_add_int (&o, "padded_height", s->padded_height);
  ss_json_add_string (&o, "boundary", s->boundary);
  ss_json_add_int (&o, "observed", (gint64) s->observed);
  ss_json_add_int (&o, "iterations", result->iterations);
  ss_json_add_int (&o, "validation_iterations", result->validation_iterations);
  /* The sparsity the hold-out rule chose; "sparsity" (the parameters')
   * is what was asked. */
  if (result->sparsity > 0)
    ss_json_add_number (&o, "sparsity_chosen", result->sparsity);
  /* RL's floor above the sky (ss-rl.h): raised, and how the rule chose. */
  if (result->floor_raised || result->floor_iterations > 0)
    ss_json_add_bool (&o, "floor_raised", result->floor_raised);
  if (result->floor_iterations > 0)
    {
      ss_json_add_int (&o, "floor_validation_iterations", result->floor_iterations);
      ss_json_add_number (&o, "floor_error_ratio", result->floor_error_ratio);
    }
  if (result->floor_sky_tail > 0)
    ss_json_add_number (&o, "floor_sky_tail", result->floor_sky_tail);
  /* RL's brightness blend (ss-rl-blend.h). */
  if (result->blend_early_iterations > 0)
    {
      ss_json_add_int (&o, "blend_early_iterations", result->blend_early_iterations);
      ss_json_add_number (&o, "blend_error_ratio", result->blend_error_ratio);
    }
  /* RL's full run accelerated because the validation reached its cap. */
  if (result->full_accel > 0)
    ss_json_add_number (&o, "full_accel", result->full_accel);
  if (result->choice != NULL)
    {
      ss_json_add_int (&o, "choice_iterations", result->choice_iterations);
      ss_json_add_string (&o, "choice", result->choice);
    }
  if (result->validation_inner_iterations > 0)
    {
      ss_json_add_int (&o, "validation_inner_iterations", result->validation_inner_iterations);
      ss_json_add_int (&o, "full_inner_iterations", result->full_inner_iterations);
      if (result->refined_inner_iterations > 0)
        ss_json_add_int (&o, "refined_inner_iterations", result->refined_inner_iterations);
    }
  ss_json_add_number (&o, "seconds", result->seconds);
  ss_json_add_number (&o, "iterations_per_second",
                      result->seconds > 0 ? result->iterations / result->seconds : NAN);
  ss_json_add_number (&o, "mse", s->mse);
  ss_json_add_number (&o, "psnr", s->psnr);
  ss_json_add_number (&o, "baseline_mse", s->baseline_mse);
  ss_json_add_number (&o, "residual", result->residual);
  ss_json_add_number (&o, "objective", result->objective);
  ss_json_add_number (&o, "rel_change", result->rel_change);
  ss_json_add_int (&o, "peak_memory_bytes", (gint64) result->peak_memory_bytes);
  ss_json_add_string (&o, "warning", result->warning);
  /* The solver's parameters, each once and only those it reads (alpha and
   * nonneg among them where it takes them): RL takes no α, and a summary
   * that gave one would say it shaped the result. */
  gboolean takes_alpha = ss_solver_uses (ss_solver_info (p->kind), SS_PARAM_ALPHA);
  if (takes_alpha)
    ss_json_add_bool (&o, "alpha_auto", s->alpha_auto);
  ss_json_add_number (&o, "noise_estimate", s->noise);
  /* Above noise_estimate where photon noise dominates (README, "--alpha auto"). */
  if (takes_alpha && s->alpha_auto)
    ss_json_add_number (&o, "alpha_noise", s->alpha_noise);
  ParamSink sink = { s, &o };
  ss_solve_params_foreach_used (p, json_add_param, &sink);
  if (ss_solver_info (p->kind)->phases[0] != NULL)
    ss_json_add_number_array (&o, "phase_seconds", result->phase_seconds, 4);
  ss_json_add_string (&o, "psf", s->psf);
  if (s->psf_fit != NULL)
    {
      g_autofree char *text = ss_psf_fit_describe (s->psf_fit);
      ss_json_add_string (&o, "psf_fit", text);
      ss_json_add_string (&o, "psf_model", ss_psf_model_to_string (s->psf_fit->model));
      ss_json_add_number (&o, "psf_fwhm", s->psf_fit->fwhm);
      ss_json_add_number (&o, "psf_fwhm_major", s->psf_fit->fwhm_major);
      ss_json_add_number (&o, "psf_fwhm_minor", s->psf_fit->fwhm_minor);
      ss_json_add_number (&o, "psf_beta", s->psf_fit->beta);
      ss_json_add_number (&o, "psf_ellipticity", s->psf_fit->ellipticity);
    }
  if (s->acq != NULL)
    {
      ss_json_add_number (&o, "ratio", s->acq->ratio);
      ss_json_add_bool (&o, "sensing", ss_acquisition_uses_sensing (s->acq));
      ss_json_add_int (&o, "seed", s->acq->seed);
      ss_json_add_number (&o, "noise", s->acq->noise);
    }
  ss_json_add_string (&o, "sky_mode", cli_sky_mode_to_string (s->sky_mode));
  ss_json_add_number (&o, "sky", s->scaling.sky);
  ss_json_add_number (&o, "scale", s->scaling.scale);
  ss_json_add_int (&o, "blank_pixels", (gint64) s->blank_pixels);
  ss_json_add_int (&o, "saturated_pixels", (gint64) s->saturation.clipped);
  ss_json_add_int (&o, "cold_pixels", (gint64) s->cold_pixels);
  ss_json_add_int (&o, "hot_pixels", (gint64) s->hot_pixels);
  if (s->saturation.clipped > 0 && isfinite (s->saturation.level))
    {
      ss_json_add_number (&o, "saturation", s->saturation.level);
      ss_json_add_string (&o, "saturation_source",
                          ss_saturation_source_describe (s->saturation.source));
    }
  if (s->phases != NULL)
    add_phases_json (&o, s->phases);
  g_autofree char *text = ss_json_end (&o);
  fprintf (stdout, "%s\n", text);
  fflush (stdout);
}

static void
print_summary_text (const CliSummary *s, const CliConfig *config, const SsSolveResult *result)
{
  /* A real image may run another solver than the command line named. */
  const SsSolveParams *p = s->params ? s->params : &config->params;
  GString *t = g_string_new (NULL);

  if (s->plane >= 0)
    g_string_append_printf (t, "plane        %d of %d\n", s->plane, s->planes);
  else if (s->planes > 1)
    g_string_append_printf (t, "all planes   %d\n", s->planes);
  g_string_append_printf (t, "solver       %s", ss_solver_kind_to_string (p->kind));
  ParamSink sink = { s, t };
  ss_solve_params_foreach_used (p, text_add_param, &sink);
  if (s->alpha_auto && ss_solver_uses (ss_solver_info (p->kind), SS_PARAM_ALPHA))
    g_string_append (t, "  (alpha auto)");
  g_string_append_printf (t, "\nbackend      %s (%s)\n", result->backend, result->device);

  g_string_append_printf (t, "image        %d x %d, psf %s, %" G_GSIZE_FORMAT " pixel%s "
                          "observed%s\n", s->width, s->height, s->psf ? s->psf : "?",
                          s->observed, s->observed == 1 ? "" : "s",
                          s->acq && ss_acquisition_uses_sensing (s->acq)
                          ? " (circulant sensing)" : "");
  if (s->psf_fit != NULL)
    {
      g_autofree char *fit = ss_psf_fit_describe (s->psf_fit);
      g_string_append_printf (t, "psf fit      %s\n", fit);
    }
  if (s->boundary != NULL)
    g_string_append_printf (t, "boundary     %s, solved at %d x %d\n", s->boundary,
                            s->padded_width, s->padded_height);
  if (isfinite (s->scaling.scale))
    g_string_append_printf (t, "scaling      sky %g (%s), scale %g\n", s->scaling.sky,
                            cli_sky_mode_to_string (s->sky_mode), s->scaling.scale);
  else
    g_string_append_printf (t, "scaling      per plane (%s)\n",
                            cli_sky_mode_to_string (s->sky_mode));
  if (isfinite (s->noise))
    g_string_append_printf (t, "noise        %g (scaled units)\n", s->noise);
  g_string_append_printf (t, "iterations   %d in %.3f s", result->iterations, result->seconds);
  if (result->seconds > 0 && ss_solver_is_iterative (p->kind))
    g_string_append_printf (t, " (%.1f it/s, %.3f ms/it)", result->iterations / result->seconds,
                            1e3 * result->seconds / MAX (result->iterations, 1));
  g_string_append_c (t, '\n');
  g_autofree char *holdout = ss_solve_result_describe_holdout (result);
  if (holdout != NULL)
    g_string_append_printf (t, "stop         %s\n", holdout);
  const char *const *phases = ss_solver_info (p->kind)->phases;
  if (phases[0] != NULL)
    {
      g_string_append (t, "phases      ");
      for (int i = 0; i < 4 && phases[i]; i++)
        g_string_append_printf (t, "%s %s %.3f s", i ? "," : "", phases[i],
                                result->phase_seconds[i]);
      g_string_append_c (t, '\n');
    }
  if (isfinite (s->mse))
    {
      g_string_append_printf (t, "mse          %.6e (PSNR %.2f dB)", s->mse, s->psnr);
      if (isfinite (s->baseline_mse))
        g_string_append_printf (t, "; measured data: %.6e", s->baseline_mse);
      g_string_append_c (t, '\n');
    }
  else
    g_string_append (t, "mse          (no truth)\n");
  g_string_append_printf (t, "residual     %.6e\nobjective    %.6e\n", result->residual,
                          result->objective);
  g_autofree char *memory = ss_format_bytes (result->peak_memory_bytes);
  g_string_append_printf (t, "peak memory  %s\n", memory);
  if (s->blank_pixels > 0)
    g_string_append_printf (t, "blank pixels %" G_GSIZE_FORMAT " (left out of the data term, "
                            "filled in the result)\n", s->blank_pixels);
  if (s->saturation.clipped > 0 && isfinite (s->saturation.level))
    g_string_append_printf (t, "saturated    %" G_GSIZE_FORMAT " pixels at or above %.6g (%s; "
                            "left out of the data term, filled in the result)\n",
                            s->saturation.clipped, s->saturation.level,
                            ss_saturation_source_describe (s->saturation.source));
  else if (s->saturation.clipped > 0)
    g_string_append_printf (t, "saturated    %" G_GSIZE_FORMAT " pixels at each plane's level "
                            "(left out of the data term, filled in the result)\n",
                            s->saturation.clipped);
  if (s->cold_pixels > 0)
    g_string_append_printf (t, "cold pixels  %" G_GSIZE_FORMAT " (far below their neighbours: "
                            "dead or flagged; left out of the data term, filled in the result)\n",
                            s->cold_pixels);
  if (s->hot_pixels > 0)
    g_string_append_printf (t, "hot pixels   %" G_GSIZE_FORMAT " (sharper than the blur allows: "
                            "hot pixels or cosmic rays; left out of the data term, filled in the "
                            "result)\n", s->hot_pixels);
  if (result->warning)
    g_string_append_printf (t, "warning      %s\n", result->warning);
  if (s->output)
    g_string_append_printf (t, "output       %s\n", s->output);
  if (s->phases != NULL)
    add_phases_text (t, s->phases);
  fputs (t->str, stdout);
  fflush (stdout);
  g_string_free (t, TRUE);
}

void
cli_print_summary (const CliSummary *summary, const CliOptions *options,
                   const CliConfig *config, const SsSolveResult *result)
{
  if (options->json)
    print_summary_json (summary, config, result);
  else
    print_summary_text (summary, config, result);
}
