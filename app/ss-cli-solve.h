/* ss-cli-solve.h: pieces shared by the subcommands that solve (run in
 * ss-cli-solve.c, deblur in ss-cli-deblur.c): HISTORY cards, running the
 * solver with progress output, writing results and printing summaries. */
#pragma once

#include "ss-cli-common.h"

G_BEGIN_DECLS

/* ---- small helpers ---- */

/* Removes the SS_* acquisition cards: a recovered image is not a measurement. */
void cli_header_remove_acquisition (SsHeader *header);
/* NaN pixels (blank or unobserved) take no part in the model: set to 0. */
gsize cli_replace_nan_with_zero (float *data, gsize n);
/* (T - sky) / scale with negatives and blanks set to 0, N floats. */
float *cli_scaled_truth (const float *data, gsize n, const SsScaling *scaling);
/* Operator construction failed: 2 for a bad parameter (PSF too large...), else 1. */
int cli_operator_failure (const char *file, const SsPsfSpec *psf, const GError *error);
/* The NULL-terminated list of the given non-NULL paths (at most 3). */
void cli_collect_inputs (const char **inputs, const char *a, const char *b, const char *c);

/* ---- HISTORY cards: "sharpsky-cli VERSION COMMAND" then one per parameter ---- */

typedef struct {
  GPtrArray *lines;
  const char *command;
} CliHistory;

void cli_history_init (CliHistory *history, const char *command);
void cli_history_add (CliHistory *history, const char *format, ...) G_GNUC_PRINTF (2, 3);
void cli_history_add_double (CliHistory *history, const char *name, double value);
void cli_history_add_acquisition (CliHistory *history, const SsAcquisition *acq);
void cli_history_add_scaling (CliHistory *history, SsSkyMode mode, const SsScaling *scaling);
/* The solver, its parameters, where it ran and (cli_history_add_result)
 * what it gave; the settings alone for a cube, whose planes each add their
 * result with a "plane N " PREFIX. */
void cli_history_add_solver (CliHistory *history, const SsSolveParams *params,
                             const SsSolveResult *result);
void cli_history_add_solver_settings (CliHistory *history, const SsSolveParams *params,
                                      const SsSolveResult *result);
void cli_history_add_result (CliHistory *history, const char *prefix,
                             const SsSolveResult *result);
void cli_history_apply (const CliHistory *history, SsHeader *header);
void cli_history_clear (CliHistory *history);

/* ---- solving ---- */

/* Runs the solver on PROBLEM. PLANE >= 0 is added to progress lines and JSON
 * reports when an image has several planes. Returns -1 on success or the
 * exit status. */
int cli_solve (const CliConfig *config, const SsSolveParams *params, const CliOptions *options,
               const char *input, int plane, const SsProblem *problem, SsSolveResult *result);

/* Solves COUNT problems of one size together (ss_backend_solve_batch), each
 * with its weight ALPHAS[i]; progress lines and JSON reports name PLANES[i].
 * Returns -1 on success or the exit status. */
int cli_solve_batch (const CliConfig *config, const SsSolveParams *params,
                     const CliOptions *options, const char *input, const int *planes,
                     const SsProblem *problems, const double *alphas, int count,
                     SsSolveResult *results);

/* TRUE once Ctrl-C or SIGTERM has asked to stop: a run over many inputs
 * stops. */
gboolean cli_was_interrupted (void);
/* The same, setting ERROR (G_IO_ERROR_CANCELLED, "interrupted") when it was. */
gboolean cli_interrupted_error (GError **error);
/* Ctrl-C and SIGTERM set the flag cli_was_interrupted reads; a command
 * checks it at its report points. A second signal ends the process at once
 * (exit 128 + the signal), after removing the temporary files of outputs
 * being written (ss_output_remove_temporaries). */
void cli_install_interrupt_handler (void);
/* The same flag for a command that has a child or temporary files of its
 * own to clean up (bench --whole): a second signal sets it again rather
 * than ending the command halfway through its cleanup. */
void cli_install_cleanup_interrupt_handler (void);
/* The flag itself, for an engine loop that looks at it between its steps
 * (SsCsBenchParams.stop) rather than at report points. */
const volatile gint *cli_interrupt_flag (void);

/* Writes IMAGE (header ready) as FITS, or as PNG when PATH ends in .png. */
int cli_write_image (const char *path, const CliOptions *options, const CliConfig *config,
                     const SsImage *image, const char *const *inputs);

/* ---- where the time went ---- */

/* Wall seconds of a command's phases. Planning transforms (FFTW, cuFFT) is
 * counted as "plan" wherever it happens, and left out of the phase it
 * happened in, so the phases add up to the wall time they cover. */
typedef struct {
  double read, prepare, plan, solve, write;
  double wall;              /* from cli_phases_start to cli_phases_finish */
  double start, lap_start;  /* ss_now () */
  double planning_mark;     /* ss_planning_seconds () at lap_start */
} CliPhases;

void cli_phases_start (CliPhases *phases);
/* Ends the phase running since the last lap: its time, less the planning
 * done meanwhile, is added to *PHASE (a member of PHASES). */
void cli_phases_lap (CliPhases *phases, double *phase);
void cli_phases_finish (CliPhases *phases);

/* ---- summaries ---- */

typedef struct {
  const char *type;             /* "summary", or "plane" for one plane of several */
  const char *command;
  const char *input;
  const char *output;           /* NULL when nothing was written */
  int plane;                    /* -1 when not per plane */
  int planes;
  int width, height;            /* the image */
  int padded_width, padded_height;   /* the problem solved (= image without padding) */
  const char *boundary;         /* NULL for a measurement */
  gsize observed;               /* m */
  const SsAcquisition *acq;     /* the acquisition solved for, NULL for a real image */
  const char *psf;              /* text of the PSF */
  const SsPsfFit *psf_fit;      /* the fit, when the PSF was measured from stars */
  SsSkyMode sky_mode;
  SsScaling scaling;
  gsize blank_pixels;           /* NaN pixels left out of the data term */
  SsSaturation saturation;      /* a real image's clipped pixels (the total over planes) */
  gsize cold_pixels;            /* and its cold ones (ss-bad-pixels.h) */
  gsize hot_pixels;             /* and its hot ones (ss-bad-pixels.h) */
  double baseline_mse;          /* the measured data taken as the image; NAN when none */
  double alpha;                 /* the alpha used */
  gboolean alpha_auto;
  double noise;                 /* scaled units, the typical pixel's, when alpha is auto; NAN
                                   otherwise */
  double alpha_noise;           /* the σ the α rule took (ss_noise_for_alpha); NAN when none */
  double mse, psnr;             /* over the image (cropped); NAN without a truth */
  const CliPhases *phases;      /* deblur's final summary; NULL otherwise */
  const SsSolveParams *params;  /* what was solved with; NULL: the configuration's */
} CliSummary;

void cli_summary_init (CliSummary *summary, const char *command);
void cli_print_summary (const CliSummary *summary, const CliOptions *options,
                        const CliConfig *config, const SsSolveResult *result);

/* MSE of the measured data read as an image: only meaningful without sensing. */
double cli_baseline_mse (const SsAcquisition *acq, const float *y, const float *truth, gsize n);

G_END_DECLS
