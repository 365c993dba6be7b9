/* ss-file-patterns.h: the file names the app's choosers offer, in one place:
 * what the FITS reader opens, what the exports write, and a filter made of
 * them. Suffixes without their leading dot, each list NULL-terminated:
 * GtkFileFilter matches a suffix in any case (OUT.Fits, as engine/io's
 * ss_output_format_from_name takes it), where its glob patterns are
 * case-sensitive outside Windows. A suffix may hold dots ("fits.gz"). */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

/* What the FITS export writes: plain, and gzip (not fpack's .fz). */
extern const char *const ss_fits_write_suffixes[];
/* What the FITS reader opens (images and PSFs): plain, gzip and fpack. */
extern const char *const ss_fits_read_suffixes[];
extern const char *const ss_png_suffixes[];
extern const char *const ss_csv_suffixes[];

/* Adds each of SUFFIXES (NULL-terminated) to FILTER. */
void ss_file_filter_add_suffixes (GtkFileFilter *filter, const char *const *suffixes);
/* Adds to CHOOSER a filter called NAME of SUFFIXES (NULL-terminated). */
void ss_file_chooser_add_filter (GtkFileChooser *chooser, const char *name,
                                 const char *const *suffixes);
/* Adds to CHOOSER the filter "All files" (every name: the pattern "*"). */
void ss_file_chooser_add_all_filter (GtkFileChooser *chooser);

G_END_DECLS
