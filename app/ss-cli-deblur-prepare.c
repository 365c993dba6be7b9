/* ss-cli-deblur-prepare.c: deblur's plane jobs (ss-cli-deblur.h): their life,
 * their preparation (from an acquisition record, or for a real image: sky,
 * scaling, the PSF given or fitted, padding and the operator), the problem
 * they pose and the cropping of their solution back to the image. */
#include "ss-cli-deblur-private.h"

#include <math.h>
#include <string.h>

void
cli_plane_job_init (CliPlaneJob *job, int plane, const CliConfig *c)
{
  memset (job, 0, sizeof *job);
  job->plane = plane;
  job->params = c->params;
  job->noise = job->alpha_noise = job->defects.noise = NAN;
  job->defects.saturation.level = NAN;
  job->stats = ss_data_stats_from_estimates (NAN, SS_SKY_NONE);
  job->mse = job->psnr = job->baseline = NAN;
}

/* Frees the per-pixel buffers; what summaries and HISTORY need stays. */
void
cli_deblur_plane_job_release_buffers (CliPlaneJob *job)
{
  if (job->op != NULL)
    job->observed = job->op->m;
  g_clear_pointer (&job->op, ss_operator_free);
  g_clear_pointer (&job->y, g_free);
  g_clear_pointer (&job->truth, g_free);
  g_clear_pointer (&job->truth_image, g_free);
  g_clear_pointer (&job->result.x, g_free);
}

void
cli_plane_job_clear (CliPlaneJob *job)
{
  cli_deblur_plane_job_release_buffers (job);
  ss_psf_spec_clear (&job->psf);
  g_clear_pointer (&job->psf_text, g_free);
  ss_solve_result_clear (&job->result);
}

static const float *
truth_plane (const CliDeblurInput *in, int plane)
{
  if (in->truth == NULL)
    return NULL;
  return ss_image_plane (in->truth, in->truth->planes == 1 ? 0 : MAX (plane, 0));
}

/* "IN" or "IN (plane 2)" for messages. */
char *
cli_deblur_plane_label (const char *path, int plane)
{
  return plane >= 0 ? g_strdup_printf ("%s (plane %d)", path, plane) : g_strdup (path);
}

/* ---- a recorded measurement --------------------------------------------- */

/* The operator and units come from IN's header. */
int
cli_deblur_prepare_recorded (const CliDeblurInput *in, const CliOptions *o, const CliConfig *c,
                             CliPlaneJob *job)
{
  g_autoptr (GError) error = NULL;
  const SsImage *image = in->image;
  const char *path = in->in_path;

  job->scaling.sky = 0.0;
  job->scaling.scale = 1.0;
  gboolean has_sky = ss_header_get_double (image->header, "SS_SKY", &job->scaling.sky);
  gboolean has_scale = ss_header_get_double (image->header, "SS_SCALE", &job->scaling.scale);
  if (!has_sky || !has_scale)
    cli_note (o, "%s: no SS_SKY/SS_SCALE cards; assuming sky %g and scale %g", path,
              job->scaling.sky, job->scaling.scale);
  if (!isfinite (job->scaling.sky) || !isfinite (job->scaling.scale)
      || job->scaling.scale <= 0)
    {
      cli_error (path, "SS_SKY/SS_SCALE must be finite and SS_SCALE > 0 (found %g and %g)",
                 job->scaling.sky, job->scaling.scale);
      return CLI_EXIT_FAILURE;
    }
  job->sky_mode = SS_SKY_VALUE;
  ss_psf_spec_copy (&in->acq.psf, &job->psf);

  int w = image->width, h = image->height;
  job->pw = job->w = w;
  job->ph = job->h = h;
  job->op = ss_operator_new (&in->acq, w, h, &error);
  /* The recording's operator, not the command line's: a failure is the
   * file's (exit 1), never a bad parameter. */
  if (job->op == NULL)
    return cli_fail (CLI_EXIT_FAILURE, path, error);

  gsize n = ss_image_plane_size (image), missing = 0;
  job->y = g_new (float, n);
  for (gsize i = 0; i < n; i++)
    {
      gboolean observed = job->op->mask == NULL || job->op->mask[i];
      gboolean finite = isfinite (image->data[i]);
      job->y[i] = observed && finite ? (float) (image->data[i] / job->scaling.scale) : 0.0f;
      missing += observed && !finite ? 1 : 0;
    }
  if (missing > 0)
    cli_note (o, "%s: %" G_GSIZE_FORMAT " pixels the acquisition observes are NaN; taken as 0",
              path, missing);
  job->blanks = missing;

  if (c->alpha_auto)
    {
      /* The measurement's noise is recorded: no need to estimate it. */
      job->noise = job->alpha_noise = in->acq.noise;
      ss_solver_apply_alpha_auto (&job->params, ss_alpha_auto (in->acq.noise, job->op));
    }
  const float *t = truth_plane (in, 0);
  if (t != NULL)
    {
      job->truth_image = cli_scaled_truth (t, n, &job->scaling);
      job->truth = g_memdup2 (job->truth_image, n * sizeof (float));
      job->baseline = cli_baseline_mse (&in->acq, job->y, job->truth_image, n);
    }
  return -1;
}

/* ---- a real image ---------------------------------------------------------- */

/* Reads a PSF file into PSF once (ss_psf_spec_load), printing its notes:
 * every render of PSF and of its copies (each plane's margin and blur) then
 * uses that reading, which says what it does quietly (negative wings
 * zeroed, an off-centre centroid) or refuses the file. Reading again would
 * repeat the work, and a file changed meanwhile would give planes, or a
 * note and the blur, that disagree. Nothing to do for a model PSF or a
 * file already read. */
int
cli_deblur_load_psf (const CliOptions *o, const char *label, SsPsfSpec *psf)
{
  if (psf->kind != SS_PSF_FILE || ss_psf_spec_is_loaded (psf))
    return -1;
  g_autoptr (GError) error = NULL;
  if (!ss_psf_spec_load (psf, &error))
    return cli_operator_failure (label, psf, error);
  for (const char *const *note = ss_psf_spec_get_notes (psf); *note != NULL; note++)
    cli_note (o, "%s", *note);
  return -1;
}

/* How many pixels within STAR_NOTE_RADIUS of (X, Y) are at or above LEVEL:
 * a clipped star's core, for the note. */
#define STAR_NOTE_RADIUS 12
static int
count_at_or_above_near (const SsImage *image, double x, double y, double level)
{
  int count = 0, cx = (int) lround (x), cy = (int) lround (y);
  int x0 = MAX (0, cx - STAR_NOTE_RADIUS), x1 = MIN (image->width - 1, cx + STAR_NOTE_RADIUS);
  int y0 = MAX (0, cy - STAR_NOTE_RADIUS), y1 = MIN (image->height - 1, cy + STAR_NOTE_RADIUS);
  for (int j = y0; j <= y1; j++)
    for (int i = x0; i <= x1; i++)
      count += image->data[(gsize) j * image->width + i] >= level ? 1 : 0;
  return count;
}

/* The level at and above which the PSF's fit leaves a star's pixels out (a
 * clipped core is no profile): the level --saturation resolved, when it
 * did; NAN under --saturation none, for the fit to look for a card or a
 * flat top itself (the data term keeps every pixel, but a core clipped all
 * the same is still no profile); INFINITY where auto looked and found none,
 * or ignored what it found, so that nothing looks again. */
static double
psf_saturation (const CliConfig *c, const CliPlaneJob *job)
{
  double level = job->defects.saturation.level;
  if (isfinite (level))
    return level;
  return c->saturation_mode == SS_SATURATION_NONE ? NAN : INFINITY;
}

/* The PSF of plane JOB->plane: the spec given, or a fit to stars. */
static int
measure_psf (CliDeblurInput *in, const CliOptions *o, const CliConfig *c, CliPlaneJob *job)
{
  g_autoptr (GError) error = NULL;
  int plane = MAX (job->plane, 0);
  g_autofree char *label = cli_deblur_plane_label (in->in_path, job->plane);

  if (c->psf_source == CLI_PSF_SPEC)
    {
      /* deblur loaded the config's file for every plane (deblur_planes);
       * another caller's is read here, for this plane. */
      ss_psf_spec_copy (&c->acquisition.psf, &job->psf);
      return cli_deblur_load_psf (o, label, &job->psf);
    }
  if (c->psf_source == CLI_PSF_STAR)
    {
      g_autoptr (SsImage) single = ss_image_extract_plane (in->image, plane, &error);
      /* The fit leaves a clipped core out and takes the star's shape from
       * its wings, as the data term does (psf_saturation). */
      double saturation = psf_saturation (c, job);
      if (isnan (saturation))
        saturation = single ? ss_psf_fit_saturation_for (single, NAN) : INFINITY;
      int clipped = single ? count_at_or_above_near (single, c->star_x, c->star_y, saturation)
                           : 0;
      if (clipped > 0 && !o->json)
        cli_note (o, "%s: --psf-from-star: %d saturated pixels of the star left out of its "
                  "fit", label, clipped);
      if (single == NULL || !ss_psf_fit_star (single, c->star_x, c->star_y, c->psf_model,
                                              saturation, &job->fit, &error))
        {
          /* A position off the image or on no star is a bad parameter. */
          int status = g_error_matches (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT)
                       ? CLI_EXIT_USAGE : CLI_EXIT_FAILURE;
          cli_error (label, "--psf-from-star %g,%g: %s", c->star_x, c->star_y,
                     error->message);
          return status;
        }
    }
  else
    {
      SsStarSearch search;
      ss_star_search_init (&search);
      search.model = c->psf_model;
      search.plane = plane;
      /* The stars fitted are those the data term keeps (psf_saturation;
       * NAN: the search looks itself). */
      search.saturation = psf_saturation (c, job);
      /* The noise the search's threshold needs, measured once for it and
       * the defects' rules and --alpha auto after it (ss_defects_blank). */
      const SsImage *image = in->image;
      job->defects.noise = ss_noise_estimate (ss_image_plane ((SsImage *) image, plane),
                                              image->width, image->height);
      search.noise = job->defects.noise;
      if (!ss_psf_find_stars (in->image, &search, &job->fit, NULL, NULL, &error))
        {
          cli_error (label, "--psf auto: %s", error->message);
          return CLI_EXIT_FAILURE;
        }
    }
  job->fitted = TRUE;
  ss_psf_fit_to_spec (&job->fit, &job->psf);
  g_autofree char *text = ss_psf_fit_describe (&job->fit);
  if (!o->json)
    cli_note (o, "%s: PSF %s", label, text);
  return -1;
}

/* The plane's PSF rendered at WIDTH x HEIGHT: the fit, or the spec (a
 * file as loaded). */
static SsImage *
render_plane_psf (const CliPlaneJob *job, int width, int height, GError **error)
{
  if (job->fitted)
    return ss_psf_fit_render (&job->fit, width, height, error);
  return ss_psf_render (&job->psf, width, height, error);
}

/* Pads the scaled data (and truth) to an FFT-friendly size per --boundary. */
static int
pad_plane (const CliDeblurInput *in, const CliConfig *c, CliPlaneJob *job, const float *scaled,
           int *margin)
{
  g_autoptr (GError) error = NULL;
  int w = in->image->width, h = in->image->height;
  g_autofree char *label = cli_deblur_plane_label (in->in_path, job->plane);

  /* A fit's margin is its circular approximation's (JOB->psf), a model
   * with a reach; a file's is measured on the reading loaded. */
  *margin = ss_boundary_margin_for_psf (&job->psf, w, h, &error);
  if (*margin < 0 || error != NULL)
    return cli_operator_failure (label, &job->psf, error);
  if (!ss_boundary_pad (scaled, w, h, c->boundary, *margin, &job->y, &job->pw, &job->ph,
                        &job->x0, &job->y0, &error))
    return cli_fail (CLI_EXIT_FAILURE, label, error);
  job->w = w;
  job->h = h;
  if (c->exclude_border)
    ss_boundary_exclude_border (job->y, job->pw, job->ph, job->x0, job->y0, w, h);

  if (job->truth_image != NULL)
    {
      int pw, ph, x0, y0;
      if (!ss_boundary_pad (job->truth_image, w, h, c->boundary, *margin, &job->truth, &pw,
                            &ph, &x0, &y0, &error))
        return cli_fail (CLI_EXIT_FAILURE, label, error);
      /* An excluded border is NaN in the data, never in the truth. */
      cli_replace_nan_with_zero (job->truth, (gsize) pw * ph);
    }
  return -1;
}

/* The blur at the padded size, its spectrum made where the solve runs
 * (ss_backend_kind_new_operator). */
static SsOperator *
plane_operator (const CliConfig *c, const CliPlaneJob *job, GError **error)
{
  g_autoptr (SsImage) kernel = render_plane_psf (job, job->pw, job->ph, error);
  if (kernel == NULL)
    return NULL;
  return ss_backend_kind_new_operator (c->backend, g_steal_pointer (&kernel->data), job->y,
                                       job->pw, job->ph, error);
}

/* The defect rules (ss-bad-pixels.h) of C for JOB's solver. */
static SsDefectRules
defect_rules (const CliConfig *c, const CliPlaneJob *job)
{
  return (SsDefectRules) {
    .saturation_mode = c->saturation_mode,
    .saturation_value = c->saturation_value,
    .bad_pixels = c->bad_pixels,
    .nonneg = c->nonneg_given ? c->real_params.nonneg : TRUE,
    .leaves_out = (ss_solver_info (job->params.kind)->caps & SS_SOLVER_MASKS) != 0,
  };
}

/* The saturation level of DATA, before the PSF: --psf auto fits only the
 * stars under it. */
static void
find_saturation (const SsImage *image, const float *data, const CliConfig *c,
                 const CliOptions *o, const char *label, CliPlaneJob *job)
{
  SsDefectRules rules = defect_rules (c, job);
  ss_defects_find_saturation (&rules, image->header, data, image->width, image->height,
                              &job->defects);
  SsSaturationSource ignored = job->defects.saturation.ignored;
  if (ignored != SS_SATURATION_FROM_NONE)
    cli_note (o, "%s: saturation: %s would clip more than half the image: ignored "
              "(--saturation LEVEL insists)", label, ss_saturation_source_describe (ignored));
}

/* Leaves DATA's defects out of SCALED, the data term's (ss_defects_blank),
 * after the blank count and the input's own score: both are the data as
 * read. Returns -1, or the exit status when a level given leaves nothing
 * to fit. */
static int
blank_defects (const SsImage *image, const float *data, const CliConfig *c,
               const CliOptions *o, const char *label, CliPlaneJob *job, float *scaled)
{
  SsDefectRules rules = defect_rules (c, job);
  SsDefects *d = &job->defects;
  ss_defects_blank (&rules, data, image->width, image->height, job->scaling.sky, &job->psf,
                    job->fitted ? &job->fit : NULL, scaled, d);
  if (d->kept_clipped > 0)
    cli_note (o, "%s: %" G_GSIZE_FORMAT " saturated pixels (at or above %g) stay in the fit: "
              "%s cannot leave pixels out", label, d->kept_clipped, d->saturation.level,
              ss_solver_info (job->params.kind)->name);
  if (d->saturation.clipped < ss_image_plane_size (image) - job->blanks)
    return -1;
  cli_error (label, "--saturation %g clips every pixel (the data reach %g at most)",
             d->saturation.level, job->scaling.sky + job->scaling.scale);
  return CLI_EXIT_USAGE;
}

int
cli_deblur_prepare_real (CliDeblurInput *in, const CliOptions *o, const CliConfig *c,
                         CliPlaneJob *job)
{
  g_autoptr (GError) error = NULL;
  const SsImage *image = in->image;
  int w = image->width, h = image->height;
  /* A real image runs deblur's default for real data unless --solver says. */
  job->params = c->real_params;
  gsize n = ss_image_plane_size (image);
  const float *data = ss_image_plane ((SsImage *) image, MAX (job->plane, 0));
  g_autofree char *label = cli_deblur_plane_label (in->in_path, job->plane);

  if (!ss_scaling_estimate (data, n, c->sky_mode, c->sky_value, &job->scaling, &error))
    return cli_fail (CLI_EXIT_FAILURE, label, error);
  job->sky_mode = c->sky_mode;

  /* The sky subtracted, for solvers that model the counts as measured (RL). */
  job->background = ss_scaling_background (&job->scaling);
  g_autofree float *scaled = g_new (float, n);
  ss_scaling_apply (&job->scaling, data, scaled, n, FALSE);
  gsize blanks = 0;
#pragma omp parallel for reduction(+ : blanks) schedule(static) if (n > SS_PARALLEL_PIXELS)
  for (gsize i = 0; i < n; i++)
    blanks += isnan (scaled[i]) ? 1 : 0;
  job->blanks = blanks;
  /* Past half the frame, most of the result is filled in rather than
   * recovered: a warning, not a note, though the solve is still valid. */
  double share = n > 0 ? (double) job->blanks / (double) n : 0.0;
  if (job->blanks > 0)
    cli_note (o, "%s%s: %" G_GSIZE_FORMAT " blank (NaN) pixels (%.3g%%) left out of the data "
              "term and filled in the result%s", share > 0.5 ? "warning: " : "", label,
              job->blanks, 100.0 * share,
              share > 0.5 ? ": most of the image is filled in, not recovered" : "");

  const float *t = truth_plane (in, job->plane);
  if (t != NULL)
    {
      job->truth_image = cli_scaled_truth (t, n, &job->scaling);
      g_autofree float *observed = g_memdup2 (scaled, n * sizeof (float));
      cli_replace_nan_with_zero (observed, n);
      job->baseline = ss_mse (observed, job->truth_image, n);
    }
  int status, margin = 0;
  find_saturation (image, data, c, o, label, job);
  if ((status = measure_psf (in, o, c, job)) >= 0
      || (status = blank_defects (image, data, c, o, label, job, scaled)) >= 0
      || (status = pad_plane (in, c, job, scaled, &margin)) >= 0)
    return status;

  job->op = plane_operator (c, job, &error);
  if (job->op == NULL)
    return cli_operator_failure (label, &job->psf, error);
  cli_replace_nan_with_zero (job->y, (gsize) job->pw * job->ph);

  /* Real data are light: x >= 0 unless --allow-negative (issue 5). */
  job->params.nonneg = c->nonneg_given ? c->real_params.nonneg : TRUE;
  if (c->alpha_auto
      && !ss_alpha_auto_from_data (data, w, h, job->defects.noise, job->scaling.scale, job->op,
                                   &job->params.alpha, &job->noise, &job->alpha_noise, &error))
    {
      cli_error (label, "--alpha auto: %s", error->message);
      return CLI_EXIT_FAILURE;
    }
  if (c->alpha_auto)
    ss_solver_apply_alpha_auto (&job->params, job->params.alpha);
  job->stats = ss_data_stats_from_estimates (job->noise, c->sky_mode);
  return -1;
}

/* ---- the problem and the result cropped back --------------------------------- */

gboolean
cli_deblur_crop_plane (const CliDeblurInput *in, CliPlaneJob *job, const float *solved,
                       float *out, GError **error)
{
  int w = in->image->width, h = in->image->height;
  gsize n = (gsize) w * h;
  g_autofree float *x = g_new (float, n);
  if (!ss_boundary_crop (solved, job->pw, job->ph, job->x0, job->y0, w, h, x, error))
    return FALSE;
  if (job->truth_image != NULL)
    {
      job->mse = ss_mse (x, job->truth_image, n);
      job->psnr = ss_psnr_from_mse (job->mse);
    }
  ss_scaling_unapply (&job->scaling, x, out, n);
  return TRUE;
}

SsProblem
cli_plane_job_problem (const CliPlaneJob *job)
{
  return (SsProblem) { .op = job->op, .y = job->y, .truth = job->truth,
                       .background = job->background, .stats = &job->stats,
                       .image = { job->x0, job->y0, job->w, job->h } };
}
