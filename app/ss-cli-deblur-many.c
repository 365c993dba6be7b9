/* ss-cli-deblur-many.c: `deblur IN1 IN2 ... --output-dir DIR`.
 *
 * Each input is deblurred as `deblur IN -o DIR/NAME.fits` would do it, with
 * the same options, so an output equals the single-file run's. Inputs are
 * independent: one that fails (unreadable, no stars, too large) says so on
 * one line naming it, and the others go on; the exit status is 1 when any
 * failed. Output files are written through a temporary file and renamed, so
 * a failed or interrupted input leaves nothing behind.
 *
 * With several CUDA devices (--devices all|0,1,...) one worker thread per
 * device takes every k-th input, so the devices deblur at once; the engine
 * is thread-safe (FFTW plans under a lock, cfitsio reentrant) and each
 * worker's solves open their own device context.
 *
 * What would make the whole run wrong is refused before any work (exit 2):
 * -o with --output-dir, --truth (it belongs to one input), two inputs whose
 * outputs would have the same name, an output that would be an input.
 */
#include "ss-cli-json.h"
#include "ss-cli-solve.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>

/* "dir/frame.fits.gz" -> "frame": the name without its directory, its
 * compression suffix and its image suffix (case-insensitive). */
static char *
output_stem (const char *input)
{
  static const char *const compressed[] = { ".gz", ".fz" };
  static const char *const images[] = { ".fits", ".fit", ".fts", ".png" };
  char *name = g_path_get_basename (input);
  g_autofree char *lower = g_ascii_strdown (name, -1);
  gsize length = strlen (name);
  for (gsize i = 0; i < G_N_ELEMENTS (compressed); i++)
    if (length > strlen (compressed[i]) && g_str_has_suffix (lower, compressed[i]))
      {
        length -= strlen (compressed[i]);
        lower[length] = '\0';
        break;
      }
  for (gsize i = 0; i < G_N_ELEMENTS (images); i++)
    if (length > strlen (images[i]) && g_str_has_suffix (lower, images[i]))
      {
        length -= strlen (images[i]);
        break;
      }
  name[length] = '\0';
  return name;
}

static gboolean
same_file (const char *a, const char *b)
{
  struct stat sa, sb;
  if (g_str_equal (a, b))
    return TRUE;
  if (stat (a, &sa) != 0 || stat (b, &sb) != 0)
    return FALSE;
  return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

static int
check_many_options (const CliOptions *o)
{
  if (o->output != NULL)
    {
      cli_error (NULL, "deblur: give -o for one input or --output-dir for several, not both");
      return CLI_EXIT_USAGE;
    }
  if (o->positional == NULL || o->positional[0] == NULL)
    {
      cli_error (NULL, "deblur: --output-dir needs at least one input image");
      return CLI_EXIT_USAGE;
    }
  if (o->truth != NULL && g_strv_length (o->positional) > 1)
    {
      cli_error (NULL, "deblur: --truth belongs to one input; give one input with it");
      return CLI_EXIT_USAGE;
    }
  if (o->output_dir[0] == '\0')
    {
      cli_error (NULL, "--output-dir: an empty name");
      return CLI_EXIT_USAGE;
    }
  return -1;
}

/* DIR exists as a directory afterwards (made, parents included, when
 * missing: concurrent runs making the same one is fine). */
static int
prepare_output_dir (const char *dir)
{
  if (g_file_test (dir, G_FILE_TEST_EXISTS) && !g_file_test (dir, G_FILE_TEST_IS_DIR))
    {
      cli_error (dir, "--output-dir: exists and is not a directory");
      return CLI_EXIT_USAGE;
    }
  if (g_mkdir_with_parents (dir, 0777) != 0)
    {
      int saved = errno;
      cli_error (dir, "--output-dir: cannot create the directory: %s", g_strerror (saved));
      return CLI_EXIT_FAILURE;
    }
  return -1;
}

/* The output of each input, refusing names shared by two inputs or equal
 * to an input (an output directory that is an input's directory is fine as
 * long as no name collides). */
static int
plan_outputs (const CliOptions *o, char **outputs)
{
  char *const *inputs = o->positional;
  for (guint i = 0; inputs[i] != NULL; i++)
    {
      g_autofree char *stem = output_stem (inputs[i]);
      g_autofree char *name = g_strconcat (stem, ".fits", NULL);
      outputs[i] = g_build_filename (o->output_dir, name, NULL);
      for (guint j = 0; j < i; j++)
        if (same_file (outputs[i], outputs[j]))
          {
            cli_error (NULL, "--output-dir %s: %s and %s would both be written to %s; "
                       "deblur them into different directories", o->output_dir, inputs[j],
                       inputs[i], outputs[i]);
            return CLI_EXIT_USAGE;
          }
    }
  for (guint i = 0; inputs[i] != NULL; i++)
    for (guint j = 0; inputs[j] != NULL; j++)
      if (same_file (outputs[i], inputs[j]))
        {
          cli_error (NULL, "--output-dir %s: the output of %s would replace the input %s; "
                     "choose another directory", o->output_dir, inputs[i], inputs[j]);
          return CLI_EXIT_USAGE;
        }
  return -1;
}

/* Prints the totals; returns the number of failed inputs. */
static guint
report_totals (const CliOptions *o, char **inputs, const gboolean *failed, guint count)
{
  GString *names = g_string_new (NULL);
  g_autoptr (GPtrArray) failed_inputs = g_ptr_array_new ();
  guint failures = 0;
  for (guint i = 0; i < count; i++)
    if (failed[i])
      {
        g_string_append_printf (names, "%s%s", failures++ ? ", " : "", inputs[i]);
        g_ptr_array_add (failed_inputs, inputs[i]);
      }
  if (o->json)
    {
      /* A script reading --json learns which inputs failed without parsing
       * stderr: each good input has its summary, the batch this line. */
      SsJsonObject object;
      ss_json_begin (&object);
      ss_json_add_string (&object, "type", "batch");
      ss_json_add_int (&object, "inputs", count);
      ss_json_add_int (&object, "deblurred", count - failures);
      ss_json_add_string (&object, "output_dir", o->output_dir);
      ss_json_add_string_array (&object, "failed", (const char *const *) failed_inputs->pdata,
                                failed_inputs->len);
      g_autofree char *text = ss_json_end (&object);
      fprintf (stdout, "%s\n", text);
      fflush (stdout);
    }
  if (failures == 0)
    cli_note (o, "deblurred %u of %u inputs into %s", count, count, o->output_dir);
  else
    /* Always printed (even with --quiet): a batch log must show what failed. */
    cli_error (NULL, "deblurred %u of %u inputs into %s; failed: %s", count - failures, count,
               o->output_dir, names->str);
  g_string_free (names, TRUE);
  return failures;
}

/* The inputs FIRST, FIRST + STEP, ... deblurred with OPTIONS and CONFIG
 * (private shallow copies: each worker points options.output at its own
 * output, and its config at its own device). */
typedef struct {
  CliOptions options;
  CliConfig config;
  int device;
  char **outputs;
  guint count, first, step;
  CliDeblurOne deblur_one;
  gboolean *failed;          /* per input; each worker writes its own entries */
} DeblurShare;

static gpointer
deblur_share (gpointer data)
{
  DeblurShare *share = data;
  char **inputs = share->options.positional;
  for (guint i = share->first; i < share->count; i += share->step)
    {
      if (cli_was_interrupted ())
        {
          cli_error (inputs[i], "not deblurred: interrupted");
          share->failed[i] = TRUE;
          continue;
        }
      share->options.output = share->outputs[i];
      int status = share->deblur_one (&share->options, &share->config, inputs[i]);
      share->failed[i] = status != -1 && status != CLI_EXIT_OK;
    }
  return NULL;
}

/* CUDA devices to spread the inputs over: 1 unless --devices lists several
 * and the backend got them (a CPU backend has one). */
static int
count_devices (const CliConfig *c, const CliOptions *o, gboolean *usable)
{
  g_autoptr (SsBackend) backend = cli_backend_new (c, o);
  *usable = backend != NULL;
  return backend ? ss_backend_get_device_count (backend) : 0;
}

int
cli_deblur_many (CliOptions *o, CliConfig *c, CliDeblurOne deblur_one)
{
  int status = check_many_options (o);
  if (status >= 0)
    return status;
  guint count = g_strv_length (o->positional);
  g_auto (GStrv) outputs = g_new0 (char *, count + 1);
  if ((status = plan_outputs (o, outputs)) >= 0
      || (status = prepare_output_dir (o->output_dir)) >= 0)
    return status;
  /* A backend that cannot start fails every input alike: say it once. */
  gboolean usable = FALSE;
  int devices = count_devices (c, o, &usable);
  if (!usable)
    return CLI_EXIT_FAILURE;

  /* Several devices: one worker thread per device, taking every
   * devices-th input, each solving on its own device (contexts are never
   * shared). One device: the inputs in order, on this thread. */
  guint workers = (guint) MAX (1, MIN ((guint) devices, count));
  g_autofree gboolean *failed = g_new0 (gboolean, count);
  g_autofree DeblurShare *shares = g_new0 (DeblurShare, workers);
  g_autofree GThread **threads = g_new0 (GThread *, workers);
  for (guint w = 0; w < workers; w++)
    {
      DeblurShare *share = &shares[w];
      share->options = *o;
      share->config = *c;
      if (workers > 1)
        {
          share->device = c->devices[w];
          share->config.devices = &share->device;
          share->config.n_devices = 1;
        }
      share->outputs = outputs;
      share->count = count;
      share->first = w;
      share->step = workers;
      share->deblur_one = deblur_one;
      share->failed = failed;
    }
  if (workers == 1)
    deblur_share (&shares[0]);
  else
    for (guint w = 0; w < workers; w++)
      threads[w] = g_thread_new ("sharpsky-deblur", deblur_share, &shares[w]);
  for (guint w = 0; w < workers; w++)
    if (threads[w])
      g_thread_join (threads[w]);
  guint failures = report_totals (o, o->positional, failed, count);
  return failures == 0 ? CLI_EXIT_OK : CLI_EXIT_FAILURE;
}
