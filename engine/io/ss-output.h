/* ss-output.h: safe output files.
 *
 * Outputs go to a temporary file beside the target and are renamed into
 * place only when complete, so a failure never leaves a half-written file and
 * never touches an existing one. The input is never the output.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Checks PATH may be written: not one of INPUTS (same file, by device and
 * inode, or the same canonical path), not existing unless FORCE, its directory
 * exists and is writable. */
gboolean ss_output_check (const char *path, gboolean force, const char *const *inputs, GError **error);

/* Whether PATH is one of INPUTS (NULL-terminated, may be NULL) by
 * ss_output_check's test: the same file, or the same canonical path. */
gboolean ss_output_is_input (const char *path, const char *const *inputs);

/* A new temporary path beside PATH (the caller writes it, then commits or
 * aborts). It is registered until then, for ss_output_remove_temporaries. */
char *ss_output_temp_path (const char *path);
/* Unlinks every registered temporary file: async-signal-safe, for a signal
 * handler about to end the process (a second Ctrl-C, SIGTERM's second),
 * so that no hidden .sharpsky-tmp file is left beside an output. */
void ss_output_remove_temporaries (void);
/* Renames TEMP onto PATH (atomic). */
gboolean ss_output_commit (const char *temp, const char *path, GError **error);
/* Removes TEMP, ignoring errors. */
void ss_output_abort (const char *temp);
/* Writes LENGTH bytes of TEXT (-1: up to its NUL) to PATH through a
 * temporary file, committed when complete (the caller checks PATH first). */
gboolean ss_output_write_text (const char *path, const char *text, gssize length,
                               GError **error);

G_END_DECLS
