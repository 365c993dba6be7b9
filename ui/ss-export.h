/* ss-export.h: writing what the window shows: FITS, PNG, convergence CSV.
 *
 * Every writer refuses to replace an existing file unless FORCE (the window
 * passes FORCE only after the user confirmed the overwrite in the file
 * chooser) and never writes over one of INPUTS (NULL-terminated, may be NULL).
 * Files appear complete or not at all (ss-output.h).
 */
#pragma once

#include "ss-job.h"
#include "ss-render.h"
#include "ss-solve-task.h"

G_BEGIN_DECLS

/* FRAME as float32 FITS: the source header's cards kept (WCS reference pixel
 * moved for a region), HISTORY of every parameter of SETTINGS and of RESULT
 * (may be NULL), and which view WHAT was written. */
gboolean ss_export_fits (const char *path, const SsFrame *frame, const SsHeader *source_header,
                         const SsSettings *settings, const SsScaling *scaling,
                         const SsSolveResult *result, const char *what, gboolean force,
                         const char *const *inputs, GError **error);

/* FRAME as PNG of BIT_DEPTH (8 or 16), row 0 at the bottom as displayed.
 * DISPLAY non-NULL: "as displayed", its stretch, limits and colour map (grey
 * through ss_png_write, a colour map as RGB); NULL: grey, linear from the
 * minimum to the maximum. */
gboolean ss_export_png (const char *path, const SsFrame *frame, const SsDisplay *display,
                        int bit_depth, gboolean force, const char *const *inputs, GError **error);

/* One line per point: solver,iteration,elapsed_s,mse,psnr_db,residual,rel_change,objective.
 * NAMES[i] labels the GArray of SsProgressPoint POINTS[i]. Never over one of
 * INPUTS (NULL-terminated, may be NULL), even with FORCE. */
gboolean ss_export_csv (const char *path, GPtrArray *names, GPtrArray *points, gboolean force,
                        const char *const *inputs, GError **error);

G_END_DECLS
