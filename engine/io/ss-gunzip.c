/* ss-gunzip.c: decompressing a gzip file to a bounded temporary copy. */
#include "ss-gunzip.h"
#include "ss-error.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#define CHUNK (1 << 16)

gboolean
ss_gunzip_is_gzip (const guchar *bytes, gsize length)
{
  return length >= 2 && bytes[0] == 0x1f && bytes[1] == 0x8b;
}

static gboolean
write_all (int fd, const guchar *data, gsize length)
{
  while (length > 0)
    {
      ssize_t done = write (fd, data, length);
      if (done < 0 && errno == EINTR)
        continue;
      if (done <= 0)
        return FALSE;
      data += done;
      length -= (gsize) done;
    }
  return TRUE;
}

/* Inflates every gzip member of IN into FD, at most LIMIT bytes. */
static gboolean
inflate_file (FILE *in, int fd, guint64 limit, const char *name, GError **error)
{
  z_stream z = { 0 };
  if (inflateInit2 (&z, 16 + MAX_WBITS) != Z_OK)
    {
      g_set_error (error, SS_ERROR, SS_ERROR_OUT_OF_MEMORY, "%s: cannot start zlib", name);
      return FALSE;
    }
  g_autofree guchar *input = g_malloc (CHUNK), *output = g_malloc (CHUNK);
  guint64 written = 0;
  int status = Z_OK;
  gboolean ok = TRUE, ended = FALSE;   /* ENDED: the last member is complete */
  while (ok)
    {
      z.avail_in = (uInt) fread (input, 1, CHUNK, in);
      z.next_in = input;
      if (z.avail_in == 0)
        break;
      /* Until this input is used up and no output is pending. */
      gboolean more = TRUE;
      while (ok && more)
        {
          z.next_out = output;
          z.avail_out = CHUNK;
          status = inflate (&z, Z_NO_FLUSH);
          if (status == Z_BUF_ERROR)   /* no progress possible: more input needed */
            break;
          if (status != Z_OK && status != Z_STREAM_END)
            {
              g_set_error (error, SS_ERROR, SS_ERROR_FORMAT, "%s: damaged gzip data (%s)", name,
                           z.msg ? z.msg : "zlib error");
              ok = FALSE;
              break;
            }
          gsize produced = CHUNK - z.avail_out;
          written += produced;
          if (written > limit)
            {
              g_set_error (error, SS_ERROR, SS_ERROR_TOO_LARGE,
                           "%s: the gzip data expand more than %d times; refused as damaged",
                           name, SS_GUNZIP_MAX_RATIO);
              ok = FALSE;
            }
          else if (!write_all (fd, output, produced))
            {
              g_set_error (error, SS_ERROR, SS_ERROR_IO,
                           "%s: cannot write its decompressed copy: %s", name,
                           g_strerror (errno));
              ok = FALSE;
            }
          /* A file may hold several members one after the other. */
          ended = status == Z_STREAM_END;
          if (ended)
            inflateReset (&z);
          more = z.avail_in > 0 || z.avail_out == 0;
        }
    }
  if (ok && !ended)
    {
      g_set_error (error, SS_ERROR, SS_ERROR_FORMAT, "%s: truncated gzip data", name);
      ok = FALSE;
    }
  inflateEnd (&z);
  return ok;
}

char *
ss_gunzip_to_temp (const char *path, const char *name, GError **error)
{
  FILE *in = g_fopen (path, "rb");
  if (in == NULL)
    {
      g_set_error (error, SS_ERROR, SS_ERROR_IO, "%s: %s", name, g_strerror (errno));
      return NULL;
    }
  GStatBuf st;
  guint64 limit = g_stat (path, &st) == 0 ? (guint64) st.st_size * SS_GUNZIP_MAX_RATIO : 0;
  char *temp = NULL;
  GError *local = NULL;
  int fd = g_file_open_tmp ("sharpsky-gunzip-XXXXXX.fits", &temp, &local);
  if (fd < 0)
    {
      g_set_error (error, SS_ERROR, SS_ERROR_IO, "%s: cannot make a temporary file: %s", name,
                   local->message);
      g_error_free (local);
      fclose (in);
      return NULL;
    }
  gboolean ok = inflate_file (in, fd, limit, name, error);
  fclose (in);
  if (close (fd) != 0 && ok)
    {
      g_set_error (error, SS_ERROR, SS_ERROR_IO, "%s: cannot write its decompressed copy: %s",
                   name, g_strerror (errno));
      ok = FALSE;
    }
  if (!ok)
    {
      g_unlink (temp);
      g_clear_pointer (&temp, g_free);
    }
  return temp;
}
