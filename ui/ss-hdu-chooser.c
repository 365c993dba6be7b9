/* ss-hdu-chooser.c: the HDU and plane chooser (see ss-hdu-chooser.h). */
#include "ss-hdu-chooser.h"
#include "ss-fits.h"
#include "ss-param-controls.h"

struct _SsHduChooser
{
  GtkWindow parent_instance;

  GPtrArray *hdus;          /* SsFitsHdu, all of the file's */
  GtkListBox *list;         /* one row per image HDU; row data: its SsFitsHdu */
  GtkWidget *plane_label;
  GtkSpinButton *plane_spin;       /* any plane of a cube */
  GtkDropDown *colour_dropdown;     /* three planes: COLOUR_CHOICES */
};

G_DEFINE_FINAL_TYPE (SsHduChooser, ss_hdu_chooser, GTK_TYPE_WINDOW)

enum { SIGNAL_CHOSEN, N_SIGNALS };
static guint signals[N_SIGNALS];

/* What a three-plane image offers, in order: the mean (plane -1), then each
 * plane. Its planes are usually red, green and blue, but a three-band cube
 * is not always a colour image, so the plane's number is shown too. */
static const char *const COLOUR_CHOICES[] = {
  "Mean of the three planes", "Red (plane 0)", "Green (plane 1)", "Blue (plane 2)", NULL
};

static const char *
pixel_type_name (int bitpix)
{
  switch (bitpix)
    {
    case 8: return "8-bit integer";
    case 16: return "16-bit integer";
    case 32: return "32-bit integer";
    case 64: return "64-bit integer";
    case -32: return "32-bit float";
    case -64: return "64-bit float";
    default: return "unknown pixel type";
    }
}

char *
ss_hdu_chooser_describe (gconstpointer data)
{
  const SsFitsHdu *hdu = data;
  gboolean png = g_strcmp0 (hdu->kind, SS_HDU_CHOOSER_PNG) == 0;
  GString *text = g_string_new (NULL);
  if (png)
    g_string_append (text, "PNG");
  else
    g_string_append_printf (text, "HDU %d", hdu->number);
  if (hdu->name)
    g_string_append_printf (text, " · %s", hdu->name);
  g_string_append_printf (text, " · %" G_GINT64_FORMAT " × %" G_GINT64_FORMAT, hdu->width,
                          hdu->height);
  if (hdu->planes > 1)
    g_string_append_printf (text, " × %" G_GINT64_FORMAT, hdu->planes);
  if (!png)   /* a PNG's values are read scaled to [0, 1] */
    g_string_append_printf (text, " · %s", pixel_type_name (hdu->bitpix));
  if (g_str_has_prefix (hdu->kind, "compressed"))
    g_string_append (text, " · tile-compressed");
  return g_string_free (text, FALSE);
}

static const SsFitsHdu *
selected_hdu (SsHduChooser *self)
{
  GtkListBoxRow *row = gtk_list_box_get_selected_row (self->list);
  return row ? g_object_get_data (G_OBJECT (row), "hdu") : NULL;
}

/* The plane controls follow the selected HDU: hidden for a plain image, a
 * spin for a cube, and mean / red / green / blue for three (colour) planes. */
static void
update_plane_controls (SsHduChooser *self)
{
  const SsFitsHdu *hdu = selected_hdu (self);
  gint64 planes = hdu ? hdu->planes : 1;
  gboolean colour = planes == 3;
  gtk_widget_set_visible (self->plane_label, planes > 1);
  gtk_label_set_text_with_mnemonic (GTK_LABEL (self->plane_label),
                                    colour ? "_Channel" : "_Plane (from 0)");
  gtk_widget_set_visible (GTK_WIDGET (self->plane_spin), planes > 1 && !colour);
  gtk_widget_set_visible (GTK_WIDGET (self->colour_dropdown), colour);
  gtk_label_set_mnemonic_widget (GTK_LABEL (self->plane_label),
                                 colour ? GTK_WIDGET (self->colour_dropdown)
                                        : GTK_WIDGET (self->plane_spin));
  gtk_spin_button_set_range (self->plane_spin, 0, (double) MAX (planes - 1, 0));
}

gboolean
ss_hdu_chooser_select (SsHduChooser *self, int number, int plane)
{
  g_return_val_if_fail (SS_IS_HDU_CHOOSER (self), FALSE);
  for (int i = 0;; i++)
    {
      GtkListBoxRow *row = gtk_list_box_get_row_at_index (self->list, i);
      if (row == NULL)
        return FALSE;
      const SsFitsHdu *hdu = g_object_get_data (G_OBJECT (row), "hdu");
      if (hdu->number != number)
        continue;
      if (plane < -1 || plane >= hdu->planes || (plane == -1 && hdu->planes != 3))
        return FALSE;
      gtk_list_box_select_row (self->list, row);
      update_plane_controls (self);
      if (hdu->planes == 3)
        gtk_drop_down_set_selected (self->colour_dropdown, (guint) (plane + 1));
      else
        gtk_spin_button_set_value (self->plane_spin, MAX (plane, 0));
      return TRUE;
    }
}

void
ss_hdu_chooser_get_selection (SsHduChooser *self, int *hdu, int *plane)
{
  g_return_if_fail (SS_IS_HDU_CHOOSER (self));
  const SsFitsHdu *selected = selected_hdu (self);
  *hdu = selected ? selected->number : -1;
  if (selected == NULL || selected->planes == 1)
    *plane = 0;
  else if (selected->planes == 3)
    *plane = (int) gtk_drop_down_get_selected (self->colour_dropdown) - 1;
  else
    {
      /* A plane typed but not yet entered (Open clicked straight after
       * typing) is the one the user sees: commit it before reading. */
      ss_spin_button_commit_typed (self->plane_spin);
      *plane = gtk_spin_button_get_value_as_int (self->plane_spin);
    }
}

void
ss_hdu_chooser_accept (SsHduChooser *self)
{
  g_return_if_fail (SS_IS_HDU_CHOOSER (self));
  int hdu, plane;
  ss_hdu_chooser_get_selection (self, &hdu, &plane);
  if (hdu < 0)
    return;
  g_object_ref (self);
  g_signal_emit (self, signals[SIGNAL_CHOSEN], 0, hdu, plane);
  gtk_window_destroy (GTK_WINDOW (self));
  g_object_unref (self);
}

static void
on_row_activated (SsHduChooser *self)
{
  ss_hdu_chooser_accept (self);
}

static GtkWidget *
hdu_row (const SsFitsHdu *hdu)
{
  g_autofree char *text = ss_hdu_chooser_describe (hdu);
  GtkWidget *label = gtk_label_new (text);
  gtk_label_set_xalign (GTK_LABEL (label), 0);
  gtk_widget_set_margin_start (label, 8);
  gtk_widget_set_margin_end (label, 8);
  gtk_widget_set_margin_top (label, 6);
  gtk_widget_set_margin_bottom (label, 6);
  GtkWidget *row = gtk_list_box_row_new ();
  gtk_list_box_row_set_child (GTK_LIST_BOX_ROW (row), label);
  g_object_set_data (G_OBJECT (row), "hdu", (gpointer) hdu);
  return row;
}

static void
fill_list (SsHduChooser *self)
{
  /* Tables and empty HDUs hold nothing to deblur. */
  for (guint i = 0; i < self->hdus->len; i++)
    {
      const SsFitsHdu *hdu = g_ptr_array_index (self->hdus, i);
      if (hdu->has_image)
        gtk_list_box_append (self->list, hdu_row (hdu));
    }
}

static GtkWidget *
button_row (SsHduChooser *self)
{
  GtkWidget *box = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 6);
  gtk_widget_set_halign (box, GTK_ALIGN_END);
  GtkWidget *cancel = gtk_button_new_with_mnemonic ("_Cancel");
  g_signal_connect_swapped (cancel, "clicked", G_CALLBACK (gtk_window_destroy), self);
  GtkWidget *open = gtk_button_new_with_mnemonic ("_Open");
  gtk_widget_add_css_class (open, "suggested-action");
  g_signal_connect_swapped (open, "clicked", G_CALLBACK (ss_hdu_chooser_accept), self);
  gtk_box_append (GTK_BOX (box), cancel);
  gtk_box_append (GTK_BOX (box), open);
  gtk_window_set_default_widget (GTK_WINDOW (self), open);
  return box;
}

static GtkWidget *
plane_row (SsHduChooser *self)
{
  GtkWidget *box = gtk_box_new (GTK_ORIENTATION_HORIZONTAL, 6);
  self->plane_label = gtk_label_new_with_mnemonic ("_Plane (from 0)");
  self->plane_spin = GTK_SPIN_BUTTON (gtk_spin_button_new_with_range (0, 1, 1));
  self->colour_dropdown = GTK_DROP_DOWN (gtk_drop_down_new_from_strings (COLOUR_CHOICES));
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->colour_dropdown),
                               "Deblur the mean of the three planes, or one of them "
                               "(sharpsky-cli's --plane)");
  gtk_box_append (GTK_BOX (box), self->plane_label);
  gtk_box_append (GTK_BOX (box), GTK_WIDGET (self->plane_spin));
  gtk_box_append (GTK_BOX (box), GTK_WIDGET (self->colour_dropdown));
  return box;
}

SsHduChooser *
ss_hdu_chooser_new (GtkWindow *parent, const char *path, GPtrArray *hdus, int hdu, int plane)
{
  g_return_val_if_fail (path != NULL && hdus != NULL, NULL);
  SsHduChooser *self = g_object_new (SS_TYPE_HDU_CHOOSER, "title", "Choose an HDU",
                                     "modal", TRUE, "transient-for", parent,
                                     "destroy-with-parent", TRUE, "default-width", 460, NULL);
  self->hdus = g_ptr_array_ref (hdus);

  GtkWidget *box = gtk_box_new (GTK_ORIENTATION_VERTICAL, 10);
  gtk_widget_set_margin_start (box, 14);
  gtk_widget_set_margin_end (box, 14);
  gtk_widget_set_margin_top (box, 14);
  gtk_widget_set_margin_bottom (box, 14);
  g_autofree char *base = g_path_get_basename (path);
  g_autofree char *intro = g_strdup_printf ("Which image of %s, and which plane, to deblur?",
                                            base);
  GtkWidget *label = gtk_label_new (intro);
  gtk_label_set_xalign (GTK_LABEL (label), 0);
  gtk_label_set_wrap (GTK_LABEL (label), TRUE);
  gtk_box_append (GTK_BOX (box), label);

  self->list = GTK_LIST_BOX (gtk_list_box_new ());
  gtk_widget_add_css_class (GTK_WIDGET (self->list), "boxed-list");
  gtk_list_box_set_activate_on_single_click (self->list, FALSE);
  GtkWidget *scroller = gtk_scrolled_window_new ();
  gtk_scrolled_window_set_child (GTK_SCROLLED_WINDOW (scroller), GTK_WIDGET (self->list));
  gtk_scrolled_window_set_propagate_natural_height (GTK_SCROLLED_WINDOW (scroller), TRUE);
  gtk_scrolled_window_set_max_content_height (GTK_SCROLLED_WINDOW (scroller), 320);
  gtk_box_append (GTK_BOX (box), scroller);
  gtk_box_append (GTK_BOX (box), plane_row (self));
  gtk_box_append (GTK_BOX (box), button_row (self));
  gtk_window_set_child (GTK_WINDOW (self), box);

  fill_list (self);
  g_signal_connect_swapped (self->list, "row-selected", G_CALLBACK (update_plane_controls), self);
  g_signal_connect_swapped (self->list, "row-activated", G_CALLBACK (on_row_activated), self);
  if (!ss_hdu_chooser_select (self, hdu, plane))
    gtk_list_box_select_row (self->list, gtk_list_box_get_row_at_index (self->list, 0));
  update_plane_controls (self);
  return self;
}

static gboolean
close_on_escape (GtkWidget *widget, GVariant *args, gpointer data)
{
  gtk_window_destroy (GTK_WINDOW (widget));
  return TRUE;
}

static void
ss_hdu_chooser_finalize (GObject *object)
{
  SsHduChooser *self = SS_HDU_CHOOSER (object);
  g_clear_pointer (&self->hdus, g_ptr_array_unref);
  G_OBJECT_CLASS (ss_hdu_chooser_parent_class)->finalize (object);
}

static void
ss_hdu_chooser_class_init (SsHduChooserClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = ss_hdu_chooser_finalize;
  /* chosen (hdu, plane): plane -1 is the mean of three colour planes. */
  signals[SIGNAL_CHOSEN] = g_signal_new ("chosen", G_TYPE_FROM_CLASS (klass), G_SIGNAL_RUN_LAST,
                                         0, NULL, NULL, NULL, G_TYPE_NONE, 2, G_TYPE_INT,
                                         G_TYPE_INT);
  gtk_widget_class_add_binding (GTK_WIDGET_CLASS (klass), GDK_KEY_Escape, 0, close_on_escape,
                                NULL);
}

static void
ss_hdu_chooser_init (SsHduChooser *self)
{
}
