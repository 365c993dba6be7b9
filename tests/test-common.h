/* test-common.h: random problems shared by the engine tests. */
#pragma once

#include "sharpsky.h"
#include "ss-cpu.h"
#include "ss-fft.h"

#include <math.h>
#include <string.h>

/* A fresh seed per run, printed so a failure can be replayed with
 * SHARPSKY_TEST_SEED=N. */
static inline guint32
test_seed (void)
{
  const char *env = g_getenv ("SHARPSKY_TEST_SEED");
  guint32 seed = env ? (guint32) g_ascii_strtoull (env, NULL, 10) : (guint32) g_test_rand_int ();
  g_test_message ("seed %u", seed);
  return seed;
}

/* A sparse field: about FILL of the pixels uniform in (0, 1], the rest 0. */
static inline float *
test_sparse_image (GRand *rng, int width, int height, double fill)
{
  gsize n = (gsize) width * height;
  float *x = g_new0 (float, n);
  for (gsize i = 0; i < n; i++)
    if (g_rand_double (rng) < fill)
      x[i] = (float) (1.0 - g_rand_double (rng));
  return x;
}

static inline double
test_rel_diff (const float *a, const float *b, gsize n)
{
  double num = 0, den = 0;
  for (gsize i = 0; i < n; i++)
    {
      num += ((double) a[i] - b[i]) * ((double) a[i] - b[i]);
      den += (double) b[i] * b[i];
    }
  return den > 0 ? sqrt (num / den) : sqrt (num);
}

static inline double
test_dot (const float *a, const float *b, gsize n)
{
  double s = 0;
  for (gsize i = 0; i < n; i++)
    s += (double) a[i] * b[i];
  return s;
}

/* A random compressed-deblurring problem: a sparse truth (a tenth of the
 * pixels lit), the operator of PSF and RATIO with a seed from RNG, and the
 * measurement with NOISE. */
typedef struct {
  SsAcquisition acq;
  SsOperator *op;
  float *truth, *y;
  int width, height;
  gsize n;
} TestProblem;

static inline void
test_problem_init (TestProblem *p, GRand *rng, int width, int height, const char *psf,
                   double ratio, double noise)
{
  memset (p, 0, sizeof *p);
  p->width = width;
  p->height = height;
  p->n = (gsize) width * height;
  ss_acquisition_init (&p->acq);
  g_assert_true (ss_psf_spec_parse (psf, &p->acq.psf, NULL));
  p->acq.ratio = ratio;
  p->acq.noise = noise;
  p->acq.seed = g_rand_int (rng);
  g_autoptr (GError) error = NULL;
  p->op = ss_operator_new (&p->acq, width, height, &error);
  g_assert_no_error (error);
  p->truth = test_sparse_image (rng, width, height, 0.1);
  p->y = ss_simulate (p->op, &p->acq, p->truth, &error);
  g_assert_no_error (error);
}

static inline void
test_problem_clear (TestProblem *p)
{
  ss_operator_free (p->op);
  g_free (p->truth);
  g_free (p->y);
  ss_acquisition_clear (&p->acq);
}
