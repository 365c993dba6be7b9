/* ss-backend.h: where the solvers run.
 *
 * AUTO uses CUDA when the build has it and a device is present, else the CPU
 * (FFTW with threads, LAPACKE). The choice and the device name are reported.
 */
#pragma once

#include "ss-solver.h"
#include "ss-bench.h"

G_BEGIN_DECLS

typedef enum {
  SS_BACKEND_AUTO,
  SS_BACKEND_CPU,
  SS_BACKEND_CUDA,
} SsBackendKind;

typedef struct _SsBackend SsBackend;

gboolean ss_backend_kind_from_string (const char *text, SsBackendKind *kind, GError **error);

/* AUTO never fails; CUDA fails with SS_ERROR_NO_DEVICE when the build lacks
 * CUDA or no device is usable. A freed backend's CUDA context (with its
 * cuFFT plans) is kept for the next backend of the process. */
SsBackend *ss_backend_new (SsBackendKind kind, GError **error);
void ss_backend_free (SsBackend *backend);
const char *ss_backend_get_name (const SsBackend *backend);    /* "cpu" / "cuda" */
const char *ss_backend_get_device (const SsBackend *backend);  /* human-readable */

/* Solves PROBLEM. Reports every params->report_every iterations and once at the
 * end (final = TRUE). Cancellation is honoured at the next report point and
 * fails with G_IO_ERROR_CANCELLED (the partial result is still filled in).
 * With an AUTO backend on CUDA, running out of device memory falls back to
 * the CPU and says so in result->warning. */
gboolean ss_backend_solve (SsBackend *backend, const SsProblem *problem,
                           const SsSolveParams *params, SsReportFunc report,
                           gpointer user_data, GCancellable *cancellable,
                           SsSolveResult *result, GError **error);

/* Times PARAMS->iterations iterations of a random problem against the floor
 * measured in the same process (ss-bench.h). */
gboolean ss_backend_bench (SsBackend *backend, const SsBenchParams *params,
                           SsBenchResult *result, GError **error);

/* Lists the compute devices found, one line each (for `info` and the app). */
char *ss_backend_describe_devices (void);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SsBackend, ss_backend_free)

G_END_DECLS
