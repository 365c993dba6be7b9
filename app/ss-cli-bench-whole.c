/* ss-cli-bench-whole.c: `bench --whole`, the whole deblur path timed file to file.
 *
 * Issue 11 measures a camera frame's deblur by its wall time, not its
 * iterations: reading, preparing, planning and writing must cost no more
 * than a few iterations. So this bench writes a synthetic 16-bit frame
 * (ss-synth.h) into a temporary directory and runs this very program's
 * `deblur` on it as a user would, in a child process each time:
 *
 *   1. once with 1 iteration, to plan (FFTW wisdom learned, files cached);
 *   2. with 2 and with 12 iterations, twice each, keeping each one's fastest;
 *   3. with --iters N when given (the GPU target is 300).
 *
 * Everything but the iterations is t2 - n2 (t12 - t2) / (n12 - n2), with n2
 * and n12 the iterations each run's summary says it ran (2 and 12 unless a
 * stopping rule ended one early), reported in seconds and in iterations'
 * worth; a solver that takes no iteration count (direct, direct-fft, auto)
 * runs as many either way, and then there is no per-iteration time to
 * give. Every run's phases come from its own --json summary.
 *
 * Ctrl-C or SIGTERM stops the child, removes the temporary directory and
 * exits 1 with one line, as deblur does when interrupted.
 */
#include "ss-cli-common.h"
#include "ss-cli-json.h"
#include "ss-cli-solve.h"

#include <glib/gstdio.h>
#include <math.h>
#include <signal.h>
#include <string.h>

#define WHOLE_PSF "moffat:3.5,2.5"
#define DEFAULT_WIDTH 6248
#define DEFAULT_HEIGHT 4176
#define REPEATS 2
/* The PSF reaches 20 pixels from its centre: smaller frames cannot hold it. */
#define MIN_SIDE 64

typedef struct {
  int width, height;
  guint32 seed;
  const char *backend;      /* NULL: deblur's default */
  const char *solver;
  const char *prior;        /* --prior, passed on with --solver admm */
  const char *accel;        /* --accel, passed on with --solver rl */
  const char *devices;      /* --devices, passed on */
  int extra_iterations;     /* --iters N, or 0 */
  int runs;                 /* child runs in all, for the progress lines */
  const CliOptions *options;
} WholeParams;

/* One child run, from its wall clock and its JSON summary. */
typedef struct {
  int iterations;
  double wall;              /* the child process, measured here */
  double read, prepare, plan, solve, write;
  char *wisdom;             /* what FFTW's wisdom gave the child */
  gint64 plans_measured;
  char *backend, *device;
  char *solver;             /* what the child's deblur ran */
  int padded_width, padded_height;
} WholeRun;

static void
whole_run_clear (WholeRun *run)
{
  g_clear_pointer (&run->wisdom, g_free);
  g_clear_pointer (&run->backend, g_free);
  g_clear_pointer (&run->device, g_free);
  g_clear_pointer (&run->solver, g_free);
}

/* ---- its mode: how it reads bench's options ------------------------------ */

/* Without --solver, what deblur runs on a real frame. */
static SsSolverKind
whole_default_solver (void)
{
  return ss_solver_default_for_real_data ();
}

static void
whole_defaults (SsBenchParams *bp)
{
  bp->width = DEFAULT_WIDTH;
  bp->height = DEFAULT_HEIGHT;
  bp->iterations = 0;   /* without --iters: no run beyond the 2 and 12 */
}

/* What the frame's deblur would not read is refused, every one named, as
 * the plain bench refuses what its solver would not read. */
static int
whole_refuse (const CliOptions *o, const CliBenchSettings *s)
{
  const struct {
    gboolean given;
    const char *option;
  } unused[] = {
    { o->boundary != NULL, "--boundary" },
    { o->margin != NULL, "--margin" },
    { o->param[SS_PARAM_DIRECT_METHOD] != NULL, "--direct-method" },
    { o->batch != NULL, "--batch" },
  };
  GString *named = g_string_new (NULL);
  for (gsize i = 0; i < G_N_ELEMENTS (unused); i++)
    if (unused[i].given)
      g_string_append_printf (named, "%s%s", named->len ? ", " : "", unused[i].option);
  GString *refused = g_string_new (NULL);
  if (named->len > 0)
    g_string_append_printf (refused, "%s %s no effect (the one frame is deblurred as deblur "
                            "does it)", named->str, strchr (named->str, ',') ? "have" : "has");
  const SsSolverInfo *solver = ss_solver_info (s->params.solver);
  if (o->param[SS_PARAM_PRIOR] && !ss_solver_uses (solver, SS_PARAM_PRIOR))
    g_string_append_printf (refused, "%s--prior has no effect (only --solver admm reads it)",
                            refused->len ? "; " : "");
  if (o->param[SS_PARAM_RL_ACCEL] && !ss_solver_uses (solver, SS_PARAM_RL_ACCEL))
    g_string_append_printf (refused, "%s--accel has no effect (only --solver rl reads it)",
                            refused->len ? "; " : "");
  g_string_free (named, TRUE);
  int status = -1;
  if (refused->len > 0)
    {
      cli_error (NULL, "bench --whole: %s", refused->str);
      status = CLI_EXIT_USAGE;
    }
  g_string_free (refused, TRUE);
  return status;
}

/* bench's options read for the whole path: sides from MIN_SIDE, which the
 * PSF fits in, up to 65536; a real frame's solver by default. */
const CliBenchMode cli_bench_whole_mode = {
  .min_side = MIN_SIDE,
  .max_side = 1 << 16,
  .max_iterations = 1000000,
  .default_solver = whole_default_solver,
  .set_defaults = whole_defaults,
  .refuse = whole_refuse,
};

/* The runs' parameters from SETTINGS, already checked. The solver,
 * backend, prior and devices are handed to deblur as they were given: it
 * reads them as the checks did. */
static void
whole_params_from_settings (const CliOptions *o, const CliBenchSettings *s, WholeParams *p)
{
  p->width = s->params.width;
  p->height = s->params.height;
  p->seed = s->params.seed;
  p->backend = o->backend;
  p->solver = o->solver;
  p->prior = o->param[SS_PARAM_PRIOR];
  p->accel = o->param[SS_PARAM_RL_ACCEL];
  p->devices = o->devices;
  p->extra_iterations = s->params.iterations;
  p->runs = 1 + 2 * REPEATS + (p->extra_iterations > 0);
  p->options = o;
}

/* ---- interruption ------------------------------------------------------- */

/* SIGINT (Ctrl-C, to this process or its whole group) and SIGTERM set the
 * shared flag (cli_install_cleanup_interrupt_handler); stopping the child
 * and removing the temporary directory happen in the bench's own flow,
 * which looks at the flag before each step and while it waits on a child.
 * The handler wakes nothing, so that wait looks every INTERRUPT_POLL_MS. */
#define INTERRUPT_POLL_MS 50

static gboolean
on_poll_tick (gpointer user_data)
{
  return G_SOURCE_CONTINUE;
}

/* Writes the synthetic frame as uint16 into DIR; returns its path. */
static char *
write_frame (const WholeParams *p, const char *dir, double *seconds, GError **error)
{
  double start = ss_now ();
  SsSynthParams synth;
  ss_synth_params_init (&synth, p->width, p->height, p->seed);
  g_autoptr (SsImage) frame = ss_synth_frame (&synth, error);
  if (frame == NULL)
    return NULL;
  frame->header = ss_header_new ();
  ss_header_set_string (frame->header, "OBJECT", "synthetic frame", "sharpsky-cli bench --whole");
  g_autofree char *path = g_build_filename (dir, "frame.fits", NULL);
  if (!ss_fits_write_uint16 (frame, path, TRUE, NULL, error))
    return NULL;
  *seconds = ss_now () - start;
  return g_steal_pointer (&path);
}

/* The number after "KEY": in the flat JSON object LINE, or NAN. */
static double
json_number (const char *line, const char *key)
{
  g_autofree char *needle = g_strdup_printf ("\"%s\":", key);
  const char *at = strstr (line, needle);
  if (at == NULL)
    return NAN;
  char *end = NULL;
  double value = g_ascii_strtod (at + strlen (needle), &end);
  return end == at + strlen (needle) ? NAN : value;
}

/* The string after "KEY": in LINE (no escapes expected in ours), or NULL. */
static char *
json_string (const char *line, const char *key)
{
  g_autofree char *needle = g_strdup_printf ("\"%s\":\"", key);
  const char *at = strstr (line, needle);
  if (at == NULL)
    return NULL;
  at += strlen (needle);
  const char *end = strchr (at, '"');
  return end ? g_strndup (at, end - at) : NULL;
}

/* The summary line of deblur --json's output. */
static const char *
find_summary (char **lines)
{
  const char *summary = NULL;
  for (char **line = lines; *line; line++)
    if (strstr (*line, "\"type\":\"summary\"") != NULL)
      summary = *line;
  return summary;
}

static gboolean
read_summary (const char *out, WholeRun *run, GError **error)
{
  g_auto (GStrv) lines = g_strsplit (out ? out : "", "\n", -1);
  const char *s = find_summary (lines);
  if (s == NULL)
    {
      g_set_error (error, SS_ERROR, SS_ERROR_FORMAT, "deblur printed no JSON summary");
      return FALSE;
    }
  run->read = json_number (s, "seconds_read");
  run->prepare = json_number (s, "seconds_prepare");
  run->plan = json_number (s, "seconds_plan");
  run->solve = json_number (s, "seconds_solve");
  run->write = json_number (s, "seconds_write");
  /* What ran, which a stopping rule may make fewer than asked for. */
  double iterations = json_number (s, "iterations");
  if (isfinite (iterations) && iterations > 0)
    run->iterations = (int) iterations;
  run->plans_measured = (gint64) json_number (s, "fftw_plans_measured");
  run->padded_width = (int) json_number (s, "padded_width");
  run->padded_height = (int) json_number (s, "padded_height");
  run->wisdom = json_string (s, "fftw_wisdom");
  run->backend = json_string (s, "backend");
  run->device = json_string (s, "device");
  run->solver = json_string (s, "solver");
  return TRUE;
}

typedef struct {
  gboolean done;
  GBytes *out, *err;
  GError *error;
} Communication;

static void
on_communicated (GObject *source, GAsyncResult *result, gpointer user_data)
{
  Communication *c = user_data;
  g_subprocess_communicate_finish (G_SUBPROCESS (source), result, &c->out, &c->err, &c->error);
  c->done = TRUE;
}

/* BYTES as a NUL-terminated string. g_free. */
static char *
bytes_text (GBytes *bytes)
{
  gsize length = 0;
  const char *data = bytes ? g_bytes_get_data (bytes, &length) : NULL;
  return g_strndup (data ? data : "", length);
}

/* Runs EXE deblur FRAME with ITERATIONS in a child process, as run number
 * *RUN of P->runs. The child is waited for in the main context, which a
 * tick wakes to look at the interrupt flag: once it is set the child is
 * sent SIGTERM, not the signal received, since deblur cancels a Ctrl-C
 * only at its next report point, which can be many seconds off on a large
 * frame or while it plans, and its result is not wanted. Once it has gone
 * this fails as G_IO_ERROR_CANCELLED. */
static gboolean
run_deblur (const char *exe, const char *dir, const char *frame, const WholeParams *p,
            int iterations, int *run_number, WholeRun *run, GError **error)
{
  run->iterations = iterations;
  if (cli_interrupted_error (error))
    return FALSE;
  g_autofree char *output = g_build_filename (dir, "deblurred.fits", NULL);
  g_autofree char *iters = g_strdup_printf ("%d", iterations);
  GPtrArray *argv = g_ptr_array_new ();
  const char *fixed[] = { exe, "deblur", frame, "-o", output, "--force", "--psf", WHOLE_PSF,
                          "--alpha", "auto", "--iters", iters, "--json", "--quiet" };
  for (gsize i = 0; i < G_N_ELEMENTS (fixed); i++)
    g_ptr_array_add (argv, (gpointer) fixed[i]);
  const struct {
    const char *option, *value;
  } passed[] = {
    { "--backend", p->backend }, { "--solver", p->solver }, { "--prior", p->prior },
    { "--accel", p->accel }, { "--devices", p->devices },
  };
  for (gsize i = 0; i < G_N_ELEMENTS (passed); i++)
    if (passed[i].value)
      {
        g_ptr_array_add (argv, (gpointer) passed[i].option);
        g_ptr_array_add (argv, (gpointer) passed[i].value);
      }
  g_ptr_array_add (argv, NULL);

  double start = ss_now ();
  g_autoptr (GSubprocess) child = g_subprocess_newv ((const char *const *) argv->pdata,
                                                     G_SUBPROCESS_FLAGS_STDOUT_PIPE
                                                     | G_SUBPROCESS_FLAGS_STDERR_PIPE, error);
  g_ptr_array_unref (argv);
  if (child == NULL)
    return FALSE;
  (*run_number)++;
  cli_note (p->options, "bench --whole: run %d of %d, deblur --iters %d", *run_number, p->runs,
            iterations);

  Communication c = { 0 };
  g_subprocess_communicate_async (child, NULL, NULL, on_communicated, &c);
  GSource *tick = g_timeout_source_new (INTERRUPT_POLL_MS);
  g_source_set_callback (tick, on_poll_tick, NULL, NULL);
  g_source_attach (tick, NULL);
  gboolean stopped = FALSE;
  while (!c.done)
    {
      if (cli_was_interrupted () && !stopped)
        {
          g_subprocess_send_signal (child, SIGTERM);
          stopped = TRUE;
        }
      g_main_context_iteration (NULL, TRUE);
    }
  g_source_destroy (tick);
  g_source_unref (tick);
  run->wall = ss_now () - start;

  g_autofree char *out = bytes_text (c.out), *err = bytes_text (c.err);
  g_clear_pointer (&c.out, g_bytes_unref);
  g_clear_pointer (&c.err, g_bytes_unref);
  if (cli_interrupted_error (error))
    {
      g_clear_error (&c.error);
      return FALSE;
    }
  if (c.error != NULL)
    {
      g_propagate_error (error, c.error);
      return FALSE;
    }
  if (!g_subprocess_get_successful (child))
    {
      g_set_error (error, SS_ERROR, SS_ERROR_IO, "deblur (--iters %d) failed: %s",
                   iterations, *err ? g_strstrip (err) : "no message");
      return FALSE;
    }
  return read_summary (out, run, error);
}

/* The fastest of REPEATS runs with ITERATIONS (the machine's other load only
 * ever adds time). */
static gboolean
run_best (const char *exe, const char *dir, const char *frame, const WholeParams *p,
          int iterations, int *run_number, WholeRun *best, GError **error)
{
  for (int r = 0; r < REPEATS; r++)
    {
      WholeRun run = { 0 };
      if (!run_deblur (exe, dir, frame, p, iterations, run_number, &run, error))
        {
          whole_run_clear (&run);
          return FALSE;
        }
      if (r == 0 || run.wall < best->wall)
        {
          whole_run_clear (best);
          *best = run;
        }
      else
        whole_run_clear (&run);
    }
  return TRUE;
}

/* ---- printing ----------------------------------------------------------- */

static void
add_run_json (SsJsonObject *o, const char *prefix, const WholeRun *run)
{
  g_autofree char *count = g_strdup_printf ("%s_iterations", prefix);
  ss_json_add_int (o, count, run->iterations);
  const struct { const char *name; double value; } fields[] = {
    { "wall", run->wall }, { "read", run->read }, { "prepare", run->prepare },
    { "plan", run->plan }, { "solve", run->solve }, { "write", run->write },
  };
  for (gsize i = 0; i < G_N_ELEMENTS (fields); i++)
    {
      g_autofree char *key = g_strdup_printf ("%s_%s", prefix, fields[i].name);
      ss_json_add_number (o, key, fields[i].value);
    }
}

static void
print_run_text (const char *label, const WholeRun *run)
{
  printf ("%-16s %5d  %8.3f  %7.3f  %7.3f  %7.3f  %7.3f  %7.3f\n", label, run->iterations,
          run->wall, run->read, run->prepare, run->plan, run->solve, run->write);
}

/* From the iterations t2 and t12 ran (n2, n12), which are 2 and 12 unless
 * a stopping rule ended one early, and are equal for a solver that takes
 * no iteration count: then there is no per-iteration time, and every
 * figure below is NAN (null in JSON). */
typedef struct {
  int n2, n12;
  double per_iteration;       /* (t12 - t2) / (n12 - n2) */
  double overhead;            /* t2 - n2 per_iteration */
  double overhead_iterations; /* overhead / per_iteration; NAN unless per_iteration > 0 */
} WholeVerdict;

static void
whole_verdict (const WholeRun *r2, const WholeRun *r12, WholeVerdict *v)
{
  v->n2 = r2->iterations;
  v->n12 = r12->iterations;
  v->per_iteration = v->overhead = v->overhead_iterations = NAN;
  if (v->n12 <= v->n2)
    return;
  v->per_iteration = (r12->wall - r2->wall) / (v->n12 - v->n2);
  v->overhead = r2->wall - v->n2 * v->per_iteration;
  if (v->per_iteration > 0)
    v->overhead_iterations = v->overhead / v->per_iteration;
}

static void
print_verdict_text (const WholeRun *r2, const WholeVerdict *v)
{
  if (v->n12 <= v->n2)
    {
      if (v->n12 == v->n2)
        printf ("per iteration    none: %s ran %d iteration%s for --iters 2 and for --iters 12 "
                "(it takes no iteration count)\n", r2->solver ? r2->solver : "the solver",
                v->n2, v->n2 == 1 ? "" : "s");
      else
        printf ("per iteration    none: t12 ran %d iterations, no more than t2's %d (a stopping "
                "rule ended it)\n", v->n12, v->n2);
      printf ("all but iterating not separable: t2's wall, %.3f s, is the whole deblur\n",
              r2->wall);
      return;
    }
  if (!(v->per_iteration > 0))
    {
      /* The difference is within the runs' noise: a time per iteration at
       * or below zero, and no iterations' worth to give. */
      printf ("per iteration    not measurable: t12 (%d iterations) took no longer than t2 "
              "(%d); a larger frame separates them\n", v->n12, v->n2);
      printf ("all but iterating about t2's wall, %.3f s (no iterations' worth to give)\n",
              r2->wall);
      return;
    }
  printf ("per iteration    %.4f s = (t12 - t2) / (%d - %d)\n", v->per_iteration, v->n12, v->n2);
  printf ("all but iterating %.3f s = t2 - %d (t12 - t2) / %d = %.1f iterations' worth\n",
          v->overhead, v->n2, v->n12 - v->n2, v->overhead_iterations);
}

static void
print_whole (const CliOptions *o, const WholeParams *p, double frame_seconds,
             const WholeRun *first, const WholeRun *r2, const WholeRun *r12,
             const WholeRun *extra, const WholeVerdict *v)
{
  if (o->json)
    {
      SsJsonObject j;
      ss_json_begin (&j);
      ss_json_add_string (&j, "type", "bench_whole");
      ss_json_add_string (&j, "backend", r2->backend);
      ss_json_add_string (&j, "device", r2->device);
      ss_json_add_string (&j, "solver", r2->solver);
      ss_json_add_int (&j, "width", p->width);
      ss_json_add_int (&j, "height", p->height);
      ss_json_add_int (&j, "padded_width", r2->padded_width);
      ss_json_add_int (&j, "padded_height", r2->padded_height);
      ss_json_add_string (&j, "psf", WHOLE_PSF);
      ss_json_add_number (&j, "frame_seconds", frame_seconds);
      ss_json_add_string (&j, "first_fftw_wisdom", first->wisdom);
      ss_json_add_int (&j, "first_fftw_plans_measured", first->plans_measured);
      add_run_json (&j, "first", first);
      add_run_json (&j, "t2", r2);
      add_run_json (&j, "t12", r12);
      if (extra)
        add_run_json (&j, "extra", extra);   /* extra_iterations: what it ran */
      ss_json_add_number (&j, "seconds_per_iteration", v->per_iteration);
      ss_json_add_number (&j, "overhead_seconds", v->overhead);
      ss_json_add_number (&j, "overhead_iterations", v->overhead_iterations);
      g_autofree char *text = ss_json_end (&j);
      printf ("%s\n", text);
      return;
    }
  printf ("frame            %d x %d uint16 (BZERO 32768), synthetic, written in %.3f s\n",
          p->width, p->height, frame_seconds);
  printf ("solved at        %d x %d, psf " WHOLE_PSF ", alpha auto\n", r2->padded_width,
          r2->padded_height);
  printf ("backend          %s (%s)\n", r2->backend ? r2->backend : "?",
          r2->device ? r2->device : "?");
  /* Without --solver the counts given make deblur run the first of its
   * default's candidates that takes an iteration count. */
  printf ("solver           %s%s\n", r2->solver ? r2->solver : "?",
          p->solver ? "" : " (what deblur runs for --iters; --solver NAME times another)");
  printf ("first run        FFTW wisdom %s, %" G_GINT64_FORMAT " plans measured\n",
          first->wisdom ? first->wisdom : "?", first->plans_measured);
  printf ("%-16s %5s  %8s  %7s  %7s  %7s  %7s  %7s   (seconds)\n", "run", "iters", "wall",
          "read", "prepare", "plan", "solve", "write");
  print_run_text ("first (planning)", first);
  print_run_text ("t2 (best of 2)", r2);
  print_run_text ("t12 (best of 2)", r12);
  if (extra)
    print_run_text ("extra", extra);
  print_verdict_text (r2, v);
}

/* ---- the bench ---------------------------------------------------------- */

/* Removes DIR and every file in it: the frame, the output and whatever a
 * child stopped while writing left beside it (its temporary). */
static void
remove_directory (const char *dir)
{
  GDir *d = g_dir_open (dir, 0, NULL);
  const char *name;
  while (d && (name = g_dir_read_name (d)) != NULL)
    {
      g_autofree char *path = g_build_filename (dir, name, NULL);
      g_unlink (path);
    }
  if (d)
    g_dir_close (d);
  g_rmdir (dir);
}

static gboolean
bench_in (const char *dir, const CliOptions *o, const WholeParams *p, GError **error)
{
  g_autofree char *exe = g_file_read_link ("/proc/self/exe", error);
  double frame_seconds = 0;
  g_autofree char *frame = exe ? write_frame (p, dir, &frame_seconds, error) : NULL;
  if (frame == NULL)
    return FALSE;
  WholeRun first = { 0 }, r2 = { 0 }, r12 = { 0 }, extra = { 0 };
  int run = 0;
  gboolean ok = run_deblur (exe, dir, frame, p, 1, &run, &first, error)
                && run_best (exe, dir, frame, p, 2, &run, &r2, error)
                && run_best (exe, dir, frame, p, 12, &run, &r12, error)
                && (p->extra_iterations == 0
                    || run_deblur (exe, dir, frame, p, p->extra_iterations, &run, &extra,
                                   error))
                && !cli_interrupted_error (error);
  if (ok)
    {
      WholeVerdict v;
      whole_verdict (&r2, &r12, &v);
      print_whole (o, p, frame_seconds, &first, &r2, &r12,
                   p->extra_iterations ? &extra : NULL, &v);
    }
  whole_run_clear (&first);
  whole_run_clear (&r2);
  whole_run_clear (&r12);
  whole_run_clear (&extra);
  return ok;
}

int
cli_bench_whole (const CliOptions *o, const CliBenchSettings *settings)
{
  WholeParams p;
  whole_params_from_settings (o, settings, &p);
  g_autoptr (GError) error = NULL;
  /* Caught before the directory exists, so that no signal can leave it. */
  cli_install_cleanup_interrupt_handler ();
  g_autofree char *dir = g_dir_make_tmp ("sharpsky-bench-XXXXXX", &error);
  gboolean ok = dir != NULL && bench_in (dir, o, &p, &error);
  if (dir != NULL)
    remove_directory (dir);
  /* A signal after the last check, while the results were printed, leaves
   * them complete: that run succeeded. */
  gboolean stopped = !ok && cli_was_interrupted ();
  if (stopped)
    {
      /* Whatever failed after the signal failed because of it. */
      cli_error (NULL, "bench: interrupted; nothing kept");
      return CLI_EXIT_FAILURE;
    }
  return ok ? CLI_EXIT_OK : cli_fail (CLI_EXIT_FAILURE, NULL, error);
}
