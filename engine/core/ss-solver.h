/* ss-solver.h: solver parameters, progress reports and results.
 *
 * The problem is the LASSO  min_x 1/2 ||P C x - y||^2 + alpha ||x||_1  (with
 * optional x >= 0), or, for the direct solvers, the Tikhonov system
 * (A^T A + alpha I) x = A^T y with A = P C.
 * Solvers are run through a backend (ss-backend.h).
 */
#pragma once

#include <gio/gio.h>
#include "ss-model.h"

G_BEGIN_DECLS

/* Every solver has a descriptor in the solver table (ss-solver-table.c); the
 * kind is its index there. app/ and ui/ read the table, never the kinds. */
typedef enum {
  SS_SOLVER_CPADMM,
  SS_SOLVER_FISTA,
  SS_SOLVER_ISTA,
  SS_SOLVER_DIRECT,       /* dense Cholesky, then solve or explicit (GETS) inverse */
  SS_SOLVER_DIRECT_FFT,   /* Fourier-diagonal Tikhonov, exact when every pixel is observed */
  SS_SOLVER_IHT,          /* greedy, k-sparse (seed 003; engine/cs) */
  SS_SOLVER_NIHT,
  SS_SOLVER_HTP,
  SS_SOLVER_COSAMP,
  SS_SOLVER_ALM,          /* augmented Lagrangian l1 (seed 001): basis pursuit or the LASSO */
  SS_SOLVER_RL,           /* Richardson–Lucy, optionally with TV (RL-TV) */
  SS_SOLVER_ADMM_PRIOR,   /* circulant ADMM with TV / starlet priors and a weighted data term */
  SS_SOLVER_AUTO,         /* RL or ALM, whichever predicts held-out pixels better
                             (ss-solver-choice.h) */
  SS_N_SOLVERS
} SsSolverKind;

typedef enum {
  SS_DIRECT_SOLVE,        /* two triangular solves */
  SS_DIRECT_INVERSE,      /* explicit L^-1 by GETS, then two triangular products */
} SsDirectMethod;

/* When Richardson–Lucy stops before its iteration count. */
typedef enum {
  SS_RL_STOP_HOLDOUT,     /* where RL on 3/4 of the pixels best predicts the rest
                             (ss-rl-holdout.h), then all the data for 1.5 times that; the
                             default, so first (Compare's variant 0 is the defaults) */
  SS_RL_STOP_DISCREPANCY, /* at the first report point where ||P C x - y||²/m falls to the
                             noise level (ss-rl.h) */
  SS_RL_STOP_NONE,        /* run every iteration */
} SsRlStop;

/* Richardson–Lucy's background β where the data's floor is a flat sky
 * (ss-rl.h): the sky, or SS_RL_FLOOR_SIGMAS noise σ above it. */
typedef enum {
  SS_RL_FLOOR_HOLDOUT,    /* raised where no faint light lies below the sky's median and its
                             validation run predicts the held-out pixels nearly as well
                             (ss-rl.h; the sky without the hold-out stop); the default (and a
                             zeroed SsSolveParams's) */
  SS_RL_FLOOR_SKY,        /* the sky */
  SS_RL_FLOOR_RAISED,     /* SS_RL_FLOOR_SIGMAS σ above it */
} SsRlFloor;

/* The analysis prior of the ADMM-prior solver. */
typedef enum {
  SS_PRIOR_TV,            /* isotropic total variation */
  SS_PRIOR_STARLET,       /* l1 on the starlet scales, weighted by each scale's noise */
  SS_PRIOR_TV_STARLET,    /* both, with the same alpha */
} SsPrior;

/* Its data term. */
typedef enum {
  SS_DATA_WLS,            /* least squares weighted by 1 / (Poisson + read) variance */
  SS_DATA_LS,             /* plain least squares */
  SS_DATA_POISSON,        /* the Poisson likelihood of the data as measured (ss-data-weights.h) */
} SsDataTerm;

typedef struct {
  SsSolverKind kind;
  double alpha;           /* l1 weight (LASSO) / Tikhonov lambda (direct); >= 0 */
  double rho;             /* CPADMM penalty on v = P C x; > 0 */
  double sigma;           /* CPADMM penalty on z = x; > 0 */
  double tau;             /* CPADMM dual step, (0, (1+sqrt5)/2) */
  int iterations;         /* > 0 for iterative solvers */
  int report_every;       /* report every k iterations (and at the end); >= 1 */
  gboolean nonneg;        /* x >= 0 */
  gboolean backtracking;  /* FISTA: backtracking on the step (starts at 1/L) */
  gboolean continuation;  /* FISTA: lambda continuation from max|A^T y| down to alpha */
  SsDirectMethod direct_method;
  double tv;              /* RL-TV weight lambda (0: plain Richardson–Lucy); >= 0 */
  SsRlStop rl_stop;       /* Richardson–Lucy's stopping rule */
  SsRlFloor rl_floor;     /* Richardson–Lucy's background on a flat sky */
  double rl_accel;        /* Richardson–Lucy's extrapolation cap (ss-rl-accel.h); 0: plain RL */
  SsPrior prior;          /* ADMM-prior: the prior */
  SsDataTerm data_term;   /* ADMM-prior: the data term */
  int reweight;           /* ADMM-prior: reweighted-l1 stages (0: plain l1) */
  int preview_width;      /* 0: no preview in reports */
  int preview_height;
  gsize memory_limit;     /* bytes the dense direct path may use; 0 = what the machine has */
  double sparsity;        /* greedy: k, a count, or a fraction of the pixels when < 1 */
  int inner_iterations;   /* ALM: FISTA steps per outer step; HTP/CoSaMP: CG steps */
  gboolean holdout;       /* CPADMM, FISTA, ISTA: the iteration count from a validation run
                             on 3/4 of the pixels, as RL's hold-out rule (ss-pixel-l1.h) */
} SsSolveParams;

/* Defaults: CPADMM, alpha 1e-3, rho 1, sigma 1, tau 1, 300 iterations, report every 10. */
void ss_solve_params_init (SsSolveParams *params);
/* Checks every parameter against the parameter table's ranges, then the
 * chosen solver's own rules. */
gboolean ss_solve_params_validate (const SsSolveParams *params, GError **error);
const char *ss_solver_kind_to_string (SsSolverKind kind);
gboolean ss_solver_kind_from_string (const char *text, SsSolverKind *kind, GError **error);
gboolean ss_solver_is_iterative (SsSolverKind kind);

/* What a backend solves. All arrays are n = width * height floats, scaled units. */
/* What the caller already measured on the data (deblur does, on the image
 * before padding), so that a solver need not measure it again: on a
 * 26-megapixel frame each costs about as much as an iteration. */
typedef struct {
  double noise;           /* σ of the noise in y, scaled units; NAN: unknown */
  double median;          /* median of the observed y, scaled units; NAN: unknown */
} SsDataStats;

/* A rectangle of the frame. */
typedef struct {
  int x0, y0, width, height;
} SsRegion;

/* The held-out half of a validation run (ss-pixel-l1.h): what reports
 * measure the estimate's prediction against. */
typedef struct {
  const float *y;         /* n floats: the data at every pixel, the held-out ones included */
  const guint8 *counted;  /* n bytes: 1 for a held-out pixel whose error counts */
} SsHeldOut;

typedef struct {
  const SsOperator *op;
  const float *y;         /* P^T y: the observations, 0 where unobserved */
  const float *truth;     /* optional (NULL): MSE/PSNR are reported against it */
  double background;      /* the sky level subtracted from y before scaling (scaled units;
                             0 when unknown): y + background is the data as measured, the
                             photon counts Richardson–Lucy models */
  const SsDataStats *stats; /* NULL: solvers measure what they need on y */
  SsRegion image;         /* where a padded real image's own pixels lie in the frame (width 0:
                             the whole frame). The padding is made of them: a rule that splits
                             the pixels (RL's hold-out) splits only these. */
  const SsHeldOut *held_out; /* a validation run's held-out pixels, or NULL */
} SsProblem;

/* Do COUNT problems have one size and one c^ (masks and data may differ)?
 * Such problems can be solved as one batch. */
gboolean ss_problems_share_operator (const SsProblem *problems, int count);

typedef struct {
  int iteration;          /* iterations done */
  double elapsed;         /* seconds since the solve started */
  double mse;             /* ||x - truth||^2 / n, NAN without a truth */
  double psnr;            /* 10 log10(1 / mse), NAN without a truth */
  double residual;        /* ||P C x - y||^2 / m */
  double rel_change;      /* ||x_k - x_{k-1}|| / ||x_k|| */
  double objective;       /* 1/2 ||P C x - y||^2 + alpha ||x||_1 */
  double held_out;        /* sum over SsProblem.held_out's counted pixels of (C x - y)^2;
                             NAN without one */
  const float *preview;   /* preview_width x preview_height box-averaged estimate, or NULL;
                             valid only during the callback */
  int preview_width;
  int preview_height;
  gboolean final;
} SsReport;

/* Runs on the solver's thread; a UI hands the data to its main loop itself. */
typedef void (*SsReportFunc) (const SsReport *report, gpointer user_data);
/* A report on problem INDEX of a batch (ss_backend_solve_batch). */
typedef void (*SsBatchReportFunc) (int index, const SsReport *report, gpointer user_data);

typedef struct {
  float *x;               /* n floats, scaled units (g_free) */
  int width, height;
  int iterations;         /* all of them, those of a validation run included */
  int validation_iterations; /* of them, those of a run whose estimate was set aside (RL's
                             hold-out rule, ss-rl-holdout.h); 0 without one */
  /* Where the hold-out rule ran an outer/inner solver in other outer steps
   * than asked (ALM, ss_pixel_l1_holdout_slicing): the inner steps per
   * outer step of the validation and of the full solve; 0 otherwise. */
  int validation_inner_iterations, full_inner_iterations;
  /* Where the validation's first outer step was read again in shorter ones
   * (ss_pixel_l1_finer_readings): their inner steps, those the full solve
   * runs in; 0 otherwise. */
  int refined_inner_iterations;
  /* The greedy solvers' k as the hold-out rule chose it (ss-pixel-l1.h),
   * a count or a fraction as SsSolveParams.sparsity; 0 otherwise. */
  double sparsity;
  /* A solver with candidates (ss-solver-choice.h): the iterations of the
   * candidates' runs, counted in iterations too, and which was chosen and
   * why, in words (g_free); 0 and NULL otherwise. */
  int choice_iterations;
  char *choice;
  /* RL's floor (ss-rl.h): above the sky in the estimate; where the hold-out
   * rule chose it, the iterations of the second validation run (with the
   * floor raised; counted in validation_iterations too) and its held-out
   * error over the first's; 0 otherwise. The sky's tail the rule read first
   * (ss-rl.h) where it was asked on a flat sky; 0 otherwise. */
  gboolean floor_raised;
  int floor_iterations;
  double floor_error_ratio;
  double floor_sky_tail;
  /* RL's brightness blend (ss-rl-blend.h): the full run's iterations at
   * which its earlier image was kept, and the blend's held-out error over
   * the unblended one's in the validation run; 0 without a blend. */
  int blend_early_iterations;
  double blend_error_ratio;
  /* RL's full run's extrapolation cap where the hold-out rule raised it
   * above the one asked (ss_rl_holdout_full_accel: the validation reached
   * its cap); 0 otherwise. */
  double full_accel;
  double seconds;         /* solve time, setup included, file I/O excluded */
  double mse, psnr, residual, objective, rel_change;
  gsize peak_memory_bytes;/* engine buffers (host for CPU, device for CUDA) */
  char *backend;          /* "cpu" or "cuda" */
  char *device;
  char *warning;          /* e.g. a fall-back from CUDA to the CPU, or NULL */
  double phase_seconds[4];/* direct: normal matrix, Cholesky, inverse/solve, apply */
} SsSolveResult;

void ss_solve_result_clear (SsSolveResult *result);
/* DST = SRC without the estimate (x NULL), every string its own copy, so
 * that clearing either leaves the other whole. */
void ss_solve_result_copy_summary (const SsSolveResult *src, SsSolveResult *dst);
/* Adds to RESULT's warning when its estimate of N pixels is flat, spanning
 * a ten-thousandth of the data Y's scale or less: no image is in it (α at or
 * above the level where the solution is zero, too few iterations of a
 * solver that takes the data in at its second step, nearly every pixel
 * left out), and a flat file must not be written silently. */
void ss_solve_result_warn_if_flat (SsSolveResult *result, const float *y, gsize n);
/* Adds TEXT (may be NULL) to RESULT's warning, after a "; ", unless the
 * warning already says it (the planes of a batch often share one). */
void ss_solve_result_add_warning (SsSolveResult *result, const char *text);
/* How many of the N values at DATA are NaN or infinite. */
gsize ss_count_non_finite (const float *data, gsize n);
/* FALSE with an SS_ERROR_NUMERIC error, and RESULT's estimate freed, when a
 * pixel of its N is not finite: a solve that diverged (an α far too small
 * for the data, a blur no image explains) gives no image, and neither the
 * app nor the command line may show or write one. */
gboolean ss_solve_result_check_finite (SsSolveResult *result, gsize n, GError **error);
/* What a hold-out rule chose, in words ("hold-out: 55 validating on 3/4
 * of the pixels, then 82 on all of them; sparsity 0.9 chosen"), for a
 * summary, a status line or a FITS HISTORY card; NULL (no rule ran) or
 * g_free. */
char *ss_solve_result_describe_holdout (const SsSolveResult *result);

/* ---- the solver table ---------------------------------------------------
 *
 * What the CLI's options, --help and validation, the app's solver list and
 * parameter controls, Compare, the JSON summary and the FITS HISTORY know of
 * the solvers, they read here. Adding a solver: its kind above, its CPU (and
 * CUDA) files, one descriptor in ss-solver-table.c, its tests. */

/* The parameters a solver may read from SsSolveParams. */
typedef enum {
  SS_PARAM_ALPHA,
  SS_PARAM_RHO,
  SS_PARAM_SIGMA,
  SS_PARAM_TAU,
  SS_PARAM_ITERATIONS,
  SS_PARAM_NONNEG,
  SS_PARAM_BACKTRACKING,
  SS_PARAM_CONTINUATION,
  SS_PARAM_DIRECT_METHOD,
  SS_PARAM_SPARSITY,
  SS_PARAM_INNER_ITERATIONS,
  SS_PARAM_TV,
  SS_PARAM_RL_STOP,
  SS_PARAM_RL_FLOOR,
  SS_PARAM_RL_ACCEL,
  SS_PARAM_PRIOR,
  SS_PARAM_DATA_TERM,
  SS_PARAM_REWEIGHT,
  SS_PARAM_HOLDOUT,
  SS_N_PARAMS
} SsParamId;

typedef enum {
  SS_PARAM_REAL,          /* double field */
  SS_PARAM_INT,           /* int field */
  SS_PARAM_BOOL,          /* gboolean field: a flag on the command line */
  SS_PARAM_CHOICE,        /* int (enum) field: one of CHOICES by name */
} SsParamType;

typedef struct {
  SsParamId id;
  const char *name;       /* option --NAME, JSON key, HISTORY keyword */
  const char *label;      /* the app's label */
  const char *help;       /* one sentence, for --help and tooltips */
  SsParamType type;
  double default_value;   /* unless the solver's descriptor says otherwise */
  double min, max;        /* valid range (REAL, INT) */
  gboolean min_open, max_open;  /* the bound itself is excluded */
  gboolean log_scale;     /* the app steps in decades */
  double ui_min, ui_max;  /* the app's control range, inside [min, max] */
  gboolean allows_auto;   /* the CLI accepts "auto" (chosen from the data) */
  const char *const *choices;        /* CHOICE: NULL-terminated names */
  const char *const *choice_labels;  /* CHOICE: the app's labels, same order */
  gsize offset;           /* where the value lives in SsSolveParams */
} SsParamInfo;

/* What a solver can do. */
typedef enum {
  SS_SOLVER_ITERATIVE     = 1 << 0,  /* iterations, live reports and preview */
  SS_SOLVER_MASKS         = 1 << 1,  /* handles an observation mask (ratio < 1, blank pixels) */
  SS_SOLVER_PRIOR         = 1 << 2,  /* a prior beyond pixel l1 / Tikhonov */
  SS_SOLVER_NEEDS_REGION  = 1 << 3,  /* dense n x n: large images need a region of interest */
  SS_SOLVER_BATCHES       = 1 << 4,  /* the GPU solves problems sharing an operator as one batch */
  SS_SOLVER_PIXEL_L1      = 1 << 5,  /* pixel sparsity (the l1 LASSO, the greedy l0 solvers):
                                        positivity at the data's floor on a real image, and
                                        the hold-out rule (ss-pixel-l1.h) */
} SsSolverCaps;

typedef gboolean (*SsSolveFunc) (const SsProblem *problem, const SsSolveParams *params,
                                 SsReportFunc report, gpointer user_data,
                                 GCancellable *cancellable, SsSolveResult *result,
                                 GError **error);

/* The CUDA backend's entry for a solver (engine/cuda/ss-cuda-internal.h);
 * opaque here. */
typedef struct _SsCudaSolverEntry SsCudaSolverEntry;

typedef struct {
  SsParamId id;
  double value;
} SsParamDefault;

#define SS_SOLVER_MAX_CANDIDATES 2

typedef struct {
  SsSolverKind kind;
  const char *name;       /* --solver NAME, JSON, HISTORY */
  const char *label;      /* the app's name */
  const char *help;       /* one line */
  SsSolverCaps caps;
  guint64 params;         /* bit (1 << SsParamId) for each parameter it reads */
  SsParamDefault defaults[4];  /* its own defaults (first n_defaults) */
  int n_defaults;
  const char *phases[5];  /* names of the timed phases in phase_seconds, NULL-ended */
  gboolean compare_by_default;  /* ticked in the app's Compare list */
  /* The algorithm of engine/cs (ss_cs_algorithm_from_string) that solves
   * this solver's problem on random k-sparse vectors, as `sharpsky-cli cs`
   * does: the app's Phase transition window lists the solvers that have
   * one, and the image solvers built on engine/cs (ss_cpu_cs_image) run it.
   * NULL: none. */
  const char *cs_algorithm;
  /* --alpha auto multiplies the noise rule (ss_alpha_auto) by this; 0 means 1.
   * A prior's best weight is in its own units. */
  double alpha_auto_scale;
  /* Under the hold-out rule (SS_PARAM_HOLDOUT, ss-pixel-l1.h), a solver
   * whose iteration is an outer step of inner steps runs outer steps of at
   * most this many inner steps, read at every one, with the same budget of
   * outer × inner steps: ALM's 50 FISTA steps and HTP's and CoSaMP's 20 CG
   * steps are too coarse a reading for an estimate that is best after a few
   * of them. 0: the solver's own iterations, read every SS_RL_HOLDOUT_EVERY. */
  int holdout_inner_iterations;
  /* With such outer steps, where the held-out error still falls at the
   * validation's cap: TRUE runs the full solve as asked, in the solver's own
   * outer steps (ALM: its long FISTA runs converge faster on star fields,
   * 59.16 dB on quality's bright stars against 51.86 in steps of 10), FALSE
   * in the validation's short ones (HTP, CoSaMP: a whole least-squares fit
   * on 90% of the pixels fits the noise; CoSaMP on the galaxies 55.56 dB
   * against 49.97, though 55.62 against 57.05 on the bright stars). */
  gboolean holdout_cap_as_asked;
  /* Under the hold-out rule, the full solve takes the earliest count whose
   * held-out error is within one standard error of the least
   * (ss_pixel_l1_pick); FALSE: the least. */
  gboolean holdout_one_se;
  /* A solver that runs others and keeps the better (ss-solver-choice.h):
   * the first n_candidates of these, the first chosen when nothing tells
   * them apart. */
  SsSolverKind candidates[SS_SOLVER_MAX_CANDIDATES];
  int n_candidates;
  SsSolveFunc cpu;
  const SsCudaSolverEntry *cuda;   /* NULL: CPU only, or a build without CUDA */
  /* Rules beyond the parameter ranges, or NULL. */
  gboolean (*check) (const SsSolveParams *params, GError **error);
  /* What the solver needs of the problem before it can start (RL: a blur,
   * not random sensing, and some positive data), or NULL: asked by a
   * choice before it runs the solver as a candidate, so that a refusal is
   * told from a failed run; the solver checks again itself. */
  gboolean (*check_problem) (const SsProblem *problem, GError **error);
  /* SS_SOLVER_NEEDS_REGION: the most unknowns that fit in BYTES, and the
   * check made before allocating (SS_ERROR_TOO_LARGE naming what would fit). */
  gsize (*max_unknowns) (gsize bytes, double observed_fraction, const SsSolveParams *params);
  gboolean (*check_size) (int width, int height, gsize observed, const SsSolveParams *params,
                          GError **error);
} SsSolverInfo;

guint ss_solver_count (void);
/* Solvers in the order they are listed to users. */
const SsSolverInfo *ss_solver_nth (guint index);
const SsSolverInfo *ss_solver_info (SsSolverKind kind);
/* By name (case-insensitive); NULL with an error listing the names. */
const SsSolverInfo *ss_solver_find (const char *name, GError **error);
/* "cpadmm, fista, ista, direct or direct-fft". g_free. */
char *ss_solver_list_names (void);
gboolean ss_solver_uses (const SsSolverInfo *info, SsParamId id);
gboolean ss_solver_has_cuda (const SsSolverInfo *info);
/* The solver deblur uses on a real image when no --solver is given: the
 * best on `sharpsky-cli quality` without the truth (see the table). */
SsSolverKind ss_solver_default_for_real_data (void);
/* The factor --alpha auto applies for PARAMS's solver (1 unless its descriptor says). */
double ss_solver_alpha_auto_scale (const SsSolveParams *params);
/* The α "alpha auto" gives PARAMS's solver from RULE (ss_alpha_auto's
 * value): RULE times the solver's scale. */
double ss_solver_alpha_auto (const SsSolveParams *params, double rule);
/* What "alpha auto" sets on the command line, from RULE: that α, and the
 * hold-out rule where the solver takes it. */
void ss_solver_apply_alpha_auto (SsSolveParams *params, double rule);
/* Before allocating: does a WIDTH x HEIGHT problem with OBSERVED pixels fit
 * the memory of PARAMS's solver? TRUE for solvers with no such limit. */
gboolean ss_solver_check_size (const SsSolveParams *params, int width, int height,
                               gsize observed, GError **error);

const SsParamInfo *ss_param_info (SsParamId id);
/* The value of a parameter as a double (BOOL: 0/1, CHOICE: the index). */
double ss_param_get (const SsSolveParams *params, const SsParamInfo *info);
void ss_param_set (SsSolveParams *params, const SsParamInfo *info, double value);
gboolean ss_param_in_range (const SsParamInfo *info, double value);
/* "NAME TEXT: must lie in [min, max]" (or "be >= min"); always FALSE. */
gboolean ss_param_range_error (const SsParamInfo *info, const char *name, const char *text,
                               GError **error);
/* The default of ID for the solver INFO. */
double ss_param_default (const SsSolverInfo *info, SsParamId id);
/* Parses TEXT ("1e-3", "yes", "inverse") into *VALUE, checking the range;
 * errors name the option. "auto" is not handled here. */
gboolean ss_param_parse (const SsParamInfo *info, const char *text, double *value,
                         GError **error);
/* The value as text: "0.001", "300", "yes", "inverse". g_free. */
char *ss_param_format (const SsParamInfo *info, double value);
/* Calls FUNC for each parameter PARAMS's solver reads, in table order, with
 * its value as ss_param_format writes it: HISTORY cards, JSON and summaries. */
typedef void (*SsParamFunc) (const SsParamInfo *info, double value, const char *text,
                             gpointer user_data);
void ss_solve_params_foreach_used (const SsSolveParams *params, SsParamFunc func,
                                   gpointer user_data);
/* The ways to run a solver that Compare lists: one per value of each choice
 * it reads ("direct": Cholesky solve, GETS inverse). VARIANT in
 * [0, ss_solver_n_variants) sets PARAMS's kind and choices; 0 is the
 * solver's defaults. */
guint ss_solver_n_variants (const SsSolverInfo *info);
void ss_solver_apply_variant (const SsSolverInfo *info, guint variant, SsSolveParams *params);
/* Copies FROM's kind and the choices its solver reads into TO. */
void ss_solve_params_copy_choices (const SsSolveParams *from, SsSolveParams *to);
/* "Direct (dense), GETS explicit inverse" for people, "direct-inverse" for
 * scripts: the solver and its choices when they are not the default. g_free. */
char *ss_solve_params_label (const SsSolveParams *params);
char *ss_solve_params_name (const SsSolveParams *params);
/* Sets every parameter of PARAMS to the solver's default; keeps the rest. */
void ss_solve_params_set_defaults (SsSolveParams *params, SsSolverKind kind);

/* Phases of a device batch solve (ss_cuda_solve_batch), timed on the host
 * with a stream sync at each boundary only (never per iteration), for the
 * bench's breakdown: sizing + allocation, upload + zeroing, the first
 * enqueue of plain iterations (CUDA graph capture and instantiation, host
 * time while the device is idle), the other iterations, the report points'
 * metrics, the estimates' download, and freeing the device buffers. */
typedef enum {
  SS_BATCH_PHASE_SETUP,
  SS_BATCH_PHASE_UPLOAD,
  SS_BATCH_PHASE_CAPTURE,
  SS_BATCH_PHASE_ITERATE,
  SS_BATCH_PHASE_REPORT,
  SS_BATCH_PHASE_DOWNLOAD,
  SS_BATCH_PHASE_FREE,
  SS_BATCH_PHASES
} SsBatchPhase;

/* "setup", "upload", ... (NULL past the end). */
const char *ss_batch_phase_name (int phase);

G_END_DECLS
