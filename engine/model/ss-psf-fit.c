/* ss-psf-fit.c: Gaussian and Moffat fits to stars, automatic star search, and
 * rendering a fit as a PSF. The model and the search rules: ss-psf-fit.h.
 * Here: the model names, fitting one star, combining fits and rendering a fit;
 * the profile and the least-squares fit are in ss-psf-fit-model.c, the first
 * guesses and the automatic search in ss-psf-fit-stars.c. */
#include "ss-psf-fit.h"
#include "ss-psf-fit-private.h"
#include "ss-error.h"
#include "ss-fft.h"
#include "ss-mem.h"
#include "ss-noise.h"
#include "ss-saturation.h"
#include "ss-scaling.h"

#include <math.h>
#include <string.h>

static const char *const model_names[] = {
  [SS_PSF_MODEL_GAUSSIAN] = "gaussian",
  [SS_PSF_MODEL_MOFFAT] = "moffat",
};

gboolean
ss_psf_model_from_string (const char *text, SsPsfModel *model, GError **error)
{
  for (guint i = 0; i < G_N_ELEMENTS (model_names); i++)
    if (text != NULL && g_ascii_strcasecmp (text, model_names[i]) == 0)
      {
        *model = (SsPsfModel) i;
        return TRUE;
      }
  g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT,
               "unknown star model “%s” (expected gaussian or moffat)", text != NULL ? text : "");
  return FALSE;
}

const char *
ss_psf_model_to_string (SsPsfModel model)
{
  return (guint) model < G_N_ELEMENTS (model_names) ? model_names[model] : "unknown";
}

/* ---- one star ------------------------------------------------------------- */

double
ss_psf_fit_saturation_level_of (const SsHeader *header, const float *data, int width,
                                int height, SsSaturationSource *source)
{
  SsSaturation found = ss_saturation_resolve (SS_SATURATION_AUTO, 0, header, data, width,
                                              height);
  *source = found.source;
  return isfinite (found.level) ? found.level : INFINITY;
}

double
ss_psf_fit_saturation_for (const SsImage *image, double level)
{
  if (isfinite (level))
    return level;
  SsSaturationSource source;
  return ss_psf_fit_saturation_level_of (image->header, image->data, image->width,
                                         image->height, &source);
}

/* The clipped pixels (CLIPPED, a W × H window's mask) nearest (X, Y),
 * within SEARCH_RADIUS + 1, and those touching them: when there are as
 * many as a flat top has, *CX, *CY get their centroid and *RADIUS the
 * radius of a disc of their area. Blanks of other kinds (a masked column,
 * a drizzled frame's border) are not a core and are not followed. */
static gboolean
clipped_core_near (const guint8 *clipped, int w, int h, double x, double y, int *cx, int *cy,
                   double *radius)
{
  int seed = -1, px = (int) lround (x), py = (int) lround (y);
  double nearest = INFINITY;
  for (int j = MAX (py - SEARCH_RADIUS - 1, 0); j <= MIN (py + SEARCH_RADIUS + 1, h - 1); j++)
    for (int i = MAX (px - SEARCH_RADIUS - 1, 0); i <= MIN (px + SEARCH_RADIUS + 1, w - 1); i++)
      if (clipped[j * w + i] && hypot (i - x, j - y) < nearest)
        {
          nearest = hypot (i - x, j - y);
          seed = j * w + i;
        }
  if (seed < 0)
    return FALSE;
  g_autofree guint8 *seen = g_new0 (guint8, (gsize) w * h);
  g_autoptr (GArray) stack = g_array_new (FALSE, FALSE, sizeof (int));
  double sx = seed % w, sy = seed / w;
  int count = 1;
  seen[seed] = 1;
  g_array_append_val (stack, seed);
  while (stack->len > 0)
    {
      int k = g_array_index (stack, int, stack->len - 1);
      g_array_set_size (stack, stack->len - 1);
      int bx = k % w, by = k / w;
      for (int dy = -1; dy <= 1; dy++)
        for (int dx = -1; dx <= 1; dx++)
          {
            int nx = bx + dx, ny = by + dy, next = ny * w + nx;
            if (nx < 0 || ny < 0 || nx >= w || ny >= h || seen[next] || !clipped[next])
              continue;
            seen[next] = 1;
            sx += nx;
            sy += ny;
            count++;
            g_array_append_val (stack, next);
          }
    }
  if (count < SS_SATURATION_PLATEAU)
    return FALSE;   /* one or two clipped pixels: no core to go around */
  *cx = (int) lround (sx / count);
  *cy = (int) lround (sy / count);
  *radius = sqrt (count / G_PI);
  return TRUE;
}

/* The highest finite pixel of DATA (W × H) within RADIUS of (CX, CY). */
static gboolean
brightest_within (const float *data, int w, int h, int cx, int cy, int radius, int *px, int *py)
{
  float best = -INFINITY;
  for (int j = MAX (cy - radius, 0); j <= MIN (cy + radius, h - 1); j++)
    for (int i = MAX (cx - radius, 0); i <= MIN (cx + radius, w - 1); i++)
      if (isfinite (data[(gsize) j * w + i]) && data[(gsize) j * w + i] > best)
        {
          best = data[(gsize) j * w + i];
          *px = i;
          *py = j;
        }
  return isfinite (best);
}

/* What a fit near a click can reach: the peak search, the sky ring and the
 * cutout, each at most MAX_CUTOUT_RADIUS (64) from the peak. */
#define STAR_WINDOW_RADIUS 72

/* The window of IMAGE around (X, Y) (its corner in *X0, *Y0, its size in
 * *W, *H) with the pixels at or above SATURATION blanked and marked in
 * *CLIPPED (g_free). */
static float *
star_window (const SsImage *image, double x, double y, double saturation, int *x0, int *y0,
             int *w, int *h, guint8 **clipped)
{
  int cx = (int) lround (x), cy = (int) lround (y);
  *x0 = MAX (cx - STAR_WINDOW_RADIUS, 0);
  *y0 = MAX (cy - STAR_WINDOW_RADIUS, 0);
  *w = MIN (cx + STAR_WINDOW_RADIUS, image->width - 1) - *x0 + 1;
  *h = MIN (cy + STAR_WINDOW_RADIUS, image->height - 1) - *y0 + 1;
  float *window = g_new (float, (gsize) *w * *h);
  *clipped = g_new0 (guint8, (gsize) *w * *h);
  for (int j = 0; j < *h; j++)
    for (int i = 0; i < *w; i++)
      {
        gsize k = (gsize) j * *w + i;
        window[k] = image->data[(gsize) (j + *y0) * image->width + i + *x0];
        if (window[k] >= saturation)
          {
            window[k] = NAN;
            (*clipped)[k] = 1;
          }
      }
  return window;
}

gboolean
ss_psf_fit_star (const SsImage *image, double x, double y, SsPsfModel model, double saturation,
                 SsPsfFit *fit, GError **error)
{
  if (image == NULL || fit == NULL || (guint) model > SS_PSF_MODEL_MOFFAT)
    {
      g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT, "no image or model to fit");
      return FALSE;
    }
  if (!(x > -0.5 && y > -0.5 && x < image->width - 0.5 && y < image->height - 0.5))
    {
      g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT,
                   "star position (%g, %g) is outside the %d×%d image", x, y, image->width,
                   image->height);
      return FALSE;
    }
  int x0, y0, w, h;
  g_autofree guint8 *clipped = NULL;
  g_autofree float *data = star_window (image, x, y, isnan (saturation) ? INFINITY : saturation,
                                        &x0, &y0, &w, &h, &clipped);
  /* A clipped core where the user clicked (a saturated star, its core
   * wider than the peak search): the brightest pixel left is on its rim,
   * and the first guesses are made from there. */
  int cx = 0, cy = 0, core_x = 0, core_y = 0;
  double sky, noise, fwhm, core_radius = 0;
  gboolean core = clipped_core_near (clipped, w, h, x - x0, y - y0, &core_x, &core_y,
                                     &core_radius);
  gboolean peak = core ? brightest_within (data, w, h, core_x, core_y,
                                           (int) ceil (core_radius) + 2, &cx, &cy)
                       : ss_psf_fit_find_peak_near (data, w, h, x - x0, y - y0, &cx, &cy);
  if (!peak || !ss_psf_fit_first_guess (data, w, h, cx, cy, &sky, &noise, &fwhm))
    {
      g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT,
                   "no star to fit near (%g, %g)", x, y);
      return FALSE;
    }
  /* The ring's noise is the local sky's, but near the frame's edge the ring
   * is cut and its estimate, from few pixels, can come out low: on a test
   * field of five stars, a click at a corner fitted a noise spike as a star
   * on 0.35% of 8000 draws (1 in 2000 in the middle). The window's noise,
   * from thousands of pixels, bounds it from below. */
  noise = fmax (noise, ss_noise_estimate (data, w, h));
  double height = data[(gsize) cy * w + cx] - sky;
  if (!(height > 5.0 * noise))
    {
      g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT,
                   "no star stands out of the noise near (%g, %g) "
                   "(peak %.3g above a sky of %.3g, noise %.3g)", x, y, height, sky, noise);
      return FALSE;
    }
  /* The width guessed from the rim is the wing's: the fit is centred on the
   * core instead, and its start and cutout widened by it. */
  if (core)
    {
      cx = core_x;
      cy = core_y;
      fwhm += 2.0 * core_radius;
    }
  if (!ss_psf_fit_at_peak (data, w, h, cx, cy, ss_psf_fit_cutout_radius_for (fwhm), sky, fwhm,
                           model, fit, error))
    return FALSE;
  fit->x += x0;
  fit->y += y0;
  return TRUE;
}

/* ---- combining fits ------------------------------------------------------- */

static double
median_of (double *values, int n)
{
  float *copy = g_new (float, n);
  for (int i = 0; i < n; i++)
    copy[i] = (float) values[i];
  double m = ss_median (copy, n);
  g_free (copy);
  return m;
}

void
ss_psf_fit_combine (const SsPsfFit *fits, int n, SsPsfFit *combined)
{
  if (combined == NULL)
    return;
  if (fits == NULL || n < 1)
    {
      memset (combined, 0, sizeof *combined);
      combined->fwhm = combined->beta = NAN;
      return;
    }
  double *fwhm = g_new (double, n), *beta = g_new (double, n);
  double *e1 = g_new (double, n), *e2 = g_new (double, n);
  double *amp = g_new (double, n), *bg = g_new (double, n), *rms = g_new (double, n);
  for (int i = 0; i < n; i++)
    {
      fwhm[i] = fits[i].fwhm;
      beta[i] = fits[i].beta;
      e1[i] = fits[i].ellipticity * cos (2.0 * fits[i].angle);
      e2[i] = fits[i].ellipticity * sin (2.0 * fits[i].angle);
      amp[i] = fits[i].amplitude;
      bg[i] = fits[i].background;
      rms[i] = fits[i].rms_residual;
    }
  *combined = fits[0];
  combined->fwhm = median_of (fwhm, n);
  combined->beta = fits[0].model == SS_PSF_MODEL_MOFFAT ? median_of (beta, n) : NAN;
  double m1 = median_of (e1, n), m2 = median_of (e2, n);
  combined->ellipticity = MIN (hypot (m1, m2), 0.99);
  combined->angle = ss_psf_fit_normalise_angle (0.5 * atan2 (m2, m1));
  /* Axes with the median geometric-mean FWHM and the median ellipticity. */
  combined->fwhm_major = combined->fwhm / sqrt (1.0 - combined->ellipticity);
  combined->fwhm_minor = combined->fwhm * sqrt (1.0 - combined->ellipticity);
  combined->amplitude = median_of (amp, n);
  combined->background = median_of (bg, n);
  combined->rms_residual = median_of (rms, n);
  combined->iterations = n;
  g_free (fwhm);
  g_free (beta);
  g_free (e1);
  g_free (e2);
  g_free (amp);
  g_free (bg);
  g_free (rms);
}

/* ---- using a fit as the PSF ----------------------------------------------- */

void
ss_psf_fit_to_spec (const SsPsfFit *fit, SsPsfSpec *spec)
{
  memset (spec, 0, sizeof *spec);
  spec->fwhm = fit->fwhm;
  if (fit->model == SS_PSF_MODEL_MOFFAT)
    {
      spec->kind = SS_PSF_MOFFAT;
      spec->beta = fit->beta;
    }
  else
    spec->kind = SS_PSF_GAUSSIAN;
}

char *
ss_psf_fit_describe (const SsPsfFit *fit)
{
  GString *text = g_string_new (NULL);
  g_string_append_printf (text, "%s FWHM %.3f px (%.3f × %.3f, angle %.1f°)",
                          ss_psf_model_to_string (fit->model), fit->fwhm, fit->fwhm_major,
                          fit->fwhm_minor, fit->angle * 180.0 / G_PI);
  if (fit->model == SS_PSF_MODEL_MOFFAT)
    g_string_append_printf (text, ", beta %.3f", fit->beta);
  g_string_append_printf (text, ", ellipticity %.3f, at (%.2f, %.2f)", fit->ellipticity,
                          fit->x, fit->y);
  return g_string_free (text, FALSE);
}

static gboolean
fit_renderable (const SsPsfFit *fit, GError **error)
{
  gboolean ok = (guint) fit->model <= SS_PSF_MODEL_MOFFAT
                && isfinite (fit->fwhm_major) && isfinite (fit->fwhm_minor)
                && fit->fwhm_minor > 0.0 && fit->fwhm_major >= fit->fwhm_minor
                && isfinite (fit->angle)
                && (fit->model == SS_PSF_MODEL_GAUSSIAN
                    || ss_psf_beta_valid (fit->beta));
  if (!ok)
    g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT,
                 "the star fit cannot be used as a PSF (FWHM %g × %g, beta %g)",
                 fit->fwhm_major, fit->fwhm_minor, fit->beta);
  return ok;
}

/* Signed offset of index I from 0 on a ring of N, in [-N/2, N/2): the
 * convention of ss_psf_render. */
static int
wrapped_offset (int i, int n)
{
  return i < (n + 1) / 2 ? i : i - n;
}

/* Value of the quadratic form Q where the profile is cut off, as ss_psf_render
 * cuts its radial profiles: 4 sigma for a Gaussian, 1e-4 of the peak for a
 * Moffat. */
static double
cutoff_q (const SsPsfFit *fit)
{
  return fit->model == SS_PSF_MODEL_GAUSSIAN ? 16.0 : pow (1e4, 1.0 / fit->beta) - 1.0;
}

/* Radius of the cut-off along the major axis, and the odd square it needs. */
static int
support_size (const SsPsfFit *fit)
{
  double l_major = ss_psf_fit_eigenvalue_for_fwhm (fit->model, fit->fwhm_major, fit->beta);
  double radius = sqrt (cutoff_q (fit) / l_major);
  return 2 * (int) ceil (MIN (radius, (double) G_MAXINT / 4)) + 1;
}

/* Writes the normalised profile into IMAGE, centred on (0, 0) after
 * wrap-around when WRAP, else on the middle pixel. */
static gboolean
render_profile (const SsPsfFit *fit, SsImage *image, gboolean wrap, GError **error)
{
  double p[P_COUNT] = { 0 };
  p[P_AMP] = 1.0;
  p[P_BETA] = fit->beta;
  ss_psf_fit_shape_from_axes (fit->model, fit->fwhm_major, fit->fwhm_minor, fit->angle, fit->beta,
                              &p[P_A], &p[P_B], &p[P_C]);
  double q_max = cutoff_q (fit);
  int w = image->width, h = image->height;
  double sum = 0.0;
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++)
      {
        double dx = wrap ? wrapped_offset (x, w) : x - w / 2;
        double dy = wrap ? wrapped_offset (y, h) : y - h / 2;
        double q = p[P_A] * dx * dx + 2.0 * p[P_B] * dx * dy + p[P_C] * dy * dy;
        double v = q <= q_max ? ss_psf_fit_model_value (fit->model, p, dx, dy, NULL) : 0.0;
        image->data[(gsize) y * w + x] = (float) v;
        sum += v;
      }
  if (!(sum > 0.0) || !isfinite (sum))
    {
      g_set_error (error, SS_ERROR, SS_ERROR_NUMERIC, "the fitted PSF sums to %g", sum);
      return FALSE;
    }
  for (gsize i = 0; i < (gsize) w * h; i++)
    image->data[i] = (float) (image->data[i] / sum);
  return TRUE;
}

SsImage *
ss_psf_fit_render (const SsPsfFit *fit, int width, int height, GError **error)
{
  if (!fit_renderable (fit, error))
    return NULL;
  int support = support_size (fit);
  if (width < 1 || height < 1 || support > width || support > height)
    {
      g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT,
                   "the fitted PSF (%d×%d pixels) is larger than the image (%d×%d)",
                   support, support, width, height);
      return NULL;
    }
  g_autoptr (SsImage) image = ss_image_new (width, height, 1, error);
  if (image == NULL || !render_profile (fit, image, TRUE, error))
    return NULL;
  return g_steal_pointer (&image);
}

SsImage *
ss_psf_fit_render_stamp (const SsPsfFit *fit, int size, GError **error)
{
  if (!fit_renderable (fit, error))
    return NULL;
  if (size <= 0)
    size = support_size (fit);
  if (size % 2 == 0 || size > 4095)
    {
      g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT,
                   "a PSF stamp needs an odd size up to 4095, not %d", size);
      return NULL;
    }
  g_autoptr (SsImage) image = ss_image_new (size, size, 1, error);
  if (image == NULL || !render_profile (fit, image, FALSE, error))
    return NULL;
  return g_steal_pointer (&image);
}

SsOperator *
ss_psf_fit_operator (const SsPsfFit *fit, const float *observed, int width, int height,
                     GError **error)
{
  g_autoptr (SsImage) psf = ss_psf_fit_render (fit, width, height, error);
  if (psf == NULL)
    return NULL;
  return ss_operator_new_from_kernel (psf->data, observed, width, height, error);
}
