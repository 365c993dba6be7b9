/* ss-thread.h: background threads that yield to the window.
 *
 * The window's main thread must never wait for a core: a redraw that waits
 * behind a solver using every core is a frozen window. Background work
 * therefore runs at a lower priority (Linux: a per-thread niceness, which
 * the threads it starts, such as OpenMP workers, inherit), the solver lowest.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

#define SS_NICENESS_RENDER 5   /* stretching previews for display */
#define SS_NICENESS_SOLVER 10  /* the solver and FFT planning */

/* Lowers the calling thread's priority to NICENESS (no effect elsewhere). */
void ss_thread_lower_priority (int niceness);

G_END_DECLS
