/* ss-psf-fit-stars.c: finding stars to fit: the peak near a given position,
 * first guesses of sky, noise and FWHM around a peak, and the automatic search
 * (ss_psf_find_stars): bright isolated unsaturated stars, fitted, their
 * outlying fits dropped and the rest combined. */
#include "ss-psf-fit.h"
#include "ss-psf-fit-private.h"
#include "ss-error.h"
#include "ss-noise.h"
#include "ss-saturation.h"
#include "ss-scaling.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MIN_CUTOUT_RADIUS 5
#define MAX_CUTOUT_RADIUS 64
#define CUTOUT_FWHMS 4.0       /* cutout radius in FWHM: enough wing for beta */
#define NEIGHBOUR_FRACTION 0.1 /* a neighbour higher than this share of a star spoils it */
#define NEIGHBOUR_SIGMAS 5.0   /* ... when it stands this many noise sigmas above the sky */

/* ---- first guesses -------------------------------------------------------- */

/* The highest finite pixel within SEARCH_RADIUS of (x, y). */
gboolean
ss_psf_fit_find_peak_near (const float *data, int w, int h, double x, double y, int *px, int *py)
{
  int cx = (int) lround (x), cy = (int) lround (y);
  float best = -INFINITY;
  for (int yy = MAX (cy - SEARCH_RADIUS, 0); yy <= MIN (cy + SEARCH_RADIUS, h - 1); yy++)
    for (int xx = MAX (cx - SEARCH_RADIUS, 0); xx <= MIN (cx + SEARCH_RADIUS, w - 1); xx++)
      {
        float v = data[(gsize) yy * w + xx];
        if (isfinite (v) && v > best)
          {
            best = v;
            *px = xx;
            *py = yy;
          }
      }
  return isfinite (best);
}

/* Median and robust sigma of the finite pixels on the square ring at
 * distance RADIUS from (cx, cy): the local sky and its noise. */
static gboolean
ring_statistics (const float *data, int w, int h, int cx, int cy, int radius,
                 double *median, double *sigma)
{
  GArray *ring = g_array_new (FALSE, FALSE, sizeof (float));
  for (int y = cy - radius; y <= cy + radius; y++)
    for (int x = cx - radius; x <= cx + radius; x++)
      {
        if (MAX (abs (x - cx), abs (y - cy)) != radius || x < 0 || y < 0 || x >= w || y >= h)
          continue;
        float v = data[(gsize) y * w + x];
        if (isfinite (v))
          g_array_append_val (ring, v);
      }
  gboolean ok = ring->len >= 4;
  if (ok)
    {
      float *values = (float *) ring->data;
      *median = ss_median (values, ring->len);
      for (guint i = 0; i < ring->len; i++)
        values[i] = fabsf (values[i] - (float) *median);
      *sigma = ss_median (values, ring->len) / 0.6744897501960817;
    }
  g_array_free (ring, TRUE);
  return ok;
}

/* FWHM guess: along 8 rays from the peak, the distance where the profile
 * falls below half its height (linearly interpolated); the mean of the rays.
 * Rays ignore neighbours beyond the first fall, unlike a pixel count. */
static double
half_width_guess (const float *data, int w, int h, int cx, int cy, double sky, int limit)
{
  static const int dirs[8][2] = { { 1, 0 }, { -1, 0 }, { 0, 1 }, { 0, -1 },
                                  { 1, 1 }, { -1, -1 }, { 1, -1 }, { -1, 1 } };
  double peak = data[(gsize) cy * w + cx] - sky;
  double half = 0.5 * peak, total = 0.0;
  int rays = 0;
  for (int d = 0; d < 8; d++)
    {
      double step = d < 4 ? 1.0 : G_SQRT2;
      double previous = peak;
      for (int k = 1; k <= limit; k++)
        {
          int x = cx + k * dirs[d][0], y = cy + k * dirs[d][1];
          if (x < 0 || y < 0 || x >= w || y >= h)
            break;
          double v = data[(gsize) y * w + x] - sky;
          if (!isfinite (v))
            break;
          if (v < half)
            {
              double frac = (previous - half) / (previous - v);
              total += (k - 1 + frac) * step;
              rays++;
              break;
            }
          previous = v;
        }
    }
  return rays > 0 ? 2.0 * total / rays : NAN;
}

/* Sky, height and FWHM guesses around the peak (cx, cy), the ring growing
 * with the star. */
gboolean
ss_psf_fit_first_guess (const float *data, int w, int h, int cx, int cy,
                        double *sky, double *noise, double *fwhm)
{
  int ring = 8;
  for (int round = 0; round < 4; round++)
    {
      if (!ring_statistics (data, w, h, cx, cy, ring, sky, noise))
        return FALSE;
      *fwhm = half_width_guess (data, w, h, cx, cy, *sky, ring);
      if (!isfinite (*fwhm) || 1.5 * *fwhm <= ring || ring >= MAX_CUTOUT_RADIUS)
        break;
      ring = MIN ((int) ceil (3.0 * *fwhm), MAX_CUTOUT_RADIUS);
    }
  return isfinite (*fwhm);
}

int
ss_psf_fit_cutout_radius_for (double fwhm)
{
  return CLAMP ((int) ceil (CUTOUT_FWHMS * fwhm), MIN_CUTOUT_RADIUS, MAX_CUTOUT_RADIUS);
}

/* ---- automatic search ----------------------------------------------------- */

void
ss_star_search_init (SsStarSearch *search)
{
  memset (search, 0, sizeof *search);
  search->model = SS_PSF_MODEL_MOFFAT;
  search->plane = 0;
  search->threshold = 20.0;
  search->saturation = NAN;
  search->noise = NAN;
  search->isolation = 0.0;
  search->max_stars = 25;
}

typedef struct {
  int x, y;
  float height;        /* above the sky */
  gboolean usable;     /* FALSE: flat top or a NaN neighbour */
} Peak;

static int
compare_peaks_by_height (gconstpointer a, gconstpointer b)
{
  float ha = ((const Peak *) a)->height, hb = ((const Peak *) b)->height;
  return (ha < hb) - (ha > hb);   /* highest first */
}

/* Whether pixel (X, Y) (not on the border) is a local maximum of its 3x3
 * neighbourhood higher than FLOOR above the sky; *PEAK then describes it. */
static gboolean
peak_at (const float *data, int w, int x, int y, double sky, double floor, Peak *peak)
{
  float v = data[(gsize) y * w + x];
  if (!(v - sky > floor))
    return FALSE;
  gboolean flat = FALSE, finite = TRUE;
  for (int dy = -1; dy <= 1; dy++)
    for (int dx = -1; dx <= 1; dx++)
      {
        if (dx == 0 && dy == 0)
          continue;
        float u = data[(gsize) (y + dy) * w + x + dx];
        if (!isfinite (u))
          finite = FALSE;
        else if (u > v)
          return FALSE;
        else if (u == v)
          flat = TRUE;
      }
  *peak = (Peak) { x, y, (float) (v - sky), !flat && finite };
  return TRUE;
}

/* Rows find_peaks scans between two looks at the cancellable: 64 rows of a
 * 61-megapixel frame are some 600 000 pixels, so a cancelled search ends
 * within a moment without a look per pixel. */
#define ROWS_PER_CANCEL_CHECK 64

/* Local maxima of the 3x3 neighbourhood higher than FLOOR above the sky,
 * highest first, or NULL with G_IO_ERROR_CANCELLED when CANCELLABLE is
 * cancelled meanwhile. */
static GArray *
find_peaks (const float *data, int w, int h, double sky, double floor,
            GCancellable *cancellable, GError **error)
{
  GArray *peaks = g_array_new (FALSE, FALSE, sizeof (Peak));
  for (int y = 1; y + 1 < h; y++)
    {
      if (y % ROWS_PER_CANCEL_CHECK == 0
          && g_cancellable_set_error_if_cancelled (cancellable, error))
        {
          g_array_free (peaks, TRUE);
          return NULL;
        }
      Peak peak;
      for (int x = 1; x + 1 < w; x++)
        if (peak_at (data, w, x, y, sky, floor, &peak))
          g_array_append_val (peaks, peak);
    }
  g_array_sort (peaks, compare_peaks_by_height);
  return peaks;
}

static gboolean
core_saturated (const float *data, int w, int cx, int cy, double saturation)
{
  for (int dy = -1; dy <= 1; dy++)
    for (int dx = -1; dx <= 1; dx++)
      if (data[(gsize) (cy + dy) * w + cx + dx] >= saturation)
        return TRUE;
  return FALSE;
}

/* TRUE when another peak within RADIUS is higher than NEIGHBOUR_FRACTION of
 * peaks[INDEX]'s height. */
static gboolean
has_close_neighbour (const GArray *peaks, guint index, double radius)
{
  const Peak *self = &g_array_index (peaks, Peak, index);
  double r2 = radius * radius;
  for (guint i = 0; i < peaks->len; i++)
    {
      const Peak *other = &g_array_index (peaks, Peak, i);
      if (i == index || other->height <= NEIGHBOUR_FRACTION * self->height)
        continue;
      double dx = other->x - self->x, dy = other->y - self->y;
      if (dx * dx + dy * dy <= r2)
        return TRUE;
    }
  return FALSE;
}

/* The data level treated as saturated: SEARCH's, else the rule a single
 * star's fit takes (ss_psf_fit_saturation_level_of: the header's card,
 * else a flat top at the maximum, else none), on the plane as read (BZERO
 * and BSCALE applied, the sky not subtracted: core_saturated compares raw
 * pixels), the units the card states the level in. *SOURCE: where it came
 * from, for messages. */
static double
saturation_level (const SsImage *image, const SsStarSearch *search, const float *data,
                  SsSaturationSource *source)
{
  *source = SS_SATURATION_FROM_USER;
  if (!isnan (search->saturation))
    return search->saturation;
  return ss_psf_fit_saturation_level_of (image->header, data, image->width, image->height,
                                         source);
}

/* Tries the candidate peaks[INDEX]; a usable star lands in FITS. */
static void
try_candidate (const float *data, int w, int h, const GArray *peaks, guint index,
               const SsStarSearch *search, double saturation, GArray *fits)
{
  const Peak *peak = &g_array_index (peaks, Peak, index);
  if (!peak->usable || core_saturated (data, w, peak->x, peak->y, saturation))
    return;
  double sky, noise, fwhm;
  if (!ss_psf_fit_first_guess (data, w, h, peak->x, peak->y, &sky, &noise, &fwhm))
    return;
  int radius = ss_psf_fit_cutout_radius_for (fwhm);
  if (peak->x < radius || peak->y < radius || peak->x + radius >= w || peak->y + radius >= h)
    return;   /* a star cut by the edge would bias the fit */
  double isolation = search->isolation > 0.0 ? search->isolation : MAX (8.0, (double) radius);
  if (has_close_neighbour (peaks, index, isolation))
    return;
  SsPsfFit fit;
  if (ss_psf_fit_at_peak (data, w, h, peak->x, peak->y, radius, sky, fwhm, search->model,
                          &fit, NULL))
    g_array_append_val (fits, fit);
}

/* Deviations of one fit from the sample's medians that the clipping looks at. */
enum { DEV_FWHM, DEV_E1, DEV_E2, DEV_BETA, DEV_COUNT };

static void
fit_features (const SsPsfFit *fit, double *features)
{
  features[DEV_FWHM] = log (fit->fwhm);
  features[DEV_E1] = fit->ellipticity * cos (2.0 * fit->angle);
  features[DEV_E2] = fit->ellipticity * sin (2.0 * fit->angle);
  features[DEV_BETA] = fit->model == SS_PSF_MODEL_MOFFAT ? log (fit->beta) : 0.0;
}

/* Removes fits more than 3 robust sigmas from the median in FWHM, either
 * ellipticity component or beta: blends of two stars too close to show two
 * maxima, cosmic rays and galaxies. Sigma is floored (1% in FWHM and beta,
 * 0.01 in ellipticity) so that a sample of near-identical fits keeps them all. */
static void
drop_outlying_fits (GArray *fits)
{
  static const double floor_sigma[DEV_COUNT] = { 0.01, 0.01, 0.01, 0.01 };
  guint n = fits->len;
  if (n < 3)
    return;
  double *features = g_new (double, (gsize) n * DEV_COUNT);
  float *column = g_new (float, n);
  double centre[DEV_COUNT], spread[DEV_COUNT];
  for (guint i = 0; i < n; i++)
    fit_features (&g_array_index (fits, SsPsfFit, i), features + (gsize) i * DEV_COUNT);
  for (int f = 0; f < DEV_COUNT; f++)
    {
      for (guint i = 0; i < n; i++)
        column[i] = (float) features[(gsize) i * DEV_COUNT + f];
      centre[f] = ss_median (column, n);
      for (guint i = 0; i < n; i++)
        column[i] = fabsf (column[i] - (float) centre[f]);
      spread[f] = MAX (1.4826 * ss_median (column, n), floor_sigma[f]);
    }
  for (guint i = n; i-- > 0;)
    for (int f = 0; f < DEV_COUNT; f++)
      if (fabs (features[(gsize) i * DEV_COUNT + f] - centre[f]) > 3.0 * spread[f])
        {
          g_array_remove_index (fits, i);
          break;
        }
  g_free (column);
  g_free (features);
}

/* The levels the search holds peaks against, measured on the plane. */
typedef struct {
  double sky, noise, saturation;
  SsSaturationSource saturation_from;   /* for messages: where the level came from */
} SearchLevels;

static gboolean
measure_levels (const SsImage *image, const SsStarSearch *search, const float *data,
                SearchLevels *levels, GError **error)
{
  gsize n = ss_image_plane_size (image);
  SsScaling scaling;
  if (!ss_scaling_estimate (data, n, SS_SKY_CLIPPED_MEDIAN, 0.0, &scaling, error))
    return FALSE;
  levels->sky = scaling.sky;
  levels->noise = isnan (search->noise) ? ss_noise_estimate (data, image->width, image->height)
                                        : search->noise;
  if (!(levels->noise > 0.0))
    levels->noise = 1e-6 * scaling.scale;   /* noiseless (synthetic) data */
  levels->saturation = saturation_level (image, search, data, &levels->saturation_from);
  return TRUE;
}

/* What the search's refusal says of saturation: the level and where it came
 * from, or that nothing is saturated. */
static char *
describe_saturation (const SearchLevels *levels)
{
  if (!isfinite (levels->saturation))
    return g_strdup ("; nothing saturated: no SATURATE or SATLEVEL card, no flat top");
  if (levels->saturation_from == SS_SATURATION_FROM_USER)
    return g_strdup_printf (", below saturation %.3g", levels->saturation);
  return g_strdup_printf (", below saturation %.3g (%s)", levels->saturation,
                          ss_saturation_source_describe (levels->saturation_from));
}

/* Fits the candidates of PEAKS above the threshold, brightest first, until
 * max_stars fit; NULL with G_IO_ERROR_CANCELLED when CANCELLABLE is
 * cancelled (looked at before each candidate: one fit is milliseconds, but a
 * crowded frame has thousands of candidates). */
static GArray *
fit_candidates (const float *data, int w, int h, const GArray *peaks,
                const SsStarSearch *search, const SearchLevels *levels,
                GCancellable *cancellable, GError **error)
{
  GArray *fits = g_array_new (FALSE, FALSE, sizeof (SsPsfFit));
  for (guint i = 0; i < peaks->len && (int) fits->len < search->max_stars; i++)
    {
      if (g_cancellable_set_error_if_cancelled (cancellable, error))
        {
          g_array_free (fits, TRUE);
          return NULL;
        }
      if (g_array_index (peaks, Peak, i).height <= search->threshold * levels->noise)
        break;   /* sorted: the rest are fainter */
      try_candidate (data, w, h, peaks, i, search, levels->saturation, fits);
    }
  return fits;
}

gboolean
ss_psf_find_stars (const SsImage *image, const SsStarSearch *search, SsPsfFit *combined,
                   GArray **fits_out, GCancellable *cancellable, GError **error)
{
  if (image == NULL || search == NULL || combined == NULL
      || search->plane < 0 || search->plane >= image->planes
      || !(search->threshold > 0.0) || search->max_stars < 1
      || (guint) search->model > SS_PSF_MODEL_MOFFAT)
    {
      g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT,
                   "invalid star search (plane, threshold > 0 and max stars >= 1 are needed)");
      return FALSE;
    }
  int w = image->width, h = image->height;
  const float *data = image->data + (gsize) search->plane * ss_image_plane_size (image);

  /* The sky's and the noise's estimates are single passes the engine does
   * not interrupt: the cancellable is looked at on either side of them. */
  SearchLevels levels;
  if (g_cancellable_set_error_if_cancelled (cancellable, error)
      || !measure_levels (image, search, data, &levels, error)
      || g_cancellable_set_error_if_cancelled (cancellable, error))
    return FALSE;

  /* Stars are the peaks above the threshold, but any significant peak (5
   * sigma) can spoil a neighbour, so the isolation test sees those too. */
  GArray *peaks = find_peaks (data, w, h, levels.sky,
                              MIN (NEIGHBOUR_SIGMAS, search->threshold) * levels.noise,
                              cancellable, error);
  if (peaks == NULL)
    return FALSE;
  GArray *fits = fit_candidates (data, w, h, peaks, search, &levels, cancellable, error);
  g_array_free (peaks, TRUE);
  if (fits == NULL)
    return FALSE;

  if (fits->len == 0)
    {
      g_array_free (fits, TRUE);
      g_autofree char *below = describe_saturation (&levels);
      g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT,
                   "no isolated unsaturated star found (peaks above %.3g = sky %.3g + %g × "
                   "noise %.3g%s)",
                   levels.sky + search->threshold * levels.noise, levels.sky, search->threshold,
                   levels.noise, below);
      return FALSE;
    }
  drop_outlying_fits (fits);
  ss_psf_fit_combine ((const SsPsfFit *) fits->data, fits->len, combined);
  if (fits_out != NULL)
    *fits_out = fits;
  else
    g_array_free (fits, TRUE);
  return TRUE;
}
