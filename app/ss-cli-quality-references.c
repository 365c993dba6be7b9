/* ss-cli-quality-references.c: `quality`'s references, their parameters
 * chosen WITH THE TRUTH: Richardson–Lucy and RL-TV stopped at their best
 * iteration, Wiener (direct-fft) at its best α, and Siril's RL at its best
 * iteration count when siril-cli is installed. */
#include "ss-cli-quality-private.h"

#include <math.h>
#include <string.h>
#include <glib/gstdio.h>

/* ---- the best iteration, the best α ------------------------------------------- */

/* Richardson–Lucy (or RL-TV) run long, scored every 2 iterations, the best kept. */
MethodRow *
cli_quality_run_best_iteration (const QualityOptions *q, const CaseData *data, SsBackend *backend,
                                const char *method, const char *tv, int iterations)
{
  g_autoptr (GError) error = NULL;
  g_autofree char *iters = g_strdup_printf ("%d", iterations);
  const OptionValue extra[] = { { "stop", "none" }, { "iters", iters }, { "tv", tv } };
  Prepared p;
  SsSolveResult result = { 0 };
  MethodRow *row = NULL;
  const SsSolverInfo *rl = ss_solver_info (SS_SOLVER_RL);
  gsize n = (gsize) data->spec->size * data->spec->size;
  g_autoptr (GCancellable) past_best = g_cancellable_new ();
  BestTracker tracker = { .data = data, .scratch = g_new (float, n), .trace = q->trace_file,
                          .method = method, .past_best = past_best };
  if (cli_quality_prepare (q, data, rl, extra, G_N_ELEMENTS (extra), &p, &error))
    {
      p.job.params.report_every = 2;
      tracker.in = &p.in;
      tracker.job = &p.job;
      /* Stopped past the best (track_best) is how the run is meant to end. */
      gboolean solved = cli_quality_solve_prepared (&p, backend, &tracker, &result, &error);
      if (!solved && g_cancellable_is_cancelled (past_best))
        {
          g_clear_error (&error);
          solved = TRUE;
        }
      if (solved && tracker.best)
        {
          char *note = g_strdup_printf ("best iteration %d of %d%s%s", tracker.best_iteration,
                                        tracker.last_iteration,
                                        g_str_equal (tv, "0") ? "" : ", tv ",
                                        g_str_equal (tv, "0") ? "" : tv);
          /* The time a user would spend to reach that iterate (scoring included). */
          row = cli_quality_score_row (method, data, tracker.best, tracker.best_elapsed,
                                       tracker.best_iteration, note);
        }
    }
  if (row == NULL)
    row = cli_quality_failed_row (method, error);
  g_free (tracker.best);
  g_free (tracker.scratch);
  ss_solve_result_clear (&result);
  cli_quality_prepared_clear (&p);
  return row;
}

/* Wiener (direct-fft) at one α: its affine PSNR, and the estimate in X. */
static double
wiener_at (Prepared *p, SsBackend *backend, double log_alpha, float *x, double *seconds,
           const CaseData *data)
{
  SsSolveResult result = { 0 };
  double psnr = -INFINITY;
  p->job.params.alpha = pow (10, log_alpha);
  if (cli_quality_solve_prepared (p, backend, NULL, &result, NULL)
      && cli_deblur_crop_plane (&p->in, &p->job, result.x, x, NULL))
    {
      psnr = ss_psnr_affine (x, data->truth->data, (gsize) data->spec->size * data->spec->size);
      *seconds = result.seconds;
    }
  ss_solve_result_clear (&result);
  return psnr;
}

/* Wiener at its best α: a grid of half decades, then golden-section search
 * on log α around the best grid point. */
MethodRow *
cli_quality_run_best_wiener (const QualityOptions *q, const CaseData *data, SsBackend *backend)
{
  g_autoptr (GError) error = NULL;
  const char *method = "wiener (best α, truth)";
  Prepared p;
  if (!cli_quality_prepare (q, data, ss_solver_info (SS_SOLVER_DIRECT_FFT), NULL, 0, &p, &error))
    {
      cli_quality_prepared_clear (&p);
      return cli_quality_failed_row (method, error);
    }
  gsize n = (gsize) data->spec->size * data->spec->size;
  g_autofree float *x = g_new (float, n);
  double seconds = NAN, best = -INFINITY, best_log = -3;
  for (double l = -7; l <= 2.01; l += 0.5)
    {
      double psnr = wiener_at (&p, backend, l, x, &seconds, data);
      if (psnr > best)
        {
          best = psnr;
          best_log = l;
        }
    }
  const double golden = 0.6180339887498949;
  double a = best_log - 0.5, b = best_log + 0.5;
  double c = b - golden * (b - a), d = a + golden * (b - a);
  double fc = wiener_at (&p, backend, c, x, &seconds, data);
  double fd = wiener_at (&p, backend, d, x, &seconds, data);
  for (int k = 0; k < 14; k++)
    if (fc > fd)
      {
        b = d, d = c, fd = fc;
        c = b - golden * (b - a);
        fc = wiener_at (&p, backend, c, x, &seconds, data);
      }
    else
      {
        a = c, c = d, fc = fd;
        d = a + golden * (b - a);
        fd = wiener_at (&p, backend, d, x, &seconds, data);
      }
  double log_alpha = fc > fd ? c : d;
  if (MAX (fc, fd) < best)
    log_alpha = best_log;
  wiener_at (&p, backend, log_alpha, x, &seconds, data);
  MethodRow *row = cli_quality_score_row (method, data, x, seconds, 1,
                                          g_strdup_printf ("alpha %.3g", pow (10, log_alpha)));
  cli_quality_prepared_clear (&p);
  return row;
}

/* ---- Siril ---------------------------------------------------------------------- */

/* Siril 1.0.6 (Debian 12) has `rl sigma corner_radius_boost iterations`: RL
 * with a Gaussian PSF given by its sigma, and no Wiener command (1.2 added
 * `wiener`, `sb` and PSF files). A Moffat case gets the Gaussian of the same
 * FWHM. Counts 5..80 are tried and the best kept, as for our RL. */
/* Siril 1.0.6 refuses `rl` with a larger sigma ("Error in line 3"). */
#define SIRIL_MAX_SIGMA 2.0

char *
cli_quality_find_siril (void)
{
  return g_find_program_in_path ("siril-cli");
}

static gboolean
siril_rl_once (const char *siril, const char *dir, double sigma, int iterations, float *x,
               gsize n, GError **error)
{
  g_autofree char *script = g_build_filename (dir, "rl.ssf", NULL);
  g_autofree char *text = g_strdup_printf ("requires 1.0.0\nload blurred.fits\n"
                                           "rl %.4f 0 %d\nsave restored\n", sigma, iterations);
  if (!g_file_set_contents (script, text, -1, error))
    return FALSE;
  g_autofree char *restored = g_build_filename (dir, "restored.fit", NULL);
  g_unlink (restored);
  const char *argv[] = { siril, "-d", dir, "-s", script, NULL };
  int status = 0;
  g_autofree char *out = NULL, *err = NULL;
  if (!g_spawn_sync (dir, (char **) argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out, &err,
                     &status, error))
    return FALSE;
  if (!g_spawn_check_wait_status (status, NULL))
    {
      /* Siril says what it refused on stdout ("Error in line 3: 'rl'."). */
      g_auto (GStrv) lines = g_strsplit (out ? out : "", "\n", -1);
      const char *why = "no message";
      for (int i = 0; lines[i]; i++)
        if (strstr (lines[i], "Error"))
          why = lines[i];
      g_set_error (error, SS_ERROR, SS_ERROR_IO, "siril-cli failed: %s", why);
      return FALSE;
    }
  g_autoptr (SsImage) image = ss_fits_read (restored, &SS_FITS_READ_OPTIONS_DEFAULT, error);
  if (image == NULL)
    return FALSE;
  if (ss_image_plane_size (image) != n)
    {
      g_set_error (error, SS_ERROR, SS_ERROR_IO, "siril wrote a %dx%d image", image->width,
                   image->height);
      return FALSE;
    }
  memcpy (x, image->data, n * sizeof (float));
  return TRUE;
}

MethodRow *
cli_quality_run_siril (const char *siril, const CaseData *data)
{
  g_autoptr (GError) error = NULL;
  const char *method = "siril rl (best, truth)";
  g_autofree char *dir = g_dir_make_tmp ("sharpsky-siril-XXXXXX", &error);
  if (dir == NULL)
    return cli_quality_failed_row (method, error);
  g_autofree char *blurred = g_build_filename (dir, "blurred.fits", NULL);
  gsize n = (gsize) data->spec->size * data->spec->size;
  g_autofree float *x = g_new (float, n);
  g_autofree float *best = NULL;
  double best_psnr = -INFINITY, best_seconds = NAN;
  int best_count = 0;
  double sigma = data->psf.fwhm / (2 * sqrt (2 * log (2)));
  if (sigma > SIRIL_MAX_SIGMA)
    {
      g_rmdir (dir);
      g_set_error (&error, SS_ERROR, SS_ERROR_UNSUPPORTED,
                   "not run: Siril 1.0.6's rl takes a Gaussian sigma of at most %.0f px "
                   "(FWHM %.1f), this PSF needs %.2f", SIRIL_MAX_SIGMA,
                   SIRIL_MAX_SIGMA * 2 * sqrt (2 * log (2)), sigma);
      return cli_quality_failed_row (method, error);
    }
  if (ss_fits_write (data->blurred, blurred, TRUE, NULL, &error))
    for (int count = 5; count <= 80; count *= 2)
      {
        double start = ss_now ();
        if (!siril_rl_once (siril, dir, sigma, count, x, n, &error))
          break;
        double psnr = ss_psnr_affine (x, data->truth->data, n);
        if (psnr > best_psnr)
          {
            best_psnr = psnr;
            best_count = count;
            best_seconds = ss_now () - start;
            g_free (best);
            best = g_memdup2 (x, n * sizeof (float));
          }
      }
  g_autofree char *restored = g_build_filename (dir, "restored.fit", NULL);
  g_autofree char *script = g_build_filename (dir, "rl.ssf", NULL);
  g_unlink (restored);
  g_unlink (script);
  g_unlink (blurred);
  g_rmdir (dir);
  if (best == NULL)
    return cli_quality_failed_row (method, error);
  return cli_quality_score_row (method, data, best, best_seconds, best_count,
                                g_strdup_printf ("Gaussian sigma %.2f, best of 5-80 iterations; "
                                                 "time includes siril's start-up", sigma));
}
