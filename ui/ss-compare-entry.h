/* ss-compare-entry.h: one solver's run in a comparison (a row of the table).
 *
 * Holds what the row shows (time, iterations, MSE/PSNR, residual, memory,
 * where it ran, a status) and what selecting the row brings back (the recovered frame,
 * the error frame, the convergence points). The "revision" property changes
 * on every update so that the table's cells can refresh.
 */
#pragma once

#include <glib-object.h>
#include "ss-frame.h"
#include "ss-solve-task.h"

G_BEGIN_DECLS

/* In display order: what a comparison is about first, the status last. */
typedef enum {
  SS_COMPARE_COLUMN_SOLVER,
  SS_COMPARE_COLUMN_TIME,
  SS_COMPARE_COLUMN_ITERATIONS,
  SS_COMPARE_COLUMN_MSE,
  SS_COMPARE_COLUMN_PSNR,
  SS_COMPARE_COLUMN_MEMORY,
  SS_COMPARE_COLUMN_RESIDUAL,
  SS_COMPARE_COLUMN_BACKEND,   /* where it ran: a solver without a GPU form runs on the CPU */
  SS_COMPARE_COLUMN_STATUS,
  SS_COMPARE_N_COLUMNS
} SsCompareColumn;

#define SS_TYPE_COMPARE_ENTRY (ss_compare_entry_get_type ())
G_DECLARE_FINAL_TYPE (SsCompareEntry, ss_compare_entry, SS, COMPARE_ENTRY, GObject)

SsCompareEntry *ss_compare_entry_new (const char *solver_name, guint series);

/* While it runs: the latest report. */
void ss_compare_entry_set_progress (SsCompareEntry *self, const SsProgressPoint *point);
/* When it ends: the engine's result (or NULL), the frames, and a status
 * ("done", "stopped", an error). The result's metrics are taken when there
 * is a RECOVERED frame: a solver that failed before producing an estimate
 * has none. */
void ss_compare_entry_set_finished (SsCompareEntry *self, const SsSolveResult *result,
                                    SsFrame *recovered, SsFrame *error_frame, GArray *points,
                                    const char *status);

const char *ss_compare_entry_get_solver_name (SsCompareEntry *self);
const char *ss_compare_entry_get_status (SsCompareEntry *self);
/* Where it ran, as the engine reports it ("cpu" / "cuda" and the device's
 * name), once finished with a result; else NULL. */
const char *ss_compare_entry_get_backend (SsCompareEntry *self);
const char *ss_compare_entry_get_device (SsCompareEntry *self);
guint ss_compare_entry_get_series (SsCompareEntry *self);
SsFrame *ss_compare_entry_get_recovered (SsCompareEntry *self);
SsFrame *ss_compare_entry_get_error_frame (SsCompareEntry *self);
GArray *ss_compare_entry_get_points (SsCompareEntry *self);   /* SsProgressPoint, or NULL */
double ss_compare_entry_get_mse (SsCompareEntry *self);
double ss_compare_entry_get_seconds (SsCompareEntry *self);
int ss_compare_entry_get_iterations (SsCompareEntry *self);
gboolean ss_compare_entry_is_finished (SsCompareEntry *self);

/* The text of one cell. */
char *ss_compare_entry_dup_column_text (SsCompareEntry *self, SsCompareColumn column);
const char *ss_compare_column_title (SsCompareColumn column);

G_END_DECLS
