/* ss-bad-pixels.c: blanking the cold and the hot pixels (ss-bad-pixels.h
 * says why and by what rules). */
#include "ss-bad-pixels.h"
#include "ss-mem.h"
#include "ss-noise.h"
#include "ss-select.h"

#include <math.h>
#include <string.h>

/* The largest finite value among the 8 neighbours of P (a row STRIDE
 * wide): NaN ones are passed over (fmaxf); NAN when none is finite. */
static inline float
brightest_neighbour (const float *p, int stride)
{
  return fmaxf (fmaxf (fmaxf (p[-stride - 1], p[-stride]), fmaxf (p[-stride + 1], p[-1])),
                fmaxf (fmaxf (p[1], p[stride - 1]), fmaxf (p[stride], p[stride + 1])));
}

/* The third lowest of the finite values among the 8 neighbours of P; NAN
 * when fewer than 6 are finite. */
static float
third_lowest_neighbour (const float *p, int stride)
{
  const float v[8] = { p[-stride - 1], p[-stride], p[-stride + 1], p[-1],
                       p[1],           p[stride - 1], p[stride],   p[stride + 1] };
  float a = INFINITY, b = INFINITY, c = INFINITY;   /* the three lowest, a <= b <= c */
  int finite = 0;
  for (int k = 0; k < 8; k++)
    {
      float x = v[k];
      if (!isfinite (x))
        continue;
      finite++;
      if (x < a)
        {
          c = b;
          b = a;
          a = x;
        }
      else if (x < b)
        {
          c = b;
          b = x;
        }
      else if (x < c)
        c = x;
    }
  return finite >= 6 ? c : NAN;
}

gsize
ss_cold_pixels_blank (const float *data, int width, int height, double sky, double noise,
                      float *scaled)
{
  const float least = (float) (SS_COLD_SIGMAS * MAX (noise, 0.0));
  gsize blanked = 0;
#pragma omp parallel for reduction(+ : blanked) schedule(static) \
  if ((gsize) width * height > SS_PARALLEL_PIXELS)
  for (int y = 1; y < height - 1; y++)
    for (int x = 1; x < width - 1; x++)
      {
        gsize i = (gsize) y * width + x;
        float value = data[i];
        /* Most pixels are above the sky, or within the noise of their
         * brightest neighbour, which the third lowest cannot exceed: no sort
         * for them. */
        if (!(value < sky - least) || !(value < brightest_neighbour (data + i, width) - least)
            || !isfinite (scaled[i]))
          continue;
        float third = third_lowest_neighbour (data + i, width);
        float depth = fmaxf (least, 0.5f * (float) (third - sky));
        if (isfinite (third) && depth > 0.0f && value < third - depth)
          {
            scaled[i] = NAN;
            blanked++;
          }
      }
  return blanked;
}

/* The four lines through a pixel, each by one of its two neighbours on it
 * (the other is the opposite one). */
static const int line_steps[4][2] = { { 1, 0 }, { 0, 1 }, { 1, 1 }, { 1, -1 } };

SsHotRatios
ss_hot_pixels_kernel_ratios (const float *kernel, int width, int height)
{
  /* The peak where it is: a PSF file's may sit off its centre pixel (an
   * even size, a star cut out a pixel off), and its centre's ratio would
   * then be a wing's, under 1, and every star's core hot. */
  gsize n = (gsize) width * height, peak = 0;
  for (gsize i = 1; i < n; i++)
    peak = kernel[i] > kernel[peak] ? i : peak;
  int px = (int) (peak % width), py = (int) (peak / width);
#define AT(dx, dy) kernel[(gsize) ((py + (dy) + height) % height) * width + (px + (dx) + width) % width]
  float around = 0.0f, line_least = INFINITY, wide[2] = { 0.0f, 0.0f };
  for (int dy = -1; dy <= 1; dy++)
    for (int dx = -1; dx <= 1; dx++)
      if ((dx || dy) && (width > 1 || dx == 0) && (height > 1 || dy == 0))
        around = fmaxf (around, AT (dx, dy));
  /* A kernel of one row or column has one line: the others' neighbours
   * wrap onto the peak itself. */
  for (int k = 0; k < 4; k++)
    {
      int dx = line_steps[k][0], dy = line_steps[k][1];
      if ((width > 1 || dx == 0) && (height > 1 || dy == 0))
        line_least = fminf (line_least, fmaxf (AT (dx, dy), AT (-dx, -dy)));
    }
  /* On each line, both ways: the pixel beside the centre over the one
   * beyond it; rows and columns apart from the diagonals, whose pixels lie
   * further out (a kernel too small to have them has no wide ratio). */
  for (int k = 0; k < 4; k++)
    for (int sign = -1; sign <= 1; sign += 2)
      {
        int dx = sign * line_steps[k][0], dy = sign * line_steps[k][1];
        if ((width > 4 || dx == 0) && (height > 4 || dy == 0) && AT (2 * dx, 2 * dy) > 0.0f)
          wide[k / 2] = fmaxf (wide[k / 2], AT (dx, dy) / AT (2 * dx, 2 * dy));
      }
#undef AT
  SsHotRatios r = { INFINITY, INFINITY, INFINITY, INFINITY };
  if (wide[0] > 0.0f)
    r.wide = MAX (wide[0], 1.0);
  if (wide[1] > 0.0f)
    r.wide_diagonal = MAX (wide[1], 1.0);
  if (around > 0.0f)
    r.peak = MAX (kernel[peak] / around, 1.0);
  if (line_least > 0.0f && isfinite (line_least))
    r.line = MAX (kernel[peak] / line_least, 1.0);
  return r;
}

SsHotRatios
ss_hot_pixels_psf_ratios (const SsPsfSpec *spec, const SsPsfFit *fit)
{
  /* Up to 2049²: a Tiny Tim or WebbPSF file is often 256 px or more. */
  for (int side = 33; side <= 2049; side = 4 * side - 3)
    {
      g_autoptr (SsImage) kernel = fit != NULL ? ss_psf_fit_render (fit, side, side, NULL)
                                               : ss_psf_render (spec, side, side, NULL);
      if (kernel != NULL)
        return ss_hot_pixels_kernel_ratios (kernel->data, side, side);
    }
  return (SsHotRatios) { INFINITY, INFINITY, INFINITY, INFINITY };
}

/* The level a line's heights are taken over: the sky, or the data's first
 * percentile where that is lower. The ratios bound heights over the light's
 * true zero, and a level above it raises every ratio: on a frame the Sun
 * fills, the median sits far above its dark lanes, and a faint loop beside
 * a lane stood a line ratio over it. The single and pair rules ask every
 * neighbour to be dim, which such a loop is not. */
static float
line_base (const float *data, gsize n, double sky)
{
  /* From about 65536 pixels spread over the frame: a floor, not a measure,
   * and a pass over every pixel cost a quarter of a camera frame's prepare
   * step. */
  gsize stride = n / 65536 + 1, taken = 0;
  g_autofree float *sample = g_new (float, n / stride + 1);
  for (gsize i = 0; i < n; i += stride)
    sample[taken++] = data[i];
  SsSelectView all;
  ss_select_view_init (&all);
  gsize finite = ss_select_count (sample, taken, &all);
  double low = finite > 0 ? ss_select_kth (sample, taken, &all, finite / 100) : NAN;
  return (float) (isfinite (low) ? MIN (sky, low) : sky);
}

/* Whether P stands above both its neighbours on one of the 4 lines through
 * it (over the level BASE) by more than FACTOR times the brighter of the
 * two, plus LEAST. A line with a blank (NaN)
 * on it is not judged: the blank may hide the light that explains P, and
 * taking the other neighbour alone made the edge of a cut-off profile
 * beside a blank a track. P must lie a pixel inside the image (a ROW
 * STRIDE wide). */
static gboolean
stands_across_a_line (const float *p, int stride, float base, float factor, float least)
{
  float value = p[0] - base;
  for (int k = 0; k < 4; k++)
    {
      int step = line_steps[k][1] * stride + line_steps[k][0];
      float a = p[step], b = p[-step];
      if (isfinite (a) && isfinite (b)
          && value > factor * fmaxf (fmaxf (a, b) - base, 0.0f) + least)
        return TRUE;
    }
  return FALSE;
}

/* Whether P and a neighbour of its on one of the 4 lines (its partner)
 * stand across that line together: over BASE, the weaker of the two
 * exceeds FACTOR[k] times the brighter of the pixels beyond them on line k
 * (P's other neighbour and the partner's), plus LEAST. Lines with a blank
 * are not judged, as in stands_across_a_line. P must lie 2 pixels inside
 * the image. */
static gboolean
pair_stands_across_a_line (const float *p, int stride, float base, const float *factor,
                           float least)
{
  for (int k = 0; k < 4; k++)
    for (int sign = -1; sign <= 1; sign += 2)
      {
        int step = sign * (line_steps[k][1] * stride + line_steps[k][0]);
        float partner = p[step], before = p[-step], beyond = p[2 * step];
        if (isfinite (partner) && isfinite (before) && isfinite (beyond)
            && fminf (p[0], partner) - base
                 > factor[k] * fmaxf (fmaxf (before, beyond) - base, 0.0f) + least)
          return TRUE;
      }
  return FALSE;
}

/* Whether P is a pixel of a track one pixel wide: it stands across a line,
 * and so do two more pixels chained to it (two of its neighbours, or one
 * neighbour and a neighbour of that one). One or two pixels standing alone
 * are the peak and pair rules' to judge: the core of a compact source
 * sharper than a blur given too wide stands so. P must lie 3 pixels inside
 * the image. */
static gboolean
on_a_track (const float *p, int stride, float base, float factor, float least)
{
  if (!stands_across_a_line (p, stride, base, factor, least))
    return FALSE;
  int chained = 0;
  for (int dy = -1; dy <= 1; dy++)
    for (int dx = -1; dx <= 1; dx++)
      {
        const float *q = p + dy * stride + dx;
        if (!(dx || dy) || !stands_across_a_line (q, stride, base, factor, least))
          continue;
        if (++chained >= 2)
          return TRUE;
        /* A neighbour of Q's beyond P: the track runs on through Q. */
        for (int ey = -1; ey <= 1; ey++)
          for (int ex = -1; ex <= 1; ex++)
            {
              gboolean is_p_or_q = (dx + ex == 0 && dy + ey == 0) || (ex == 0 && ey == 0);
              if (!is_p_or_q
                  && stands_across_a_line (q + ey * stride + ex, stride, base, factor, least))
                return TRUE;
            }
      }
  return FALSE;
}

/* Whether P is a pixel of a track two pixels wide: it stands across a line
 * with a partner (pair_stands_across_a_line), and so do three of its
 * neighbours: its partner and the next pixels of the track. Three, not
 * two: at the corner of a profile cut off to exactly 0 (a noiseless test
 * field's stars cut at a box) a pixel and its diagonal partner stood over
 * the zeros beyond them, with one more pixel beside them. P must lie 3
 * pixels inside the image. */
static gboolean
on_a_wide_track (const float *p, int stride, float base, const float *factor, float least)
{
  if (!pair_stands_across_a_line (p, stride, base, factor, least))
    return FALSE;
  int chained = 0;
  for (int dy = -1; dy <= 1; dy++)
    for (int dx = -1; dx <= 1; dx++)
      if ((dx || dy)
          && pair_stands_across_a_line (p + dy * stride + dx, stride, base, factor, least)
          && ++chained >= 3)
        return TRUE;
  return FALSE;
}

/* The brightest pixel touching P or its partner at (PARTNER_DX,
 * PARTNER_DY), the pair left out, and those marked in HOT (HOT[0] is P's
 * mark; NULL: none) passed over: what a hot pair is held against. P must lie
 * 2 pixels inside the image (a ROW STRIDE wide). */
static float
ring_around_pair (const float *p, int stride, int partner_dx, int partner_dy,
                  const guint8 *hot)
{
  float ring = -INFINITY;
  for (int dy = -2; dy <= 2; dy++)
    for (int dx = -2; dx <= 2; dx++)
      {
        gboolean touches_p = ABS (dx) <= 1 && ABS (dy) <= 1;
        gboolean touches_partner = ABS (dx - partner_dx) <= 1 && ABS (dy - partner_dy) <= 1;
        gboolean in_pair = (dx == 0 && dy == 0) || (dx == partner_dx && dy == partner_dy);
        gssize j = (gssize) dy * stride + dx;
        if ((touches_p || touches_partner) && !in_pair && !(hot && hot[j] == 1))
          ring = fmaxf (ring, p[j]);
      }
  return ring;
}

/* Whether a pair whose weaker pixel stands WEAKER over BASE exceeds FACTOR
 * times RING's height (ring_around_pair) plus LEAST. */
static gboolean
pair_stands_over_ring (float weaker, float ring, float base, float factor, float least)
{
  return isfinite (ring) && weaker > factor * fmaxf (ring - base, 0.0f) + least;
}

/* Whether P and its brightest neighbour are a hit on two touching pixels:
 * the weaker of the two over the sky BASE stands more than FACTOR times
 * the brightest pixel touching either of them (over the sky) plus LEAST.
 * Under a blur such a pair's ratio is the blur's peak ratio at most (a star
 * midway between them is the worst case: checked numerically for Gaussians
 * of FWHM 1.3–4 and Moffats of FWHM 2–5), so FACTOR is the single pixel's.
 * P must lie 2 pixels inside the image (a ROW STRIDE wide). Each pixel of a
 * pair finds the pair from itself, so P alone is blanked by the caller. */
static gboolean
pair_is_hot (const float *p, int stride, float base, float factor, float least)
{
  int partner_dx = 0, partner_dy = 0;
  float partner = -INFINITY, second = -INFINITY;
  for (int dy = -1; dy <= 1; dy++)
    for (int dx = -1; dx <= 1; dx++)
      {
        float v = p[dy * stride + dx];
        if (!(dx || dy) || !(v > second))
          continue;
        if (v > partner)
          {
            second = partner;
            partner = v;
            partner_dx = dx;
            partner_dy = dy;
          }
        else
          second = v;
      }
  /* P's other neighbours are in the ring: most of a star's pixels fail here,
   * before the ring's 25 loads. */
  float weaker = fminf (p[0], partner) - base;
  if (!(weaker > least) || !(weaker > factor * fmaxf (second - base, 0.0f) + least))
    return FALSE;
  return pair_stands_over_ring (weaker, ring_around_pair (p, stride, partner_dx, partner_dy, NULL),
                                base, factor, least);
}

/* Whether the pixel at I, touching a hit already found (HOT), is one too:
 * held as the single pixel rule holds one but against its neighbours that
 * are not hits, or else with the brightest of them as the pair rule holds
 * a pair, against the pixels touching either that are not hits. Set aside
 * the hits, a track's pixels beside the ones found (where a slanting track
 * two pixels wide is three wide along a row, or a line through a pixel had
 * a blank) stand so; a star's pixels beside a track crossing it do not:
 * its brighter pixels hold the pair. Hits are HOT's pixels at 1 (2: added
 * in the round being judged). I must lie 2 pixels inside the image, a row
 * STRIDE wide. */
static gboolean
grows_from_hits (const float *data, const guint8 *hot, gsize i, int stride, float base,
                 float factor, float least)
{
  float value = data[i] - base;
  gboolean touches = FALSE;
  float brightest = -INFINITY;
  int bx = 0, by = 0;
  for (int dy = -1; dy <= 1; dy++)
    for (int dx = -1; dx <= 1; dx++)
      {
        gsize j = i + (gssize) dy * stride + dx;
        if (!(dx || dy))
          continue;
        if (hot[j] == 1)
          touches = TRUE;
        else if (data[j] > brightest)
          {
            brightest = data[j];
            bx = dx;
            by = dy;
          }
      }
  if (!touches || !isfinite (brightest))
    return FALSE;
  if (value > factor * fmaxf (brightest - base, 0.0f) + least)
    return TRUE;
  float weaker = fminf (value, brightest - base);
  return weaker > least
         && pair_stands_over_ring (weaker, ring_around_pair (data + i, stride, bx, by, hot + i),
                                   base, factor, least);
}

/* Grows the hits found (HOT, 1 where found) by grows_from_hits, in rounds
 * until one adds none (at most SS_HOT_GROWTH_ROUNDS): each round judges the
 * pixels touching the last round's hits, against the hits found before it
 * (a pixel added is 2 until the round ends). The pixels added are blanked
 * in SCALED and counted. Hits are few: a round costs their neighbours, not
 * a pass over the frame. */
static gsize
grow_from_hits (const float *data, int width, int height, float base, float factor,
                float least, guint8 *hot, float *scaled)
{
  gsize n = (gsize) width * height, added_in_all = 0;
  g_autoptr (GArray) last = g_array_new (FALSE, FALSE, sizeof (gsize));
  g_autoptr (GArray) added = g_array_new (FALSE, FALSE, sizeof (gsize));
  for (gsize i = 0; i < n; i++)
    if (hot[i])
      g_array_append_val (last, i);
  for (int round = 0; round < SS_HOT_GROWTH_ROUNDS && last->len > 0; round++)
    {
      g_array_set_size (added, 0);
      for (guint k = 0; k < last->len; k++)
        {
          gsize hit = g_array_index (last, gsize, k);
          int hx = (int) (hit % width), hy = (int) (hit / width);
          for (int y = MAX (hy - 1, 2); y <= MIN (hy + 1, height - 3); y++)
            for (int x = MAX (hx - 1, 2); x <= MIN (hx + 1, width - 3); x++)
              {
                gsize i = (gsize) y * width + x;
                if (hot[i] || !(data[i] - base > least) || !isfinite (scaled[i])
                    || !grows_from_hits (data, hot, i, width, base, factor, least))
                  continue;
                hot[i] = 2;
                g_array_append_val (added, i);
              }
        }
      for (guint k = 0; k < added->len; k++)
        {
          gsize i = g_array_index (added, gsize, k);
          hot[i] = 1;
          scaled[i] = NAN;
        }
      added_in_all += added->len;
      GArray *swap = last;
      last = added;
      added = swap;
    }
  return added_in_all;
}

/* A line rule's factor: SS_HOT_MARGIN times RATIO squared, the ratio of a
 * Gaussian √2 times sharper (ss-bad-pixels.h says why); no rule without one. */
static float
squared_factor (double ratio)
{
  return isfinite (ratio) ? (float) (SS_HOT_MARGIN * ratio * ratio) : INFINITY;
}

gsize
ss_hot_pixels_blank (const float *data, int width, int height, double sky, double noise,
                     const SsHotRatios *ratios, float *scaled)
{
  if (!isfinite (ratios->peak))
    return 0;
  const float factor = (float) (SS_HOT_MARGIN * ratios->peak);
  /* A kernel of one row or column has no line of its own across a track. */
  const float line_factor = squared_factor (ratios->line);
  const float straight = squared_factor (ratios->wide),
              diagonal = squared_factor (ratios->wide_diagonal);
  const float wide_factors[4] = { straight, straight, diagonal, diagonal };
  const float least = (float) (SS_HOT_SIGMAS * MAX (noise, 0.0)), base = (float) sky;
  const float lines_over = isfinite (line_factor) || isfinite (straight) || isfinite (diagonal)
                             ? line_base (data, (gsize) width * height, sky)
                             : base;
  gsize blanked = 0;
  g_autofree guint8 *hot = g_new0 (guint8, (gsize) width * height);   /* what the rules took */
#pragma omp parallel for reduction(+ : blanked) schedule(static) \
  if ((gsize) width * height > SS_PARALLEL_PIXELS)
  for (int y = 1; y < height - 1; y++)
    for (int x = 1; x < width - 1; x++)
      {
        gsize i = (gsize) y * width + x;
        float value = data[i] - base;
        if (!(value > least) || !isfinite (scaled[i]))
          continue;
        float brightest = brightest_neighbour (data + i, width);
        if (!isfinite (brightest))
          continue;   /* among blanks: nothing to hold it against */
        float neighbour = fmaxf (brightest - base, 0.0f);
        gboolean inside_pair_reach = x >= 2 && x < width - 2 && y >= 2 && y < height - 2;
        gboolean inside_track_reach = x >= 3 && x < width - 3 && y >= 3 && y < height - 3;
        if (value > factor * neighbour + least
            || (inside_pair_reach && pair_is_hot (data + i, width, base, factor, least))
            || (inside_track_reach
                && (on_a_track (data + i, width, lines_over, line_factor, least)
                    || on_a_wide_track (data + i, width, lines_over, wide_factors, least))))
          {
            scaled[i] = NAN;
            hot[i] = 1;
            blanked++;
          }
      }
  if (blanked > 0)
    blanked += grow_from_hits (data, width, height, base, factor, least, hot, scaled);
  return blanked;
}

void
ss_defects_find_saturation (const SsDefectRules *rules, const SsHeader *header,
                            const float *data, int width, int height, SsDefects *defects)
{
  *defects = (SsDefects) { .noise = NAN };
  defects->saturation = ss_saturation_resolve (rules->saturation_mode, rules->saturation_value,
                                               header, data, width, height);
}

void
ss_defects_blank (const SsDefectRules *rules, const float *data, int width, int height,
                  double sky, const SsPsfSpec *spec, const SsPsfFit *fit, float *scaled,
                  SsDefects *defects)
{
  SsSaturation *saturation = &defects->saturation;
  if (!rules->leaves_out)
    {
      /* direct-fft solves with every pixel or none: the defects stay in its
       * fit rather than fail it. */
      defects->kept_clipped = saturation->clipped;
      saturation->clipped = 0;
      return;
    }
  saturation->clipped = ss_saturation_blank (data, scaled, (gsize) width * height,
                                             saturation->level);
  if (!rules->bad_pixels)
    return;
  if (isnan (defects->noise))
    defects->noise = ss_noise_estimate (data, width, height);
  if (rules->nonneg)
    defects->cold = ss_cold_pixels_blank (data, width, height, sky, defects->noise, scaled);
  SsHotRatios ratios = ss_hot_pixels_psf_ratios (spec, fit);
  defects->hot = ss_hot_pixels_blank (data, width, height, sky, defects->noise, &ratios, scaled);
}
