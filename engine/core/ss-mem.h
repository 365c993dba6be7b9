/* ss-mem.h: aligned allocation with a running count, for peak-memory reports. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

typedef struct {
  gsize current;
  gsize peak;
} SsMemCounter;

#define SS_MEM_ALIGNMENT 64

/* Passes over at least this many pixels are spread over the cores (OpenMP):
 * on a 26-megapixel frame each serial pass cost tens of milliseconds, and a
 * deblur makes a dozen of them; below it, waking the team costs more. */
#define SS_PARALLEL_PIXELS 65536

/* SS_MEM_ALIGNMENT-aligned (posix_memalign), zero-filled; SS_ERROR_OUT_OF_MEMORY
 * on failure. COUNTER may be NULL. Free with ss_mem_free, or with g_free where
 * the memory is handed on (a result's x): GLib uses the system allocator. */
gpointer ss_mem_alloc (SsMemCounter *counter, gsize bytes, GError **error);
void ss_mem_free (SsMemCounter *counter, gpointer ptr, gsize bytes);

/* Bytes of physical memory available now (MemAvailable), for size checks. */
gsize ss_mem_available (void);

/* "1.5 GiB" style text. */
char *ss_format_bytes (gsize bytes);

G_END_DECLS
