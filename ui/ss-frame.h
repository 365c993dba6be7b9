/* ss-frame.h: one displayable plane of pixels, shared read-only between threads.
 *
 * A frame is what the image view draws and what the window hands between its
 * views: a float image in input units (NaN = blank), reference counted so the
 * render thread, the solver thread and the widgets can hold it without copies.
 * It is never modified after it has been handed to anyone.
 *
 * A frame may hold fewer pixels than the region it shows (a reduced live
 * preview): LOGICAL_WIDTH x LOGICAL_HEIGHT is the region's size in image
 * pixels, WIDTH x HEIGHT the pixels stored. X0, Y0 place the region in the full
 * input image (row 0 is the first FITS row, shown at the bottom).
 */
#pragma once

#include <glib-object.h>

G_BEGIN_DECLS

typedef struct {
  int width, height;                 /* pixels stored */
  int logical_width, logical_height; /* image pixels the frame covers */
  int x0, y0;                        /* offset of the region in the full image */
  float *data;                       /* width * height floats, row-major */
  /*< private >*/
  gint ref_count;
} SsFrame;

#define SS_TYPE_FRAME (ss_frame_get_type ())
GType ss_frame_get_type (void);

/* A zero-filled frame covering a region of its own size at (0, 0); NULL with
 * SS_ERROR_OUT_OF_MEMORY or SS_ERROR_INVALID_ARGUMENT instead of aborting. */
SsFrame *ss_frame_new (int width, int height, GError **error);
/* A frame holding a copy of DATA (width * height floats). */
SsFrame *ss_frame_new_copy (const float *data, int width, int height, GError **error);

SsFrame *ss_frame_ref (SsFrame *frame);
void ss_frame_unref (SsFrame *frame);

static inline gsize
ss_frame_n_pixels (const SsFrame *frame)
{
  return (gsize) frame->width * (gsize) frame->height;
}

/* Places the frame as region (X0, Y0, LOGICAL_WIDTH x LOGICAL_HEIGHT) of the image. */
void ss_frame_set_region (SsFrame *frame, int x0, int y0, int logical_width, int logical_height);

/* The value shown at region pixel (COL, ROW) (row 0 = bottom), looked up in
 * the stored pixels; NAN outside the region. */
float ss_frame_value_at (const SsFrame *frame, int col, int row);

/* A new frame holding the COL0, ROW0, W x H part (stored pixels == region
 * pixels required); its region offset is the parent's plus (COL0, ROW0). */
SsFrame *ss_frame_crop (const SsFrame *frame, int col0, int row0, int width, int height,
                        GError **error);

/* TRUE when both frames hold the same stored pixels bit for bit. */
gboolean ss_frame_equal_pixels (const SsFrame *a, const SsFrame *b);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SsFrame, ss_frame_unref)

G_END_DECLS
