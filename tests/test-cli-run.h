/* test-cli-run.h: running sharpsky-cli as a user would, scratch
 * directories and the FITS files the CLI tests read and write; shared by
 * test-cli.c and test-cli-many.c (static inline: each uses what it needs). */
#pragma once

#include "test-common.h"

#include <sys/wait.h>

/* ---- running the binary ------------------------------------------------ */

typedef struct {
  int status;        /* exit status, or -1 when killed by a signal */
  char *out;
  char *err;
} CliRun;

static inline void
cli_run_clear (CliRun *run)
{
  g_clear_pointer (&run->out, g_free);
  g_clear_pointer (&run->err, g_free);
}

static inline const char *
cli_path (void)
{
  return g_getenv ("SHARPSKY_CLI");
}

/* Whether SHARPSKY_CLI names an executable: the built sharpsky-cli. */
static inline gboolean
cli_built (void)
{
  return cli_path () != NULL && g_file_test (cli_path (), G_FILE_TEST_IS_EXECUTABLE);
}

/* The same, the test visibly skipped when it is not. */
static inline gboolean
cli_available (void)
{
  if (cli_built ())
    return TRUE;
  g_test_skip ("SHARPSKY_CLI is not set to the built sharpsky-cli");
  return FALSE;
}

/* Runs sharpsky-cli COMMAND (NULL: none) with the NULL-terminated ARGS in
 * directory DIR (NULL: this one) and ENVP (NULL: this process's
 * environment). A crash fails the test. */
static inline CliRun
run_cli_full (const char *dir, char **envp, const char *command, const char *const *args)
{
  GPtrArray *argv = g_ptr_array_new ();
  g_ptr_array_add (argv, (gpointer) cli_path ());
  if (command != NULL)
    g_ptr_array_add (argv, (gpointer) command);
  for (gsize i = 0; args[i] != NULL; i++)
    g_ptr_array_add (argv, (gpointer) args[i]);
  g_ptr_array_add (argv, NULL);

  CliRun run = { 0 };
  int wait_status = 0;
  g_autoptr (GError) error = NULL;
  gboolean spawned = g_spawn_sync (dir, (char **) argv->pdata, envp, G_SPAWN_DEFAULT, NULL,
                                   NULL, &run.out, &run.err, &wait_status, &error);
  g_assert_no_error (error);
  g_assert_true (spawned);
  g_ptr_array_free (argv, TRUE);

  if (WIFSIGNALED (wait_status))
    {
      g_test_message ("killed by signal %d; stderr: %s", WTERMSIG (wait_status), run.err);
      run.status = -1;
    }
  else
    run.status = WEXITSTATUS (wait_status);
  g_test_message ("exit %d\nstdout: %s\nstderr: %s", run.status, run.out, run.err);
  g_assert_cmpint (run.status, >=, 0);
  return run;
}

static inline CliRun
run_cli_env_argv (char **envp, const char *const *args)
{
  return run_cli_full (NULL, envp, NULL, args);
}

static inline CliRun
run_cli_argv (const char *const *args)
{
  return run_cli_env_argv (NULL, args);
}

#define RUN_CLI(...) run_cli_argv ((const char *const[]) { __VA_ARGS__, NULL })
#define RUN_CLI_ENV(envp, ...) run_cli_env_argv (envp, (const char *const[]) { __VA_ARGS__, NULL })

/* Runs sharpsky-cli for its files alone: it must succeed (exit 0). */
static inline void
run_cli_ok_argv (const char *const *args)
{
  CliRun run = run_cli_argv (args);
  g_assert_cmpint (run.status, ==, 0);
  cli_run_clear (&run);
}

#define RUN_CLI_OK(...) run_cli_ok_argv ((const char *const[]) { __VA_ARGS__, NULL })

/* ---- temporary files --------------------------------------------------- */

typedef struct {
  char *dir;
} Fixture;

static inline void
fixture_setup (Fixture *f, gconstpointer data)
{
  f->dir = test_scratch_dir ("sharpsky-cli-XXXXXX");
}

static inline void
fixture_teardown (Fixture *f, gconstpointer data)
{
  test_remove_tree (f->dir);
  g_free (f->dir);
}

static inline char *
temp_path (const Fixture *f, const char *name)
{
  return g_build_filename (f->dir, name, NULL);
}

/* Writes a float32 FITS image with an OBJECT card (to check it is kept). */
static inline void
write_fits_float (const char *path, const float *data, long width, long height)
{
  test_write_fits_float (path, data, width, height, 1, "test stars");
}

/* Reads all of a float image and sets its size. With PLANES NULL the image
 * must be 2-D; otherwise *PLANES is NAXIS3, or 1 for a 2-D image. */
static inline float *
read_fits_float (const char *path, long *width, long *height, long *planes)
{
  fitsfile *file = NULL;
  int status = 0, naxis = 0;
  long axes[3] = { 0, 0, 1 };
  fits_open_image (&file, path, READONLY, &status);
  fits_get_img_dim (file, &naxis, &status);
  fits_get_img_size (file, 3, axes, &status);
  test_check_cfitsio (status);
  if (planes == NULL)
    g_assert_cmpint (naxis, ==, 2);
  if (naxis == 2)
    axes[2] = 1;
  gsize count = (gsize) axes[0] * axes[1] * axes[2];
  float *data = g_new (float, count);
  int any_null = 0;
  float null_value = NAN;
  fits_read_img (file, TFLOAT, 1, count, &null_value, data, &any_null, &status);
  fits_close_file (file, &status);
  test_check_cfitsio (status);
  *width = axes[0];
  *height = axes[1];
  if (planes != NULL)
    *planes = axes[2];
  return data;
}

/* All header cards of the first HDU, joined by newlines. */
static inline char *
read_fits_header (const char *path)
{
  fitsfile *file = NULL;
  int status = 0, count = 0;
  char *text = NULL;
  fits_open_file (&file, path, READONLY, &status);
  fits_hdr2str (file, 0, NULL, 0, &text, &count, &status);
  g_assert_cmpint (status, ==, 0);
  GString *joined = g_string_new (NULL);
  for (int i = 0; i < count; i++)
    g_string_append_printf (joined, "%.80s\n", text + 80 * i);
  fits_free_memory (text, &status);
  fits_close_file (file, &status);
  return g_string_free (joined, FALSE);
}

/* A random field of truncated Gaussian stars on a zero background, peak
 * exactly 1: its median is 0 and its maximum 1, so the CLI's sky and scale
 * are 0 and 1 and scaled units equal the file's values. */
static inline float *
random_star_field (int width, int height)
{
  float *data = g_new0 (float, (gsize) width * height);
  int stars = 12 + g_test_rand_int_range (0, 12);
  for (int s = 0; s < stars; s++)
    {
      double cx = g_test_rand_double_range (4, width - 4);
      double cy = g_test_rand_double_range (4, height - 4);
      double amplitude = g_test_rand_double_range (0.1, 1.0);
      double sigma = g_test_rand_double_range (0.6, 1.5);
      for (int y = (int) cy - 3; y <= (int) cy + 3; y++)
        for (int x = (int) cx - 3; x <= (int) cx + 3; x++)
          {
            double r2 = (x - cx) * (x - cx) + (y - cy) * (y - cy);
            data[(gsize) y * width + x] += (float) (amplitude * exp (-r2 / (2 * sigma * sigma)));
          }
    }
  float peak = 0;
  for (gsize i = 0; i < (gsize) width * height; i++)
    peak = MAX (peak, data[i]);
  for (gsize i = 0; i < (gsize) width * height; i++)
    data[i] /= peak;
  return data;
}

