/* ss-cli-bench.c: `bench` (time per iteration against the floor measured in
 * the same process, DESIGN.md "How we measure speed") and `info`. */
#include "ss-cli-common.h"
#include "ss-cli-json.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

/* ---- bench ------------------------------------------------------------- */

/* What `bench` times (ss_backend_bench), in the order listed: the one list
 * that both the --solver help and the refusal of any other solver are made
 * from, so neither can name a solver the bench cannot time (rl on a blur of
 * its own, ss_bench_rl_problem, on either backend); --whole times whatever
 * deblur runs. */
static const SsSolverKind bench_solvers[] = {
  SS_SOLVER_CPADMM, SS_SOLVER_FISTA, SS_SOLVER_ISTA, SS_SOLVER_ADMM_PRIOR, SS_SOLVER_RL,
  SS_SOLVER_DIRECT,
};

/* "cpadmm, fista, ista, admm, rl or direct". g_free. */
static char *
bench_solver_names (void)
{
  GString *names = g_string_new (NULL);
  for (gsize i = 0; i < G_N_ELEMENTS (bench_solvers); i++)
    g_string_append_printf (names, "%s%s",
                            i == 0 ? "" : i + 1 < G_N_ELEMENTS (bench_solvers) ? ", " : " or ",
                            ss_solver_kind_to_string (bench_solvers[i]));
  return g_string_free (names, FALSE);
}

const char *
cli_bench_solver_help (void)
{
  /* GOption keeps the pointer: interned, it lives as long as the process. */
  g_autofree char *names = bench_solver_names ();
  g_autofree char *text = g_strdup_printf ("%s (default cpadmm); with "
                                           "--whole any solver deblur takes", names);
  return g_intern_string (text);
}

static gboolean
bench_times_solver (SsSolverKind kind)
{
  for (gsize i = 0; i < G_N_ELEMENTS (bench_solvers); i++)
    if (bench_solvers[i] == kind)
      return TRUE;
  return FALSE;
}

/* An engine error of the bench: every input came from the command line, so
 * a size, PSF or combination the engine rejects (SS_ERROR_INVALID_ARGUMENT,
 * SS_ERROR_UNSUPPORTED) is bad usage, as deblur's "PSF larger than the
 * image" is; what fails while running (memory, the device) is a failure. */
static int
bench_fail (const GError *error)
{
  gboolean usage = g_error_matches (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT)
                   || g_error_matches (error, SS_ERROR, SS_ERROR_UNSUPPORTED);
  return cli_fail (usage ? CLI_EXIT_USAGE : CLI_EXIT_FAILURE, NULL, error);
}

/* Ctrl-C or a SIGTERM while the engine times: the in-process bench has no
 * file or child to clean up and the engine's timings take no cancellable,
 * so it says so and leaves at once, with deblur's status for an
 * interruption (1) rather than the shell's silent 130. Only
 * async-signal-safe calls here. */
static void
on_bench_signal (int signal_number)
{
  static const char line[] = CLI_PROGRAM ": bench: interrupted; nothing kept\n";
  (void) signal_number;
  ssize_t written = write (STDERR_FILENO, line, sizeof line - 1);
  (void) written;
  _exit (CLI_EXIT_FAILURE);
}

static void
install_bench_signals (void)
{
  struct sigaction action;
  memset (&action, 0, sizeof action);
  action.sa_handler = on_bench_signal;
  sigemptyset (&action.sa_mask);
  sigaction (SIGINT, &action, NULL);
  sigaction (SIGTERM, &action, NULL);
}

/* ---- reading the options: one path for the plain bench and --whole ---- */

static void
bench_settings_clear (CliBenchSettings *s)
{
  g_clear_pointer (&s->devices, g_free);
  s->n_devices = 0;
}

/* --solver (MODE's default without it) and --backend: names either bench
 * would otherwise hand on to something that refuses them later. */
static int
read_solver_and_backend (const CliOptions *o, const CliBenchMode *mode, CliBenchSettings *s)
{
  g_autoptr (GError) error = NULL;
  s->params.solver = mode->default_solver ();
  if (o->solver && !ss_solver_kind_from_string (o->solver, &s->params.solver, &error))
    {
      cli_error (NULL, "--solver '%s': %s", o->solver, error->message);
      return CLI_EXIT_USAGE;
    }
  s->backend = SS_BACKEND_AUTO;
  if (o->backend && !ss_backend_kind_from_string (o->backend, &s->backend, &error))
    {
      cli_error (NULL, "--backend '%s': %s", o->backend, error->message);
      return CLI_EXIT_USAGE;
    }
  return -1;
}

/* --size, --width, --height, --iters, --seed, --margin and --batch, within
 * MODE's limits; MODE's defaults (which may depend on the solver) for what
 * is not given. */
static int
read_numbers (const CliOptions *o, const CliBenchMode *mode, CliBenchSettings *s)
{
  g_autoptr (GError) error = NULL;
  SsBenchParams *bp = &s->params;
  mode->set_defaults (bp);
  gint64 width = bp->width, height = bp->height, size, iters = bp->iterations, seed = 1;
  gint64 margin = -1, batch = 0;
  if (o->size && !cli_parse_int ("--size", o->size, mode->min_side, mode->max_side, &size,
                                 &error))
    return cli_fail (CLI_EXIT_USAGE, NULL, error);
  if (o->size)
    width = height = size;
  if (o->width && !cli_parse_int ("--width", o->width, mode->min_side, mode->max_side, &width,
                                  &error))
    return cli_fail (CLI_EXIT_USAGE, NULL, error);
  if (o->height && !cli_parse_int ("--height", o->height, mode->min_side, mode->max_side,
                                   &height, &error))
    return cli_fail (CLI_EXIT_USAGE, NULL, error);
  const char *iters_text = o->param[SS_PARAM_ITERATIONS];
  if (iters_text && !cli_parse_int ("--iters", iters_text, 1, mode->max_iterations, &iters,
                                    &error))
    return cli_fail (CLI_EXIT_USAGE, NULL, error);
  if (o->seed && !cli_parse_int ("--seed", o->seed, 0, G_MAXUINT32, &seed, &error))
    return cli_fail (CLI_EXIT_USAGE, NULL, error);
  if (o->margin && !cli_parse_int ("--margin", o->margin, 0, 1 << 20, &margin, &error))
    return cli_fail (CLI_EXIT_USAGE, NULL, error);
  if (o->batch && !cli_parse_int ("--batch", o->batch, 1, 100000, &batch, &error))
    return cli_fail (CLI_EXIT_USAGE, NULL, error);
  bp->width = (int) width;
  bp->height = (int) height;
  bp->iterations = (int) iters;
  bp->seed = (guint32) seed;
  bp->margin = (int) margin;
  s->batch = (int) batch;
  return -1;
}

/* --direct-method, --prior and --boundary: a name not in its list is bad
 * usage whether or not the bench then reads it. */
static int
read_choices (const CliOptions *o, CliBenchSettings *s)
{
  g_autoptr (GError) error = NULL;
  SsBenchParams *bp = &s->params;
  double value;
  /* The inverse by default: what times GETS. */
  bp->direct_method = SS_DIRECT_INVERSE;
  const char *method = o->param[SS_PARAM_DIRECT_METHOD];
  if (method && !ss_param_parse (ss_param_info (SS_PARAM_DIRECT_METHOD), method, &value, &error))
    return cli_fail (CLI_EXIT_USAGE, NULL, error);
  if (method)
    bp->direct_method = (SsDirectMethod) value;
  const char *prior = o->param[SS_PARAM_PRIOR];
  if (prior && !ss_param_parse (ss_param_info (SS_PARAM_PRIOR), prior, &value, &error))
    return cli_fail (CLI_EXIT_USAGE, NULL, error);
  if (prior)
    bp->prior = (SsPrior) value;
  const char *accel = o->param[SS_PARAM_RL_ACCEL];
  if (accel && !ss_param_parse (ss_param_info (SS_PARAM_RL_ACCEL), accel, &value, &error))
    return cli_fail (CLI_EXIT_USAGE, NULL, error);
  if (accel)
    bp->rl_accel = value;
  if (o->boundary && !ss_boundary_from_string (o->boundary, &bp->boundary, &error))
    {
      cli_error (NULL, "--boundary '%s': %s", o->boundary, error->message);
      return CLI_EXIT_USAGE;
    }
  return -1;
}

static int
read_devices (const CliOptions *o, CliBenchSettings *s)
{
  g_autoptr (GError) error = NULL;
  if (o->devices && !ss_backend_parse_devices (o->devices, &s->devices, &s->n_devices, &error))
    {
      cli_error (NULL, "--devices: %s", error->message);
      return CLI_EXIT_USAGE;
    }
  return -1;
}

/* Every option of either bench, read the same way whichever runs, then
 * what MODE refuses of them: -1 when the bench may start, else the exit
 * status (always CLI_EXIT_USAGE) after the message. */
static int
bench_settings_from_options (const CliOptions *o, const CliBenchMode *mode, CliBenchSettings *s)
{
  ss_bench_params_init (&s->params);
  int status = read_solver_and_backend (o, mode, s);
  if (status < 0)
    status = read_numbers (o, mode, s);
  if (status < 0)
    status = read_choices (o, s);
  if (status < 0)
    status = read_devices (o, s);
  if (status < 0)
    status = mode->refuse (o, s);
  return status;
}

/* ---- the plain bench's mode ---------------------------------------------- */

static SsSolverKind
plain_default_solver (void)
{
  return SS_SOLVER_CPADMM;
}

static void
plain_defaults (SsBenchParams *bp)
{
  /* A dense solver's n x n system: a small default size, one solve. */
  gboolean dense = (ss_solver_info (bp->solver)->caps & SS_SOLVER_NEEDS_REGION) != 0;
  bp->width = bp->height = dense ? 64 : 1024;
  bp->iterations = dense ? 1 : 50;
}

static int
refuse_untimed_solver (const CliOptions *o, const SsBenchParams *bp)
{
  if (bench_times_solver (bp->solver))
    return -1;
  g_autofree char *names = bench_solver_names ();
  cli_error (NULL, "--solver '%s': bench times %s (bench --whole times any solver of "
             "deblur)", o->solver, names);
  return CLI_EXIT_USAGE;
}

/* Options given that the bench asked for would not read: refused (exit 2)
 * with every one named, rather than timing something else than asked. */
static int
refuse_unused_options (const CliOptions *o, const SsBenchParams *bp)
{
  const SsSolverInfo *info = ss_solver_info (bp->solver);
  const struct {
    gboolean unused;
    const char *option, *why;
  } checks[] = {
    { o->margin && bp->boundary == SS_BOUNDARY_PERIODIC, "--margin",
      "it pads only with --boundary mirror or taper" },
    { o->param[SS_PARAM_PRIOR] && !ss_solver_uses (info, SS_PARAM_PRIOR), "--prior",
      "only --solver admm reads it" },
    { o->param[SS_PARAM_RL_ACCEL] && !ss_solver_uses (info, SS_PARAM_RL_ACCEL), "--accel",
      "only --solver rl reads it" },
    { o->param[SS_PARAM_DIRECT_METHOD] && !ss_solver_uses (info, SS_PARAM_DIRECT_METHOD),
      "--direct-method", "only --solver direct reads it" },
    { o->param[SS_PARAM_ITERATIONS] && !ss_solver_uses (info, SS_PARAM_ITERATIONS), "--iters",
      "the solver is not iterative: one solve is timed" },
  };
  GString *refused = g_string_new (NULL);
  for (gsize i = 0; i < G_N_ELEMENTS (checks); i++)
    if (checks[i].unused)
      g_string_append_printf (refused, "%s%s has no effect (%s)", refused->len ? "; " : "",
                              checks[i].option, checks[i].why);
  int status = -1;
  if (refused->len > 0)
    {
      cli_error (NULL, "bench --solver %s: %s", info->name, refused->str);
      status = CLI_EXIT_USAGE;
    }
  g_string_free (refused, TRUE);
  return status;
}

/* --batch N times a batch of one operator's periodic frames. */
static int
refuse_unbatchable (const CliBenchSettings *s)
{
  if (s->batch == 0
      || ((ss_solver_info (s->params.solver)->caps & SS_SOLVER_BATCHES)
          && s->params.boundary == SS_BOUNDARY_PERIODIC))
    return -1;
  cli_error (NULL, "--batch times a solver that batches (cpadmm) on periodic frames");
  return CLI_EXIT_USAGE;
}

static int
plain_refuse (const CliOptions *o, const CliBenchSettings *s)
{
  int status = refuse_untimed_solver (o, &s->params);
  if (status < 0)
    status = refuse_unused_options (o, &s->params);
  if (status < 0)
    status = refuse_unbatchable (s);
  return status;
}

static const CliBenchMode plain_mode = {
  .min_side = 1,
  .max_side = 1 << 20,
  .max_iterations = 1000000000,
  .default_solver = plain_default_solver,
  .set_defaults = plain_defaults,
  .refuse = plain_refuse,
};

/* The prior timed, for a solver that reads one (admm); NULL otherwise. g_free. */
static char *
bench_prior_name (const SsBenchParams *bp)
{
  if (!ss_solver_uses (ss_solver_info (bp->solver), SS_PARAM_PRIOR))
    return NULL;
  return ss_param_format (ss_param_info (SS_PARAM_PRIOR), bp->prior);
}

static void
print_bench_json (const SsBenchParams *bp, const char *backend, const SsBenchResult *r)
{
  SsJsonObject o;
  ss_json_begin (&o);
  ss_json_add_string (&o, "type", "bench");
  ss_json_add_string (&o, "solver", ss_solver_kind_to_string (bp->solver));
  g_autofree char *prior = bench_prior_name (bp);
  if (prior)
    ss_json_add_string (&o, "prior", prior);
  if (ss_solver_uses (ss_solver_info (bp->solver), SS_PARAM_RL_ACCEL))
    ss_json_add_number (&o, "accel", bp->rl_accel);
  ss_json_add_string (&o, "backend", backend);
  ss_json_add_string (&o, "device", r->device);
  ss_json_add_int (&o, "width", r->width);
  ss_json_add_int (&o, "height", r->height);
  ss_json_add_int (&o, "requested_width", bp->width);
  ss_json_add_int (&o, "requested_height", bp->height);
  ss_json_add_string (&o, "boundary", ss_boundary_to_string (bp->boundary));
  ss_json_add_int (&o, "margin", r->margin);
  /* An iterative solver's rate and time per iteration come from one span,
   * timed_seconds (the timed iterations alone); total_seconds is the whole
   * run, which on the CPU includes the set-up and the iterations before the
   * timed ones. A direct solve has no iterations: only its time. */
  gboolean iterative = ss_solver_is_iterative (bp->solver);
  if (iterative)
    {
      ss_json_add_int (&o, "iterations", r->iterations);
      ss_json_add_number (&o, "seconds_per_iteration", r->seconds_per_iteration);
      ss_json_add_number (&o, "timed_seconds", r->seconds_per_iteration * r->iterations);
    }
  ss_json_add_number (&o, "floor_seconds", r->floor_seconds);
  ss_json_add_number (&o, "floor_fft_seconds", r->floor_fft_seconds);
  ss_json_add_number (&o, "floor_bytes", r->floor_bytes);
  ss_json_add_number (&o, "bandwidth", r->bandwidth);
  ss_json_add_number (&o, "ratio", r->ratio);
  if (iterative)
    ss_json_add_number (&o, "iterations_per_second", 1.0 / r->seconds_per_iteration);
  ss_json_add_number (&o, "total_seconds", r->total_seconds);
  ss_json_add_int (&o, "peak_memory_bytes", (gint64) r->peak_memory_bytes);
  ss_json_add_int (&o, "fft_work_bytes", (gint64) r->fft_work_bytes);
  if (ss_solver_info (bp->solver)->phases[0] != NULL)
    {
      g_autofree char *method = ss_param_format (ss_param_info (SS_PARAM_DIRECT_METHOD),
                                                 bp->direct_method);
      ss_json_add_string (&o, "direct_method", method);
      ss_json_add_number_array (&o, "phase_seconds", r->phase_seconds, 4);
      ss_json_add_number (&o, "reference_seconds", r->reference_seconds);
      ss_json_add_number (&o, "gets_seconds",
                          r->triangular_n > 0 ? r->gets_seconds : r->phase_seconds[2]);
    }
  g_autofree char *text = ss_json_end (&o);
  printf ("%s\n", text);
}

static void
print_bench_text (const SsBenchParams *bp, const char *backend, const SsBenchResult *r)
{
  gsize pixels = (gsize) r->width * (gsize) r->height;
  g_autofree char *peak = ss_format_bytes (r->peak_memory_bytes);
  g_autofree char *work = ss_format_bytes (r->fft_work_bytes);

  printf ("device           %s (%s)\n", r->device ? r->device : "?", backend);
  g_autofree char *prior = bench_prior_name (bp);
  printf ("solver           %s%s%s", ss_solver_kind_to_string (bp->solver),
          prior ? ", prior " : "", prior ? prior : "");
  if (bp->rl_accel > 0)
    printf (", accel %g", bp->rl_accel);
  printf ("\n");
  printf ("size             %d x %d", r->width, r->height);
  if (r->width != bp->width || r->height != bp->height)
    printf (" (%s padding of %d x %d, margin %d)", ss_boundary_to_string (bp->boundary),
            bp->width, bp->height, r->margin);
  printf ("\n");
  if (ss_solver_is_iterative (bp->solver))
    {
      /* The time and the rate of one span, the timed iterations alone. The
       * CPU times them between two reports of a run twice as long, leaving
       * out what a solve pays once, so its whole run is printed apart. */
      double timed = r->seconds_per_iteration * r->iterations;
      printf ("iterations       %d in %.6f s (%.1f it/s)\n", r->iterations, timed,
              r->iterations / timed);
      if (r->total_seconds > timed * (1 + 1e-9))
        printf ("whole run        %.3f s (set-up and untimed iterations included)\n",
                r->total_seconds);
      printf ("time/iteration   %.4f ms\n", 1e3 * r->seconds_per_iteration);
    }
  else
    printf ("solve            %.3f s (one solve: not iterative)\n", r->total_seconds);
  if (r->floor_seconds > 0)
    {
      double bytes_seconds = r->bandwidth > 0 ? r->floor_bytes / r->bandwidth : NAN;
      printf ("floor            %.4f ms = transforms %.4f ms + %.1f MB at %.1f GB/s "
              "(%.4f ms)\n", 1e3 * r->floor_seconds, 1e3 * r->floor_fft_seconds,
              r->floor_bytes / 1e6, r->bandwidth / 1e9, 1e3 * bytes_seconds);
      printf ("ratio            %.3f (time/iteration over floor)\n", r->ratio);
    }
  printf ("peak memory      %s (%.1f floats/pixel) + FFT work areas %s\n", peak,
          pixels ? (double) r->peak_memory_bytes / (4.0 * pixels) : 0.0, work);
  const char *const *phases = ss_solver_info (bp->solver)->phases;
  if (phases[0] != NULL)
    {
      printf ("phases          ");
      for (int i = 0; i < 4 && phases[i]; i++)
        printf ("%s %s %.4f s", i ? "," : "", phases[i], r->phase_seconds[i]);
      printf ("\n");
      /* The CPU compares on a separate n×n factor (triangular_n); the GPU on
       * the solve's own factor, timed as phase 2. */
      double gets = r->triangular_n > 0 ? r->gets_seconds : r->phase_seconds[2];
      g_autofree char *where = r->triangular_n > 0
        ? g_strdup_printf (" on a %d x %d factor", r->triangular_n, r->triangular_n)
        : g_strdup ("");
      if (r->reference_seconds > 0)
        printf ("GETS vs library  %.4f s vs %.4f s (%.2fx)%s\n", gets, r->reference_seconds,
                gets / r->reference_seconds, where);
    }
}

/* ---- bench --batch N: a batch against separate solves, devices against one ---- */

static void
print_batch_json (const SsBatchBenchResult *r, const char *backend)
{
  SsJsonObject o;
  ss_json_begin (&o);
  ss_json_add_string (&o, "type", "bench-batch");
  ss_json_add_string (&o, "solver", "cpadmm");
  ss_json_add_string (&o, "backend", backend);
  ss_json_add_string (&o, "device", r->device);
  ss_json_add_int (&o, "devices", r->devices);
  ss_json_add_int (&o, "batch", r->count);
  ss_json_add_int (&o, "width", r->width);
  ss_json_add_int (&o, "height", r->height);
  ss_json_add_int (&o, "iterations", r->iterations);
  ss_json_add_number (&o, "batch_seconds", r->batch_seconds);
  ss_json_add_number (&o, "one_device_seconds", r->one_device_seconds);
  ss_json_add_number (&o, "separate_seconds", r->separate_seconds);
  ss_json_add_number (&o, "batch_speedup", r->batch_speedup);
  ss_json_add_number (&o, "device_scaling", r->device_scaling);
  /* Per frame and iteration, set-up and transfers included: comparable
   * with a single solve's seconds_per_iteration. */
  double frame_iterations = (double) r->count * r->iterations;
  ss_json_add_number (&o, "batch_seconds_per_frame_iteration",
                      r->batch_seconds / frame_iterations);
  ss_json_add_number (&o, "separate_seconds_per_frame_iteration",
                      r->separate_seconds / frame_iterations);
  /* The one-device batch's time by phase (ss_batch_phase_name order). */
  ss_json_add_number_array (&o, "batch_phase_seconds", r->batch_phase_seconds,
                            SS_BATCH_PHASES);
  GString *names = g_string_new (NULL);
  for (int i = 0; i < SS_BATCH_PHASES; i++)
    g_string_append_printf (names, "%s%s", i ? "," : "", ss_batch_phase_name (i));
  ss_json_add_string (&o, "batch_phase_names", names->str);
  g_string_free (names, TRUE);
  g_autofree char *text = ss_json_end (&o);
  printf ("%s\n", text);
}

static void
print_batch_text (const SsBatchBenchResult *r, const char *backend)
{
  double frames = (double) r->count;
  printf ("device           %s (%s)\n", r->device ? r->device : "?", backend);
  printf ("problem          %d CPADMM frames of %d x %d, one operator, %d iterations each\n",
          r->count, r->width, r->height, r->iterations);
  printf ("batch            %.3f s (%.2f frames/s) on %d device%s\n", r->batch_seconds,
          frames / r->batch_seconds, r->devices, r->devices == 1 ? "" : "s");
  if (r->devices > 1)
    printf ("batch, 1 device  %.3f s (%.2f frames/s); %d devices give %.2fx\n",
            r->one_device_seconds, frames / r->one_device_seconds, r->devices,
            r->device_scaling);
  printf ("separate solves  %.3f s (%.2f frames/s) on the first device\n", r->separate_seconds,
          frames / r->separate_seconds);
  printf ("ratio            %.2f (separate over batch, one device)\n", r->batch_speedup);
  double frame_iterations = (double) r->count * r->iterations;
  printf ("per frame and iteration  batch %.4f ms, separate %.4f ms (set-up and transfers "
          "included)\n", 1e3 * r->batch_seconds / frame_iterations,
          1e3 * r->separate_seconds / frame_iterations);
  double phased = 0.0;
  for (int i = 0; i < SS_BATCH_PHASES; i++)
    phased += r->batch_phase_seconds[i];
  if (phased > 0.0)
    {
      printf ("batch phases    ");
      for (int i = 0; i < SS_BATCH_PHASES; i++)
        printf ("%s %s %.4f s", i ? "," : "", ss_batch_phase_name (i),
                r->batch_phase_seconds[i]);
      printf (" (one device)\n");
    }
}

static int
bench_batch (const CliOptions *o, const SsBenchParams *bp, SsBackend *backend, int count)
{
  g_autoptr (GError) error = NULL;
  SsBatchBenchResult result;
  if (!ss_backend_bench_batch (backend, bp, count, &result, &error))
    {
      ss_batch_bench_result_clear (&result);
      return bench_fail (error);
    }
  if (o->json)
    print_batch_json (&result, ss_backend_get_name (backend));
  else
    print_batch_text (&result, ss_backend_get_name (backend));
  ss_batch_bench_result_clear (&result);
  return CLI_EXIT_OK;
}

/* The backend the settings ask for; prints and returns NULL when it cannot
 * be had. */
static SsBackend *
bench_backend_new (const CliOptions *o, const CliBenchSettings *s)
{
  /* A view of the settings, which keep the devices: not cleared. */
  CliConfig config = { 0 };
  config.backend = s->backend;
  config.devices = s->devices;
  config.n_devices = s->n_devices;
  return cli_backend_new (&config, o);
}

/* The plain bench, on settings already checked: the engine's timing of a
 * random problem, or of a batch with --batch. */
static int
bench_plain (const CliOptions *o, const CliBenchSettings *s)
{
  /* Everything is checked: from here an interruption ends the bench. */
  install_bench_signals ();
  g_autoptr (SsBackend) backend = bench_backend_new (o, s);
  if (backend == NULL)
    return CLI_EXIT_FAILURE;
  if (s->batch > 0)
    return bench_batch (o, &s->params, backend, s->batch);
  g_autoptr (GError) error = NULL;
  SsBenchResult result = { 0 };
  int status = CLI_EXIT_OK;
  if (!ss_backend_bench (backend, &s->params, &result, &error))
    status = bench_fail (error);
  else if (o->json)
    print_bench_json (&s->params, ss_backend_get_name (backend), &result);
  else
    print_bench_text (&s->params, ss_backend_get_name (backend), &result);
  ss_bench_result_clear (&result);
  return status;
}

int
cli_bench (int argc, char **argv)
{
  CliOptions o = { 0 };
  int status = cli_parse_command_line (
    "bench", "",
    "Times solver iterations on a random problem against the floor measured in the same run.",
    "The floor is the transforms an iteration cannot avoid plus its elementwise bytes at the\n"
    "copy bandwidth measured now; the ratio is time per iteration over the floor. For the\n"
    "dense direct solver the phases are timed and GETS is compared with the library's\n"
    "triangular inverse.\n"
    "--batch N times N frames sharing one operator solved as one batch against N separate\n"
    "solves, end to end, and with --devices all|0,1,... the batch spread over the devices\n"
    "against the first device alone.\n\n"
    "--whole times the real path instead: a synthetic 16-bit frame of --width x --height\n"
    "(stars, galaxies, sky gradient, noise) is written to a temporary directory and\n"
    "deblurred file to file (--psf moffat:3.5,2.5 --alpha auto) by this program, once to\n"
    "plan, then with 2 and 12 iterations (and --iters N when given); it prints each run's\n"
    "phases and everything but the iterations, t2 - 2 (t12 - t2) / 10, in iterations' worth\n"
    "(with the counts the runs report, when a stopping rule ends one early; a solver that takes\n"
    "no iteration count gives none). Options a bench would not read are refused (exit 2);\n"
    "Ctrl-C stops it, child and temporary files included, and exits 1.",
    CLI_GROUP_BENCH | CLI_GROUP_PRINT, argc, argv, &o);
  if (status < 0)
    status = cli_refuse_arguments ("bench", o.positional);
  const CliBenchMode *mode = o.whole ? &cli_bench_whole_mode : &plain_mode;
  CliBenchSettings settings = { 0 };
  if (status < 0)
    status = bench_settings_from_options (&o, mode, &settings);
  if (status < 0)
    status = o.whole ? cli_bench_whole (&o, &settings) : bench_plain (&o, &settings);
  bench_settings_clear (&settings);
  cli_options_clear (&o);
  return status;
}

/* ---- info -------------------------------------------------------------- */

static const guint8 png_signature[8] = { 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n' };

static const char *
png_colour_name (int colour_type)
{
  switch (colour_type)
    {
    case 0: return "grey";
    case 2: return "RGB";
    case 3: return "palette";
    case 4: return "grey + alpha";
    case 6: return "RGB + alpha";
    }
  return "unknown colour type";
}

/* Returns TRUE and fills TEXT when PATH starts with the PNG signature. The
 * file is looked at as every reader does (ss_io_peek_file): a named pipe or
 * a device is refused before it is opened, where opening would wait for a
 * writer for ever. Its rows are then decoded (ss_png_verify, which gives
 * the header it read), since a header whole in a file cut short or
 * corrupted after it would describe a file deblur cannot read. */
static gboolean
describe_png (const char *path, char **text, GError **error)
{
  guint8 head[8] = { 0 };
  gsize got = 0;
  if (!ss_io_peek_file (path, head, sizeof head, &got, NULL, error))
    return FALSE;
  if (got < 8 || memcmp (head, png_signature, 8) != 0)
    return FALSE;
  SsPngHeader header;
  if (!ss_png_verify (path, &header, error))
    return FALSE;
  *text = g_strdup_printf ("%s: PNG image, %u x %u, %d-bit %s\n", path, header.width,
                           header.height, header.bit_depth, png_colour_name (header.colour_type));
  return TRUE;
}

int
cli_info (int argc, char **argv)
{
  CliOptions o = { 0 };
  int status = cli_parse_command_line (
    "info", "FILE",
    "Describes FILE (FITS: HDUs, sizes, BITPIX, main header cards; PNG: size and depth) and "
    "lists the compute devices found.", NULL, 0, argc, argv, &o);
  if (status < 0 && (o.positional == NULL || g_strv_length (o.positional) != 1))
    {
      cli_error (NULL, "info: expected one FILE (see '" CLI_PROGRAM " info --help')");
      status = CLI_EXIT_USAGE;
    }
  if (status < 0)
    {
      const char *path = o.positional[0];
      g_autoptr (GError) error = NULL;
      g_autofree char *text = NULL;
      describe_png (path, &text, &error);
      if (text == NULL && error == NULL)
        text = ss_fits_describe (path, &error);
      if (text == NULL)
        status = cli_fail (CLI_EXIT_FAILURE, path, error);
      else
        {
          g_autofree char *devices = ss_backend_describe_devices ();
          fputs (text, stdout);
          if (!g_str_has_suffix (text, "\n"))
            fputc ('\n', stdout);
          printf ("compute devices:\n%s", devices ? devices : "");
          if (devices && !g_str_has_suffix (devices, "\n"))
            fputc ('\n', stdout);
          status = CLI_EXIT_OK;
        }
    }
  cli_options_clear (&o);
  return status;
}
