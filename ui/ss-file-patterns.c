/* ss-file-patterns.c: the choosers' file suffixes (see ss-file-patterns.h). */
#include "ss-file-patterns.h"

/* The names engine/io writes FITS under, as ss_output_format_from_name
 * takes them (gzip when the name ends in .gz). */
const char *const ss_fits_write_suffixes[] = { "fits", "fit", "fts", "fits.gz", "fit.gz",
                                               "fts.gz", NULL };
/* The written ones, and fpack's tile-compressed files, which the reader
 * (CFITSIO) opens as well. */
const char *const ss_fits_read_suffixes[] = { "fits", "fit", "fts", "fits.gz", "fit.gz",
                                              "fts.gz", "fits.fz", "fit.fz", "fts.fz", NULL };
const char *const ss_png_suffixes[] = { "png", NULL };
const char *const ss_csv_suffixes[] = { "csv", NULL };

void
ss_file_filter_add_suffixes (GtkFileFilter *filter, const char *const *suffixes)
{
  g_return_if_fail (GTK_IS_FILE_FILTER (filter) && suffixes != NULL);
  for (guint i = 0; suffixes[i] != NULL; i++)
    gtk_file_filter_add_suffix (filter, suffixes[i]);
}

static void
add_filter (GtkFileChooser *chooser, GtkFileFilter *filter, const char *name)
{
  gtk_file_filter_set_name (filter, name);
  gtk_file_chooser_add_filter (chooser, filter);
  g_object_unref (filter);
}

void
ss_file_chooser_add_filter (GtkFileChooser *chooser, const char *name,
                            const char *const *suffixes)
{
  GtkFileFilter *filter = gtk_file_filter_new ();
  ss_file_filter_add_suffixes (filter, suffixes);
  add_filter (chooser, filter, name);
}

void
ss_file_chooser_add_all_filter (GtkFileChooser *chooser)
{
  GtkFileFilter *filter = gtk_file_filter_new ();
  gtk_file_filter_add_pattern (filter, "*");   /* a pattern: "*" is no suffix */
  add_filter (chooser, filter, "All files");
}
