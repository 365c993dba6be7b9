/* ss-window.h: the main window: open, solve live, compare, export.
 *
 * Every command is an action ("win.open", "win.run", "win.stop",
 * "win.compare", "win.export" ('fits' | 'png' | 'csv'), "win.zoom-*",
 * "win.view" ('original' | 'measured' | 'recovered' | 'error'), "win.split",
 * "win.fullscreen", "win.open-recent" (URI), "win.dismiss-message",
 * "win.choose-hdu", "win.pick-star", "win.find-stars", "win.phase-transition").
 * Long work (loading, solving, exporting, stretching) runs in worker
 * threads; widgets are touched on the main thread only. Errors show as a
 * banner at the top of the window.
 *
 * The *_sync functions are for tests and scripts: they start the same work
 * as the actions and iterate the main context until it is done.
 */
#pragma once

#include <gtk/gtk.h>
#include "ss-frame.h"
#include "ss-hdu-chooser.h"
#include "ss-image-view.h"
#include "ss-params-panel.h"
#include "ss-phase-window.h"
#include "ss-plot.h"
#include "ss-compare-table.h"

G_BEGIN_DECLS

typedef enum {
  SS_VIEW_ORIGINAL,
  SS_VIEW_MEASURED,
  SS_VIEW_RECOVERED,
  SS_VIEW_ERROR,
} SsViewKind;

typedef enum {
  SS_EXPORT_FITS,
  SS_EXPORT_PNG,
  SS_EXPORT_CSV,
} SsExportFormat;

typedef struct {
  int bit_depth;         /* PNG: 8 or 16 */
  gboolean as_displayed; /* PNG: the view's stretch and limits (else linear min-max) */
} SsExportOptions;

#define SS_TYPE_WINDOW (ss_window_get_type ())
G_DECLARE_FINAL_TYPE (SsWindow, ss_window, SS, WINDOW, GtkApplicationWindow)

SsWindow *ss_window_new (GtkApplication *application);

/* Opens PATH in the background (FITS or PNG); errors go to the banner. */
void ss_window_open_path (SsWindow *self, const char *path);
/* Offers the open FITS file's image HDUs and planes, or a colour PNG's
 * channels (it opens by itself when a file has more than one image HDU, or
 * is a cube of other than three planes). */
void ss_window_choose_hdu (SsWindow *self);
/* Opens the bundled sample image. */
void ss_window_open_sample (SsWindow *self);
/* The sample's path (SHARPSKY_DATA, the installed data, the source tree), or NULL. */
char *ss_window_find_sample (void);

void ss_window_run (SsWindow *self);
/* Runs SETTINGS as Run runs the panel's, leaving the panel as it is: for
 * settings the panel cannot show (tests ask for a GPU that is not there). */
void ss_window_run_settings (SsWindow *self, const SsSettings *settings);
void ss_window_stop (SsWindow *self);
/* Runs the solvers of CHOICES[i] (their kind and the choices they read; every
 * other setting from the panel) one after another. */
void ss_window_compare (SsWindow *self, const SsSolveParams *choices, guint n);

void ss_window_set_view (SsWindow *self, SsViewKind view);

/* Writes the shown view (or the curves) to PATH without a dialog. */
void ss_window_export (SsWindow *self, SsExportFormat format, const char *path,
                       const SsExportOptions *options, gboolean force);

/* ---- for tests only (ss-window-testing.c) ----------------------------------
 * The app never calls these: tests/test-ui.c drives the window through them.
 * The _sync and wait functions iterate the default main context until the
 * work is done or TIMEOUT seconds have passed. */

gboolean ss_window_open_path_sync (SsWindow *self, const char *path, double timeout,
                                   GError **error);
/* Fits the PSF to the star nearest (COL, ROW) (full-image pixels from 0, row 0
 * at the bottom), as a click in pick mode does, or to the stars found
 * automatically; the fit goes to the panel. FALSE with the fit's error. */
gboolean ss_window_fit_star_sync (SsWindow *self, int col, int row, double timeout,
                                  GError **error);
gboolean ss_window_find_stars_sync (SsWindow *self, double timeout, GError **error);
gboolean ss_window_wait_idle (SsWindow *self, double timeout);
gboolean ss_window_export_sync (SsWindow *self, SsExportFormat format, const char *path,
                                const SsExportOptions *options, gboolean force, double timeout,
                                GError **error);
/* Iterates the main context until the image view has drawn its latest frame. */
gboolean ss_window_wait_rendered (SsWindow *self, double timeout);
/* Iterates the main context until the image view has a size: on a loaded
 * machine the window's first layout can come after the test's first look. */
gboolean ss_window_wait_view_allocated (SsWindow *self, double timeout);

gboolean ss_window_is_busy (SsWindow *self);      /* loading, solving or exporting */
gboolean ss_window_is_running (SsWindow *self);   /* a solve (or comparison) under way */
/* The frame a view shows now (live preview while running), or NULL. */
SsFrame *ss_window_get_frame (SsWindow *self, SsViewKind view);
/* The chooser while it is open, else NULL. */
SsHduChooser *ss_window_get_hdu_chooser (SsWindow *self);
/* The Phase transition window "win.phase-transition" opened, while it exists. */
SsPhaseWindow *ss_window_get_phase_window (SsWindow *self);
/* What Compare offers: each check button's solver and choices (owned by
 * the list; the array is the caller's to free). */
GPtrArray *ss_window_get_compare_choices (SsWindow *self);
SsParamsPanel *ss_window_get_params_panel (SsWindow *self);
SsImageView *ss_window_get_image_view (SsWindow *self);
SsPlot *ss_window_get_plot (SsWindow *self);
SsCompareTable *ss_window_get_compare_table (SsWindow *self);
/* The banner's text, or NULL when no message is shown. */
const char *ss_window_get_message (SsWindow *self);
const char *ss_window_get_status (SsWindow *self);
const char *ss_window_get_path (SsWindow *self);
/* Live previews shown since the last run started, and the latest one (kept
 * after the run; NULL before the first). */
guint ss_window_get_preview_count (SsWindow *self);
/* The iteration count the running status counts towards; 0 when the
 * solver sets its own (no "/N" shown). */
int ss_window_get_iteration_target (SsWindow *self);
SsFrame *ss_window_get_last_preview (SsWindow *self);
/* Iteration of the latest report of the current or last run. */
int ss_window_get_iteration (SsWindow *self);

G_END_DECLS
