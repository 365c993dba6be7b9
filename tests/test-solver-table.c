/* test-solver-table.c: the solver and parameter tables that the CLI and the
 * app are built from: consistent, complete, and round-tripping their values. */
#include "sharpsky.h"

#include <math.h>
#include <string.h>

/* Every kind has its descriptor at its index, with a unique name, a label,
 * help, a CPU entry, and defaults that pass validation. */
static void
test_descriptors (void)
{
  g_assert_cmpuint (ss_solver_count (), ==, SS_N_SOLVERS);
  g_autoptr (GHashTable) names = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr (GHashTable) cs_names = g_hash_table_new (g_str_hash, g_str_equal);
  for (guint i = 0; i < ss_solver_count (); i++)
    {
      const SsSolverInfo *info = ss_solver_nth (i);
      g_assert_true (ss_solver_info (info->kind) == info);
      g_assert_nonnull (info->name);
      g_assert_nonnull (info->label);
      g_assert_nonnull (info->help);
      g_assert_nonnull (info->cpu);
      g_assert_false (g_hash_table_contains (names, info->name));
      g_hash_table_add (names, (gpointer) info->name);
      g_assert_true (ss_solver_find (info->name, NULL) == info);
      g_autofree char *upper = g_ascii_strup (info->name, -1);
      g_assert_true (ss_solver_find (upper, NULL) == info);
      /* A dense solver says how much fits, and checks it. */
      g_assert_true ((info->caps & SS_SOLVER_NEEDS_REGION) == 0
                     || (info->max_unknowns != NULL && info->check_size != NULL));

      SsSolveParams p;
      ss_solve_params_init (&p);
      ss_solve_params_set_defaults (&p, info->kind);
      g_autoptr (GError) error = NULL;
      g_assert_true (ss_solve_params_validate (&p, &error));
      g_assert_no_error (error);
      g_assert_cmpint (ss_solver_is_iterative (info->kind), ==,
                       (info->caps & SS_SOLVER_ITERATIVE) != 0);
      /* A compressed-sensing algorithm, when named, is one `cs` knows; and
       * each is named by one solver only (the app's phase-transition list). */
      SsCsAlgorithm algorithm;
      g_assert_true (info->cs_algorithm == NULL
                     || ss_cs_algorithm_from_string (info->cs_algorithm, &algorithm, NULL));
      if (info->cs_algorithm)
        {
          g_assert_false (g_hash_table_contains (cs_names, info->cs_algorithm));
          g_hash_table_add (cs_names, (gpointer) info->cs_algorithm);
        }
    }
  g_autoptr (GError) error = NULL;
  g_assert_null (ss_solver_find ("no-such-solver", &error));
  g_assert_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT);
  /* The message lists every name, so a user can pick one. */
  for (guint i = 0; i < ss_solver_count (); i++)
    g_assert_nonnull (strstr (error->message, ss_solver_nth (i)->name));
}

/* Each parameter's default lies in its range and in the app's, and every
 * value written by ss_param_format parses back to itself. */
static void
test_parameters (void)
{
  GRand *rng = g_rand_new ();
  guint32 seed = g_rand_int (rng);
  g_rand_set_seed (rng, seed);
  g_test_message ("seed %u", seed);
  for (int id = 0; id < SS_N_PARAMS; id++)
    {
      const SsParamInfo *info = ss_param_info ((SsParamId) id);
      g_assert_cmpint (info->id, ==, id);
      g_assert_true (ss_param_in_range (info, info->default_value));
      if (info->type == SS_PARAM_REAL || info->type == SS_PARAM_INT)
        {
          g_assert_true (ss_param_in_range (info, info->ui_min));
          /* A log-scale control cannot show 0 or below. */
          if (info->log_scale)
            {
              g_assert_cmpfloat (info->ui_min, >, 0);
              g_assert_cmpfloat (info->default_value, >, 0);
            }
          g_assert_true (ss_param_in_range (info, info->ui_max));
          g_assert_false (ss_param_in_range (info, NAN));
        }
      for (int trial = 0; trial < 20; trial++)
        {
          double value = info->default_value;
          if (info->type == SS_PARAM_REAL)
            value = info->log_scale
                      ? pow (10, g_rand_double_range (rng, log10 (info->ui_min), log10 (info->ui_max)))
                      : g_rand_double_range (rng, info->ui_min, info->ui_max);
          else if (info->type == SS_PARAM_INT)
            value = g_rand_int_range (rng, (gint32) info->ui_min, (gint32) info->ui_max);
          else if (info->type == SS_PARAM_BOOL)
            value = g_rand_boolean (rng);
          else
            value = g_rand_int_range (rng, 0, g_strv_length ((char **) info->choices));
          g_autofree char *text = ss_param_format (info, value);
          double back = NAN;
          g_autoptr (GError) error = NULL;
          g_assert_true (ss_param_parse (info, text, &back, &error));
          g_assert_no_error (error);
          g_assert_cmpfloat (fabs (back - value), <=, 1e-8 * fabs (value));

          SsSolveParams p;
          ss_solve_params_init (&p);
          ss_param_set (&p, info, value);
          g_assert_cmpfloat (ss_param_get (&p, info), ==,
                             info->type == SS_PARAM_REAL ? value : round (value));
        }
      if (info->type == SS_PARAM_REAL && !isinf (info->max))
        {
          g_autoptr (GError) error = NULL;
          double back;
          g_autofree char *text = g_strdup_printf ("%.17g", info->max * 2 + 1);
          g_assert_false (ss_param_parse (info, text, &back, &error));
          g_assert_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT);
          g_assert_nonnull (strstr (error->message, info->name));
        }
    }
  g_rand_free (rng);
}

/* Compare's variants cover every value of a solver's choices once. */
static void
test_variants (void)
{
  for (guint i = 0; i < ss_solver_count (); i++)
    {
      const SsSolverInfo *info = ss_solver_nth (i);
      guint n = ss_solver_n_variants (info);
      g_assert_cmpuint (n, >=, 1);
      g_autoptr (GHashTable) labels = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
      for (guint v = 0; v < n; v++)
        {
          SsSolveParams p;
          ss_solve_params_set_defaults (&p, info->kind);
          ss_solver_apply_variant (info, v, &p);
          g_assert_cmpint (p.kind, ==, info->kind);
          char *label = ss_solve_params_label (&p);
          g_assert_false (g_hash_table_contains (labels, label));
          g_hash_table_add (labels, label);
          /* The scripts' name is the solver's, plus the choices off their defaults. */
          g_autofree char *name = ss_solve_params_name (&p);
          g_assert_true (g_str_has_prefix (name, info->name));
          g_assert_cmpint (v == 0, ==, g_str_equal (name, info->name));
        }
    }
  SsSolveParams p;
  ss_solve_params_set_defaults (&p, SS_SOLVER_DIRECT);
  p.direct_method = SS_DIRECT_INVERSE;
  g_autofree char *name = ss_solve_params_name (&p);
  g_assert_cmpstr (name, ==, "direct-inverse");
}

/* Validation reads the table: a solver's own rule, and ranges. */
static void
test_validation (void)
{
  SsSolveParams p;
  ss_solve_params_init (&p);
  ss_solve_params_set_defaults (&p, SS_SOLVER_DIRECT);
  p.alpha = 0;
  g_autoptr (GError) error = NULL;
  g_assert_false (ss_solve_params_validate (&p, &error));
  g_assert_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT);
  g_clear_error (&error);
  ss_solve_params_set_defaults (&p, SS_SOLVER_CPADMM);
  p.tau = 1.7;
  g_assert_false (ss_solve_params_validate (&p, &error));
  g_assert_nonnull (strstr (error->message, "tau"));
  g_clear_error (&error);
  p.tau = 1.0;
  p.rho = NAN;
  g_assert_false (ss_solve_params_validate (&p, &error));
  g_clear_error (&error);
  p.rho = 1.0;
  g_assert_true (ss_solve_params_validate (&p, &error));
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/solver-table/descriptors", test_descriptors);
  g_test_add_func ("/solver-table/parameters", test_parameters);
  g_test_add_func ("/solver-table/variants", test_variants);
  g_test_add_func ("/solver-table/validation", test_validation);
  return g_test_run ();
}
