/* ss-cli-options.c: option tables, value parsing, validation and messages
 * shared by the sharpsky-cli subcommands. This file holds the messages, the
 * one parse of a command line every subcommand goes through
 * (cli_parse_options), the number parsing and the checks of files;
 * ss-cli-options-tables.c the option tables of the common options,
 * ss-cli-options-settings.c the validation that turns them into a
 * CliConfig. */
#include "ss-cli-common.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>

/* ---- messages ---------------------------------------------------------- */

/* Messages must fit on one line: a multi-line engine message is joined. */
static char *
one_line (const char *text)
{
  g_autofree char *copy = g_strdup (text ? text : "unknown error");
  g_strstrip (copy);
  GString *out = g_string_new (NULL);
  for (const char *p = copy; *p != '\0'; p++)
    {
      if (*p == '\n' || *p == '\r')
        {
          while (p[1] == '\n' || p[1] == '\r' || p[1] == ' ')
            p++;
          g_string_append (out, "; ");
        }
      else
        g_string_append_c (out, *p);
    }
  return g_string_free (out, FALSE);
}

static void
print_message (const char *file, const char *message)
{
  g_autofree char *line = one_line (message);
  if (file != NULL && strstr (line, file) == NULL)
    fprintf (stderr, CLI_PROGRAM ": %s: %s\n", file, line);
  else
    fprintf (stderr, CLI_PROGRAM ": %s\n", line);
  fflush (stderr);
}

void
cli_error (const char *file, const char *format, ...)
{
  va_list args;
  va_start (args, format);
  g_autofree char *message = g_strdup_vprintf (format, args);
  va_end (args);
  print_message (file, message);
}

int
cli_fail (int status, const char *file, const GError *error)
{
  print_message (file, error ? error->message : NULL);
  return status;
}

void
cli_note (const CliOptions *options, const char *format, ...)
{
  if (options != NULL && options->quiet)
    return;
  va_list args;
  va_start (args, format);
  g_autofree char *message = g_strdup_vprintf (format, args);
  va_end (args);
  g_autofree char *line = one_line (message);
  fprintf (stderr, CLI_PROGRAM ": %s\n", line);
  fflush (stderr);
}

/* ---- command lines ----------------------------------------------------- */

/* Parses ARGV with CONTEXT on a copy: GOption edits the vector it is given,
 * and the caller's stays whole. ARGV[0], the subcommand, becomes
 * "sharpsky-cli COMMAND" as GOption's messages name the program. */
static gboolean
parse_copy (GOptionContext *context, int argc, char **argv, GError **error)
{
  g_auto (GStrv) args = g_new0 (char *, argc + 1);
  for (int i = 0; i < argc; i++)
    args[i] = g_strdup_printf (i == 0 ? CLI_PROGRAM " %s" : "%s", argv[i]);
  g_autofree char **view = g_memdup2 (args, sizeof (char *) * (argc + 1));
  int count = argc;
  char **vector = view;
  return g_option_context_parse (context, &count, &vector, error);
}

int
cli_parse_options (const CliCommandHelp *help, CliAddOptions add_options, gpointer data,
                   int argc, char **argv)
{
  /* GOption's usage line starts with the program name: make it name the command. */
  g_autofree char *program = g_strdup_printf (CLI_PROGRAM " %s", help->command);
  g_set_prgname (program);
  GOptionContext *context = g_option_context_new (help->parameters);
  g_option_context_set_summary (context, help->summary);
  if (help->description != NULL)
    g_option_context_set_description (context, help->description);
  add_options (context, data);

  g_autoptr (GError) error = NULL;
  gboolean ok = parse_copy (context, argc, argv, &error);
  g_option_context_free (context);
  if (ok)
    return -1;
  cli_error (NULL, "%s: %s (see '" CLI_PROGRAM " %s --help')", help->command, error->message,
             help->command);
  return CLI_EXIT_USAGE;
}

void
cli_add_option_table (GOptionContext *context, gpointer entries)
{
  g_option_context_add_main_entries (context, entries, NULL);
}

int
cli_refuse_arguments (const char *command, char *const *rest)
{
  if (rest == NULL || rest[0] == NULL)
    return -1;
  cli_error (NULL, "%s: unexpected argument '%s'", command, rest[0]);
  return CLI_EXIT_USAGE;
}

/* ---- number parsing ---------------------------------------------------- */

gboolean
cli_parse_double (const char *option, const char *text, double *value, GError **error)
{
  char *end = NULL;
  errno = 0;
  double parsed = g_ascii_strtod (text, &end);
  if (text[0] == '\0' || end == text || *end != '\0')
    {
      g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT,
                   "%s '%s': not a number", option, text);
      return FALSE;
    }
  if (!isfinite (parsed) || errno == ERANGE)
    {
      g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT,
                   "%s '%s': must be a finite number", option, text);
      return FALSE;
    }
  *value = parsed;
  return TRUE;
}

gboolean
cli_parse_int (const char *option, const char *text, gint64 min, gint64 max,
               gint64 *value, GError **error)
{
  g_autoptr (GError) local = NULL;
  if (!g_ascii_string_to_signed (text, 10, min, max, value, &local))
    {
      if (g_error_matches (local, G_NUMBER_PARSER_ERROR, G_NUMBER_PARSER_ERROR_OUT_OF_BOUNDS))
        g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT,
                     "%s %s: must be between %" G_GINT64_FORMAT " and %" G_GINT64_FORMAT,
                     option, text, min, max);
      else
        g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT,
                     "%s '%s': not an integer", option, text);
      return FALSE;
    }
  return TRUE;
}

/* ---- files ------------------------------------------------------------- */

/* The exit status for OUTPUT, which ss_output_check refused. What the
 * user fixes on the command line is a usage error (2): OUTPUT is one of
 * INPUTS, or something is in the way (a file kept without --force, a
 * folder, a device: --force replaces only a regular file). A folder that
 * is missing or cannot be written is failed I/O (1). */
static int
output_refusal_status (const char *output, gboolean force, const char *const *inputs)
{
  if (ss_output_is_input (output, inputs))
    return CLI_EXIT_USAGE;
  gboolean in_the_way = g_file_test (output, G_FILE_TEST_EXISTS)
                        && !(force && g_file_test (output, G_FILE_TEST_IS_REGULAR));
  return in_the_way ? CLI_EXIT_USAGE : CLI_EXIT_FAILURE;
}

int
cli_check_output_path (const char *output, gboolean force, const char *const *inputs)
{
  g_autoptr (GError) error = NULL;
  if (ss_output_check (output, force, inputs, &error))
    return -1;
  return cli_fail (output_refusal_status (output, force, inputs), output, error);
}

int
cli_check_output (const char *output, gboolean force, const char *const *inputs)
{
  if (output == NULL || output[0] == '\0')
    {
      cli_error (NULL, "an output file is required (-o FILE)");
      return CLI_EXIT_USAGE;
    }
  g_autoptr (GError) error = NULL;
  /* The name gives the format: "x.jpg" must not silently get FITS. */
  SsOutputFormat format;
  if (!ss_output_format_from_name (output, &format, &error))
    return cli_fail (CLI_EXIT_USAGE, output, error);
  return cli_check_output_path (output, force, inputs);
}

SsBackend *
cli_backend_new (const CliConfig *config, const CliOptions *options)
{
  g_autoptr (GError) error = NULL;
  SsBackend *backend = ss_backend_new_with_devices (config->backend, config->devices,
                                                    config->n_devices, &error);
  if (backend == NULL)
    cli_error (NULL, "--backend %s%s%s: %s", options->backend ? options->backend : "auto",
               options->devices ? " --devices " : "", options->devices ? options->devices : "",
               error->message);
  else if (options->devices != NULL && g_str_equal (ss_backend_get_name (backend), "cpu"))
    cli_note (options, "--devices %s: %s", options->devices,
              config->backend == SS_BACKEND_CPU ? "no effect with --backend cpu"
                                                : "no GPU found; solving on the CPU");
  return backend;
}

gsize
cli_count_finite (const float *data, gsize n)
{
  gsize count = 0;
  for (gsize i = 0; i < n; i++)
    count += isfinite (data[i]) ? 1 : 0;
  return count;
}

int
cli_load_image (const char *path, const CliConfig *config, const CliOptions *options,
                gboolean keep_planes, SsImage **image)
{
  g_autoptr (GError) error = NULL;
  g_autoptr (SsImage) loaded = ss_image_load (path, &config->read, &error);
  if (loaded == NULL)
    return cli_fail (CLI_EXIT_FAILURE, path, error);

  if (loaded->planes > 1 && !keep_planes)
    {
      cli_note (options, "%s: the image has %d planes; using plane 0 (--plane to choose)",
                path, loaded->planes);
      SsImage *plane = ss_image_extract_plane (loaded, 0, &error);
      if (plane == NULL)
        return cli_fail (CLI_EXIT_FAILURE, path, error);
      g_clear_pointer (&loaded, ss_image_free);
      loaded = plane;
    }

  /* Infinities and bad-pixel flags cannot be scaled or solved: blanks. */
  gsize flagged = ss_image_blank_non_physical (loaded);
  if (flagged > 0)
    cli_note (options, "%s: %" G_GSIZE_FORMAT " infinite or flag pixels (magnitude %g or more) "
              "treated as blank", path, flagged, SS_IMAGE_SENTINEL);
  gsize n = ss_image_plane_size (loaded);
  for (int p = 0; p < loaded->planes; p++)
    {
      float *data = ss_image_plane (loaded, p);
      if (cli_count_finite (data, n) > 0)
        continue;
      if (loaded->planes > 1)
        cli_error (path, "plane %d has no finite pixels (every pixel is NaN, blank or "
                   "infinite)", p);
      else
        cli_error (path, "no finite pixels (every pixel is NaN, blank or infinite)");
      return CLI_EXIT_FAILURE;
    }
  *image = g_steal_pointer (&loaded);
  return -1;
}
