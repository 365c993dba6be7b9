/* ss-param-controls.c: the solver parameters' controls, from the engine's table.
 *
 * Real parameters on a log scale get a spin button whose adjustment holds
 * log10 of the value (the arrows step a tenth of a decade; the entry shows and
 * takes the value itself); the others a plain spin button, a check button or
 * a drop-down. Emits "changed" when the user edits any of them.
 */
#include "ss-param-controls.h"

#include <math.h>

struct _SsParamControls
{
  GtkGrid parent_instance;

  GtkWidget *label[SS_N_PARAMS];    /* NULL for check buttons (they carry their label) */
  GtkWidget *control[SS_N_PARAMS];
  GtkWidget *auto_check[SS_N_PARAMS]; /* for parameters the data can choose, else NULL */
  gboolean updating;
};

G_DEFINE_FINAL_TYPE (SsParamControls, ss_param_controls, GTK_TYPE_GRID)

enum { SIGNAL_CHANGED, N_SIGNALS };
static guint signals[N_SIGNALS];

/* ---- logarithmic spin buttons --------------------------------------------- */

/* What a log spin button shows for its (log10) value. */
static void
log_spin_text (GtkSpinButton *spin, char text[G_ASCII_DTOSTR_BUF_SIZE])
{
  double value = pow (10.0, gtk_adjustment_get_value (gtk_spin_button_get_adjustment (spin)));
  g_ascii_formatd (text, G_ASCII_DTOSTR_BUF_SIZE, "%.3g", value);
}

static gboolean
log_spin_output (GtkSpinButton *spin, gpointer data)
{
  char text[G_ASCII_DTOSTR_BUF_SIZE];
  log_spin_text (spin, text);
  if (g_strcmp0 (gtk_editable_get_text (GTK_EDITABLE (spin)), text) != 0)
    gtk_editable_set_text (GTK_EDITABLE (spin), text);
  return TRUE;
}

static int
log_spin_input (GtkSpinButton *spin, double *new_value, gpointer data)
{
  const char *text = gtk_editable_get_text (GTK_EDITABLE (spin));
  char *end = NULL;
  double value = g_ascii_strtod (text, &end);
  if (end == text || !isfinite (value) || value <= 0)
    return GTK_INPUT_ERROR;
  *new_value = log10 (value);
  return TRUE;
}

/* The text SPIN shows for its value: its log output's, or GTK's own. */
static char *
shown_text (GtkSpinButton *spin)
{
  if (g_object_get_data (G_OBJECT (spin), "ss-log-spin") != NULL)
    {
      char text[G_ASCII_DTOSTR_BUF_SIZE];
      log_spin_text (spin, text);
      return g_strdup (text);
    }
  return g_strdup_printf ("%0.*f", (int) gtk_spin_button_get_digits (spin),
                          gtk_spin_button_get_value (spin));
}

void
ss_spin_button_commit_typed (GtkSpinButton *spin)
{
  g_autofree char *shown = shown_text (spin);
  if (g_strcmp0 (gtk_editable_get_text (GTK_EDITABLE (spin)), shown) != 0)
    gtk_spin_button_update (spin);
}

static GtkWidget *
new_log_spin (const SsParamInfo *info)
{
  double low = log10 (info->ui_min), high = log10 (info->ui_max);
  double start = info->default_value > 0 ? log10 (info->default_value) : low;
  GtkAdjustment *adjustment = gtk_adjustment_new (CLAMP (start, low, high), low, high,
                                                  0.1, 1.0, 0.0);
  GtkSpinButton *spin = GTK_SPIN_BUTTON (gtk_spin_button_new (adjustment, 0.1, 4));
  gtk_spin_button_set_numeric (spin, FALSE);
  g_object_set_data (G_OBJECT (spin), "ss-log-spin", GINT_TO_POINTER (TRUE));
  g_signal_connect (spin, "output", G_CALLBACK (log_spin_output), NULL);
  g_signal_connect (spin, "input", G_CALLBACK (log_spin_input), NULL);
  return GTK_WIDGET (spin);
}

static GtkWidget *
new_control (const SsParamInfo *info)
{
  switch (info->type)
    {
    case SS_PARAM_BOOL:
      return gtk_check_button_new_with_label (info->label);
    case SS_PARAM_CHOICE:
      return gtk_drop_down_new_from_strings (info->choice_labels);
    case SS_PARAM_INT:
      {
        GtkWidget *spin = gtk_spin_button_new_with_range (info->ui_min, info->ui_max, 1);
        gtk_spin_button_set_increments (GTK_SPIN_BUTTON (spin), 10, 100);
        return spin;
      }
    case SS_PARAM_REAL:
    default:
      if (info->log_scale)
        return new_log_spin (info);
      return gtk_spin_button_new_with_range (info->ui_min, info->ui_max,
                                             (info->ui_max - info->ui_min) / 100);
    }
}

static void
on_edited (SsParamControls *self)
{
  if (!self->updating)
    g_signal_emit (self, signals[SIGNAL_CHANGED], 0);
}

static void
on_auto_toggled (SsParamControls *self, GtkCheckButton *check)
{
  gboolean active = gtk_check_button_get_active (check);
  for (int id = 0; id < SS_N_PARAMS; id++)
    if (self->auto_check[id] == GTK_WIDGET (check))
      gtk_widget_set_sensitive (self->control[id], !active);
  /* Asking the data for α asks them for the iteration count too, as
   * --alpha auto does; the user's tick, not settings being loaded. */
  if (active && !self->updating && GTK_WIDGET (check) == self->auto_check[SS_PARAM_ALPHA])
    gtk_check_button_set_active (GTK_CHECK_BUTTON (self->control[SS_PARAM_HOLDOUT]), TRUE);
  on_edited (self);
}

/* "auto": the value is chosen from the data when the problem is built. */
static void
add_auto_check (SsParamControls *self, const SsParamInfo *info, int row)
{
  GtkWidget *check = gtk_check_button_new_with_label ("auto");
  gtk_widget_set_tooltip_text (check, "Choose the value from the image's noise when the "
                                      "problem is built (as --alpha auto does)");
  gtk_grid_attach (GTK_GRID (self), check, 2, row, 1, 1);
  g_signal_connect_swapped (check, "toggled", G_CALLBACK (on_auto_toggled), self);
  self->auto_check[info->id] = check;
}

static void
add_row (SsParamControls *self, const SsParamInfo *info, int row)
{
  GtkWidget *control = new_control (info);
  g_autofree char *tip = g_strdup_printf ("%s (--%s)", info->help, info->name);
  gtk_widget_set_tooltip_text (control, tip);
  gtk_widget_set_hexpand (control, TRUE);
  if (info->type == SS_PARAM_BOOL)
    {
      gtk_grid_attach (GTK_GRID (self), control, 0, row, 2, 1);
      g_signal_connect_swapped (control, "toggled", G_CALLBACK (on_edited), self);
    }
  else
    {
      GtkWidget *label = gtk_label_new (info->label);
      gtk_label_set_xalign (GTK_LABEL (label), 0);
      gtk_label_set_mnemonic_widget (GTK_LABEL (label), control);
      gtk_grid_attach (GTK_GRID (self), label, 0, row, 1, 1);
      gtk_grid_attach (GTK_GRID (self), control, 1, row, 1, 1);
      self->label[info->id] = label;
      const char *signal = info->type == SS_PARAM_CHOICE ? "notify::selected" : "value-changed";
      g_signal_connect_swapped (control, signal, G_CALLBACK (on_edited), self);
    }
  self->control[info->id] = control;
  if (info->allows_auto)
    add_auto_check (self, info, row);
}

void
ss_param_controls_show_solver (SsParamControls *self, SsSolverKind kind)
{
  const SsSolverInfo *solver = ss_solver_info (kind);
  for (int id = 0; id < SS_N_PARAMS; id++)
    {
      gboolean used = solver && ss_solver_uses (solver, (SsParamId) id);
      gtk_widget_set_visible (self->control[id], used);
      if (self->label[id])
        gtk_widget_set_visible (self->label[id], used);
      if (self->auto_check[id])
        gtk_widget_set_visible (self->auto_check[id], used);
    }
}

static double
control_value (SsParamControls *self, const SsParamInfo *info)
{
  GtkWidget *control = self->control[info->id];
  switch (info->type)
    {
    case SS_PARAM_BOOL:
      return gtk_check_button_get_active (GTK_CHECK_BUTTON (control));
    case SS_PARAM_CHOICE:
      return gtk_drop_down_get_selected (GTK_DROP_DOWN (control));
    case SS_PARAM_INT:
      ss_spin_button_commit_typed (GTK_SPIN_BUTTON (control));
      return gtk_spin_button_get_value_as_int (GTK_SPIN_BUTTON (control));
    case SS_PARAM_REAL:
    default:
      {
        ss_spin_button_commit_typed (GTK_SPIN_BUTTON (control));
        double value = gtk_spin_button_get_value (GTK_SPIN_BUTTON (control));
        /* The control's range lies inside the valid one, but an open bound
         * (tau < 1.618) must not be reached by rounding. */
        return info->log_scale ? MIN (pow (10.0, value), info->ui_max) : value;
      }
    }
}

void
ss_param_controls_get (SsParamControls *self, SsSolveParams *params)
{
  g_return_if_fail (SS_IS_PARAM_CONTROLS (self));
  for (int id = 0; id < SS_N_PARAMS; id++)
    {
      const SsParamInfo *info = ss_param_info ((SsParamId) id);
      ss_param_set (params, info, control_value (self, info));
    }
}

static void
set_control (SsParamControls *self, const SsParamInfo *info, double value)
{
  GtkWidget *control = self->control[info->id];
  switch (info->type)
    {
    case SS_PARAM_BOOL:
      gtk_check_button_set_active (GTK_CHECK_BUTTON (control), value != 0);
      break;
    case SS_PARAM_CHOICE:
      gtk_drop_down_set_selected (GTK_DROP_DOWN (control), (guint) value);
      break;
    case SS_PARAM_INT:
      gtk_spin_button_set_value (GTK_SPIN_BUTTON (control), value);
      break;
    case SS_PARAM_REAL:
    default:
      if (!info->log_scale)
        gtk_spin_button_set_value (GTK_SPIN_BUTTON (control), value);
      else if (value > 0 && isfinite (value))
        gtk_spin_button_set_value (GTK_SPIN_BUTTON (control), log10 (value));
      break;
    }
}

void
ss_param_controls_set (SsParamControls *self, const SsSolveParams *params)
{
  g_return_if_fail (SS_IS_PARAM_CONTROLS (self));
  self->updating = TRUE;
  for (int id = 0; id < SS_N_PARAMS; id++)
    {
      const SsParamInfo *info = ss_param_info ((SsParamId) id);
      set_control (self, info, ss_param_get (params, info));
    }
  self->updating = FALSE;
}

guint64
ss_param_controls_get_auto (SsParamControls *self)
{
  g_return_val_if_fail (SS_IS_PARAM_CONTROLS (self), 0);
  guint64 auto_params = 0;
  for (int id = 0; id < SS_N_PARAMS; id++)
    if (self->auto_check[id] && gtk_check_button_get_active (GTK_CHECK_BUTTON (self->auto_check[id])))
      auto_params |= G_GUINT64_CONSTANT (1) << id;
  return auto_params;
}

void
ss_param_controls_set_auto (SsParamControls *self, guint64 auto_params)
{
  g_return_if_fail (SS_IS_PARAM_CONTROLS (self));
  self->updating = TRUE;
  for (int id = 0; id < SS_N_PARAMS; id++)
    if (self->auto_check[id])
      gtk_check_button_set_active (GTK_CHECK_BUTTON (self->auto_check[id]),
                                   (auto_params >> id) & 1);
  self->updating = FALSE;
}

SsParamControls *
ss_param_controls_new (void)
{
  return g_object_new (SS_TYPE_PARAM_CONTROLS, NULL);
}

static void
ss_param_controls_class_init (SsParamControlsClass *klass)
{
  signals[SIGNAL_CHANGED] = g_signal_new ("changed", G_TYPE_FROM_CLASS (klass),
                                          G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                                          G_TYPE_NONE, 0);
}

static void
ss_param_controls_init (SsParamControls *self)
{
  gtk_grid_set_column_spacing (GTK_GRID (self), 8);
  gtk_grid_set_row_spacing (GTK_GRID (self), 4);
  for (int id = 0; id < SS_N_PARAMS; id++)
    add_row (self, ss_param_info ((SsParamId) id), id);
  SsSolveParams defaults;
  ss_solve_params_init (&defaults);
  ss_param_controls_set (self, &defaults);
  ss_param_controls_show_solver (self, defaults.kind);
}
