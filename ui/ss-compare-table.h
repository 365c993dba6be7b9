/* ss-compare-table.h: the comparison table (solver, time, iterations,
 * MSE/PSNR, residual, memory); selecting a row selects that result.
 *
 * Signal: selected (SsCompareEntry *entry, or NULL).
 */
#pragma once

#include <gtk/gtk.h>
#include "ss-compare-entry.h"

G_BEGIN_DECLS

#define SS_TYPE_COMPARE_TABLE (ss_compare_table_get_type ())
G_DECLARE_FINAL_TYPE (SsCompareTable, ss_compare_table, SS, COMPARE_TABLE, GtkWidget)

GtkWidget *ss_compare_table_new (void);
void ss_compare_table_clear (SsCompareTable *self);
void ss_compare_table_append (SsCompareTable *self, SsCompareEntry *entry);
guint ss_compare_table_get_n_entries (SsCompareTable *self);
/* Transfer none. */
SsCompareEntry *ss_compare_table_get_entry (SsCompareTable *self, guint position);
SsCompareEntry *ss_compare_table_get_selected (SsCompareTable *self);
void ss_compare_table_select (SsCompareTable *self, guint position);

G_END_DECLS
