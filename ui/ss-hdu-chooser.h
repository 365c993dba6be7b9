/* ss-hdu-chooser.h: which HDU, and which plane, of a FITS file to work on.
 *
 * A small modal window listing the file's image HDUs (number, EXTNAME, size,
 * pixel type, tile compression) and, for the one selected, its plane: any
 * plane of a cube, and for three planes (a colour image) their mean, red,
 * green or blue. The CLI's --hdu and --plane, for the app. "chosen" (hdu,
 * plane) is emitted on Open, with plane -1 meaning the mean of three colour
 * planes; the window then closes.
 */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

#define SS_TYPE_HDU_CHOOSER (ss_hdu_chooser_get_type ())
G_DECLARE_FINAL_TYPE (SsHduChooser, ss_hdu_chooser, SS, HDU_CHOOSER, GtkWindow)

/* The kind of the one entry that stands for a PNG file (number 0): its
 * planes are offered as a FITS image's are. */
#define SS_HDU_CHOOSER_PNG "PNG image"

/* HDUS: the file's SsFitsHdu list (ss_fits_list_hdus), kept by reference.
 * HDU and PLANE: the selection shown first. */
SsHduChooser *ss_hdu_chooser_new (GtkWindow *parent, const char *path, GPtrArray *hdus,
                                  int hdu, int plane);
/* Selects HDU (its number) and PLANE; FALSE when the file has no such image. */
gboolean ss_hdu_chooser_select (SsHduChooser *self, int hdu, int plane);
void ss_hdu_chooser_get_selection (SsHduChooser *self, int *hdu, int *plane);
/* As the Open button: emits "chosen" with the selection and closes. */
void ss_hdu_chooser_accept (SsHduChooser *self);

/* A line describing HDU for people: "HDU 2 · SCI · 2048 × 2048 × 3 · 16-bit integer". */
char *ss_hdu_chooser_describe (gconstpointer hdu);

G_END_DECLS
