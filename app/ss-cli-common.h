/* ss-cli-common.h: what the sharpsky-cli subcommands share.
 *
 * Every subcommand parses its own GOptionContext into CliOptions (raw strings,
 * NULL when an option was not given, so "given" is always knowable), then
 * turns the strings into engine structures with the cli_parse_* and
 * cli_config_* helpers, validating everything before any heavy work.
 *
 * Exit status: 0 success; 2 bad usage (unknown option, bad or missing
 * value, output refused because it exists or is the input); 1 anything that
 * fails while reading, solving or writing. Every message is one line on
 * stderr, starts with "sharpsky-cli: " and names the file or option at fault.
 */
#pragma once

#include <stdio.h>
#include "sharpsky.h"
#include "ss-boundary.h"
#include "ss-noise.h"
#include "ss-psf-fit.h"

G_BEGIN_DECLS

#define CLI_PROGRAM "sharpsky-cli"

enum {
  CLI_EXIT_OK = 0,
  CLI_EXIT_FAILURE = 1,
  CLI_EXIT_USAGE = 2,
};

/* Raw command line of one subcommand. Strings are NULL when not given. */
typedef struct {
  /* files */
  char *output;
  char *truth;
  char *hdu;
  char *plane;
  char *stretch;
  gboolean force;
  /* printing */
  gboolean json;
  gboolean quiet;
  /* acquisition */
  char *psf;
  char *ratio;
  char *sensing;
  char *noise;
  char *seed;
  /* scaling */
  char *sky;
  /* solver: one option per parameter of the solver table, --NAME */
  char *solver;
  char *param[SS_N_PARAMS];      /* valued parameters (real, integer, choice) */
  gboolean flag[SS_N_PARAMS];    /* flags (boolean parameters) */
  char *report_every;
  char *backend;
  char *devices;                 /* --devices all|0,1,... */
  gboolean allow_negative;
  /* real data (deblur without an acquisition record) */
  char *boundary;
  gboolean exclude_border;
  char *psf_from_star;
  char *psf_model;
  char *saturation;
  char *bad_pixels;
  /* many inputs (deblur) */
  char *output_dir;
  /* bench */
  char *batch;
  char *margin;
  char *size;
  char *width;
  char *height;
  gboolean whole;
  /* positional arguments (G_OPTION_REMAINING) */
  char **positional;
} CliOptions;

void cli_options_clear (CliOptions *options);

/* Which groups of options a subcommand accepts. */
typedef enum {
  CLI_GROUP_OUTPUT      = 1 << 0,  /* -o, --force */
  CLI_GROUP_INPUT       = 1 << 1,  /* --hdu, --plane */
  CLI_GROUP_PRINT       = 1 << 2,  /* --json, --quiet */
  CLI_GROUP_ACQUISITION = 1 << 3,  /* --psf, --ratio, --sensing, --noise, --seed */
  CLI_GROUP_SKY         = 1 << 4,  /* --sky */
  CLI_GROUP_SOLVER      = 1 << 5,  /* --solver ... --continuation */
  CLI_GROUP_TRUTH       = 1 << 6,  /* --truth, --psf, boundaries, PSF from stars (deblur) */
  CLI_GROUP_BENCH       = 1 << 7,  /* --backend, --solver, --size, ... */
  CLI_GROUP_MANY        = 1 << 8,  /* --output-dir (deblur of several inputs) */
  CLI_GROUP_PNG         = 1 << 9,  /* with OUTPUT: -o may name a PNG, --stretch */
} CliGroups;

/* Parses ARGV (ARGV[0] is the subcommand name) into OPTIONS with the
 * option groups GROUPS (cli_parse_options). Returns -1 on success, or the
 * exit status after printing the message (--help exits 0 inside GOption). */
int cli_parse_command_line (const char *command, const char *parameters, const char *summary,
                            const char *description, CliGroups groups,
                            int argc, char **argv, CliOptions *options);

/* What a subcommand's --help says of it. */
typedef struct {
  const char *command;      /* "quality": its usage line and parse errors name it */
  const char *parameters;   /* after the options on the usage line: "FILE", or "" */
  const char *summary;
  const char *description;  /* NULL: none */
} CliCommandHelp;

/* Adds a subcommand's options to CONTEXT; DATA is the caller's. */
typedef void (*CliAddOptions) (GOptionContext *context, gpointer data);

/* The one parse of every subcommand's command line: a GOptionContext with
 * HELP's texts and the options ADD_OPTIONS adds, parsed from ARGV (ARGV[0]
 * is the subcommand name; ARGV itself is left whole). Returns -1 when
 * parsed; otherwise prints "COMMAND: why (see '... COMMAND --help')" and
 * returns CLI_EXIT_USAGE. --help prints and exits 0 inside GOption. */
int cli_parse_options (const CliCommandHelp *help, CliAddOptions add_options, gpointer data,
                       int argc, char **argv);

/* The CliAddOptions of a subcommand whose options are one table: ENTRIES is
 * its GOptionEntry array, ended by an entry with no name. */
void cli_add_option_table (GOptionContext *context, gpointer entries);

/* A subcommand that takes no positional argument: -1 when REST (the
 * G_OPTION_REMAINING array, may be NULL) is empty, else prints
 * "COMMAND: unexpected argument 'ARG'" and returns CLI_EXIT_USAGE. */
int cli_refuse_arguments (const char *command, char *const *rest);

/* Messages: one line on stderr, "sharpsky-cli: " first. FILE (may be NULL) is
 * put before the message unless the message already names it. */
void cli_error (const char *file, const char *format, ...) G_GNUC_PRINTF (2, 3);
int cli_fail (int status, const char *file, const GError *error);
/* A note or warning on stderr (suppressed by --quiet). */
void cli_note (const CliOptions *options, const char *format, ...) G_GNUC_PRINTF (2, 3);
/* A warning for each solver option given a value that PARAMS's solver
 * takes no part of (`auto`'s candidates keep their own settings). */
void cli_note_unused_options (const CliOptions *o, const SsSolveParams *params);

/* Number parsing for option values; errors say which option and why. */
gboolean cli_parse_double (const char *option, const char *text, double *value, GError **error);
gboolean cli_parse_int (const char *option, const char *text, gint64 min, gint64 max,
                        gint64 *value, GError **error);

/* Where deblur takes the blur of a real image from. */
typedef enum {
  CLI_PSF_SPEC,     /* --psf SPEC */
  CLI_PSF_STAR,     /* --psf-from-star X,Y: a fit to the star there */
  CLI_PSF_AUTO,     /* --psf auto: fits to the brightest isolated unsaturated stars */
} CliPsfSource;

/* Parsed and validated settings of deblur/run/simulate. */
typedef struct {
  SsAcquisition acquisition;   /* psf (default box:5 where the command has one), ratio, ... */
  gboolean psf_given;          /* --psf SPEC, --psf auto or --psf-from-star */
  CliPsfSource psf_source;
  double star_x, star_y;       /* --psf-from-star, 0-based column and row */
  SsPsfModel psf_model;
  SsBoundary boundary;         /* default mirror (real data) */
  gboolean boundary_given;
  gboolean exclude_border;
  SsSaturationMode saturation_mode;   /* --saturation: default auto */
  double saturation_value;
  gboolean bad_pixels;         /* --bad-pixels auto (the default): cold and hot pixels out */
  gboolean alpha_auto;         /* --alpha auto */
  gboolean nonneg_given;       /* --nonneg or --allow-negative */
  SsSkyMode sky_mode;
  double sky_value;
  gboolean sky_given;
  SsSolveParams params;
  SsSolveParams real_params;   /* deblur of a real image: params on that default solver */
  SsBackendKind backend;
  int *devices;                /* --devices: CUDA device indices (g_free), NULL: device 0 */
  int n_devices;
  SsFitsReadOptions read;
  gboolean plane_given;
  int plane;
  SsStretch stretch;
} CliConfig;

void cli_config_clear (CliConfig *config);

/* Turns OPTIONS into CONFIG for GROUPS, with DEFAULT_RATIO when --ratio is
 * absent and DEFAULT_PSF (NULL: none) when --psf is absent. Returns -1 when
 * all is valid, else prints and returns CLI_EXIT_USAGE. */
int cli_config_from_options (const CliOptions *options, CliGroups groups, double default_ratio,
                             const char *default_psf, CliConfig *config);

/* The path checks every subcommand makes, before any heavy work, on each
 * file it will write (whatever its kind: image, markdown, CSV): refused
 * when OUTPUT is one of INPUTS (may be NULL), exists without --force, is a
 * folder or not a regular file, or its folder is missing or cannot be
 * written (ss_output_check). Prints the message; returns 2 for what is
 * fixed on the command line (an input, something in the way), 1 for a
 * folder that cannot be written, -1 when fine. */
int cli_check_output_path (const char *output, gboolean force, const char *const *inputs);

/* An image output's checks: exit 2 when OUTPUT is missing or its name
 * gives no format (ss_output_format_from_name), then
 * cli_check_output_path's. */
int cli_check_output (const char *output, gboolean force, const char *const *inputs);

/* The backend CONFIG asks for (--backend, --devices); prints and returns
 * NULL when it cannot be had. */
SsBackend *cli_backend_new (const CliConfig *config, const CliOptions *options);

/* Loads PATH (FITS or PNG, HDU and plane from CONFIG). With KEEP_PLANES the
 * image keeps every plane read (colour, cube); otherwise plane 0 is kept with
 * a note. Refuses a plane with no finite pixel; infinities become NaN
 * (blank). Returns -1 and sets *IMAGE, or prints and returns 1. */
int cli_load_image (const char *path, const CliConfig *config, const CliOptions *options,
                    gboolean keep_planes, SsImage **image);

/* Number of finite pixels. */
gsize cli_count_finite (const float *data, gsize n);

/* Human-readable names for settings, for HISTORY cards and summaries. */
const char *cli_sky_mode_to_string (SsSkyMode mode);
const char *cli_sensing_to_string (SsSensing sensing);

/* Subcommands (each returns the exit status). */
int cli_simulate (int argc, char **argv);
int cli_deblur (int argc, char **argv);   /* ss-cli-deblur.c */
/* deblur IN1 IN2 ... --output-dir DIR (ss-cli-deblur-many.c): DEBLUR_ONE
 * deblurs one input into options->output and returns -1 or its status. */
typedef int (*CliDeblurOne) (CliOptions *options, CliConfig *config, const char *input);
int cli_deblur_many (CliOptions *options, CliConfig *config, CliDeblurOne deblur_one);
int cli_run (int argc, char **argv);
int cli_bench (int argc, char **argv);

/* bench's options, read and checked once (ss-cli-bench.c) for the plain
 * bench and --whole alike, so that every bad value is bad usage (exit 2)
 * before any work, whichever of them runs. */
typedef struct {
  SsBenchParams params;       /* solver, size, iterations, seed, prior, boundary, ... */
  SsBackendKind backend;
  int *devices;               /* --devices (g_free); NULL: device 0 */
  int n_devices;
  int batch;                  /* --batch N; 0 without */
} CliBenchSettings;

/* How a bench reads the options the two share: their limits, their
 * defaults and what it refuses of them. */
typedef struct {
  gint64 min_side, max_side;               /* --size, --width, --height */
  gint64 max_iterations;                   /* --iters */
  SsSolverKind (*default_solver) (void);   /* without --solver */
  /* The size and iterations without --size, --width, --height or --iters,
   * once the solver is known. */
  void (*set_defaults) (SsBenchParams *params);
  /* Refuses (prints, returns CLI_EXIT_USAGE) what this bench would not
   * read or cannot run with; -1 when all is fine. */
  int (*refuse) (const CliOptions *options, const CliBenchSettings *settings);
} CliBenchMode;

/* bench --whole (ss-cli-bench-whole.c): its mode, then the bench itself on
 * settings read with it. */
extern const CliBenchMode cli_bench_whole_mode;
int cli_bench_whole (const CliOptions *options, const CliBenchSettings *settings);
/* bench's --solver help, listing the solvers it times (ss-cli-bench.c). */
const char *cli_bench_solver_help (void);
int cli_cs (int argc, char **argv);       /* ss-cli-cs.c */
int cli_info (int argc, char **argv);
int cli_quality (int argc, char **argv);  /* ss-cli-quality.c */

G_END_DECLS
