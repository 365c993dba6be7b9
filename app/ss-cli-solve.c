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
 */
#include "ss-cli-solve.h"
#include "ss-cli-json.h"
#include "ss-config.h"
#include "ss-dense.h"
#include "ss-fft.h"

#include <math.h>
#include <signal.h>
#include <string.h>

#define SAMPLE_NAME "hubble_deep_field.fits"

/* Keywords that describe a measurement; a recovered image must not carry
 * them, or deblurring it again would mistake it for a measurement. */
static const char *const acquisition_keywords[] = {
  "SS_PSF", "SS_RATIO", "SS_SENS", "SS_SEED", "SS_NOISE", "SS_SKY", "SS_SCALE",
};

/* ---- interruption ------------------------------------------------------ */

/* Ctrl-C cancels the solve at its next report point (the engine's contract)
 * so no half-written output is ever left behind. */
static volatile sig_atomic_t interrupted = 0;

static void
on_interrupt (int signal_number)
{
  (void) signal_number;
  interrupted = 1;
}

static void
install_interrupt_handler (void)
{
  struct sigaction action;
  memset (&action, 0, sizeof action);
  action.sa_handler = on_interrupt;
  action.sa_flags = SA_RESETHAND;   /* a second Ctrl-C kills at once */
  sigemptyset (&action.sa_mask);
  sigaction (SIGINT, &action, NULL);
}

gboolean
cli_was_interrupted (void)
{
  return interrupted != 0;
}

/* ---- small helpers ----------------------------------------------------- */

gboolean
cli_has_png_suffix (const char *path)
{
  g_autofree char *lower = g_ascii_strdown (path, -1);
  return g_str_has_suffix (lower, ".png");
}

static char *
keyword_of_card (const char *card)
{
  char keyword[9] = { 0 };
  strncpy (keyword, card, 8);
  return g_strstrip (g_strdup (keyword));
}

void
cli_header_remove_acquisition (SsHeader *header)
{
  for (guint i = header->cards->len; i > 0; i--)
    {
      g_autofree char *keyword = keyword_of_card (g_ptr_array_index (header->cards, i - 1));
      for (gsize k = 0; k < G_N_ELEMENTS (acquisition_keywords); k++)
        if (g_str_equal (keyword, acquisition_keywords[k]))
          {
            g_ptr_array_remove_index (header->cards, i - 1);
            break;
          }
    }
}

gsize
cli_replace_nan_with_zero (float *data, gsize n)
{
  gsize count = 0;
#pragma omp parallel for reduction(+ : count) schedule(static) if (n > SS_PARALLEL_PIXELS)
  for (gsize i = 0; i < n; i++)
    if (isnan (data[i]))
      {
        data[i] = 0.0f;
        count++;
      }
  return count;
}

float *
cli_scaled_truth (const float *data, gsize n, const SsScaling *scaling)
{
  float *truth = g_new (float, n);
  ss_scaling_apply (scaling, data, truth, n, TRUE);
  cli_replace_nan_with_zero (truth, n);
  return truth;
}

int
cli_operator_failure (const char *file, const SsPsfSpec *psf, const GError *error)
{
  /* A message about the PSF file names that file, not the image. */
  const char *psf_file = psf ? cli_psf_file_of (psf) : NULL;
  if (psf_file != NULL && strstr (error->message, psf_file) != NULL)
    file = NULL;
  /* A PSF larger than the image, or malformed, is a bad parameter. */
  gboolean usage = g_error_matches (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT);
  return cli_fail (usage ? CLI_EXIT_USAGE : CLI_EXIT_FAILURE, file, error);
}

const char *
cli_psf_file_of (const SsPsfSpec *psf)
{
  return psf->kind == SS_PSF_FILE ? psf->path : NULL;
}

void
cli_collect_inputs (const char **inputs, const char *a, const char *b, const char *c)
{
  int count = 0;
  const char *candidates[] = { a, b, c };
  for (gsize i = 0; i < G_N_ELEMENTS (candidates); i++)
    if (candidates[i] != NULL)
      inputs[count++] = candidates[i];
  inputs[count] = NULL;
}

static char *
format_double (double value)
{
  char buffer[G_ASCII_DTOSTR_BUF_SIZE];
  return g_strdup (g_ascii_formatd (buffer, sizeof buffer, "%.9g", value));
}

double
cli_baseline_mse (const SsAcquisition *acq, const float *y, const float *truth, gsize n)
{
  if (truth == NULL || (acq != NULL && ss_acquisition_uses_sensing (acq)))
    return NAN;
  return ss_mse (y, truth, n);
}

/* ---- HISTORY cards ----------------------------------------------------- */

void
cli_history_init (CliHistory *history, const char *command)
{
  history->lines = g_ptr_array_new_with_free_func (g_free);
  history->command = command;
  g_ptr_array_add (history->lines, g_strdup_printf (CLI_PROGRAM " %s %s", SHARPSKY_VERSION,
                                                    command));
}

void
cli_history_add (CliHistory *history, const char *format, ...)
{
  va_list args;
  va_start (args, format);
  g_autofree char *text = g_strdup_vprintf (format, args);
  va_end (args);
  g_ptr_array_add (history->lines, g_strdup_printf ("%s %s", history->command, text));
}

void
cli_history_add_double (CliHistory *history, const char *name, double value)
{
  g_autofree char *text = format_double (value);
  cli_history_add (history, "%s=%s", name, text);
}

void
cli_history_apply (const CliHistory *history, SsHeader *header)
{
  for (guint i = 0; i < history->lines->len; i++)
    ss_header_add_history (header, "%s", (const char *) g_ptr_array_index (history->lines, i));
}

void
cli_history_clear (CliHistory *history)
{
  g_clear_pointer (&history->lines, g_ptr_array_unref);
}

void
cli_history_add_acquisition (CliHistory *history, const SsAcquisition *acq)
{
  g_autofree char *psf = ss_psf_spec_to_string (&acq->psf);
  cli_history_add (history, "psf=%s", psf);
  cli_history_add_double (history, "ratio", acq->ratio);
  cli_history_add (history, "sensing=%s%s", cli_sensing_to_string (acq->sensing),
                   acq->sensing == SS_SENSING_AUTO
                   ? (ss_acquisition_uses_sensing (acq) ? " (circulant)" : " (none)") : "");
  cli_history_add (history, "seed=%u", acq->seed);
  cli_history_add_double (history, "noise", acq->noise);
}

void
cli_history_add_scaling (CliHistory *history, SsSkyMode mode, const SsScaling *scaling)
{
  cli_history_add (history, "sky=%s", cli_sky_mode_to_string (mode));
  cli_history_add_double (history, "sky_level", scaling->sky);
  cli_history_add_double (history, "scale", scaling->scale);
}

static void
history_add_param (const SsParamInfo *info, double value, const char *text, gpointer history)
{
  cli_history_add (history, "%s=%s", info->name, text);
}

void
cli_history_add_solver (CliHistory *history, const SsSolveParams *p,
                        const SsSolveResult *result)
{
  cli_history_add (history, "solver=%s", ss_solver_kind_to_string (p->kind));
  ss_solve_params_foreach_used (p, history_add_param, history);
  cli_history_add (history, "backend=%s device=%s", result->backend ? result->backend : "?",
                   result->device ? result->device : "?");
  cli_history_add (history, "result iterations=%d residual=%.6g objective=%.6g",
                   result->iterations, result->residual, result->objective);
  g_autofree char *holdout = ss_solve_result_describe_holdout (result);
  if (holdout != NULL)
    cli_history_add (history, "result %s", holdout);
}

/* ---- solving ----------------------------------------------------------- */

typedef struct {
  const CliOptions *options;
  GCancellable *cancellable;
  int iterations;
  int plane;              /* -1: a single-plane image */
} ReportContext;

static void
print_report_json (const SsReport *report, int plane)
{
  SsJsonObject object;
  ss_json_begin (&object);
  ss_json_add_string (&object, "type", "report");
  if (plane >= 0)
    ss_json_add_int (&object, "plane", plane);
  ss_json_add_int (&object, "iteration", report->iteration);
  ss_json_add_number (&object, "elapsed", report->elapsed);
  ss_json_add_number (&object, "mse", report->mse);
  ss_json_add_number (&object, "psnr", report->psnr);
  ss_json_add_number (&object, "residual", report->residual);
  ss_json_add_number (&object, "rel_change", report->rel_change);
  ss_json_add_number (&object, "objective", report->objective);
  ss_json_add_bool (&object, "final", report->final);
  g_autofree char *text = ss_json_end (&object);
  /* One line per report, flushed, so a pipe sees progress as it happens. */
  fprintf (stdout, "%s\n", text);
  fflush (stdout);
}

static void
print_report_text (const SsReport *report, int iterations, int plane)
{
  GString *line = g_string_new ("  ");
  if (plane >= 0)
    g_string_append_printf (line, "plane %d  ", plane);
  /* ITERATIONS 0: the solver sets its own count (`auto`'s runs). */
  if (iterations > 0)
    g_string_append_printf (line, "iteration %*d/%d  %8.3f s", iterations >= 1000 ? 5 : 3,
                            report->iteration, iterations, report->elapsed);
  else
    g_string_append_printf (line, "iteration %5d  %8.3f s", report->iteration, report->elapsed);
  if (isfinite (report->mse))
    g_string_append_printf (line, "  mse %.4e  psnr %6.2f dB", report->mse, report->psnr);
  g_string_append_printf (line, "  residual %.4e  change %.3e  objective %.6e",
                          report->residual, report->rel_change, report->objective);
  fprintf (stderr, "%s\n", line->str);
  fflush (stderr);
  g_string_free (line, TRUE);
}

static void
on_report (const SsReport *report, gpointer user_data)
{
  ReportContext *context = user_data;
  if (interrupted)
    g_cancellable_cancel (context->cancellable);
  if (context->options->json)
    print_report_json (report, context->plane);
  else if (!context->options->quiet)
    print_report_text (report, context->iterations, context->plane);
}

/* The backend of a solve, its checks and its note; NULL after a message. */
static SsBackend *
open_solve_backend (const CliConfig *config, const SsSolveParams *params,
                    const CliOptions *options, const char *input, int plane,
                    const SsOperator *op)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (SsBackend) backend = cli_backend_new (config, options);
  if (backend == NULL)
    return NULL;

  /* The dense system is n x n: refuse a size that cannot fit before any
   * allocation, with the engine's message naming what would fit. */
  if (g_str_equal (ss_backend_get_name (backend), "cpu")
      && !ss_solver_check_size (params, op->width, op->height, op->m, &error))
    {
      cli_fail (CLI_EXIT_FAILURE, input, error);
      return NULL;
    }

  if (!options->json && plane <= 0)
    cli_note (options, "backend %s, device %s", ss_backend_get_name (backend),
              ss_backend_get_device (backend));
  install_interrupt_handler ();
  return g_steal_pointer (&backend);
}

/* After the engine returned: -1, or the status after the message. */
static int
finish_solve (gboolean ok, const GError *error, const CliOptions *options, const char *input,
              const SsSolveResult *result)
{
  if (!ok)
    {
      if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        {
          cli_error (input, "interrupted after %d iterations; nothing written",
                     result->iterations);
          return CLI_EXIT_FAILURE;
        }
      return cli_fail (CLI_EXIT_FAILURE, input, error);
    }
  if (result->warning != NULL)
    cli_note (options, "warning: %s", result->warning);
  return -1;
}

int
cli_solve (const CliConfig *config, const SsSolveParams *params, const CliOptions *options,
           const char *input, int plane, const SsProblem *problem, SsSolveResult *result)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (SsBackend) backend = open_solve_backend (config, params, options, input, plane,
                                                      problem->op);
  if (backend == NULL)
    return CLI_EXIT_FAILURE;
  g_autoptr (GCancellable) cancellable = g_cancellable_new ();
  ReportContext context = { options, cancellable,
                            ss_solver_uses (ss_solver_info (params->kind), SS_PARAM_ITERATIONS)
                              ? params->iterations : 0,
                            plane };
  gboolean ok = ss_backend_solve (backend, problem, params, on_report, &context,
                                  cancellable, result, &error);
  return finish_solve (ok, error, options, input, result);
}

typedef struct {
  ReportContext context;
  const int *planes;
} BatchReportContext;

static void
on_batch_report (int index, const SsReport *report, gpointer user_data)
{
  BatchReportContext *batch = user_data;
  ReportContext one = batch->context;
  one.plane = batch->planes[index];
  on_report (report, &one);
}

int
cli_solve_batch (const CliConfig *config, const SsSolveParams *params,
                 const CliOptions *options, const char *input, const int *planes,
                 const SsProblem *problems, const double *alphas, int count,
                 SsSolveResult *results)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (SsBackend) backend = open_solve_backend (config, params, options, input, planes[0],
                                                      problems[0].op);
  if (backend == NULL)
    return CLI_EXIT_FAILURE;
  g_autoptr (GCancellable) cancellable = g_cancellable_new ();
  BatchReportContext batch = { { options, cancellable, params->iterations, -1 }, planes };
  gboolean ok = ss_backend_solve_batch (backend, problems, count, alphas, params,
                                        on_batch_report, &batch, cancellable, results, &error);
  /* A failed batch names the first problem's iterations (they run together). */
  return finish_solve (ok, error, options, input, &results[0]);
}

int
cli_write_image (const char *path, const CliOptions *options, const CliConfig *config,
                 const SsImage *image, const char *const *inputs)
{
  g_autoptr (GError) error = NULL;
  gboolean ok;
  if (cli_has_png_suffix (path))
    {
      SsPngWriteOptions png;
      ss_png_write_options_init (&png);
      png.stretch = config->stretch;
      ok = ss_png_write (image, path, &png, options->force, inputs, &error);
    }
  else
    ok = ss_fits_write (image, path, options->force, inputs, &error);
  if (!ok)
    return cli_fail (CLI_EXIT_FAILURE, path, error);
  return -1;
}

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
  s->noise = NAN;
  s->mse = NAN;
  s->psnr = NAN;
}

/* JSON keys are identifiers: direct-method becomes direct_method. */
static void
json_add_param (const SsParamInfo *info, double value, const char *text, gpointer json)
{
  g_autofree char *key = g_strdelimit (g_strdup (info->name), "-", '_');
  if (info->type == SS_PARAM_REAL || info->type == SS_PARAM_INT)
    ss_json_add_number (json, key, value);
  else if (info->type == SS_PARAM_BOOL)
    ss_json_add_bool (json, key, value != 0);
  else
    ss_json_add_string (json, key, text);
}

static void
text_add_param (const SsParamInfo *info, double value, const char *text, gpointer string)
{
  if (info->type == SS_PARAM_BOOL)
    {
      if (value != 0)
        g_string_append_printf (string, "  %s", info->name);
    }
  else
    g_string_append_printf (string, "  %s %s", info->name, text);
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
  if (result->sparsity > 0)
    ss_json_add_number (&o, "sparsity", result->sparsity);
  if (result->choice != NULL)
    {
      ss_json_add_int (&o, "choice_iterations", result->choice_iterations);
      ss_json_add_string (&o, "choice", result->choice);
    }
  if (result->validation_inner_iterations > 0)
    {
      ss_json_add_int (&o, "validation_inner_iterations", result->validation_inner_iterations);
      ss_json_add_int (&o, "full_inner_iterations", result->full_inner_iterations);
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
  ss_json_add_number (&o, "alpha", s->alpha);
  ss_json_add_bool (&o, "alpha_auto", s->alpha_auto);
  ss_json_add_number (&o, "noise_estimate", s->noise);
  ss_json_add_bool (&o, "nonneg", s->nonneg);
  ss_solve_params_foreach_used (p, json_add_param, &o);
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
  ss_solve_params_foreach_used (p, text_add_param, t);
  if (s->alpha_auto)
    g_string_append (t, "  (alpha auto)");
  g_string_append_printf (t, "\nbackend      %s (%s)\n", result->backend, result->device);

  g_string_append_printf (t, "image        %d x %d, psf %s, %" G_GSIZE_FORMAT " pixels "
                          "observed%s\n", s->width, s->height, s->psf ? s->psf : "?",
                          s->observed, s->acq && ss_acquisition_uses_sensing (s->acq)
                          ? " (circulant sensing)" : "");
  if (s->psf_fit != NULL)
    {
      g_autofree char *fit = ss_psf_fit_describe (s->psf_fit);
      g_string_append_printf (t, "psf fit      %s\n", fit);
    }
  if (s->boundary != NULL)
    g_string_append_printf (t, "boundary     %s, solved at %d x %d\n", s->boundary,
                            s->padded_width, s->padded_height);
  g_string_append_printf (t, "scaling      sky %g (%s), scale %g\n", s->scaling.sky,
                          cli_sky_mode_to_string (s->sky_mode), s->scaling.scale);
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
  if (o->output != NULL && cli_has_png_suffix (o->output))
    {
      cli_error (o->output, "simulate writes FITS only (the acquisition is recorded in the "
                 "FITS header)");
      return CLI_EXIT_USAGE;
    }
  const char *inputs[4];
  cli_collect_inputs (inputs, truth_path, cli_psf_file_of (&c->acquisition.psf), NULL);
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
      s.nonneg = params.nonneg;
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
  cli_collect_inputs (inputs, truth_path, cli_psf_file_of (&c->acquisition.psf), NULL);
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
  const CliGroups groups = CLI_GROUP_OUTPUT | CLI_GROUP_INPUT | CLI_GROUP_ACQUISITION
                           | CLI_GROUP_SKY | CLI_GROUP_SOLVER | CLI_GROUP_PRINT;
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
  if (status < 0)
    status = run_with (&o, &c);
  cli_config_clear (&c);
  cli_options_clear (&o);
  return status;
}
