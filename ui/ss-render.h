/* ss-render.h: turning a frame into display pixels (stretch, limits, colour map).
 *
 * Pure functions, safe on any thread: the image view runs them in a worker so
 * that stretching a large image never stalls the main loop. The stretch itself
 * is the engine's (ss_stretch_apply in ss-png.h), so the PNG export "as
 * displayed" and the screen agree; zscale limits (IRAF's, as DS9 offers) are
 * computed here.
 */
#pragma once

#include <cairo.h>
#include "ss-png.h"
#include "ss-frame.h"

G_BEGIN_DECLS

typedef enum {
  SS_LIMITS_MINMAX,
  SS_LIMITS_99_5,     /* percentile limits: the central 99.5 % of the pixels */
  SS_LIMITS_99,
  SS_LIMITS_95,
  SS_LIMITS_ZSCALE,
} SsLimits;

typedef enum {
  SS_COLORMAP_GREY,
  SS_COLORMAP_VIRIDIS,
} SsColormap;

typedef struct {
  SsStretch stretch;
  SsLimits limits;
  SsColormap colormap;
} SsDisplay;

void ss_display_init (SsDisplay *display);  /* asinh, 99.5 %, grey */

/* The percentiles (0..100) of a percentile or min/max choice; FALSE for zscale. */
gboolean ss_limits_percentiles (SsLimits limits, double *low_percent, double *high_percent);

/* IRAF's zscale limits of the finite values among N: a line fitted to a
 * sorted sample of at most 1000 pixels with iterative rejection, its slope
 * divided by the contrast 0.25. FALSE when there is no finite pixel. */
gboolean ss_zscale (const float *data, gsize n, double *z1, double *z2);

/* Maps the frame's stored pixels to [0, 1] per DISPLAY's stretch and limits
 * (NaN stays NaN); LOW/HIGH receive the limits in input units. Returns NULL
 * when memory runs out. */
float *ss_render_normalise (const SsFrame *frame, const SsDisplay *display,
                            double *low, double *high);

/* One colour-mapped RGB pixel for a value in [0, 1]; NaN (blank) gives a muted blue. */
void ss_colormap_rgb (SsColormap colormap, float value, guint8 rgb[3]);
/* The same colour at 16 bits a channel (for 16-bit PNG export). */
void ss_colormap_rgb16 (SsColormap colormap, float value, guint16 rgb[3]);

/* The frame as a cairo RGB24 surface, row 0 at the bottom (DS9's
 * orientation), at most MAX_SIDE pixels on a side (box-reduced beyond).
 * NULL with an error when the surface cannot be made. */
cairo_surface_t *ss_render_surface (const SsFrame *frame, const SsDisplay *display,
                                    int max_side, double *low, double *high, GError **error);

G_END_DECLS
