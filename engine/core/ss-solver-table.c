/* ss-solver-table.c: the solvers and their parameters, described once.
 *
 * The CLI builds its options, --help and checks from these tables; the app
 * builds its solver list, parameter controls and Compare list; JSON summaries
 * and FITS HISTORY name what a solver used. A new solver is a new row in
 * `solvers` (plus its kind and its files), never a change in app/ or ui/.
 */
#include "ss-solver.h"
#include "ss-config.h"
#include "ss-cpu.h"
#include "ss-dense.h"
#include "ss-error.h"
#include "ss-rl.h"
#include "ss-rl-accel.h"
#include "ss-solver-choice.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

#if SHARPSKY_HAVE_CUDA
#include "cuda/ss-cuda.h"
#define CUDA_ENTRY(entry) (&(entry))
#else
#define CUDA_ENTRY(entry) NULL
#endif

#define GOLDEN_RATIO 1.6180339887498949
#define FIELD(name) offsetof (SsSolveParams, name)
#define USES(id) (G_GUINT64_CONSTANT (1) << (id))

static const char *const direct_methods[] = { "solve", "inverse", NULL };
static const char *const direct_method_labels[] = {
  "Cholesky, two triangular solves", "GETS explicit inverse", NULL,
};

static const char *const rl_stops[] = { "holdout", "discrepancy", "none", NULL };
static const char *const rl_stop_labels[] = {
  "Where three quarters of the pixels best predict the rest", "When the residual reaches the noise",
  "Run every iteration", NULL,
};

/* In SsRlFloor's order, the default first. */
static const char *const rl_floors[] = { "holdout", "sky", "raised", NULL };
static const char *const rl_floor_labels[] = {
  "Chosen by the hold-out rule", "The sky", "Half a σ above the sky", NULL,
};

static const char *const priors[] = { "tv", "starlet", "tv+starlet", NULL };
static const char *const prior_labels[] = {
  "Total variation", "Starlet ℓ1, per-scale noise weights", "TV and starlet", NULL,
};

static const char *const data_terms[] = { "wls", "ls", "poisson", NULL };
static const char *const data_term_labels[] = {
  "Weighted by the Poisson + read noise variance", "Plain least squares",
  "Poisson likelihood", NULL,
};

/* --alpha auto for the Tikhonov solvers (direct, direct-fft): 6 times the
 * LASSO rule. On quality's seven full cases (direct-fft on the GPU,
 * 2026-11-25), PSNR at 1 / 3 / 10 times the rule: Hubble Gaussian 28.20 /
 * 30.67 / 31.43 (input 29.53), Hubble Moffat 30.73 / 31.56 / 30.96, galaxies
 * 49.05 / 49.61 / 49.57, bright stars 47.25 / 47.08 / 46.67, faint stars
 * 45.63 / 45.69 / 45.75, Sun 35.26 / 36.39 / 35.96 and 30.52 / 30.48 /
 * 29.87: at 1 the Hubble crop fell below its input. 3, the factor until
 * 2026-11-26, left the held-out draw 1's galaxies (48.38 against 48.49) and
 * two scenes off the suite (frame-filling emission, unblurred hot pixels;
 * QUALITY.md) under their input; 6 is above it on all of them and on the 28
 * cases of draws 1-4 (by 0.17 dB at least), 0.07 dB lower than 3 summed over
 * the seven published cases. */
#define TIKHONOV_AUTO_SCALE 6.0

static const SsParamInfo params[SS_N_PARAMS] = {
  [SS_PARAM_ALPHA] = {
    SS_PARAM_ALPHA, "alpha", "α (λ)",
    "Weight of the regulariser: the l1 term of the LASSO solvers, the Tikhonov term of the "
    "direct ones. Larger: cleaner and smoother, faint detail lost; smaller: closer fit, more noise",
    SS_PARAM_REAL, 1e-3, 0, INFINITY, FALSE, FALSE, TRUE, 1e-8, 10, TRUE,
    .offset = FIELD (alpha) },
  [SS_PARAM_RHO] = {
    SS_PARAM_RHO, "rho", "ρ",
    "ADMM penalty tying the data split v to PCx; larger trusts the data harder per iteration",
    SS_PARAM_REAL, 1, 0, INFINITY, TRUE, FALSE, TRUE, 1e-3, 1e3, FALSE, .offset = FIELD (rho) },
  [SS_PARAM_SIGMA] = {
    SS_PARAM_SIGMA, "sigma", "σ",
    "ADMM penalty tying the prior's split z to x; the shrinkage per iteration is alpha/sigma",
    SS_PARAM_REAL, 1, 0, INFINITY, TRUE, FALSE, TRUE, 1e-3, 1e3, FALSE, .offset = FIELD (sigma) },
  [SS_PARAM_TAU] = {
    SS_PARAM_TAU, "tau", "τ",
    "ADMM dual step, in (0, (1+sqrt 5)/2); up to 1.6 can speed convergence",
    SS_PARAM_REAL, 1, 0, GOLDEN_RATIO, TRUE, TRUE, TRUE, 1e-2, 1.6, FALSE,
    .offset = FIELD (tau) },
  [SS_PARAM_ITERATIONS] = {
    SS_PARAM_ITERATIONS, "iters", "Iterations",
    "How many iterations to run (Stop in the app ends a run early and keeps its estimate)",
    SS_PARAM_INT, 300, 1, 1e9, FALSE, FALSE, FALSE, 1, 100000, FALSE,
    .offset = FIELD (iterations) },
  [SS_PARAM_NONNEG] = {
    SS_PARAM_NONNEG, "nonneg", "Non-negative",
    "Constrain the image to x >= 0", SS_PARAM_BOOL, 0, 0, 1, .offset = FIELD (nonneg) },
  [SS_PARAM_BACKTRACKING] = {
    SS_PARAM_BACKTRACKING, "backtracking", "Backtracking",
    "Backtracking line search on the step, starting at 1/L", SS_PARAM_BOOL, 0, 0, 1,
    .offset = FIELD (backtracking) },
  [SS_PARAM_CONTINUATION] = {
    SS_PARAM_CONTINUATION, "continuation", "λ continuation",
    "Continuation: lambda from max|A^T y| down to alpha", SS_PARAM_BOOL, 0, 0, 1,
    .offset = FIELD (continuation) },
  [SS_PARAM_DIRECT_METHOD] = {
    SS_PARAM_DIRECT_METHOD, "direct-method", "Method",
    "solve (two triangular solves) or inverse (explicit inverse by GETS, reusable for every "
    "further image with the same operator)",
    SS_PARAM_CHOICE, SS_DIRECT_SOLVE, 0, 1, .choices = direct_methods,
    .choice_labels = direct_method_labels, .offset = FIELD (direct_method) },
  [SS_PARAM_SPARSITY] = {
    SS_PARAM_SPARSITY, "sparsity", "Sparsity k",
    "How many pixels the greedy solvers keep: a count, or a fraction of the pixels when "
    "below 1 (a star field: the stars and their cores)",
    SS_PARAM_REAL, 0.01, 0, INFINITY, TRUE, FALSE, TRUE, 1e-4, 1e5, FALSE,
    .offset = FIELD (sparsity) },
  [SS_PARAM_INNER_ITERATIONS] = {
    SS_PARAM_INNER_ITERATIONS, "inner-iters", "Inner iterations",
    "Steps of the inner solver per iteration: FISTA steps per ALM step, CG steps of each "
    "least-squares projection of HTP and CoSaMP",
    SS_PARAM_INT, 50, 1, 1e6, FALSE, FALSE, FALSE, 1, 1000, FALSE,
    .offset = FIELD (inner_iterations) },
  [SS_PARAM_TV] = {
    SS_PARAM_TV, "tv", "TV weight",
    "Richardson–Lucy with total variation (Dey et al. 2006): each step is divided by "
    "1 − tv·div(∇x/|∇x|); 0 is plain RL, about 0.002 smooths noise, above 0.05 flattens detail",
    /* Linear: 0 (plain RL) must be reachable in the app's control. */
    SS_PARAM_REAL, 0, 0, 1, FALSE, FALSE, FALSE, 0, 0.1, FALSE, .offset = FIELD (tv) },
  [SS_PARAM_RL_STOP] = {
    SS_PARAM_RL_STOP, "stop", "Stop",
    "Richardson–Lucy fits the noise if run long: 'holdout' (the default) first runs RL on "
    "three quarters of the image's pixels, finds the iteration whose prediction of the other "
    "quarter is best, then runs all the data for 1.5 times that, both within the iteration "
    "count; "
    "'discrepancy' stops at the first report where the residual ||PCx − y||²/m falls to the "
    "noise variance estimated from the data; 'none' runs every iteration",
    SS_PARAM_CHOICE, SS_RL_STOP_HOLDOUT, 0, 2, .choices = rl_stops,
    .choice_labels = rl_stop_labels, .offset = FIELD (rl_stop) },
  [SS_PARAM_RL_FLOOR] = {
    SS_PARAM_RL_FLOOR, "floor", "Floor",
    "Richardson–Lucy's background where the data's floor is a flat sky: 'sky', or 'raised' "
    "half a noise σ above it, the Poisson likelihood with an l1 prior (the empty sky goes to 0 "
    "and the stars keep sharpening: up to +5.5 dB on star fields, but up to −5.7 on the Hubble "
    "field at 10²–10³ e⁻, whose faint light below σ is real); 'holdout' (the default) raises it "
    "where the data smoothed by the blur show no faint light below the sky's median and a "
    "second validation run's held-out error is within 15% of the sky's (without --stop "
    "holdout: the sky)",
    SS_PARAM_CHOICE, SS_RL_FLOOR_HOLDOUT, 0, 2, .choices = rl_floors,
    .choice_labels = rl_floor_labels, .offset = FIELD (rl_floor) },
  [SS_PARAM_RL_ACCEL] = {
    SS_PARAM_RL_ACCEL, "accel", "Acceleration",
    "Richardson–Lucy accelerated (Biggs and Andrews 1997): each step starts from the estimate "
    "pushed along its last move, by as much of it as the last two moves agree, at most this. "
    "0 (the default) is plain RL, but for the run on all the data where the hold-out "
    "validation reached its cap, which is accelerated at 0.3; 0.5 runs about half the "
    "iterations, usually 0.01-0.3 dB lower, more on star fields the iteration cap stops",
    SS_PARAM_REAL, 0, 0, 0.9, FALSE, FALSE, FALSE, 0, 0.9, FALSE,
    .offset = FIELD (rl_accel) },
  [SS_PARAM_PRIOR] = {
    SS_PARAM_PRIOR, "prior", "Prior",
    "tv (isotropic total variation), starlet (l1 on the starlet wavelet scales, each weighted "
    "by the noise it carries) or tv+starlet (the default: never below the input on quality's "
    "small cases, where starlet alone fell 0.1 dB below it on the Hubble field)",
    SS_PARAM_CHOICE, SS_PRIOR_TV_STARLET, 0, 2, .choices = priors, .choice_labels = prior_labels,
    .offset = FIELD (prior) },
  [SS_PARAM_DATA_TERM] = {
    SS_PARAM_DATA_TERM, "data-term", "Data term",
    "wls weights each pixel by the inverse of its Poisson + read noise variance estimated from "
    "the data; poisson is the Poisson likelihood of the data as measured; ls is plain least "
    "squares (the default: it measured better than wls, 0.1-2 dB, on every small quality case, "
    "and than poisson on six of the seven full cases)",
    SS_PARAM_CHOICE, SS_DATA_LS, 0, 2, .choices = data_terms,
    .choice_labels = data_term_labels, .offset = FIELD (data_term) },
  [SS_PARAM_REWEIGHT] = {
    SS_PARAM_REWEIGHT, "reweight", "Reweighting",
    "Reweighted l1: after each of N equal stages, every coefficient's threshold is scaled by "
    "noise/(noise + |coefficient|), so bright sources are not shrunk; 0 is plain l1",
    SS_PARAM_INT, 0, 0, 20, FALSE, FALSE, FALSE, 0, 10, FALSE, .offset = FIELD (reweight) },
  [SS_PARAM_HOLDOUT] = {
    SS_PARAM_HOLDOUT, "holdout", "Stop by hold-out",
    "Choose the iteration count from the data, as RL's hold-out rule: first solve on three "
    "quarters of the image's pixels for at most half the iteration count, find the iteration "
    "whose prediction of the other quarter is best, then solve all the data for that many, "
    "within the iteration count (ALM: read every outer step of at most 10 inner steps, the same "
    "budget; the greedy solvers: also their sparsity, the best of k, 3k, 10k, 30k and 90k). "
    "CPADMM, ISTA and the greedy solvers take the earliest iteration within one standard error "
    "of the best; a count at the first reading is read again at every step. "
    "--alpha auto turns it on: the LASSO's own minimiser fits the noise of extended light",
    SS_PARAM_BOOL, 0, 0, 1, .offset = FIELD (holdout) },
};

/* Without a Tikhonov weight the direct solvers divide by the blur's
 * transfer itself, which a Gaussian's tails bring within rounding of 0:
 * every frequency's noise is amplified without bound and the image is lost
 * (a tiny weight, 1e-9, still shows what an inverse filter does). */
static gboolean
direct_needs_positive_alpha (const SsSolveParams *p, GError **error)
{
  if (p->alpha > 0)
    return TRUE;
  g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT,
               "alpha = %g: the %s solver needs a Tikhonov weight > 0 (without one it divides "
               "by the blur's transfer, near 0 at high frequencies)", p->alpha,
               ss_solver_info (p->kind)->name);
  return FALSE;
}

static gsize
dense_max_unknowns (gsize bytes, double observed_fraction, const SsSolveParams *p)
{
  return ss_dense_max_unknowns (bytes, observed_fraction, p->direct_method);
}

static gboolean
dense_check_size (int width, int height, gsize observed, const SsSolveParams *p, GError **error)
{
  return ss_dense_check_fits (width, height, observed, p->direct_method, p->memory_limit, error);
}

#define LASSO_COMMON (USES (SS_PARAM_ALPHA) | USES (SS_PARAM_ITERATIONS) | USES (SS_PARAM_NONNEG))

/* HTP's and CoSaMP's iterations are least-squares fits on a support, 20 CG
 * steps each: on the k the hold-out rule picks for extended light (90% of
 * the pixels) one such fit already amplifies the noise, so the rule reads
 * them after every 2 CG steps (same budget). quality's seven cases, HTP
 * PSNR dB with readings after 1, 2 and 5 CG steps: Hubble FWHM 3 30.81 /
 * 31.13 / 28.68 (input 29.53), faint stars 46.39 / 46.03 / 45.55 (45.57),
 * CoSaMP on the faint stars 45.54 / 45.84 / 45.54. */
#define GREEDY_HOLDOUT_INNER 2
#define GREEDY_COMMON (USES (SS_PARAM_SPARSITY) | USES (SS_PARAM_ITERATIONS) | USES (SS_PARAM_NONNEG) \
                       | USES (SS_PARAM_HOLDOUT))
#define CUDA_CS_ENTRY CUDA_ENTRY (ss_cuda_cs_entry)

/* In the order users see them. */
static const SsSolverInfo solvers[SS_N_SOLVERS] = {
  [SS_SOLVER_CPADMM] = {
    .kind = SS_SOLVER_CPADMM, .name = "cpadmm", .label = "CPADMM",
    .help = "LASSO by circulant ADMM: every inverse diagonal in Fourier space (seed 000, Alg. 3)",
    .caps = SS_SOLVER_ITERATIVE | SS_SOLVER_MASKS | SS_SOLVER_BATCHES | SS_SOLVER_PIXEL_L1,
    .params = LASSO_COMMON | USES (SS_PARAM_RHO) | USES (SS_PARAM_SIGMA) | USES (SS_PARAM_TAU)
              | USES (SS_PARAM_HOLDOUT),
    .compare_by_default = TRUE, .holdout_one_se = TRUE,
    .cpu = ss_cpu_cpadmm, .cuda = CUDA_ENTRY (ss_cuda_cpadmm_entry) },
  [SS_SOLVER_FISTA] = {
    .kind = SS_SOLVER_FISTA, .name = "fista", .label = "FISTA",
    .help = "LASSO by accelerated proximal gradient, step 1/max|c|² (seeds 001, 004)",
    .compare_by_default = TRUE,
    .caps = SS_SOLVER_ITERATIVE | SS_SOLVER_MASKS | SS_SOLVER_PIXEL_L1,
    .params = LASSO_COMMON | USES (SS_PARAM_BACKTRACKING) | USES (SS_PARAM_CONTINUATION)
              | USES (SS_PARAM_HOLDOUT),
    /* The same LASSO by the same iteration: `cs --solver fista`. */
    .cs_algorithm = "fista",
    .cpu = ss_cpu_fista, .cuda = CUDA_ENTRY (ss_cuda_fista_entry) },
  [SS_SOLVER_ISTA] = {
    .kind = SS_SOLVER_ISTA, .name = "ista", .label = "ISTA",
    .help = "LASSO by proximal gradient without momentum: seed 000's CPISTA",
    .caps = SS_SOLVER_ITERATIVE | SS_SOLVER_MASKS | SS_SOLVER_PIXEL_L1,
    .params = LASSO_COMMON | USES (SS_PARAM_BACKTRACKING) | USES (SS_PARAM_CONTINUATION)
              | USES (SS_PARAM_HOLDOUT),
    .holdout_one_se = TRUE,
    .cpu = ss_cpu_fista, .cuda = CUDA_ENTRY (ss_cuda_fista_entry) },
  [SS_SOLVER_DIRECT] = {
    .kind = SS_SOLVER_DIRECT, .name = "direct", .label = "Direct (dense)",
    .help = "Tikhonov (AᵀA + αI)x = Aᵀy with a dense Cholesky factor; solve, or invert by "
            "GETS (seed 002); n² memory, so small images or a region",
    .caps = SS_SOLVER_MASKS | SS_SOLVER_NEEDS_REGION,
    .params = USES (SS_PARAM_ALPHA) | USES (SS_PARAM_DIRECT_METHOD),
    .phases = { "normal matrix", "Cholesky", "solve or GETS inverse", "apply", NULL },
    .alpha_auto_scale = TIKHONOV_AUTO_SCALE,
    .cpu = ss_cpu_direct_dense, .cuda = CUDA_ENTRY (ss_cuda_direct_entry),
    .check = direct_needs_positive_alpha, .max_unknowns = dense_max_unknowns,
    .check_size = dense_check_size },
  [SS_SOLVER_DIRECT_FFT] = {
    .kind = SS_SOLVER_DIRECT_FFT, .name = "direct-fft", .label = "Direct FFT",
    .help = "The same Tikhonov system, exact in Fourier space when every pixel is observed; "
            "any size (the Wiener filter with a flat spectrum)",
    .caps = 0, .params = USES (SS_PARAM_ALPHA), .compare_by_default = TRUE,
    .alpha_auto_scale = TIKHONOV_AUTO_SCALE,
    .cpu = ss_cpu_direct_fft, .cuda = CUDA_ENTRY (ss_cuda_direct_fft_entry),
    .check = direct_needs_positive_alpha },
  [SS_SOLVER_IHT] = {
    .kind = SS_SOLVER_IHT, .name = "iht", .label = "IHT",
    .help = "Keeps the k brightest pixels after each gradient step of fixed size 1/max|c|² "
            "(iterative hard thresholding, seed 003)",
    .caps = SS_SOLVER_ITERATIVE | SS_SOLVER_MASKS | SS_SOLVER_PIXEL_L1, .params = GREEDY_COMMON,
    .holdout_one_se = TRUE, .cs_algorithm = "iht", .cpu = ss_cpu_cs_image, .cuda = CUDA_CS_ENTRY },
  [SS_SOLVER_NIHT] = {
    .kind = SS_SOLVER_NIHT, .name = "niht", .label = "NIHT",
    .help = "Hard thresholding to k pixels with the optimal step on the current support "
            "(normalised IHT, seed 003)",
    .caps = SS_SOLVER_ITERATIVE | SS_SOLVER_MASKS | SS_SOLVER_PIXEL_L1, .params = GREEDY_COMMON,
    .holdout_one_se = TRUE, .cs_algorithm = "niht", .cpu = ss_cpu_cs_image, .cuda = CUDA_CS_ENTRY },
  [SS_SOLVER_HTP] = {
    .kind = SS_SOLVER_HTP, .name = "htp", .label = "HTP",
    .help = "NIHT's support, then the least-squares fit on it (hard thresholding pursuit, "
            "seed 003)",
    .caps = SS_SOLVER_ITERATIVE | SS_SOLVER_MASKS | SS_SOLVER_PIXEL_L1,
    .params = GREEDY_COMMON | USES (SS_PARAM_INNER_ITERATIONS),
    .defaults = { { SS_PARAM_ITERATIONS, 50 }, { SS_PARAM_INNER_ITERATIONS, 20 } },
    .holdout_inner_iterations = GREEDY_HOLDOUT_INNER, .holdout_one_se = TRUE,
    .n_defaults = 2, .cs_algorithm = "htp", .cpu = ss_cpu_cs_image, .cuda = CUDA_CS_ENTRY },
  [SS_SOLVER_COSAMP] = {
    .kind = SS_SOLVER_COSAMP, .name = "cosamp", .label = "CoSaMP",
    .help = "Support ∪ the 2k largest of the gradient, least squares on it, keep k "
            "(compressive sampling matching pursuit, seed 003)",
    .caps = SS_SOLVER_ITERATIVE | SS_SOLVER_MASKS | SS_SOLVER_PIXEL_L1,
    .params = GREEDY_COMMON | USES (SS_PARAM_INNER_ITERATIONS),
    .defaults = { { SS_PARAM_ITERATIONS, 50 }, { SS_PARAM_INNER_ITERATIONS, 20 } },
    .holdout_inner_iterations = GREEDY_HOLDOUT_INNER, .holdout_one_se = TRUE,
    .n_defaults = 2, .cs_algorithm = "cosamp", .cpu = ss_cpu_cs_image, .cuda = CUDA_CS_ENTRY },
  [SS_SOLVER_ALM] = {
    .kind = SS_SOLVER_ALM, .name = "alm", .label = "ALM",
    .help = "Augmented Lagrangian: basis pursuit (PCx = y exactly) with alpha 0, else the LASSO "
            "with the residual split off; FISTA inside (seed 001)",
    .caps = SS_SOLVER_ITERATIVE | SS_SOLVER_MASKS | SS_SOLVER_PIXEL_L1,
    .params = LASSO_COMMON | USES (SS_PARAM_INNER_ITERATIONS) | USES (SS_PARAM_HOLDOUT),
    .defaults = { { SS_PARAM_ITERATIONS, 10 }, { SS_PARAM_INNER_ITERATIONS, 50 } },
    /* quality's cases after 1 outer step of 10 FISTA steps or of 50, PSNR dB
     * (input): Hubble FWHM 3 31.84 or 27.17 (29.53), Sun FWHM 2 35.25 or
     * 34.97 (33.23); the star fields want 100 steps and more. */
    .holdout_inner_iterations = 10, .holdout_cap_as_asked = TRUE,
    .n_defaults = 2, .cs_algorithm = "alm", .cpu = ss_cpu_cs_image, .cuda = CUDA_CS_ENTRY },
  [SS_SOLVER_RL] = {
    .kind = SS_SOLVER_RL, .name = "rl", .label = "Richardson–Lucy",
    .help = "Poisson maximum likelihood x ← x ⊙ Cᵀ(y ⊘ Cx)/Cᵀ1, non-negative by construction; "
            "optional TV (RL-TV) and a stopping rule, as it fits the noise if run long",
    .caps = SS_SOLVER_ITERATIVE | SS_SOLVER_MASKS, .compare_by_default = TRUE,
    .params = USES (SS_PARAM_ITERATIONS) | USES (SS_PARAM_TV) | USES (SS_PARAM_RL_STOP)
              | USES (SS_PARAM_RL_FLOOR) | USES (SS_PARAM_RL_ACCEL),
    /* The hold-out rule spends at most half on its validation run, and on
     * star fields its held-out error is still falling there, so the cap is
     * their stop: quality's bright star fields are best after 846-1512
     * iterations on all the data, which a cap of 1000 (500 on all the data)
     * missed by up to 1.8 dB; the faint ones' best comes at 264-398 and lose
     * 0.1-0.2 dB more at 2000 (QUALITY.md, "RL's cap"). */
    .defaults = { { SS_PARAM_ITERATIONS, 2000 } }, .n_defaults = 1,
    .check_problem = ss_rl_check_problem,
    .cpu = ss_cpu_rl, .cuda = CUDA_ENTRY (ss_cuda_rl_entry) },
  [SS_SOLVER_ADMM_PRIOR] = {
    .kind = SS_SOLVER_ADMM_PRIOR, .name = "admm", .label = "ADMM (TV / starlet)",
    .help = "Circulant ADMM with an analysis prior (TV, starlet ℓ1), positivity and a "
            "noise-weighted data term; every inverse diagonal in Fourier space",
    .caps = SS_SOLVER_ITERATIVE | SS_SOLVER_MASKS | SS_SOLVER_PRIOR,
    .params = LASSO_COMMON | USES (SS_PARAM_RHO) | USES (SS_PARAM_SIGMA) | USES (SS_PARAM_TAU)
              | USES (SS_PARAM_PRIOR) | USES (SS_PARAM_DATA_TERM) | USES (SS_PARAM_REWEIGHT),
    /* ρ = σ = 0.03 converge in 200 iterations on scaled data, where 1 had not
     * (quality's small stars: 42.5 dB at 1, 47.4 at 0.03, 45.5 at 0.1). */
    .defaults = { { SS_PARAM_ITERATIONS, 1000 }, { SS_PARAM_NONNEG, 1 }, { SS_PARAM_RHO, 0.03 },
                  { SS_PARAM_SIGMA, 0.03 } }, .n_defaults = 4,
    /* The LASSO rule gave 0.0027-0.0087 on quality's small cases; TV +
     * starlet's best α was about 0.0006 (HDF), 0.002 (stars), 0.0003-0.0006
     * (Sun). Factor 0.25: 31.13 / 48.03 / 34.00 dB; 0.15: 31.79 / 47.88 / 34.23. */
    .alpha_auto_scale = 0.15,
    .cpu = ss_cpu_admm_prior, .cuda = CUDA_ENTRY (ss_cuda_admm_entry) },
  [SS_SOLVER_AUTO] = {
    .kind = SS_SOLVER_AUTO, .name = "auto", .label = "Automatic (RL or ALM)",
    .help = "The real-image default. Runs Richardson–Lucy (with its hold-out stop) and ALM (the "
            "seed's steps) on 3/4 of the pixels (of the central 1024² crop on a frame over two "
            "megapixels), then on all of them the one whose result predicts the other quarter "
            "better: ALM on faint star fields, RL elsewhere; two to three times RL's time on a "
            "small image, about 1.1 times on a camera frame",
    .caps = SS_SOLVER_ITERATIVE | SS_SOLVER_MASKS,
    .params = USES (SS_PARAM_ALPHA) | USES (SS_PARAM_NONNEG),
    .candidates = { SS_SOLVER_RL, SS_SOLVER_ALM }, .n_candidates = 2,
    .cpu = ss_solver_choice_cpu },
};

guint
ss_solver_count (void)
{
  return G_N_ELEMENTS (solvers);
}

const SsSolverInfo *
ss_solver_nth (guint index)
{
  return index < G_N_ELEMENTS (solvers) ? &solvers[index] : NULL;
}

const SsSolverInfo *
ss_solver_info (SsSolverKind kind)
{
  return (unsigned) kind < G_N_ELEMENTS (solvers) ? &solvers[kind] : NULL;
}

char *
ss_solver_list_names (void)
{
  GString *text = g_string_new (NULL);
  for (guint i = 0; i < ss_solver_count (); i++)
    {
      if (i > 0)
        g_string_append (text, i + 1 == ss_solver_count () ? " or " : ", ");
      g_string_append (text, ss_solver_nth (i)->name);
    }
  return g_string_free (text, FALSE);
}

const SsSolverInfo *
ss_solver_find (const char *name, GError **error)
{
  for (guint i = 0; i < ss_solver_count (); i++)
    if (name && g_ascii_strcasecmp (name, ss_solver_nth (i)->name) == 0)
      return ss_solver_nth (i);
  g_autofree char *names = ss_solver_list_names ();
  g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT, "unknown solver \"%s\": expected %s",
               name ? name : "", names);
  return NULL;
}

gboolean
ss_solver_uses (const SsSolverInfo *info, SsParamId id)
{
  return (info->params & USES (id)) != 0;
}

SsSolverKind
ss_solver_default_for_real_data (void)
{
  /* `rl`, with its hold-out stop and its floor chosen by the sky's tail
   * (ss-rl.h). From 2026-11-26 to 2026-11-27 the default was `auto` (RL's
   * image or ALM's, whichever predicts held-out pixels better), for the
   * faint star fields where ALM beat RL at the sky by 1.7-2.9 dB. With RL's
   * floor raised there, `rl` is over ALM on them, and `auto`'s ALM picks
   * lost 19.6 dB summed to `rl` over 76 cases (worse on 12 of its 15 ALM
   * picks, better on 3 by up to 1.26 dB; equal on the other 61), at 2-3
   * times `rl`'s time (QUALITY.md, "`auto` against `rl` once RL's floor is
   * chosen"). Before `auto`, `rl` too: above its input and above Wiener at
   * its best balance on every case; admm (TV + starlet) loses 1.2-1.9 dB to
   * it on the Hubble crops and bright stars; cpadmm with --alpha auto falls
   * below the input on two of three small cases. */
  return SS_SOLVER_RL;
}

double
ss_solver_alpha_auto_scale (const SsSolveParams *p)
{
  const SsSolverInfo *info = ss_solver_info (p->kind);
  return info && info->alpha_auto_scale > 0 ? info->alpha_auto_scale : 1.0;
}

double
ss_solver_alpha_auto (const SsSolveParams *p, double rule)
{
  return rule * ss_solver_alpha_auto_scale (p);
}

void
ss_solver_apply_alpha_auto (SsSolveParams *p, double rule)
{
  p->alpha = ss_solver_alpha_auto (p, rule);
  /* The parameters chosen from the data include the iteration count where
   * the solver's minimiser would fit the noise (ss-pixel-l1.h). */
  if (ss_solver_uses (ss_solver_info (p->kind), SS_PARAM_HOLDOUT))
    p->holdout = TRUE;
}

gboolean
ss_solver_has_cuda (const SsSolverInfo *info)
{
  if (info->n_candidates == 0)
    return info->cuda != NULL;
  /* A choice runs where its candidates run. */
  for (int c = 0; c < info->n_candidates; c++)
    if (!ss_solver_has_cuda (ss_solver_info (info->candidates[c])))
      return FALSE;
  return TRUE;
}

gboolean
ss_solver_check_size (const SsSolveParams *p, int width, int height, gsize observed,
                      GError **error)
{
  const SsSolverInfo *info = ss_solver_info (p->kind);
  return info == NULL || info->check_size == NULL
         || info->check_size (width, height, observed, p, error);
}

const SsParamInfo *
ss_param_info (SsParamId id)
{
  return (unsigned) id < G_N_ELEMENTS (params) ? &params[id] : NULL;
}

double
ss_param_get (const SsSolveParams *p, const SsParamInfo *info)
{
  const char *field = (const char *) p + info->offset;
  switch (info->type)
    {
    case SS_PARAM_REAL: return *(const double *) field;
    case SS_PARAM_INT: return *(const int *) field;
    case SS_PARAM_BOOL: return *(const gboolean *) field ? 1 : 0;
    case SS_PARAM_CHOICE: return *(const int *) field;
    }
  return NAN;
}

void
ss_param_set (SsSolveParams *p, const SsParamInfo *info, double value)
{
  char *field = (char *) p + info->offset;
  switch (info->type)
    {
    case SS_PARAM_REAL: *(double *) field = value; break;
    case SS_PARAM_INT: *(int *) field = (int) value; break;
    case SS_PARAM_BOOL: *(gboolean *) field = value != 0; break;
    case SS_PARAM_CHOICE: *(int *) field = (int) value; break;
    }
}

double
ss_param_default (const SsSolverInfo *info, SsParamId id)
{
  for (int i = 0; info && i < info->n_defaults; i++)
    if (info->defaults[i].id == id)
      return info->defaults[i].value;
  return params[id].default_value;
}

void
ss_solve_params_set_defaults (SsSolveParams *p, SsSolverKind kind)
{
  const SsSolverInfo *info = ss_solver_info (kind);
  p->kind = kind;
  for (int id = 0; id < SS_N_PARAMS; id++)
    ss_param_set (p, &params[id], ss_param_default (info, (SsParamId) id));
}

void
ss_solve_params_foreach_used (const SsSolveParams *p, SsParamFunc func, gpointer user_data)
{
  const SsSolverInfo *info = ss_solver_info (p->kind);
  for (int id = 0; info && id < SS_N_PARAMS; id++)
    if (ss_solver_uses (info, (SsParamId) id))
      {
        double value = ss_param_get (p, &params[id]);
        g_autofree char *text = ss_param_format (&params[id], value);
        func (&params[id], value, text, user_data);
      }
}

static guint
n_choices (const SsParamInfo *info)
{
  return g_strv_length ((char **) info->choices);
}

guint
ss_solver_n_variants (const SsSolverInfo *info)
{
  guint n = 1;
  for (int id = 0; id < SS_N_PARAMS; id++)
    if (params[id].type == SS_PARAM_CHOICE && ss_solver_uses (info, (SsParamId) id))
      n *= n_choices (&params[id]);
  return n;
}

void
ss_solver_apply_variant (const SsSolverInfo *info, guint variant, SsSolveParams *p)
{
  p->kind = info->kind;
  /* VARIANT in mixed radix: one digit per choice the solver reads, counted
   * from the solver's default, so variant 0 is the solver as it comes. */
  for (int id = 0; id < SS_N_PARAMS; id++)
    if (params[id].type == SS_PARAM_CHOICE && ss_solver_uses (info, (SsParamId) id))
      {
        guint count = n_choices (&params[id]);
        guint first = (guint) ss_param_default (info, (SsParamId) id);
        ss_param_set (p, &params[id], (first + variant % count) % count);
        variant /= count;
      }
}

void
ss_solve_params_copy_choices (const SsSolveParams *from, SsSolveParams *to)
{
  const SsSolverInfo *info = ss_solver_info (from->kind);
  to->kind = from->kind;
  for (int id = 0; info && id < SS_N_PARAMS; id++)
    if (params[id].type == SS_PARAM_CHOICE && ss_solver_uses (info, (SsParamId) id))
      ss_param_set (to, &params[id], ss_param_get (from, &params[id]));
}

/* The solver's name or label, then each choice it reads: all of them
 * (ALWAYS) or those off their default. */
static char *
describe (const SsSolveParams *p, gboolean labels, gboolean always)
{
  const SsSolverInfo *info = ss_solver_info (p->kind);
  if (info == NULL)
    return g_strdup ("unknown");
  GString *text = g_string_new (labels ? info->label : info->name);
  for (int id = 0; id < SS_N_PARAMS; id++)
    {
      const SsParamInfo *param = &params[id];
      if (param->type != SS_PARAM_CHOICE || !ss_solver_uses (info, (SsParamId) id))
        continue;
      int value = (int) ss_param_get (p, param);
      if (!always && value == (int) ss_param_default (info, (SsParamId) id))
        continue;
      if (value >= 0 && (guint) value < n_choices (param))
        g_string_append_printf (text, labels ? ", %s" : "-%s",
                                labels ? param->choice_labels[value] : param->choices[value]);
    }
  return g_string_free (text, FALSE);
}

char *
ss_solve_params_label (const SsSolveParams *p)
{
  return describe (p, TRUE, TRUE);
}

char *
ss_solve_params_name (const SsSolveParams *p)
{
  return describe (p, FALSE, FALSE);
}

gboolean
ss_param_in_range (const SsParamInfo *info, double value)
{
  if (!isfinite (value))
    return FALSE;
  if (info->type == SS_PARAM_BOOL)
    return TRUE;
  if (info->type == SS_PARAM_CHOICE)
    return value >= 0 && value < g_strv_length ((char **) info->choices);
  gboolean above = info->min_open ? value > info->min : value >= info->min;
  gboolean below = info->max_open ? value < info->max : value <= info->max;
  return above && below;
}

char *
ss_param_format (const SsParamInfo *info, double value)
{
  switch (info->type)
    {
    case SS_PARAM_BOOL:
      return g_strdup (value != 0 ? "yes" : "no");
    case SS_PARAM_CHOICE:
      if (value >= 0 && value < g_strv_length ((char **) info->choices))
        return g_strdup (info->choices[(int) value]);
      return g_strdup_printf ("%g", value);
    case SS_PARAM_INT:
      return g_strdup_printf ("%.0f", value);
    case SS_PARAM_REAL:
    default:
      /* Enough digits to rebuild the value from a HISTORY card. */
      return g_strdup_printf ("%.9g", value);
    }
}

gboolean
ss_param_range_error (const SsParamInfo *info, const char *name, const char *text,
                      GError **error)
{
  g_autofree char *low = ss_param_format (info, info->min);
  g_autofree char *high = ss_param_format (info, info->max);
  if (isinf (info->max))
    g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT, "%s %s: must be finite and %s %s",
                 name, text, info->min_open ? ">" : ">=", low);
  else
    g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT, "%s %s: must lie in %s%s, %s%s",
                 name, text, info->min_open ? "(" : "[", low, high, info->max_open ? ")" : "]");
  return FALSE;
}

static gboolean
parse_choice (const SsParamInfo *info, const char *text, double *value, GError **error)
{
  for (int i = 0; info->choices[i]; i++)
    if (g_ascii_strcasecmp (text, info->choices[i]) == 0)
      {
        *value = i;
        return TRUE;
      }
  g_autofree char *names = g_strjoinv (" or ", (char **) info->choices);
  g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT, "--%s '%s': expected %s",
               info->name, text, names);
  return FALSE;
}

static gboolean
parse_number (const SsParamInfo *info, const char *text, double *value, GError **error)
{
  char *end = NULL;
  double parsed = g_ascii_strtod (text, &end);
  if (text[0] == '\0' || end == text || *end != '\0')
    {
      g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT, "--%s '%s': not a number",
                   info->name, text);
      return FALSE;
    }
  if (info->type == SS_PARAM_INT && parsed != floor (parsed))
    {
      g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT, "--%s '%s': not an integer",
                   info->name, text);
      return FALSE;
    }
  if (!ss_param_in_range (info, parsed))
    {
      g_autofree char *name = g_strconcat ("--", info->name, NULL);
      return ss_param_range_error (info, name, text, error);
    }
  *value = parsed;
  return TRUE;
}

gboolean
ss_param_parse (const SsParamInfo *info, const char *text, double *value, GError **error)
{
  if (info->type == SS_PARAM_CHOICE)
    return parse_choice (info, text, value, error);
  if (info->type == SS_PARAM_BOOL)
    {
      if (g_ascii_strcasecmp (text, "yes") == 0 || g_str_equal (text, "1"))
        *value = 1;
      else if (g_ascii_strcasecmp (text, "no") == 0 || g_str_equal (text, "0"))
        *value = 0;
      else
        {
          g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT, "--%s '%s': expected yes or no",
                       info->name, text);
          return FALSE;
        }
      return TRUE;
    }
  return parse_number (info, text, value, error);
}

const char *
ss_batch_phase_name (int phase)
{
  static const char *const names[SS_BATCH_PHASES] = {
    "setup", "upload", "capture", "iterate", "report", "download", "free",
  };
  return phase >= 0 && phase < SS_BATCH_PHASES ? names[phase] : NULL;
}
