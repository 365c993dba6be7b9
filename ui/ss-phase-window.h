/* ss-phase-window.h: the Phase transition window, for teaching compressed
 * sensing: where a solver recovers random k-sparse signals, over a grid of
 * δ = m/n (how many measurements) and ρ = k/m (how sparse).
 *
 * Its sweep is the engine's (ss_cs_phase_transition), the one
 * `sharpsky-cli cs --phase-transition` runs, so the same settings and seed
 * give the same success rates, CSV and PNG; the window shows the matching
 * command line. The sweep runs in a worker thread with a GCancellable
 * ("phase.stop", Escape); each finished cell reaches the main thread
 * through an idle source and fills in its square of the diagram.
 *
 * Actions (installed on the window): "phase.run" (Ctrl+R), "phase.stop"
 * (Escape), "phase.export" ('png' | 'csv'; Ctrl+Shift+S, Ctrl+E) with a
 * save dialog that asks before replacing a file.
 */
#pragma once

#include <gtk/gtk.h>
#include "ss-phase-view.h"

G_BEGIN_DECLS

/* What the controls say. */
typedef struct {
  SsCsAlgorithm algorithm;  /* one the solver table names (SsSolverInfo.cs_algorithm) */
  SsEnsemble ensemble;
  SsCsValues values;
  int n;                    /* signal length */
  int n_deltas, n_rhos;     /* grid: ss_cs_phase_deltas and ss_cs_phase_rhos */
  int trials;               /* problems a cell */
  guint64 seed;
  SsBackendKind backend;
} SsPhaseSettings;

/* Small enough to finish in seconds on a laptop's CPU (NIHT at n 128 on
 * the CLI's default 9 × 10 grid, 10 trials a cell: about a second). */
void ss_phase_settings_init (SsPhaseSettings *settings);

typedef enum {
  SS_PHASE_EXPORT_PNG,
  SS_PHASE_EXPORT_CSV,
} SsPhaseExportFormat;

#define SS_TYPE_PHASE_WINDOW (ss_phase_window_get_type ())
G_DECLARE_FINAL_TYPE (SsPhaseWindow, ss_phase_window, SS, PHASE_WINDOW, GtkWindow)

SsPhaseWindow *ss_phase_window_new (GtkApplication *application);

void ss_phase_window_get_settings (SsPhaseWindow *self, SsPhaseSettings *settings);
/* Sets the controls (an algorithm the list lacks leaves the solver as it is). */
void ss_phase_window_set_settings (SsPhaseWindow *self, const SsPhaseSettings *settings);

/* Starts a sweep with the controls' settings (nothing while one runs). */
void ss_phase_window_run (SsPhaseWindow *self);
/* Cancels the sweep: the cells done stay on the diagram. */
void ss_phase_window_stop (SsPhaseWindow *self);
gboolean ss_phase_window_is_running (SsPhaseWindow *self);

/* Writes the last sweep's diagram (PNG, as the CLI's) or its cells (CSV,
 * the CLI's format) to PATH; an existing file only with FORCE. The status
 * line says what happened. */
gboolean ss_phase_window_export (SsPhaseWindow *self, SsPhaseExportFormat format,
                                 const char *path, gboolean force, GError **error);

/* The `sharpsky-cli cs` command that draws the same diagram (its -o PREFIX
 * left for the user). g_free. */
char *ss_phase_window_get_command_line (SsPhaseWindow *self);

/* ---- for tests ------------------------------------------------------------ */

/* Iterates the default main context until no sweep runs, or TIMEOUT
 * seconds (then FALSE). */
gboolean ss_phase_window_wait_idle (SsPhaseWindow *self, double timeout);
/* The cells the main thread has received from the last sweep, in order. */
const SsCsPhaseCell *ss_phase_window_get_cells (SsPhaseWindow *self, guint *n_cells);
/* The last sweep's grid: its cell count, δ and ρ values. */
guint ss_phase_window_get_n_total (SsPhaseWindow *self);
const double *ss_phase_window_get_deltas (SsPhaseWindow *self, int *n_deltas);
const double *ss_phase_window_get_rhos (SsPhaseWindow *self, int *n_rhos);
const char *ss_phase_window_get_status (SsPhaseWindow *self);
SsPhaseView *ss_phase_window_get_view (SsPhaseWindow *self);

G_END_DECLS
