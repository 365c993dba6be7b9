/* ss-fft-wisdom.h: FFTW wisdom kept between runs (not installed).
 *
 * FFTW_MEASURE tries several algorithms per size and keeps the fastest; its
 * choice, "wisdom", is valid for this machine and FFTW build. Keeping it in
 * $XDG_CACHE_HOME/sharpsky/fftw-wisdom-HOST (~/.cache on most systems; the
 * host name, because a shared home serves different CPUs) makes every run
 * after the first start iterating at once, as Siril does with its own.
 * SHARPSKY_FFTW_WISDOM overrides the place: a file path, or 0 (or "off") for
 * no wisdom at all. Deleting the file only costs the next run its planning.
 *
 * Called by ss-fft.c with its planning lock held (FFTW's planner is not
 * thread-safe). Every failure (unreadable, damaged, unwritable) is silent:
 * wisdom only saves time.
 */
#pragma once

#include "ss-fft.h"

G_BEGIN_DECLS

/* The wisdom file's path, or NULL when wisdom is off. g_free it. */
char *ss_fft_wisdom_path (void);

/* Imports the file into FFTW's wisdom. */
SsFftWisdomState ss_fft_wisdom_load (void);

/* Merges the file with what this process learned and writes it back
 * atomically (a temporary file renamed over it). */
void ss_fft_wisdom_save (void);

G_END_DECLS
