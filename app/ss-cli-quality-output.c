/* ss-cli-quality-output.c: what `quality` writes: the text, JSON and
 * markdown tables, a PNG mosaic per case, and the cases themselves as FITS
 * files for other tools (--write-cases). */
#include "ss-cli-quality-private.h"
#include "ss-cli-json.h"

#include <errno.h>
#include <math.h>
#include <string.h>

/* The mosaic's tiles are crops of this size (or the whole image). */
#define TILE 128
#define MOSAIC_COLUMNS 4

/* ---- writing the cases ------------------------------------------------------ */

/* The PSF as a centred (2r+1)² stamp for other tools. */
static SsImage *
psf_stamp (const SsPsfSpec *psf, GError **error)
{
  const int full = 64, r = 24, side = 2 * r + 1;
  g_autoptr (SsImage) wrapped = ss_psf_render (psf, full, full, error);
  if (wrapped == NULL)
    return NULL;
  SsImage *stamp = ss_image_new (side, side, 1, error);
  if (stamp == NULL)
    return NULL;
  for (int y = -r; y <= r; y++)
    for (int x = -r; x <= r; x++)
      stamp->data[(gsize) (y + r) * side + x + r]
        = wrapped->data[(gsize) ((y + full) % full) * full + (x + full) % full];
  stamp->header = ss_header_new ();
  g_autofree char *text = ss_psf_spec_to_string (psf);
  ss_header_set_string (stamp->header, "PSF", text, "centred on the middle pixel, sum 1");
  return stamp;
}

gboolean
cli_quality_write_case (const char *dir, const CaseData *data, GError **error)
{
  g_autofree char *case_dir = g_build_filename (dir, data->spec->name, NULL);
  if (g_mkdir_with_parents (case_dir, 0755) != 0)
    {
      g_set_error (error, SS_ERROR, SS_ERROR_IO, "%s: %s", case_dir, g_strerror (errno));
      return FALSE;
    }
  g_autofree char *truth = g_build_filename (case_dir, "truth.fits", NULL);
  g_autofree char *blurred = g_build_filename (case_dir, "blurred.fits", NULL);
  g_autofree char *psf = g_build_filename (case_dir, "psf.fits", NULL);
  g_autoptr (SsImage) stamp = psf_stamp (&data->psf, error);
  return stamp != NULL && ss_fits_write (data->truth, truth, TRUE, NULL, error)
         && ss_fits_write (data->blurred, blurred, TRUE, NULL, error)
         && ss_fits_write (stamp, psf, TRUE, NULL, error);
}

/* ---- the mosaics and the tables --------------------------------------------- */

/* Tiles of the centre crop: truth, blurred, each method, all fitted to the
 * truth so one stretch shows them alike. */
gboolean
cli_quality_write_mosaic (const char *path, const CaseData *data, GPtrArray *rows, GError **error)
{
  int size = data->spec->size, tile = MIN (TILE, size), gap = 2;
  int x0 = (size - tile) / 2, y0 = (size - tile) / 2;
  guint tiles = 2 + rows->len;
  int columns = MIN (MOSAIC_COLUMNS, (int) tiles), lines = (tiles + columns - 1) / columns;
  int mw = columns * tile + (columns - 1) * gap, mh = lines * tile + (lines - 1) * gap;
  g_autoptr (SsImage) mosaic = ss_image_new (mw, mh, 1, error);
  if (mosaic == NULL)
    return FALSE;
  gsize n = (gsize) size * size;
  const float *truth = data->truth->data;
  double low = INFINITY;
  for (gsize i = 0; i < n; i++)
    low = MIN (low, truth[i]);
  for (gsize i = 0; i < (gsize) mw * mh; i++)
    mosaic->data[i] = (float) low;
  g_autofree float *fitted = g_new (float, n);
  for (guint t = 0; t < tiles; t++)
    {
      const float *source = t == 0 ? truth : t == 1 ? data->blurred->data
                                                    : ((MethodRow *) rows->pdata[t - 2])->x;
      if (source == NULL)
        continue;
      double a, b;
      ss_affine_fit (source, truth, n, &a, &b);
      ss_affine_apply (source, fitted, n, a, b);
      int ox = (t % columns) * (tile + gap), oy = (lines - 1 - t / columns) * (tile + gap);
      for (int y = 0; y < tile; y++)
        memcpy (mosaic->data + (gsize) (oy + y) * mw + ox,
                fitted + (gsize) (y0 + y) * size + x0, tile * sizeof (float));
    }
  SsPngWriteOptions png;
  ss_png_write_options_init (&png);
  png.stretch = SS_STRETCH_ASINH;
  png.low_percent = 0.5;
  png.high_percent = 99.8;
  return ss_png_write (mosaic, path, &png, TRUE, NULL, error);
}

void
cli_quality_print_text_case (const CaseData *data, double blurred_psnr, double blurred_ssim,
                             GPtrArray *rows)
{
  printf ("\n%s: %dx%d, %s, peak %g e-, sky %g e-, read noise %g e-\n", data->spec->name,
          data->spec->size, data->spec->size, data->spec->psf, data->spec->peak,
          data->spec->sky, data->spec->read_noise);
  printf ("  %-26s %8s %7s %9s %6s  %s\n", "method", "PSNR", "SSIM", "seconds", "iters", "note");
  printf ("  %-26s %8.2f %7.4f %9s %6s\n", "blurred (input)", blurred_psnr, blurred_ssim, "", "");
  for (guint i = 0; i < rows->len; i++)
    {
      const MethodRow *r = rows->pdata[i];
      printf ("  %-26s %8.2f %7.4f %9.3f %6d  %s\n", r->method, r->psnr, r->ssim, r->seconds,
              r->iterations, r->note ? r->note : "");
    }
  fflush (stdout);
}

void
cli_quality_print_json_row (const CaseData *data, const char *method, double psnr, double ssim,
                            double seconds, int iterations, const char *note)
{
  SsJsonObject o;
  ss_json_begin (&o);
  ss_json_add_string (&o, "type", "quality");
  ss_json_add_string (&o, "case", data->spec->name);
  ss_json_add_int (&o, "size", data->spec->size);
  ss_json_add_string (&o, "psf", data->spec->psf);
  ss_json_add_number (&o, "peak", data->spec->peak);
  ss_json_add_string (&o, "method", method);
  ss_json_add_number (&o, "psnr", psnr);
  ss_json_add_number (&o, "ssim", ssim);
  ss_json_add_number (&o, "seconds", seconds);
  ss_json_add_int (&o, "iterations", iterations);
  ss_json_add_string (&o, "note", note);
  g_autofree char *text = ss_json_end (&o);
  printf ("%s\n", text);
  fflush (stdout);
}

/* MOSAIC is the link: relative to the markdown file's folder. */
void
cli_quality_append_markdown_case (GString *md, const CaseData *data, double blurred_psnr,
                                  double blurred_ssim, GPtrArray *rows, const char *mosaic)
{
  const QualityCase *s = data->spec;
  g_string_append_printf (md, "\n### %s\n\n%d×%d, PSF %s, peak %g e⁻, sky %g e⁻, read noise "
                          "%g e⁻\n\n", s->name, s->size, s->size, s->psf, s->peak, s->sky,
                          s->read_noise);
  g_string_append (md, "| method | PSNR (dB) | SSIM | seconds | iterations | note |\n"
                       "| --- | ---: | ---: | ---: | ---: | --- |\n");
  g_string_append_printf (md, "| blurred (input) | %.2f | %.4f | | | |\n", blurred_psnr,
                          blurred_ssim);
  double top = -INFINITY;
  for (guint i = 0; i < rows->len; i++)
    top = MAX (top, ((MethodRow *) rows->pdata[i])->psnr);
  for (guint i = 0; i < rows->len; i++)
    {
      const MethodRow *r = rows->pdata[i];
      const char *bold = r->psnr == top ? "**" : "";
      if (!isfinite (r->psnr))
        {
          /* A method that could not run: say why, no numbers. */
          g_string_append_printf (md, "| %s | — | — | — | — | %s |\n", r->method,
                                  r->note ? r->note : "");
          continue;
        }
      g_string_append_printf (md, "| %s | %s%.2f%s | %.4f | %.3f | %d | %s |\n", r->method, bold,
                              r->psnr, bold, r->ssim, r->seconds, r->iterations,
                              r->note ? r->note : "");
    }
  if (mosaic)
    g_string_append_printf (md, "\n![%s: truth, blurred, then each method in the table's "
                            "order, left to right, top to bottom](%s)\n", s->name, mosaic);
}

/* PATH as seen from the folder of FILE: the folder's prefix removed when
 * PATH lies inside it, else PATH made absolute. */
char *
cli_quality_relative_link (const char *file, const char *path)
{
  g_autoptr (GFile) markdown = g_file_new_for_path (file);
  g_autoptr (GFile) folder = g_file_get_parent (markdown);
  g_autoptr (GFile) target = g_file_new_for_path (path);
  char *relative = folder ? g_file_get_relative_path (folder, target) : NULL;
  return relative ? relative : g_file_get_path (target);
}

/* The summary matrix: one line per case, one column per method. */
void
cli_quality_append_markdown_summary (GString *md, GPtrArray *all_rows, GPtrArray *names,
                                     const double *blurred)
{
  g_string_append (md, "\n| case (PSNR dB) | blurred |");
  GPtrArray *first = all_rows->pdata[0];
  for (guint i = 0; i < first->len; i++)
    g_string_append_printf (md, " %s |", ((MethodRow *) first->pdata[i])->method);
  g_string_append (md, "\n| --- | ---: |");
  for (guint i = 0; i < first->len; i++)
    g_string_append (md, " ---: |");
  g_string_append_c (md, '\n');
  for (guint c = 0; c < all_rows->len; c++)
    {
      GPtrArray *rows = all_rows->pdata[c];
      g_string_append_printf (md, "| %s | %.2f |", (char *) names->pdata[c], blurred[c]);
      for (guint i = 0; i < rows->len; i++)
        {
          double psnr = ((MethodRow *) rows->pdata[i])->psnr;
          if (isfinite (psnr))
            g_string_append_printf (md, " %.2f |", psnr);
          else
            g_string_append (md, " — |");
        }
      g_string_append_c (md, '\n');
    }
}
