/* ss-solve-task.h: one solve run off the main thread (a GTask in a worker).
 *
 * The worker builds the problem (unless a job is given), creates the
 * backend and runs the solver. Its reports arrive on the solver's thread;
 * the task copies them and hands them to the main context that created the
 * task, coalesced to at most 10 deliveries a second: every metric point is
 * delivered (the convergence curve loses nothing), the preview only as often
 * as it can be shown. All signals are emitted on that main context.
 *
 * Signals:
 *   job-ready ()                       the problem is built (ss_solve_task_get_job)
 *   started (backend, device)          the backend chosen
 *   progress (GArray *points, SsFrame *preview)  new SsProgressPoint's, and
 *                                      the latest preview (input units) or NULL
 */
#pragma once

#include <gio/gio.h>
#include "ss-job.h"

G_BEGIN_DECLS

typedef struct {
  int iteration;
  double elapsed;
  double mse, psnr, residual, rel_change, objective;
  gboolean final;
} SsProgressPoint;

#define SS_TYPE_SOLVE_TASK (ss_solve_task_get_type ())
G_DECLARE_FINAL_TYPE (SsSolveTask, ss_solve_task, SS, SOLVE_TASK, GObject)

/* Solves SETTINGS on INPUT (full image); with JOB (same problem, reused as
 * is) the build step is skipped. HEADER and SOURCE_PATH are copied. */
SsSolveTask *ss_solve_task_new (SsFrame *input, const SsHeader *header, const char *source_path,
                                SsJob *job, const SsSettings *settings);

void ss_solve_task_run_async (SsSolveTask *self, GCancellable *cancellable,
                              GAsyncReadyCallback callback, gpointer user_data);
/* FALSE with G_IO_ERROR_CANCELLED after a stop (the partial result is kept). */
gboolean ss_solve_task_run_finish (SsSolveTask *self, GAsyncResult *result, GError **error);

const SsSettings *ss_solve_task_get_settings (SsSolveTask *self);
/* The settings as run: once the problem is built, with the values chosen
 * from the data (alpha auto) in place; for HISTORY. ss_settings_clear it. */
void ss_solve_task_get_run_settings (SsSolveTask *self, SsSettings *settings);
SsJob *ss_solve_task_get_job (SsSolveTask *self);          /* NULL until job-ready */
/* After completion: the engine's result, its estimate x always NULL (it
 * lives on as the recovered frame: one copy, not two), and the frames in
 * input units; the recovered frame is NULL when the run produced no
 * estimate. */
const SsSolveResult *ss_solve_task_get_result (SsSolveTask *self);
SsFrame *ss_solve_task_get_recovered (SsSolveTask *self);
SsFrame *ss_solve_task_get_error_frame (SsSolveTask *self);
/* Every point delivered so far (SsProgressPoint). */
GArray *ss_solve_task_get_points (SsSolveTask *self);
const char *ss_solve_task_get_backend (SsSolveTask *self);
const char *ss_solve_task_get_device (SsSolveTask *self);
/* Report interval chosen for the run (iterations). */
int ss_solve_task_get_report_every (SsSolveTask *self);

/* Iterations between reports so that one comes at least every ~0.1 s for an
 * N-pixel problem of KIND on BACKEND ("cpu" / "cuda"), and the curve has
 * about a hundred points over ITERATIONS. */
int ss_solve_task_choose_report_every (gsize n, SsSolverKind kind, const char *backend,
                                       int iterations);

/* Makes the CPU transforms' plans for a WIDTH x HEIGHT problem in a
 * low-priority thread of its own, when a solve on BACKEND would run on the
 * CPU: never for CUDA; for AUTO in a build with CUDA, only if that thread
 * finds no GPU (the query starts the driver: never on the main thread).
 * FFTW measures its plans, which takes seconds for an awkward size
 * (872 = 8 x 109); done when an image opens, the first Run starts at once.
 * Plans are cached for the process. */
void ss_solve_task_prepare_size (int width, int height, SsBackendKind backend);

G_END_DECLS
