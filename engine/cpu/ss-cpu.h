/* ss-cpu.h: the CPU backend (FFTW, LAPACKE): the reference every other backend matches. */
#pragma once

#include "ss-solver.h"
#include "ss-bench.h"

G_BEGIN_DECLS

gboolean ss_cpu_solve (const SsProblem *problem, const SsSolveParams *params,
                       SsReportFunc report, gpointer user_data, GCancellable *cancellable,
                       SsSolveResult *result, GError **error);

gboolean ss_cpu_cpadmm (const SsProblem *problem, const SsSolveParams *params,
                        SsReportFunc report, gpointer user_data, GCancellable *cancellable,
                        SsSolveResult *result, GError **error);
gboolean ss_cpu_fista (const SsProblem *problem, const SsSolveParams *params,
                       SsReportFunc report, gpointer user_data, GCancellable *cancellable,
                       SsSolveResult *result, GError **error);
gboolean ss_cpu_direct_fft (const SsProblem *problem, const SsSolveParams *params,
                            SsReportFunc report, gpointer user_data, GCancellable *cancellable,
                            SsSolveResult *result, GError **error);
gboolean ss_cpu_admm_prior (const SsProblem *problem, const SsSolveParams *params,
                            SsReportFunc report, gpointer user_data, GCancellable *cancellable,
                            SsSolveResult *result, GError **error);
gboolean ss_cpu_rl (const SsProblem *problem, const SsSolveParams *params,
                    SsReportFunc report, gpointer user_data, GCancellable *cancellable,
                    SsSolveResult *result, GError **error);
/* RL from the estimate START (n floats, the engine's units) instead of its
 * flat start: what the fixed-point test needs. */
gboolean ss_cpu_rl_from (const SsProblem *problem, const SsSolveParams *params,
                         const float *start, SsSolveResult *result, GError **error);
gboolean ss_cpu_direct_dense (const SsProblem *problem, const SsSolveParams *params,
                              SsReportFunc report, gpointer user_data, GCancellable *cancellable,
                              SsSolveResult *result, GError **error);

/* IHT, NIHT, HTP, CoSaMP and ALM on the image's operator P C (engine/cs). */
gboolean ss_cpu_cs_image (const SsProblem *problem, const SsSolveParams *params,
                          SsReportFunc report, gpointer user_data, GCancellable *cancellable,
                          SsSolveResult *result, GError **error);

/* "CPU, N threads (FFTW, LAPACKE; OpenMP WAIT)": the one name every CPU report
 * uses, WAIT how idle threads wait (OMP_WAIT_POLICY, else "spin
 * GOMP_SPINCOUNT", else "default wait"). */
char *ss_cpu_device_name (void);

/* Bytes read + written per second by a parallel copy well past the caches. */
double ss_cpu_copy_bandwidth (void);

gboolean ss_cpu_bench (const SsBenchParams *params, SsBenchResult *result, GError **error);

G_END_DECLS
