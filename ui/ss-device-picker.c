/* ss-device-picker.c: the compute choice (see ss-device-picker.h). */
#include "ss-device-picker.h"

/* The rows before the GPUs. */
enum { ROW_AUTO, ROW_CPU, N_FIXED_ROWS };

/* What each choice does, as ss-backend.h says the engine does it. */
#define TOOLTIP                                                                                \
  "Where the solver runs.\n"                                                                   \
  "Automatic: GPU 0 when this build has CUDA and a GPU is present, else the CPU. If the GPU "  \
  "runs out of memory (or the problem is too large for it), the solve is run again on the "    \
  "CPU and a message says so.\n"                                                               \
  "CPU: FFTW threads and LAPACK.\n"                                                            \
  "GPU N: that device alone, numbered as sharpsky-cli info and --devices number it; a "        \
  "problem too large for it fails instead of moving to the CPU.\n"                             \
  "A solver without a GPU form runs on the CPU whatever the choice, with a message."

struct _SsDevicePicker
{
  GtkWidget parent_instance;
  GtkDropDown *dropdown;
  GtkStringList *labels;
  GArray *devices;      /* int: the CUDA index of row N_FIXED_ROWS + i */
  gboolean listed;      /* the devices have been set */
  int wanted;           /* a GPU set before the list came, or -1 */
  gboolean updating;    /* set while the picker changes its own rows */
};

G_DEFINE_FINAL_TYPE (SsDevicePicker, ss_device_picker, GTK_TYPE_WIDGET)

enum { SIGNAL_CHANGED, N_SIGNALS };
static guint signals[N_SIGNALS];

GtkWidget *
ss_device_picker_new (void)
{
  return g_object_new (SS_TYPE_DEVICE_PICKER, NULL);
}

static guint
row_of (SsDevicePicker *self, SsBackendKind kind, int device)
{
  if (kind == SS_BACKEND_CPU)
    return ROW_CPU;
  if (kind == SS_BACKEND_CUDA)
    for (guint i = 0; i < self->devices->len; i++)
      if (g_array_index (self->devices, int, i) == MAX (device, 0))
        return N_FIXED_ROWS + i;
  return ROW_AUTO;
}

void
ss_device_picker_get_choice (SsDevicePicker *self, SsBackendKind *kind, int *device)
{
  g_return_if_fail (SS_IS_DEVICE_PICKER (self));
  guint row = gtk_drop_down_get_selected (self->dropdown);
  *kind = SS_BACKEND_AUTO;
  *device = -1;
  if (row == ROW_CPU)
    *kind = SS_BACKEND_CPU;
  else if (row != GTK_INVALID_LIST_POSITION && row >= N_FIXED_ROWS
           && row - N_FIXED_ROWS < self->devices->len)
    {
      *kind = SS_BACKEND_CUDA;
      *device = g_array_index (self->devices, int, row - N_FIXED_ROWS);
    }
}

void
ss_device_picker_set_choice (SsDevicePicker *self, SsBackendKind kind, int device)
{
  g_return_if_fail (SS_IS_DEVICE_PICKER (self));
  guint row = row_of (self, kind, device);
  gboolean changed = gtk_drop_down_get_selected (self->dropdown) != row;
  self->updating = TRUE;
  gtk_drop_down_set_selected (self->dropdown, row);
  self->updating = FALSE;
  /* Before the list comes no GPU can be shown; remember the one asked for. */
  self->wanted = !self->listed && kind == SS_BACKEND_CUDA ? MAX (device, 0) : -1;
  if (changed)
    g_signal_emit (self, signals[SIGNAL_CHANGED], 0);
}

void
ss_device_picker_set_devices (SsDevicePicker *self, GArray *devices)
{
  g_return_if_fail (SS_IS_DEVICE_PICKER (self));
  SsBackendKind kind;
  int device;
  ss_device_picker_get_choice (self, &kind, &device);
  if (self->wanted >= 0)
    {
      kind = SS_BACKEND_CUDA;
      device = self->wanted;
    }

  g_array_set_size (self->devices, 0);
  g_autoptr (GPtrArray) labels = g_ptr_array_new_with_free_func (g_free);
  GString *tip = g_string_new (TOOLTIP);
  for (guint i = 0; devices != NULL && i < devices->len; i++)
    {
      const SsDeviceInfo *d = &g_array_index (devices, SsDeviceInfo, i);
      if (d->unusable != NULL)
        continue;   /* a row that cannot run is no choice */
      g_array_append_val (self->devices, d->index);
      g_ptr_array_add (labels, g_strdup_printf ("GPU %d: %s", d->index, d->model));
      g_autofree char *free_text = g_format_size_full (d->free_bytes, G_FORMAT_SIZE_IEC_UNITS);
      g_autofree char *total_text = g_format_size_full (d->total_bytes, G_FORMAT_SIZE_IEC_UNITS);
      g_string_append_printf (tip, "\n\nGPU %d: %s, %s free of %s when listed.", d->index,
                              d->name, free_text, total_text);
    }
  g_ptr_array_add (labels, NULL);

  /* The rows change under the selection: choose again afterwards, and say
   * "changed" only if the choice did. */
  self->updating = TRUE;
  guint old_rows = g_list_model_get_n_items (G_LIST_MODEL (self->labels));
  gtk_string_list_splice (self->labels, N_FIXED_ROWS, old_rows - N_FIXED_ROWS,
                          (const char *const *) labels->pdata);
  self->listed = TRUE;
  self->wanted = -1;
  gtk_drop_down_set_selected (self->dropdown, row_of (self, kind, device));
  self->updating = FALSE;
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->dropdown), tip->str);
  g_string_free (tip, TRUE);

  SsBackendKind now_kind;
  int now_device;
  ss_device_picker_get_choice (self, &now_kind, &now_device);
  if (now_kind != kind || now_device != device)
    g_signal_emit (self, signals[SIGNAL_CHANGED], 0);
}

gboolean
ss_device_picker_has_devices (SsDevicePicker *self)
{
  g_return_val_if_fail (SS_IS_DEVICE_PICKER (self), FALSE);
  return self->listed;
}

GtkDropDown *
ss_device_picker_get_drop_down (SsDevicePicker *self)
{
  g_return_val_if_fail (SS_IS_DEVICE_PICKER (self), NULL);
  return self->dropdown;
}

static void
on_selected (SsDevicePicker *self)
{
  if (self->updating)
    return;
  self->wanted = -1;   /* a choice made now replaces one waiting for the list */
  g_signal_emit (self, signals[SIGNAL_CHANGED], 0);
}

/* The picker is a wrapper: focus and a label's mnemonic go to the drop-down. */
static gboolean
ss_device_picker_grab_focus (GtkWidget *widget)
{
  return gtk_widget_grab_focus (GTK_WIDGET (SS_DEVICE_PICKER (widget)->dropdown));
}

static gboolean
ss_device_picker_mnemonic_activate (GtkWidget *widget, gboolean group_cycling)
{
  return gtk_widget_mnemonic_activate (GTK_WIDGET (SS_DEVICE_PICKER (widget)->dropdown),
                                       group_cycling);
}

static void
ss_device_picker_dispose (GObject *object)
{
  SsDevicePicker *self = SS_DEVICE_PICKER (object);
  if (self->dropdown)
    {
      gtk_widget_unparent (GTK_WIDGET (self->dropdown));
      self->dropdown = NULL;
    }
  G_OBJECT_CLASS (ss_device_picker_parent_class)->dispose (object);
}

static void
ss_device_picker_finalize (GObject *object)
{
  SsDevicePicker *self = SS_DEVICE_PICKER (object);
  g_clear_object (&self->labels);
  g_array_unref (self->devices);
  G_OBJECT_CLASS (ss_device_picker_parent_class)->finalize (object);
}

static void
ss_device_picker_class_init (SsDevicePickerClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);
  object_class->dispose = ss_device_picker_dispose;
  object_class->finalize = ss_device_picker_finalize;
  widget_class->grab_focus = ss_device_picker_grab_focus;
  widget_class->mnemonic_activate = ss_device_picker_mnemonic_activate;
  gtk_widget_class_set_accessible_role (widget_class, GTK_ACCESSIBLE_ROLE_GENERIC);
  gtk_widget_class_set_layout_manager_type (widget_class, GTK_TYPE_BIN_LAYOUT);
  signals[SIGNAL_CHANGED] = g_signal_new ("changed", G_TYPE_FROM_CLASS (klass),
                                          G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                                          G_TYPE_NONE, 0);
}

static void
ss_device_picker_init (SsDevicePicker *self)
{
  self->devices = g_array_new (FALSE, FALSE, sizeof (int));
  self->wanted = -1;
  const char *fixed[] = { "Automatic", "CPU", NULL };
  self->labels = gtk_string_list_new (fixed);
  /* The drop-down takes a reference to the model; the picker keeps its own
   * to splice the GPU rows in. */
  self->dropdown = GTK_DROP_DOWN (gtk_drop_down_new (g_object_ref (G_LIST_MODEL (self->labels)),
                                                     NULL));
  gtk_widget_set_hexpand (GTK_WIDGET (self->dropdown), TRUE);
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->dropdown), TOOLTIP);
  gtk_widget_set_parent (GTK_WIDGET (self->dropdown), GTK_WIDGET (self));
  gtk_drop_down_set_selected (self->dropdown, ROW_AUTO);
  g_signal_connect_swapped (self->dropdown, "notify::selected", G_CALLBACK (on_selected), self);
}
