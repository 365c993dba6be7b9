/* ss-application.h: the GtkApplication: app actions, accelerators, style.
 *
 * "sharpsky" with no file opens a window on the bundled sample; with files,
 * a window for each. app.quit (Ctrl+Q) and app.about; the window's actions
 * get their accelerators here so the shortcuts window can list them.
 */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

#define SS_APPLICATION_ID "org.sharpsky.Sharpsky"

#define SS_TYPE_APPLICATION (ss_application_get_type ())
G_DECLARE_FINAL_TYPE (SsApplication, ss_application, SS, APPLICATION, GtkApplication)

/* FLAGS: G_APPLICATION_HANDLES_OPEN is always added; tests pass
 * G_APPLICATION_NON_UNIQUE so they need no session bus. */
SsApplication *ss_application_new (GApplicationFlags flags);

G_END_DECLS
