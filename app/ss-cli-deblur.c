/* ss-cli-deblur.c: `deblur IN -o OUT`.
 *
 * Two kinds of input:
 * - a measurement written by `simulate`: its header records the acquisition
 *   (SS_PSF ...), so the operator and the scaling (SS_SKY, SS_SCALE) are
 *   rebuilt from it; a --psf that contradicts the record is refused rather
 *   than silently ignored (solving with another blur than the one measured
 *   is never what is meant);
 * - a real image: the blur comes from --psf SPEC, --psf auto (fits to the
 *   brightest isolated stars) or --psf-from-star X,Y; the sky is subtracted
 *   and the data divided by their maximum; blank (NaN) pixels are left out of
 *   the data term and filled in the result; the image is padded to an
 *   FFT-friendly size by mirroring (or tapering) so that its edges are not
 *   taken as periodic, solved, and cropped back; x >= 0 by default; every
 *   plane of a colour image or cube is processed in turn (--plane picks one).
 * The result is x * scale + sky, written with IN's header (acquisition cards
 * removed: it is no longer a measurement) and HISTORY cards of every
 * parameter.
 *
 * This file holds the command: its checks, reading the input, solving the
 * planes, the summaries, HISTORY and the output; ss-cli-deblur-prepare.c
 * holds the plane jobs and their preparation.
 */
#include "ss-cli-deblur-private.h"

#include <math.h>

/* ---- what a recorded measurement refuses or ignores ------------------------ */

/* Whether A and B name the same PSF file, however each is written (the
 * record's absolute path, a relative one given). */
static gboolean
same_psf_file (const SsPsfSpec *a, const SsPsfSpec *b)
{
  if (a->kind != SS_PSF_FILE || b->kind != SS_PSF_FILE || a->path == NULL || b->path == NULL)
    return FALSE;
  g_autofree char *canonical_a = g_canonicalize_filename (a->path, NULL);
  g_autofree char *canonical_b = g_canonicalize_filename (b->path, NULL);
  return g_str_equal (canonical_a, canonical_b);
}

static int
check_recorded_options (const CliDeblurInput *in, const CliOptions *o, const CliConfig *c)
{
  if (c->psf_source != CLI_PSF_SPEC)
    {
      cli_error (in->in_path, "records its acquisition; the PSF cannot be measured from "
                 "stars in a simulated measurement (omit --psf auto / --psf-from-star)");
      return CLI_EXIT_USAGE;
    }
  if (c->psf_given)
    {
      g_autofree char *given = ss_psf_spec_to_string (&c->acquisition.psf);
      g_autofree char *recorded = ss_psf_spec_to_string (&in->acq.psf);
      if (!g_str_equal (given, recorded) && !same_psf_file (&c->acquisition.psf, &in->acq.psf))
        {
          cli_error (in->in_path, "--psf %s differs from the recorded acquisition "
                     "(SS_PSF = %s); omit --psf to use the record", given, recorded);
          return CLI_EXIT_USAGE;
        }
    }
  if (c->sky_given)
    cli_note (o, "%s: scaling taken from SS_SKY/SS_SCALE; --sky ignored", in->in_path);
  if (c->boundary_given || c->exclude_border)
    cli_note (o, "%s: a simulated measurement is periodic by construction; --boundary and "
              "--exclude-border ignored", in->in_path);
  return -1;
}

/* ---- solving the planes ------------------------------------------------------ */

/* With --alpha auto, the alpha found must be valid; says what was chosen. */
static int
check_auto_alpha (const CliDeblurInput *in, const CliOptions *o, const CliConfig *c,
                  const CliPlaneJob *job)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *label = cli_deblur_plane_label (in->in_path, job->plane);
  if (c->alpha_auto && !ss_solve_params_validate (&job->params, &error))
    {
      cli_error (label, "--alpha auto: %s", error->message);
      return CLI_EXIT_FAILURE;
    }
  if (!c->alpha_auto || o->json)
    return -1;
  /* RL (the default) and the greedy solvers take no α: printing the rule's
   * value would suggest it shaped their result. */
  const SsSolverInfo *info = ss_solver_info (job->params.kind);
  if (!ss_solver_uses (info, SS_PARAM_ALPHA))
    cli_note (o, "%s: noise %g (scaled units); %s takes no alpha", label, job->noise,
              info->name);
  else if (job->alpha_noise > job->noise)
    cli_note (o, "%s: alpha %g from noise %g (scaled units): the typical pixel's is %g, but "
              "the light's photon noise dominates", label, job->params.alpha, job->alpha_noise,
              job->noise);
  else
    cli_note (o, "%s: alpha %g from noise %g (scaled units)", label, job->params.alpha,
              job->noise);
  return -1;
}

/* Crops the solved plane, measures it against the truth, and writes it in
 * the input's units into OUT. */
static int
finish_plane (const CliDeblurInput *in, CliPlaneJob *job, float *out)
{
  g_autoptr (GError) error = NULL;
  if (cli_deblur_crop_plane (in, job, job->result.x, out, &error))
    return -1;
  g_autofree char *label = cli_deblur_plane_label (in->in_path, job->plane);
  return cli_fail (CLI_EXIT_FAILURE, label, error);
}


static int
solve_plane (const CliDeblurInput *in, const CliOptions *o, const CliConfig *c, CliPlaneJob *job,
             float *out)
{
  int status = check_auto_alpha (in, o, c, job);
  if (status < 0)
    {
      SsProblem problem = cli_plane_job_problem (job);
      status = cli_solve (c, &job->params, o, in->in_path, job->plane, &problem, &job->result);
    }
  if (status < 0)
    status = finish_plane (in, job, out);
  return status;
}

/* COUNT prepared planes of one padded size solved as one batch
 * (ss_backend_solve_batch: one batched iteration on a GPU). */
static int
solve_planes_together (const CliDeblurInput *in, const CliOptions *o, const CliConfig *c,
                       CliPlaneJob *jobs, int count, SsImage *out)
{
  int status = -1;
  for (int i = 0; i < count && status < 0; i++)
    status = check_auto_alpha (in, o, c, &jobs[i]);
  if (status >= 0)
    return status;
  g_autofree SsProblem *problems = g_new0 (SsProblem, count);
  g_autofree double *alphas = g_new0 (double, count);
  g_autofree int *planes = g_new0 (int, count);
  g_autofree SsSolveResult *results = g_new0 (SsSolveResult, count);
  for (int i = 0; i < count; i++)
    {
      problems[i] = cli_plane_job_problem (&jobs[i]);
      alphas[i] = jobs[i].params.alpha;
      planes[i] = jobs[i].plane;
    }
  status = cli_solve_batch (c, &jobs[0].params, o, in->in_path, planes, problems, alphas, count,
                            results);
  for (int i = 0; i < count; i++)
    jobs[i].result = results[i];   /* the jobs own the results from here */
  for (int i = 0; i < count && status < 0; i++)
    status = finish_plane (in, &jobs[i], ss_image_plane (out, jobs[i].plane));
  return status;
}

static void
fill_summary (CliSummary *s, const CliDeblurInput *in, const CliOptions *o, const CliConfig *c,
              const CliPlaneJob *job)
{
  cli_summary_init (s, "deblur");
  s->input = in->in_path;
  s->output = o->output;
  s->planes = in->image->planes;
  s->plane = job->plane;
  s->width = in->image->width;
  s->height = in->image->height;
  s->padded_width = job->pw;
  s->padded_height = job->ph;
  s->boundary = in->recorded ? NULL : ss_boundary_to_string (c->boundary);
  s->observed = job->observed;
  s->acq = in->recorded ? &in->acq : NULL;
  s->psf = job->psf_text;
  s->psf_fit = job->fitted ? &job->fit : NULL;
  s->sky_mode = job->sky_mode;
  s->scaling = job->scaling;
  s->blank_pixels = job->blanks;
  s->saturation = job->defects.saturation;
  s->cold_pixels = job->defects.cold;
  s->hot_pixels = job->defects.hot;
  s->baseline_mse = job->baseline;
  s->alpha = job->params.alpha;
  s->params = &job->params;
  s->alpha_auto = c->alpha_auto;
  s->noise = job->noise;
  s->alpha_noise = job->alpha_noise;
  s->mse = job->mse;
  s->psnr = job->psnr;
}

/* Totals over the planes for the final summary (strings copied). */
static void
accumulate_result (SsSolveResult *total, const SsSolveResult *r, int count)
{
  if (total->backend == NULL)
    {
      total->backend = g_strdup (r->backend);
      total->device = g_strdup (r->device);
    }
  /* Every plane's warning, once each. */
  ss_solve_result_add_warning (total, r->warning);
  total->width = r->width;
  total->height = r->height;
  total->iterations += r->iterations;
  total->seconds += r->seconds;
  total->residual += (r->residual - total->residual) / count;   /* running mean */
  total->objective += r->objective;
  total->rel_change = MAX (total->rel_change, r->rel_change);
  total->peak_memory_bytes = MAX (total->peak_memory_bytes, r->peak_memory_bytes);
  for (int k = 0; k < 4; k++)
    total->phase_seconds[k] += r->phase_seconds[k];
}

static void
add_plane_history (CliHistory *history, const CliDeblurInput *in, const CliConfig *c,
                   const CliPlaneJob *job)
{
  const char *prefix = job->plane >= 0 ? "plane " : "";
  g_autofree char *plane = job->plane >= 0 ? g_strdup_printf ("%d ", job->plane) : g_strdup ("");
  cli_history_add (history, "%s%spsf=%s", prefix, plane, job->psf_text);
  if (job->fitted)
    {
      g_autofree char *fit = ss_psf_fit_describe (&job->fit);
      cli_history_add (history, "%s%spsf_fit=%s", prefix, plane, fit);
    }
  cli_history_add (history, "%s%ssky=%s sky_level=%.9g scale=%.9g", prefix, plane,
                   cli_sky_mode_to_string (job->sky_mode), job->scaling.sky,
                   job->scaling.scale);
  /* Each plane's own α (auto gives each its own); a solver without one,
   * such as RL, gets no line that would say α shaped its result. */
  if (ss_solver_uses (ss_solver_info (job->params.kind), SS_PARAM_ALPHA))
    cli_history_add (history, "%s%salpha=%.9g%s", prefix, plane, job->params.alpha,
                     c->alpha_auto ? " (auto)" : "");
  if (!in->recorded)
    cli_history_add (history, "%s%sboundary=%s%s padded=%dx%d", prefix, plane,
                     ss_boundary_to_string (c->boundary),
                     c->exclude_border ? " (border excluded)" : "", job->pw, job->ph);
  if (job->defects.saturation.clipped > 0)
    cli_history_add (history, "%s%ssaturation=%.9g (%s) clipped=%" G_GSIZE_FORMAT
                     " (left out of the data term)", prefix, plane, job->defects.saturation.level,
                     ss_saturation_source_describe (job->defects.saturation.source),
                     job->defects.saturation.clipped);
  if (job->defects.cold > 0)
    cli_history_add (history, "%s%scold_pixels=%" G_GSIZE_FORMAT " (far below their "
                     "neighbours; left out of the data term)", prefix, plane, job->defects.cold);
  if (job->defects.hot > 0)
    cli_history_add (history, "%s%shot_pixels=%" G_GSIZE_FORMAT " (sharper than the blur; "
                     "left out of the data term)", prefix, plane, job->defects.hot);
  if (job->plane >= 0)
    {
      g_autofree char *plane_prefix = g_strconcat (prefix, plane, NULL);
      cli_history_add_result (history, plane_prefix, &job->result);
    }
}

/* With --plane P the input is the file's plane P: a truth of several
 * planes (the same cube's truth) gives its plane P to match. */
static int
pick_truth_plane (CliDeblurInput *in, const CliConfig *c)
{
  if (!c->plane_given || in->truth->planes <= 1 || in->image->planes != 1)
    return -1;
  if (c->plane >= in->truth->planes)
    {
      cli_error (in->truth_path, "has %d planes; --plane %d picks none of them",
                 in->truth->planes, c->plane);
      return CLI_EXIT_FAILURE;
    }
  g_autoptr (GError) error = NULL;
  SsImage *plane = ss_image_extract_plane (in->truth, c->plane, &error);
  if (plane == NULL)
    return cli_fail (CLI_EXIT_FAILURE, in->truth_path, error);
  ss_image_free (in->truth);
  in->truth = plane;
  return -1;
}

/* Loads the truth and checks it matches IN. */
static int
load_truth (CliDeblurInput *in, const CliOptions *o, const CliConfig *c)
{
  if (in->truth_path == NULL)
    return -1;
  CliConfig plain = { 0 };
  plain.read = SS_FITS_READ_OPTIONS_DEFAULT;
  int status = cli_load_image (in->truth_path, &plain, o, TRUE, &in->truth);
  if (status >= 0 || (status = pick_truth_plane (in, c)) >= 0)
    return status;
  if (in->truth->width != in->image->width || in->truth->height != in->image->height)
    {
      cli_error (in->truth_path, "size %d x %d differs from the input's %d x %d",
                 in->truth->width, in->truth->height, in->image->width, in->image->height);
      return CLI_EXIT_FAILURE;
    }
  if (in->truth->planes != 1 && in->truth->planes != in->image->planes)
    {
      if (in->image->planes == 1)
        cli_error (in->truth_path, "has %d planes; the input has 1 (give a truth of 1 plane)",
                   in->truth->planes);
      else
        cli_error (in->truth_path, "has %d planes; the input has %d (give a truth of 1 or %d)",
                   in->truth->planes, in->image->planes, in->image->planes);
      return CLI_EXIT_FAILURE;
    }
  return -1;
}

/* Reads IN and decides between a recorded measurement and a real image. */
static int
load_input (CliDeblurInput *in, const CliOptions *o, const CliConfig *c)
{
  g_autoptr (GError) error = NULL;
  int status = cli_load_image (in->in_path, c, o, TRUE, &in->image);
  if (status >= 0)
    return status;

  gboolean found = FALSE;
  if (in->image->header != NULL
      && !ss_acquisition_from_header (in->image->header, &in->acq, &found, &error))
    return cli_fail (CLI_EXIT_FAILURE, in->in_path, error);
  ss_acquisition_resolve_psf (&in->acq, in->in_path);
  in->recorded = found;

  if (found)
    {
      if ((status = check_recorded_options (in, o, c)) >= 0)
        return status;
      if (in->image->planes > 1)
        {
          cli_note (o, "%s: a measurement has one plane; using plane 0", in->in_path);
          SsImage *first = ss_image_extract_plane (in->image, 0, &error);
          if (first == NULL)
            return cli_fail (CLI_EXIT_FAILURE, in->in_path, error);
          ss_image_free (in->image);
          in->image = first;
        }
    }
  else if (!c->psf_given)
    {
      cli_error (in->in_path, "holds no acquisition record (SS_PSF ...): give the blur with "
                 "--psf SPEC, --psf auto or --psf-from-star X,Y");
      return CLI_EXIT_USAGE;
    }
  return load_truth (in, o, c);
}

/* The final summary of a colour image or cube: totals over the planes. MSE
 * and alpha are plane means (the planes have equal sizes), counts are sums. */
static void
print_total_summary (const CliDeblurInput *in, const CliOptions *o, const CliConfig *c,
                     const CliPlaneJob *jobs, int planes)
{
  SsSolveResult total = { 0 };
  CliSummary s;
  fill_summary (&s, in, o, c, &jobs[planes - 1]);
  s.plane = -1;
  s.psf_fit = NULL;
  s.psf = c->psf_source == CLI_PSF_SPEC ? jobs[0].psf_text : "measured per plane";
  s.mse = s.alpha = s.noise = s.alpha_noise = 0;
  s.blank_pixels = s.observed = 0;
  s.saturation.clipped = 0;
  s.cold_pixels = s.hot_pixels = 0;
  /* Each plane has its own sky and scale (its summary gives them); the
   * last plane's would pass for all of them. */
  s.scaling.sky = s.scaling.scale = NAN;
  s.baseline_mse = 0;
  for (int p = 0; p < planes; p++)
    {
      accumulate_result (&total, &jobs[p].result, p + 1);
      s.baseline_mse += jobs[p].baseline / planes;   /* NAN without a truth */
      s.mse += jobs[p].mse / planes;
      s.alpha += jobs[p].params.alpha / planes;
      s.noise += jobs[p].noise / planes;
      s.alpha_noise += jobs[p].alpha_noise / planes;   /* as noise: one mean, not one plane's */
      s.blank_pixels += jobs[p].blanks;
      s.cold_pixels += jobs[p].defects.cold;
      s.hot_pixels += jobs[p].defects.hot;
      /* One level for the planes that were clipped, or "per plane" (NAN),
       * as their skies and scales are. */
      const SsSaturation *plane_saturation = &jobs[p].defects.saturation;
      gsize clipped = s.saturation.clipped + plane_saturation->clipped;
      if (s.saturation.clipped == 0)
        s.saturation = *plane_saturation;
      else if (plane_saturation->clipped > 0
               && (plane_saturation->level != s.saturation.level
                   || plane_saturation->source != s.saturation.source))
        s.saturation.level = NAN;
      s.saturation.clipped = clipped;
      s.observed += jobs[p].observed;
    }
  s.psnr = ss_psnr_from_mse (s.mse);
  s.phases = &in->phases;
  cli_print_summary (&s, o, c, &total);
  ss_solve_result_clear (&total);
}

/* How many planes to solve as one batch: 1 (one after another) unless the
 * backend may be a GPU and either the solver batches (CPADMM: a cube's
 * planes share one padded size and usually one PSF) or several devices
 * are asked for (the planes are then spread over them, whatever the
 * solver). The planes of a batch are prepared at once: about 24 bytes a
 * padded pixel on the host, kept under 4 GiB. */
static int
planes_per_batch (const CliDeblurInput *in, const CliConfig *c)
{
  int planes = in->image->planes;
  const SsSolveParams *params = in->recorded ? &c->params : &c->real_params;
  gboolean batches = (ss_solver_info (params->kind)->caps & SS_SOLVER_BATCHES)
                     || c->n_devices > 1;
  if (planes < 2 || !batches || c->backend == SS_BACKEND_CPU)
    return 1;
  double plane_bytes = 24.0 * 1.5 * (double) in->image->width * (double) in->image->height;
  double fit = 4.0 * 1073741824.0 / plane_bytes;
  return (int) CLAMP (fit, 1.0, (double) planes);
}

/* Prepares, solves (together when COUNT > 1 and the padded sizes agree)
 * and releases planes FIRST .. FIRST + COUNT - 1; each plane's summary
 * follows when the image has several. */
static int
deblur_plane_group (CliDeblurInput *in, const CliOptions *o, const CliConfig *c,
                    CliPlaneJob *jobs, int first, int count, SsImage *out)
{
  int planes = in->image->planes, status = -1, prepared = 0;
  for (; prepared < count && status < 0; prepared++)
    {
      CliPlaneJob *job = &jobs[first + prepared];
      cli_plane_job_init (job, planes > 1 ? first + prepared : -1, c);
      status = in->recorded ? cli_deblur_prepare_recorded (in, o, c, job)
                            : cli_deblur_prepare_real (in, o, c, job);
    }
  cli_phases_lap (&in->phases, &in->phases.prepare);
  gboolean one_size = TRUE;
  for (int i = 1; i < count; i++)
    one_size &= jobs[first + i].pw == jobs[first].pw && jobs[first + i].ph == jobs[first].ph;
  if (status < 0 && count > 1 && one_size)
    status = solve_planes_together (in, o, c, jobs + first, count, out);
  for (int i = 0; i < count && status < 0 && !(count > 1 && one_size); i++)
    status = solve_plane (in, o, c, &jobs[first + i], ss_image_plane (out, first + i));
  /* Cropping and units back count with the solve. */
  cli_phases_lap (&in->phases, &in->phases.solve);
  for (int i = 0; i < prepared; i++)
    {
      CliPlaneJob *job = &jobs[first + i];
      job->psf_text = ss_psf_spec_to_string (&job->psf);
      cli_deblur_plane_job_release_buffers (job);
      if (status < 0 && planes > 1)
        {
          CliSummary s;
          fill_summary (&s, in, o, c, job);
          s.type = "plane";
          s.output = NULL;
          cli_print_summary (&s, o, c, &job->result);
        }
    }
  return status;
}

/* The engine refuses a solve that diverged (ss_solve_result_check_finite);
 * a finite estimate can still overflow when scaled back to the data's
 * units, and a file of infinities is written by no one. */
static int
refuse_non_finite (const CliDeblurInput *in, const SsImage *out)
{
  gsize n = ss_image_plane_size (out) * out->planes;
  gsize bad = ss_count_non_finite (out->data, n);
  if (bad == 0)
    return -1;
  cli_error (in->in_path, "the result is not finite in the data's units: %" G_GSIZE_FORMAT
             " of its %" G_GSIZE_FORMAT " pixels; nothing written (another solver or a larger "
             "--alpha may converge)", bad, n);
  return CLI_EXIT_FAILURE;
}

static int
write_output (const CliDeblurInput *in, const CliOptions *o, const CliConfig *c,
              const CliPlaneJob *jobs, int planes, SsImage *out, const char *const *inputs)
{
  int status = refuse_non_finite (in, out);
  if (status >= 0)
    return status;
  /* A solve with no report point to stop at (direct-fft, dense direct)
   * ran to its end: a stop asked for meanwhile still writes nothing. */
  if (cli_was_interrupted ())
    {
      cli_error (in->in_path, "interrupted; nothing written");
      return CLI_EXIT_FAILURE;
    }
  CliHistory history;
  cli_history_init (&history, "deblur");
  cli_history_add (&history, "input=%s", in->in_path);
  /* Which image of the file: outputs of different HDUs or planes must be
   * told apart by their headers. */
  cli_history_add (&history, "hdu=%s plane=%s", o->hdu ? o->hdu : "first-image",
                   o->plane ? o->plane : "all");
  if (in->recorded)
    cli_history_add_acquisition (&history, &in->acq);
  for (int p = 0; p < planes; p++)
    add_plane_history (&history, in, c, &jobs[p]);
  /* A cube's planes each ran their own rules (`auto` may choose RL for one
   * and ALM for another): each plane's result is in its own lines. */
  if (planes > 1)
    cli_history_add_solver_settings (&history, &jobs[planes - 1].params,
                                     &jobs[planes - 1].result);
  else
    cli_history_add_solver (&history, &jobs[0].params, &jobs[0].result);

  out->header = in->image->header ? ss_header_copy (in->image->header) : ss_header_new ();
  cli_header_remove_acquisition (out->header);
  ss_saturation_drop_cards (out->header);
  cli_history_apply (&history, out->header);
  cli_history_clear (&history);
  return cli_write_image (o->output, o, c, out, inputs);
}

static int
deblur_planes_with (CliDeblurInput *in, const CliOptions *o, const CliConfig *c,
                    const char *const *inputs)
{
  g_autoptr (GError) error = NULL;
  int planes = in->image->planes;
  g_autoptr (SsImage) out = ss_image_new (in->image->width, in->image->height, planes, &error);
  if (out == NULL)
    return cli_fail (CLI_EXIT_FAILURE, o->output, error);

  cli_note_unused_options (o, in->recorded ? &c->params : &c->real_params);
  CliPlaneJob *jobs = g_new0 (CliPlaneJob, planes);
  int status = -1, group = planes_per_batch (in, c);
  for (int first = 0; first < planes && status < 0; first += group)
    status = deblur_plane_group (in, o, c, jobs, first, MIN (group, planes - first), out);

  if (status < 0)
    status = write_output (in, o, c, jobs, planes, out, inputs);
  /* A stop asked for during the write: the file was finished first. */
  if (status < 0 && cli_was_interrupted ())
    cli_note (o, "%s: interrupted while it was written; it is complete", o->output);
  cli_phases_lap (&in->phases, &in->phases.write);
  cli_phases_finish (&in->phases);
  if (status < 0)
    {
      if (planes == 1)
        {
          CliSummary s;
          fill_summary (&s, in, o, c, &jobs[0]);
          s.phases = &in->phases;
          cli_print_summary (&s, o, c, &jobs[0].result);
        }
      else
        print_total_summary (in, o, c, jobs, planes);
      status = CLI_EXIT_OK;
    }
  for (int p = 0; p < planes; p++)
    cli_plane_job_clear (&jobs[p]);
  g_free (jobs);
  return status;
}

/* Deblurs IN's planes with C, a --psf file:PATH read once for them all
 * (its notes printed then): the planes' specs are copies of one loaded
 * spec, so every margin and blur renders that one reading. The reading
 * lives in a copy of C's spec owned here: C may be a worker's shallow copy
 * (--output-dir), which nobody clears. A recorded measurement uses its
 * record's PSF, not --psf. */
static int
deblur_planes (CliDeblurInput *in, const CliOptions *o, const CliConfig *c,
               const char *const *inputs)
{
  CliConfig run = *c;
  ss_psf_spec_copy (&c->acquisition.psf, &run.acquisition.psf);
  int status = -1;
  if (!in->recorded && run.psf_source == CLI_PSF_SPEC)
    status = cli_deblur_load_psf (o, in->in_path, &run.acquisition.psf);
  if (status < 0)
    status = deblur_planes_with (in, o, &run, inputs);
  ss_psf_spec_clear (&run.acquisition.psf);
  return status;
}

/* A PNG output shows 1 plane (grey) or 3 (RGB): refused for another count
 * once the input's planes are known, before any solving. */
static int
check_png_planes (const CliDeblurInput *in, const CliOptions *o)
{
  int planes = in->image->planes;
  if (!ss_output_name_is_png (o->output) || planes == 1 || planes == 3)
    return -1;
  cli_error (o->output, "a PNG holds 1 plane (grey) or 3 (RGB); %s has %d: write FITS, "
             "or pick one with --plane", in->in_path, planes);
  return CLI_EXIT_USAGE;
}

/* Deblurs IN_PATH into o->output. */
static int
deblur_one (CliOptions *o, CliConfig *c, const char *in_path)
{
  CliDeblurInput in = { 0 };
  cli_phases_start (&in.phases);
  in.in_path = in_path;
  in.truth_path = o->truth;
  ss_acquisition_init (&in.acq);

  const char *inputs[4];
  g_autofree char *psf_file = ss_psf_spec_file_name (&c->acquisition.psf);
  cli_collect_inputs (inputs, in.in_path, o->truth, psf_file);
  int status = cli_check_output (o->output, o->force, inputs);
  /* The GPU's start-up (a quarter of a second) runs while the image is
   * read and prepared. */
  if (status < 0)
    ss_backend_warm_up (c->backend, c->devices, c->n_devices);
  if (status < 0)
    status = load_input (&in, o, c);
  if (status < 0)
    status = check_png_planes (&in, o);
  cli_phases_lap (&in.phases, &in.phases.read);
  if (status < 0)
    status = deblur_planes (&in, o, c, inputs);

  g_clear_pointer (&in.image, ss_image_free);
  g_clear_pointer (&in.truth, ss_image_free);
  ss_acquisition_clear (&in.acq);
  return status;
}

static int
deblur_with (CliOptions *o, CliConfig *c)
{
  if (o->output_dir != NULL)
    return cli_deblur_many (o, c, deblur_one);
  if (o->positional == NULL || g_strv_length (o->positional) != 1)
    {
      cli_error (NULL, "deblur: expected one input image with -o, or several with --output-dir "
                 "(see '" CLI_PROGRAM " deblur --help')");
      return CLI_EXIT_USAGE;
    }
  return deblur_one (o, c, o->positional[0]);
}

int
cli_deblur (int argc, char **argv)
{
  CliOptions o = { 0 };
  const CliGroups groups = CLI_GROUP_OUTPUT | CLI_GROUP_PNG | CLI_GROUP_INPUT | CLI_GROUP_TRUTH
                           | CLI_GROUP_SKY | CLI_GROUP_SOLVER | CLI_GROUP_PRINT | CLI_GROUP_MANY;
  int status = cli_parse_command_line (
    "deblur", "IN -o OUT | IN... --output-dir DIR",
    "Recovers an image from IN: a measurement written by 'simulate' or a real blurred image.",
    "When IN's header records an acquisition (SS_PSF ...), the operator and the scaling\n"
    "are rebuilt from it; a --psf that differs from the record is refused.\n"
    "Otherwise IN is a real image: the blur comes from --psf SPEC, --psf auto or\n"
    "--psf-from-star X,Y; the sky (--sky) is subtracted and the data divided by their\n"
    "maximum; NaN (blank) pixels are left out of the data term and filled in the result;\n"
    "the image is padded (--boundary, mirror by default), solved (by auto: Richardson-Lucy\n"
    "or ALM, whichever predicts held-out pixels better; an option auto takes no part of,\n"
    "such as --iters, picks the candidate that takes it) and cropped back;\n"
    "x >= 0 unless --allow-negative; every plane of a colour image or cube is processed\n"
    "in turn unless --plane picks one. --alpha auto derives alpha from the noise.\n"
    "OUT holds x * scale + sky as float32 FITS with IN's header (the primary header's\n"
    "cards too when IN's image is in an extension), IN's axes and HISTORY cards; OUT's\n"
    "name gives its format: .fits, .fit or .fts (FITS), the same + .gz (gzip) or .png\n"
    "(1 plane grey, 3 RGB), any case; any other name (.fz, a bare .gz) is refused.\n"
    "With --output-dir DIR, every input IN is deblurred into DIR/NAME.fits, NAME being\n"
    "IN's name without its directory and .fits/.fit/.fts/.png/.gz/.fz suffixes; each input\n"
    "succeeds or fails on its own. Exit status: 0 when every input was deblurred, 1 when\n"
    "any failed, 2 for a bad command line (nothing is done).",
    groups, argc, argv, &o);
  CliConfig c = { 0 };
  if (status < 0)
    status = cli_config_from_options (&o, groups, 1.0, NULL, &c);
  if (status < 0)
    status = deblur_with (&o, &c);
  cli_config_clear (&c);
  cli_options_clear (&o);
  return status;
}
