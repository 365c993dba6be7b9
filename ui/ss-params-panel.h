/* ss-params-panel.h: every setting of a solve, as a column of controls.
 *
 * The panel is the one place the settings live while the user edits them;
 * the window reads them with ss_params_panel_get_settings when it runs. It
 * says, for the dense direct solver, how large a problem fits in memory.
 *
 * Signals: changed () after any edit; roi-changed () when the panel itself
 * changed the region (the "centre" button, clearing).
 * Property roi-drawing: the "draw a region" toggle (bound to the image view);
 * picking-star: the "pick a star" toggle (bound to the image view's pick mode).
 */
#pragma once

#include <gtk/gtk.h>
#include "ss-device-picker.h"
#include "ss-hdu-chooser.h"
#include "ss-job.h"

G_BEGIN_DECLS

#define SS_TYPE_PARAMS_PANEL (ss_params_panel_get_type ())
G_DECLARE_FINAL_TYPE (SsParamsPanel, ss_params_panel, SS, PARAMS_PANEL, GtkBox)

GtkWidget *ss_params_panel_new (void);

/* SETTINGS must be cleared with ss_settings_clear. */
void ss_params_panel_get_settings (SsParamsPanel *self, SsSettings *settings);
void ss_params_panel_set_settings (SsParamsPanel *self, const SsSettings *settings);

/* The size of the open image (for the region and the dense-fit hint). */
void ss_params_panel_set_image_size (SsParamsPanel *self, int width, int height);
/* The region of interest (full-image pixels, y = first row); NULL clears it.
 * Setting one also ticks "solve only the region". */
void ss_params_panel_set_roi (SsParamsPanel *self, const GdkRectangle *roi);
gboolean ss_params_panel_get_roi (SsParamsPanel *self, GdkRectangle *roi);
/* The compute devices found, shown under the compute choice. */
void ss_params_panel_set_device_text (SsParamsPanel *self, const char *text);
/* The CUDA devices the compute choice offers (SsDeviceInfo, as
 * ss_backend_list_devices gives them; NULL: none). */
void ss_params_panel_set_devices (SsParamsPanel *self, GArray *devices);
/* The compute choice (Automatic, CPU or one GPU). */
SsDevicePicker *ss_params_panel_get_device_picker (SsParamsPanel *self);
/* The hint about the dense direct solver's size limit, as shown. */
const char *ss_params_panel_get_dense_hint (SsParamsPanel *self);

/* The PSF measured from N_STARS stars (0: not known; FIT NULL: none yet);
 * setting one selects "Measured from stars" as the PSF. */
void ss_params_panel_set_psf_fit (SsParamsPanel *self, const SsPsfFit *fit, int n_stars);
gboolean ss_params_panel_get_psf_fit (SsParamsPanel *self, SsPsfFit *fit);
/* The measurement as the panel shows it. */
const char *ss_params_panel_get_psf_fit_text (SsParamsPanel *self);
/* Takes PATH as the PSF file, as the file dialog does: for a file of
 * several images (WebbPSF's oversampled and detector-sampled PSFs) the HDU
 * chooser asks which is the blur first, and the PSF becomes file:PATH[N]
 * (the CLI's form). The chooser while it is open, else NULL. */
void ss_params_panel_choose_psf_file (SsParamsPanel *self, const char *path);
SsHduChooser *ss_params_panel_get_psf_hdu_chooser (SsParamsPanel *self);
/* The profile to fit: Gaussian or Moffat. */
SsPsfModel ss_params_panel_get_star_model (SsParamsPanel *self);

/* The largest square side (pixels) whose system fits in BYTES with
 * OBSERVED_FRACTION of the pixels observed, for a solver that needs a region
 * (0 for the others). */
int ss_params_panel_dense_max_side (gsize bytes, double observed_fraction,
                                    const SsSolveParams *params);

G_END_DECLS
