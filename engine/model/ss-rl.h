/* ss-rl.h: what both Richardson–Lucy backends (ss-cpu-rl.c, ss-cuda-rl.cu)
 * take from the data before iterating, computed once on the host.
 *
 * The engine's data are sky-subtracted and scaled, so y is about 0 on the
 * background and negative where the noise dips: the ratio y ⊘ Cx of RL is
 * undefined there. RL therefore runs on the data as measured, y' = y + b
 * with b the sky the caller subtracted (SsProblem.background), raised where
 * needed so that y' >= 0 (then clamped at 0 for the one lowest pixel), plus
 * 1e-6 of the data's top so b > 0 even on data that are positive already,
 * with the Poisson model of a known background β (Snyder et al. 1993):
 *
 *   y' ≈ C z + β,   z >= 0,   and the engine's x = z + β − b.
 *
 * β is where positivity bites: z >= 0 says no pixel of the scene is darker
 * than β. β = b (the sky median) is right for a dark sky with sparse sources
 * and wrong for a frame the Sun fills, whose median is far above its darkest
 * parts; β = 0 imposes nothing. So β is measured: the darkest value of the
 * data smoothed by CᵀC, which on noiseless data is at most the scene's
 * darkest pixel (CᵀC averages), and on a star field is the sky.
 *
 * The discrepancy rule: on raw counts the noise variance of a pixel grows
 * with its level, var ≈ g·y'; the noise s measured on the data (ss-noise.h,
 * a robust estimate dominated by the typical pixel, whose level is the median
 * of y') gives g ≈ s²/median(y'), so the mean variance over the observed
 * pixels is s²·mean(y')/median(y'). Without a known background (the data's
 * level is then arbitrary) the level is s². RL stops at the first report
 * point where ||PCx − y||²/m is below SS_RL_DISCREPANCY_FACTOR times it.
 *
 * Why a factor below 1: the blur passes few frequencies, and the noise RL
 * cannot fit outside them stays in the residual, so at the best iterate the
 * residual is below the noise variance (Morozov's rule assumes an operator
 * that can fit everything). Measured on the seven cases of `sharpsky-cli
 * quality` (QUALITY.md), the residual at the best iteration (chosen with the
 * truth) was 0.69-0.94 of the level above (1.36 on one Sun case where RL
 * never reaches it and the 200-iteration cap stops it, 0.02 dB from its
 * best). Losses against the best iteration, checking every 10: factor 1:
 * 0.02-5.8 dB, median 0.17; 0.85: 0-3.3 dB, median 0.07; 0.8: 0-2.0, median
 * 0.23 (more over-fitting on the Hubble crops). Sparse bright fields (stars,
 * compact galaxies) want more iterations than any such rule gives: RL with
 * a dark background is held by positivity there.
 */
#pragma once

#include "ss-solver.h"

G_BEGIN_DECLS

typedef struct SsRlSetup {
  double offset;          /* b, scaled units */
  double darkest;         /* the darkest level of the smoothed data, clamped to [0, b] */
  double background;      /* β: the darkest level (0 <= β <= b), or on a flat sky floor b,
                             or b + SS_RL_FLOOR_SIGMAS noise (the raised floor below) */
  SsRlFloor floor;        /* SsSolveParams.rl_floor */
  gboolean sky_floor;     /* the data's floor is a flat sky: β is b, or raised above it */
  gboolean raised;        /* β is raised above the sky */
  double floor_error_ratio; /* where the hold-out rule chose the floor, the raised run's least
                               held-out error over the sky's; 0 otherwise */
  double sky_tail;        /* the smoothed data's share more than SS_RL_SKY_TAIL_SIGMAS below
                             the sky over a flat sky's (below); NAN when not measured */
  SsRegion tail_region;   /* where it is counted (ss_rl_sky_tail_region) */
  double start;           /* the flat first estimate of z: mean of y' − β over observed pixels */
  double stop_level;      /* residual ||PCx − y||²/m at which the discrepancy rule stops;
                             -1 when the rule is off */
  double noise;           /* the noise estimated from y (scaled units); NAN when unknown, or
                             when neither a stopping rule nor a sky needs it */
  double observed;        /* how many pixels are observed */
  gboolean sky;           /* the caller subtracted a sky (SsProblem.background > 0) */
  double mean;            /* mean of y' over the observed pixels */
  double top;             /* the largest observed y */
} SsRlSetup;

/* The offset b above: the sky, raised so that no observed datum is negative
 * (plus 1e-6 of the top); MEAN, TOP (either may be NULL): the mean of y'
 * and the largest y over the observed pixels. FALSE with an error naming
 * WHO when no observed datum is positive. */
gboolean ss_rl_offset (const SsProblem *problem, const char *who, double *offset, double *mean,
                       double *top, GError **error);

/* Fails (SS_ERROR_INVALID_ARGUMENT, naming the solvers that can) unless C
 * is a blur: its kernel non-negative, up to float rounding. RL's
 * multiplicative step needs it; a random sensing matrix is not one. */
gboolean ss_rl_check_operator (const SsOperator *op, GError **error);
/* What RL needs of PROBLEM before it can start, the refusals its setup
 * would make (SS_ERROR_INVALID_ARGUMENT): a blur (ss_rl_check_operator) and
 * some positive observed data (ss_rl_offset). */
gboolean ss_rl_check_problem (const SsProblem *problem, GError **error);

/* Checks the operator (ss_rl_check_operator), then fills SETUP from the
 * observations, on the host (FFTW). */
gboolean ss_rl_setup (const SsProblem *problem, const SsSolveParams *params, SsRlSetup *setup,
                      GError **error);

/* The same in three steps, for a backend that transforms elsewhere (CUDA):
 * ss_rl_setup_data does the check and the statistics that need no
 * transform (offset, mean, noise and stop level; background and start stay
 * NAN); the backend measures the darkest level β as ss_rl_darkest_level does
 * on the host, min of Cᵀ(P y')/Cᵀ(P1) over the pixels whose Cᵀ(P1) exceeds
 * half its top, clamped at 0; ss_rl_setup_finish completes SETUP from it. */
gboolean ss_rl_setup_data (const SsProblem *problem, const SsSolveParams *params,
                           SsRlSetup *setup, GError **error);
gboolean ss_rl_darkest_level (const SsOperator *op, const float *y, double offset,
                              SsRegion tail_region, double tail_level, double *level,
                              double *sky_tail, GError **error);
/* DARKEST as above; SMOOTHING, ss_rl_spectrum_norms's of C (NAN when not
 * known: β is then the darkest level); SKY_TAIL, ss_rl_sky_tail_of at
 * ss_rl_sky_tail_level (NAN when not measured). */
void ss_rl_setup_finish (SsRlSetup *setup, double darkest, double smoothing, double sky_tail);
/* From C's half-spectrum CHAT (interleaved complex, height × (width/2 + 1)),
 * in one pass, by Parseval: *SMOOTHING = ‖k‖₂ for k = CᵀC scaled to sum 1,
 * Σ k² = Σ_f |c^_f|⁴ / (n |c^_0|⁴), and *BLUR_NORM = ‖c‖₂ / c^_0. White
 * noise of σ smoothed by k leaves σ *SMOOTHING (the darkest level's dip);
 * through Cᵀ(P ·)/Cᵀ(P1), the smoothing of the darkest level's data and of
 * the sky's tail, σ *BLUR_NORM. */
void ss_rl_spectrum_norms (const float *chat, int width, int height, double *blur_norm,
                           double *smoothing);
/* The largest of WEIGHT = Cᵀ(P1) (n of them), which the three functions
 * below take as TOP: one pass over the frame, not one each. */
float ss_rl_weight_top (const float *weight, gsize n);
/* The darkest level from SUM = Cᵀ(P y') and WEIGHT = Cᵀ(P1) (n each): what
 * ss_rl_darkest_level computes after its transforms, for a backend that
 * made them with its own plans and buffers. */
double ss_rl_darkest_of (const float *sum, const float *weight, gsize n, float top);
/* The sky's tail from the same SUM and WEIGHT (n each, WIDTH a row): of
 * the pixels of REGION whose WEIGHT exceeds half its TOP, the share whose
 * level SUM/WEIGHT is below LEVEL, over the share Φ(−SS_RL_SKY_TAIL_SIGMAS)
 * that white noise about the sky would put there; NAN when LEVEL is NAN. */
double ss_rl_sky_tail_of (const float *sum, const float *weight, gsize n, float top, int width,
                          SsRegion region, double level);
/* Where the tail is counted: PROBLEM's image region inset by its padding's
 * margins, or the whole frame when it has none (a periodic problem). */
SsRegion ss_rl_sky_tail_region (const SsProblem *problem);
/* The tail from BELOW of COUNTED pixels (NAN when none were counted). */
double ss_rl_sky_tail_from_counts (double counted, double below);
/* The level the sky's tail counts below: the sky b less SS_RL_SKY_TAIL_SIGMAS
 * times the smoothed noise, σ BLUR_NORM (ss_rl_spectrum_norms); NAN where the
 * noise is not known or no sky was subtracted. */
double ss_rl_sky_tail_level (const SsRlSetup *setup, double blur_norm);
/* WEIGHT = Cᵀ(P1), whose largest is TOP, into RL's normaliser, in place
 * (as ss_rl_weight). */
void ss_rl_invert_weight (float *weight, gsize n, float top);
/* The same against WEIGHT's own largest (ss_rl_weight_top), where the
 * caller has no use for it. */
void ss_rl_invert_weight_at_top (float *weight, gsize n);

/* Where RL's normaliser 1/Cᵀ(P1) is kept: Cᵀ(P1) above this fraction of its
 * top; below it the normaliser is 0 and the pixel keeps its value. There
 * the step Cᵀ(ratio)/Cᵀ(P1) is a quotient of two sums at float FFT
 * rounding's level (about 1e-7 of the largest term, times the ratio's
 * range): on a validation run, whose padded border is unobserved, with a
 * black sky (β about 0, the ratio up to 1e2-1e3) and blank pixels, a floor
 * of 1e-6 let border pixels grow without bound until the whole estimate
 * was NaN (test-rl's /rl/holdout/black-sky, 4 draws of 5). A pixel that
 * sends under 1e-3 of its light to observed pixels is not measured by
 * them anyway. */
#define SS_RL_WEIGHT_FLOOR 1e-3

/* 1 / Cᵀ(P1), n floats (g_free), or 0 where Cᵀ(P1) is below
 * SS_RL_WEIGHT_FLOOR of its top: RL's normaliser; a pixel whose light
 * reaches no observed pixel keeps its value. */
float *ss_rl_weight (const SsOperator *op, GError **error);

/* The sky as the floor. On a frame whose floor is the sky (stars and
 * galaxies on a dark background) β = b, the sky the caller subtracted, is
 * much better than the darkest level, which the noise pulls below it: on
 * quality's star and galaxy fields RL's best iteration gains 1.5-5.9 dB.
 * On a frame the Sun fills it costs 3-5 dB. The test: with a flat sky, the
 * darkest smoothed level lies below the sky by about the dip of the
 * minimum of n smoothed noise samples, σ ‖k‖₂ √(2 ln n); β = b when
 * b − darkest is within SS_RL_SKY_FLOOR_DIPS such dips (and a sky was
 * subtracted). Measured on the ten cases (QUALITY.md): every case that gains
 * lies within 2.06 dips, every one that loses beyond 2.85 (a Hubble crop,
 * −0.25 dB), the Sun crops beyond 30. */
#define SS_RL_SKY_FLOOR_DIPS 2.25

/* The floor raised above the sky (SsSolveParams.rl_floor, `--floor`): where
 * the sky is the floor (above), β = b + K σ. RL's fixed point is then the
 * Poisson likelihood's with the model C z + b + Kσ, z >= 0, which is the
 * likelihood with an l1 prior of weight Kσ/b solved by its EM step, up to a
 * scale of z: every region darker than the raised floor goes to 0, so RL
 * stops fitting the sky's noise and the stars keep sharpening. The estimate
 * is z, without the pedestal (ss_rl_estimate_shift).
 * Measured on 37 cases (quality's seven and 30 of the same scenes through
 * other PSFs and peaks) and 39 held out (quality's draws 1-3 and 24 new
 * grid cases; QUALITY.md, "RL's floor above the sky"): K = 0.5 gained up to
 * 5.5 dB on star and galaxy fields, and K = 1 less; but on the Hubble field
 * at 10²–300 e⁻, where the sky test holds too and the faint light below σ
 * is real, K = 0.5 lost 3.5–4.7 dB. RL's held-out error tells those apart:
 * raised over the sky's, 1.039–1.157 on the Hubble losses, 0.95–1.02 on most
 * gains. But on 128² and 256² windows of the Hubble field at 100–1000 e⁻
 * (test-rl's sky-dominated windows among them) the ratio was 0.98–1.09
 * and raising lost 0.2–5.7 dB on every window (59), while on star windows
 * it gained up to 4.5 dB, some at ratios of 1.18–1.22: the ratio alone
 * does not tell them apart.
 *
 * What does is the light below the sky's median. Where faint sources
 * cover the frame, the median sits above the true sky, and the data
 * smoothed by the blur dip below the median more often than noise alone
 * would: the sky's tail, the share of smoothed pixels more than
 * SS_RL_SKY_TAIL_SIGMAS smoothed σ below the sky over the Gaussian's
 * Φ(−2) = 2.3%, counted away from the padding (ss_rl_sky_tail_region).
 * On 236 cases (quality's seven, 69 of other PSFs, peaks and draws, 160
 * windows of 128² and 256²; QUALITY.md, "RL's floor chosen by the sky's
 * tail") it was 2.31–16.7 on every Hubble case with a flat sky (65), and
 * 0.95–8.2, median 1.7, on the 38 star and galaxy windows where raising
 * gained over 1 dB. So the hold-out rule (SS_RL_FLOOR_HOLDOUT, the
 * default) raises the floor only where the tail is below
 * SS_RL_SKY_TAIL_LIMIT, and then keeps it unless its validation run's
 * least held-out error is over 1 + SS_RL_FLOOR_TOLERANCE times the sky's
 * (which caught two star windows that lost 3.1 and 0.5 dB, at 1.16 and
 * 1.61, and missed two that gained, at 1.18 and 1.22). Against the sky:
 * +22.0 dB summed over the 37 (worst −0.14), +34.5 over the 39 (worst
 * −0.33), +74.5 over the windows (worst −0.60), no Hubble case raised. */
#define SS_RL_FLOOR_SIGMAS 0.5
#define SS_RL_FLOOR_TOLERANCE 0.15
#define SS_RL_SKY_TAIL_SIGMAS 2.0
#define SS_RL_SKY_TAIL_LIMIT 2.0

/* The estimate is x = z + this shift: β − b, the darkest level's depth
 * below the sky (<= 0), but 0 on a raised floor, whose pedestal Kσ is the
 * prior's, not light: x = z + Kσ put the result's empty sky Kσ above the
 * sky, and `auto`'s prediction of held-out sky pixels with it (its RL
 * candidate's error +17-25% on quality's galaxies and faint stars, enough
 * to lose both to ALM). */
double ss_rl_estimate_shift (const SsRlSetup *setup);

/* β at the sky (RAISE FALSE) or SS_RL_FLOOR_SIGMAS noise σ above it, and
 * the flat start from it; only where SETUP's floor is a flat sky. */
void ss_rl_setup_raise_floor (SsRlSetup *setup, gboolean raise);
/* TRUE when SETUP's floor is for the hold-out rule to choose: a flat sky
 * (whose test needs a known noise) whose tail is below SS_RL_SKY_TAIL_LIMIT,
 * SS_RL_FLOOR_HOLDOUT. */
gboolean ss_rl_floor_choosable (const SsRlSetup *setup);
/* After the raised floor's validation run, from the two runs' least
 * held-out errors: keeps the raised floor when RAISED_ERROR is within
 * SS_RL_FLOOR_TOLERANCE of SKY_ERROR, else puts β back at the sky; records
 * the ratio. TRUE when the floor stays raised. */
gboolean ss_rl_setup_choose_floor (SsRlSetup *setup, double sky_error, double raised_error);
/* RESULT's floor fields from SETUP (FLOOR_ITERATIONS: the raised floor's
 * validation run, 0 without one), and the warning where a raise asked for
 * could not be made. */
void ss_rl_result_floor (const SsRlSetup *setup, int floor_iterations, SsSolveResult *result);

/* The discrepancy rule stops at this fraction of the noise level (above). */
#define SS_RL_DISCREPANCY_FACTOR 0.85


G_END_DECLS
