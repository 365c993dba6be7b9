/* ss-star-fit.h: measuring the PSF from stars of an open image, off the main
 * thread.
 *
 * The app's two ways, the CLI's two options: one star the user clicked
 * (--psf-from-star X,Y: ss_psf_fit_star near that pixel) or the brightest
 * isolated unsaturated stars found automatically (--psf auto:
 * ss_psf_find_stars). A large image's search takes a while, so both run in a
 * GTask; the frame is only read.
 */
#pragma once

#include <gio/gio.h>
#include "ss-frame.h"
#include "ss-psf-fit.h"

G_BEGIN_DECLS

/* Fits MODEL to the star nearest (COL, ROW) (full-image pixels from 0, row 0
 * at the bottom) of FRAME, which must be the whole image, leaving its
 * saturated pixels out (HEADER, may be NULL, the input's: its SATURATE or
 * SATLEVEL card, else a flat top at the maximum; ss_psf_fit_saturation_for). */
void ss_star_fit_at_async (SsFrame *frame, const SsHeader *header, int col, int row,
                           SsPsfModel model, GCancellable *cancellable,
                           GAsyncReadyCallback callback, gpointer user_data);
/* Finds and fits the brightest isolated unsaturated stars of FRAME; HEADER
 * (may be NULL), the input's, gives the saturation level when it has a
 * SATURATE or SATLEVEL card (ss-psf-fit.h). Cancelling CANCELLABLE stops the
 * worker at the search's next look at it (ss_psf_find_stars), and the
 * result is G_IO_ERROR_CANCELLED. */
void ss_star_fit_search_async (SsFrame *frame, const SsHeader *header, SsPsfModel model,
                               GCancellable *cancellable, GAsyncReadyCallback callback,
                               gpointer user_data);
/* The fit (for a search: the combination). N_STARS (may be NULL): how many
 * stars it measured, 1 for a click. */
gboolean ss_star_fit_finish (GAsyncResult *result, SsPsfFit *fit, int *n_stars,
                             GError **error);

G_END_DECLS
