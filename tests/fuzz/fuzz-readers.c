/* fuzz-readers.c: a libFuzzer target for the FITS and PNG readers.
 *
 * How to fuzz (needs clang and its runtime; Debian 12: clang-14 libclang-rt-14-dev):
 *   CC=clang meson setup build-fuzz -Dgui=disabled -Dcuda=disabled
 *   ninja -C build-fuzz tests/fuzz/fuzz-readers
 *   mkdir -p fuzz-corpus      # new inputs go here; tests/fuzz/corpus and data are read-only seeds
 *   export ASAN_OPTIONS=allocator_may_return_null=1 LSAN_OPTIONS=suppressions=tests/fuzz/lsan.supp
 *   build-fuzz/tests/fuzz/fuzz-readers fuzz-corpus tests/fuzz/corpus data -max_len=65536 \
 *       -malloc_limit_mb=4096 -rss_limit_mb=4096 -max_total_time=600 -artifact_prefix=crash-
 * Add -jobs=N -workers=N for N cores. A crash is saved as crash-<sha1>; replay it with
 *   build-fuzz/tests/fuzz/fuzz-readers crash-<sha1>
 * fix the reader, then copy the file into tests/fuzz/corpus: `meson test --suite fuzz` replays it.
 * The I/O sources are compiled in with ASan+UBSan; cfitsio and libpng are the system's builds
 * (lsan.supp lists their known leaks; a failed huge malloc inside them is handled, not a crash).
 */
#include "ss-error.h"
#include "ss-io.h"

#include <glib/gstdio.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerInitialize (int *argc, char ***argv);
int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

static char *scratch_dir;
static char *input_path;

static void
remove_scratch (void)
{
  if (input_path)
    g_unlink (input_path);
  if (scratch_dir)
    g_rmdir (scratch_dir);
}

int
LLVMFuzzerInitialize (int *argc, char ***argv)
{
  (void) argc;
  (void) argv;
  /* The readers take a path: each input is written to a file, in RAM
   * where possible. */
  const char *base = g_file_test ("/dev/shm", G_FILE_TEST_IS_DIR) ? "/dev/shm" : g_get_tmp_dir ();
  g_autofree char *template = g_build_filename (base, "sharpsky-fuzz-XXXXXX", NULL);
  scratch_dir = g_mkdtemp (g_steal_pointer (&template));
  if (scratch_dir == NULL)
    abort ();
  input_path = g_build_filename (scratch_dir, "input", NULL);
  atexit (remove_scratch);
  /* a g_return_if_fail in the readers is a bug too */
  g_log_set_always_fatal (G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_WARNING);
  return 0;
}

static void
exercise_image (SsImage *image)
{
  if (image == NULL)
    return;
  gsize n = ss_image_plane_size (image) * (gsize) image->planes;
  float *out = g_new (float, n);
  double low = 0.0, high = 0.0;
  ss_stretch_apply (image->data, out, n, SS_STRETCH_ASINH, 1.0, 99.0, &low, &high);
  g_free (out);
  if (image->header)
    {
      g_free (ss_header_get_string (image->header, "OBJECT"));
      double value = 0.0;
      (void) ss_header_get_double (image->header, "CRVAL1", &value);
      for (guint i = 0; i < image->header->cards->len; i++)
        (void) ss_header_card_is_structural (g_ptr_array_index (image->header->cards, i));
    }
  ss_image_free (image);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  FILE *file = fopen (input_path, "wb");
  if (file == NULL)
    abort ();
  if (size && fwrite (data, 1, size, file) != size)
    abort ();
  fclose (file);

  GError *error = NULL;
  exercise_image (ss_image_load (input_path, NULL, &error));
  g_clear_error (&error);

  if (size >= 9 && memcmp (data, "SIMPLE  =", 9) == 0)
    {
      char *description = ss_fits_describe (input_path, &error);
      g_free (description);
      g_clear_error (&error);
      /* the other paths through HDU selection: by number, by name, a plane */
      SsFitsReadOptions by_number = { "1", 0 };
      exercise_image (ss_fits_read (input_path, &by_number, &error));
      g_clear_error (&error);
      SsFitsReadOptions by_name = { "SCI", 1 };
      exercise_image (ss_fits_read (input_path, &by_name, &error));
      g_clear_error (&error);
    }
  return 0;
}
