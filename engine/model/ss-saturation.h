/* ss-saturation.h: the pixels a detector clipped, left out of the data term.
 *
 * A saturated star's core is flat at the detector's full well: no blur of
 * any sky gives that, so a solver fitting it spreads the missing light into
 * rings and moves the star's centroid, and the star keeps only the flux of
 * its clipped profile. Left out of the data term (as blank pixels are), the
 * core is filled in from the unclipped wings by the blur model: on a 512²
 * field with one star clipped over 21 pixels, `auto` recovered 4.1e6 of the
 * star's 5.0e6 e⁻ within 10 px (2.9e6 with the clipped core in the fit),
 * centred to the pixel, and scored 55.76 dB against 54.18 (input 54.33).
 *
 * The level comes, in this order, from the user, from the header (SATURATE,
 * the FITS community's convention; SATLEVEL, some pipelines'), or from the
 * data: a flat top at the image's maximum, at least SS_SATURATION_PLATEAU
 * pixels that equal the maximum exactly and touch another such pixel. An
 * unclipped star's brightest pixels differ by its noise, so three of them
 * tying with the maximum and touching is what clipping does (and 8-bit or
 * 16-bit full scale), not what photon noise does. Levels are in the plane's
 * units as read (BZERO and BSCALE applied), the units of the header's cards.
 */
#pragma once

#include <glib.h>

#include "ss-header.h"

G_BEGIN_DECLS

typedef enum {
  SS_SATURATION_AUTO,    /* the header's card, else a flat top at the maximum */
  SS_SATURATION_NONE,    /* every pixel in the data term */
  SS_SATURATION_VALUE,   /* a level given by the user */
} SsSaturationMode;

/* Pixels at the maximum, each touching another, that make a flat top. */
#define SS_SATURATION_PLATEAU 3

/* Where a saturation level came from. */
typedef enum {
  SS_SATURATION_FROM_NONE,      /* no level: nothing left out */
  SS_SATURATION_FROM_USER,
  SS_SATURATION_FROM_SATURATE,
  SS_SATURATION_FROM_SATLEVEL,
  SS_SATURATION_FROM_PLATEAU,
} SsSaturationSource;

typedef struct {
  double level;                /* pixels >= level are clipped; NAN: none left out */
  SsSaturationSource source;
  gsize clipped;               /* finite pixels at or above the level found */
  /* A level found automatically (a card, then a flat top) that would leave
   * out more than half the finite pixels is ignored: so much of the image
   * cannot be filled in from the rest, and such a card is more likely in
   * other units than right. IGNORED is where such a level came from
   * (FROM_NONE when none was); LEVEL and SOURCE are then the flat top's, if
   * one was found and kept, else NAN and FROM_NONE. */
  SsSaturationSource ignored;
} SsSaturation;

/* The level of HEADER's SATURATE or SATLEVEL card (the first finite one);
 * FALSE when neither holds a number. */
gboolean ss_saturation_from_header (const SsHeader *header, SsSaturation *saturation);

/* A flat top at the maximum of the finite values of DATA (WIDTH × HEIGHT):
 * FALSE when fewer than SS_SATURATION_PLATEAU pixels equal the maximum and
 * touch another (4-neighbours). */
gboolean ss_saturation_find_plateau (const float *data, int width, int height,
                                     SsSaturation *saturation);

/* The level MODE asks for (VALUE for SS_SATURATION_VALUE), from HEADER (may
 * be NULL) or DATA (WIDTH × HEIGHT), with the count of pixels it clips;
 * FROM_NONE when there is none. A level given is taken as it is. */
SsSaturation ss_saturation_resolve (SsSaturationMode mode, double value, const SsHeader *header,
                                    const float *data, int width, int height);

/* Sets SCALED[i] to NAN (a blank: out of the data term, filled in the
 * result) where DATA[i] >= LEVEL; returns how many were finite before. */
gsize ss_saturation_blank (const float *data, float *scaled, gsize n, double level);

/* Removes the saturation cards (SATURATE, SATLEVEL) from HEADER, a deblurred
 * result's, with a HISTORY line for each: its values are no longer clipped
 * there (a star's core goes far above), and a later run, or a photometry
 * tool, would take its sharpened cores for saturated ones. */
void ss_saturation_drop_cards (SsHeader *header);

/* "SATURATE", "a flat top at the maximum", ... for messages and HISTORY. */
const char *ss_saturation_source_describe (SsSaturationSource source);

G_END_DECLS
