/* ss-cli-quality-private.h: what the files of `quality` share: the cases,
 * the method rows and the options (ss-cli-quality.c), the methods run as
 * deblur runs them (ss-cli-quality-run.c), the references with parameters
 * chosen with the truth (ss-cli-quality-references.c), and the tables,
 * mosaics and case files (ss-cli-quality-output.c). */
#pragma once

#include "ss-cli-deblur.h"

G_BEGIN_DECLS

/* ---- the cases, the rows, the options ---- */

/* Where a case's scene comes from. */
typedef enum {
  SOURCE_HDF,       /* data/hubble_deep_field.fits */
  SOURCE_AIA,       /* data/aia_171_level1.fits */
  SOURCE_STARS,     /* synthetic: stars dominate */
  SOURCE_GALAXIES,  /* synthetic: galaxies dominate */
} CaseSource;

/* Which --cases a case belongs to. */
typedef enum {
  CASES_FULL,       /* the published table */
  CASES_SMALL,      /* CI-sized crops */
  CASES_FRAMES,     /* frames large enough that `auto` judges them on a crop (a GPU's work) */
} CaseSet;

/* One case of the table: its scene, PSF and exposure. */
typedef struct {
  const char *name;
  CaseSource source;
  int x0, y0, size;     /* the crop (file sources) or the field's size */
  const char *psf;
  double peak, sky, read_noise;
  guint32 seed;
  CaseSet set;
} QualityCase;

/* A built case: the truth and its blurred exposure, both the crop's size. */
typedef struct {
  const QualityCase *spec;
  SsImage *truth;       /* electrons, no sky */
  SsImage *blurred;     /* electrons, sky included, header with GAIN/RDNOISE */
  SsPsfSpec psf;
} CaseData;

/* One method's line of a case's tables. */
typedef struct {
  char *method;         /* "fista", "rl (best, truth)", ... */
  char *note;           /* parameters chosen, or why it failed */
  double psnr, ssim, seconds;
  int iterations;
  float *x;             /* electrons, the crop's size, or NULL */
} MethodRow;

/* The command line of `quality`, parsed. */
typedef struct {
  gboolean json;
  gboolean quiet;
  gboolean force;       /* --force: replace the files written (markdown, trace, mosaics, cases) */
  char *cases;          /* "small", "full" or "frames" */
  char *only;           /* comma-separated case names, or NULL */
  char **methods;       /* --methods: the rows to run (solver names, rl-best, rl-tv-best,
                           wiener-best, siril), NULL for all */
  char *markdown;
  char *mosaics;
  char *write_cases;
  char *trace;          /* --trace: CSV of the best-iteration runs' curves */
  FILE *trace_file;
  char *backend;
  char *data_dir;
  gboolean no_siril;
  char **set;           /* --set NAME=VALUE: parameters for every solver row, as deblur's options */
  int draw;             /* --draw: 0 the published cases, N > 0 other scenes and noise */
  char **rest;          /* arguments left over (refused) */
} QualityOptions;

/* ---- running the methods (ss-cli-quality-run.c) ---- */

/* What a method sets on the command line besides --psf and --solver. */
typedef struct {
  const char *name;
  const char *value;
} OptionValue;

/* Tracks the best iterate against the truth (the references' oracle). */
typedef struct {
  const CliDeblurInput *in;
  CliPlaneJob *job;
  const CaseData *data;
  float *scratch;       /* the crop, input units */
  float *best;          /* NULL until the first report */
  double best_psnr;
  int best_iteration;
  double best_elapsed;  /* seconds into the solve at the best report */
  int last_iteration;
  GCancellable *past_best;   /* cancelled once the best lies far enough behind, or NULL */
  FILE *trace;          /* or NULL */
  const char *method;
} BestTracker;

/* One prepared deblur of the case: the config, the input, the plane job. */
typedef struct {
  CliOptions o;
  CliConfig c;
  CliDeblurInput in;
  CliPlaneJob job;
} Prepared;

/* A scored row for METHOD: X (the crop, or NULL) against DATA's truth; takes NOTE. */
MethodRow *cli_quality_score_row (const char *method, const CaseData *data, const float *x,
                                  double seconds, int iterations, char *note);
/* A row without numbers for METHOD, its note saying why it failed. */
MethodRow *cli_quality_failed_row (const char *method, const GError *error);
/* Prepares DATA's deblur with SOLVER and EXTRA as deblur's options; P needs
 * cli_quality_prepared_clear. */
gboolean cli_quality_prepare (const QualityOptions *q, const CaseData *data,
                              const SsSolverInfo *solver, const OptionValue *extra, int n_extra,
                              Prepared *p, GError **error);
/* Frees what cli_quality_prepare made. */
void cli_quality_prepared_clear (Prepared *p);
/* Solves P's problem; TRACKER, when not NULL, is fed a full-size preview at every report. */
gboolean cli_quality_solve_prepared (Prepared *p, SsBackend *backend, BestTracker *tracker,
                                     SsSolveResult *result, GError **error);
/* Whether deblur's option checks accept SOLVER with Q's --set pairs on a
 * case blurred by PSF, before any case is built; prints why not. */
gboolean cli_quality_options_accepted (const QualityOptions *q, const SsSolverInfo *solver,
                                       const char *psf);
/* SOLVER's row, run exactly as `deblur --psf PSF --solver NAME --alpha auto` runs it. */
MethodRow *cli_quality_run_as_user (const QualityOptions *q, const CaseData *data,
                                    const SsSolverInfo *solver, SsBackend *backend);

/* ---- the references (ss-cli-quality-references.c) ---- */

/* RL (TV "0") or RL-TV run past its best (at most ITERATIONS), the best iterate kept. */
MethodRow *cli_quality_run_best_iteration (const QualityOptions *q, const CaseData *data,
                                           SsBackend *backend, const char *method, const char *tv,
                                           int iterations);
/* Wiener (direct-fft) at the α that fits the truth best. */
MethodRow *cli_quality_run_best_wiener (const QualityOptions *q, const CaseData *data,
                                        SsBackend *backend);
/* siril-cli's path, or NULL when it is not installed. */
char *cli_quality_find_siril (void);
/* Siril's RL at its best iteration count, run by the siril-cli at SIRIL. */
MethodRow *cli_quality_run_siril (const char *siril, const CaseData *data);

/* ---- output (ss-cli-quality-output.c) ---- */

/* Writes DIR/CASE/{truth,blurred,psf}.fits for other tools (--write-cases). */
gboolean cli_quality_write_case (const char *dir, const CaseData *data, GError **error);
/* Writes the PNG mosaic at PATH: truth, blurred, then each row's estimate. */
gboolean cli_quality_write_mosaic (const char *path, const CaseData *data, GPtrArray *rows,
                                   GError **error);
/* Prints a case's text table on stdout. */
void cli_quality_print_text_case (const CaseData *data, double blurred_psnr, double blurred_ssim,
                                  GPtrArray *rows);
/* Prints one JSON object for a case and a method on stdout. */
void cli_quality_print_json_row (const CaseData *data, const char *method, double psnr, double ssim,
                                 double seconds, int iterations, const char *note);
/* Appends a case's markdown table to MD, with the mosaic linked when not NULL. */
void cli_quality_append_markdown_case (GString *md, const CaseData *data, double blurred_psnr,
                                       double blurred_ssim, GPtrArray *rows, const char *mosaic);
/* PATH as a link from the folder of FILE (relative when inside it). */
char *cli_quality_relative_link (const char *file, const char *path);
/* Appends the summary matrix to MD: one line per case, one PSNR column per method. */
void cli_quality_append_markdown_summary (GString *md, GPtrArray *all_rows, GPtrArray *names,
                                          const double *blurred);

G_END_DECLS
