/* ss-image.h: a float32 image, one or more planes, plus the header it came with.
 *
 * Pixels are row-major; row 0 is the first row stored in the FITS file (the
 * display puts it at the bottom, as DS9 does). Planes are stored one after
 * another. Blank pixels (FITS BLANK, NaN) are NaN.
 */
#pragma once

#include <glib.h>
#include "ss-header.h"

G_BEGIN_DECLS

typedef struct {
  int width;
  int height;
  int planes;          /* 1 for a plain image, 3 for colour, N for a cube plane set */
  float *data;         /* planes * height * width floats, 64-byte aligned */
  SsHeader *header;    /* cards of the source HDU, or NULL */
} SsImage;

/* Zero-filled image. Returns NULL with SS_ERROR_INVALID_ARGUMENT for a
 * non-positive size and SS_ERROR_OUT_OF_MEMORY when the pixels cannot be had. */
SsImage *ss_image_new (int width, int height, int planes, GError **error);
SsImage *ss_image_copy (const SsImage *image);
void ss_image_free (SsImage *image);

static inline gsize
ss_image_plane_size (const SsImage *image)
{
  return (gsize) image->width * (gsize) image->height;
}

static inline float *
ss_image_plane (SsImage *image, int plane)
{
  return image->data + (gsize) plane * ss_image_plane_size (image);
}

/* A new single-plane image holding a copy of one plane (header copied too). */
SsImage *ss_image_extract_plane (const SsImage *image, int plane, GError **error);

/* Count of NaN pixels over all planes. */
gsize ss_image_count_nan (const SsImage *image);

/* Pixel values at or beyond this magnitude are bad-pixel flags, not light
 * in any unit (IRAF's INDEF is 1.6e38; -3e38 and ±1e30 are written by
 * other software): one of them would set the image's scale and leave every
 * other pixel near 0, and the solvers' iterates overflow. */
#define SS_IMAGE_SENTINEL 1e30

/* Sets every infinite pixel and every one of magnitude SS_IMAGE_SENTINEL
 * or more (over all planes) to NaN, a blank; returns how many. */
gsize ss_image_blank_non_physical (SsImage *image);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (SsImage, ss_image_free)

G_END_DECLS
