/* ss-image.c */
#include "ss-image.h"
#include "ss-error.h"
#include "ss-mem.h"

#include <math.h>
#include <string.h>

SsImage *
ss_image_new (int width, int height, int planes, GError **error)
{
  if (width <= 0 || height <= 0 || planes <= 0)
    {
      g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT,
                   "invalid image size %d×%d×%d", width, height, planes);
      return NULL;
    }
  gsize count = (gsize) width * (gsize) height;
  if (count > G_MAXSIZE / sizeof (float) / (gsize) planes)
    {
      g_set_error (error, SS_ERROR, SS_ERROR_TOO_LARGE,
                   "image size %d×%d×%d is too large", width, height, planes);
      return NULL;
    }
  float *data = ss_mem_alloc (NULL, count * (gsize) planes * sizeof (float), error);
  if (data == NULL)
    return NULL;
  SsImage *image = g_new0 (SsImage, 1);
  image->width = width;
  image->height = height;
  image->planes = planes;
  image->data = data;
  return image;
}

SsImage *
ss_image_copy (const SsImage *image)
{
  SsImage *copy = ss_image_new (image->width, image->height, image->planes, NULL);
  if (copy == NULL)
    return NULL;
  memcpy (copy->data, image->data, ss_image_plane_size (image) * image->planes * sizeof (float));
  copy->header = image->header ? ss_header_copy (image->header) : NULL;
  return copy;
}

void
ss_image_free (SsImage *image)
{
  if (image == NULL)
    return;
  ss_mem_free (NULL, image->data, 0);
  if (image->header)
    ss_header_free (image->header);
  g_free (image);
}

SsImage *
ss_image_extract_plane (const SsImage *image, int plane, GError **error)
{
  if (plane < 0 || plane >= image->planes)
    {
      g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT,
                   "plane %d does not exist (the image has %d)", plane + 1, image->planes);
      return NULL;
    }
  SsImage *out = ss_image_new (image->width, image->height, 1, error);
  if (out == NULL)
    return NULL;
  gsize n = ss_image_plane_size (image);
  memcpy (out->data, image->data + (gsize) plane * n, n * sizeof (float));
  out->header = image->header ? ss_header_copy (image->header) : NULL;
  return out;
}

gsize
ss_image_blank_non_physical (SsImage *image)
{
  gsize n = ss_image_plane_size (image) * image->planes, count = 0;
  float *data = image->data;
#pragma omp parallel for reduction(+ : count) schedule(static) if (n > SS_PARALLEL_PIXELS)
  for (gsize i = 0; i < n; i++)
    if (fabsf (data[i]) >= (float) SS_IMAGE_SENTINEL)   /* infinities too; NaN never */
      {
        data[i] = NAN;
        count++;
      }
  return count;
}

gsize
ss_image_count_nan (const SsImage *image)
{
  gsize n = ss_image_plane_size (image) * image->planes, count = 0;
  for (gsize i = 0; i < n; i++)
    count += isnan (image->data[i]) ? 1 : 0;
  return count;
}
