/* ss-file-patterns.c: the choosers' file patterns (see ss-file-patterns.h). */
#include "ss-file-patterns.h"

const char *const ss_fits_write_patterns[] = { "*.fits", "*.fit", "*.fts", "*.FITS", "*.FIT",
                                               "*.FTS", "*.fits.gz", "*.FITS.gz", NULL };
/* The written ones, and fpack's tile-compressed files, which the reader
 * (CFITSIO) opens as well. */
const char *const ss_fits_read_patterns[] = { "*.fits", "*.fit", "*.fts", "*.FITS", "*.FIT",
                                              "*.FTS", "*.fits.gz", "*.FITS.gz", "*.fits.fz",
                                              "*.FITS.fz", NULL };
const char *const ss_png_patterns[] = { "*.png", "*.PNG", NULL };
const char *const ss_csv_patterns[] = { "*.csv", "*.CSV", NULL };
const char *const ss_all_patterns[] = { "*", NULL };

void
ss_file_filter_add_patterns (GtkFileFilter *filter, const char *const *patterns)
{
  g_return_if_fail (GTK_IS_FILE_FILTER (filter) && patterns != NULL);
  for (guint i = 0; patterns[i] != NULL; i++)
    gtk_file_filter_add_pattern (filter, patterns[i]);
}

void
ss_file_chooser_add_filter (GtkFileChooser *chooser, const char *name,
                            const char *const *patterns)
{
  GtkFileFilter *filter = gtk_file_filter_new ();
  gtk_file_filter_set_name (filter, name);
  ss_file_filter_add_patterns (filter, patterns);
  gtk_file_chooser_add_filter (chooser, filter);
  g_object_unref (filter);
}
