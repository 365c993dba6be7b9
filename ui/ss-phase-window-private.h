/* ss-phase-window-private.h: what the files of the Phase transition window share.
 *
 * SsPhaseWindow is split along its seams, as SsWindow is:
 *   ss-phase-window.c           the type, its actions and keys, export, entry points for tests
 *   ss-phase-window-sweep.c     the sweep in a worker thread, Run and Stop, the state shown
 *   ss-phase-window-controls.c  the controls (settings, command line) and building the window
 * Only these files include it. What one file alone uses (its constants, its
 * includes) stays in that file.
 */
#pragma once

#include "ss-phase-window.h"

G_BEGIN_DECLS

/* The most δ or ρ steps: the spin buttons' limit, and the sweep's clamp. */
#define MAX_GRID 40

struct _SsPhaseWindow
{
  GtkWindow parent_instance;

  GtkDropDown *solver_dropdown, *ensemble_dropdown, *values_dropdown, *backend_dropdown;
  GtkSpinButton *n_spin, *deltas_spin, *rhos_spin, *trials_spin, *seed_spin;
  GtkWidget *controls;        /* the grid of controls: insensitive while a sweep runs */
  SsPhaseView *view;
  GtkProgressBar *progress;
  GtkLabel *status_label, *command_label;
  GArray *algorithms;         /* SsCsAlgorithm of each solver row, from the table */

  /* The sweep under way or the last one (main thread only). */
  GCancellable *cancellable;
  gboolean running;
  guint serial;               /* which sweep's cells are welcome */
  SsPhaseSettings run_settings;
  double *deltas, *rhos;
  int n_deltas, n_rhos;
  GArray *cells;              /* SsCsPhaseCell received, in order */
  gint64 started;             /* monotonic µs */
  const char *backend_used;   /* "cpu" or "cuda" (static), or NULL */
  gboolean disposed;
};

/* ---- ss-phase-window-sweep.c ---------------------------------------------- */

/* Enables the actions and controls as RUNNING allows; progress and status line. */
void ss_phase_window_update_state (SsPhaseWindow *self);

/* ---- ss-phase-window-controls.c ------------------------------------------- */

/* Shows the controls' command line (a control changed, or the window is new). */
void ss_phase_window_on_control_changed (SsPhaseWindow *self);
/* Builds the window's widgets: header bar, controls, diagram and status bar. */
void ss_phase_window_build_window (SsPhaseWindow *self);

G_END_DECLS
