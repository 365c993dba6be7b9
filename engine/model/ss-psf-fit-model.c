/* ss-psf-fit-model.c: the elliptical Gaussian and Moffat profiles of the star
 * fits, their axes and widths, and the Levenberg-Marquardt fit of a profile to
 * the cutout around one star's peak (ss_psf_fit_at_peak). */
#include "ss-psf-fit.h"
#include "ss-psf-fit-private.h"
#include "ss-error.h"

#include <lapacke.h>
#include <math.h>
#include <string.h>

#define FWHM_PER_SIGMA 2.3548200450309493   /* 2 sqrt(2 ln 2) */
#define LM_MAX_ITERATIONS 200
#define LM_MAX_LAMBDA 1e12

static int
parameter_count (SsPsfModel model)
{
  return model == SS_PSF_MODEL_MOFFAT ? P_COUNT : P_COUNT - 1;
}

/* ---- the profile ---------------------------------------------------------- */

/* Profile height at (px, py) relative to the fit's centre scale; when GRAD is
 * not NULL it receives d f / d p for every parameter. */
double
ss_psf_fit_model_value (SsPsfModel model, const double *p, double px, double py, double *grad)
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

double
ss_psf_fit_eigenvalue_for_fwhm (SsPsfModel model, double fwhm, double beta)
{
  double scale = model == SS_PSF_MODEL_GAUSSIAN
                 ? fwhm / FWHM_PER_SIGMA
                 : fwhm / (2.0 * sqrt (pow (2.0, 1.0 / beta) - 1.0));
  return 1.0 / (scale * scale);
}

/* The quadratic form (a, b, c) of a profile with the given axes and angle. */
void
ss_psf_fit_shape_from_axes (SsPsfModel model, double fwhm_major, double fwhm_minor, double angle,
                            double beta, double *a, double *b, double *c)
{
  double l_major = ss_psf_fit_eigenvalue_for_fwhm (model, fwhm_major, beta);
  double l_minor = ss_psf_fit_eigenvalue_for_fwhm (model, fwhm_minor, beta);
  double co = cos (angle), si = sin (angle);
  *a = l_major * co * co + l_minor * si * si;
  *c = l_major * si * si + l_minor * co * co;
  *b = (l_major - l_minor) * co * si;
}

double
ss_psf_fit_normalise_angle (double angle)
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
  fit->angle = ss_psf_fit_normalise_angle (minor_angle + G_PI / 2);
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
  /* A PSF spec's β range (ss-psf.h): every fit can be written back as
   * moffat:FWHM,BETA and rendered. */
  if (model == SS_PSF_MODEL_MOFFAT && !ss_psf_beta_valid (p[P_BETA]))
    return FALSE;
  return TRUE;
}

static double
chi_square (SsPsfModel model, const double *p, const Cutout *cut)
{
  double sum = 0.0;
  for (int i = 0; i < cut->n; i++)
    {
      double r = ss_psf_fit_model_value (model, p, cut->px[i], cut->py[i], NULL) - cut->value[i];
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
      double r = ss_psf_fit_model_value (model, p, cut->px[i], cut->py[i], grad) - cut->value[i];
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

/* ---- one star ------------------------------------------------------------- */

/* Fits MODEL to the star whose peak pixel is (cx, cy), cutout RADIUS, from
 * the guesses SKY and FWHM. */
gboolean
ss_psf_fit_at_peak (const float *data, int w, int h, int cx, int cy, int radius, double sky,
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
  /* A blanked (clipped) centre: the highest pixel left is a start for the
   * amplitude, which the fit raises. */
  double centre = data[(gsize) cy * w + cx];
  if (!isfinite (centre))
    {
      centre = -INFINITY;
      for (int i = 0; i < cut.n; i++)
        centre = MAX (centre, cut.value[i]);
    }
  p[P_AMP] = centre - sky;
  p[P_BG] = sky;
  p[P_BETA] = beta;
  double lambda = ss_psf_fit_eigenvalue_for_fwhm (model, MAX (fwhm_guess, 1.0), beta);
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
