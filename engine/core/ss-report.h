/* ss-report.h: helpers shared by the solvers for metrics and previews. */
#pragma once

#include "ss-solver.h"

G_BEGIN_DECLS

/* Monotonic seconds. */
double ss_now (void);

/* qsort's (and g_array_sort's) order of doubles, ascending. */
int ss_compare_doubles (const void *a, const void *b);
/* The middle of COUNT values (the upper one of the two middles for an even
 * count), sorting VALUES in place: what a benchmark reports of its repeats,
 * one outlier at either end left out. */
double ss_median_of_doubles (double *values, int count);

/* Wall seconds this process has spent planning transforms (FFTW on the
 * CPU, cuFFT on the GPU) so far, for the "plan" phase the CLI reports; the
 * planners add to it. Thread-safe. */
double ss_planning_seconds (void);
void ss_planning_add (double seconds);

/* Box-averages a w x h image into pw x ph (pw <= w, ph <= h; any ratio). */
void ss_preview_reduce (const float *x, int w, int h, float *out, int pw, int ph);

double ss_mse (const float *x, const float *truth, gsize n);
double ss_psnr_from_mse (double mse);
double ss_l1_norm (const float *x, gsize n);

/* Fills REPORT's metrics (mse, psnr, residual, objective, held_out) for the
 * estimate X on the CPU: CX is C x as a full image (P need not be applied;
 * with a held-out half it must not be). */
void ss_report_fill_metrics (SsReport *report, const SsProblem *problem,
                             const SsSolveParams *params, const float *x, const float *cx);

G_END_DECLS
