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
 */
#pragma once

#include "ss-window.h"
#include "ss-config.h"
#include "ss-export.h"
#include "ss-solve-task.h"
#include "ss-star-fit.h"
#include "ss-gunzip.h"

#include <math.h>
#include <string.h>
#include <unistd.h>

G_BEGIN_DECLS

#define SAMPLE_NAME "hubble_deep_field.fits"
/* A stop the engine has not honoured after this long detaches the worker. */
#define STOP_DETACH_MS 400
#define RECENT_MAX 8
#define APP_NAME "Sharpsky"

typedef struct {
  SsSolverKind kind;
  SsDirectMethod method;
} CompareItem;

struct _SsWindow
{
  GtkApplicationWindow parent_instance;

  /* Template children. */
  GMenu *main_menu;
  GMenu *recent_menu;
  GtkCheckButton *compare_cpadmm, *compare_fista, *compare_ista;
  GtkCheckButton *compare_cholesky, *compare_gets, *compare_fft;
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
  guint status_tick_id;
  gint64 run_started;       /* when Run was pressed (monotonic µs) */
  gint64 started_at;        /* when the backend started, 0 before */
  gint64 last_progress;     /* when the last report arrived */
  char *backend_text;

  /* A comparison: what is left to run, and the row being filled. */
  gboolean comparing;
  GArray *compare_queue;
  SsCompareEntry *compare_entry;
  SsSettings compare_settings;

  /* A star being fitted for the PSF. */
  gboolean fitting;
  GError *fit_error;
  GCancellable *fit_cancellable;

  /* Exports. */
  gboolean exporting;
  GError *export_error;

  SsViewKind view_kind;
  SsViewKind split_kind;
  gboolean split;
  gboolean syncing_view;
  char *message;
  gboolean disposed;
};

/* ss-window.c */
#define SS_WINDOW_N_VIEWS 4
extern const char *const ss_window_view_names[SS_WINDOW_N_VIEWS];   /* win.view states */
extern const char *const ss_window_view_titles[SS_WINDOW_N_VIEWS];
void ss_window_change_split_state (GSimpleAction *action, GVariant *value, gpointer data);
void ss_window_change_view_state (GSimpleAction *action, GVariant *value, gpointer data);
void ss_window_dismiss_message (SsWindow *self);
void ss_window_enable_action (SsWindow *self, const char *name, gboolean enabled);
SsFrame *ss_window_frame_for (SsWindow *self, SsViewKind kind, gboolean job_region);
void ss_window_refresh_view (SsWindow *self);
gsize ss_window_resident_bytes (void);
void ss_window_set_status (SsWindow *self, const char *text);
void ss_window_show_error (SsWindow *self, const char *context, const GError *error);
void ss_window_show_file_error (SsWindow *self, const char *verb, const char *path, const GError *error);
void ss_window_show_message (SsWindow *self, const char *text, gboolean is_error);
GAction *ss_window_win_action (SsWindow *self, const char *name);

/* ss-window-actions.c */
void ss_window_on_fullscreened (SsWindow *self);
void ss_window_update_actions (SsWindow *self);
/* Adds the window's actions (win.*) to SELF. */
void ss_window_add_actions (SsWindow *self);

/* ss-window-open.c */
/* File chooser patterns, NULL-terminated. */
extern const char *const ss_window_fits_patterns[];
extern const char *const ss_window_png_patterns[];
extern const char *const ss_window_csv_patterns[];
void ss_window_action_choose_hdu (GSimpleAction *action, GVariant *param, gpointer data);
void ss_window_action_open (GSimpleAction *action, GVariant *param, gpointer data);
void ss_window_action_open_recent (GSimpleAction *action, GVariant *param, gpointer data);
void ss_window_add_filter (GtkFileChooser *chooser, const char *name, const char *const *patterns);
guint ss_window_count_images (GPtrArray *hdus);
gboolean ss_window_on_drop (GtkDropTarget *target, const GValue *value, double x, double y, SsWindow *self);
void ss_window_rebuild_recent_menu (SsWindow *self);

/* ss-window-solve.c */
void ss_window_clear_results (SsWindow *self);
void ss_window_detach_task (SsWindow *self);
gboolean ss_window_on_status_tick (gpointer data);
void ss_window_on_table_selected (SsCompareTable *table, SsCompareEntry *entry, SsWindow *self);
void ss_window_set_job (SsWindow *self, SsJob *job);
void ss_window_update_idle_status (SsWindow *self);

/* ss-window-export.c */
void ss_window_action_export (GSimpleAction *action, GVariant *param, gpointer data);

/* ss-window-stars.c */
void ss_window_action_find_stars (GSimpleAction *action, GVariant *param, gpointer data);
void ss_window_action_pick_star (GSimpleAction *action, GVariant *param, gpointer data);
void ss_window_find_stars (SsWindow *self);
void ss_window_forget_star_fit (SsWindow *self);
void ss_window_on_pixel_picked (SsImageView *view, int col, int row, SsWindow *self);

G_END_DECLS
