/* ss-output.c: safe output files.
 *
 * Every writer goes through the same three steps: ss_output_check (refuse the
 * input, an existing file without force, a directory that cannot take the
 * file), write a temporary file beside the target (same file system, so the
 * final rename is atomic), then ss_output_commit or ss_output_abort. A crash
 * or a full disk therefore leaves at worst a hidden temporary file, never a
 * half-written target, and an existing target stays untouched until the new
 * one is complete.
 */
#include "ss-output.h"
#include "ss-error.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <glib/gstdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* PATH made absolute with its directory resolved through symlinks where the
 * directory exists; for comparing paths that do not (all) exist yet. */
static char *
canonical_path (const char *path)
{
  g_autofree char *dir = g_path_get_dirname (path);
  g_autofree char *base = g_path_get_basename (path);
  char *real_dir = realpath (dir, NULL);
  g_autofree char *resolved_dir = real_dir ? g_strdup (real_dir) : g_canonicalize_filename (dir, NULL);
  free (real_dir);
  return g_canonicalize_filename (base, resolved_dir);
}

/* Same file: by device and inode when both exist (catches hard links and
 * symlinks), else by canonical path. */
static gboolean
is_same_file (const char *output, const GStatBuf *output_stat, const char *input)
{
  GStatBuf input_stat;
  if (output_stat && g_stat (input, &input_stat) == 0)
    return output_stat->st_dev == input_stat.st_dev && output_stat->st_ino == input_stat.st_ino;
  g_autofree char *a = canonical_path (output);
  g_autofree char *b = canonical_path (input);
  return strcmp (a, b) == 0;
}

static gboolean
check_directory_writable (const char *path, GError **error)
{
  g_autofree char *dir = g_path_get_dirname (path);
  g_autofree char *name = g_filename_display_name (path);
  g_autofree char *dir_name = g_filename_display_name (dir);
  GStatBuf dir_stat;
  if (g_stat (dir, &dir_stat) != 0)
    {
      int saved = errno;
      g_set_error (error, SS_ERROR, SS_ERROR_IO, "%s: cannot use directory %s: %s",
                   name, dir_name, g_strerror (saved));
      return FALSE;
    }
  if (!S_ISDIR (dir_stat.st_mode))
    {
      g_set_error (error, SS_ERROR, SS_ERROR_IO, "%s: %s is not a directory", name, dir_name);
      return FALSE;
    }
  if (access (dir, W_OK | X_OK) != 0)
    {
      int saved = errno;
      g_set_error (error, SS_ERROR, SS_ERROR_IO, "%s: directory %s is not writable: %s",
                   name, dir_name, g_strerror (saved));
      return FALSE;
    }
  return TRUE;
}

/* Whether PATH (whose stat is OUTPUT_STAT, NULL when it does not exist) is
 * one of INPUTS. */
static gboolean
is_one_of (const char *path, const GStatBuf *output_stat, const char *const *inputs)
{
  for (gsize i = 0; inputs && inputs[i]; i++)
    if (is_same_file (path, output_stat, inputs[i]))
      return TRUE;
  return FALSE;
}

gboolean
ss_output_is_input (const char *path, const char *const *inputs)
{
  GStatBuf output_stat;
  gboolean exists = g_stat (path, &output_stat) == 0;
  return is_one_of (path, exists ? &output_stat : NULL, inputs);
}

gboolean
ss_output_check (const char *path, gboolean force, const char *const *inputs, GError **error)
{
  if (path == NULL || path[0] == '\0')
    {
      g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT, "no output file given");
      return FALSE;
    }
  g_autofree char *name = g_filename_display_name (path);
  GStatBuf output_stat;
  gboolean exists = g_stat (path, &output_stat) == 0;

  if (is_one_of (path, exists ? &output_stat : NULL, inputs))
    {
      g_set_error (error, SS_ERROR, SS_ERROR_IO,
                   "%s: is an input file; the output must be a different file", name);
      return FALSE;
    }

  if (exists)
    {
      if (S_ISDIR (output_stat.st_mode))
        {
          g_set_error (error, SS_ERROR, SS_ERROR_IO, "%s: is a directory", name);
          return FALSE;
        }
      /* Renaming over a device or a pipe would replace it, not write to it. */
      if (!S_ISREG (output_stat.st_mode))
        {
          g_set_error (error, SS_ERROR, SS_ERROR_IO, "%s: exists and is not a regular file", name);
          return FALSE;
        }
      if (!force)
        {
          g_set_error (error, SS_ERROR, SS_ERROR_IO,
                       "%s: already exists (use --force to replace it)", name);
          return FALSE;
        }
    }
  return check_directory_writable (path, error);
}

/* The temporary files being written, for a signal handler to remove: a
 * fixed table (no allocation there), filled under a lock by the writers.
 * A slot's path is written before it is marked used, and unmarked before
 * it is reused; a handler that reads a slot being changed at worst unlinks
 * a name that no longer exists. More writers than slots go unregistered. */
#define TEMP_SLOTS 32
#define TEMP_PATH_MAX 4096
static struct {
  volatile sig_atomic_t used;
  char path[TEMP_PATH_MAX];
} temp_slots[TEMP_SLOTS];
static GMutex temp_slots_lock;

static void
register_temporary (const char *temp)
{
  if (strlen (temp) >= TEMP_PATH_MAX)
    return;
  g_mutex_lock (&temp_slots_lock);
  for (int i = 0; i < TEMP_SLOTS; i++)
    if (!temp_slots[i].used)
      {
        g_strlcpy (temp_slots[i].path, temp, TEMP_PATH_MAX);
        __atomic_thread_fence (__ATOMIC_SEQ_CST);
        temp_slots[i].used = 1;
        break;
      }
  g_mutex_unlock (&temp_slots_lock);
}

static void
unregister_temporary (const char *temp)
{
  g_mutex_lock (&temp_slots_lock);
  for (int i = 0; i < TEMP_SLOTS; i++)
    if (temp_slots[i].used && strcmp (temp_slots[i].path, temp) == 0)
      {
        temp_slots[i].used = 0;
        break;
      }
  g_mutex_unlock (&temp_slots_lock);
}

void
ss_output_remove_temporaries (void)
{
  for (int i = 0; i < TEMP_SLOTS; i++)
    if (temp_slots[i].used)
      (void) unlink (temp_slots[i].path);
}

char *
ss_output_temp_path (const char *path)
{
  g_return_val_if_fail (path != NULL, NULL);
  g_autofree char *dir = g_path_get_dirname (path);
  g_autofree char *base = g_path_get_basename (path);
  /* Hidden, recognisably ours, and short enough for NAME_MAX (255). */
  if (strlen (base) > 200)
    base[200] = '\0';
  g_autofree char *temp_name = g_strdup_printf (".%s.%08x%08x.sharpsky-tmp", base,
                                                g_random_int (), g_random_int ());
  char *temp = g_build_filename (dir, temp_name, NULL);
  register_temporary (temp);
  return temp;
}

/* Best effort: the data reach the disk before the rename makes them visible. */
static void
sync_path (const char *path, int flags)
{
  int fd = g_open (path, flags | O_CLOEXEC, 0);
  if (fd < 0)
    return;
  (void) fsync (fd);
  close (fd);
}

gboolean
ss_output_commit (const char *temp, const char *path, GError **error)
{
  g_return_val_if_fail (temp != NULL && path != NULL, FALSE);
  sync_path (temp, O_RDONLY);
  if (g_rename (temp, path) != 0)
    {
      int saved = errno;
      g_autofree char *name = g_filename_display_name (path);
      g_set_error (error, SS_ERROR, SS_ERROR_IO, "%s: cannot move the new file into place: %s",
                   name, g_strerror (saved));
      ss_output_abort (temp);
      return FALSE;
    }
  /* After the rename: a signal before it still finds the file to remove. */
  unregister_temporary (temp);
  g_autofree char *dir = g_path_get_dirname (path);
  sync_path (dir, O_RDONLY | O_DIRECTORY);
  return TRUE;
}

void
ss_output_abort (const char *temp)
{
  if (temp)
    {
      (void) g_unlink (temp);
      unregister_temporary (temp);
    }
}

gboolean
ss_output_write_text (const char *path, const char *text, gssize length, GError **error)
{
  g_autofree char *temp = ss_output_temp_path (path);
  g_autoptr (GError) file_error = NULL;
  if (!g_file_set_contents (temp, text, length, &file_error))
    {
      ss_output_abort (temp);
      g_set_error (error, SS_ERROR, SS_ERROR_IO, "%s", file_error->message);
      return FALSE;
    }
  if (!ss_output_commit (temp, path, error))
    {
      ss_output_abort (temp);
      return FALSE;
    }
  return TRUE;
}
