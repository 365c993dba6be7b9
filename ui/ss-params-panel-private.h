/* ss-params-panel-private.h: what the files of the settings column share.
 *
 * SsParamsPanel is split along its seams, as SsWindow is:
 *   ss-params-panel.c           the type, its PSF file, region and measured PSF, settings in
 *                               and out
 *   ss-params-panel-controls.c  which controls apply, the solver list, the dense hint,
 *                               the image size and compute devices
 * Only these files include it. What one file alone uses (its constants, its
 * includes) stays in that file.
 */
#pragma once

#include "ss-params-panel.h"
#include "ss-device-picker.h"
#include "ss-param-controls.h"

G_BEGIN_DECLS

/* Positions in the drop-downs of the template. */
enum { PSF_ROW_NONE, PSF_ROW_BOX_ROW, PSF_ROW_BOX, PSF_ROW_GAUSSIAN, PSF_ROW_MOFFAT, PSF_ROW_FILE,
       PSF_ROW_MEASURED };
enum { SKY_ROW_NONE, SKY_ROW_MEDIAN, SKY_ROW_CLIPPED, SKY_ROW_VALUE };

struct _SsParamsPanel
{
  GtkBox parent_instance;

  GtkDropDown *mode_dropdown;
  GtkDropDown *psf_dropdown;
  GtkWidget *psf_size_label;
  GtkSpinButton *psf_size_spin;
  GtkWidget *psf_fwhm_label;
  GtkSpinButton *psf_fwhm_spin;
  GtkWidget *psf_beta_label;
  GtkSpinButton *psf_beta_spin;
  GtkWidget *psf_file_label;
  GtkButton *psf_file_button;
  GtkWidget *star_box;
  GtkDropDown *star_model_dropdown;
  GtkToggleButton *star_pick_button;
  GtkLabel *star_label;
  GtkWidget *ratio_label;
  GtkSpinButton *ratio_spin;
  GtkWidget *noise_label;
  GtkSpinButton *noise_spin;
  GtkWidget *seed_label;
  GtkSpinButton *seed_spin;
  GtkDropDown *sky_dropdown;
  GtkWidget *sky_value_label;
  GtkSpinButton *sky_value_spin;
  GtkWidget *boundary_label;
  GtkDropDown *boundary_dropdown;
  GtkCheckButton *saturation_check;
  GtkCheckButton *bad_pixels_check;
  GtkDropDown *solver_dropdown;      /* the solver table, in its order */
  SsParamControls *param_controls;
  SsDevicePicker *device_picker;    /* Automatic, CPU or one GPU */
  GtkLabel *device_label;
  GtkCheckButton *roi_check;
  GtkToggleButton *roi_draw_button;
  GtkButton *roi_centre_button;
  GtkButton *roi_clear_button;
  GtkLabel *roi_label;
  GtkLabel *dense_label;

  char *psf_path;
  SsHduChooser *psf_chooser;   /* asking which HDU of a PSF file, or NULL */
  gboolean have_fit;
  SsPsfFit fit;          /* the last star measurement (have_fit) */
  int fit_stars;         /* how many stars it measured; 0: not known */
  int image_width, image_height;
  gboolean have_roi;
  GdkRectangle roi;
  gboolean updating;     /* set while the panel writes its own controls */
};

/* ---- ss-params-panel-controls.c ------------------------------------------- */

/* The solver chosen in the drop-down (the table's first if none is). */
const SsSolverInfo *ss_params_panel_selected_solver (SsParamsPanel *self);
/* Simulation chosen (not deblurring): its acquisition controls apply. */
gboolean ss_params_panel_is_simulate (SsParamsPanel *self);
/* Shows only the controls that apply to the mode, PSF, sky and solver chosen. */
void ss_params_panel_update_visibility (SsParamsPanel *self);
/* For solvers with an n x n system: how large an image or region fits. */
void ss_params_panel_update_dense_hint (SsParamsPanel *self);
/* The solver list and its tooltip, from the engine's solver table. */
void ss_params_panel_setup_solver_list (SsParamsPanel *self);

G_END_DECLS
