/* ss-psf-fit-private.h: what the star fits share between ss-psf-fit.c (entry
 * points, combining, rendering), ss-psf-fit-model.c (the profile and the
 * least-squares fit) and ss-psf-fit-stars.c (first guesses and the search). */
#pragma once

#include <glib.h>
#include "ss-psf-fit.h"
#include "ss-saturation.h"

G_BEGIN_DECLS

/* The peak search near a click and the fit's check of how far the centre moved. */
#define SEARCH_RADIUS 3        /* pixels around a click where the peak is looked for */
/* Parameter vector layout. */
enum { P_AMP, P_X, P_Y, P_BG, P_A, P_B, P_C, P_BETA, P_COUNT };

/* Profile value at (px, py) for the parameters P; GRAD, if not NULL, gets d f / d p. */
double ss_psf_fit_model_value (SsPsfModel model, const double *p, double px, double py,
                               double *grad);

/* Eigenvalue of the quadratic form for a profile of FWHM along that axis. */
double ss_psf_fit_eigenvalue_for_fwhm (SsPsfModel model, double fwhm, double beta);

/* The quadratic form (a, b, c) of a profile with the given axes and angle. */
void ss_psf_fit_shape_from_axes (SsPsfModel model, double fwhm_major, double fwhm_minor,
                                 double angle, double beta, double *a, double *b, double *c);

/* ANGLE brought into (-pi/2, pi/2]. */
double ss_psf_fit_normalise_angle (double angle);

/* Fits MODEL to the star with peak pixel (cx, cy) in a cutout of RADIUS. */
gboolean ss_psf_fit_at_peak (const float *data, int w, int h, int cx, int cy, int radius,
                             double sky, double fwhm_guess, SsPsfModel model, SsPsfFit *fit,
                             GError **error);

/* The highest finite pixel within SEARCH_RADIUS of (x, y). */
gboolean ss_psf_fit_find_peak_near (const float *data, int w, int h, double x, double y,
                                    int *px, int *py);

/* Sky, noise and FWHM guesses around the peak (cx, cy). */
gboolean ss_psf_fit_first_guess (const float *data, int w, int h, int cx, int cy,
                                 double *sky, double *noise, double *fwhm);

/* The level star fits take as saturated when none is given: what
 * --saturation auto resolves from HEADER and DATA (WIDTH × HEIGHT, as
 * read): the SATURATE or SATLEVEL card, else a flat top at the maximum
 * (either ignored if it would clip more than half the pixels); INFINITY
 * when none, *SOURCE saying which. */
double ss_psf_fit_saturation_level_of (const SsHeader *header, const float *data, int width,
                                       int height, SsSaturationSource *source);

/* Radius of the cutout fitted to a star of FWHM. */
int ss_psf_fit_cutout_radius_for (double fwhm);

G_END_DECLS
