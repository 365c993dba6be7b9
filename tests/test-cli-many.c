/* test-cli-many.c: many inputs (suite cli): `deblur IN... --output-dir DIR`,
 * the Slurm job-array recipe on a single-node Slurm started here, and the
 * GNU parallel recipe. Every output must equal the single-file run's; a
 * broken input fails alone, named on one line, and leaves no file behind.
 * The Slurm and parallel tests skip visibly where those tools are absent or
 * Slurm cannot start.
 *
 * Then `bench`, whose --whole runs this program many times over: an
 * interruption leaves no child and no temporary file, the solvers it lists
 * are the ones it times, and what it prints and refuses is consistent. No
 * test here bounds a time; the times printed are only checked against each
 * other.
 */
#include "test-cli-run.h"

#include <errno.h>
#include <gio/gio.h>
#include <math.h>
#include <signal.h>
#include <unistd.h>

#define SIDE 48

/* Options every run of a test shares, so that outputs are comparable. */
#define DEBLUR_OPTIONS "--psf", "gaussian:2", "--iters", "30", "--backend", "cpu"

/* N star fields named frame-00.fits ... and, at BROKEN (unless -1), a file
 * that is not FITS. Returns the paths (g_strfreev). */
static char **
write_inputs (const Fixture *f, int count, int broken)
{
  char **paths = g_new0 (char *, count + 1);
  for (int i = 0; i < count; i++)
    {
      g_autofree char *name = g_strdup_printf ("frame-%02d.fits", i);
      paths[i] = temp_path (f, name);
      if (i == broken)
        {
          g_assert_true (g_file_set_contents (paths[i], "SIMPLE  = T / but nothing else", -1,
                                              NULL));
          continue;
        }
      g_autofree float *data = random_star_field (SIDE, SIDE);
      test_write_fits_float (paths[i], data, SIDE, SIDE, 1, "test stars");
    }
  return paths;
}

/* "DIR/frame-03.fits" for input "…/frame-03.fits". */
static char *
output_of (const char *dir, const char *input)
{
  g_autofree char *name = g_path_get_basename (input);
  return g_build_filename (dir, name, NULL);
}

/* The single-file run's output of INPUT, in DIR/single/. */
static char *
single_run (const Fixture *f, const char *input)
{
  g_autofree char *dir = temp_path (f, "single");
  g_mkdir_with_parents (dir, 0700);
  char *out = output_of (dir, input);
  RUN_CLI_OK ("deblur", input, "-o", out, DEBLUR_OPTIONS, "--quiet");
  return out;
}

/* OUTPUT's pixels are the single-file run's, bit for bit. */
static void
assert_same_as_single_run (const Fixture *f, const char *input, const char *output)
{
  g_autofree char *single = single_run (f, input);
  long w1, h1, w2, h2;
  g_autofree float *a = read_fits_float (output, &w1, &h1, NULL);
  g_autofree float *b = read_fits_float (single, &w2, &h2, NULL);
  g_assert_cmpint (w1, ==, w2);
  g_assert_cmpint (h1, ==, h2);
  g_assert_cmpmem (a, w1 * h1 * sizeof (float), b, w2 * h2 * sizeof (float));
}

/* Lines of TEXT that contain NEEDLE. */
static int
count_lines_with (const char *text, const char *needle)
{
  g_auto (GStrv) lines = g_strsplit (text ? text : "", "\n", -1);
  int count = 0;
  for (int i = 0; lines[i]; i++)
    count += strstr (lines[i], needle) != NULL;
  return count;
}

/* ---- deblur IN... --output-dir DIR --------------------------------------------- */

static void
test_many_with_broken_input (Fixture *f, gconstpointer data)
{
  enum { COUNT = 5, BROKEN = 2 };
  g_auto (GStrv) inputs = write_inputs (f, COUNT, BROKEN);
  g_autofree char *out = temp_path (f, "out");
  CliRun run = RUN_CLI ("deblur", inputs[0], inputs[1], inputs[2], inputs[3], inputs[4],
                        "--output-dir", out, DEBLUR_OPTIONS, "--quiet");
  /* One input failed: exit 1, its own line naming it (and the totals). */
  g_assert_cmpint (run.status, ==, 1);
  g_assert_cmpint (count_lines_with (run.err, inputs[BROKEN]), ==, 2);
  g_assert_nonnull (strstr (run.err, "deblurred 4 of 5 inputs"));
  for (int i = 0; i < COUNT; i++)
    if (i != BROKEN)
      g_assert_cmpint (count_lines_with (run.err, inputs[i]), ==, 0);
  cli_run_clear (&run);
  /* The four good outputs and nothing else (no temporary, no partial file). */
  g_assert_cmpuint (test_count_entries (out), ==, COUNT - 1);
  for (int i = 0; i < COUNT; i++)
    {
      g_autofree char *output = output_of (out, inputs[i]);
      g_assert_cmpint (g_file_test (output, G_FILE_TEST_EXISTS), ==, i != BROKEN);
      if (i != BROKEN)
        assert_same_as_single_run (f, inputs[i], output);
    }
  /* With --json a last object names the failed input (a script had only
   * stderr to learn it from). */
  run = RUN_CLI ("deblur", inputs[0], inputs[1], inputs[2], inputs[3], inputs[4],
                 "--output-dir", out, "--force", DEBLUR_OPTIONS, "--json");
  g_assert_cmpint (run.status, ==, 1);
  const char *batch = strstr (run.out, "{\"type\":\"batch\"");
  g_assert_nonnull (batch);
  g_assert_nonnull (strstr (batch, "\"deblurred\":4"));
  g_assert_null (strpbrk (inputs[BROKEN], "\"\\"));   /* its JSON string is itself */
  g_autofree char *failed = g_strdup_printf ("\"failed\":[\"%s\"]", inputs[BROKEN]);
  g_assert_nonnull (strstr (batch, failed));
  cli_run_clear (&run);
}

/* Existing outputs: refused one by one without --force (the rest go on),
 * replaced with it; every good run exits 0. */
static void
test_many_force (Fixture *f, gconstpointer data)
{
  g_auto (GStrv) inputs = write_inputs (f, 3, -1);
  g_autofree char *out = temp_path (f, "out");
  g_mkdir_with_parents (out, 0700);
  g_autofree char *taken = output_of (out, inputs[1]);
  g_assert_true (g_file_set_contents (taken, "keep me", -1, NULL));

  CliRun run = RUN_CLI ("deblur", inputs[0], inputs[1], inputs[2], "--output-dir", out,
                        DEBLUR_OPTIONS, "--quiet");
  g_assert_cmpint (run.status, ==, 1);
  g_assert_cmpint (count_lines_with (run.err, taken), >=, 1);
  g_autofree char *kept = NULL;
  g_assert_true (g_file_get_contents (taken, &kept, NULL, NULL));
  g_assert_cmpstr (kept, ==, "keep me");
  cli_run_clear (&run);

  run = RUN_CLI ("deblur", inputs[0], inputs[1], inputs[2], "--output-dir", out, "--force",
                 DEBLUR_OPTIONS, "--quiet");
  g_assert_cmpint (run.status, ==, 0);
  cli_run_clear (&run);
  assert_same_as_single_run (f, inputs[1], taken);
}

/* What would make the whole run wrong is refused before any work (exit 2). */
static void
test_many_refusals (Fixture *f, gconstpointer data)
{
  g_auto (GStrv) inputs = write_inputs (f, 2, -1);
  g_autofree char *out = temp_path (f, "out");
  g_autofree char *sub = temp_path (f, "sub");
  g_mkdir_with_parents (sub, 0700);
  g_autofree char *twin = output_of (sub, inputs[0]);   /* same name, other directory */
  g_autofree float *pixels = random_star_field (SIDE, SIDE);
  test_write_fits_float (twin, pixels, SIDE, SIDE, 1, "twin");
  g_autofree char *before = NULL;
  gsize before_length = 0;
  g_assert_true (g_file_get_contents (inputs[0], &before, &before_length, NULL));

  struct {
    const char *why;
    const char *const *args;
  } cases[] = {
    { "-o and --output-dir",
      (const char *const[]) { "deblur", inputs[0], "-o", "x.fits", "--output-dir", out,
                              DEBLUR_OPTIONS, NULL } },
    { "the inputs' own directory",
      (const char *const[]) { "deblur", inputs[0], inputs[1], "--output-dir", f->dir, "--force",
                              DEBLUR_OPTIONS, NULL } },
    { "two inputs, one output name",
      (const char *const[]) { "deblur", inputs[0], twin, "--output-dir", out, DEBLUR_OPTIONS,
                              NULL } },
    { "--truth with several inputs",
      (const char *const[]) { "deblur", inputs[0], inputs[1], "--output-dir", out, "--truth",
                              inputs[1], DEBLUR_OPTIONS, NULL } },
    { "a file as the directory",
      (const char *const[]) { "deblur", inputs[0], "--output-dir", inputs[1], DEBLUR_OPTIONS,
                              NULL } },
    { "several inputs without --output-dir",
      (const char *const[]) { "deblur", inputs[0], inputs[1], "-o", "x.fits", DEBLUR_OPTIONS,
                              NULL } },
  };
  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    {
      g_test_message ("refusal: %s", cases[i].why);
      CliRun run = run_cli_argv (cases[i].args);
      g_assert_cmpint (run.status, ==, 2);
      g_assert_cmpint (count_lines_with (run.err, "sharpsky-cli: "), ==, 1);
      cli_run_clear (&run);
    }
  /* Nothing was made or touched. */
  g_assert_false (g_file_test (out, G_FILE_TEST_EXISTS));
  g_autofree char *after = NULL;
  gsize after_length = 0;
  g_assert_true (g_file_get_contents (inputs[0], &after, &after_length, NULL));
  g_assert_cmpmem (before, before_length, after, after_length);

  /* A directory holding inputs is fine when no name collides. */
  g_autofree char *other = temp_path (f, "other");
  g_mkdir_with_parents (other, 0700);
  g_autofree char *elsewhere = g_build_filename (other, "frame-09.fits", NULL);
  test_write_fits_float (elsewhere, pixels, SIDE, SIDE, 1, "other");
  CliRun run = RUN_CLI ("deblur", elsewhere, "--output-dir", f->dir, DEBLUR_OPTIONS, "--quiet");
  g_assert_cmpint (run.status, ==, 0);
  cli_run_clear (&run);
  g_autofree char *made = temp_path (f, "frame-09.fits");
  g_assert_true (g_file_test (made, G_FILE_TEST_EXISTS));
}

/* ---- several devices ------------------------------------------------------------ */

/* Is a CUDA device usable by this build? (`info` lists "cuda 0: NAME ...".) */
static gboolean
cli_has_cuda_device (const Fixture *f)
{
  g_autofree char *probe = temp_path (f, "probe.fits");
  g_autofree float *pixels = g_new0 (float, 4);
  test_write_fits_float (probe, pixels, 2, 2, 1, "probe");
  CliRun run = RUN_CLI ("info", probe);
  gboolean found = run.out && strstr (run.out, "\ncuda 0: ")
                   && !strstr (run.out, "cuda 0: unusable");
  cli_run_clear (&run);
  return found;
}

/* --devices 0,0: two workers (one thread each) on one GPU, the path that
 * spreads inputs over several GPUs; every output as the single CPU run's
 * within float32 rounding, the broken input alone failing. */
static void
test_many_on_two_contexts (Fixture *f, gconstpointer data)
{
  if (!cli_has_cuda_device (f))
    {
      g_test_skip ("no CUDA device (the several-device path needs one)");
      return;
    }
  enum { COUNT = 5, BROKEN = 3 };
  g_auto (GStrv) inputs = write_inputs (f, COUNT, BROKEN);
  g_autofree char *out = temp_path (f, "out");
  CliRun run = RUN_CLI ("deblur", inputs[0], inputs[1], inputs[2], inputs[3], inputs[4],
                        "--output-dir", out, "--psf", "gaussian:2", "--iters", "30",
                        "--backend", "cuda", "--devices", "0,0", "--quiet");
  g_assert_cmpint (run.status, ==, 1);
  g_assert_cmpint (count_lines_with (run.err, inputs[BROKEN]), ==, 2);
  cli_run_clear (&run);
  g_assert_cmpuint (test_count_entries (out), ==, COUNT - 1);
  for (int i = 0; i < COUNT; i++)
    {
      if (i == BROKEN)
        continue;
      g_autofree char *output = output_of (out, inputs[i]);
      g_autofree char *single = single_run (f, inputs[i]);
      long w, h;
      g_autofree float *a = read_fits_float (output, &w, &h, NULL);
      g_autofree float *b = read_fits_float (single, &w, &h, NULL);
      g_assert_cmpfloat (test_rel_diff (a, b, (gsize) w * h), <, 1e-4);
    }
}

/* ---- the planes of a cube, solved as one batch ----------------------------------- */

/* With CPADMM and a backend that may be a GPU, deblur solves a cube's planes
 * as one batch (ss_backend_solve_batch); each output plane equals the plane
 * solved alone on the CPU (bit for bit where the batch ran on the CPU,
 * within float32 rounding on a GPU), in its place. */
static void
test_cube_batch_equals_planes (Fixture *f, gconstpointer data)
{
  enum { PLANES = 4 };
  g_autofree float *cube = g_new (float, (gsize) SIDE * SIDE * PLANES);
  for (int p = 0; p < PLANES; p++)
    {
      g_autofree float *plane = random_star_field (SIDE, SIDE);
      memcpy (cube + (gsize) p * SIDE * SIDE, plane, sizeof (float) * SIDE * SIDE);
    }
  g_autofree char *input = temp_path (f, "cube.fits");
  test_write_fits_float (input, cube, SIDE, SIDE, PLANES, "cube");
  g_autofree char *batched = temp_path (f, "batched.fits");
  g_autofree char *alone = temp_path (f, "alone.fits");
  /* --alpha auto: every plane has its own weight inside the batch. */
  RUN_CLI_OK ("deblur", input, "-o", batched, "--psf", "gaussian:2", "--iters", "30",
              "--alpha", "auto", "--backend", "auto", "--quiet");
  RUN_CLI_OK ("deblur", input, "-o", alone, "--psf", "gaussian:2", "--iters", "30",
              "--alpha", "auto", "--backend", "cpu", "--quiet");
  long w, h, planes_a, planes_b;
  g_autofree float *a = read_fits_float (batched, &w, &h, &planes_a);
  g_autofree float *b = read_fits_float (alone, &w, &h, &planes_b);
  g_assert_cmpint (planes_a, ==, PLANES);
  g_assert_cmpint (planes_b, ==, PLANES);
  gsize n = (gsize) w * h;
  for (int p = 0; p < PLANES; p++)
    {
      double diff = test_rel_diff (a + p * n, b + p * n, n);
      g_test_message ("plane %d: relative difference %.3g", p, diff);
      g_assert_cmpfloat (diff, <, 1e-4);
      /* Planes differ from each other far more: a mix-up would show. */
      if (p > 0)
        g_assert_cmpfloat (test_rel_diff (a + p * n, b + (p - 1) * n, n), >, 0.1);
    }
}

/* ---- file lists for the recipes ------------------------------------------------- */

static char *
write_list (const Fixture *f, char **inputs)
{
  char *list = temp_path (f, "list.txt");
  g_autofree char *joined = g_strjoinv ("\n", inputs);
  g_autofree char *text = g_strconcat (joined, "\n", NULL);
  g_assert_true (g_file_set_contents (list, text, -1, NULL));
  return list;
}

static char *
recipe_path (const char *name)
{
  return g_build_filename (g_getenv ("G_TEST_SRCDIR"), "..", "build-aux", name, NULL);
}

/* Every good input's output equals its single-file run, the broken one has
 * none; LOG names the broken input on one line and no other input. */
static void
assert_recipe_outputs (const Fixture *f, char **inputs, int broken, const char *out,
                       const char *log)
{
  for (int i = 0; inputs[i]; i++)
    {
      g_autofree char *output = output_of (out, inputs[i]);
      g_assert_cmpint (g_file_test (output, G_FILE_TEST_EXISTS), ==, i != broken);
      if (i != broken)
        {
          assert_same_as_single_run (f, inputs[i], output);
          g_assert_cmpint (count_lines_with (log, inputs[i]), ==, 0);
        }
    }
  g_assert_cmpint (count_lines_with (log, inputs[broken]), >=, 1);
  g_assert_cmpuint (test_count_entries (out), ==, g_strv_length (inputs) - 1);
}

/* ---- GNU parallel ------------------------------------------------------------- */

static void
test_parallel_recipe (Fixture *f, gconstpointer data)
{
  g_autofree char *parallel = g_find_program_in_path ("parallel");
  if (parallel == NULL)
    {
      g_test_skip ("GNU parallel is not installed (apt-get install parallel)");
      return;
    }
  enum { COUNT = 7, BROKEN = 4 };
  g_auto (GStrv) inputs = write_inputs (f, COUNT, BROKEN);
  g_autofree char *list = write_list (f, inputs);
  g_autofree char *out = temp_path (f, "out");
  g_autofree char *script = recipe_path ("parallel-deblur.sh");
  const char *argv[] = { script, list, out, DEBLUR_OPTIONS, "--quiet", NULL };
  g_auto (GStrv) env = g_get_environ ();
  env = g_environ_setenv (env, "SHARPSKY_JOBS", "2", TRUE);
  env = g_environ_setenv (env, "SHARPSKY_PER_JOB", "3", TRUE);
  g_autofree char *err = NULL;
  int wait_status = 0;
  g_autoptr (GError) error = NULL;
  g_assert_true (g_spawn_sync (NULL, (char **) argv, env, G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL,
                               NULL, &err, &wait_status, &error));
  g_assert_no_error (error);
  g_test_message ("stderr: %s", err);
  g_assert_true (WIFEXITED (wait_status));
  g_assert_cmpint (WEXITSTATUS (wait_status), ==, 1);
  assert_recipe_outputs (f, inputs, BROKEN, out, err);
}

/* ---- Slurm ----------------------------------------------------------------------- */

/* A single-node Slurm in a scratch directory: slurmctld and slurmd on free
 * localhost ports, no authentication daemon (auth/none), started and
 * stopped by the test. */
typedef struct {
  char *dir, *conf;
  char **env;
  gboolean started;
} MiniSlurm;

static int
free_port (void)
{
  g_autoptr (GSocketListener) listener = g_socket_listener_new ();
  g_autoptr (GError) error = NULL;
  guint16 port = g_socket_listener_add_any_inet_port (listener, NULL, &error);
  g_assert_no_error (error);
  g_socket_listener_close (listener);
  return port;
}

static void
write_slurm_conf (MiniSlurm *s)
{
  const char *user = g_get_user_name ();
  g_autofree char *host = g_strdup (g_get_host_name ());
  char *dot = strchr (host, '.');
  if (dot)
    *dot = '\0';
  g_autofree char *text = g_strdup_printf (
    "ClusterName=sharpskytest\nSlurmctldHost=localhost\nSlurmctldPort=%d\nSlurmdPort=%d\n"
    "AuthType=auth/none\nCredType=cred/none\nSlurmUser=%s\nSlurmdUser=%s\n"
    "StateSaveLocation=%s/state\nSlurmdSpoolDir=%s/spool\n"
    "SlurmctldPidFile=%s/slurmctld.pid\nSlurmdPidFile=%s/slurmd.pid\n"
    "SlurmctldLogFile=%s/slurmctld.log\nSlurmdLogFile=%s/slurmd.log\n"
    "ProctrackType=proctrack/linuxproc\nTaskPlugin=task/none\nMpiDefault=none\n"
    "SchedulerType=sched/builtin\nSelectType=select/cons_tres\nSelectTypeParameters=CR_Core\n"
    "ReturnToService=2\nJobAcctGatherType=jobacct_gather/none\n"
    "AccountingStorageType=accounting_storage/none\n"
    "NodeName=sharpskynode NodeAddr=127.0.0.1 NodeHostname=%s CPUs=%d State=UNKNOWN\n"
    "PartitionName=test Nodes=sharpskynode Default=YES MaxTime=INFINITE State=UP\n",
    free_port (), free_port (), user, user, s->dir, s->dir, s->dir, s->dir, s->dir, s->dir,
    host, g_get_num_processors ());
  s->conf = g_build_filename (s->dir, "slurm.conf", NULL);
  g_assert_true (g_file_set_contents (s->conf, text, -1, NULL));
}

/* Runs ARGV with the test Slurm's environment; returns the exit status
 * (-1 when it could not run) and its output. */
static int
slurm_run (const MiniSlurm *s, const char *const *argv, char **out)
{
  g_autofree char *err = NULL;
  int wait_status = 0;
  if (!g_spawn_sync (NULL, (char **) argv, s->env, G_SPAWN_SEARCH_PATH, NULL, NULL, out, &err,
                     &wait_status, NULL))
    return -1;
  if (err && *err)
    g_test_message ("%s: %s", argv[0], err);
  return WIFEXITED (wait_status) ? WEXITSTATUS (wait_status) : -1;
}

static char *
slurm_log_tail (const MiniSlurm *s, const char *name)
{
  g_autofree char *path = g_build_filename (s->dir, name, NULL);
  g_autofree char *text = NULL;
  if (!g_file_get_contents (path, &text, NULL, NULL))
    return g_strdup ("(no log)");
  gsize length = strlen (text);
  return g_strdup (text + (length > 600 ? length - 600 : 0));
}

/* Waits for the node to be idle (the daemons up and talking). A liveness
 * bound, not a timing: a Slurm that is not up in a minute is not going to
 * be. */
static gboolean
slurm_wait_idle (const MiniSlurm *s)
{
  const char *argv[] = { "sinfo", "-h", "-o", "%t", NULL };
  for (int tries = 0; tries < 120; tries++)
    {
      g_autofree char *out = NULL;
      if (slurm_run (s, argv, &out) == 0 && out && g_str_has_prefix (out, "idle"))
        return TRUE;
      g_usleep (G_USEC_PER_SEC / 2);
    }
  return FALSE;
}

/* Starts the daemons; FALSE (with the reason in *WHY) when this machine
 * cannot run them. */
static gboolean
mini_slurm_start (MiniSlurm *s, const char *dir, char **why)
{
  s->dir = g_build_filename (dir, "slurm", NULL);
  g_autofree char *state = g_build_filename (s->dir, "state", NULL);
  g_autofree char *spool = g_build_filename (s->dir, "spool", NULL);
  g_mkdir_with_parents (state, 0700);
  g_mkdir_with_parents (spool, 0700);
  write_slurm_conf (s);
  s->env = g_environ_setenv (g_get_environ (), "SLURM_CONF", s->conf, TRUE);
  const char *ctld[] = { "slurmctld", "-c", "-i", NULL };
  const char *node[] = { "slurmd", "-N", "sharpskynode", NULL };
  s->started = TRUE;
  if (slurm_run (s, ctld, NULL) != 0 || slurm_run (s, node, NULL) != 0 || !slurm_wait_idle (s))
    {
      g_autofree char *ctld_log = slurm_log_tail (s, "slurmctld.log");
      g_autofree char *node_log = slurm_log_tail (s, "slurmd.log");
      *why = g_strdup_printf ("Slurm could not start here: slurmctld log: %s; slurmd log: %s",
                              ctld_log, node_log);
      return FALSE;
    }
  return TRUE;
}

/* Stops the daemons this test started (by their pid files) and waits for
 * each to be gone. */
static void
mini_slurm_stop (MiniSlurm *s)
{
  const char *pid_files[] = { "slurmd.pid", "slurmctld.pid" };
  for (gsize i = 0; s->started && i < G_N_ELEMENTS (pid_files); i++)
    {
      g_autofree char *path = g_build_filename (s->dir, pid_files[i], NULL);
      g_autofree char *text = NULL;
      if (!g_file_get_contents (path, &text, NULL, NULL))
        continue;
      pid_t pid = (pid_t) g_ascii_strtoll (text, NULL, 10);
      if (pid <= 1 || kill (pid, SIGTERM) != 0)
        continue;
      for (int tries = 0; tries < 100 && kill (pid, 0) == 0; tries++)
        g_usleep (G_USEC_PER_SEC / 10);
    }
  g_strfreev (s->env);
  g_free (s->conf);
  g_free (s->dir);
}

static void
test_slurm_job_array (Fixture *f, gconstpointer data)
{
  const char *tools[] = { "slurmctld", "slurmd", "sbatch", "sinfo" };
  for (gsize i = 0; i < G_N_ELEMENTS (tools); i++)
    {
      g_autofree char *found = g_find_program_in_path (tools[i]);
      if (found == NULL)
        {
          g_autofree char *why = g_strdup_printf ("Slurm is not installed (no %s; apt-get "
                                                  "install slurm-wlm)", tools[i]);
          g_test_skip (why);
          return;
        }
    }
  MiniSlurm slurm = { 0 };
  g_autofree char *why = NULL;
  if (!mini_slurm_start (&slurm, f->dir, &why))
    {
      g_test_skip (why);
      mini_slurm_stop (&slurm);
      return;
    }
  enum { COUNT = 12, BROKEN = 7, TASKS = 3 };
  g_auto (GStrv) inputs = write_inputs (f, COUNT, BROKEN);
  g_autofree char *list = write_list (f, inputs);
  g_autofree char *out = temp_path (f, "out");
  g_autofree char *script = recipe_path ("slurm-deblur.sh");
  g_autofree char *logs = g_build_filename (f->dir, "task-%a.log", NULL);
  g_autofree char *output_option = g_strdup_printf ("--output=%s", logs);
  /* --wait: sbatch returns when the whole array has ended, with the
   * highest exit status of its tasks. */
  const char *argv[] = { "sbatch", "--wait", "--array=0-2", output_option, script, list, out,
                         DEBLUR_OPTIONS, "--quiet", NULL };
  g_autofree char *sbatch_out = NULL;
  int status = slurm_run (&slurm, argv, &sbatch_out);
  g_test_message ("sbatch: %s", sbatch_out);

  /* Each task's log; the broken file is in the one of task BROKEN % TASKS. */
  GString *all_logs = g_string_new (NULL);
  for (int t = 0; t < TASKS; t++)
    {
      g_autofree char *name = g_strdup_printf ("task-%d.log", t);
      g_autofree char *path = temp_path (f, name);
      g_autofree char *text = NULL;
      g_assert_true (g_file_get_contents (path, &text, NULL, NULL));
      g_test_message ("task %d log: %s", t, text);
      g_assert_cmpint (count_lines_with (text, inputs[BROKEN]), >=, t == BROKEN % TASKS ? 1 : 0);
      if (t != BROKEN % TASKS)
        g_assert_cmpint (count_lines_with (text, inputs[BROKEN]), ==, 0);
      g_assert_nonnull (strstr (text, t == BROKEN % TASKS ? "exits 1" : "exits 0"));
      g_string_append (all_logs, text);
    }
  /* The job has ended: sbatch --wait returned with the failed task's 1,
   * and nothing of it is queued. */
  g_assert_cmpint (status, ==, 1);
  const char *queue[] = { "squeue", "-h", NULL };
  g_autofree char *queued = NULL;
  g_assert_cmpint (slurm_run (&slurm, queue, &queued), ==, 0);
  g_assert_cmpstr (queued, ==, "");
  mini_slurm_stop (&slurm);

  assert_recipe_outputs (f, inputs, BROKEN, out, all_logs->str);
  g_string_free (all_logs, TRUE);
}

/* ---- bench ----------------------------------------------------------------------- */

/* The number after "KEY": in the flat JSON object LINE; NAN for null. The
 * key must be there. */
static double
json_value (const char *line, const char *key)
{
  g_autofree char *needle = g_strdup_printf ("\"%s\":", key);
  const char *at = strstr (line, needle);
  if (at == NULL)
    g_error ("no \"%s\" in %s", key, line);
  at += strlen (needle);
  if (g_str_has_prefix (at, "null"))
    return NAN;
  char *end = NULL;
  double value = g_ascii_strtod (at, &end);
  g_assert_true (end != at);
  return value;
}

/* The line of OUT that starts with PREFIX (the last one), or NULL. g_free. */
static char *
line_starting (const char *out, const char *prefix)
{
  g_auto (GStrv) lines = g_strsplit (out ? out : "", "\n", -1);
  char *found = NULL;
  for (int i = 0; lines[i]; i++)
    if (g_str_has_prefix (lines[i], prefix))
      {
        g_free (found);
        found = g_strdup (lines[i]);
      }
  return found;
}

/* A refusal: exit 2, one "sharpsky-cli: " line naming every one of WHAT. */
static void
assert_bench_refused (const char *const *args, const char *const *what)
{
  CliRun run = run_cli_argv (args);
  g_assert_cmpint (run.status, ==, 2);
  g_assert_cmpint (count_lines_with (run.err, "sharpsky-cli: "), ==, 1);
  for (gsize i = 0; what[i]; i++)
    if (strstr (run.err, what[i]) == NULL)
      g_error ("the refusal does not name %s: %s", what[i], run.err);
  cli_run_clear (&run);
}

static void
child_own_group (gpointer data)
{
  setpgid (0, 0);
}

/* Is any process running with DIR in its command line? (bench --whole's
 * children name their frame, which lies in a directory under DIR.) */
static gboolean
process_mentions (const char *dir)
{
  g_autoptr (GDir) proc = g_dir_open ("/proc", 0, NULL);
  const char *name;
  gboolean found = FALSE;
  while (!found && proc && (name = g_dir_read_name (proc)) != NULL)
    {
      if (!g_ascii_isdigit (name[0]))
        continue;
      g_autofree char *path = g_build_filename ("/proc", name, "cmdline", NULL);
      g_autofree char *text = NULL;
      gsize length = 0;
      if (!g_file_get_contents (path, &text, &length, NULL))
        continue;   /* gone meanwhile */
      for (gsize i = 0; i + 1 < length; i++)
        if (text[i] == '\0')
          text[i] = ' ';
      found = strstr (text, dir) != NULL;
    }
  return found;
}

/* bench --whole with TMPDIR in a scratch directory, sent SIGNAL_NUMBER (to
 * its whole process group, as a terminal's Ctrl-C is, when GROUP) once its
 * first progress line has appeared, that is once its first deblur child
 * has been started: the line is written after the child starts, and five
 * runs remain after it, the last one a million ADMM iterations, so the
 * signal always comes before the end. It must stop its child, remove its
 * temporary directory and exit 1 with one line saying so. */
static void
assert_whole_interrupted (Fixture *f, int signal_number, gboolean group)
{
  g_autofree char *tmp = temp_path (f, group ? "tmp-group" : "tmp-parent");
  g_assert_cmpint (g_mkdir_with_parents (tmp, 0700), ==, 0);
  g_auto (GStrv) env = g_environ_setenv (g_get_environ (), "TMPDIR", tmp, TRUE);
  const char *argv[] = { cli_path (), "bench", "--whole", "--width", "256", "--height", "256",
                         "--solver", "admm", "--iters", "1000000", "--backend", "cpu", NULL };
  GPid pid = 0;
  int err_fd = -1;
  g_autoptr (GError) error = NULL;
  g_assert_true (g_spawn_async_with_pipes (NULL, (char **) argv, env,
                                           G_SPAWN_DO_NOT_REAP_CHILD
                                           | G_SPAWN_STDOUT_TO_DEV_NULL,
                                           group ? child_own_group : NULL, NULL, &pid, NULL,
                                           NULL, &err_fd, &error));
  g_assert_no_error (error);

  GString *err = g_string_new (NULL);
  gboolean sent = FALSE;
  char buffer[4096];
  for (;;)
    {
      ssize_t got = read (err_fd, buffer, sizeof buffer);
      if (got < 0 && errno == EINTR)
        continue;
      if (got <= 0)
        break;
      g_string_append_len (err, buffer, got);
      if (!sent && strstr (err->str, "run 1 of ") && strchr (strstr (err->str, "run 1 of "), '\n'))
        {
          g_assert_cmpint (kill (group ? -pid : pid, signal_number), ==, 0);
          sent = TRUE;
        }
    }
  close (err_fd);
  int wait_status = 0;
  g_assert_cmpint (waitpid (pid, &wait_status, 0), ==, pid);
  g_spawn_close_pid (pid);
  g_test_message ("stderr: %s", err->str);
  g_assert_true (sent);
  g_assert_true (WIFEXITED (wait_status));
  g_assert_cmpint (WEXITSTATUS (wait_status), ==, 1);
  /* One line says so, the last; the lines before it are the progress. */
  g_autofree char *said = line_starting (err->str, "sharpsky-cli: bench: interrupted");
  g_assert_cmpstr (said, ==, "sharpsky-cli: bench: interrupted; nothing kept");
  g_assert_true (g_str_has_suffix (err->str, "interrupted; nothing kept\n"));
  g_assert_cmpint (count_lines_with (err->str, "interrupted"), ==, 1);
  g_string_free (err, TRUE);
  /* Nothing kept: no temporary directory, no child still running. */
  g_assert_cmpuint (test_count_entries (tmp), ==, 0);
  g_assert_false (process_mentions (tmp));
}

static void
test_bench_whole_interrupted (Fixture *f, gconstpointer data)
{
  /* Ctrl-C in a terminal: the bench and its child both get SIGINT. */
  assert_whole_interrupted (f, SIGINT, TRUE);
  /* SIGTERM to the bench alone (kill PID, timeout): it stops the child. */
  assert_whole_interrupted (f, SIGTERM, FALSE);
  /* SIGINT to the bench alone (timeout -s INT). */
  assert_whole_interrupted (f, SIGINT, FALSE);
}

/* The solvers bench lists are the ones it times: the refusal of another
 * and the --solver help give the same list, and every one on it runs on
 * the CPU (rl on a blur of its own). */
static void
test_bench_solver_list (Fixture *f, gconstpointer data)
{
  CliRun run = RUN_CLI ("bench", "--solver", "direct-fft", "--backend", "cpu");
  g_assert_cmpint (run.status, ==, 2);
  const char *at = strstr (run.err, "bench times ");
  g_assert_nonnull (at);
  at += strlen ("bench times ");
  const char *end = strstr (at, " (");
  g_assert_nonnull (end);
  g_autofree char *list = g_strndup (at, end - at);
  cli_run_clear (&run);
  g_test_message ("bench times %s", list);

  CliRun help = RUN_CLI ("bench", "--help");
  g_assert_cmpint (help.status, ==, 0);
  g_autofree char *option = line_starting (help.out, "  --solver=NAME");
  g_assert_nonnull (option);
  g_assert_nonnull (strstr (option, list));
  cli_run_clear (&help);

  g_auto (GStrv) names = g_regex_split_simple (", | or ", list, 0, 0);
  g_assert_cmpint (g_strv_length (names), >=, 2);
  for (int i = 0; names[i]; i++)
    {
      g_assert_cmpstr (names[i], !=, "direct-fft");
      gboolean dense = g_str_equal (names[i], "direct");
      const char *args[] = { "bench", "--solver", names[i], "--backend", "cpu", "--size",
                             dense ? "16" : "64", dense ? NULL : "--iters", "5", NULL };
      CliRun one = run_cli_argv (args);
      g_assert_cmpint (one.status, ==, 0);
      cli_run_clear (&one);
    }
}

/* The summary of a timed run: for an iterative solver the rate is the
 * iterations over the time printed beside them (and the time per
 * iteration the same span); a direct solve has no rate. */
static void
test_bench_summary_line (Fixture *f, gconstpointer data)
{
  CliRun run = RUN_CLI ("bench", "--solver", "cpadmm", "--size", "64", "--iters", "5",
                        "--backend", "cpu");
  g_assert_cmpint (run.status, ==, 0);
  g_autofree char *line = line_starting (run.out, "iterations ");
  g_assert_nonnull (line);
  int count = 0;
  double seconds = 0, rate = 0, per_ms = 0;
  g_assert_cmpint (sscanf (line, "iterations %d in %lf s (%lf it/s)", &count, &seconds, &rate),
                   ==, 3);
  g_assert_cmpint (count, ==, 5);
  g_assert_cmpfloat (seconds, >, 0);
  /* Within the printed digits (6 decimals of the time, 1 of the rate). */
  g_assert_cmpfloat (fabs (rate * seconds / count - 1), <, 0.01);
  g_autofree char *per = line_starting (run.out, "time/iteration ");
  g_assert_cmpint (sscanf (per, "time/iteration %lf ms", &per_ms), ==, 1);
  g_assert_cmpfloat (fabs (per_ms * 1e-3 * count / seconds - 1), <, 0.01);
  cli_run_clear (&run);

  CliRun json = RUN_CLI ("bench", "--solver", "cpadmm", "--size", "64", "--iters", "5",
                         "--backend", "cpu", "--json");
  g_assert_cmpint (json.status, ==, 0);
  double timed = json_value (json.out, "timed_seconds");
  g_assert_cmpfloat (fabs (json_value (json.out, "iterations_per_second") * timed / 5 - 1), <,
                     1e-6);
  g_assert_cmpfloat (fabs (json_value (json.out, "seconds_per_iteration") * 5 / timed - 1), <,
                     1e-6);
  g_assert_cmpfloat (json_value (json.out, "total_seconds"), >=, timed);
  cli_run_clear (&json);

  CliRun direct = RUN_CLI ("bench", "--solver", "direct", "--size", "16", "--backend", "cpu");
  g_assert_cmpint (direct.status, ==, 0);
  g_assert_null (strstr (direct.out, "it/s"));
  g_assert_null (line_starting (direct.out, "iterations "));
  g_assert_null (line_starting (direct.out, "time/iteration "));
  g_autofree char *solve = line_starting (direct.out, "solve ");
  g_assert_nonnull (solve);
  cli_run_clear (&direct);
  CliRun direct_json = RUN_CLI ("bench", "--solver", "direct", "--size", "16", "--backend",
                                "cpu", "--json");
  g_assert_cmpint (direct_json.status, ==, 0);
  g_assert_null (strstr (direct_json.out, "iterations_per_second"));
  g_assert_cmpfloat (json_value (direct_json.out, "total_seconds"), >, 0);
  cli_run_clear (&direct_json);
}

/* Exit status 2 for what the command line asked wrongly, as deblur: a size
 * the bench's PSF does not fit in, a solver bench --whole's deblur would
 * refuse. */
static void
test_bench_usage_status (Fixture *f, gconstpointer data)
{
  assert_bench_refused ((const char *const[]) { "bench", "--size", "3", "--backend", "cpu",
                                                NULL },
                        (const char *const[]) { "larger than the image", NULL });
  assert_bench_refused ((const char *const[]) { "bench", "--whole", "--solver", "nope", NULL },
                        (const char *const[]) { "--solver", NULL });
  assert_bench_refused ((const char *const[]) { "bench", "--whole", "--backend", "nope", NULL },
                        (const char *const[]) { "--backend", NULL });
}

/* Options the bench asked for would not read are refused, each named. */
static void
test_bench_unused_options (Fixture *f, gconstpointer data)
{
  struct {
    const char *const *args;
    const char *const *named;
  } cases[] = {
    { (const char *const[]) { "bench", "--margin", "10", NULL },
      (const char *const[]) { "--margin", "--boundary", NULL } },
    { (const char *const[]) { "bench", "--boundary", "periodic", "--margin", "10", NULL },
      (const char *const[]) { "--margin", NULL } },
    { (const char *const[]) { "bench", "--prior", "tv", NULL },
      (const char *const[]) { "--prior", "admm", NULL } },
    { (const char *const[]) { "bench", "--solver", "fista", "--prior", "tv", "--margin", "3",
                              NULL },
      (const char *const[]) { "--prior", "--margin", NULL } },
    { (const char *const[]) { "bench", "--direct-method", "solve", NULL },
      (const char *const[]) { "--direct-method", NULL } },
    { (const char *const[]) { "bench", "--solver", "direct", "--iters", "5", NULL },
      (const char *const[]) { "--iters", NULL } },
    { (const char *const[]) { "bench", "--whole", "--batch", "4", NULL },
      (const char *const[]) { "--batch", NULL } },
    { (const char *const[]) { "bench", "--whole", "--prior", "tv", NULL },
      (const char *const[]) { "--prior", NULL } },
    { (const char *const[]) { "bench", "--accel", "0.5", NULL },
      (const char *const[]) { "--accel", "rl", NULL } },
    { (const char *const[]) { "bench", "--whole", "--solver", "cpadmm", "--accel", "0.5", NULL },
      (const char *const[]) { "--accel", NULL } },
    { (const char *const[]) { "bench", "--whole", "--solver", "cpadmm", "--prior", "tv",
                              "--batch", "2", "--margin", "1", NULL },
      (const char *const[]) { "--prior", "--batch", "--margin", NULL } },
  };
  for (gsize i = 0; i < G_N_ELEMENTS (cases); i++)
    assert_bench_refused (cases[i].args, cases[i].named);
  /* Where they apply they are taken. */
  RUN_CLI_OK ("bench", "--boundary", "mirror", "--margin", "3", "--size", "64", "--iters", "5",
              "--backend", "cpu");
  RUN_CLI_OK ("bench", "--solver", "admm", "--prior", "starlet", "--size", "64", "--iters", "5",
              "--backend", "cpu");
  RUN_CLI_OK ("bench", "--solver", "direct", "--direct-method", "solve", "--size", "16",
              "--backend", "cpu");
  /* RL accelerated (ss-rl-accel.h): its floor counts the extrapolation's 24
   * bytes a pixel over plain RL's 28. */
  CliRun rl = RUN_CLI ("bench", "--solver", "rl", "--accel", "0.5", "--size", "64", "--iters",
                       "5", "--backend", "cpu", "--json", "--quiet");
  g_assert_cmpint (rl.status, ==, 0);
  g_assert_cmpfloat (json_value (rl.out, "accel"), ==, 0.5);
  g_assert_cmpfloat (json_value (rl.out, "floor_bytes"), ==, 48.0 * 64 * 33 + 52.0 * 64 * 64);
  cli_run_clear (&rl);
}

/* bench --whole with a solver that takes no iteration count: t2 and t12
 * run as many iterations, so there is no time per iteration to print, and
 * none is (no negative time, no NaN); with one that does, the time per
 * iteration is the walls' difference over the counts' as the runs report
 * them. */
static void
test_bench_whole_counts (Fixture *f, gconstpointer data)
{
  const char *solvers[] = { "direct-fft", "auto" };
  for (gsize i = 0; i < G_N_ELEMENTS (solvers); i++)
    {
      CliRun json = RUN_CLI ("bench", "--whole", "--width", "64", "--height", "64", "--solver",
                             solvers[i], "--backend", "cpu", "--json", "--quiet");
      g_assert_cmpint (json.status, ==, 0);
      g_assert_cmpfloat (json_value (json.out, "t2_iterations"), ==,
                         json_value (json.out, "t12_iterations"));
      g_assert_true (isnan (json_value (json.out, "seconds_per_iteration")));
      g_assert_true (isnan (json_value (json.out, "overhead_seconds")));
      g_assert_true (isnan (json_value (json.out, "overhead_iterations")));
      cli_run_clear (&json);

      CliRun text = RUN_CLI ("bench", "--whole", "--width", "64", "--height", "64", "--solver",
                             solvers[i], "--backend", "cpu", "--quiet");
      g_assert_cmpint (text.status, ==, 0);
      g_autofree char *per = line_starting (text.out, "per iteration ");
      g_assert_nonnull (per);
      g_assert_nonnull (strstr (per, "none"));
      g_assert_nonnull (strstr (per, "takes no iteration count"));
      g_assert_false (g_regex_match_simple ("\\bnan\\b", text.out, G_REGEX_CASELESS, 0));
      g_assert_null (strstr (text.out, "-0."));
      cli_run_clear (&text);
    }

  CliRun json = RUN_CLI ("bench", "--whole", "--width", "64", "--height", "64", "--solver",
                         "cpadmm", "--backend", "cpu", "--json", "--quiet");
  g_assert_cmpint (json.status, ==, 0);
  double n2 = json_value (json.out, "t2_iterations"), n12 = json_value (json.out,
                                                                        "t12_iterations");
  g_assert_cmpfloat (n2, ==, 2);
  g_assert_cmpfloat (n12, ==, 12);
  double t2 = json_value (json.out, "t2_wall"), t12 = json_value (json.out, "t12_wall");
  double per = json_value (json.out, "seconds_per_iteration");
  g_assert_cmpfloat_with_epsilon (per, (t12 - t2) / (n12 - n2), 1e-6);
  g_assert_cmpfloat_with_epsilon (json_value (json.out, "overhead_seconds"), t2 - n2 * per,
                                  1e-6);
  cli_run_clear (&json);
}

#define ADD(name, func) \
  g_test_add ("/cli/" name, Fixture, NULL, fixture_setup, func, fixture_teardown)

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  ADD ("many/broken-input-fails-alone", test_many_with_broken_input);
  ADD ("many/force", test_many_force);
  ADD ("many/refusals", test_many_refusals);
  ADD ("many/cube-batch-equals-planes", test_cube_batch_equals_planes);
  ADD ("many/two-contexts-on-one-gpu", test_many_on_two_contexts);
  ADD ("recipes/parallel", test_parallel_recipe);
  ADD ("recipes/slurm-job-array", test_slurm_job_array);
  ADD ("bench/whole-interrupted", test_bench_whole_interrupted);
  ADD ("bench/solver-list", test_bench_solver_list);
  ADD ("bench/summary-line", test_bench_summary_line);
  ADD ("bench/usage-status", test_bench_usage_status);
  ADD ("bench/unused-options", test_bench_unused_options);
  ADD ("bench/whole-counts", test_bench_whole_counts);
  return g_test_run ();
}
