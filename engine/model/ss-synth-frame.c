/* ss-synth-frame.c: the synthetic camera frame of ss-synth.h. */
#include "ss-synth-frame.h"
#include "ss-error.h"

#include <math.h>

void
ss_synth_params_init (SsSynthParams *params, int width, int height, guint32 seed)
{
  params->width = width;
  params->height = height;
  params->seed = seed;
  params->sky = 1200.0;
  params->gradient = 300.0;
  params->star_density = 400.0;
  params->galaxy_density = 20.0;
  params->fwhm = 3.5;
  params->beta = 2.5;
  params->read_noise = 5.0;
  params->gain = 1.5;
}

/* A counter-based generator: every pixel draws from its own index, so the
 * noise pass runs on any number of threads and stays deterministic. */
static inline guint64
mix64 (guint64 x)
{
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

static inline double
unit_open (guint64 bits)
{
  return ((double) (bits >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

static inline double
normal_at (guint64 key)
{
  double u1 = unit_open (mix64 (key)), u2 = unit_open (mix64 (key ^ 0x5851f42d4c957f2dull));
  return sqrt (-2.0 * log (u1)) * cos (2.0 * G_PI * u2);
}

/* Adds FLUX spread as a Moffat profile centred at (CX, CY) within RADIUS. */
static void
add_moffat (float *data, int w, int h, double cx, double cy, double flux, double fwhm,
            double beta, int radius)
{
  double alpha = fwhm / (2.0 * sqrt (pow (2.0, 1.0 / beta) - 1.0));
  double peak = flux * (beta - 1.0) / (G_PI * alpha * alpha);
  int x0 = MAX ((int) cx - radius, 0), x1 = MIN ((int) cx + radius, w - 1);
  int y0 = MAX ((int) cy - radius, 0), y1 = MIN ((int) cy + radius, h - 1);
  for (int y = y0; y <= y1; y++)
    for (int x = x0; x <= x1; x++)
      {
        double r2 = ((x - cx) * (x - cx) + (y - cy) * (y - cy)) / (alpha * alpha);
        data[(gsize) y * w + x] += (float) (peak * pow (1.0 + r2, -beta));
      }
}

/* Adds an elliptical exponential disc of FLUX, scale length SCALE, axis
 * ratio Q and position angle THETA, out to five scale lengths. */
static void
add_galaxy (float *data, int w, int h, double cx, double cy, double flux, double scale,
            double q, double theta)
{
  int radius = (int) ceil (5.0 * scale);
  double peak = flux / (2.0 * G_PI * scale * scale * q);
  double c = cos (theta), s = sin (theta);
  int x0 = MAX ((int) cx - radius, 0), x1 = MIN ((int) cx + radius, w - 1);
  int y0 = MAX ((int) cy - radius, 0), y1 = MIN ((int) cy + radius, h - 1);
  for (int y = y0; y <= y1; y++)
    for (int x = x0; x <= x1; x++)
      {
        double dx = x - cx, dy = y - cy;
        double u = c * dx + s * dy, v = (-s * dx + c * dy) / q;
        data[(gsize) y * w + x] += (float) (peak * exp (-sqrt (u * u + v * v) / scale));
      }
}

static void
add_sources (float *data, const SsSynthParams *p)
{
  int w = p->width, h = p->height;
  double megapixels = (double) w * h / 1e6;
  g_autoptr (GRand) rng = g_rand_new_with_seed (p->seed);
  int stars = (int) ceil (p->star_density * megapixels);
  int radius = (int) ceil (8.0 * p->fwhm);
  for (int i = 0; i < stars; i++)
    {
      double x = g_rand_double_range (rng, 0, w), y = g_rand_double_range (rng, 0, h);
      /* dN/dF ~ F^-2 between 200 and 2e6 ADU: many faint, a few saturating. */
      double flux = 200.0 / (1.0 - g_rand_double (rng) * (1.0 - 1e-4));
      add_moffat (data, w, h, x, y, flux, p->fwhm, p->beta, radius);
    }
  int galaxies = (int) ceil (p->galaxy_density * megapixels);
  for (int i = 0; i < galaxies; i++)
    {
      double x = g_rand_double_range (rng, 0, w), y = g_rand_double_range (rng, 0, h);
      double scale = g_rand_double_range (rng, 2.0, 12.0);
      double flux = g_rand_double_range (rng, 2e3, 2e5);
      add_galaxy (data, w, h, x, y, flux, scale, g_rand_double_range (rng, 0.3, 1.0),
                  g_rand_double_range (rng, 0, G_PI));
    }
}

/* Sky, noise, rounding and clipping to the 16-bit range, per pixel. */
static void
add_sky_and_noise (float *data, const SsSynthParams *p)
{
  int w = p->width, h = p->height;
  guint64 key = mix64 (p->seed ^ 0xa0761d6478bd642full);
  double norm = 1.0 / (double) MAX (w + h - 2, 1);
#pragma omp parallel for schedule(static)
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++)
      {
        gsize i = (gsize) y * w + x;
        double sky = p->sky + p->gradient * ((x + y) * norm - 0.5);
        double signal = data[i] + sky;
        double sigma = sqrt (signal / p->gain + p->read_noise * p->read_noise);
        double value = rint (signal + sigma * normal_at (key + i));
        data[i] = (float) CLAMP (value, 0.0, 65535.0);
      }
}

SsImage *
ss_synth_frame (const SsSynthParams *params, GError **error)
{
  if (params->fwhm <= 0 || params->beta <= 1 || params->gain <= 0)
    {
      g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT,
                   "synthetic frame: FWHM and gain must be > 0 and beta > 1");
      return NULL;
    }
  SsImage *image = ss_image_new (params->width, params->height, 1, error);
  if (image == NULL)
    return NULL;
  add_sources (image->data, params);
  add_sky_and_noise (image->data, params);
  return image;
}
