/* ss-bench.c: the benchmarks' parameters and results, and what the CPU and
 * CUDA benchmarks share (ss-bench.h). */
#include "ss-bench.h"
#include "ss-error.h"
#include "ss-model.h"
#include "ss-psf.h"

#include <string.h>

void
ss_bench_params_init (SsBenchParams *params)
{
  memset (params, 0, sizeof *params);
  params->solver = SS_SOLVER_CPADMM;
  params->width = params->height = 1024;
  params->iterations = 50;
  params->seed = 1;
  params->direct_method = SS_DIRECT_SOLVE;
  params->prior = SS_PRIOR_TV;
  params->boundary = SS_BOUNDARY_PERIODIC;
  params->margin = -1;
}

SsSolveParams
ss_bench_solve_params (const SsBenchParams *params)
{
  SsSolveParams sp;
  ss_solve_params_init (&sp);
  sp.kind = params->solver;
  if (params->solver == SS_SOLVER_ADMM_PRIOR)
    {
      ss_solve_params_set_defaults (&sp, params->solver);
      sp.prior = params->prior;
      sp.data_term = SS_DATA_LS;
    }
  if (params->solver == SS_SOLVER_RL)
    {
      ss_solve_params_set_defaults (&sp, params->solver);
      sp.rl_stop = SS_RL_STOP_NONE;
      sp.tv = 0;
      sp.rl_accel = params->rl_accel;
    }
  return sp;
}

void
ss_bench_result_clear (SsBenchResult *result)
{
  g_clear_pointer (&result->device, g_free);
}

gboolean
ss_bench_rl_problem (int width, int height, guint32 seed, SsOperator **op, float **y,
                     GError **error)
{
  *op = NULL;
  *y = NULL;
  SsPsfSpec psf;
  memset (&psf, 0, sizeof psf);
  if (!ss_psf_spec_parse ("gaussian:2.5", &psf, error))
    return FALSE;
  SsOperator *blur = ss_operator_new_blur (&psf, NULL, width, height, error);
  ss_psf_spec_clear (&psf);
  if (blur == NULL)
    return FALSE;
  gsize n = (gsize) width * height;
  float *data = g_try_malloc (n * sizeof (float));
  if (data == NULL)
    {
      ss_operator_free (blur);
      g_set_error (error, SS_ERROR, SS_ERROR_OUT_OF_MEMORY, "no host memory for RL's data");
      return FALSE;
    }
  /* An LCG, not GRand: the same data on every backend and a fast fill at 61 Mpx. */
  guint32 state = seed * 2654435761u + 1;
  for (gsize i = 0; i < n; i++)
    {
      state = state * 1664525u + 1013904223u;
      data[i] = 0.5f + (float) (state >> 8) * (1.0f / 16777216.0f);
    }
  *op = blur;
  *y = data;
  return TRUE;
}

double
ss_bench_rl_iteration_bytes (int width, int height, gboolean masked, gboolean accelerated)
{
  double spec = (double) height * (width / 2 + 1), n = (double) width * height;
  /* Two spectrum multiplies: read the spectrum and c^, write the spectrum
   * (24 bytes a complex value each); the ratio: read r, y (and the mask),
   * write r; the update (no TV): read z, back and the normaliser, write z.
   * Accelerated (ss-rl-accel.h), the extrapolation reads z and the z before
   * and writes both, and the update reads the last move and writes the new. */
  return 2 * 24.0 * spec + (masked ? 13.0 : 12.0) * n + 16.0 * n + (accelerated ? 24.0 * n : 0);
}
