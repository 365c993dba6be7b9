/* ss-window-private.h: what the files of the main window share.
 *
 * SsWindow is split along its seams, as GNOME Text Editor splits its window:
 *   ss-window.c          the window: template, views, status line, messages
 *   ss-window-actions.c  its actions (GActionEntry table) and their sensitivity
 *   ss-window-open.c     opening files: reading, HDU chooser, recent files, drops
 *   ss-window-solve.c    Run, Stop and Compare, with the status of a run
 *   ss-window-export.c   FITS, PNG and CSV export
 *   ss-window-stars.c    PSFs measured from stars
 *   ss-window-testing.c  entry points for tests only (ss-window.h says which)
 * Only these files include it. What one file alone uses (its constants, its
 * includes) stays in that file.
 */
#pragma once

#include "ss-window.h"
#include "ss-phase-window.h"
#include "ss-solve-task.h"

G_BEGIN_DECLS


struct _SsWindow
{
  GtkApplicationWindow parent_instance;

  /* Template children. */
  GMenu *main_menu;
  GMenu *recent_menu;
  GtkBox *compare_list;       /* a check button per solver variant, from the solver table */
  GtkMenuButton *compare_button;
  GtkWidget *banner_box;
  GtkImage *banner_icon;
  GtkLabel *banner_label;
  SsParamsPanel *panel;
  SsImageView *view;
  SsPlot *plot;
  SsCompareTable *table;
  GtkDropDown *view_dropdown, *split_dropdown, *stretch_dropdown, *limits_dropdown,
      *colormap_dropdown;
  GtkLabel *zoom_label, *status_label, *pointer_label;

  /* The open image: HDU number HDU of the file (-1: not FITS) and its
   * plane PLANE (-1: the mean of three colour planes). */
  char *path;
  GPtrArray *hdus;          /* the file's SsFitsHdu, or NULL (PNG) */
  int hdu, plane;
  SsHduChooser *chooser;    /* while one is open */
  SsFrame *input;
  SsHeader *header;
  gboolean loading;
  GError *load_error;
  GCancellable *load_cancellable;

  /* The problem and the result shown. */
  SsJob *job;
  SsFrame *recovered;
  SsFrame *error_frame;
  SsFrame *preview;
  SsSolveTask *result_task;   /* the run whose result is shown (settings, metrics) */

  /* The run under way. */
  SsSolveTask *task;
  GCancellable *cancellable;
  gboolean running;
  guint series;
  guint preview_count;
  int iteration;
  int iteration_target;
  guint stop_timeout_id;
  int detached_solves;    /* stopped solves still finishing their step in the background */
  guint status_tick_id;
  gint64 run_started;       /* when Run was pressed (monotonic µs) */
  gint64 job_ready_at;      /* when its problem was built (prepare ends), 0 before */
  double planning_at_run;   /* ss_planning_seconds () when Run was pressed ... */
  double planning_at_job;   /* ... and when the problem was built */
  double read_seconds;      /* opening the image shown, or NAN */
  gint64 open_started;      /* when its load began */
  gint64 started_at;        /* when the backend started, 0 before */
  gint64 last_progress;     /* when the last report arrived */
  char *backend_text;

  /* A comparison: what is left to run, and the row being filled. */
  gboolean comparing;
  GArray *compare_queue;    /* SsSolveParams: the kind and choices of each run left */
  SsCompareEntry *compare_entry;
  SsSettings compare_settings;

  /* A star being fitted for the PSF. */
  gboolean fitting;
  gboolean fit_quiet;       /* the search started by opening a file: no banner */
  GError *fit_error;
  GCancellable *fit_cancellable;

  /* Exports. */
  gboolean exporting;
  GError *export_error;

  /* The Phase transition window opened from this one, while it exists. */
  SsPhaseWindow *phase_window;

  SsViewKind view_kind;
  SsViewKind split_kind;
  gboolean split;
  gboolean syncing_view;
  char *message;
  gboolean disposed;
};

/* ---- ss-window.c ---------------------------------------------------------- */

#define SS_WINDOW_N_VIEWS 4
/* SsViewKind's names: the "win.view" states, and the titles shown. */
extern const char *const ss_window_view_names[SS_WINDOW_N_VIEWS];
extern const char *const ss_window_view_titles[SS_WINDOW_N_VIEWS];
/* The state handlers of "win.view" and "win.split". */
void ss_window_change_view_state (GSimpleAction *action, GVariant *value, gpointer data);
void ss_window_change_split_state (GSimpleAction *action, GVariant *value, gpointer data);
/* The window's action NAME, or NULL; enabling one that is not there does nothing. */
GAction *ss_window_win_action (SsWindow *self, const char *name);
void ss_window_enable_action (SsWindow *self, const char *name, gboolean enabled);
/* The status line: TEXT, or what the open image is while nothing runs. */
void ss_window_set_status (SsWindow *self, const char *text);
void ss_window_update_idle_status (SsWindow *self);
/* Resident memory of the process (the status line's "memory"). */
gsize ss_window_resident_bytes (void);
/* The banner: a message (IS_ERROR: in red), an error with its CONTEXT, a file
 * that could not be VERB'd ("open", "export"); dismissing hides it. */
void ss_window_show_message (SsWindow *self, const char *text, gboolean is_error);
void ss_window_show_error (SsWindow *self, const char *context, const GError *error);
void ss_window_show_file_error (SsWindow *self, const char *verb, const char *path,
                                const GError *error);
void ss_window_dismiss_message (SsWindow *self);
/* The frame view KIND shows (JOB_REGION: the original cut to the solved
 * region), or NULL; refreshing shows the current view's frames again. */
SsFrame *ss_window_frame_for (SsWindow *self, SsViewKind kind, gboolean job_region);
void ss_window_refresh_view (SsWindow *self);

/* ---- ss-window-actions.c -------------------------------------------------- */

/* Compare's list: a check button per variant of each solver of the table. */
void ss_window_fill_compare_list (SsWindow *self);
/* Adds the window's actions (win.*) to SELF. */
void ss_window_add_actions (SsWindow *self);
/* Enables each action as the window's state allows (running, loading, ...). */
void ss_window_update_actions (SsWindow *self);
/* Keeps "win.fullscreen" in step with the window (notify::fullscreened). */
void ss_window_on_fullscreened (SsWindow *self);

/* ---- ss-window-open.c ----------------------------------------------------- */

/* "win.open", "win.open-recent" and "win.choose-hdu". */
void ss_window_action_open (GSimpleAction *action, GVariant *param, gpointer data);
void ss_window_action_open_recent (GSimpleAction *action, GVariant *param, gpointer data);
void ss_window_action_choose_hdu (GSimpleAction *action, GVariant *param, gpointer data);
/* Files dropped on the window ("drop" of its GtkDropTarget): the first is
 * opened, and once it is, the banner says the others were not. */
gboolean ss_window_on_drop (GtkDropTarget *target, const GValue *value, double x, double y,
                            SsWindow *self);
/* Fills the "Open Recent" menu from the recent files this app opened. */
void ss_window_rebuild_recent_menu (SsWindow *self);

/* ---- ss-window-solve.c ---------------------------------------------------- */

/* Sets the problem SELF shows (NULL: none); the plot's y axis names its metric. */
void ss_window_set_job (SsWindow *self, SsJob *job);
/* Drops the recovered image, error, preview and the run they came from. */
void ss_window_clear_results (SsWindow *self);
/* Lets go of the running task, whose signals no longer reach SELF: not running. */
void ss_window_detach_task (SsWindow *self);
/* A window closing while its solve runs: the solve is cancelled, but a step
 * the engine cannot interrupt (a dense factorisation) goes on; the
 * application is held until it ends, as after Stop's timeout. */
void ss_window_hold_running_solve (SsWindow *self);
/* Holds SELF's application until ss_window_release_application_of (OWNER),
 * or OWNER's end: quitting then waits for the work OWNER stands for (a
 * solve's last step, an export's write). Released on the main thread by
 * the callback that ends that work: GApplication is not for workers. */
void ss_window_hold_application_for (SsWindow *self, GObject *owner);
void ss_window_release_application_of (GObject *owner);
/* Every 500 ms: the status line of a run that gives no report. */
gboolean ss_window_on_status_tick (gpointer data);
/* A row of the comparison chosen: its curve highlighted, its result shown. */
void ss_window_on_table_selected (SsCompareTable *table, SsCompareEntry *entry,
                                  SsWindow *self);

/* ---- ss-window-export.c --------------------------------------------------- */

/* "win.export" ('fits' | 'png' | 'csv'): the save dialog. */
void ss_window_action_export (GSimpleAction *action, GVariant *param, gpointer data);

/* ---- ss-window-stars.c ---------------------------------------------------- */

/* "win.pick-star" (toggles pick mode) and "win.find-stars". */
void ss_window_action_pick_star (GSimpleAction *action, GVariant *param, gpointer data);
void ss_window_action_find_stars (GSimpleAction *action, GVariant *param, gpointer data);
/* Fits the PSF to the stars found in the image, in the background. */
void ss_window_find_stars (SsWindow *self);
/* The same, started by opening a real image: reports to the status line. */
void ss_window_find_stars_quietly (SsWindow *self);
/* Drops the PSF measured (and a fit running): it was another image's. */
void ss_window_forget_star_fit (SsWindow *self);
/* A click in pick mode: fits the star there. */
void ss_window_on_pixel_picked (SsImageView *view, int col, int row, SsWindow *self);

G_END_DECLS
