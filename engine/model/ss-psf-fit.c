/* ss-psf-fit.c: Gaussian and Moffat fits to stars, automatic star search, and
 * rendering a fit as a PSF. The model and the search rules: ss-psf-fit.h. */
#include "ss-psf-fit.h"
#include "ss-error.h"
#include "ss-fft.h"
#include "ss-mem.h"
#include "ss-noise.h"
#include "ss-scaling.h"

#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define FWHM_PER_SIGMA 2.3548200450309493   /* 2 sqrt(2 ln 2) */
#define LM_MAX_ITERATIONS 200
#define LM_MAX_LAMBDA 1e12
#define SEARCH_RADIUS 3        /* pixels around a click where the peak is looked for */
#define MIN_CUTOUT_RADIUS 5
#define MAX_CUTOUT_RADIUS 64
#define CUTOUT_FWHMS 4.0       /* cutout radius in FWHM: enough wing for beta */
#define NEIGHBOUR_FRACTION 0.1 /* a neighbour higher than this share of a star spoils it */
#define NEIGHBOUR_SIGMAS 5.0   /* ... when it stands this many noise sigmas above the sky */
#define MIN_BETA 0.3
#define MAX_BETA 100.0         /* beyond this a Moffat is a Gaussian for any data */

/* Parameter vector layout. */
enum { P_AMP, P_X, P_Y, P_BG, P_A, P_B, P_C, P_BETA, P_COUNT };

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

static int
parameter_count (SsPsfModel model)
{
  return model == SS_PSF_MODEL_MOFFAT ? P_COUNT : P_COUNT - 1;
}

/* ---- the profile ---------------------------------------------------------- */

/* Profile height at (px, py) relative to the fit's centre scale; when GRAD is
 * not NULL it receives d f / d p for every parameter. */
static double
model_value (SsPsfModel model, const double *p, double px, double py, double *grad)
{
  double dx = px - p[P_X], dy = py - p[P_Y];
  double q = p[P_A] * dx * dx + 2.0 * p[P_B] * dx * dy + p[P_C] * dy * dy;
  double shape, dshape_dq;
  if (model == SS_PSF_MODEL_GAUSSIAN)
    {
      shape = exp (-0.5 * q);
      dshape_dq = -0.5 * shape;
    }
  else
    {
      shape = pow (1.0 + q, -p[P_BETA]);
      dshape_dq = -p[P_BETA] * shape / (1.0 + q);
    }
  if (grad != NULL)
    {
      double g = p[P_AMP] * dshape_dq;
      grad[P_AMP] = shape;
      grad[P_BG] = 1.0;
      grad[P_X] = -2.0 * g * (p[P_A] * dx + p[P_B] * dy);
      grad[P_Y] = -2.0 * g * (p[P_B] * dx + p[P_C] * dy);
      grad[P_A] = g * dx * dx;
      grad[P_B] = 2.0 * g * dx * dy;
      grad[P_C] = g * dy * dy;
      if (model == SS_PSF_MODEL_MOFFAT)
        grad[P_BETA] = -p[P_AMP] * shape * log1p (q);
    }
  return p[P_BG] + p[P_AMP] * shape;
}

/* Widths of the profile along one principal axis of the quadratic form, for
 * the eigenvalue LAMBDA: sigma (Gaussian) or alpha (Moffat) is 1/sqrt(lambda). */
static double
fwhm_for_eigenvalue (SsPsfModel model, double lambda, double beta)
{
  double scale = 1.0 / sqrt (lambda);
  if (model == SS_PSF_MODEL_GAUSSIAN)
    return FWHM_PER_SIGMA * scale;
  return 2.0 * scale * sqrt (pow (2.0, 1.0 / beta) - 1.0);
}

static double
eigenvalue_for_fwhm (SsPsfModel model, double fwhm, double beta)
{
  double scale = model == SS_PSF_MODEL_GAUSSIAN
                 ? fwhm / FWHM_PER_SIGMA
                 : fwhm / (2.0 * sqrt (pow (2.0, 1.0 / beta) - 1.0));
  return 1.0 / (scale * scale);
}

/* The quadratic form (a, b, c) of a profile with the given axes and angle. */
static void
shape_from_axes (SsPsfModel model, double fwhm_major, double fwhm_minor, double angle,
                 double beta, double *a, double *b, double *c)
{
  double l_major = eigenvalue_for_fwhm (model, fwhm_major, beta);
  double l_minor = eigenvalue_for_fwhm (model, fwhm_minor, beta);
  double co = cos (angle), si = sin (angle);
  *a = l_major * co * co + l_minor * si * si;
  *c = l_major * si * si + l_minor * co * co;
  *b = (l_major - l_minor) * co * si;
}

static double
normalise_angle (double angle)
{
  while (angle > G_PI / 2)
    angle -= G_PI;
  while (angle <= -G_PI / 2)
    angle += G_PI;
  return angle;
}

/* Fills the derived fields of FIT (axes, angle, ellipticity) from (a, b, c). */
static void
axes_from_shape (SsPsfFit *fit, double a, double b, double c, double beta)
{
  double mean = 0.5 * (a + c);
  double spread = sqrt (0.25 * (a - c) * (a - c) + b * b);
  double l_high = mean + spread, l_low = mean - spread;
  /* The eigenvector of l_high is at 0.5 atan2(2b, a - c): the minor axis. */
  double minor_angle = 0.5 * atan2 (2.0 * b, a - c);
  fit->fwhm_major = fwhm_for_eigenvalue (fit->model, l_low, beta);
  fit->fwhm_minor = fwhm_for_eigenvalue (fit->model, l_high, beta);
  fit->fwhm = sqrt (fit->fwhm_major * fit->fwhm_minor);
  fit->angle = normalise_angle (minor_angle + G_PI / 2);
  fit->ellipticity = 1.0 - fit->fwhm_minor / fit->fwhm_major;
}

/* ---- Levenberg-Marquardt -------------------------------------------------- */

typedef struct {
  int n;
  double *px, *py, *value;   /* coordinates relative to the cutout's centre */
} Cutout;

static void
cutout_clear (Cutout *cut)
{
  g_free (cut->px);
  g_free (cut->py);
  g_free (cut->value);
}

/* Finite pixels of the square of RADIUS around (CX, CY), clipped to the image. */
static void
cutout_take (const float *data, int w, int h, int cx, int cy, int radius, Cutout *cut)
{
  int side = 2 * radius + 1;
  cut->px = g_new (double, (gsize) side * side);
  cut->py = g_new (double, (gsize) side * side);
  cut->value = g_new (double, (gsize) side * side);
  cut->n = 0;
  for (int y = MAX (cy - radius, 0); y <= MIN (cy + radius, h - 1); y++)
    for (int x = MAX (cx - radius, 0); x <= MIN (cx + radius, w - 1); x++)
      {
        float v = data[(gsize) y * w + x];
        if (!isfinite (v))
          continue;
        cut->px[cut->n] = x - cx;
        cut->py[cut->n] = y - cy;
        cut->value[cut->n] = v;
        cut->n++;
      }
}

static gboolean
parameters_valid (SsPsfModel model, const double *p, int radius)
{
  if (!(p[P_AMP] > 0.0) || !(p[P_A] > 0.0) || !(p[P_C] > 0.0)
      || !(p[P_A] * p[P_C] - p[P_B] * p[P_B] > 0.0)
      || !(fabs (p[P_X]) <= radius) || !(fabs (p[P_Y]) <= radius) || !isfinite (p[P_BG]))
    return FALSE;
  if (model == SS_PSF_MODEL_MOFFAT && !(p[P_BETA] >= MIN_BETA && p[P_BETA] <= MAX_BETA))
    return FALSE;
  return TRUE;
}

static double
chi_square (SsPsfModel model, const double *p, const Cutout *cut)
{
  double sum = 0.0;
  for (int i = 0; i < cut->n; i++)
    {
      double r = model_value (model, p, cut->px[i], cut->py[i], NULL) - cut->value[i];
      sum += r * r;
    }
  return sum;
}

/* J^T J and J^T r at P. */
static void
normal_equations (SsPsfModel model, const double *p, const Cutout *cut, int np,
                  double *jtj, double *jtr)
{
  memset (jtj, 0, sizeof (double) * np * np);
  memset (jtr, 0, sizeof (double) * np);
  double grad[P_COUNT];
  for (int i = 0; i < cut->n; i++)
    {
      double r = model_value (model, p, cut->px[i], cut->py[i], grad) - cut->value[i];
      for (int j = 0; j < np; j++)
        {
          jtr[j] += grad[j] * r;
          for (int k = 0; k <= j; k++)
            jtj[j * np + k] += grad[j] * grad[k];
        }
    }
  for (int j = 0; j < np; j++)
    for (int k = j + 1; k < np; k++)
      jtj[j * np + k] = jtj[k * np + j];
}

/* Solves (J^T J + lambda diag(J^T J)) step = -J^T r; FALSE when the damped
 * matrix is not positive definite. */
static gboolean
damped_step (const double *jtj, const double *jtr, int np, double lambda, double *step)
{
  double m[P_COUNT * P_COUNT];
  double max_diag = 0.0;
  for (int j = 0; j < np; j++)
    max_diag = MAX (max_diag, jtj[j * np + j]);
  memcpy (m, jtj, sizeof (double) * np * np);
  for (int j = 0; j < np; j++)
    {
      /* A floor keeps a parameter the data do not see (dJ = 0) solvable. */
      m[j * np + j] += lambda * MAX (jtj[j * np + j], 1e-12 * max_diag + 1e-300);
      step[j] = -jtr[j];
    }
  return LAPACKE_dposv (LAPACK_ROW_MAJOR, 'U', np, 1, m, np, step, 1) == 0;
}

/* Minimises chi^2 over P from the start given; returns the iterations used,
 * or -1 when no valid step could ever be taken. */
static int
levenberg_marquardt (SsPsfModel model, double *p, const Cutout *cut, int radius)
{
  int np = parameter_count (model);
  double jtj[P_COUNT * P_COUNT], jtr[P_COUNT], step[P_COUNT], trial[P_COUNT];
  double lambda = 1e-3;
  double chi2 = chi_square (model, p, cut);
  int iteration;
  for (iteration = 1; iteration <= LM_MAX_ITERATIONS; iteration++)
    {
      normal_equations (model, p, cut, np, jtj, jtr);
      gboolean improved = FALSE;
      double trial_chi2 = chi2;
      while (!improved && lambda < LM_MAX_LAMBDA)
        {
          if (damped_step (jtj, jtr, np, lambda, step))
            {
              memcpy (trial, p, sizeof (double) * P_COUNT);
              for (int j = 0; j < np; j++)
                trial[j] += step[j];
              if (parameters_valid (model, trial, radius))
                {
                  trial_chi2 = chi_square (model, trial, cut);
                  improved = trial_chi2 < chi2;
                }
            }
          if (!improved)
            lambda *= 10.0;
        }
      if (!improved)
        break;   /* no step lowers chi^2: at the minimum (to float precision) */
      memcpy (p, trial, sizeof (double) * P_COUNT);
      lambda = MAX (lambda / 10.0, 1e-12);
      gboolean converged = chi2 - trial_chi2 <= 1e-10 * chi2;
      chi2 = trial_chi2;
      if (converged)
        break;
    }
  return iteration;
}

/* ---- first guesses -------------------------------------------------------- */

/* The highest finite pixel within SEARCH_RADIUS of (x, y). */
static gboolean
find_peak_near (const float *data, int w, int h, double x, double y, int *px, int *py)
{
  int cx = (int) lround (x), cy = (int) lround (y);
  float best = -INFINITY;
  for (int yy = MAX (cy - SEARCH_RADIUS, 0); yy <= MIN (cy + SEARCH_RADIUS, h - 1); yy++)
    for (int xx = MAX (cx - SEARCH_RADIUS, 0); xx <= MIN (cx + SEARCH_RADIUS, w - 1); xx++)
      {
        float v = data[(gsize) yy * w + xx];
        if (isfinite (v) && v > best)
          {
            best = v;
            *px = xx;
            *py = yy;
          }
      }
  return isfinite (best);
}

/* Median and robust sigma of the finite pixels on the square ring at
 * distance RADIUS from (cx, cy): the local sky and its noise. */
static gboolean
ring_statistics (const float *data, int w, int h, int cx, int cy, int radius,
                 double *median, double *sigma)
{
  GArray *ring = g_array_new (FALSE, FALSE, sizeof (float));
  for (int y = cy - radius; y <= cy + radius; y++)
    for (int x = cx - radius; x <= cx + radius; x++)
      {
        if (MAX (abs (x - cx), abs (y - cy)) != radius || x < 0 || y < 0 || x >= w || y >= h)
          continue;
        float v = data[(gsize) y * w + x];
        if (isfinite (v))
          g_array_append_val (ring, v);
      }
  gboolean ok = ring->len >= 4;
  if (ok)
    {
      float *values = (float *) ring->data;
      *median = ss_median (values, ring->len);
      for (guint i = 0; i < ring->len; i++)
        values[i] = fabsf (values[i] - (float) *median);
      *sigma = ss_median (values, ring->len) / 0.6744897501960817;
    }
  g_array_free (ring, TRUE);
  return ok;
}

/* FWHM guess: along 8 rays from the peak, the distance where the profile
 * falls below half its height (linearly interpolated); the mean of the rays.
 * Rays ignore neighbours beyond the first fall, unlike a pixel count. */
static double
half_width_guess (const float *data, int w, int h, int cx, int cy, double sky, int limit)
{
  static const int dirs[8][2] = { { 1, 0 }, { -1, 0 }, { 0, 1 }, { 0, -1 },
                                  { 1, 1 }, { -1, -1 }, { 1, -1 }, { -1, 1 } };
  double peak = data[(gsize) cy * w + cx] - sky;
  double half = 0.5 * peak, total = 0.0;
  int rays = 0;
  for (int d = 0; d < 8; d++)
    {
      double step = d < 4 ? 1.0 : G_SQRT2;
      double previous = peak;
      for (int k = 1; k <= limit; k++)
        {
          int x = cx + k * dirs[d][0], y = cy + k * dirs[d][1];
          if (x < 0 || y < 0 || x >= w || y >= h)
            break;
          double v = data[(gsize) y * w + x] - sky;
          if (!isfinite (v))
            break;
          if (v < half)
            {
              double frac = (previous - half) / (previous - v);
              total += (k - 1 + frac) * step;
              rays++;
              break;
            }
          previous = v;
        }
    }
  return rays > 0 ? 2.0 * total / rays : NAN;
}

/* Sky, height and FWHM guesses around the peak (cx, cy), the ring growing
 * with the star. */
static gboolean
first_guess (const float *data, int w, int h, int cx, int cy,
             double *sky, double *noise, double *fwhm)
{
  int ring = 8;
  for (int round = 0; round < 4; round++)
    {
      if (!ring_statistics (data, w, h, cx, cy, ring, sky, noise))
        return FALSE;
      *fwhm = half_width_guess (data, w, h, cx, cy, *sky, ring);
      if (!isfinite (*fwhm) || 1.5 * *fwhm <= ring || ring >= MAX_CUTOUT_RADIUS)
        break;
      ring = MIN ((int) ceil (3.0 * *fwhm), MAX_CUTOUT_RADIUS);
    }
  return isfinite (*fwhm);
}

static int
cutout_radius_for (double fwhm)
{
  return CLAMP ((int) ceil (CUTOUT_FWHMS * fwhm), MIN_CUTOUT_RADIUS, MAX_CUTOUT_RADIUS);
}

/* ---- one star ------------------------------------------------------------- */

/* Fits MODEL to the star whose peak pixel is (cx, cy), cutout RADIUS, from
 * the guesses SKY and FWHM. */
static gboolean
fit_at_peak (const float *data, int w, int h, int cx, int cy, int radius, double sky,
             double fwhm_guess, SsPsfModel model, SsPsfFit *fit, GError **error)
{
  Cutout cut;
  cutout_take (data, w, h, cx, cy, radius, &cut);
  int np = parameter_count (model);
  if (cut.n <= 2 * np)
    {
      cutout_clear (&cut);
      g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT,
                   "too few valid pixels around (%d, %d) to fit a star", cx, cy);
      return FALSE;
    }
  double p[P_COUNT] = { 0 };
  double beta = 3.0;
  p[P_AMP] = data[(gsize) cy * w + cx] - sky;
  p[P_BG] = sky;
  p[P_BETA] = beta;
  double lambda = eigenvalue_for_fwhm (model, MAX (fwhm_guess, 1.0), beta);
  p[P_A] = p[P_C] = lambda;

  int iterations = levenberg_marquardt (model, p, &cut, radius);
  memset (fit, 0, sizeof *fit);
  fit->model = model;
  fit->pixels = cut.n;
  fit->iterations = iterations;
  fit->rms_residual = sqrt (chi_square (model, p, &cut) / cut.n);
  cutout_clear (&cut);

  fit->x = cx + p[P_X];
  fit->y = cy + p[P_Y];
  fit->amplitude = p[P_AMP];
  fit->background = p[P_BG];
  fit->beta = model == SS_PSF_MODEL_MOFFAT ? p[P_BETA] : NAN;
  axes_from_shape (fit, p[P_A], p[P_B], p[P_C], p[P_BETA]);

  gboolean sensible = isfinite (fit->fwhm) && fit->fwhm_minor >= 0.5
                      && fit->fwhm_major <= 2.0 * radius
                      && hypot (p[P_X], p[P_Y]) <= SEARCH_RADIUS;
  if (!sensible)
    {
      g_set_error (error, SS_ERROR, SS_ERROR_NUMERIC,
                   "the %s fit to the star at (%d, %d) did not converge to a star "
                   "(FWHM %.3g × %.3g px)", ss_psf_model_to_string (model), cx, cy,
                   fit->fwhm_major, fit->fwhm_minor);
      return FALSE;
    }
  return TRUE;
}

gboolean
ss_psf_fit_star (const SsImage *image, double x, double y, SsPsfModel model,
                 SsPsfFit *fit, GError **error)
{
  if (image == NULL || fit == NULL || (guint) model > SS_PSF_MODEL_MOFFAT)
    {
      g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT, "no image or model to fit");
      return FALSE;
    }
  int w = image->width, h = image->height;
  if (!(x > -0.5 && y > -0.5 && x < w - 0.5 && y < h - 0.5))
    {
      g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT,
                   "star position (%g, %g) is outside the %d×%d image", x, y, w, h);
      return FALSE;
    }
  const float *data = image->data;
  int cx = 0, cy = 0;
  double sky, noise, fwhm;
  if (!find_peak_near (data, w, h, x, y, &cx, &cy)
      || !first_guess (data, w, h, cx, cy, &sky, &noise, &fwhm))
    {
      g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT,
                   "no star to fit near (%g, %g)", x, y);
      return FALSE;
    }
  double height = data[(gsize) cy * w + cx] - sky;
  if (!(height > 5.0 * noise))
    {
      g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT,
                   "no star stands out of the noise near (%g, %g) "
                   "(peak %.3g above a sky of %.3g, noise %.3g)", x, y, height, sky, noise);
      return FALSE;
    }
  return fit_at_peak (data, w, h, cx, cy, cutout_radius_for (fwhm), sky, fwhm, model,
                      fit, error);
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
  combined->angle = normalise_angle (0.5 * atan2 (m2, m1));
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

/* ---- automatic search ----------------------------------------------------- */

void
ss_star_search_init (SsStarSearch *search)
{
  memset (search, 0, sizeof *search);
  search->model = SS_PSF_MODEL_MOFFAT;
  search->plane = 0;
  search->threshold = 20.0;
  search->saturation = NAN;
  search->isolation = 0.0;
  search->max_stars = 25;
}

typedef struct {
  int x, y;
  float height;        /* above the sky */
  gboolean usable;     /* FALSE: flat top or a NaN neighbour */
} Peak;

static int
compare_peaks_by_height (gconstpointer a, gconstpointer b)
{
  float ha = ((const Peak *) a)->height, hb = ((const Peak *) b)->height;
  return (ha < hb) - (ha > hb);   /* highest first */
}

/* Local maxima of the 3x3 neighbourhood higher than FLOOR above the sky. */
static GArray *
find_peaks (const float *data, int w, int h, double sky, double floor)
{
  GArray *peaks = g_array_new (FALSE, FALSE, sizeof (Peak));
  for (int y = 1; y + 1 < h; y++)
    for (int x = 1; x + 1 < w; x++)
      {
        float v = data[(gsize) y * w + x];
        if (!(v - sky > floor))
          continue;
        gboolean maximum = TRUE, flat = FALSE, finite = TRUE;
        for (int dy = -1; dy <= 1 && maximum; dy++)
          for (int dx = -1; dx <= 1; dx++)
            {
              if (dx == 0 && dy == 0)
                continue;
              float u = data[(gsize) (y + dy) * w + x + dx];
              if (!isfinite (u))
                finite = FALSE;
              else if (u > v)
                {
                  maximum = FALSE;
                  break;
                }
              else if (u == v)
                flat = TRUE;
            }
        if (!maximum)
          continue;
        Peak peak = { x, y, (float) (v - sky), !flat && finite };
        g_array_append_val (peaks, peak);
      }
  g_array_sort (peaks, compare_peaks_by_height);
  return peaks;
}

static gboolean
core_saturated (const float *data, int w, int cx, int cy, double saturation)
{
  for (int dy = -1; dy <= 1; dy++)
    for (int dx = -1; dx <= 1; dx++)
      if (data[(gsize) (cy + dy) * w + cx + dx] >= saturation)
        return TRUE;
  return FALSE;
}

/* TRUE when another peak within RADIUS is higher than NEIGHBOUR_FRACTION of
 * peaks[INDEX]'s height. */
static gboolean
has_close_neighbour (const GArray *peaks, guint index, double radius)
{
  const Peak *self = &g_array_index (peaks, Peak, index);
  double r2 = radius * radius;
  for (guint i = 0; i < peaks->len; i++)
    {
      const Peak *other = &g_array_index (peaks, Peak, i);
      if (i == index || other->height <= NEIGHBOUR_FRACTION * self->height)
        continue;
      double dx = other->x - self->x, dy = other->y - self->y;
      if (dx * dx + dy * dy <= r2)
        return TRUE;
    }
  return FALSE;
}

static double
finite_maximum (const float *data, gsize n)
{
  double best = -INFINITY;
  for (gsize i = 0; i < n; i++)
    if (isfinite (data[i]) && data[i] > best)
      best = data[i];
  return best;
}

/* Tries the candidate peaks[INDEX]; a usable star lands in FITS. */
static void
try_candidate (const float *data, int w, int h, const GArray *peaks, guint index,
               const SsStarSearch *search, double saturation, GArray *fits)
{
  const Peak *peak = &g_array_index (peaks, Peak, index);
  if (!peak->usable || core_saturated (data, w, peak->x, peak->y, saturation))
    return;
  double sky, noise, fwhm;
  if (!first_guess (data, w, h, peak->x, peak->y, &sky, &noise, &fwhm))
    return;
  int radius = cutout_radius_for (fwhm);
  if (peak->x < radius || peak->y < radius || peak->x + radius >= w || peak->y + radius >= h)
    return;   /* a star cut by the edge would bias the fit */
  double isolation = search->isolation > 0.0 ? search->isolation : MAX (8.0, (double) radius);
  if (has_close_neighbour (peaks, index, isolation))
    return;
  SsPsfFit fit;
  if (fit_at_peak (data, w, h, peak->x, peak->y, radius, sky, fwhm, search->model, &fit, NULL))
    g_array_append_val (fits, fit);
}

/* Deviations of one fit from the sample's medians that the clipping looks at. */
enum { DEV_FWHM, DEV_E1, DEV_E2, DEV_BETA, DEV_COUNT };

static void
fit_features (const SsPsfFit *fit, double *features)
{
  features[DEV_FWHM] = log (fit->fwhm);
  features[DEV_E1] = fit->ellipticity * cos (2.0 * fit->angle);
  features[DEV_E2] = fit->ellipticity * sin (2.0 * fit->angle);
  features[DEV_BETA] = fit->model == SS_PSF_MODEL_MOFFAT ? log (fit->beta) : 0.0;
}

/* Removes fits more than 3 robust sigmas from the median in FWHM, either
 * ellipticity component or beta: blends of two stars too close to show two
 * maxima, cosmic rays and galaxies. Sigma is floored (1% in FWHM and beta,
 * 0.01 in ellipticity) so that a sample of near-identical fits keeps them all. */
static void
drop_outlying_fits (GArray *fits)
{
  static const double floor_sigma[DEV_COUNT] = { 0.01, 0.01, 0.01, 0.01 };
  guint n = fits->len;
  if (n < 3)
    return;
  double *features = g_new (double, (gsize) n * DEV_COUNT);
  float *column = g_new (float, n);
  double centre[DEV_COUNT], spread[DEV_COUNT];
  for (guint i = 0; i < n; i++)
    fit_features (&g_array_index (fits, SsPsfFit, i), features + (gsize) i * DEV_COUNT);
  for (int f = 0; f < DEV_COUNT; f++)
    {
      for (guint i = 0; i < n; i++)
        column[i] = (float) features[(gsize) i * DEV_COUNT + f];
      centre[f] = ss_median (column, n);
      for (guint i = 0; i < n; i++)
        column[i] = fabsf (column[i] - (float) centre[f]);
      spread[f] = MAX (1.4826 * ss_median (column, n), floor_sigma[f]);
    }
  for (guint i = n; i-- > 0;)
    for (int f = 0; f < DEV_COUNT; f++)
      if (fabs (features[(gsize) i * DEV_COUNT + f] - centre[f]) > 3.0 * spread[f])
        {
          g_array_remove_index (fits, i);
          break;
        }
  g_free (column);
  g_free (features);
}

gboolean
ss_psf_find_stars (const SsImage *image, const SsStarSearch *search,
                   SsPsfFit *combined, GArray **fits_out, GError **error)
{
  if (image == NULL || search == NULL || combined == NULL
      || search->plane < 0 || search->plane >= image->planes
      || !(search->threshold > 0.0) || search->max_stars < 1
      || (guint) search->model > SS_PSF_MODEL_MOFFAT)
    {
      g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT,
                   "invalid star search (plane, threshold > 0 and max stars >= 1 are needed)");
      return FALSE;
    }
  int w = image->width, h = image->height;
  gsize n = ss_image_plane_size (image);
  const float *data = image->data + (gsize) search->plane * n;

  SsScaling scaling;
  if (!ss_scaling_estimate (data, n, SS_SKY_CLIPPED_MEDIAN, 0.0, &scaling, error))
    return FALSE;
  double sky = scaling.sky;
  double noise = ss_noise_estimate (data, w, h);
  double top = finite_maximum (data, n);
  if (!(noise > 0.0))
    noise = 1e-6 * (top - sky);   /* noiseless (synthetic) data */
  double saturation = isfinite (search->saturation) ? search->saturation
                                                    : sky + 0.95 * (top - sky);

  /* Stars are the peaks above the threshold, but any significant peak (5
   * sigma) can spoil a neighbour, so the isolation test sees those too. */
  GArray *peaks = find_peaks (data, w, h, sky, MIN (NEIGHBOUR_SIGMAS, search->threshold) * noise);
  GArray *fits = g_array_new (FALSE, FALSE, sizeof (SsPsfFit));
  for (guint i = 0; i < peaks->len && (int) fits->len < search->max_stars; i++)
    {
      if (g_array_index (peaks, Peak, i).height <= search->threshold * noise)
        break;   /* sorted: the rest are fainter */
      try_candidate (data, w, h, peaks, i, search, saturation, fits);
    }
  g_array_free (peaks, TRUE);

  if (fits->len == 0)
    {
      g_array_free (fits, TRUE);
      g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT,
                   "no isolated unsaturated star found (peaks above %.3g = sky %.3g + %g × "
                   "noise %.3g, below saturation %.3g)", sky + search->threshold * noise, sky,
                   search->threshold, noise, saturation);
      return FALSE;
    }
  drop_outlying_fits (fits);
  ss_psf_fit_combine ((const SsPsfFit *) fits->data, fits->len, combined);
  if (fits_out != NULL)
    *fits_out = fits;
  else
    g_array_free (fits, TRUE);
  return TRUE;
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
                    || (fit->beta >= MIN_BETA && fit->beta <= MAX_BETA));
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
  double l_major = eigenvalue_for_fwhm (fit->model, fit->fwhm_major, fit->beta);
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
  shape_from_axes (fit->model, fit->fwhm_major, fit->fwhm_minor, fit->angle, fit->beta,
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
        double v = q <= q_max ? model_value (fit->model, p, dx, dy, NULL) : 0.0;
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
