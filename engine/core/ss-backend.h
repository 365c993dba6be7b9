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
/* "auto", "cpu" or "cuda", as --backend takes them. */
const char *ss_backend_kind_to_string (SsBackendKind kind);

/* AUTO never fails; CUDA fails with SS_ERROR_NO_DEVICE when the build lacks
 * CUDA or no device is usable. On CUDA it uses device 0. A freed backend's
 * CUDA context (with its cuFFT plans) is kept for the next backend of the process. */
SsBackend *ss_backend_new (SsBackendKind kind, GError **error);
/* The same on the CUDA devices DEVICES[0..COUNT) (indices as `info` lists
 * them; COUNT 0: device 0), one context each. ss_backend_solve and the
 * bench use the first; ss_backend_solve_batch spreads its problems over all.
 * A CPU backend ignores the list; AUTO falls back to the CPU when CUDA is
 * absent, and fails like CUDA when a listed device does not exist. */
SsBackend *ss_backend_new_with_devices (SsBackendKind kind, const int *devices, int count,
                                        GError **error);
/* Starts, on a thread of its own, what the first CUDA call of a process
 * costs (the driver and a context for the first of DEVICES, about a quarter
 * of a second on an H100), so that a caller can read and prepare its data
 * meanwhile; the next backend on that device takes the context. Once a
 * process; nothing for the CPU or without CUDA; a failure is left for that
 * backend to report. A process that started one calls
 * ss_backend_warm_up_wait before it exits, whether or not a backend came. */
void ss_backend_warm_up (SsBackendKind kind, const int *devices, int count);
void ss_backend_warm_up_wait (void);
/* "all" (every CUDA device; none without CUDA), "0" or "0,2,3" into a
 * g_free'd array of *COUNT indices (NULL with *COUNT 0 for "all" without
 * devices). A device listed twice gets two contexts, each with its own
 * stream and host thread: "0,0" runs the several-device path on one GPU
 * (tests, and overlapping one frame's transfers with another's solve). */
gboolean ss_backend_parse_devices (const char *text, int **devices, int *count, GError **error);
/* CUDA devices in use (1 for the CPU). */
int ss_backend_get_device_count (const SsBackend *backend);
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

/* Solves COUNT problems of one size with the same parameters, each with its
 * own weight ALPHAS[i] when ALPHAS is not NULL, into RESULTS[0..COUNT)
 * (cleared first; each result's seconds is its share of the batch's time).
 * On CUDA, CPADMM problems that share one operator (equal c^; masks and data
 * may differ) are solved together: one batched cuFFT plan, one kernel over
 * all pixels; other solvers run one by one on the device. Problems are
 * spread over the backend's devices in contiguous shares, one host thread
 * per device. The CPU solves them one by one: the same answers as
 * ss_backend_solve. REPORT (may be NULL) gets every problem's reports with
 * its index; the calls are serialised (never two at once) but may come from
 * a device's thread. Cancellation is honoured at the next report point. */
gboolean ss_backend_solve_batch (SsBackend *backend, const SsProblem *problems, int count,
                                 const double *alphas, const SsSolveParams *params,
                                 SsBatchReportFunc report, gpointer user_data,
                                 GCancellable *cancellable, SsSolveResult *results,
                                 GError **error);

/* Batches against separate solves, and several devices against one. */
typedef struct {
  int count;                  /* problems */
  int devices;                /* devices the batch was spread over */
  int width, height, iterations;
  double batch_seconds;       /* all COUNT as one batch, on every device */
  double one_device_seconds;  /* the same batch on the first device alone (NAN: one device) */
  double separate_seconds;    /* COUNT separate ss_backend_solve calls, first device */
  double batch_speedup;       /* separate_seconds / one-device batch time */
  double device_scaling;      /* one_device_seconds / batch_seconds (NAN: one device) */
  /* Where the one-device batch's time went (SsBatchPhase; all zero when the
   * backend has no device batch, e.g. the CPU): its sum is batch_seconds
   * less the host's own bookkeeping. */
  double batch_phase_seconds[SS_BATCH_PHASES];
  char *device;
} SsBatchBenchResult;

/* Times COUNT random CPADMM problems of PARAMS's size sharing one operator
 * (box:5 row blur, random circulant sensing, half the pixels observed), each
 * with its own data, PARAMS->iterations iterations each: as one batch and as
 * separate solves, end to end (upload, solve, download), after a warm-up. */
gboolean ss_backend_bench_batch (SsBackend *backend, const SsBenchParams *params, int count,
                                 SsBatchBenchResult *result, GError **error);
void ss_batch_bench_result_clear (SsBatchBenchResult *result);

/* Times PARAMS->iterations iterations of a random problem against the floor
 * measured in the same process (ss-bench.h). */
gboolean ss_backend_bench (SsBackend *backend, const SsBenchParams *params,
                           SsBenchResult *result, GError **error);

/* One CUDA device, as ss_backend_list_devices finds it. */
typedef struct {
  int index;           /* the number --devices and ss_backend_new_with_devices take */
  char *model;         /* the product name: "NVIDIA H100 80GB HBM3" */
  char *name;          /* as a backend on it reports its device (ss_backend_get_device) */
  gsize free_bytes;    /* device memory free when listed, and in all */
  gsize total_bytes;
  char *unusable;      /* why it cannot be used (and the fields above are empty), or NULL */
} SsDeviceInfo;

/* The CUDA devices found, in index order, as an array of SsDeviceInfo
 * (g_array_unref frees their strings too). Empty, never NULL, when the
 * build has no CUDA or no device is present. Cheaper than a backend: no
 * stream, plan or library handle is made. */
GArray *ss_backend_list_devices (void);
/* How many CUDA devices there are: 0 when the build has no CUDA, or no
 * driver or device is present. Cheap next to ss_backend_list_devices: no
 * device is queried, so no context is made on each (for "is there a GPU"). */
int ss_backend_count_devices (void);
/* Lists the compute devices found, one line each (for `info` and the app):
 * the CPU's, then ss_backend_list_devices's as "cuda N: NAME, X free of Y". */
char *ss_backend_describe_devices (void);

/* Whether a backend of KIND may solve on a GPU (CUDA or AUTO, in a build
 * with CUDA): what a caller asks before it builds an operator whose spectrum
 * the GPU may make (ss_operator_new_deferred). Cheap: it asks no device. */
gboolean ss_backend_kind_may_use_gpu (SsBackendKind kind);
/* The blur of a rendered KERNEL (ss_psf_render's layout; taken: kept or
 * freed) for a solve on a backend of KIND: deferred where it may run on a
 * GPU, which then makes the spectrum (no host FFTW on that path; the frame's
 * kernel is kept, not copied), made on the host otherwise. */
SsOperator *ss_backend_kind_new_operator (SsBackendKind kind, float *kernel,
                                          const float *observed, int width, int height,
                                          GError **error);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SsBackend, ss_backend_free)

G_END_DECLS
