/* ss-file-patterns.h: the file names the app's choosers offer, in one place:
 * what the FITS reader opens, what the exports write, and a filter made of
 * them. Glob patterns, each list NULL-terminated; both cases are listed, as
 * GtkFileFilter's patterns match case-sensitively outside Windows. */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

/* What the FITS export writes: plain, and gzip (not fpack's .fz). */
extern const char *const ss_fits_write_patterns[];
/* What the FITS reader opens (images and PSFs): plain, gzip and fpack. */
extern const char *const ss_fits_read_patterns[];
extern const char *const ss_png_patterns[];
extern const char *const ss_csv_patterns[];
/* Every file ("All files"). */
extern const char *const ss_all_patterns[];

/* Adds each of PATTERNS (NULL-terminated) to FILTER. */
void ss_file_filter_add_patterns (GtkFileFilter *filter, const char *const *patterns);
/* Adds to CHOOSER a filter called NAME of PATTERNS (NULL-terminated). */
void ss_file_chooser_add_filter (GtkFileChooser *chooser, const char *name,
                                 const char *const *patterns);

G_END_DECLS
