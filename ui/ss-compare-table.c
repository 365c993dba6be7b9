/* ss-compare-table.c: a GtkColumnView over a list of SsCompareEntry. */
#include "ss-compare-table.h"

struct _SsCompareTable
{
  GtkWidget parent_instance;
  GtkWidget *scrolled;
  GtkColumnView *view;
  GListStore *store;
  GtkSingleSelection *selection;
};

G_DEFINE_FINAL_TYPE (SsCompareTable, ss_compare_table, GTK_TYPE_WIDGET)

enum { SIGNAL_SELECTED, N_SIGNALS };
static guint signals[N_SIGNALS];

#define COLUMN_KEY "ss-compare-column"
#define HANDLER_KEY "ss-compare-handler"

/* ---- cells ---------------------------------------------------------------- */

static void
refresh_cell (GtkLabel *label, SsCompareEntry *entry)
{
  SsCompareColumn column = GPOINTER_TO_INT (g_object_get_data (G_OBJECT (label), COLUMN_KEY));
  g_autofree char *text = ss_compare_entry_dup_column_text (entry, column);
  gtk_label_set_text (label, text);
  /* A cut status (an error) in full; the device behind "cuda" or "cpu". */
  const char *tip = column == SS_COMPARE_COLUMN_STATUS    ? text
                    : column == SS_COMPARE_COLUMN_BACKEND ? ss_compare_entry_get_device (entry)
                                                          : NULL;
  gtk_widget_set_tooltip_text (GTK_WIDGET (label), tip);
}

static void
on_entry_revision (SsCompareEntry *entry, GParamSpec *pspec, GtkLabel *label)
{
  refresh_cell (label, entry);
}

static void
setup_cell (GtkSignalListItemFactory *factory, GtkListItem *item, gpointer column)
{
  GtkWidget *label = gtk_label_new (NULL);
  gboolean numeric = GPOINTER_TO_INT (column) != SS_COMPARE_COLUMN_SOLVER
                     && GPOINTER_TO_INT (column) != SS_COMPARE_COLUMN_STATUS
                     && GPOINTER_TO_INT (column) != SS_COMPARE_COLUMN_BACKEND;
  gtk_label_set_xalign (GTK_LABEL (label), numeric ? 1.0f : 0.0f);
  /* Numbers are never cut; a long status (an error) is, with a tooltip. */
  if (GPOINTER_TO_INT (column) == SS_COMPARE_COLUMN_STATUS)
    gtk_label_set_ellipsize (GTK_LABEL (label), PANGO_ELLIPSIZE_END);
  if (numeric)
    gtk_widget_add_css_class (label, "numeric");
  g_object_set_data (G_OBJECT (label), COLUMN_KEY, column);
  gtk_list_item_set_child (item, label);
}

static void
bind_cell (GtkSignalListItemFactory *factory, GtkListItem *item, gpointer column)
{
  GtkLabel *label = GTK_LABEL (gtk_list_item_get_child (item));
  SsCompareEntry *entry = gtk_list_item_get_item (item);
  refresh_cell (label, entry);
  gulong handler = g_signal_connect (entry, "notify::revision", G_CALLBACK (on_entry_revision),
                                     label);
  g_object_set_data (G_OBJECT (label), HANDLER_KEY, GSIZE_TO_POINTER (handler));
}

static void
unbind_cell (GtkSignalListItemFactory *factory, GtkListItem *item, gpointer column)
{
  GtkWidget *label = gtk_list_item_get_child (item);
  SsCompareEntry *entry = gtk_list_item_get_item (item);
  gulong handler = GPOINTER_TO_SIZE (g_object_get_data (G_OBJECT (label), HANDLER_KEY));
  if (entry != NULL && handler != 0)
    g_signal_handler_disconnect (entry, handler);
  g_object_set_data (G_OBJECT (label), HANDLER_KEY, NULL);
}

static void
add_column (SsCompareTable *self, SsCompareColumn column)
{
  GtkListItemFactory *factory = gtk_signal_list_item_factory_new ();
  g_signal_connect (factory, "setup", G_CALLBACK (setup_cell), GINT_TO_POINTER (column));
  g_signal_connect (factory, "bind", G_CALLBACK (bind_cell), GINT_TO_POINTER (column));
  g_signal_connect (factory, "unbind", G_CALLBACK (unbind_cell), GINT_TO_POINTER (column));
  GtkColumnViewColumn *col = gtk_column_view_column_new (ss_compare_column_title (column),
                                                         factory);
  gtk_column_view_column_set_resizable (col, TRUE);
  gtk_column_view_column_set_expand (col, column == SS_COMPARE_COLUMN_STATUS);
  /* Wide enough for "Direct (GETS inverse)" and "1.234e-05". */
  static const int widths[SS_COMPARE_N_COLUMNS] = {
    [SS_COMPARE_COLUMN_SOLVER] = 160, [SS_COMPARE_COLUMN_TIME] = 75,
    [SS_COMPARE_COLUMN_ITERATIONS] = 85, [SS_COMPARE_COLUMN_MSE] = 90,
    [SS_COMPARE_COLUMN_PSNR] = 90, [SS_COMPARE_COLUMN_MEMORY] = 90,
    [SS_COMPARE_COLUMN_RESIDUAL] = 90, [SS_COMPARE_COLUMN_BACKEND] = 65,
    [SS_COMPARE_COLUMN_STATUS] = 120,
  };
  gtk_column_view_column_set_fixed_width (col, widths[column]);
  gtk_column_view_append_column (self->view, col);
  g_object_unref (col);
}

/* ---- public API ----------------------------------------------------------- */

GtkWidget *
ss_compare_table_new (void)
{
  return g_object_new (SS_TYPE_COMPARE_TABLE, NULL);
}

void
ss_compare_table_clear (SsCompareTable *self)
{
  g_return_if_fail (SS_IS_COMPARE_TABLE (self));
  g_list_store_remove_all (self->store);
}

void
ss_compare_table_append (SsCompareTable *self, SsCompareEntry *entry)
{
  g_return_if_fail (SS_IS_COMPARE_TABLE (self));
  g_list_store_append (self->store, entry);
}

guint
ss_compare_table_get_n_entries (SsCompareTable *self)
{
  g_return_val_if_fail (SS_IS_COMPARE_TABLE (self), 0);
  return g_list_model_get_n_items (G_LIST_MODEL (self->store));
}

SsCompareEntry *
ss_compare_table_get_entry (SsCompareTable *self, guint position)
{
  g_return_val_if_fail (SS_IS_COMPARE_TABLE (self), NULL);
  SsCompareEntry *entry = g_list_model_get_item (G_LIST_MODEL (self->store), position);
  if (entry)
    g_object_unref (entry);   /* the store keeps its reference */
  return entry;
}

SsCompareEntry *
ss_compare_table_get_selected (SsCompareTable *self)
{
  g_return_val_if_fail (SS_IS_COMPARE_TABLE (self), NULL);
  return gtk_single_selection_get_selected_item (self->selection);
}

void
ss_compare_table_select (SsCompareTable *self, guint position)
{
  g_return_if_fail (SS_IS_COMPARE_TABLE (self));
  gtk_single_selection_set_selected (self->selection, position);
}

static void
on_selection_changed (GtkSingleSelection *selection, GParamSpec *pspec, SsCompareTable *self)
{
  g_signal_emit (self, signals[SIGNAL_SELECTED], 0,
                 gtk_single_selection_get_selected_item (selection));
}

/* ---- GObject -------------------------------------------------------------- */

static void
ss_compare_table_dispose (GObject *object)
{
  SsCompareTable *self = SS_COMPARE_TABLE (object);
  g_clear_pointer (&self->scrolled, gtk_widget_unparent);
  g_clear_object (&self->store);
  G_OBJECT_CLASS (ss_compare_table_parent_class)->dispose (object);
}

static void
ss_compare_table_class_init (SsCompareTableClass *klass)
{
  G_OBJECT_CLASS (klass)->dispose = ss_compare_table_dispose;
  gtk_widget_class_set_layout_manager_type (GTK_WIDGET_CLASS (klass), GTK_TYPE_BIN_LAYOUT);
  gtk_widget_class_set_css_name (GTK_WIDGET_CLASS (klass), "ss-compare-table");
  signals[SIGNAL_SELECTED] = g_signal_new ("selected", G_TYPE_FROM_CLASS (klass),
                                           G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL, G_TYPE_NONE,
                                           1, SS_TYPE_COMPARE_ENTRY);
}

static void
ss_compare_table_init (SsCompareTable *self)
{
  self->store = g_list_store_new (SS_TYPE_COMPARE_ENTRY);
  self->selection = gtk_single_selection_new (G_LIST_MODEL (g_object_ref (self->store)));
  gtk_single_selection_set_autoselect (self->selection, FALSE);
  gtk_single_selection_set_can_unselect (self->selection, TRUE);
  g_signal_connect (self->selection, "notify::selected", G_CALLBACK (on_selection_changed), self);
  self->view = GTK_COLUMN_VIEW (gtk_column_view_new (GTK_SELECTION_MODEL (self->selection)));
  gtk_column_view_set_show_column_separators (self->view, TRUE);
  gtk_widget_add_css_class (GTK_WIDGET (self->view), "data-table");
  for (int c = 0; c < SS_COMPARE_N_COLUMNS; c++)
    add_column (self, (SsCompareColumn) c);
  self->scrolled = gtk_scrolled_window_new ();
  gtk_scrolled_window_set_child (GTK_SCROLLED_WINDOW (self->scrolled), GTK_WIDGET (self->view));
  gtk_scrolled_window_set_policy (GTK_SCROLLED_WINDOW (self->scrolled), GTK_POLICY_AUTOMATIC,
                                  GTK_POLICY_AUTOMATIC);
  gtk_widget_set_parent (self->scrolled, GTK_WIDGET (self));
}
