/* test-opens.h: how many times a file is opened while an action runs, for
 * the tests that a file is read once (a PSF file in the engine, the CLI and
 * the app). Linux's inotify: the kernel queues an event as the file is
 * opened, in this process or a child it waited for. Static inline, as
 * test-common.h. */
#pragma once

#include <glib.h>
#include "ss-psf.h"
#include <errno.h>
#include <sys/inotify.h>
#include <unistd.h>

typedef void (*TestFileAction) (gpointer data);

/* How many times PATH was opened while ACTION (DATA) ran. Closes are
 * watched too, so that two opens in a row are never merged into one event
 * (inotify merges identical events in a row). */
static inline int
test_count_opens (const char *path, TestFileAction action, gpointer data)
{
  int fd = inotify_init1 (IN_NONBLOCK | IN_CLOEXEC);
  g_assert_cmpint (fd, >=, 0);
  g_assert_cmpint (inotify_add_watch (fd, path, IN_OPEN | IN_CLOSE), >=, 0);
  action (data);
  int opens = 0;
  char buffer[4096] __attribute__ ((aligned (__alignof__ (struct inotify_event))));
  ssize_t got;
  while ((got = read (fd, buffer, sizeof buffer)) > 0)
    for (const char *at = buffer; at < buffer + got;)
      {
        const struct inotify_event *event = (const struct inotify_event *) at;
        opens += (event->mask & IN_OPEN) != 0;
        at += sizeof *event + event->len;
      }
  g_assert_false (got < 0 && errno != EAGAIN);
  close (fd);
  return opens;
}

/* A TestFileAction: one ss_psf_read_file of PATH, what a single reading of
 * a PSF file opens (the count the tests compare with). */
static inline void
test_read_psf_file (gpointer path)
{
  g_autoptr (GError) error = NULL;
  /* With its notes, as ss_psf_spec_load reads it (a file of several images
   * is listed for them). */
  g_autoptr (GPtrArray) notes = g_ptr_array_new_with_free_func (g_free);
  g_autoptr (SsImage) psf = ss_psf_read_file (path, notes, &error);
  g_assert_no_error (error);
}
