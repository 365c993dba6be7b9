/* ss-params-panel-controls.c: the settings column's controls that depend on
 * the choices made: which apply to the mode, PSF and solver chosen, the solver
 * list from the engine's table, the dense solver's size hint, and the image
 * size and compute devices it is told. */
#include "ss-params-panel-private.h"

#include <math.h>

/* ---- the dense hint ------------------------------------------------------- */

const SsSolverInfo *
ss_params_panel_selected_solver (SsParamsPanel *self)
{
  const SsSolverInfo *info = ss_solver_nth (gtk_drop_down_get_selected (self->solver_dropdown));
  return info ? info : ss_solver_nth (0);
}

int
ss_params_panel_dense_max_side (gsize bytes, double observed_fraction,
                                const SsSolveParams *params)
{
  const SsSolverInfo *info = ss_solver_info (params->kind);
  if (info == NULL || info->max_unknowns == NULL)
    return 0;
  gsize n = info->max_unknowns (bytes, observed_fraction, params);
  return (int) floor (sqrt ((double) n));
}

gboolean
ss_params_panel_is_simulate (SsParamsPanel *self)
{
  return gtk_drop_down_get_selected (self->mode_dropdown) == SS_MODE_SIMULATE;
}

/* For solvers with an n x n system: how large an image or region fits. */
void
ss_params_panel_update_dense_hint (SsParamsPanel *self)
{
  const SsSolverInfo *info = ss_params_panel_selected_solver (self);
  gtk_widget_set_visible (GTK_WIDGET (self->dense_label), info->max_unknowns != NULL);
  if (info->max_unknowns == NULL)
    return;
  SsSolveParams params;
  ss_solve_params_init (&params);
  params.kind = info->kind;
  ss_param_controls_get (self->param_controls, &params);
  double fraction = ss_params_panel_is_simulate (self)
                    ? gtk_spin_button_get_value (self->ratio_spin) : 1.0;
  gsize available = ss_mem_available ();
  gsize max_n = info->max_unknowns (available, fraction, &params);
  int side = ss_params_panel_dense_max_side (available, fraction, &params);
  gboolean roi = gtk_check_button_get_active (self->roi_check) && self->have_roi;
  gsize n = roi ? (gsize) self->roi.width * self->roi.height
                : (gsize) self->image_width * self->image_height;
  g_autofree char *mem = ss_format_bytes (available);
  g_autofree char *text = NULL;
  gboolean too_big = n > max_n;
  if (n == 0)
    text = g_strdup_printf ("%s fits up to %" G_GSIZE_FORMAT " unknowns in %s (a %d×%d "
                            "region).", info->label, max_n, mem, side, side);
  else
    text = g_strdup_printf ("%s fits up to %" G_GSIZE_FORMAT " unknowns in %s (a %d×%d "
                            "region); this %s has %" G_GSIZE_FORMAT "%s.", info->label, max_n,
                            mem, side, side, roi ? "region" : "image", n,
                            too_big ? ": too large, select a region" : "");
  gtk_label_set_text (self->dense_label, text);
  if (too_big)
    gtk_widget_add_css_class (GTK_WIDGET (self->dense_label), "error");
  else
    gtk_widget_remove_css_class (GTK_WIDGET (self->dense_label), "error");
}

/* ---- which controls apply ------------------------------------------------- */

static void
show_pair (GtkWidget *label, gpointer control, gboolean visible)
{
  gtk_widget_set_visible (label, visible);
  gtk_widget_set_visible (GTK_WIDGET (control), visible);
}

void
ss_params_panel_update_visibility (SsParamsPanel *self)
{
  guint psf = gtk_drop_down_get_selected (self->psf_dropdown);
  show_pair (self->psf_size_label, self->psf_size_spin,
             psf == PSF_ROW_BOX_ROW || psf == PSF_ROW_BOX);
  show_pair (self->psf_fwhm_label, self->psf_fwhm_spin,
             psf == PSF_ROW_GAUSSIAN || psf == PSF_ROW_MOFFAT);
  show_pair (self->psf_beta_label, self->psf_beta_spin, psf == PSF_ROW_MOFFAT);
  show_pair (self->psf_file_label, self->psf_file_button, psf == PSF_ROW_FILE);
  gtk_widget_set_visible (self->star_box, psf == PSF_ROW_MEASURED);

  gboolean simulate = ss_params_panel_is_simulate (self);
  show_pair (self->ratio_label, self->ratio_spin, simulate);
  show_pair (self->noise_label, self->noise_spin, simulate);
  show_pair (self->seed_label, self->seed_spin, simulate);
  show_pair (self->boundary_label, self->boundary_dropdown, !simulate);
  gtk_widget_set_visible (GTK_WIDGET (self->saturation_check), !simulate);
  gtk_widget_set_visible (GTK_WIDGET (self->bad_pixels_check), !simulate);
  show_pair (self->sky_value_label, self->sky_value_spin,
             gtk_drop_down_get_selected (self->sky_dropdown) == SKY_ROW_VALUE);

  ss_param_controls_show_solver (self->param_controls,
                                 ss_params_panel_selected_solver (self)->kind);
}

/* ---- image size and devices ----------------------------------------------- */

void
ss_params_panel_set_image_size (SsParamsPanel *self, int width, int height)
{
  g_return_if_fail (SS_IS_PARAMS_PANEL (self));
  self->image_width = width;
  self->image_height = height;
  ss_params_panel_update_dense_hint (self);
}

void
ss_params_panel_set_device_text (SsParamsPanel *self, const char *text)
{
  g_return_if_fail (SS_IS_PARAMS_PANEL (self));
  gtk_label_set_text (self->device_label, text);
}

void
ss_params_panel_set_devices (SsParamsPanel *self, GArray *devices)
{
  g_return_if_fail (SS_IS_PARAMS_PANEL (self));
  ss_device_picker_set_devices (self->device_picker, devices);
}

SsDevicePicker *
ss_params_panel_get_device_picker (SsParamsPanel *self)
{
  g_return_val_if_fail (SS_IS_PARAMS_PANEL (self), NULL);
  return self->device_picker;
}

const char *
ss_params_panel_get_dense_hint (SsParamsPanel *self)
{
  g_return_val_if_fail (SS_IS_PARAMS_PANEL (self), NULL);
  return gtk_label_get_text (self->dense_label);
}

/* ---- the solver list ------------------------------------------------------ */

/* The solver list and its tooltip, from the engine's solver table. */
void
ss_params_panel_setup_solver_list (SsParamsPanel *self)
{
  GtkStringList *names = gtk_string_list_new (NULL);
  GString *tip = g_string_new (NULL);
  for (guint i = 0; i < ss_solver_count (); i++)
    {
      const SsSolverInfo *info = ss_solver_nth (i);
      gtk_string_list_append (names, info->label);
      g_string_append_printf (tip, "%s%s: %s.", i ? "\n" : "", info->label, info->help);
    }
  gtk_drop_down_set_model (self->solver_dropdown, G_LIST_MODEL (names));
  g_object_unref (names);
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->solver_dropdown), tip->str);
  g_string_free (tip, TRUE);
}
