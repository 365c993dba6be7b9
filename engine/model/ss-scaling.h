/* ss-scaling.h: mapping between input units and the engine's scaled units.
 *
 * The solvers work on data scaled to about [0, 1]: scaled = (input - sky) / scale.
 * Results map back with input = scaled * scale + sky.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef enum {
  SS_SKY_NONE,
  SS_SKY_MEDIAN,
  SS_SKY_CLIPPED_MEDIAN,  /* 3-sigma clipped median */
  SS_SKY_VALUE,           /* a level given by the user */
} SsSkyMode;

typedef struct {
  double sky;
  double scale;
} SsScaling;

/* A sky value given more than this many data ranges below the data's top is
 * refused: scaled to that top, the data would keep less than a 1e-4 share
 * of float32's precision (about 1700 levels across their range). */
#define SS_SKY_MAX_DEPTH 1e4

/* Estimates sky (per MODE; VALUE uses *sky_value) and scale = max(data - sky)
 * over finite pixels; fails for an image with no finite pixel or a constant
 * one, and for a given sky value SS_SKY_MAX_DEPTH ranges below the data. */
gboolean ss_scaling_estimate (const float *data, gsize n, SsSkyMode mode, double sky_value,
                              SsScaling *scaling, GError **error);
/* out = (in - sky) / scale, optionally clamping negatives to 0; NaN stays NaN. */
void ss_scaling_apply (const SsScaling *scaling, const float *in, float *out, gsize n,
                       gboolean clamp_negative);
/* out = in * scale + sky. */
void ss_scaling_unapply (const SsScaling *scaling, const float *in, float *out, gsize n);

/* The sky SCALING subtracted, in scaled units (>= 0): what a real image's
 * scaled data must get back to be the counts as measured
 * (SsProblem.background, for Richardson–Lucy). */
double ss_scaling_background (const SsScaling *scaling);

/* Median of the finite values (the mean of the middle two for an even
 * count), NAN when none: O(n) by histogram selection (ss-select.h), on every
 * core, without copying DATA. */
double ss_median (const float *data, gsize n);
/* Median absolute deviation of the finite values about CENTRE, the same way. */
double ss_mad (const float *data, gsize n, double centre);

G_END_DECLS
