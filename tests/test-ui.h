/* test-ui.h: what the ui suite's files share (suite ui: test-ui.c holds the
 * window's core tests, the fixture and main; test-ui-files.c, -device.c and
 * -phase.c hold one area each and register their tests from main).
 *
 * Runs under Xvfb with GSK_RENDERER=cairo (tests/ui/meson.build); without a
 * display every test is skipped, visibly. The window is driven through its
 * test hooks (ss_window_*_sync), not synthesised input events. Each run uses
 * a fresh acquisition seed (printed; SHARPSKY_TEST_SEED replays it).
 */
#pragma once

#include <gtk/gtk.h>
#include <glib/gstdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sharpsky.h"
#include "ss-application.h"
#include "ss-config.h"
#include "ss-window.h"

#include <fitsio.h>

/* Set by main: whether GTK found a display, and the application the
 * fixtures' windows belong to. */
extern gboolean have_display;
extern SsApplication *app;

typedef struct {
  SsWindow *window;
  char *dir;      /* scratch directory for exported files */
  guint32 seed;
} Fixture;

void fixture_setup (Fixture *f, gconstpointer data);
void fixture_teardown (Fixture *f, gconstpointer data);

/* Helpers the areas share (test-ui.c, and the CLI ones in test-ui-files.c). */
gboolean skip_without_display (void);
void cpu_settings (const Fixture *f, SsSettings *s, SsSolverKind kind, int iterations);
void apply_settings (Fixture *f, SsSettings *s);
void iterate_for (double seconds);
gboolean has_history (const SsHeader *header, const char *text);
SsImage *read_sample (void);
void save_screenshot_of (GtkWindow *window, const char *name);
SsBackendKind ui_backend (void);
void log_solve_status (Fixture *f);
const char *ui_backend_option (void);
double relative_difference (const SsFrame *frame, const SsImage *image);
const char *cli_or_skip (void);
SsImage *cli_deblur (const char *cli, const char *in, const char *out, int iterations,
                     const char *const *extra);
void assert_app_matches_cli (Fixture *f, SsSettings *s, int iterations,
                             const SsImage *expected, const char *what);
char *gaussian_option (double fwhm);
void set_cli_deblur (SsSettings *s, int iterations);

/* The areas' registrations, called by main in the suite's order. */
void test_ui_add_file_tests (void);
void test_ui_add_device_tests (void);
void test_ui_add_phase_tests (void);
