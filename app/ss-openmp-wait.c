/* ss-openmp-wait.c: see ss-openmp-wait.h.
 *
 * Why: libgomp's default keeps an idle thread spinning for 300000 rounds at
 * every barrier. On a machine whose cores are busy with anything else (a
 * build, a second sharpsky-cli of a batch, the app's own drawing) the
 * spinning threads take the cores from the thread the barrier waits for.
 * On the 2-core VM of PERFORMANCE.md ("OpenMP's idle threads"), at 512²
 * with three busy processes beside it, RL ran 12.4 ms an iteration with the
 * default and 5.6 with 500 spins, NIHT 82 and 22; idle, 500 spins is within
 * 3% of the default, where sleeping at once (OMP_WAIT_POLICY=passive) made
 * RL twice as slow. */
#include "ss-openmp-wait.h"

#include <glib.h>
#include <unistd.h>

void
ss_openmp_settle_wait (char **argv)
{
  if (g_getenv ("OMP_WAIT_POLICY") != NULL || g_getenv ("GOMP_SPINCOUNT") != NULL)
    return;
  if (!g_setenv ("GOMP_SPINCOUNT", SS_OPENMP_SPIN_COUNT, TRUE))
    return;
  execv ("/proc/self/exe", argv);
  /* Still here: libgomp keeps the default it read; nothing else changes. */
}
