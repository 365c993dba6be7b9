/* ss-fft-wisdom.c: FFTW wisdom in the user's cache (ss-fft-wisdom.h). */
#include "ss-fft-wisdom.h"

#include <fftw3.h>
#include <glib/gstdio.h>
#include <stdlib.h>
#include <string.h>

char *
ss_fft_wisdom_path (void)
{
  const char *env = g_getenv ("SHARPSKY_FFTW_WISDOM");
  if (env != NULL)
    {
      if (*env == '\0' || g_str_equal (env, "0") || g_ascii_strcasecmp (env, "off") == 0)
        return NULL;
      return g_strdup (env);
    }
  const char *cache = g_get_user_cache_dir ();
  if (cache == NULL || *cache == '\0')
    return NULL;
  g_autofree char *host = g_strdup (g_get_host_name ());
  g_strcanon (host, G_CSET_a_2_z G_CSET_A_2_Z G_CSET_DIGITS "-.", '_');
  g_autofree char *name = g_strconcat ("fftw-wisdom-", host, NULL);
  return g_build_filename (cache, "sharpsky", name, NULL);
}

/* The file's text, or NULL when it is missing, unreadable or not text. */
static char *
read_wisdom_text (const char *path)
{
  char *text = NULL;
  gsize length = 0;
  if (!g_file_get_contents (path, &text, &length, NULL))
    return NULL;
  /* FFTW's parser reads up to a NUL: a file with one inside is damaged. */
  if (strlen (text) != length)
    g_clear_pointer (&text, g_free);
  return text;
}

SsFftWisdomState
ss_fft_wisdom_load (void)
{
  g_autofree char *path = ss_fft_wisdom_path ();
  if (path == NULL)
    return SS_FFT_WISDOM_OFF;
  if (!g_file_test (path, G_FILE_TEST_EXISTS))
    return SS_FFT_WISDOM_NONE;
  g_autofree char *text = read_wisdom_text (path);
  if (text == NULL || !fftwf_import_wisdom_from_string (text))
    return SS_FFT_WISDOM_UNREADABLE;
  return SS_FFT_WISDOM_LOADED;
}

void
ss_fft_wisdom_save (void)
{
  g_autofree char *path = ss_fft_wisdom_path ();
  if (path == NULL)
    return;
  /* Another process may have learned other sizes since we loaded. */
  g_autofree char *theirs = read_wisdom_text (path);
  if (theirs != NULL)
    fftwf_import_wisdom_from_string (theirs);
  char *ours = fftwf_export_wisdom_to_string ();
  if (ours == NULL)
    return;
  g_autofree char *dir = g_path_get_dirname (path);
  /* g_file_set_contents writes a temporary file and renames it: a reader
   * never sees half a file, and a crash leaves the old one. */
  if (g_mkdir_with_parents (dir, 0700) == 0)
    g_file_set_contents (path, ours, -1, NULL);
  free (ours);
}

const char *
ss_fft_wisdom_state_to_string (SsFftWisdomState state)
{
  switch (state)
    {
    case SS_FFT_WISDOM_OFF:
      return "off";
    case SS_FFT_WISDOM_NONE:
      return "none";
    case SS_FFT_WISDOM_LOADED:
      return "loaded";
    case SS_FFT_WISDOM_UNREADABLE:
      return "unreadable";
    }
  return "unknown";
}
