/* ss-saturation.c: the saturation level of a plane and its clipped pixels
 * (ss-saturation.h says why they are left out). */
#include "ss-saturation.h"
#include "ss-mem.h"

#include <math.h>

static const struct {
  const char *card;
  SsSaturationSource source;
} saturation_cards[] = {
  { "SATURATE", SS_SATURATION_FROM_SATURATE },
  { "SATLEVEL", SS_SATURATION_FROM_SATLEVEL },
};

void
ss_saturation_drop_cards (SsHeader *header)
{
  for (guint i = 0; header != NULL && i < G_N_ELEMENTS (saturation_cards); i++)
    {
      g_autofree char *value = ss_header_get_string (header, saturation_cards[i].card);
      if (value != NULL && ss_header_remove (header, saturation_cards[i].card) > 0)
        ss_header_add_history (header, "%s = %s of the input removed: the deblurred values are "
                               "not clipped there", saturation_cards[i].card, value);
    }
}

gboolean
ss_saturation_from_header (const SsHeader *header, SsSaturation *saturation)
{
  for (guint i = 0; header != NULL && i < G_N_ELEMENTS (saturation_cards); i++)
    {
      double level;
      if (ss_header_get_double (header, saturation_cards[i].card, &level) && isfinite (level))
        {
          saturation->level = level;
          saturation->source = saturation_cards[i].source;
          return TRUE;
        }
    }
  return FALSE;
}

static float
finite_maximum (const float *data, gsize n)
{
  float top = -INFINITY;
#pragma omp parallel for reduction(max : top) schedule(static) if (n > SS_PARALLEL_PIXELS)
  for (gsize i = 0; i < n; i++)
    if (isfinite (data[i]))
      top = MAX (top, data[i]);
  return top;
}

/* Whether pixel (X, Y), at TOP, has a 4-neighbour at TOP too. */
static gboolean
touches_top (const float *data, int w, int h, int x, int y, float top)
{
  const float *p = data + (gsize) y * w + x;
  return (x > 0 && p[-1] == top) || (x + 1 < w && p[1] == top) || (y > 0 && p[-w] == top)
         || (y + 1 < h && p[w] == top);
}

gboolean
ss_saturation_find_plateau (const float *data, int width, int height, SsSaturation *saturation)
{
  gsize n = (gsize) width * height;
  float top = finite_maximum (data, n);
  if (!isfinite (top))
    return FALSE;
  gsize flat = 0;
#pragma omp parallel for reduction(+ : flat) schedule(static) if (n > SS_PARALLEL_PIXELS)
  for (int y = 0; y < height; y++)
    for (int x = 0; x < width; x++)
      if (data[(gsize) y * width + x] == top && touches_top (data, width, height, x, y, top))
        flat++;
  if (flat < SS_SATURATION_PLATEAU)
    return FALSE;
  saturation->level = top;
  saturation->source = SS_SATURATION_FROM_PLATEAU;
  return TRUE;
}

static gsize
count_clipped (const float *data, gsize n, double level, gsize *finite)
{
  gsize clipped = 0, seen = 0;
#pragma omp parallel for reduction(+ : clipped, seen) schedule(static) if (n > SS_PARALLEL_PIXELS)
  for (gsize i = 0; i < n; i++)
    if (isfinite (data[i]))
      {
        seen++;
        clipped += data[i] >= level ? 1 : 0;
      }
  *finite = seen;
  return clipped;
}

/* Counts what S clips; an automatic level past half the finite pixels is
 * ignored (ss-saturation.h says why). */
static gboolean
count_or_ignore (SsSaturation *s, gboolean automatic, const float *data, gsize n)
{
  gsize finite;
  s->clipped = count_clipped (data, n, s->level, &finite);
  if (!automatic || 2 * s->clipped <= finite)
    return TRUE;
  s->ignored = s->source;
  s->level = NAN;
  s->source = SS_SATURATION_FROM_NONE;
  return FALSE;
}

SsSaturation
ss_saturation_resolve (SsSaturationMode mode, double value, const SsHeader *header,
                       const float *data, int width, int height)
{
  SsSaturation s = { .level = NAN };
  gsize n = (gsize) width * height;
  if (mode == SS_SATURATION_VALUE)
    {
      s.level = value;
      s.source = SS_SATURATION_FROM_USER;
      count_or_ignore (&s, FALSE, data, n);
    }
  else if (mode == SS_SATURATION_AUTO)
    {
      /* A card that would clip most of the image is likely in other units
       * (electrons for ADU): the data's own flat top may still be found. */
      SsSaturation plateau = { .level = NAN };
      if ((!ss_saturation_from_header (header, &s) || !count_or_ignore (&s, TRUE, data, n))
          && ss_saturation_find_plateau (data, width, height, &plateau)
          && count_or_ignore (&plateau, TRUE, data, n))
        {
          plateau.ignored = s.ignored;
          s = plateau;
        }
      else if (s.ignored == SS_SATURATION_FROM_NONE)
        s.ignored = plateau.ignored;
    }
  return s;
}

gsize
ss_saturation_blank (const float *data, float *scaled, gsize n, double level)
{
  if (!isfinite (level))
    return 0;
  gsize blanked = 0;
#pragma omp parallel for reduction(+ : blanked) schedule(static) if (n > SS_PARALLEL_PIXELS)
  for (gsize i = 0; i < n; i++)
    if (data[i] >= level && isfinite (scaled[i]))
      {
        scaled[i] = NAN;
        blanked++;
      }
  return blanked;
}

const char *
ss_saturation_source_describe (SsSaturationSource source)
{
  switch (source)
    {
    case SS_SATURATION_FROM_NONE: return "none";
    case SS_SATURATION_FROM_USER: return "the level given";
    case SS_SATURATION_FROM_SATURATE: return "the header's SATURATE";
    case SS_SATURATION_FROM_SATLEVEL: return "the header's SATLEVEL";
    case SS_SATURATION_FROM_PLATEAU: return "a flat top at the maximum";
    }
  return "?";
}
