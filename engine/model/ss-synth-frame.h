/* ss-synth-frame.h: a synthetic camera frame, for whole-path benchmarks and tests.
 *
 * Stars (Moffat profiles, fluxes drawn from a power law), galaxies
 * (elliptical exponential discs), a sky with a linear gradient and Gaussian
 * noise of the photon and read-out kind, in ADU: what a 16-bit camera
 * writes. Deterministic in the seed.
 */
#pragma once

#include <glib.h>
#include "ss-image.h"

G_BEGIN_DECLS

typedef struct {
  int width, height;
  guint32 seed;
  double sky;          /* ADU at the frame's centre */
  double gradient;     /* ADU from one side to the other, across the diagonal */
  double star_density; /* stars per megapixel */
  double galaxy_density;
  double fwhm, beta;   /* the stars' Moffat profile */
  double read_noise;   /* ADU */
  double gain;         /* electrons per ADU: photon noise sigma = sqrt(signal / gain) */
} SsSynthParams;

void ss_synth_params_init (SsSynthParams *params, int width, int height, guint32 seed);

/* A single-plane frame in ADU, values in [0, 65535] and whole numbers (so a
 * uint16 file holds it exactly). */
SsImage *ss_synth_frame (const SsSynthParams *params, GError **error);

G_END_DECLS
