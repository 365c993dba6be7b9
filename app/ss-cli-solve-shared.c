/* ss-cli-solve-shared.c: what every solving subcommand shares besides the
 * summaries (ss-cli-solve.h): the small helpers, HISTORY cards, Ctrl-C, the
 * solve with its progress output, and writing the result. */
#include "ss-cli-solve.h"
#include "ss-cli-json.h"
#include "ss-config.h"

#include <math.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

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

/* The first Ctrl-C or SIGTERM (what a batch system sends at a job's time
 * limit) asks the solve to stop; a second ends the process at once, as
 * users expect, less the temporary files of outputs being written. */
static void
on_interrupt_or_quit (int signal_number)
{
  if (interrupted)
    {
      ss_output_remove_temporaries ();
      _exit (128 + signal_number);
    }
  interrupted = 1;
}

static void
catch_signal_with (int signal_number, int flags, void (*handler) (int))
{
  struct sigaction action;
  memset (&action, 0, sizeof action);
  action.sa_handler = handler;
  action.sa_flags = flags;
  sigemptyset (&action.sa_mask);
  sigaction (signal_number, &action, NULL);
}

void
cli_install_interrupt_handler (void)
{
  /* SA_RESTART: a file being written when the first comes is not disturbed. */
  catch_signal_with (SIGINT, SA_RESTART, on_interrupt_or_quit);
  catch_signal_with (SIGTERM, SA_RESTART, on_interrupt_or_quit);
}

void
cli_install_cleanup_interrupt_handler (void)
{
  /* Every signal only sets the flag: the cleanup that follows the first
   * is short, and killing it would leave what it removes. SA_RESTART: a
   * file being written meanwhile is not disturbed. */
  catch_signal_with (SIGINT, SA_RESTART, on_interrupt);
  catch_signal_with (SIGTERM, SA_RESTART, on_interrupt);
}

gboolean
cli_was_interrupted (void)
{
  return interrupted != 0;
}

gboolean
cli_interrupted_error (GError **error)
{
  if (!cli_was_interrupted ())
    return FALSE;
  g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_CANCELLED, "interrupted");
  return TRUE;
}

const volatile gint *
cli_interrupt_flag (void)
{
  /* sig_atomic_t is an int here: the engine's loops read it as a gint. */
  return &interrupted;
}

/* ---- small helpers ----------------------------------------------------- */

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
  g_autofree char *psf_file = ss_psf_spec_file_name (psf);
  if (psf_file != NULL && strstr (error->message, psf_file) != NULL)
    file = NULL;
  /* A PSF larger than the image, or malformed, is a bad parameter. */
  gboolean usage = g_error_matches (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT);
  return cli_fail (usage ? CLI_EXIT_USAGE : CLI_EXIT_FAILURE, file, error);
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
cli_history_add_solver_settings (CliHistory *history, const SsSolveParams *p,
                                 const SsSolveResult *result)
{
  cli_history_add (history, "solver=%s", ss_solver_kind_to_string (p->kind));
  ss_solve_params_foreach_used (p, history_add_param, history);
  cli_history_add (history, "backend=%s device=%s", result->backend ? result->backend : "?",
                   result->device ? result->device : "?");
}

void
cli_history_add_solver (CliHistory *history, const SsSolveParams *p,
                        const SsSolveResult *result)
{
  cli_history_add_solver_settings (history, p, result);
  cli_history_add_result (history, "", result);
}

void
cli_history_add_result (CliHistory *history, const char *prefix, const SsSolveResult *result)
{
  cli_history_add (history, "%sresult iterations=%d residual=%.6g objective=%.6g", prefix,
                   result->iterations, result->residual, result->objective);
  g_autofree char *holdout = ss_solve_result_describe_holdout (result);
  if (holdout != NULL)
    cli_history_add (history, "%sresult %s", prefix, holdout);
}

/* ---- solving ----------------------------------------------------------- */

typedef struct {
  const CliOptions *options;
  GCancellable *cancellable;
  int iterations;
  int plane;              /* -1: a single-plane image */
  int reported;           /* the last iteration reported: an interrupted run's result may
                             hold none (a hold-out rule's validation run is not its result) */
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
  context->reported = MAX (context->reported, report->iteration);
  if (interrupted)
    g_cancellable_cancel (context->cancellable);
  if (context->options->json)
    print_report_json (report, context->plane);
  else if (!context->options->quiet)
    print_report_text (report, context->iterations, context->plane);
}

/* A dense solve's one factorisation reports nothing until it ends: past a
 * trillion operations (14 000 unknowns, minutes on a CPU) the wait is said
 * up front, with the way out. */
static void
note_dense_work (const CliOptions *options, const SsSolveParams *params,
                 const SsBackend *backend, const SsOperator *op)
{
  if (!(ss_solver_info (params->kind)->caps & SS_SOLVER_NEEDS_REGION)
      || !g_str_equal (ss_backend_get_name (backend), "cpu"))
    return;
  double n = (double) op->width * op->height, operations = n * n * n / 3.0;
  if (operations < 1e12)
    return;
  cli_note (options, "%s factors a dense %.0f×%.0f matrix, about %.1e operations: minutes on a "
            "CPU, with no progress until it ends; a smaller region, the GPU or direct-fft is "
            "faster", ss_solver_kind_to_string (params->kind), n, n, operations);
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
  if (plane <= 0)
    note_dense_work (options, params, backend, op);
  cli_install_interrupt_handler ();
  return g_steal_pointer (&backend);
}

/* After the engine returned: -1, or the status after the message. */
static int
finish_solve (gboolean ok, const GError *error, const CliOptions *options, const char *input,
              const SsSolveResult *result, int reported)
{
  if (!ok)
    {
      if (g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
        {
          cli_error (input, "interrupted after %d iterations; nothing written",
                     MAX (result->iterations, reported));
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
                            plane, 0 };
  gboolean ok = ss_backend_solve (backend, problem, params, on_report, &context,
                                  cancellable, result, &error);
  return finish_solve (ok, error, options, input, result, context.reported);
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
  batch->context.reported = one.reported;
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
  BatchReportContext batch = { { options, cancellable, params->iterations, -1, 0 }, planes };
  gboolean ok = ss_backend_solve_batch (backend, problems, count, alphas, params,
                                        on_batch_report, &batch, cancellable, results, &error);
  /* A failed batch names the first problem's iterations (they run together). */
  int status = finish_solve (ok, error, options, input, &results[0], batch.context.reported);
  /* Each plane's own warning (a flat one, say), not the first's alone. */
  for (int i = 1; status < 0 && i < count; i++)
    if (results[i].warning != NULL)
      cli_note (options, "warning: plane %d: %s", planes[i], results[i].warning);
  return status;
}

int
cli_write_image (const char *path, const CliOptions *options, const CliConfig *config,
                 const SsImage *image, const char *const *inputs)
{
  g_autoptr (GError) error = NULL;
  gboolean ok;
  /* The name gives the format (ss_output_format_from_name); ss_fits_write
   * refuses any name that is not a FITS output's. */
  if (ss_output_name_is_png (path))
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
