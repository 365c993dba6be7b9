/* ss-params-panel.c: the settings column (template in ss-params-panel.ui): the type,
 * its PSF file, region and measured PSF, and the settings in and out. Which
 * controls apply, the solver list and the dense hint are in
 * ss-params-panel-controls.c. */
#include "ss-params-panel-private.h"
#include "ss-file-patterns.h"

G_DEFINE_FINAL_TYPE (SsParamsPanel, ss_params_panel, GTK_TYPE_BOX)

enum { SIGNAL_CHANGED, SIGNAL_ROI_CHANGED, N_SIGNALS };
static guint signals[N_SIGNALS];

enum { PROP_0, PROP_ROI_DRAWING, PROP_PICKING_STAR, N_PROPS };
static GParamSpec *properties[N_PROPS];

/* ---- telling of changes --------------------------------------------------- */

static void
emit_changed (SsParamsPanel *self)
{
  if (self->updating)
    return;
  ss_params_panel_update_visibility (self);
  ss_params_panel_update_dense_hint (self);
  g_signal_emit (self, signals[SIGNAL_CHANGED], 0);
}

static void
on_control_changed (SsParamsPanel *self)
{
  emit_changed (self);
}

/* ---- the PSF file --------------------------------------------------------- */

static void
set_psf_path (SsParamsPanel *self, const char *path)
{
  g_free (self->psf_path);
  self->psf_path = g_strdup (path);
  g_autofree char *base = path ? g_path_get_basename (path) : NULL;
  gtk_button_set_label (self->psf_file_button, base ? base : "Choose…");
  gtk_widget_set_tooltip_text (GTK_WIDGET (self->psf_file_button), path);
}

static void
on_psf_hdu_chosen (SsHduChooser *chooser, int hdu, int plane, SsParamsPanel *self)
{
  const char *path = g_object_get_data (G_OBJECT (chooser), "ss-psf-path");
  g_autofree char *named = g_strdup_printf ("%s[%d]", path, hdu);
  set_psf_path (self, named);
  emit_changed (self);
}

static void
on_psf_chooser_destroyed (SsParamsPanel *self)
{
  self->psf_chooser = NULL;
}

void
ss_params_panel_choose_psf_file (SsParamsPanel *self, const char *path)
{
  g_return_if_fail (SS_IS_PARAMS_PANEL (self) && path != NULL);
  g_autoptr (GPtrArray) hdus = ss_fits_list_hdus (path, NULL);
  int first;
  guint images = ss_fits_count_images (hdus, &first);
  /* A newer choice of file supersedes a question still open about another. */
  if (self->psf_chooser != NULL)
    gtk_window_destroy (GTK_WINDOW (self->psf_chooser));
  /* One image (or a file the solve will refuse with its reason): no question. */
  if (images <= 1)
    {
      set_psf_path (self, path);
      emit_changed (self);
      return;
    }
  GtkRoot *root = gtk_widget_get_root (GTK_WIDGET (self));
  self->psf_chooser = ss_hdu_chooser_new (GTK_IS_WINDOW (root) ? GTK_WINDOW (root) : NULL, path,
                                          hdus, first, 0);
  g_object_set_data_full (G_OBJECT (self->psf_chooser), "ss-psf-path", g_strdup (path), g_free);
  g_signal_connect_object (self->psf_chooser, "chosen", G_CALLBACK (on_psf_hdu_chosen), self, 0);
  g_signal_connect_object (self->psf_chooser, "destroy", G_CALLBACK (on_psf_chooser_destroyed),
                           self, G_CONNECT_SWAPPED);
  gtk_window_present (GTK_WINDOW (self->psf_chooser));
}

SsHduChooser *
ss_params_panel_get_psf_hdu_chooser (SsParamsPanel *self)
{
  g_return_val_if_fail (SS_IS_PARAMS_PANEL (self), NULL);
  return self->psf_chooser;
}

/* SELF: a reference the dialog held, since the window may have been closed
 * while the (non-modal) dialog was open: its answer then goes nowhere. */
static void
on_psf_chosen (GtkNativeDialog *dialog, int response, SsParamsPanel *self)
{
  if (response == GTK_RESPONSE_ACCEPT && gtk_widget_get_root (GTK_WIDGET (self)) != NULL)
    {
      g_autoptr (GFile) file = gtk_file_chooser_get_file (GTK_FILE_CHOOSER (dialog));
      g_autofree char *path = file ? g_file_get_path (file) : NULL;
      if (path)
        ss_params_panel_choose_psf_file (self, path);
    }
  g_object_unref (dialog);
  g_object_unref (self);
}

static void
on_psf_file_clicked (SsParamsPanel *self)
{
  GtkRoot *root = gtk_widget_get_root (GTK_WIDGET (self));
  GtkFileChooserNative *dialog = gtk_file_chooser_native_new (
      "Choose a PSF (FITS)", GTK_IS_WINDOW (root) ? GTK_WINDOW (root) : NULL,
      GTK_FILE_CHOOSER_ACTION_OPEN, "_Open", "_Cancel");
  /* A PSF file is read as an image is (ss_psf_read_file): the same names. */
  ss_file_chooser_add_filter (GTK_FILE_CHOOSER (dialog), "FITS images", ss_fits_read_suffixes);
  g_signal_connect (dialog, "response", G_CALLBACK (on_psf_chosen), g_object_ref (self));
  gtk_native_dialog_show (GTK_NATIVE_DIALOG (dialog));
}

/* ---- region of interest --------------------------------------------------- */

static void
update_roi_label (SsParamsPanel *self)
{
  g_autofree char *text = NULL;
  if (!self->have_roi)
    text = g_strdup ("No region: the whole image is solved.");
  else
    /* FITS-style 1-based pixel numbers, as the pointer read-out shows them. */
    text = g_strdup_printf ("%d×%d pixels from x %d, y %d to x %d, y %d", self->roi.width,
                            self->roi.height, self->roi.x + 1, self->roi.y + 1,
                            self->roi.x + self->roi.width, self->roi.y + self->roi.height);
  gtk_label_set_text (self->roi_label, text);
  gtk_widget_set_sensitive (GTK_WIDGET (self->roi_check), self->have_roi);
  gtk_widget_set_sensitive (GTK_WIDGET (self->roi_clear_button), self->have_roi);
}

void
ss_params_panel_set_roi (SsParamsPanel *self, const GdkRectangle *roi)
{
  g_return_if_fail (SS_IS_PARAMS_PANEL (self));
  self->have_roi = roi != NULL;
  if (roi)
    self->roi = *roi;
  self->updating = TRUE;
  gtk_check_button_set_active (self->roi_check, roi != NULL);
  self->updating = FALSE;
  update_roi_label (self);
  emit_changed (self);
}

gboolean
ss_params_panel_get_roi (SsParamsPanel *self, GdkRectangle *roi)
{
  g_return_val_if_fail (SS_IS_PARAMS_PANEL (self), FALSE);
  if (self->have_roi && roi)
    *roi = self->roi;
  return self->have_roi;
}

static void
on_roi_centre_clicked (SsParamsPanel *self)
{
  if (self->image_width <= 0)
    return;
  int w = MIN (128, self->image_width), h = MIN (128, self->image_height);
  GdkRectangle roi = { (self->image_width - w) / 2, (self->image_height - h) / 2, w, h };
  ss_params_panel_set_roi (self, &roi);
  g_signal_emit (self, signals[SIGNAL_ROI_CHANGED], 0);
}

static void
on_roi_clear_clicked (SsParamsPanel *self)
{
  ss_params_panel_set_roi (self, NULL);
  g_signal_emit (self, signals[SIGNAL_ROI_CHANGED], 0);
}

/* ---- settings in and out -------------------------------------------------- */

void
ss_params_panel_get_settings (SsParamsPanel *self, SsSettings *s)
{
  g_return_if_fail (SS_IS_PARAMS_PANEL (self));
  /* A value typed but not yet committed (no Enter, no Tab: Ctrl+R straight
   * after typing) is the one the user sees: commit it before reading. */
  GtkSpinButton *spins[] = { self->psf_size_spin, self->psf_fwhm_spin, self->psf_beta_spin,
                             self->ratio_spin, self->noise_spin, self->seed_spin,
                             self->sky_value_spin };
  for (guint i = 0; i < G_N_ELEMENTS (spins); i++)
    ss_spin_button_commit_typed (spins[i]);
  ss_settings_init (s);
  s->mode = ss_params_panel_is_simulate (self) ? SS_MODE_SIMULATE : SS_MODE_DEBLUR;

  SsPsfSpec *psf = &s->acquisition.psf;
  static const SsPsfKind psf_kinds[] = { SS_PSF_NONE, SS_PSF_BOX_ROW, SS_PSF_BOX,
                                         SS_PSF_GAUSSIAN, SS_PSF_MOFFAT, SS_PSF_FILE };
  guint psf_choice = gtk_drop_down_get_selected (self->psf_dropdown);
  if (psf_choice == PSF_ROW_MEASURED)
    {
      /* Without a measurement psf_fit.fwhm stays 0 and the window says so. */
      s->psf_from_fit = TRUE;
      if (self->have_fit)
        {
          s->psf_fit = self->fit;
          ss_psf_fit_to_spec (&self->fit, psf);
        }
    }
  else
    {
      psf->kind = psf_kinds[MIN (psf_choice, PSF_ROW_FILE)];
      psf->size = gtk_spin_button_get_value_as_int (self->psf_size_spin);
      psf->fwhm = gtk_spin_button_get_value (self->psf_fwhm_spin);
      psf->beta = gtk_spin_button_get_value (self->psf_beta_spin);
      psf->path = g_strdup (self->psf_path);
    }
  s->acquisition.ratio = gtk_spin_button_get_value (self->ratio_spin);
  s->acquisition.noise = gtk_spin_button_get_value (self->noise_spin);
  s->acquisition.seed = (guint32) gtk_spin_button_get_value (self->seed_spin);

  static const SsSkyMode sky_modes[] = { SS_SKY_NONE, SS_SKY_MEDIAN, SS_SKY_CLIPPED_MEDIAN,
                                         SS_SKY_VALUE };
  s->sky_mode = sky_modes[MIN (gtk_drop_down_get_selected (self->sky_dropdown), SKY_ROW_VALUE)];
  s->sky_value = gtk_spin_button_get_value (self->sky_value_spin);
  /* The drop-down lists the modes in SsBoundary's order. */
  s->boundary = (SsBoundary) MIN (gtk_drop_down_get_selected (self->boundary_dropdown),
                                  (guint) SS_BOUNDARY_TAPER);
  s->saturation_mode = gtk_check_button_get_active (self->saturation_check)
                         ? SS_SATURATION_AUTO : SS_SATURATION_NONE;
  s->bad_pixels = gtk_check_button_get_active (self->bad_pixels_check);

  SsSolveParams *p = &s->params;
  p->kind = ss_params_panel_selected_solver (self)->kind;
  ss_param_controls_get (self->param_controls, p);
  s->auto_params = ss_param_controls_get_auto (self->param_controls);

  ss_device_picker_get_choice (self->device_picker, &s->backend, &s->device);

  s->use_roi = self->have_roi && gtk_check_button_get_active (self->roi_check);
  if (s->use_roi)
    {
      s->roi_x = self->roi.x;
      s->roi_y = self->roi.y;
      s->roi_width = self->roi.width;
      s->roi_height = self->roi.height;
    }
}

static void show_fit (SsParamsPanel *self, const SsPsfFit *fit, int n_stars);
static int stars_of (SsParamsPanel *self, const SsPsfFit *fit);

static guint
psf_row (SsPsfKind kind)
{
  switch (kind)
    {
    case SS_PSF_BOX_ROW: return PSF_ROW_BOX_ROW;
    case SS_PSF_BOX: return PSF_ROW_BOX;
    case SS_PSF_GAUSSIAN: return PSF_ROW_GAUSSIAN;
    case SS_PSF_MOFFAT: return PSF_ROW_MOFFAT;
    case SS_PSF_FILE: return PSF_ROW_FILE;
    case SS_PSF_NONE:
    default: return PSF_ROW_NONE;
    }
}

void
ss_params_panel_set_settings (SsParamsPanel *self, const SsSettings *s)
{
  g_return_if_fail (SS_IS_PARAMS_PANEL (self));
  self->updating = TRUE;
  gtk_drop_down_set_selected (self->mode_dropdown, s->mode == SS_MODE_SIMULATE ? 1 : 0);
  const SsPsfSpec *psf = &s->acquisition.psf;
  gtk_drop_down_set_selected (self->psf_dropdown,
                              s->psf_from_fit ? PSF_ROW_MEASURED : psf_row (psf->kind));
  if (s->psf_from_fit)
    show_fit (self, s->psf_fit.fwhm > 0 ? &s->psf_fit : NULL, stars_of (self, &s->psf_fit));
  if (psf->size > 0)
    gtk_spin_button_set_value (self->psf_size_spin, psf->size);
  if (psf->fwhm > 0)
    gtk_spin_button_set_value (self->psf_fwhm_spin, psf->fwhm);
  if (psf->beta > 0)
    gtk_spin_button_set_value (self->psf_beta_spin, psf->beta);
  set_psf_path (self, psf->path);
  gtk_spin_button_set_value (self->ratio_spin, s->acquisition.ratio);
  gtk_spin_button_set_value (self->noise_spin, s->acquisition.noise);
  gtk_spin_button_set_value (self->seed_spin, s->acquisition.seed);
  static const guint sky_rows[] = { [SS_SKY_NONE] = SKY_ROW_NONE, [SS_SKY_MEDIAN] = SKY_ROW_MEDIAN,
                                    [SS_SKY_CLIPPED_MEDIAN] = SKY_ROW_CLIPPED,
                                    [SS_SKY_VALUE] = SKY_ROW_VALUE };
  gtk_drop_down_set_selected (self->sky_dropdown, sky_rows[MIN ((guint) s->sky_mode, 3u)]);
  gtk_spin_button_set_value (self->sky_value_spin, s->sky_value);
  gtk_drop_down_set_selected (self->boundary_dropdown, (guint) s->boundary);
  gtk_check_button_set_active (self->saturation_check,
                               s->saturation_mode != SS_SATURATION_NONE);
  gtk_check_button_set_active (self->bad_pixels_check, s->bad_pixels);

  const SsSolveParams *p = &s->params;
  for (guint i = 0; i < ss_solver_count (); i++)
    if (ss_solver_nth (i)->kind == p->kind)
      gtk_drop_down_set_selected (self->solver_dropdown, i);
  ss_param_controls_set (self->param_controls, p);
  ss_param_controls_set_auto (self->param_controls, s->auto_params);
  ss_device_picker_set_choice (self->device_picker, s->backend, s->device);
  self->updating = FALSE;

  if (s->use_roi)
    {
      GdkRectangle roi = { s->roi_x, s->roi_y, s->roi_width, s->roi_height };
      ss_params_panel_set_roi (self, &roi);
      g_signal_emit (self, signals[SIGNAL_ROI_CHANGED], 0);
    }
  else
    {
      self->updating = TRUE;
      gtk_check_button_set_active (self->roi_check, FALSE);
      self->updating = FALSE;
    }
  emit_changed (self);
}

/* ---- the PSF measured from stars ------------------------------------------ */

/* How many stars FIT was measured on, when it is the measurement shown
 * (settings given back to the panel keep the count); else 0, not known. */
static int
stars_of (SsParamsPanel *self, const SsPsfFit *fit)
{
  const SsPsfFit *shown = &self->fit;
  gboolean same = self->have_fit && fit->model == shown->model && fit->x == shown->x
                  && fit->y == shown->y && fit->fwhm_major == shown->fwhm_major
                  && fit->fwhm_minor == shown->fwhm_minor && fit->angle == shown->angle;
  return same ? self->fit_stars : 0;
}

/* FIT's description and what it was measured on: one star (the one at the
 * centre given), or the medians over N_STARS (the centre is the brightest's). */
static void
show_fit (SsParamsPanel *self, const SsPsfFit *fit, int n_stars)
{
  self->have_fit = fit != NULL;
  if (fit == NULL)
    {
      gtk_label_set_text (self->star_label, "No star measured yet");
      return;
    }
  self->fit = *fit;
  self->fit_stars = n_stars;
  g_autofree char *described = ss_psf_fit_describe (fit);
  g_autofree char *text = n_stars > 1 ? g_strdup_printf ("%s; median of %d stars", described,
                                                         n_stars)
                          : n_stars == 1 ? g_strdup_printf ("%s; one star", described)
                                         : g_strdup (described);
  gtk_label_set_text (self->star_label, text);
  gtk_drop_down_set_selected (self->star_model_dropdown,
                              fit->model == SS_PSF_MODEL_MOFFAT ? 1 : 0);
}

void
ss_params_panel_set_psf_fit (SsParamsPanel *self, const SsPsfFit *fit, int n_stars)
{
  g_return_if_fail (SS_IS_PARAMS_PANEL (self));
  self->updating = TRUE;
  show_fit (self, fit, n_stars);
  if (fit != NULL)
    gtk_drop_down_set_selected (self->psf_dropdown, PSF_ROW_MEASURED);
  self->updating = FALSE;
  emit_changed (self);
}

gboolean
ss_params_panel_get_psf_fit (SsParamsPanel *self, SsPsfFit *fit)
{
  g_return_val_if_fail (SS_IS_PARAMS_PANEL (self), FALSE);
  if (self->have_fit && fit != NULL)
    *fit = self->fit;
  return self->have_fit;
}

const char *
ss_params_panel_get_psf_fit_text (SsParamsPanel *self)
{
  g_return_val_if_fail (SS_IS_PARAMS_PANEL (self), NULL);
  return gtk_label_get_text (self->star_label);
}

SsPsfModel
ss_params_panel_get_star_model (SsParamsPanel *self)
{
  g_return_val_if_fail (SS_IS_PARAMS_PANEL (self), SS_PSF_MODEL_GAUSSIAN);
  return gtk_drop_down_get_selected (self->star_model_dropdown) == 1 ? SS_PSF_MODEL_MOFFAT
                                                                       : SS_PSF_MODEL_GAUSSIAN;
}

static void
on_star_pick_toggled (SsParamsPanel *self)
{
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_PICKING_STAR]);
}

/* ---- GObject -------------------------------------------------------------- */

static void
ss_params_panel_get_property (GObject *object, guint prop_id, GValue *value, GParamSpec *pspec)
{
  SsParamsPanel *self = SS_PARAMS_PANEL (object);
  switch (prop_id)
    {
    case PROP_ROI_DRAWING:
      g_value_set_boolean (value, gtk_toggle_button_get_active (self->roi_draw_button));
      break;
    case PROP_PICKING_STAR:
      g_value_set_boolean (value, gtk_toggle_button_get_active (self->star_pick_button));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
ss_params_panel_set_property (GObject *object, guint prop_id, const GValue *value,
                              GParamSpec *pspec)
{
  SsParamsPanel *self = SS_PARAMS_PANEL (object);
  switch (prop_id)
    {
    case PROP_ROI_DRAWING:
      gtk_toggle_button_set_active (self->roi_draw_button, g_value_get_boolean (value));
      break;
    case PROP_PICKING_STAR:
      gtk_toggle_button_set_active (self->star_pick_button, g_value_get_boolean (value));
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
on_roi_draw_toggled (SsParamsPanel *self)
{
  g_object_notify_by_pspec (G_OBJECT (self), properties[PROP_ROI_DRAWING]);
}

static void
ss_params_panel_dispose (GObject *object)
{
  SsParamsPanel *self = SS_PARAMS_PANEL (object);
  /* A question about a panel that is going has no one to answer to. */
  if (self->psf_chooser != NULL)
    gtk_window_destroy (GTK_WINDOW (self->psf_chooser));
  G_OBJECT_CLASS (ss_params_panel_parent_class)->dispose (object);
}

static void
ss_params_panel_finalize (GObject *object)
{
  SsParamsPanel *self = SS_PARAMS_PANEL (object);
  g_free (self->psf_path);
  G_OBJECT_CLASS (ss_params_panel_parent_class)->finalize (object);
}

static void
ss_params_panel_class_init (SsParamsPanelClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS (klass);
  object_class->get_property = ss_params_panel_get_property;
  object_class->set_property = ss_params_panel_set_property;
  object_class->dispose = ss_params_panel_dispose;
  object_class->finalize = ss_params_panel_finalize;
  g_type_ensure (SS_TYPE_PARAM_CONTROLS);
  g_type_ensure (SS_TYPE_DEVICE_PICKER);

  properties[PROP_ROI_DRAWING] = g_param_spec_boolean (
      "roi-drawing", NULL, NULL, FALSE,
      G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY);
  properties[PROP_PICKING_STAR] = g_param_spec_boolean (
      "picking-star", NULL, NULL, FALSE,
      G_PARAM_READWRITE | G_PARAM_STATIC_STRINGS | G_PARAM_EXPLICIT_NOTIFY);
  g_object_class_install_properties (object_class, N_PROPS, properties);
  signals[SIGNAL_CHANGED] = g_signal_new ("changed", G_TYPE_FROM_CLASS (klass),
                                          G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                                          G_TYPE_NONE, 0);
  signals[SIGNAL_ROI_CHANGED] = g_signal_new ("roi-changed", G_TYPE_FROM_CLASS (klass),
                                              G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                                              G_TYPE_NONE, 0);

  gtk_widget_class_set_template_from_resource (widget_class,
                                               "/org/sharpsky/Sharpsky/ss-params-panel.ui");
#define CHILD(name) gtk_widget_class_bind_template_child (widget_class, SsParamsPanel, name)
  CHILD (mode_dropdown);
  CHILD (psf_dropdown);
  CHILD (psf_size_label);
  CHILD (psf_size_spin);
  CHILD (psf_fwhm_label);
  CHILD (psf_fwhm_spin);
  CHILD (psf_beta_label);
  CHILD (psf_beta_spin);
  CHILD (psf_file_label);
  CHILD (psf_file_button);
  CHILD (star_box);
  CHILD (star_model_dropdown);
  CHILD (star_pick_button);
  CHILD (star_label);
  CHILD (ratio_label);
  CHILD (ratio_spin);
  CHILD (noise_label);
  CHILD (noise_spin);
  CHILD (seed_label);
  CHILD (seed_spin);
  CHILD (sky_dropdown);
  CHILD (sky_value_label);
  CHILD (sky_value_spin);
  CHILD (boundary_label);
  CHILD (boundary_dropdown);
  CHILD (saturation_check);
  CHILD (bad_pixels_check);
  CHILD (solver_dropdown);
  CHILD (param_controls);
  CHILD (device_picker);
  CHILD (device_label);
  CHILD (roi_check);
  CHILD (roi_draw_button);
  CHILD (roi_centre_button);
  CHILD (roi_clear_button);
  CHILD (roi_label);
  CHILD (dense_label);
#undef CHILD
  gtk_widget_class_bind_template_callback (widget_class, on_psf_file_clicked);
  gtk_widget_class_bind_template_callback (widget_class, on_roi_centre_clicked);
  gtk_widget_class_bind_template_callback (widget_class, on_roi_clear_clicked);
}

static void
ss_params_panel_init (SsParamsPanel *self)
{
  gtk_widget_init_template (GTK_WIDGET (self));
  ss_params_panel_setup_solver_list (self);
  /* β's range is the engine's, (1, 100], to the spin button's two digits: a
   * fitted β outside a narrower range would be clamped on display and the
   * app would solve with another β than `--psf auto`. */
  gtk_spin_button_set_range (self->psf_beta_spin, SS_PSF_MIN_BETA + 0.01, SS_PSF_MAX_BETA);
  g_signal_connect_swapped (self->param_controls, "changed", G_CALLBACK (on_control_changed),
                            self);
  g_signal_connect_swapped (self->device_picker, "changed", G_CALLBACK (on_control_changed),
                            self);

  GObject *dropdowns[] = { G_OBJECT (self->mode_dropdown), G_OBJECT (self->psf_dropdown),
                           G_OBJECT (self->sky_dropdown), G_OBJECT (self->solver_dropdown),
                           G_OBJECT (self->boundary_dropdown) };
  for (guint i = 0; i < G_N_ELEMENTS (dropdowns); i++)
    g_signal_connect_swapped (dropdowns[i], "notify::selected", G_CALLBACK (on_control_changed),
                              self);
  GObject *spins[] = { G_OBJECT (self->psf_size_spin), G_OBJECT (self->psf_fwhm_spin),
                       G_OBJECT (self->psf_beta_spin), G_OBJECT (self->ratio_spin),
                       G_OBJECT (self->noise_spin), G_OBJECT (self->seed_spin),
                       G_OBJECT (self->sky_value_spin) };
  for (guint i = 0; i < G_N_ELEMENTS (spins); i++)
    g_signal_connect_swapped (spins[i], "value-changed", G_CALLBACK (on_control_changed), self);
  GObject *checks[] = { G_OBJECT (self->roi_check), G_OBJECT (self->saturation_check),
                        G_OBJECT (self->bad_pixels_check) };
  for (guint i = 0; i < G_N_ELEMENTS (checks); i++)
    g_signal_connect_swapped (checks[i], "toggled", G_CALLBACK (on_control_changed), self);
  g_signal_connect_swapped (self->roi_draw_button, "toggled", G_CALLBACK (on_roi_draw_toggled),
                            self);
  g_signal_connect_swapped (self->star_pick_button, "toggled", G_CALLBACK (on_star_pick_toggled),
                            self);

  /* Start from the defaults every run of the app shares. */
  SsSettings defaults;
  ss_settings_init (&defaults);
  ss_params_panel_set_settings (self, &defaults);
  ss_settings_clear (&defaults);
  update_roi_label (self);
}
