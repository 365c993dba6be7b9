/* ss-synth.c: synthetic skies and simulated exposures (see ss-synth.h). */
#include "ss-synth.h"
#include "ss-error.h"
#include "ss-model.h"

#include <math.h>

void
ss_synth_sky_init (SsSynthSky *sky, int width, int height, guint32 seed)
{
  double n = (double) width * height;
  *sky = (SsSynthSky) {
    .width = width, .height = height, .seed = seed,
    .stars = (int) (n / 200), .flux_min = 1, .flux_max = 1000, .slope = 0.7,
    .galaxies = MAX (1, (int) (n / 3000)),
    .galaxy_flux_min = 50, .galaxy_flux_max = 3000,
    .radius_min = 1.5, .radius_max = 8,
    .gradient = 0.02,
  };
}

/* A flux from N(> F) ∝ F^-slope on [min, max], by inverting the truncated CDF. */
static double
power_law_flux (GRand *rand, double min, double max, double slope)
{
  double u = g_rand_double (rand);
  double a = pow (min, -slope), b = pow (max, -slope);
  return pow (a - u * (a - b), -1.0 / slope);
}

/* Ciotti & Bertin's approximation of the Sérsic b_n (good to 1e-4 for n >= 0.36). */
static double
sersic_b (double n)
{
  return 2 * n - 1.0 / 3 + 4 / (405 * n) + 46 / (25515 * n * n);
}

typedef struct {
  double cx, cy, flux, re, index, q, angle;
} Galaxy;

/* Adds GALAXY out to 6 effective radii, 4×4 samples per pixel, periodically
 * wrapped so a galaxy near an edge keeps its flux; normalised to FLUX. */
static void
add_galaxy (float *image, int w, int h, const Galaxy *g)
{
  const int sub = 4;
  int reach = (int) ceil (6 * g->re) + 1;
  int side = 2 * reach + 1;
  g_autofree double *stamp = g_new0 (double, (gsize) side * side);
  double b = sersic_b (g->index), c = cos (g->angle), s = sin (g->angle), total = 0;
  int px0 = (int) floor (g->cx) - reach, py0 = (int) floor (g->cy) - reach;
  for (int j = 0; j < side; j++)
    for (int i = 0; i < side; i++)
      {
        double sum = 0;
        for (int sj = 0; sj < sub; sj++)
          for (int si = 0; si < sub; si++)
            {
              double dx = px0 + i + (si + 0.5) / sub - 0.5 - g->cx;
              double dy = py0 + j + (sj + 0.5) / sub - 0.5 - g->cy;
              double u = c * dx + s * dy, v = (-s * dx + c * dy) / g->q;
              double r = sqrt (u * u + v * v) / g->re;
              sum += exp (-b * (pow (r, 1.0 / g->index) - 1));
            }
        stamp[(gsize) j * side + i] = sum;
        total += sum;
      }
  for (int j = 0; j < side; j++)
    for (int i = 0; i < side; i++)
      {
        int x = ((px0 + i) % w + w) % w, y = ((py0 + j) % h + h) % h;
        image[(gsize) y * w + x] += (float) (g->flux * stamp[(gsize) j * side + i] / total);
      }
}

SsImage *
ss_synth_sky_render (const SsSynthSky *sky, GError **error)
{
  SsImage *image = ss_image_new (sky->width, sky->height, 1, error);
  if (image == NULL)
    return NULL;
  int w = sky->width, h = sky->height;
  g_autoptr (GRand) rand = g_rand_new_with_seed (sky->seed);
  float *data = image->data;

  /* The gradient runs along a random direction, 0 at one corner. */
  double angle = g_rand_double_range (rand, 0, 2 * G_PI);
  double gx = cos (angle) / w, gy = sin (angle) / h;
  double low = MIN (0, gx * (w - 1)) + MIN (0, gy * (h - 1));
  double high = MAX (0, gx * (w - 1)) + MAX (0, gy * (h - 1));
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++)
      data[(gsize) y * w + x] = (float) (sky->gradient * (gx * x + gy * y - low) / (high - low));

  for (int k = 0; k < sky->galaxies; k++)
    {
      Galaxy g = {
        .cx = g_rand_double_range (rand, 0, w), .cy = g_rand_double_range (rand, 0, h),
        .flux = power_law_flux (rand, sky->galaxy_flux_min, sky->galaxy_flux_max, 1.0),
        .re = exp (g_rand_double_range (rand, log (sky->radius_min), log (sky->radius_max))),
        .index = g_rand_double_range (rand, 0.7, 4.0),
        .q = g_rand_double_range (rand, 0.3, 1.0),
        .angle = g_rand_double_range (rand, 0, G_PI),
      };
      add_galaxy (data, w, h, &g);
    }
  for (int k = 0; k < sky->stars; k++)
    {
      int x = g_rand_int_range (rand, 0, w), y = g_rand_int_range (rand, 0, h);
      data[(gsize) y * w + x] += (float) power_law_flux (rand, sky->flux_min, sky->flux_max,
                                                         sky->slope);
    }
  return image;
}

/* log(k!) through lgamma: what PTRS's acceptance test needs. */
static double
log_factorial (double k)
{
  return lgamma (k + 1);
}

double
ss_synth_poisson (GRand *rand, double mean)
{
  if (!(mean > 0))
    return 0;
  if (mean < 10)
    {
      /* Inversion: walk the CDF from 0; cheap for small means. */
      double u = g_rand_double (rand), p = exp (-mean), cdf = p;
      int k = 0;
      while (u > cdf && k < 1000)
        {
          k++;
          p *= mean / k;
          cdf += p;
        }
      return k;
    }
  /* Hörmann (1993), "The transformed rejection method for generating Poisson
   * random variables", algorithm PTRS. */
  double slam = sqrt (mean), loglam = log (mean);
  double b = 0.931 + 2.53 * slam, a = -0.059 + 0.02483 * b;
  double inv_alpha = 1.1239 + 1.1328 / (b - 3.4), vr = 0.9277 - 3.6224 / (b - 2);
  for (;;)
    {
      double u = g_rand_double (rand) - 0.5, v = g_rand_double (rand);
      double us = 0.5 - fabs (u);
      double k = floor ((2 * a / us + b) * u + mean + 0.43);
      if (us >= 0.07 && v <= vr)
        return k;
      if (k < 0 || (us < 0.013 && v > us))
        continue;
      if (log (v) + log (inv_alpha) - log (a / (us * us) + b)
          <= -mean + k * loglam - log_factorial (k))
        return k;
    }
}

SsImage *
ss_synth_expose (const float *scene, int w, int h, const SsPsfSpec *psf,
                 const SsSynthExposure *exposure, double *flux_scale, GError **error)
{
  g_autoptr (SsOperator) op = ss_operator_new_blur (psf, NULL, w, h, error);
  if (op == NULL)
    return NULL;
  g_autoptr (SsImage) out = ss_image_new (w, h, 1, error);
  if (out == NULL || !ss_operator_apply (op, scene, out->data, error))
    return NULL;
  gsize n = (gsize) w * h;
  double top = 0;
  for (gsize i = 0; i < n; i++)
    top = MAX (top, out->data[i]);
  if (!(top > 0))
    {
      g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT, "the scene is empty");
      return NULL;
    }
  double scale = exposure->peak / top;
  g_autoptr (GRand) rand = g_rand_new_with_seed (exposure->seed);
  for (gsize i = 0; i < n; i++)
    {
      /* The blur of a non-negative scene is non-negative up to FFT rounding. */
      double mean = MAX (out->data[i], 0) * scale + exposure->sky;
      double counts = ss_synth_poisson (rand, mean);
      double read = exposure->read_noise > 0 ? g_rand_double (rand) : 0;
      /* Box–Muller from two uniforms: GRand has no Gaussian. */
      if (exposure->read_noise > 0)
        read = exposure->read_noise * sqrt (-2 * log (1 - read))
               * cos (2 * G_PI * g_rand_double (rand));
      out->data[i] = (float) (counts + read);
    }
  out->header = ss_header_new ();
  g_autofree char *psf_text = ss_psf_spec_to_string (psf);
  ss_header_set_double (out->header, "GAIN", 1.0, "electrons per ADU");
  ss_header_set_double (out->header, "RDNOISE", exposure->read_noise, "read noise, electrons");
  ss_header_set_double (out->header, "SKYLEVEL", exposure->sky, "flat sky, electrons/pixel");
  ss_header_set_double (out->header, "PEAK", exposure->peak, "blurred peak above sky, e-");
  ss_header_set_string (out->header, "PSF", psf_text, "blur, pixels");
  if (flux_scale)
    *flux_scale = scale;
  return g_steal_pointer (&out);
}

/* Reflects I into [0, N) as … c b a | a b c … does, for any I. */
static int
mirror_index (int i, int n)
{
  int period = 2 * n;
  i %= period;
  if (i < 0)
    i += period;
  return i < n ? i : period - 1 - i;
}

float *
ss_synth_window (const SsImage *image, int x0, int y0, int w, int h)
{
  float *out = g_new (float, (gsize) w * h);
  for (int y = 0; y < h; y++)
    {
      int sy = mirror_index (y0 + y, image->height);
      for (int x = 0; x < w; x++)
        out[(gsize) y * w + x]
          = image->data[(gsize) sy * image->width + mirror_index (x0 + x, image->width)];
    }
  return out;
}
