/* ss-png.c: PNG in (any colour type, 8 or 16 bits, to [0,1] floats) and out
 * (a stretched grey or RGB rendering), with libpng's classic API.
 *
 * The classic API rather than libpng's simplified one: the simplified reader
 * turns 16-bit data into linear light (gamma-decoded), which would change the
 * values; we want the stored samples, scaled by 1/255 or 1/65535.
 *
 * Orientation: the image's row 0 is displayed at the bottom (as DS9 does), a
 * PNG's first row is its top; so the PNG's top row becomes the image's last
 * row, and the writer flips the same way by default.
 */
#include "ss-png.h"
#include "ss-error.h"
#include "ss-mem.h"
#include "ss-output.h"
#include "ss-select.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <math.h>
#include <png.h>
#include <setjmp.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define PNG_SIGNATURE_SIZE 8
/* Deflate cannot compress better than about 1032:1; a header claiming more
 * raw bytes than that per byte of file is lying (or the file is truncated). */
#define MAX_DEFLATE_RATIO 1100.0
/* Strength of the log and asinh stretches (DS9's defaults). */
#define LOG_STRETCH_SCALE 1000.0
#define ASINH_STRETCH_SCALE 10.0

/* ------------------------------------------------------------------------ */
/* Stretch                                                                   */

void
ss_png_write_options_init (SsPngWriteOptions *options)
{
  g_return_if_fail (options != NULL);
  options->stretch = SS_STRETCH_LINEAR;
  options->low_percent = 0.0;
  options->high_percent = 100.0;
  options->bit_depth = 8;
  options->flip_vertical = TRUE;
}

gboolean
ss_stretch_from_string (const char *text, SsStretch *stretch, GError **error)
{
  static const struct { const char *name; SsStretch value; } names[] = {
    { "linear", SS_STRETCH_LINEAR }, { "log", SS_STRETCH_LOG },
    { "sqrt", SS_STRETCH_SQRT }, { "asinh", SS_STRETCH_ASINH },
  };
  for (gsize i = 0; text && i < G_N_ELEMENTS (names); i++)
    if (g_ascii_strcasecmp (text, names[i].name) == 0)
      {
        if (stretch)
          *stretch = names[i].value;
        return TRUE;
      }
  g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT,
               "unknown stretch '%s' (use linear, log, sqrt or asinh)", text ? text : "");
  return FALSE;
}

static double
stretch_value (double t, SsStretch stretch)
{
  switch (stretch)
    {
    case SS_STRETCH_LOG: return log10 (1.0 + LOG_STRETCH_SCALE * t) / log10 (1.0 + LOG_STRETCH_SCALE);
    case SS_STRETCH_SQRT: return sqrt (t);
    case SS_STRETCH_ASINH: return asinh (ASINH_STRETCH_SCALE * t) / asinh (ASINH_STRETCH_SCALE);
    case SS_STRETCH_LINEAR:
    default: return t;
    }
}

/* PERCENT (0..100) of the FINITE finite values among IN's N, with linear
 * interpolation between order statistics (0 and 100 are exactly the minimum
 * and maximum), by the engine's histogram selection: no copy, every core. A
 * 26-megapixel frame's display took 3 s on two cores with a quickselected
 * copy and one thread. */
static double
percentile_in_place (const float *in, gsize n, gsize finite, double percent)
{
  SsSelectView view;
  ss_select_view_init (&view);
  double position = CLAMP (percent, 0.0, 100.0) / 100.0 * (double) (finite - 1);
  gsize below = (gsize) floor (position);
  double fraction = position - (double) below;
  double low = ss_select_kth (in, n, &view, below);
  if (fraction == 0.0 || below + 1 >= finite)
    return low;
  double high = ss_select_kth (in, n, &view, below + 1);
  return low + fraction * (high - low);
}

void
ss_stretch_apply (const float *in, float *out, gsize n, SsStretch stretch,
                  double low_percent, double high_percent, double *low, double *high)
{
  double lo = 0.0, hi = 0.0;
  gsize finite = 0;
#pragma omp parallel for reduction(+ : finite) schedule(static) if (n > SS_PARALLEL_PIXELS)
  for (gsize i = 0; i < n; i++)
    finite += isfinite (in[i]) ? 1 : 0;
  if (finite > 0)
    {
      double a = MIN (low_percent, high_percent), b = MAX (low_percent, high_percent);
      lo = percentile_in_place (in, n, finite, isnan (a) ? 0.0 : a);
      hi = percentile_in_place (in, n, finite, isnan (b) ? 100.0 : b);
    }
  double range = hi - lo;
  /* Each pixel on its own: the same values on any number of threads. */
#pragma omp parallel for schedule(static) if (n > SS_PARALLEL_PIXELS)
  for (gsize i = 0; i < n; i++)
    {
      float v = in[i];
      double t;
      if (isnan (v))
        t = 0.0;                        /* blanks drawn black */
      else if (range > 0.0)
        t = CLAMP (((double) v - lo) / range, 0.0, 1.0);
      else
        t = v > lo ? 1.0 : 0.0;         /* flat image: all black */
      out[i] = (float) stretch_value (t, stretch);
    }
  if (low)
    *low = lo;
  if (high)
    *high = hi;
}

/* ------------------------------------------------------------------------ */
/* libpng plumbing: errors longjmp back here with a message kept             */

typedef struct {
  jmp_buf jump;
  char message[256];
} PngContext;

static void
png_error_to_context (png_structp png, png_const_charp message)
{
  PngContext *context = png_get_error_ptr (png);
  g_strlcpy (context->message, message ? message : "libpng error", sizeof context->message);
  longjmp (context->jump, 1);
}

static void
png_warning_ignored (png_structp png, png_const_charp message)
{
  (void) png;
  (void) message;
}

/* ------------------------------------------------------------------------ */
/* Reading                                                                   */

static FILE *
open_png_file (const char *path, const char *name, goffset *file_size, GError **error)
{
  GStatBuf st;
  if (g_stat (path, &st) != 0)
    {
      int saved = errno;
      g_set_error (error, SS_ERROR, SS_ERROR_IO, "%s: %s", name, g_strerror (saved));
      return NULL;
    }
  if (S_ISDIR (st.st_mode))
    {
      g_set_error (error, SS_ERROR, SS_ERROR_IO, "%s: is a directory, not a PNG file", name);
      return NULL;
    }
  if (st.st_size == 0)
    {
      g_set_error (error, SS_ERROR, SS_ERROR_FORMAT, "%s: empty file", name);
      return NULL;
    }
  FILE *file = g_fopen (path, "rb");
  if (file == NULL)
    {
      int saved = errno;
      g_set_error (error, SS_ERROR, SS_ERROR_IO, "%s: %s", name, g_strerror (saved));
      return NULL;
    }
  guchar signature[PNG_SIGNATURE_SIZE];
  if (fread (signature, 1, sizeof signature, file) != sizeof signature
      || png_sig_cmp (signature, 0, sizeof signature) != 0)
    {
      fclose (file);
      g_set_error (error, SS_ERROR, SS_ERROR_FORMAT, "%s: not a PNG file (bad signature)", name);
      return NULL;
    }
  *file_size = st.st_size;
  return file;
}

/* Everything the reader allocates, so that a longjmp can free it. */
typedef struct {
  PngContext context;
  png_structp png;
  png_infop info;
  FILE *file;
  guchar *pixels;
  png_bytep *rows;
  SsImage *image;
} PngReader;

static void
png_reader_clear (PngReader *reader)
{
  if (reader->png)
    png_destroy_read_struct (&reader->png, reader->info ? &reader->info : NULL, NULL);
  if (reader->file)
    fclose (reader->file);
  g_free (reader->pixels);
  g_free (reader->rows);
  ss_image_free (reader->image);
}

/* Opens PATH and starts libpng on it, its errors sent to READER's context;
 * FALSE with the error (READER is cleared by the caller either way). */
static gboolean
png_reader_open (PngReader *reader, const char *path, const char *name, goffset *file_size,
                 GError **error)
{
  reader->file = open_png_file (path, name, file_size, error);
  if (reader->file == NULL)
    return FALSE;
  reader->png = png_create_read_struct (PNG_LIBPNG_VER_STRING, &reader->context,
                                        png_error_to_context, png_warning_ignored);
  reader->info = reader->png ? png_create_info_struct (reader->png) : NULL;
  if (reader->info == NULL)
    {
      g_set_error (error, SS_ERROR, SS_ERROR_OUT_OF_MEMORY, "%s: out of memory starting libpng",
                   name);
      return FALSE;
    }
  return TRUE;
}

/* Asks libpng for 1 (grey) or 3 (RGB) samples a pixel of 8 or 16 bits:
 * palettes expanded, low bit depths widened, alpha dropped. */
static void
set_read_transforms (png_structp png, png_infop info)
{
  int colour = png_get_color_type (png, info);
  int depth = png_get_bit_depth (png, info);
  if (colour == PNG_COLOR_TYPE_PALETTE)
    png_set_palette_to_rgb (png);
  if (colour == PNG_COLOR_TYPE_GRAY && depth < 8)
    png_set_expand_gray_1_2_4_to_8 (png);
  if (png_get_valid (png, info, PNG_INFO_tRNS))
    png_set_tRNS_to_alpha (png);
  png_set_strip_alpha (png);
  png_set_interlace_handling (png);
  png_read_update_info (png, info);
}

/* STORED_BITS: bits a pixel in the file (before palette expansion), which
 * bounds how well deflate can have compressed it. */
static gboolean
check_png_size (png_uint_32 width, png_uint_32 height, int channels, int depth, int stored_bits,
                goffset file_size, const char *name, GError **error)
{
  if (width == 0 || height == 0 || width > G_MAXINT || height > G_MAXINT)
    {
      g_set_error (error, SS_ERROR, SS_ERROR_FORMAT, "%s: invalid PNG size %u x %u", name, width, height);
      return FALSE;
    }
  guint64 pixels = (guint64) width * height;
  double raw_bytes = (double) pixels * channels * (depth / 8.0);
  double stored_bytes = (double) height * ceil ((double) width * stored_bits / 8.0);
  if (stored_bytes > MAX_DEFLATE_RATIO * (double) file_size)
    {
      g_set_error (error, SS_ERROR, SS_ERROR_FORMAT,
                   "%s: truncated or damaged: %u x %u pixels claimed in a file of %" G_GINT64_FORMAT " bytes",
                   name, width, height, (gint64) file_size);
      return FALSE;
    }
  /* floats out, plus the raw samples while decoding */
  double needed = (double) pixels * channels * sizeof (float) + raw_bytes;
  double available = (double) ss_mem_available ();
  if (needed > available)
    {
      g_set_error (error, SS_ERROR, SS_ERROR_TOO_LARGE,
                   "%s: the image (%u x %u) needs %.0f MiB of memory; %.0f MiB is available",
                   name, width, height, needed / 1048576.0, available / 1048576.0);
      return FALSE;
    }
  return TRUE;
}

/* Samples (big-endian when 16-bit) to floats in [0, 1], PNG top row to the
 * image's last row, interleaved channels to planes. */
static void
convert_rows (PngReader *reader, int width, int height, int channels, int depth)
{
  SsImage *image = reader->image;
  gsize plane_size = ss_image_plane_size (image);
  double scale = depth == 16 ? 1.0 / 65535.0 : 1.0 / 255.0;
  for (int y = 0; y < height; y++)
    {
      const guchar *row = reader->rows[y];
      gsize out_row = (gsize) (height - 1 - y) * (gsize) width;
      for (int x = 0; x < width; x++)
        for (int c = 0; c < channels; c++)
          {
            gsize index = (gsize) x * channels + c;
            unsigned sample = depth == 16 ? ((unsigned) row[2 * index] << 8) | row[2 * index + 1] : row[index];
            image->data[(gsize) c * plane_size + out_row + x] = (float) (sample * scale);
          }
    }
}

/* libpng says "Read Error" when the file ends early, which does not tell a
 * user that the file was cut short. */
static char *
describe_damage (const PngReader *reader)
{
  if (feof (reader->file))
    return g_strdup_printf ("the file ends before its image data do (truncated; libpng: %s)",
                            reader->context.message);
  return g_strdup (reader->context.message);
}

/* The header, up to the image data: what reading and verifying share (after
 * their setjmp, to which libpng's errors jump back). */
static void
begin_read (PngReader *r)
{
  png_init_io (r->png, r->file);
  png_set_sig_bytes (r->png, PNG_SIGNATURE_SIZE);
  png_read_info (r->png, r->info);
}

static SsImage *
read_png_with (PngReader *reader, const char *name, goffset file_size, GError **error)
{
  PngReader *volatile r = reader; /* survives the longjmp */
  if (setjmp (r->context.jump))
    {
      g_autofree char *damage = describe_damage (r);
      g_set_error (error, SS_ERROR, SS_ERROR_FORMAT, "%s: damaged or truncated PNG: %s",
                   name, damage);
      return NULL;
    }
  begin_read (r);
  int stored_bits = png_get_channels (r->png, r->info) * png_get_bit_depth (r->png, r->info);
  set_read_transforms (r->png, r->info);

  png_uint_32 width = png_get_image_width (r->png, r->info);
  png_uint_32 height = png_get_image_height (r->png, r->info);
  int depth = png_get_bit_depth (r->png, r->info);
  int channels = png_get_channels (r->png, r->info);
  if ((channels != 1 && channels != 3) || (depth != 8 && depth != 16))
    {
      g_set_error (error, SS_ERROR, SS_ERROR_UNSUPPORTED, "%s: unsupported PNG layout (%d channels, %d bits)",
                   name, channels, depth);
      return NULL;
    }
  if (!check_png_size (width, height, channels, depth, stored_bits, file_size, name, error))
    return NULL;

  gsize row_bytes = png_get_rowbytes (r->png, r->info);
  r->pixels = g_try_malloc ((gsize) height * row_bytes);
  r->rows = g_try_new (png_bytep, height);
  r->image = ss_image_new ((int) width, (int) height, channels, error);
  if (r->image == NULL)
    return NULL;
  if (r->pixels == NULL || r->rows == NULL)
    {
      g_set_error (error, SS_ERROR, SS_ERROR_OUT_OF_MEMORY, "%s: out of memory decoding the PNG", name);
      return NULL;
    }
  for (png_uint_32 y = 0; y < height; y++)
    r->rows[y] = r->pixels + (gsize) y * row_bytes;
  png_read_image (r->png, r->rows);
  png_read_end (r->png, NULL);

  convert_rows (r, (int) width, (int) height, channels, depth);
  SsImage *image = r->image;
  r->image = NULL;
  return image;
}

SsImage *
ss_png_read (const char *path, GError **error)
{
  g_return_val_if_fail (path != NULL, NULL);
  g_autofree char *name = g_filename_display_name (path);
  PngReader reader = { 0 };
  goffset file_size = 0;
  SsImage *image = png_reader_open (&reader, path, name, &file_size, error)
                   ? read_png_with (&reader, name, file_size, error) : NULL;
  png_reader_clear (&reader);
  return image;
}

/* ------------------------------------------------------------------------ */
/* Verifying                                                                 */

static gboolean
verify_png_with (PngReader *reader, const char *name, SsPngHeader *header, GError **error)
{
  PngReader *volatile r = reader; /* survives the longjmp */
  if (setjmp (r->context.jump))
    {
      g_autofree char *damage = describe_damage (r);
      g_set_error (error, SS_ERROR, SS_ERROR_FORMAT, "%s: damaged PNG: %s", name, damage);
      return FALSE;
    }
  begin_read (r);
  if (header != NULL)
    *header = (SsPngHeader) { png_get_image_width (r->png, r->info),
                              png_get_image_height (r->png, r->info),
                              png_get_bit_depth (r->png, r->info),
                              png_get_color_type (r->png, r->info) };
  /* The stored samples, untransformed: only whether they decode matters.
   * An interlaced image is decoded pass by pass, each pass every row. */
  int passes = png_set_interlace_handling (r->png);
  png_read_update_info (r->png, r->info);
  png_uint_32 height = png_get_image_height (r->png, r->info);
  r->pixels = g_try_malloc (png_get_rowbytes (r->png, r->info));
  if (r->pixels == NULL)
    {
      g_set_error (error, SS_ERROR, SS_ERROR_OUT_OF_MEMORY, "%s: out of memory decoding the PNG",
                   name);
      return FALSE;
    }
  for (int pass = 0; pass < passes; pass++)
    for (png_uint_32 y = 0; y < height; y++)
      png_read_row (r->png, r->pixels, NULL);
  /* The chunks after the image data, up to IEND, with their CRCs. */
  png_read_end (r->png, NULL);
  return TRUE;
}

gboolean
ss_png_verify (const char *path, SsPngHeader *header, GError **error)
{
  g_return_val_if_fail (path != NULL, FALSE);
  g_autofree char *name = g_filename_display_name (path);
  PngReader reader = { 0 };
  goffset file_size = 0;
  gboolean ok = png_reader_open (&reader, path, name, &file_size, error)
                && verify_png_with (&reader, name, header, error);
  png_reader_clear (&reader);
  return ok;
}

/* ------------------------------------------------------------------------ */
/* Writing                                                                   */

typedef struct {
  PngContext context;
  png_structp png;
  png_infop info;
  FILE *file;
  float *stretched;
  guchar *row;
} PngWriter;

static gboolean
check_write_options (const SsPngWriteOptions *options, const char *name, GError **error)
{
  if (options->bit_depth != 8 && options->bit_depth != 16)
    {
      g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT,
                   "%s: PNG bit depth must be 8 or 16, not %d", name, options->bit_depth);
      return FALSE;
    }
  if (!(options->low_percent >= 0.0 && options->high_percent <= 100.0
        && options->low_percent < options->high_percent))
    {
      g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT,
                   "%s: stretch limits must satisfy 0 <= low < high <= 100 (got %g, %g)",
                   name, options->low_percent, options->high_percent);
      return FALSE;
    }
  if ((unsigned) options->stretch > SS_STRETCH_ASINH)
    {
      g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT, "%s: unknown stretch %d", name,
                   (int) options->stretch);
      return FALSE;
    }
  return TRUE;
}

/* A PNG shows one plane (grey) or three (RGB): writing plane 0 of a cube
 * as if it were the whole image would lose the others without a word. */
static gboolean
check_planes (const SsImage *image, const char *name, GError **error)
{
  if (image->planes == 1 || image->planes == 3)
    return TRUE;
  g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT,
               "%s: a PNG holds 1 plane (grey) or 3 (RGB); this image has %d: write FITS, "
               "or pick one plane", name, image->planes);
  return FALSE;
}

/* One PNG row from image row Y of the stretched planes. */
static void
pack_row (const PngWriter *w, const SsImage *image, int channels, int depth, int y)
{
  gsize plane_size = ss_image_plane_size (image);
  double top = depth == 16 ? 65535.0 : 255.0;
  for (int x = 0; x < image->width; x++)
    for (int c = 0; c < channels; c++)
      {
        float v = w->stretched[(gsize) c * plane_size + (gsize) y * image->width + x];
        unsigned sample = (unsigned) lround (CLAMP ((double) v, 0.0, 1.0) * top);
        gsize index = (gsize) x * channels + c;
        if (depth == 16)
          {
            w->row[2 * index] = (guchar) (sample >> 8);
            w->row[2 * index + 1] = (guchar) (sample & 0xff);
          }
        else
          w->row[index] = (guchar) sample;
      }
}

static gboolean
write_png_with (PngWriter *writer, const SsImage *image, const SsPngWriteOptions *options,
                const char *name, GError **error)
{
  PngWriter *volatile w = writer;
  if (setjmp (w->context.jump))
    {
      g_set_error (error, SS_ERROR, SS_ERROR_IO, "%s: cannot write the PNG: %s", name, w->context.message);
      return FALSE;
    }
  int channels = image->planes;   /* 1 or 3 (check_planes) */
  int depth = options->bit_depth;
  png_init_io (w->png, w->file);
  png_set_IHDR (w->png, w->info, (png_uint_32) image->width, (png_uint_32) image->height, depth,
                channels == 3 ? PNG_COLOR_TYPE_RGB : PNG_COLOR_TYPE_GRAY, PNG_INTERLACE_NONE,
                PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  png_write_info (w->png, w->info);
  for (int row = 0; row < image->height; row++)
    {
      /* flipped: PNG row 0 (the top) shows the image's last row */
      int y = options->flip_vertical ? image->height - 1 - row : row;
      pack_row (w, image, channels, depth, y);
      png_write_row (w->png, w->row);
    }
  png_write_end (w->png, w->info);
  return TRUE;
}

/* Creates TEMP (never an existing file) and libpng's write structures. */
static gboolean
png_writer_open (PngWriter *w, const char *temp, const char *name, GError **error)
{
  int fd = g_open (temp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  w->file = fd >= 0 ? fdopen (fd, "wb") : NULL;
  if (w->file == NULL)
    {
      int saved = errno;
      if (fd >= 0)
        close (fd);
      g_set_error (error, SS_ERROR, SS_ERROR_IO, "%s: cannot create a file: %s", name, g_strerror (saved));
      return FALSE;
    }
  w->png = png_create_write_struct (PNG_LIBPNG_VER_STRING, &w->context,
                                    png_error_to_context, png_warning_ignored);
  w->info = w->png ? png_create_info_struct (w->png) : NULL;
  if (w->info == NULL)
    {
      g_set_error (error, SS_ERROR, SS_ERROR_OUT_OF_MEMORY, "%s: out of memory starting libpng", name);
      return FALSE;
    }
  return TRUE;
}

/* Frees what png_writer_open made; OK becomes FALSE (with ERROR) when the
 * file's last bytes could not be written. */
static gboolean
png_writer_close (PngWriter *w, gboolean ok, const char *name, GError **error)
{
  if (w->png)
    png_destroy_write_struct (&w->png, w->info ? &w->info : NULL);
  if (w->file)
    {
      /* stdio buffers: a full disk may only show at flush or close */
      gboolean flushed = fflush (w->file) == 0 && !ferror (w->file);
      int saved = errno;
      gboolean closed = fclose (w->file) == 0;
      if (ok && !(flushed && closed))
        {
          g_set_error (error, SS_ERROR, SS_ERROR_IO, "%s: cannot write: %s", name,
                       g_strerror (flushed ? errno : saved));
          ok = FALSE;
        }
    }
  return ok;
}

static gboolean
write_png_file (const SsImage *image, const SsPngWriteOptions *options, const char *temp,
                const char *name, GError **error)
{
  PngWriter writer = { 0 };
  int channels = image->planes;   /* 1 or 3 (check_planes) */
  gsize values = ss_image_plane_size (image) * (gsize) channels;
  gboolean ok = FALSE;

  writer.stretched = g_try_new (float, values);
  writer.row = g_try_malloc ((gsize) image->width * channels * 2);
  if (writer.stretched == NULL || writer.row == NULL)
    {
      g_set_error (error, SS_ERROR, SS_ERROR_OUT_OF_MEMORY, "%s: out of memory for the PNG", name);
      goto out;
    }
  /* One set of limits for all channels keeps the colours' ratios. */
  ss_stretch_apply (image->data, writer.stretched, values, options->stretch,
                    options->low_percent, options->high_percent, NULL, NULL);
  ok = png_writer_open (&writer, temp, name, error)
       && write_png_with (&writer, image, options, name, error);

out:
  ok = png_writer_close (&writer, ok, name, error);
  g_free (writer.stretched);
  g_free (writer.row);
  return ok;
}

static gboolean
write_rgb8_with (PngWriter *writer, const guint8 *rgb, int width, int height,
                 const char *description, const char *name, GError **error)
{
  PngWriter *volatile w = writer;
  if (setjmp (w->context.jump))
    {
      g_set_error (error, SS_ERROR, SS_ERROR_IO, "%s: cannot write the PNG: %s", name, w->context.message);
      return FALSE;
    }
  png_init_io (w->png, w->file);
  png_set_IHDR (w->png, w->info, (png_uint_32) width, (png_uint_32) height, 8, PNG_COLOR_TYPE_RGB,
                PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  if (description)
    {
      png_text text = { .compression = PNG_TEXT_COMPRESSION_NONE, .key = (char *) "Description",
                        .text = (char *) description };
      png_set_text (w->png, w->info, &text, 1);
    }
  png_write_info (w->png, w->info);
  for (int y = 0; y < height; y++)
    png_write_row (w->png, (png_const_bytep) (rgb + (gsize) y * width * 3));
  png_write_end (w->png, w->info);
  return TRUE;
}

gboolean
ss_png_write_rgb8 (const guint8 *rgb, int width, int height, const char *description,
                   const char *path, gboolean force, GError **error)
{
  g_autofree char *name = g_filename_display_name (path ? path : "");
  if (rgb == NULL || width <= 0 || height <= 0)
    {
      g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT, "%s: no image to write", name);
      return FALSE;
    }
  if (!ss_output_check (path, force, NULL, error))
    return FALSE;
  g_autofree char *temp = ss_output_temp_path (path);
  PngWriter writer = { 0 };
  gboolean ok = png_writer_open (&writer, temp, name, error)
                && write_rgb8_with (&writer, rgb, width, height, description, name, error);
  if (!png_writer_close (&writer, ok, name, error))
    {
      ss_output_abort (temp);
      return FALSE;
    }
  return ss_output_commit (temp, path, error);
}

gboolean
ss_png_write (const SsImage *image, const char *path, const SsPngWriteOptions *options,
              gboolean force, const char *const *inputs, GError **error)
{
  g_autofree char *name = g_filename_display_name (path ? path : "");
  SsPngWriteOptions defaults;
  ss_png_write_options_init (&defaults);
  if (options == NULL)
    options = &defaults;
  if (image == NULL || image->data == NULL || image->width <= 0 || image->height <= 0 || image->planes <= 0)
    {
      g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT, "%s: no image to write", name);
      return FALSE;
    }
  if (!check_planes (image, name, error) || !check_write_options (options, name, error)
      || !ss_output_check (path, force, inputs, error))
    return FALSE;
  g_autofree char *temp = ss_output_temp_path (path);
  if (!write_png_file (image, options, temp, name, error))
    {
      ss_output_abort (temp);
      return FALSE;
    }
  return ss_output_commit (temp, path, error);
}
