/* ss-synth.h: synthetic skies and simulated exposures, for the quality suite.
 *
 * A sky (ss_synth_sky_render) is a noiseless scene in arbitrary flux units:
 *   - point stars at whole pixels, fluxes from a power-law luminosity function
 *     N(> F) ∝ F^-slope between FLUX_MIN and FLUX_MAX (many faint, few bright);
 *   - galaxies: elliptical Sérsic profiles (index 1 = exponential disc to
 *     4 = de Vaucouleurs), sampled 4×4 per pixel so the cusp is not aliased;
 *   - a faint linear gradient (diffuse light), part of the scene to recover.
 * An exposure (ss_synth_expose) blurs a scene, scales it so that its blurred
 * peak is PEAK photo-electrons, adds a flat sky of SKY electrons, draws
 * Poisson counts and adds Gaussian read noise; GAIN is 1 (ADU = electrons).
 * Both are deterministic functions of their seeds (GRand, MT19937).
 */
#pragma once

#include <glib.h>
#include "ss-image.h"
#include "ss-psf.h"

G_BEGIN_DECLS

typedef struct {
  int width, height;
  guint32 seed;
  int stars;               /* how many point stars */
  double flux_min, flux_max, slope;
  int galaxies;            /* how many Sérsic galaxies */
  double galaxy_flux_min, galaxy_flux_max;
  double radius_min, radius_max;   /* effective radius, pixels */
  double gradient;         /* diffuse level across the field, flux per pixel */
} SsSynthSky;

/* A field of WIDTH x HEIGHT with 1 star per 200 pixels and 1 galaxy per 3000. */
void ss_synth_sky_init (SsSynthSky *sky, int width, int height, guint32 seed);
SsImage *ss_synth_sky_render (const SsSynthSky *sky, GError **error);

typedef struct {
  double peak;             /* electrons at the brightest pixel of the blurred scene */
  double sky;              /* flat sky, electrons per pixel */
  double read_noise;       /* electrons RMS */
  guint32 seed;
} SsSynthExposure;

/* Blurs SCENE (w x h, >= 0) periodically with PSF and draws one exposure;
 * returns it in electrons (sky included) with GAIN, RDNOISE, SKYLEVEL and
 * PSF cards, and in *FLUX_SCALE the electrons per scene unit. */
SsImage *ss_synth_expose (const float *scene, int width, int height, const SsPsfSpec *psf,
                          const SsSynthExposure *exposure, double *flux_scale, GError **error);

/* A Poisson deviate of mean MEAN >= 0: inversion below 10, Hörmann's PTRS
 * transformed rejection above (exact, O(1)). */
double ss_synth_poisson (GRand *rand, double mean);

/* A W x H window whose top-left corner is (X0, Y0) in IMAGE (plane 0), with
 * coordinates outside the image mirrored back in (… c b a | a b c …). */
float *ss_synth_window (const SsImage *image, int x0, int y0, int w, int h);

G_END_DECLS
