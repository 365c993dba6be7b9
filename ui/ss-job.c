/* ss-job.c: building the problem of one solve from an image and settings. */
#include "ss-job.h"
#include "ss-config.h"

#include <math.h>
#include <string.h>

/* ---- settings ------------------------------------------------------------- */

void
ss_settings_init (SsSettings *settings)
{
  memset (settings, 0, sizeof *settings);
  settings->mode = SS_MODE_SIMULATE;
  ss_acquisition_init (&settings->acquisition);
  /* The seed paper's experiment (seed 000, section 7): blur order 5 and
   * half the pixels kept. */
  settings->acquisition.psf.kind = SS_PSF_BOX_ROW;
  settings->acquisition.psf.size = 5;
  settings->acquisition.psf.fwhm = 3.0;
  settings->acquisition.psf.beta = 2.5;
  settings->acquisition.ratio = 0.5;
  settings->sky_mode = SS_SKY_MEDIAN;  /* as sharpsky-cli: the same defaults give the same MSE */
  settings->boundary = SS_BOUNDARY_MIRROR;
  settings->saturation_mode = SS_SATURATION_AUTO;
  settings->bad_pixels = TRUE;
  settings->defects = (SsDefects) { .saturation = { .level = NAN }, .noise = NAN };
  ss_solve_params_init (&settings->params);
  settings->params.alpha = 1e-3;
  settings->params.iterations = 300;
  settings->params.nonneg = TRUE;
  settings->backend = SS_BACKEND_AUTO;
  settings->device = -1;
}

void
ss_settings_clear (SsSettings *settings)
{
  ss_acquisition_clear (&settings->acquisition);
}

void
ss_settings_copy (const SsSettings *src, SsSettings *dst)
{
  if (src == dst)
    return;
  *dst = *src;
  ss_psf_spec_copy (&src->acquisition.psf, &dst->acquisition.psf);
}

void
ss_settings_take_resolved (SsSettings *settings, const SsSettings *resolved)
{
  if (settings->auto_params & (G_GUINT64_CONSTANT (1) << SS_PARAM_ALPHA))
    {
      /* The job was built for one solver; this run's scales the rule its own
       * way (direct-fft 6 times it, admm 0.15), as --alpha auto does. */
      settings->alpha_rule = resolved->alpha_rule;
      settings->params.alpha = ss_solver_alpha_auto (&settings->params, resolved->alpha_rule);
      settings->noise_estimate = resolved->noise_estimate;
    }
  settings->defects = resolved->defects;
}

/* Whether the solver of S can leave pixels out of its fit (every one but
 * direct-fft): only then are the defects (ss_defects_blank) left out. */
static gboolean
leaves_pixels_out (const SsSettings *s)
{
  return (ss_solver_info (s->params.kind)->caps & SS_SOLVER_MASKS) != 0;
}

/* Whether two fits describe the same profile (what the operator uses). */
static gboolean
same_profile (const SsPsfFit *a, const SsPsfFit *b)
{
  return a->model == b->model && a->fwhm_major == b->fwhm_major
         && a->fwhm_minor == b->fwhm_minor && a->angle == b->angle
         && (a->model != SS_PSF_MODEL_MOFFAT || a->beta == b->beta);
}

gboolean
ss_settings_same_problem (const SsSettings *a, const SsSettings *b)
{
  g_autofree char *psf_a = ss_psf_spec_to_string (&a->acquisition.psf);
  g_autofree char *psf_b = ss_psf_spec_to_string (&b->acquisition.psf);
  if (a->psf_from_fit != b->psf_from_fit
      || (a->psf_from_fit && !same_profile (&a->psf_fit, &b->psf_fit)))
    return FALSE;
  if (a->mode != b->mode || g_strcmp0 (psf_a, psf_b) != 0 || a->sky_mode != b->sky_mode
      || (a->sky_mode == SS_SKY_VALUE && a->sky_value != b->sky_value)
      || a->use_roi != b->use_roi || a->auto_params != b->auto_params
      || (a->mode == SS_MODE_DEBLUR
          && (a->boundary != b->boundary || a->saturation_mode != b->saturation_mode
              || a->bad_pixels != b->bad_pixels
              /* x >= 0 decides the cold pixels, when bad pixels are left out */
              || (a->bad_pixels && a->params.nonneg != b->params.nonneg)
              || leaves_pixels_out (a) != leaves_pixels_out (b))))
    return FALSE;
  if (a->use_roi && (a->roi_x != b->roi_x || a->roi_y != b->roi_y
                     || a->roi_width != b->roi_width || a->roi_height != b->roi_height))
    return FALSE;
  if (a->mode == SS_MODE_SIMULATE
      && (a->acquisition.ratio != b->acquisition.ratio
          || a->acquisition.seed != b->acquisition.seed
          || a->acquisition.noise != b->acquisition.noise
          || a->acquisition.sensing != b->acquisition.sensing))
    return FALSE;
  return TRUE;
}

const char *
ss_mode_to_string (SsMode mode)
{
  return mode == SS_MODE_SIMULATE ? "simulate" : "deblur";
}

const char *
ss_sky_mode_to_string (SsSkyMode mode)
{
  switch (mode)
    {
    case SS_SKY_MEDIAN: return "median";
    case SS_SKY_CLIPPED_MEDIAN: return "clipped-median";
    case SS_SKY_VALUE: return "value";
    case SS_SKY_NONE:
    default: return "none";
    }
}

static void
history_add_param (const SsParamInfo *info, double value, const char *text, gpointer header)
{
  ss_header_add_history (header, "%s = %s", info->name, text);
}

void
ss_settings_add_history (const SsSettings *s, SsHeader *header)
{
  const SsSolveParams *p = &s->params;
  const SsAcquisition *acq = &s->acquisition;
  g_autofree char *psf = ss_psf_spec_to_string (&acq->psf);
  ss_header_add_history (header, "Sharpsky %s (GTK app)", SHARPSKY_VERSION);
  ss_header_add_history (header, "mode = %s", ss_mode_to_string (s->mode));
  ss_header_add_history (header, "psf = %s", psf);
  if (s->psf_from_fit && s->psf_fit.fwhm > 0)
    {
      g_autofree char *fit = ss_psf_fit_describe (&s->psf_fit);
      ss_header_add_history (header, "psf fit = %s", fit);
    }
  if (s->mode == SS_MODE_SIMULATE)
    {
      ss_header_add_history (header, "ratio = %.17g", acq->ratio);
      ss_header_add_history (header, "sensing = %s",
                             ss_acquisition_uses_sensing (acq) ? "circulant" : "none");
      ss_header_add_history (header, "seed = %u", (unsigned) acq->seed);
      ss_header_add_history (header, "noise = %.17g (scaled units)", acq->noise);
    }
  if (s->mode == SS_MODE_DEBLUR)
    {
      ss_header_add_history (header, "boundary = %s", ss_boundary_to_string (s->boundary));
      if (s->defects.saturation.clipped > 0)
        ss_header_add_history (header, "saturation = %.9g (%s): %" G_GSIZE_FORMAT " pixels left "
                               "out of the data term", s->defects.saturation.level,
                               ss_saturation_source_describe (s->defects.saturation.source),
                               s->defects.saturation.clipped);
      else
        ss_header_add_history (header, "saturation = %s",
                               !leaves_pixels_out (s) ? "kept in the fit (the solver cannot "
                                                        "leave pixels out)"
                               : s->saturation_mode == SS_SATURATION_NONE ? "none (kept in the fit)"
                                                                          : "none found");
      if (s->defects.cold > 0)
        ss_header_add_history (header, "cold pixels = %" G_GSIZE_FORMAT " (far below their "
                               "neighbours; left out of the data term)", s->defects.cold);
      if (s->defects.hot > 0)
        ss_header_add_history (header, "hot pixels = %" G_GSIZE_FORMAT " (sharper than the blur; "
                               "left out of the data term)", s->defects.hot);
      if (!s->bad_pixels)
        ss_header_add_history (header, "bad pixels = none (kept in the fit)");
    }
  ss_header_add_history (header, "sky = %s", ss_sky_mode_to_string (s->sky_mode));
  if (s->sky_mode == SS_SKY_VALUE)
    ss_header_add_history (header, "sky value = %.17g", s->sky_value);
  ss_header_add_history (header, "solver = %s", ss_solver_kind_to_string (p->kind));
  ss_solve_params_foreach_used (p, history_add_param, header);
  if (s->auto_params & (G_GUINT64_CONSTANT (1) << SS_PARAM_ALPHA))
    ss_header_add_history (header, "alpha chosen from the noise %.6g (scaled units)",
                           s->noise_estimate);
  ss_header_add_history (header, "backend = %s", ss_backend_kind_to_string (s->backend));
  /* The GPU picked, numbered as --devices takes it (the result's line names it). */
  if (s->backend == SS_BACKEND_CUDA && s->device >= 0)
    ss_header_add_history (header, "device = %d", s->device);
  if (s->use_roi)
    ss_header_add_history (header, "region = %dx%d at x=%d y=%d (0-based, row 0 first)",
                           s->roi_width, s->roi_height, s->roi_x, s->roi_y);
}

/* ---- jobs ----------------------------------------------------------------- */

SsJob *
ss_job_ref (SsJob *job)
{
  g_atomic_int_inc (&job->ref_count);
  return job;
}

void
ss_job_unref (SsJob *job)
{
  if (job == NULL || !g_atomic_int_dec_and_test (&job->ref_count))
    return;
  ss_settings_clear (&job->settings);
  ss_operator_free (job->op);
  g_free (job->y);
  g_free (job->truth);
  ss_frame_unref (job->original);
  ss_frame_unref (job->measured);
  if (job->header)
    ss_header_free (job->header);
  g_free (job->source_path);
  g_free (job);
}

static SsFrame *
job_region (SsFrame *input, const SsSettings *settings, GError **error)
{
  if (!settings->use_roi)
    return ss_frame_ref (input);
  return ss_frame_crop (input, settings->roi_x, settings->roi_y, settings->roi_width,
                        settings->roi_height, error);
}

static gboolean
build_simulation (SsJob *job, GError **error)
{
  /* The simulated acquisition is circulant by construction: no padding. */
  job->solve_width = job->width;
  job->solve_height = job->height;
  gsize n = ss_job_n_pixels (job);
  job->truth = g_try_new (float, n);
  if (job->truth == NULL)
    {
      g_set_error (error, SS_ERROR, SS_ERROR_OUT_OF_MEMORY, "not enough memory for the truth");
      return FALSE;
    }
  ss_scaling_apply (&job->scaling, job->original->data, job->truth, n, TRUE);
  for (gsize i = 0; i < n; i++)
    if (!isfinite (job->truth[i]))
      job->truth[i] = 0.0f;   /* a blank pixel of a sharp image: no light */
  job->op = ss_operator_new (&job->settings.acquisition, job->width, job->height, error);
  if (job->op == NULL)
    return FALSE;
  job->y = ss_simulate (job->op, &job->settings.acquisition, job->truth, error);
  return job->y != NULL;
}

static gboolean
build_deblur (SsJob *job, GError **error)
{
  gsize n = ss_job_n_pixels (job);
  g_autofree float *scaled = g_try_new (float, n);
  if (scaled == NULL)
    {
      g_set_error (error, SS_ERROR, SS_ERROR_OUT_OF_MEMORY, "not enough memory for the data");
      return FALSE;
    }
  ss_scaling_apply (&job->scaling, job->original->data, scaled, n, FALSE);
  const SsSettings *s = &job->settings;
  SsDefectRules rules = {
    .saturation_mode = s->saturation_mode,
    .bad_pixels = s->bad_pixels,
    .nonneg = s->params.nonneg,
    .leaves_out = leaves_pixels_out (s),
  };
  ss_defects_find_saturation (&rules, job->header, job->original->data, job->width, job->height,
                              &job->settings.defects);
  ss_defects_blank (&rules, job->original->data, job->width, job->height, job->scaling.sky,
                    &s->acquisition.psf, s->psf_from_fit ? &s->psf_fit : NULL, scaled,
                    &job->settings.defects);
  /* Pad as the CLI does (its default: mirror), wide enough for the PSF. */
  const SsPsfSpec *psf = &job->settings.acquisition.psf;
  int margin = ss_boundary_margin_for_psf (psf, job->width, job->height, error);
  if (margin < 0)
    return FALSE;
  if (!ss_boundary_pad (scaled, job->width, job->height, job->settings.boundary, margin,
                        &job->y, &job->solve_width, &job->solve_height, &job->pad_x0,
                        &job->pad_y0, error))
    return FALSE;
  /* NaN marks the pixels the operator leaves out; the data vector holds 0 there. */
  /* As sharpsky-cli: the PSF's spectrum is made where the solve runs
   * (ss_backend_kind_new_operator). */
  g_autoptr (SsImage) kernel
    = job->settings.psf_from_fit
        ? ss_psf_fit_render (&job->settings.psf_fit, job->solve_width, job->solve_height, error)
        : ss_psf_render (psf, job->solve_width, job->solve_height, error);
  if (kernel == NULL)
    return FALSE;
  job->op = ss_backend_kind_new_operator (job->settings.backend, g_steal_pointer (&kernel->data),
                                          job->y, job->solve_width, job->solve_height, error);
  if (job->op == NULL)
    return FALSE;
  for (gsize i = 0; i < ss_job_solve_pixels (job); i++)
    if (!isfinite (job->y[i]))
      job->y[i] = 0.0f;
  return TRUE;
}

/* alpha from the noise, as sharpsky-cli's --alpha auto: the simulation's
 * own noise, or the noise estimated on the image. */
static gboolean
resolve_auto_params (SsJob *job, GError **error)
{
  SsSettings *s = &job->settings;
  if (!(s->auto_params & (G_GUINT64_CONSTANT (1) << SS_PARAM_ALPHA)))
    return TRUE;
  double rule;
  if (s->mode == SS_MODE_SIMULATE)
    {
      s->noise_estimate = s->acquisition.noise;
      rule = ss_alpha_auto (s->acquisition.noise, job->op);
    }
  else if (!ss_alpha_auto_from_data (job->original->data, job->width, job->height,
                                     s->defects.noise, job->scaling.scale, job->op, &rule,
                                     &s->noise_estimate,
                                     NULL, error))
    return FALSE;
  /* As the CLI's --alpha auto, the α alone: the hold-out rule is the app's
   * own box, ticked with α's auto box (ss-param-controls.c) and on by
   * default for a real image, so that it can be turned off for a solver
   * whose α row, and so its auto box, is hidden (the greedy ones). */
  s->alpha_rule = rule;
  s->params.alpha = ss_solver_alpha_auto (&s->params, rule);
  return ss_solve_params_validate (&s->params, error);
}

static gboolean
build_measured_frame (SsJob *job, GError **error)
{
  gsize n = ss_job_solve_pixels (job);
  g_autofree float *shown = g_try_new (float, n);
  if (shown == NULL)
    {
      g_set_error (error, SS_ERROR, SS_ERROR_OUT_OF_MEMORY, "not enough memory for the data");
      return FALSE;
    }
  /* Unobserved pixels are blank, not zero, so nobody takes them for data. */
  for (gsize i = 0; i < n; i++)
    shown[i] = job->op->mask != NULL && !job->op->mask[i] ? NAN : job->y[i];
  job->measured = ss_job_frame_from_scaled (job, shown, error);
  return job->measured != NULL;
}

SsJob *
ss_job_build (SsFrame *input, const SsHeader *header, const char *source_path,
              const SsSettings *settings, GCancellable *cancellable, GError **error)
{
  g_return_val_if_fail (input != NULL && settings != NULL, NULL);
  g_autoptr (SsJob) job = g_new0 (SsJob, 1);
  job->ref_count = 1;
  ss_settings_copy (settings, &job->settings);
  /* What a job finds in its data is its own, never a copy of an earlier
   * job's (ss_settings_take_resolved brings those into the settings). */
  job->settings.defects = (SsDefects) { .saturation = { .level = NAN }, .noise = NAN };
  job->header = header ? ss_header_copy (header) : NULL;
  job->source_path = g_strdup (source_path);

  /* Stop is honoured between the steps (each a pass or two over the frame,
   * at most about a second for 26 megapixels on two cores). */
  if (g_cancellable_set_error_if_cancelled (cancellable, error))
    return NULL;
  job->original = job_region (input, settings, error);
  if (job->original == NULL)
    return NULL;
  job->x0 = job->original->x0;
  job->y0 = job->original->y0;
  job->width = job->original->width;
  job->height = job->original->height;

  if (!ss_scaling_estimate (job->original->data, ss_job_n_pixels (job), settings->sky_mode,
                            settings->sky_value, &job->scaling, error)
      || g_cancellable_set_error_if_cancelled (cancellable, error))
    return NULL;
  /* A PSF file is read here, off the main thread, and once: the margin and
   * the blur (or the simulation's operator) render that one reading, and
   * its notes stay with the job (ss_job_get_notes). */
  if (!ss_psf_spec_load (&job->settings.acquisition.psf, error)
      || g_cancellable_set_error_if_cancelled (cancellable, error))
    return NULL;

  gboolean ok = settings->mode == SS_MODE_SIMULATE ? build_simulation (job, error)
                                                   : build_deblur (job, error);
  if (!ok || g_cancellable_set_error_if_cancelled (cancellable, error)
      || !resolve_auto_params (job, error)
      || g_cancellable_set_error_if_cancelled (cancellable, error)
      || !build_measured_frame (job, error))
    return NULL;
  return g_steal_pointer (&job);
}

char *
ss_job_get_notes (const SsJob *job)
{
  g_autoptr (GString) text = g_string_new (NULL);
  for (const char *const *note = ss_psf_spec_get_notes (&job->settings.acquisition.psf);
       *note != NULL; note++)
    g_string_append_printf (text, "%s%s", text->len ? "\n" : "", *note);
  const SsSaturation *s = &job->settings.defects.saturation;
  if (s->ignored != SS_SATURATION_FROM_NONE)
    g_string_append_printf (text, "%sSaturation: %s would clip more than half the image; "
                            "ignored", text->len ? "\n" : "",
                            ss_saturation_source_describe (s->ignored));
  if (s->clipped > 0)
    g_string_append_printf (text, "%s%" G_GSIZE_FORMAT " saturated pixels (at or above %.6g, "
                            "%s) left out of the fit and filled in", text->len ? "\n" : "",
                            s->clipped, s->level, ss_saturation_source_describe (s->source));
  if (job->settings.defects.cold > 0)
    g_string_append_printf (text, "%s%" G_GSIZE_FORMAT " cold pixels (far below the sky and their "
                            "neighbours: dead or flagged) left out of the fit and filled in",
                            text->len ? "\n" : "", job->settings.defects.cold);
  if (job->settings.defects.hot > 0)
    g_string_append_printf (text, "%s%" G_GSIZE_FORMAT " hot pixels (sharper than the blur allows: "
                            "hot pixels or cosmic rays) left out of the fit and filled in",
                            text->len ? "\n" : "", job->settings.defects.hot);
  return text->len ? g_string_free (g_steal_pointer (&text), FALSE) : NULL;
}

/* The region's part of a solve-size array, as a new frame (no mapping). */
static SsFrame *
crop_to_region (const SsJob *job, const float *x, GError **error)
{
  SsFrame *frame = ss_frame_new (job->width, job->height, error);
  if (frame == NULL)
    return NULL;
  if (!ss_boundary_crop (x, job->solve_width, job->solve_height, job->pad_x0, job->pad_y0,
                         job->width, job->height, frame->data, error))
    {
      ss_frame_unref (frame);
      return NULL;
    }
  ss_frame_set_region (frame, job->x0, job->y0, job->width, job->height);
  return frame;
}

SsFrame *
ss_job_frame_from_scaled (const SsJob *job, const float *x, GError **error)
{
  SsFrame *frame = crop_to_region (job, x, error);
  if (frame != NULL)
    ss_scaling_unapply (&job->scaling, frame->data, frame->data, ss_job_n_pixels (job));
  return frame;
}

SsFrame *
ss_job_error_frame (const SsJob *job, const float *x, GError **error)
{
  if (job->truth == NULL)
    return NULL;
  gsize n = ss_job_solve_pixels (job);
  g_autofree float *diff = g_try_new (float, n);
  if (diff == NULL)
    {
      g_set_error (error, SS_ERROR, SS_ERROR_OUT_OF_MEMORY, "not enough memory for the error");
      return NULL;
    }
  for (gsize i = 0; i < n; i++)
    diff[i] = (float) (fabs ((double) x[i] - job->truth[i]) * job->scaling.scale);
  return crop_to_region (job, diff, error);
}

SsFrame *
ss_job_preview_frame (const SsJob *job, const float *preview, int pw, int ph, GError **error)
{
  /* The preview's pixels that cover the region (to the nearest preview pixel). */
  int c0 = (int) lround ((double) job->pad_x0 * pw / job->solve_width);
  int c1 = (int) lround ((double) (job->pad_x0 + job->width) * pw / job->solve_width);
  int r0 = (int) lround ((double) job->pad_y0 * ph / job->solve_height);
  int r1 = (int) lround ((double) (job->pad_y0 + job->height) * ph / job->solve_height);
  c1 = CLAMP (c1, c0 + 1, pw);
  r1 = CLAMP (r1, r0 + 1, ph);
  SsFrame *frame = ss_frame_new (c1 - c0, r1 - r0, error);
  if (frame == NULL)
    return NULL;
  for (int r = r0; r < r1; r++)
    ss_scaling_unapply (&job->scaling, preview + (gsize) r * pw + c0,
                        frame->data + (gsize) (r - r0) * frame->width, (gsize) (c1 - c0));
  ss_frame_set_region (frame, job->x0, job->y0, job->width, job->height);
  return frame;
}
