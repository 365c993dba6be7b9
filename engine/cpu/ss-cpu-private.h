/* ss-cpu-private.h: pieces shared by the CPU solvers (not installed). */
#pragma once

#include "ss-cpu.h"
#include "ss-fft.h"
#include "ss-mem.h"
#include "ss-report.h"

#include <math.h>

G_BEGIN_DECLS

/* Loops shorter than this run on one thread: waking a team costs more. */
#define SS_PARALLEL_MIN 16384

/* Timing, previews, callbacks and cancellation for one solve. */
typedef struct {
  const SsProblem *problem;
  const SsSolveParams *params;
  SsReportFunc report;
  gpointer user_data;
  GCancellable *cancellable;
  double start;
  float *preview;       /* preview_width * preview_height, or NULL */
  SsReport last;        /* the most recent report's metrics */
} SsCpuReporter;

void ss_cpu_reporter_init (SsCpuReporter *reporter, const SsProblem *problem,
                           const SsSolveParams *params, SsReportFunc report,
                           gpointer user_data, GCancellable *cancellable);
void ss_cpu_reporter_clear (SsCpuReporter *reporter);

static inline gboolean
ss_cpu_is_report_point (const SsSolveParams *params, int iteration)
{
  return iteration % params->report_every == 0 || iteration == params->iterations;
}

/* Computes the metrics of estimate X (CX = P C x, unobserved entries ignored),
 * the preview, calls the callback, then checks for cancellation: FALSE with
 * G_IO_ERROR_CANCELLED when the caller asked to stop. */
gboolean ss_cpu_reporter_emit (SsCpuReporter *reporter, int iteration, const float *x,
                               const float *cx, double rel_change, gboolean final,
                               GError **error);

/* The report of an iterate whose squared change since the last one is
 * CHANGE2 and squared norm NORM2 (relative change sqrt(CHANGE2/NORM2));
 * final at the last iteration, or when the solver STOPs early. */
static inline gboolean
ss_cpu_report_iterate (SsCpuReporter *reporter, int iteration, const float *x, const float *cx,
                       double change2, double norm2, gboolean stop, GError **error)
{
  double rel = norm2 > 0 ? sqrt (change2 / norm2) : 0.0;
  gboolean final = stop || iteration == reporter->params->iterations;
  return ss_cpu_reporter_emit (reporter, iteration, x, cx, rel, final, error);
}

/* OUT = C IN (or C^T IN when ADJOINT), no mask, using the caller's scratch
 * (REAL: n floats, used only when IN is not aligned for FFTW; SPECTRUM:
 * ss_fft_spectrum_floats floats). FFT is a batch-1 plan. IN is not changed. */
void ss_cpu_circulant (const SsFft *fft, const SsOperator *op, const float *in, float *real,
                       float *spectrum, float *out, gboolean adjoint);

/* REAL = C X at every pixel (a caller's held-out pixels, ss-holdout-split.h,
 * lie off the mask and are read from it); returns ||P C X − Y||² (the data
 * misfit of the solvers and their reports). SPECTRUM is scratch. */
double ss_cpu_masked_misfit (const SsFft *fft, const SsOperator *op, const float *x,
                             const float *y, float *real, float *spectrum);

/* Fills the common fields of RESULT from the last report and hands it *X
 * (from ss_mem_alloc; *X becomes NULL, so the solver's clean-up skips it). */
void ss_cpu_finish_result (SsSolveResult *result, const SsCpuReporter *reporter,
                           float **x, int iterations, const SsMemCounter *memory);

/* soft(a, t) = sign(a) max(|a| - t, 0); with non-negativity max(a - t, 0).
 * Written as max(a - t, 0) + k min(a + t, 0) with k = 0 or 1, which has no
 * branch, so the loops calling it vectorise. */
static inline float
ss_soft_threshold (float a, float t, gboolean nonneg)
{
  const float negative_part = nonneg ? 0.0f : 1.0f;
  return fmaxf (a - t, 0.0f) + negative_part * fminf (a + t, 0.0f);
}

G_END_DECLS
