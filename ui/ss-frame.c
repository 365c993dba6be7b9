/* ss-frame.c: reference-counted planes of float pixels for display. */
#include "ss-frame.h"
#include "ss-error.h"

#include <math.h>
#include <string.h>

G_DEFINE_BOXED_TYPE (SsFrame, ss_frame, ss_frame_ref, ss_frame_unref)

SsFrame *
ss_frame_new (int width, int height, GError **error)
{
  if (width <= 0 || height <= 0)
    {
      g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT,
                   "image size %d×%d is not positive", width, height);
      return NULL;
    }
  /* g_try_malloc0_n so that a huge image is an error message, not an abort. */
  float *data = g_try_malloc0_n ((gsize) width * (gsize) height, sizeof (float));
  if (data == NULL)
    {
      g_set_error (error, SS_ERROR, SS_ERROR_OUT_OF_MEMORY,
                   "not enough memory for a %d×%d image", width, height);
      return NULL;
    }
  SsFrame *frame = g_new0 (SsFrame, 1);
  frame->width = frame->logical_width = width;
  frame->height = frame->logical_height = height;
  frame->data = data;
  frame->ref_count = 1;
  return frame;
}

SsFrame *
ss_frame_new_copy (const float *data, int width, int height, GError **error)
{
  SsFrame *frame = ss_frame_new (width, height, error);
  if (frame != NULL)
    memcpy (frame->data, data, ss_frame_n_pixels (frame) * sizeof (float));
  return frame;
}

SsFrame *
ss_frame_ref (SsFrame *frame)
{
  g_return_val_if_fail (frame != NULL, NULL);
  g_atomic_int_inc (&frame->ref_count);
  return frame;
}

void
ss_frame_unref (SsFrame *frame)
{
  if (frame == NULL)
    return;
  if (g_atomic_int_dec_and_test (&frame->ref_count))
    {
      g_free (frame->data);
      g_free (frame);
    }
}

void
ss_frame_set_region (SsFrame *frame, int x0, int y0, int logical_width, int logical_height)
{
  frame->x0 = x0;
  frame->y0 = y0;
  frame->logical_width = MAX (logical_width, 1);
  frame->logical_height = MAX (logical_height, 1);
}

float
ss_frame_value_at (const SsFrame *frame, int col, int row)
{
  if (col < 0 || row < 0 || col >= frame->logical_width || row >= frame->logical_height)
    return NAN;
  /* A reduced preview: the stored pixel whose block covers (col, row). */
  int px = (int) ((gint64) col * frame->width / frame->logical_width);
  int py = (int) ((gint64) row * frame->height / frame->logical_height);
  return frame->data[(gsize) py * frame->width + px];
}

SsFrame *
ss_frame_crop (const SsFrame *frame, int col0, int row0, int width, int height, GError **error)
{
  if (frame->width != frame->logical_width || frame->height != frame->logical_height
      || col0 < 0 || row0 < 0 || width <= 0 || height <= 0
      || col0 + width > frame->width || row0 + height > frame->height)
    {
      g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT,
                   "region %d×%d at (%d, %d) is not inside the %d×%d image",
                   width, height, col0, row0, frame->width, frame->height);
      return NULL;
    }
  SsFrame *crop = ss_frame_new (width, height, error);
  if (crop == NULL)
    return NULL;
  for (int r = 0; r < height; r++)
    memcpy (crop->data + (gsize) r * width,
            frame->data + (gsize) (row0 + r) * frame->width + col0,
            (gsize) width * sizeof (float));
  ss_frame_set_region (crop, frame->x0 + col0, frame->y0 + row0, width, height);
  return crop;
}

gboolean
ss_frame_equal_pixels (const SsFrame *a, const SsFrame *b)
{
  return a->width == b->width && a->height == b->height
         && memcmp (a->data, b->data, ss_frame_n_pixels (a) * sizeof (float)) == 0;
}
