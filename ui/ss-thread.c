/* ss-thread.c: lowering a thread's scheduling priority. */
#include "ss-thread.h"

#ifdef __linux__
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

void
ss_thread_lower_priority (int niceness)
{
#ifdef __linux__
  /* On Linux, PRIO_PROCESS with a thread id sets that thread's niceness
   * only. A failure (a sandbox refusing it) changes nothing that matters. */
  (void) setpriority (PRIO_PROCESS, (id_t) syscall (SYS_gettid), niceness);
#else
  (void) niceness;
#endif
}
