/* sharpsky-cli: the command line of Sharpsky.
 *
 *   sharpsky-cli simulate TRUTH -o MEASURED.fits [options]
 *   sharpsky-cli deblur IN -o OUT [options]
 *   sharpsky-cli run [TRUTH] [options]
 *   sharpsky-cli bench [options]
 *   sharpsky-cli cs [options]
 *   sharpsky-cli info FILE
 *   sharpsky-cli quality [--cases small] [--markdown FILE]
 *
 * Each subcommand has its own --help. Exit status: 0 success, 2 bad usage,
 * 1 failed I/O or solve (ss-cli-common.h).
 */
#include "ss-cli-common.h"
#include "ss-config.h"

#include <locale.h>
#include <string.h>

typedef struct {
  const char *name;
  int (*run) (int argc, char **argv);
  const char *summary;
} CliCommand;

static const CliCommand commands[] = {
  { "simulate", cli_simulate, "simulate a blurred, compressed, noisy measurement of an image" },
  { "deblur",   cli_deblur,   "recover an image from a measurement or a blurred image" },
  { "run",      cli_run,      "simulate and recover in memory, with MSE (teaching)" },
  { "bench",    cli_bench,    "time solver iterations against the measured floor" },
  { "cs",       cli_cs,       "compressed sensing: random sparse problems, batches, phase transitions" },
  { "info",     cli_info,     "describe a FITS or PNG file and the compute devices" },
  { "quality",  cli_quality,  "score every solver against RL and Wiener on noisy simulated skies" },
};

static void
print_usage (FILE *out)
{
  fprintf (out, "Usage:\n  " CLI_PROGRAM " [--version] [--help] COMMAND [OPTIONS...]\n\n"
           "Deblurs astronomical images (Sharpsky %s).\n\nCommands:\n", SHARPSKY_VERSION);
  for (gsize i = 0; i < G_N_ELEMENTS (commands); i++)
    fprintf (out, "  %-10s %s\n", commands[i].name, commands[i].summary);
  fprintf (out, "\nRun '" CLI_PROGRAM " COMMAND --help' for the options of a command.\n"
           "Exit status: 0 success, 1 failed I/O or solve, 2 bad usage.\n");
}

int
main (int argc, char **argv)
{
  /* GOption converts --help to the locale's charset: without the user's
   * locale the C locale's ASCII turns every non-ASCII character (α, ρ, ²)
   * into '?', even under LANG=C.UTF-8. Numbers stay in the C locale: the
   * CSV files, HISTORY cards, tables and notes print them with printf, and
   * a decimal comma would break every reader of them. */
  setlocale (LC_ALL, "");
  setlocale (LC_NUMERIC, "C");
  g_set_prgname (CLI_PROGRAM);
  if (argc < 2)
    {
      print_usage (stderr);
      return CLI_EXIT_USAGE;
    }
  const char *name = argv[1];
  if (g_str_equal (name, "--help") || g_str_equal (name, "-h") || g_str_equal (name, "help"))
    {
      print_usage (stdout);
      return CLI_EXIT_OK;
    }
  if (g_str_equal (name, "--version") || g_str_equal (name, "-V"))
    {
      printf (CLI_PROGRAM " %s\n", SHARPSKY_VERSION);
      return CLI_EXIT_OK;
    }
  for (gsize i = 0; i < G_N_ELEMENTS (commands); i++)
    if (g_str_equal (name, commands[i].name))
      {
        int status = commands[i].run (argc - 1, argv + 1);
        /* A deblur that failed before its solve may have left the GPU's
         * start-up running: the process must not end under it. */
        ss_backend_warm_up_wait ();
        return status;
      }

  cli_error (NULL, "unknown command '%s' (commands: simulate, deblur, run, bench, cs, info, quality; "
             "see '" CLI_PROGRAM " --help')", name);
  return CLI_EXIT_USAGE;
}
