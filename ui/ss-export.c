/* ss-export.c: FITS, PNG and CSV output of the window's results. */
#include "ss-export.h"
#include "ss-output.h"

#include <gdk/gdk.h>

#include <math.h>
#include <string.h>

static SsImage *
image_from_frame (const SsFrame *frame, GError **error)
{
  SsImage *image = ss_image_new (frame->width, frame->height, 1, error);
  if (image != NULL)
    memcpy (image->data, frame->data, ss_frame_n_pixels (frame) * sizeof (float));
  return image;
}

/* A region's pixel (1,1) is the full image's (x0+1, y0+1): shift the WCS
 * reference pixel so that sky coordinates stay right. */
static void
shift_reference_pixel (SsHeader *header, const SsFrame *frame)
{
  double crpix;
  if (frame->x0 != 0 && ss_header_get_double (header, "CRPIX1", &crpix))
    ss_header_set_double (header, "CRPIX1", crpix - frame->x0, "reference pixel (region)");
  if (frame->y0 != 0 && ss_header_get_double (header, "CRPIX2", &crpix))
    ss_header_set_double (header, "CRPIX2", crpix - frame->y0, "reference pixel (region)");
}

static void
add_result_history (SsHeader *header, const SsScaling *scaling, const SsSolveResult *result)
{
  if (scaling)
    ss_header_add_history (header, "scaling: sky = %.9g, scale = %.9g (input = x*scale+sky)",
                           scaling->sky, scaling->scale);
  if (result == NULL)
    return;
  ss_header_add_history (header, "result: %d iterations in %.3f s on %s (%s)", result->iterations,
                         result->seconds, result->backend ? result->backend : "?",
                         result->device ? result->device : "?");
  if (isfinite (result->mse))
    ss_header_add_history (header, "result: mse = %.6g, psnr = %.4g dB", result->mse,
                           result->psnr);
  ss_header_add_history (header, "result: residual = %.6g, objective = %.6g", result->residual,
                         result->objective);
  g_autofree char *holdout = ss_solve_result_describe_holdout (result);
  if (holdout != NULL)
    ss_header_add_history (header, "result: %s", holdout);
  if (result->warning)
    ss_header_add_history (header, "warning: %s", result->warning);
}

/* A reduced live preview is no result: written at its size it would pass
 * for the image, smaller. */
static gboolean
check_full_frame (const SsFrame *frame, GError **error)
{
  if (frame->width == frame->logical_width && frame->height == frame->logical_height)
    return TRUE;
  g_set_error (error, SS_ERROR, SS_ERROR_UNSUPPORTED,
               "this view is a reduced preview (a run in progress, or stopped before it "
               "finished); export it after a run that has finished");
  return FALSE;
}

gboolean
ss_export_fits (const char *path, const SsFrame *frame, const SsHeader *source_header,
                const SsSettings *settings, const SsScaling *scaling,
                const SsSolveResult *result, const char *what, gboolean force,
                const char *const *inputs, GError **error)
{
  if (!check_full_frame (frame, error))
    return FALSE;
  g_autoptr (SsImage) image = image_from_frame (frame, error);
  if (image == NULL)
    return FALSE;
  image->header = source_header ? ss_header_copy (source_header) : ss_header_new ();
  shift_reference_pixel (image->header, frame);
  /* A result's values are not clipped where the input's were. */
  if (result != NULL)
    ss_saturation_drop_cards (image->header);
  if (frame->x0 != 0 || frame->y0 != 0 || settings->use_roi)
    ss_header_add_history (image->header,
                           "region of the input: %dx%d from pixel x=%d y=%d (1-based)",
                           frame->width, frame->height, frame->x0 + 1, frame->y0 + 1);
  ss_header_add_history (image->header, "image = %s", what ? what : "recovered");
  ss_settings_add_history (settings, image->header);
  add_result_history (image->header, scaling, result);
  return ss_fits_write (image, path, force, inputs, error);
}

/* The colour-mapped picture as an RGB texture, 8 or 16 bits a channel,
 * row 0 at the bottom as on screen. */
static GdkTexture *
colour_texture (const SsFrame *frame, const SsDisplay *display, int bit_depth)
{
  g_autofree float *norm = ss_render_normalise (frame, display, NULL, NULL);
  if (norm == NULL)
    return NULL;
  int w = frame->width, h = frame->height;
  gsize channel_bytes = bit_depth == 16 ? 2 : 1;
  gsize stride = (gsize) w * 3 * channel_bytes;
  guint8 *pixels = g_try_malloc (stride * (gsize) h);
  if (pixels == NULL)
    return NULL;
  for (int row = 0; row < h; row++)
    {
      guint8 *line = pixels + (gsize) (h - 1 - row) * stride;
      for (int col = 0; col < w; col++)
        {
          float v = norm[(gsize) row * w + col];
          if (bit_depth == 16)
            ss_colormap_rgb16 (display->colormap, v, (guint16 *) line + (gsize) col * 3);
          else
            ss_colormap_rgb (display->colormap, v, line + (gsize) col * 3);
        }
    }
  g_autoptr (GBytes) bytes = g_bytes_new_take (pixels, stride * (gsize) h);
  return gdk_memory_texture_new (w, h, bit_depth == 16 ? GDK_MEMORY_R16G16B16 : GDK_MEMORY_R8G8B8,
                                 bytes, stride);
}

static gboolean
write_colour_png (const char *path, const SsFrame *frame, const SsDisplay *display,
                  int bit_depth, gboolean force, const char *const *inputs, GError **error)
{
  if (!ss_output_check (path, force, inputs, error))
    return FALSE;
  g_autoptr (GdkTexture) texture = colour_texture (frame, display, bit_depth);
  if (texture == NULL)
    {
      g_set_error (error, SS_ERROR, SS_ERROR_OUT_OF_MEMORY, "%s: out of memory for the PNG", path);
      return FALSE;
    }
  g_autofree char *temp = ss_output_temp_path (path);
  if (!gdk_texture_save_to_png (texture, temp))
    {
      ss_output_abort (temp);
      g_set_error (error, SS_ERROR, SS_ERROR_IO, "%s: the PNG could not be written", path);
      return FALSE;
    }
  if (!ss_output_commit (temp, path, error))
    {
      ss_output_abort (temp);
      return FALSE;
    }
  return TRUE;
}

gboolean
ss_export_png (const char *path, const SsFrame *frame, const SsDisplay *display, int bit_depth,
               gboolean force, const char *const *inputs, GError **error)
{
  if (!check_full_frame (frame, error))
    return FALSE;
  if (display != NULL && display->colormap != SS_COLORMAP_GREY)
    return write_colour_png (path, frame, display, bit_depth == 16 ? 16 : 8, force, inputs,
                             error);

  g_autoptr (SsImage) image = image_from_frame (frame, error);
  if (image == NULL)
    return FALSE;
  SsPngWriteOptions options;
  ss_png_write_options_init (&options);
  options.bit_depth = bit_depth == 16 ? 16 : 8;
  options.flip_vertical = TRUE;
  if (display == NULL)
    {
      options.stretch = SS_STRETCH_LINEAR;
      options.low_percent = 0;
      options.high_percent = 100;
    }
  else
    {
      options.stretch = display->stretch;
      if (!ss_limits_percentiles (display->limits, &options.low_percent, &options.high_percent))
        {
          /* zscale: clamp to its limits, as the screen does (ss-render.c). */
          double z1, z2;
          if (ss_zscale (image->data, ss_frame_n_pixels (frame), &z1, &z2))
            for (gsize i = 0; i < ss_frame_n_pixels (frame); i++)
              if (!isnan (image->data[i]))
                image->data[i] = (float) CLAMP (image->data[i], z1, z2);
          options.low_percent = 0;
          options.high_percent = 100;
        }
    }
  return ss_png_write (image, path, &options, force, inputs, error);
}

static void
append_number (GString *line, double value)
{
  char buffer[G_ASCII_DTOSTR_BUF_SIZE];
  g_string_append_c (line, ',');
  if (isfinite (value))
    g_string_append (line, g_ascii_formatd (buffer, sizeof buffer, "%.9g", value));
}

static char *
csv_field (const char *text)
{
  /* Quote names holding a separator or a quote (RFC 4180). */
  if (strpbrk (text, ",\"\n") == NULL)
    return g_strdup (text);
  GString *quoted = g_string_new ("\"");
  for (const char *p = text; *p; p++)
    {
      if (*p == '"')
        g_string_append_c (quoted, '"');
      g_string_append_c (quoted, *p);
    }
  g_string_append_c (quoted, '"');
  return g_string_free (quoted, FALSE);
}

gboolean
ss_export_csv (const char *path, GPtrArray *names, GPtrArray *points, gboolean force,
               const char *const *inputs, GError **error)
{
  if (!ss_output_check (path, force, inputs, error))
    return FALSE;
  GString *text = g_string_new ("solver,iteration,elapsed_s,mse,psnr_db,residual,rel_change,"
                                "objective\n");
  for (guint k = 0; k < points->len && k < names->len; k++)
    {
      GArray *series = g_ptr_array_index (points, k);
      g_autofree char *name = csv_field (g_ptr_array_index (names, k));
      for (guint i = 0; series && i < series->len; i++)
        {
          const SsProgressPoint *p = &g_array_index (series, SsProgressPoint, i);
          g_string_append_printf (text, "%s,%d", name, p->iteration);
          append_number (text, p->elapsed);
          append_number (text, p->mse);
          append_number (text, p->psnr);
          append_number (text, p->residual);
          append_number (text, p->rel_change);
          append_number (text, p->objective);
          g_string_append_c (text, '\n');
        }
    }
  gboolean ok = ss_output_write_text (path, text->str, (gssize) text->len, error);
  g_string_free (text, TRUE);
  return ok;
}
