/* ss-psf.c: parsing and rendering the blur models. */
#include "ss-psf.h"
#include "ss-error.h"
#include "ss-fits.h"
#include "ss-solver.h"

#include <glib/gstdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define FWHM_PER_SIGMA 2.3548200450309493 /* 2 sqrt(2 ln 2) */

/* A number, the whole of TEXT; its range is checked by the caller, so that
 * "gaussian:1e10" is told what is wrong with it rather than the syntax. */
static gboolean
parse_number (const char *text, double *value)
{
  char *end = NULL;
  double v = g_ascii_strtod (text, &end);
  if (end == text || (end && *end != '\0'))
    return FALSE;
  *value = v;
  return TRUE;
}

static gboolean
parse_integer (const char *text, gint64 *value)
{
  char *end = NULL;
  gint64 v = g_ascii_strtoll (text, &end, 10);
  if (end == text || (end && *end != '\0'))
    return FALSE;
  *value = v;
  return TRUE;
}

static gboolean
parse_fail (GError **error, const char *text)
{
  g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT,
               "invalid PSF \"%s\": expected box:L, box2d:L, gaussian:FWHM, "
               "moffat:FWHM,BETA, file:PATH or none (sizes positive)", text);
  return FALSE;
}

/* L of box:L and box2d:L. */
static gboolean
parse_box (const char *args, const char *text, int *size, GError **error)
{
  gint64 v;
  if (!parse_integer (args, &v))
    return parse_fail (error, text);
  if (v < 1 || v > SS_PSF_MAX_BOX)
    {
      g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT,
                   "invalid PSF \"%s\": L must be a whole number of pixels in [1, %d]", text,
                   SS_PSF_MAX_BOX);
      return FALSE;
    }
  *size = (int) v;
  return TRUE;
}

static gboolean
parse_fwhm (const char *args, const char *text, double *fwhm, GError **error)
{
  if (!parse_number (args, fwhm))
    return parse_fail (error, text);
  if (!(isfinite (*fwhm) && *fwhm >= SS_PSF_MIN_FWHM && *fwhm <= SS_PSF_MAX_FWHM))
    {
      g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT,
                   "invalid PSF \"%s\": FWHM must be finite and within [%g, %g] pixels", text,
                   SS_PSF_MIN_FWHM, SS_PSF_MAX_FWHM);
      return FALSE;
    }
  return TRUE;
}

static gboolean
parse_beta (const char *args, const char *text, double *beta, GError **error)
{
  if (!parse_number (args, beta))
    return parse_fail (error, text);
  if (!ss_psf_beta_valid (*beta))
    {
      g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT,
                   "invalid PSF \"%s\": Moffat beta must be finite and within (%g, %g]", text,
                   SS_PSF_MIN_BETA, SS_PSF_MAX_BETA);
      return FALSE;
    }
  return TRUE;
}

gboolean
ss_psf_spec_parse (const char *text, SsPsfSpec *spec, GError **error)
{
  memset (spec, 0, sizeof *spec);
  if (text == NULL)
    return parse_fail (error, "");
  if (g_str_equal (text, "none"))
    {
      spec->kind = SS_PSF_NONE;
      return TRUE;
    }
  const char *colon = strchr (text, ':');
  if (colon == NULL || colon[1] == '\0')
    return parse_fail (error, text);
  g_autofree char *kind = g_strndup (text, colon - text);
  const char *args = colon + 1;

  if (g_str_equal (kind, "box") || g_str_equal (kind, "box2d"))
    {
      spec->kind = g_str_equal (kind, "box") ? SS_PSF_BOX_ROW : SS_PSF_BOX;
      return parse_box (args, text, &spec->size, error);
    }
  if (g_str_equal (kind, "gaussian"))
    {
      spec->kind = SS_PSF_GAUSSIAN;
      return parse_fwhm (args, text, &spec->fwhm, error);
    }
  if (g_str_equal (kind, "moffat"))
    {
      g_auto (GStrv) parts = g_strsplit (args, ",", -1);
      spec->kind = SS_PSF_MOFFAT;
      if (g_strv_length (parts) != 2)
        return parse_fail (error, text);
      return parse_fwhm (parts[0], text, &spec->fwhm, error)
             && parse_beta (parts[1], text, &spec->beta, error);
    }
  if (g_str_equal (kind, "file"))
    {
      spec->kind = SS_PSF_FILE;
      spec->path = g_strdup (args);
      return TRUE;
    }
  return parse_fail (error, text);
}

char *
ss_psf_spec_to_string (const SsPsfSpec *spec)
{
  char a[G_ASCII_DTOSTR_BUF_SIZE], b[G_ASCII_DTOSTR_BUF_SIZE];
  switch (spec->kind)
    {
    case SS_PSF_NONE:
      return g_strdup ("none");
    case SS_PSF_BOX_ROW:
      return g_strdup_printf ("box:%d", spec->size);
    case SS_PSF_BOX:
      return g_strdup_printf ("box2d:%d", spec->size);
    case SS_PSF_GAUSSIAN:
      return g_strdup_printf ("gaussian:%s", g_ascii_dtostr (a, sizeof a, spec->fwhm));
    case SS_PSF_MOFFAT:
      return g_strdup_printf ("moffat:%s,%s", g_ascii_dtostr (a, sizeof a, spec->fwhm),
                              g_ascii_dtostr (b, sizeof b, spec->beta));
    case SS_PSF_FILE:
      return g_strdup_printf ("file:%s", spec->path ? spec->path : "");
    }
  return g_strdup ("none");
}

/* ---- a PSF file read once ---------------------------------------------------- */

/* What tells one version of a file from another without reading it. */
typedef struct {
  guint64 device, inode;
  gint64 size, mtime_ns;
} FileStamp;

struct _SsPsfFileData
{
  char *path;      /* the file read: the data serve a spec naming it */
  SsImage *image;  /* as ss_psf_read_file gave it */
  GStrv notes;     /* NULL-terminated, never NULL */
  FileStamp stamp; /* the file's, taken before the read */
  gboolean stamped;
};

/* A PSF file's name and the HDU it names, "psf.fits[1]" or
 * "psf.fits[DET_SAMP]" (cfitsio's and DS9's notation), when no file has
 * that whole name: the file's name is returned and *HDU set (g_free);
 * otherwise the name as given and *HDU NULL (the first image HDU). */
static char *
split_hdu_suffix (const char *text, char **hdu)
{
  *hdu = NULL;
  gsize length = strlen (text);
  const char *open = strrchr (text, '[');
  if (length < 4 || text[length - 1] != ']' || open == NULL || open == text
      || open + 2 > text + length - 1 || g_file_test (text, G_FILE_TEST_EXISTS))
    return g_strdup (text);
  *hdu = g_strndup (open + 1, (gsize) (text + length - 1 - (open + 1)));
  return g_strndup (text, (gsize) (open - text));
}

char *
ss_psf_spec_file_name (const SsPsfSpec *spec)
{
  if (spec == NULL || spec->kind != SS_PSF_FILE || spec->path == NULL)
    return NULL;
  g_autofree char *hdu = NULL;
  return split_hdu_suffix (spec->path, &hdu);
}

/* The stamp now of the file SPEC_PATH names (less an [HDU] suffix), or
 * FALSE when it cannot be told (no such file). */
static gboolean
file_stamp (const char *spec_path, FileStamp *stamp)
{
  g_autofree char *hdu = NULL;
  g_autofree char *path = split_hdu_suffix (spec_path, &hdu);
  GStatBuf st;
  if (g_stat (path, &st) != 0)
    return FALSE;
  *stamp = (FileStamp) { .device = (guint64) st.st_dev, .inode = (guint64) st.st_ino,
                         .size = (gint64) st.st_size,
                         .mtime_ns = (gint64) st.st_mtim.tv_sec * G_GINT64_CONSTANT (1000000000)
                                     + st.st_mtim.tv_nsec };
  return TRUE;
}

static void
file_data_free (gpointer data)
{
  SsPsfFileData *file = data;
  g_free (file->path);
  g_clear_pointer (&file->image, ss_image_free);
  g_strfreev (file->notes);
}

static SsPsfFileData *
file_data_ref (SsPsfFileData *file)
{
  return file != NULL ? g_atomic_rc_box_acquire (file) : NULL;
}

static void
file_data_unref (SsPsfFileData *file)
{
  if (file != NULL)
    g_atomic_rc_box_release_full (file, file_data_free);
}

/* SPEC's file data when they are a reading of SPEC's file (a path changed
 * since loading makes them stale), else NULL. */
static const SsPsfFileData *
loaded_file (const SsPsfSpec *spec)
{
  if (spec->kind != SS_PSF_FILE || spec->file == NULL
      || g_strcmp0 (spec->file->path, spec->path) != 0)
    return NULL;
  return spec->file;
}

gboolean
ss_psf_spec_is_loaded (const SsPsfSpec *spec)
{
  return loaded_file (spec) != NULL;
}

/* The reader's errors start with the file's name, which says nothing of
 * its role: "PSF file " before it tells the user which of their files
 * failed (the image, the truth or the PSF). */
static void
say_it_is_the_psf (GError **error, const char *path)
{
  g_autofree char *hdu = NULL;
  g_autofree char *file = split_hdu_suffix (path, &hdu);
  if (error != NULL && *error != NULL && g_str_has_prefix ((*error)->message, file))
    g_prefix_error (error, "PSF file ");
}

gboolean
ss_psf_spec_load (SsPsfSpec *spec, GError **error)
{
  if (spec->kind != SS_PSF_FILE || ss_psf_spec_is_loaded (spec))
    return TRUE;
  if (spec->path == NULL || spec->path[0] == '\0')
    {
      g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT,
                   "no PSF file given (file:PATH)");
      return FALSE;
    }
  /* Stamped before the read: a file rewritten during it then reads as
   * changed, never as the version read. */
  FileStamp stamp;
  gboolean stamped = file_stamp (spec->path, &stamp);
  g_autoptr (GPtrArray) notes = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (SsImage) image = ss_psf_read_file (spec->path, notes, error);
  if (image == NULL)
    {
      say_it_is_the_psf (error, spec->path);
      return FALSE;
    }
  g_ptr_array_add (notes, NULL);
  SsPsfFileData *file = g_atomic_rc_box_new0 (SsPsfFileData);
  file->path = g_strdup (spec->path);
  file->image = g_steal_pointer (&image);
  file->notes = (GStrv) g_ptr_array_steal (notes, NULL);
  file->stamp = stamp;
  file->stamped = stamped;
  file_data_unref (spec->file);
  spec->file = file;
  return TRUE;
}

gboolean
ss_psf_spec_file_unchanged (const SsPsfSpec *spec)
{
  const SsPsfFileData *file = loaded_file (spec);
  if (file == NULL)
    return TRUE;
  FileStamp now;
  return file->stamped && file_stamp (file->path, &now)
         && memcmp (&now, &file->stamp, sizeof now) == 0;
}

const char *const *
ss_psf_spec_get_notes (const SsPsfSpec *spec)
{
  static const char *const none[] = { NULL };
  const SsPsfFileData *file = loaded_file (spec);
  return file != NULL ? (const char *const *) file->notes : none;
}

void
ss_psf_spec_clear (SsPsfSpec *spec)
{
  g_clear_pointer (&spec->path, g_free);
  g_clear_pointer (&spec->file, file_data_unref);
}

void
ss_psf_spec_copy (const SsPsfSpec *src, SsPsfSpec *dst)
{
  *dst = *src;
  dst->path = g_strdup (src->path);
  dst->file = file_data_ref (src->file);
}

/* Signed offset of index i from 0 on a ring of length n, in [-n/2, n/2). */
static inline int
wrapped_offset (int i, int n)
{
  return i < (n + 1) / 2 ? i : i - n;
}

static gboolean
check_support (int support_w, int support_h, int width, int height, const char *what,
               GError **error)
{
  if (support_w > width || support_h > height)
    {
      g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT,
                   "the PSF (%s, %d×%d pixels) is larger than the image (%d×%d)",
                   what, support_w, support_h, width, height);
      return FALSE;
    }
  return TRUE;
}

/* Divides by the sum so the PSF sums to 1. Only the rows and columns within
 * REACH of (0,0) (wrapped) can be non-zero; the others are skipped, which
 * leaves the sum bit for bit what a full pass gives (adding 0 changes no
 * double) and spares two passes over a 27-megapixel image. REACH < 0: all. */
static void
normalise (SsImage *psf, int reach)
{
  int w = psf->width, h = psf->height;
  double sum = 0;
  for (int row = 0; row < h; row++)
    if (reach < 0 || abs (wrapped_offset (row, h)) <= reach)
      for (int col = 0; col < w; col++)
        if (reach < 0 || abs (wrapped_offset (col, w)) <= reach)
          sum += psf->data[(gsize) row * w + col];
  for (int row = 0; row < h; row++)
    if (reach < 0 || abs (wrapped_offset (row, h)) <= reach)
      for (int col = 0; col < w; col++)
        {
          float *v = &psf->data[(gsize) row * w + col];
          *v = (float) (*v / sum);
        }
}

/* Places a centred box of bw×bh taps; the centre of an even size is tap size/2. */
static void
render_box (SsImage *psf, int bw, int bh)
{
  for (int dy = -(bh / 2); dy < bh - bh / 2; dy++)
    for (int dx = -(bw / 2); dx < bw - bw / 2; dx++)
      {
        int row = (dy + psf->height) % psf->height;
        int col = (dx + psf->width) % psf->width;
        psf->data[(gsize) row * psf->width + col] = 1.0f;
      }
}

/* Evaluates a radial profile at every pixel's wrapped distance from (0,0),
 * within RADIUS; beyond it the profile is negligible and left at 0. */
static void
render_radial (SsImage *psf, double (*profile) (double r2, const SsPsfSpec *), const SsPsfSpec *spec,
               double radius)
{
  for (int row = 0; row < psf->height; row++)
    {
      int dy = wrapped_offset (row, psf->height);
      if (abs (dy) > radius)
        continue;
      for (int col = 0; col < psf->width; col++)
        {
          int dx = wrapped_offset (col, psf->width);
          double r2 = (double) dx * dx + (double) dy * dy;
          if (r2 <= radius * radius)
            psf->data[(gsize) row * psf->width + col] = (float) profile (r2, spec);
        }
    }
}

static double
gaussian_profile (double r2, const SsPsfSpec *spec)
{
  double sigma = spec->fwhm / FWHM_PER_SIGMA;
  return exp (-0.5 * r2 / (sigma * sigma));
}

/* Moffat: (1 + r²/a²)^-β with a = FWHM / (2 sqrt(2^(1/β) - 1)). */
static double
moffat_alpha (const SsPsfSpec *spec)
{
  return spec->fwhm / (2.0 * sqrt (pow (2.0, 1.0 / spec->beta) - 1.0));
}

static double
moffat_profile (double r2, const SsPsfSpec *spec)
{
  double a = moffat_alpha (spec);
  return pow (1.0 + r2 / (a * a), -spec->beta);
}

/* The radius a radial profile is rendered to. */
static double
radial_radius (const SsPsfSpec *spec)
{
  if (spec->kind == SS_PSF_GAUSSIAN)
    return 4.0 * spec->fwhm / FWHM_PER_SIGMA;   /* all but 3e-4 of the flux */
  /* Moffat: out to where the profile falls to 1e-4 of its peak. */
  return moffat_alpha (spec) * sqrt (pow (1e4, 1.0 / spec->beta) - 1.0);
}

int
ss_psf_reach (const SsPsfSpec *spec)
{
  switch (spec->kind)
    {
    case SS_PSF_NONE:
      return 0;
    case SS_PSF_BOX_ROW:
    case SS_PSF_BOX:
      return spec->size / 2 + 1;
    case SS_PSF_GAUSSIAN:
    case SS_PSF_MOFFAT:
      return (int) ceil (radial_radius (spec));
    case SS_PSF_FILE:
      {
        /* A loaded file is wrapped with its centre pixel (size/2) on (0,0):
         * it reaches size/2 on the far side of an even size, as on both of
         * an odd one. Not loaded, only a read would tell. */
        const SsPsfFileData *file = loaded_file (spec);
        if (file != NULL)
          return MAX (file->image->width, file->image->height) / 2;
        break;
      }
    }
  return -1;
}

/* ---- PSF files ------------------------------------------------------------ */

/* A non-finite pixel is a hole in the PSF, not a faint one: skipping it (as
 * ss_psf_wrap does) would blur with the wrong kernel without a word. */
static gboolean
check_finite (const SsImage *psf, const char *path, GError **error)
{
  gsize n = ss_image_plane_size (psf), bad = ss_count_non_finite (psf->data, n);
  if (bad == 0)
    return TRUE;
  g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT,
               "PSF file %s: %" G_GSIZE_FORMAT " of its %" G_GSIZE_FORMAT " pixels are not "
               "finite (NaN or infinite); a PSF must be finite everywhere", path, bad, n);
  return FALSE;
}

/* Zeroes the negative pixels when they are background-subtraction noise in
 * the wings (under SS_PSF_MAX_NEGATIVE_SHARE of the absolute sum), which
 * would otherwise make the kernel no blur (Richardson–Lucy refuses it).
 * Negatives of share f change the normalised kernel by 2f / (1 - 2f) in L1
 * (under 11% at 5%), all of it in the faint wings, whose noise makes them
 * that uncertain anyway; the core, which sets the deblurring, keeps its
 * shape. A larger negative part is no noise but a kernel that is not a blur
 * (a difference of images, a sign error), which clipping cannot mend. */
static gboolean
clip_negative_wings (SsImage *psf, const char *path, GPtrArray *notes, GError **error)
{
  gsize n = ss_image_plane_size (psf), count = 0;
  double negative = 0.0, absolute = 0.0;
  for (gsize i = 0; i < n; i++)
    {
      absolute += fabs (psf->data[i]);
      if (psf->data[i] < 0.0f)
        {
          negative -= psf->data[i];
          count++;
        }
    }
  if (count == 0)
    return TRUE;
  double share = negative / absolute;
  if (share >= SS_PSF_MAX_NEGATIVE_SHARE)
    {
      g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT,
                   "PSF file %s: its %" G_GSIZE_FORMAT " negative pixels hold %.3g%% of its "
                   "absolute sum (%g%% is the most taken as noise in the wings); a PSF must be "
                   "a non-negative blur", path, count, 100.0 * share,
                   100.0 * SS_PSF_MAX_NEGATIVE_SHARE);
      return FALSE;
    }
  for (gsize i = 0; i < n; i++)
    psf->data[i] = MAX (psf->data[i], 0.0f);
  if (notes != NULL)
    g_ptr_array_add (notes, g_strdup_printf ("PSF file %s: %" G_GSIZE_FORMAT " negative pixels "
                                             "(%.3g%% of its absolute sum, noise in the wings) "
                                             "set to 0", path, count, 100.0 * share));
  return TRUE;
}

/* The centroid's offset (columns, rows) from the pixel ss_psf_wrap takes as
 * the centre; FALSE when the PSF has no positive total. */
static gboolean
centroid_offset (const SsImage *psf, double *dx, double *dy)
{
  double sum = 0.0, mx = 0.0, my = 0.0;
  for (int y = 0; y < psf->height; y++)
    for (int x = 0; x < psf->width; x++)
      {
        double v = psf->data[(gsize) y * psf->width + x];
        sum += v;
        mx += v * (x - psf->width / 2);
        my += v * (y - psf->height / 2);
      }
  if (!(sum > 0.0))
    return FALSE;
  *dx = mx / sum;
  *dy = my / sum;
  return TRUE;
}

/* The result is not changed: an off-centre PSF may be meant (a sub-image's
 * registration), but it is more often a cutout taken off the star, which
 * moves the deblurred image by the offset without a word. */
static void
note_off_centre (const SsImage *psf, const char *path, GPtrArray *notes)
{
  double dx, dy;
  if (notes == NULL || !centroid_offset (psf, &dx, &dy)
      || !(hypot (dx, dy) > SS_PSF_MAX_CENTROID_OFFSET))
    return;
  g_ptr_array_add (notes, g_strdup_printf ("warning: PSF file %s: its centroid is (%+.2f, %+.2f) "
                                           "px (x, y) from its centre pixel (%d, %d), so the "
                                           "deblurred image is shifted by (%+.2f, %+.2f) px; "
                                           "centre the PSF to avoid it", path, dx, dy,
                                           psf->width / 2, psf->height / 2, -dx, -dy));
}

/* A note when the image read, PSF, held more than one plane in its file (a
 * cube of PSFs, one per wavelength or field position): only its first is
 * the blur. Its header is the file's, axes included: no second reading. */
static void
note_planes (const SsImage *psf, const char *path, GPtrArray *notes)
{
  double planes = 1.0, axis;
  for (int k = 3; psf->header != NULL && k <= 9; k++)
    {
      g_autofree char *keyword = g_strdup_printf ("NAXIS%d", k);
      if (ss_header_get_double (psf->header, keyword, &axis) && axis > 1)
        planes *= axis;
    }
  if (notes != NULL && planes > 1)
    g_ptr_array_add (notes, g_strdup_printf ("PSF file %s: its image has %.0f planes; the "
                                             "first is the blur", path, planes));
}

/* A file of several images (WebbPSF's oversampled and detector-sampled
 * PSFs, one a field position): its first is read unless the name picks
 * another, and which is said, with how to pick one. */
static void
note_hdus (const char *file, const char *path, GPtrArray *notes)
{
  g_autoptr (GPtrArray) hdus = notes != NULL ? ss_fits_list_hdus (file, NULL) : NULL;
  int first;
  guint images = ss_fits_count_images (hdus, &first);
  if (images <= 1)
    return;
  GString *list = g_string_new (NULL);
  for (guint i = 0; i < hdus->len; i++)
    {
      const SsFitsHdu *hdu = g_ptr_array_index (hdus, i);
      if (!hdu->has_image)
        continue;
      g_string_append_printf (list, "%s%d", list->len ? ", " : "", hdu->number);
      if (hdu->name != NULL)
        g_string_append_printf (list, " '%s'", hdu->name);
      g_string_append_printf (list, " %" G_GINT64_FORMAT "×%" G_GINT64_FORMAT, hdu->width,
                              hdu->height);
    }
  g_ptr_array_add (notes, g_strdup_printf ("PSF file %s: %u of its HDUs hold images (%s); the "
                                           "first, HDU %d, is the blur (file:%s[N] or "
                                           "file:%s[EXTNAME] picks another)", path, images,
                                           list->str, first, file, file));
  g_string_free (list, TRUE);
}

SsImage *
ss_psf_read_file (const char *path, GPtrArray *notes, GError **error)
{
  SsFitsReadOptions options = SS_FITS_READ_OPTIONS_DEFAULT;
  options.plane = 0;
  g_autofree char *hdu = NULL;
  g_autofree char *file = split_hdu_suffix (path, &hdu);
  options.hdu = hdu;
  g_autoptr (SsImage) psf = ss_fits_read (file, &options, error);
  if (psf == NULL || !check_finite (psf, path, error)
      || !clip_negative_wings (psf, path, notes, error))
    return NULL;
  if (hdu == NULL)
    note_hdus (file, path, notes);
  note_planes (psf, path, notes);
  note_off_centre (psf, path, notes);
  return g_steal_pointer (&psf);
}

/* FILE_PSF, what ss_psf_read_file read from PATH, at the problem size. */
static SsImage *
render_file_image (const SsImage *file_psf, const char *path, int width, int height,
                   GError **error)
{
  SsImage *psf = ss_psf_wrap (file_psf, width, height, error);
  /* Name the file: the caller's message names the image. */
  if (psf == NULL)
    g_prefix_error (error, "PSF file %s: ", path);
  return psf;
}

/* The reading ss_psf_spec_load kept, or the file read now. */
static SsImage *
render_file (const SsPsfSpec *spec, int width, int height, GError **error)
{
  const SsPsfFileData *file = loaded_file (spec);
  if (file != NULL)
    return render_file_image (file->image, spec->path, width, height, error);
  g_autoptr (SsImage) file_psf = ss_psf_read_file (spec->path, NULL, error);
  if (file_psf == NULL)
    {
      say_it_is_the_psf (error, spec->path);
      return NULL;
    }
  return render_file_image (file_psf, spec->path, width, height, error);
}

SsImage *
ss_psf_render (const SsPsfSpec *spec, int width, int height, GError **error)
{
  if (spec->kind == SS_PSF_FILE)
    return render_file (spec, width, height, error);

  g_autoptr (SsImage) psf = ss_image_new (width, height, 1, error);
  if (psf == NULL)
    return NULL;
  switch (spec->kind)
    {
    case SS_PSF_NONE:
      psf->data[0] = 1.0f;
      break;
    case SS_PSF_BOX_ROW:
      if (!check_support (spec->size, 1, width, height, "box", error))
        return NULL;
      render_box (psf, spec->size, 1);
      break;
    case SS_PSF_BOX:
      if (!check_support (spec->size, spec->size, width, height, "box2d", error))
        return NULL;
      render_box (psf, spec->size, spec->size);
      break;
    case SS_PSF_GAUSSIAN:
    case SS_PSF_MOFFAT:
      {
        int support = 2 * ss_psf_reach (spec) + 1;
        gboolean gaussian = spec->kind == SS_PSF_GAUSSIAN;
        if (!check_support (support, support, width, height, gaussian ? "gaussian" : "moffat",
                            error))
          return NULL;
        render_radial (psf, gaussian ? gaussian_profile : moffat_profile, spec,
                       radial_radius (spec));
        break;
      }
    case SS_PSF_FILE:
      g_assert_not_reached ();
    }
  /* Rows and columns beyond the reach (wrapped) stay 0. */
  normalise (psf, ss_psf_reach (spec));
  return g_steal_pointer (&psf);
}

SsImage *
ss_psf_wrap (const SsImage *psf, int width, int height, GError **error)
{
  if (!check_support (psf->width, psf->height, width, height, "from file", error))
    return NULL;
  gsize n = ss_image_plane_size (psf);
  double sum = 0;
  for (gsize i = 0; i < n; i++)
    if (isfinite (psf->data[i]))
      sum += psf->data[i];
  if (!(sum > 0) || !isfinite (sum))
    {
      g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT,
                   "the PSF image sums to %g; it must have a positive total", sum);
      return NULL;
    }
  g_autoptr (SsImage) out = ss_image_new (width, height, 1, error);
  if (out == NULL)
    return NULL;
  int cx = psf->width / 2, cy = psf->height / 2;
  for (int py = 0; py < psf->height; py++)
    for (int px = 0; px < psf->width; px++)
      {
        float v = psf->data[(gsize) py * psf->width + px];
        int row = ((py - cy) % height + height) % height;
        int col = ((px - cx) % width + width) % width;
        out->data[(gsize) row * width + col] += isfinite (v) ? (float) (v / sum) : 0.0f;
      }
  return g_steal_pointer (&out);
}
