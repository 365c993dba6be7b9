/* sharpsky.c: the desktop application's entry point.
 *
 *   sharpsky [FILE...]
 *
 * With no file, the window opens on the bundled sample image; every window
 * and command lives in ui/ (ss-application.c, ss-window.c).
 */
#include <glib.h>
#include "ss-application.h"

int
main (int argc, char **argv)
{
  /* The name recent-file entries are filed under (ss-window.c lists them). */
  g_set_application_name ("Sharpsky");
  g_autoptr (SsApplication) app = ss_application_new (G_APPLICATION_DEFAULT_FLAGS);
  return g_application_run (G_APPLICATION (app), argc, argv);
}
