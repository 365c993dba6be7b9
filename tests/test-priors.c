/* test-priors.c: the pieces of the ADMM-prior solver against oracles, on
 * fresh random inputs (seeds printed; SHARPSKY_TEST_SEED=N replays):
 * the starlet transform's exact reconstruction and its Fourier filters
 * against the direct à trous transform, TV's grouped shrinkage and the
 * starlet ℓ1 soft threshold against their optimality conditions and a brute
 * minimisation, and the solver's result against the TV objective's
 * minimiser. */
#include "test-common.h"
#include "ss-cpu-private.h"
#include "ss-data-weights.h"
#include "ss-rl.h"
#include "ss-starlet.h"
#include "ss-tv.h"

#include <math.h>

static float *
random_image (GRand *rng, int width, int height)
{
  gsize n = (gsize) width * height;
  float *x = g_new (float, n);
  for (gsize i = 0; i < n; i++)
    x[i] = (float) g_rand_double_range (rng, -1, 1);
  return x;
}

/* A random W x H image X and its direct starlet transform COEF (J + 1 planes). */
static void
random_starlet (GRand *rng, int w, int h, float **x, float **coef)
{
  gsize n = (gsize) w * h;
  *x = random_image (rng, w, h);
  *coef = g_new (float, (SS_STARLET_SCALES + 1) * n);
  ss_starlet_transform (*x, w, h, SS_STARLET_SCALES, *coef);
}

/* Σ scales + coarse = x to 1e-5, on a square, an odd rectangle and a row. */
static void
test_starlet_reconstruction (void)
{
  g_autoptr (GRand) rng = test_rng ();
  const int sizes[][2] = { { 32, 32 }, { 37, 23 }, { 50, 1 } };
  for (guint s = 0; s < G_N_ELEMENTS (sizes); s++)
    {
      int w = sizes[s][0], h = sizes[s][1];
      gsize n = (gsize) w * h;
      g_autofree float *x = NULL, *out = NULL;
      random_starlet (rng, w, h, &x, &out);
      double worst = 0;
      for (gsize i = 0; i < n; i++)
        {
          double sum = 0;
          for (int j = 0; j <= SS_STARLET_SCALES; j++)
            sum += out[(gsize) j * n + i];
          worst = MAX (worst, fabs (sum - x[i]));
        }
      g_test_message ("%dx%d: max |Σ scales + coarse − x| = %g", w, h, worst);
      g_assert_cmpfloat (worst, <, 1e-5);
    }
}

/* Each Fourier filter applied by FFTW equals the direct à trous scale, to
 * 1e-5 relative: the solver's W_j are the transform the prior means. */
static void
test_starlet_spectra_match_direct (void)
{
  g_autoptr (GRand) rng = test_rng ();
  int w = 40, h = 36;
  gsize n = (gsize) w * h;
  g_autofree float *x = NULL, *direct = NULL;
  random_starlet (rng, w, h, &x, &direct);
  g_autofree float *spectra = ss_starlet_spectra (w, h, SS_STARLET_SCALES);
  g_autoptr (GError) error = NULL;
  SsFft *fft = ss_fft_get (w, h, 1, &error);
  g_assert_no_error (error);
  gsize count = (gsize) h * (w / 2 + 1);
  /* FFTW's plans want the engine's aligned buffers. */
  float *real = ss_mem_alloc (NULL, n * sizeof (float), &error);
  float *spec = ss_mem_alloc (NULL, 2 * count * sizeof (float), &error);
  float *x_hat = ss_mem_alloc (NULL, 2 * count * sizeof (float), &error);
  g_assert_no_error (error);
  memcpy (real, x, n * sizeof (float));
  ss_fft_forward (fft, real, x_hat);
  g_autofree float *scale = g_new (float, n);
  for (int j = 0; j <= SS_STARLET_SCALES; j++)
    {
      for (gsize k = 0; k < count; k++)
        {
          float f = spectra[(gsize) j * count + k] / (float) n;
          spec[2 * k] = f * x_hat[2 * k];
          spec[2 * k + 1] = f * x_hat[2 * k + 1];
        }
      ss_fft_inverse (fft, spec, scale);
      double rel = test_rel_diff (scale, direct + (gsize) j * n, n);
      g_test_message ("scale %d: Fourier vs direct, relative %g", j + 1, rel);
      g_assert_cmpfloat (rel, <, 1e-5);
    }
  ss_mem_free (NULL, real, 0);
  ss_mem_free (NULL, spec, 0);
  ss_mem_free (NULL, x_hat, 0);
}

/* TV's prox on 2-vectors: the subgradient condition v − p ∈ t ∂|p| holds to
 * 1e-5, and no point on a polar grid around v does better. */
static void
test_tv_shrink_oracle (void)
{
  g_autoptr (GRand) rng = test_rng ();
  for (int trial = 0; trial < 2000; trial++)
    {
      float vx = (float) g_rand_double_range (rng, -2, 2), vy = (float) g_rand_double_range (rng, -2, 2);
      float t = (float) g_rand_double_range (rng, 0, 2);
      float px = vx, py = vy;
      ss_tv_shrink (&px, &py, 1, t);
      double norm_p = hypot (px, py), norm_v = hypot (vx, vy);
      if (norm_p > 0)
        {
          /* v − p = t p/|p| */
          g_assert_cmpfloat (fabs (vx - px - t * px / norm_p), <, 1e-5);
          g_assert_cmpfloat (fabs (vy - py - t * py / norm_p), <, 1e-5);
        }
      else
        g_assert_cmpfloat (norm_v, <=, t + 1e-6);
      /* Direct reference: the objective on a polar grid of candidates. */
      double best = 0.5 * norm_v * norm_v;   /* at p = 0 */
      for (int a = 0; a < 64; a++)
        for (int r = 1; r <= 64; r++)
          {
            double qx = r / 32.0 * cos (a * G_PI / 32), qy = r / 32.0 * sin (a * G_PI / 32);
            double f = 0.5 * ((qx - vx) * (qx - vx) + (qy - vy) * (qy - vy)) + t * hypot (qx, qy);
            best = MIN (best, f);
          }
      double at_p = 0.5 * ((px - vx) * (px - vx) + (py - vy) * (py - vy)) + t * norm_p;
      g_assert_cmpfloat (at_p, <=, best + 1e-5);
    }
}

/* ss_starlet_power_and_norms against two oracles on fresh sizes (odd, even,
 * a row): the power is Σ_j of the squared filters ss_starlet_spectra makes,
 * and the norms are ss_starlet_noise_norms's and, by Parseval, the root sum
 * of squares of each scale's impulse response, the direct transform of a
 * unit impulse. */
static void
test_starlet_power_and_norms (void)
{
  g_autoptr (GRand) rng = test_rng ();
  const int sizes[][2] = { { g_rand_int_range (rng, 33, 80), g_rand_int_range (rng, 33, 80) },
                           { 2 * g_rand_int_range (rng, 17, 40), 2 * g_rand_int_range (rng, 17, 40) },
                           { g_rand_int_range (rng, 40, 90), 1 },
                           { 14, 11 } };
  for (guint s = 0; s < G_N_ELEMENTS (sizes); s++)
    {
      int w = sizes[s][0], h = sizes[s][1], sw = w / 2 + 1;
      gsize n = (gsize) w * h, count = (gsize) h * sw;
      g_autofree float *spectra = ss_starlet_spectra (w, h, SS_STARLET_SCALES);
      double oracle_norms[SS_STARLET_SCALES], norms[SS_STARLET_SCALES];
      ss_starlet_noise_norms (spectra, w, h, SS_STARLET_SCALES, oracle_norms);
      g_autofree float *power = g_new (float, count);
      ss_starlet_power_and_norms (w, h, SS_STARLET_SCALES, power, norms);
      double worst = 0;
      for (gsize k = 0; k < count; k++)
        {
          double expected = 0;
          for (int j = 0; j < SS_STARLET_SCALES; j++)
            expected += (double) spectra[(gsize) j * count + k] * spectra[(gsize) j * count + k];
          worst = MAX (worst, fabs (power[k] - expected) / MAX (expected, 1e-12));
        }
      g_assert_cmpfloat (worst, <, 1e-6);
      g_autofree float *impulse = g_new0 (float, n);
      g_autofree float *response = g_new (float, (SS_STARLET_SCALES + 1) * n);
      impulse[0] = 1.0f;
      ss_starlet_transform (impulse, w, h, SS_STARLET_SCALES, response);
      for (int j = 0; j < SS_STARLET_SCALES; j++)
        {
          double sum = 0;
          for (gsize i = 0; i < n; i++)
            sum += (double) response[j * n + i] * response[j * n + i];
          g_test_message ("%d×%d scale %d: norm %.6g, from the spectra %.6g, spatial %.6g", w, h,
                          j + 1, norms[j], oracle_norms[j], sqrt (sum));
          g_assert_cmpfloat (fabs (norms[j] - oracle_norms[j]), <, 1e-9 * oracle_norms[j]);
          g_assert_cmpfloat (fabs (norms[j] - sqrt (sum)), <, 1e-5 * norms[j]);
        }
    }
}

/* The Poisson data term's prox (ss_poisson_prox) against a direct
 * minimisation of L (w − y log w) + ρ/2 (w − a)² over w > 0 (golden-section
 * search on a bracket holding the minimiser: the objective is convex), on
 * fresh random a, y (some 0, some below the offset), ρ and L. */
static double
poisson_objective (double w, double a, double y, double rho, double level)
{
  return level * (w - (y > 0 ? y * log (w) : 0.0)) + 0.5 * rho * (w - a) * (w - a);
}

static void
test_poisson_prox_oracle (void)
{
  g_autoptr (GRand) rng = test_rng ();
  double worst = 0;
  for (int trial = 0; trial < 2000; trial++)
    {
      float offset = (float) g_rand_double_range (rng, 0.01, 2.0);
      float level = (float) g_rand_double_range (rng, 0.05, 5.0);
      float rho = (float) exp (g_rand_double_range (rng, log (0.01), log (100.0)));
      float y = trial % 7 == 0 ? -offset : (float) g_rand_double_range (rng, -offset, 10.0);
      float a = (float) g_rand_double_range (rng, -5.0, 10.0);
      double aw = a + offset, yw = MAX (y + offset, 0.0f);
      /* The minimiser lies in (0, max(aw, yw) + L/ρ]. */
      double lo = 1e-12, hi = MAX (aw, yw) + level / rho + 1.0;
      const double phi = (sqrt (5.0) - 1) / 2;
      for (int it = 0; it < 200; it++)
        {
          double m1 = hi - phi * (hi - lo), m2 = lo + phi * (hi - lo);
          if (poisson_objective (m1, aw, yw, rho, level) < poisson_objective (m2, aw, yw, rho, level))
            hi = m2;
          else
            lo = m1;
        }
      double w = 0.5 * (lo + hi);
      double got = ss_poisson_prox (a, y, rho, offset, level) + offset;
      double err = fabs (got - w) / MAX (1.0, fabs (w));
      worst = MAX (worst, err);
      g_assert_cmpfloat (got, >=, 0.0);
    }
  g_test_message ("worst relative difference to the direct minimiser: %.2e", worst);
  g_assert_cmpfloat (worst, <, 1e-5);
}

/* The starlet ℓ1 prox is the soft threshold on each coefficient with that
 * scale's threshold: against a brute minimisation of 1/2 (p − v)² + t|p|. */
static void
test_starlet_prox_oracle (void)
{
  g_autoptr (GRand) rng = test_rng ();
  int w = 24, h = 20;
  gsize n = (gsize) w * h;
  g_autofree float *x = NULL, *coef = NULL;
  random_starlet (rng, w, h, &x, &coef);
  g_autofree float *spectra = ss_starlet_spectra (w, h, SS_STARLET_SCALES);
  double norms[SS_STARLET_SCALES];
  ss_starlet_noise_norms (spectra, w, h, SS_STARLET_SCALES, norms);
  double alpha = g_rand_double_range (rng, 0.05, 0.5);
  for (int j = 0; j < SS_STARLET_SCALES; j++)
    {
      float t = (float) (alpha * norms[j] / norms[0]);
      for (gsize i = 0; i < n; i += 7)
        {
          float v = coef[(gsize) j * n + i];
          float p = ss_soft_threshold (v, t, FALSE);
          double best = INFINITY, argbest = 0;
          for (int g = -4000; g <= 4000; g++)
            {
              double q = v + g * 1e-4 * (1 + t);
              double f = 0.5 * (q - v) * (q - v) + t * fabs (q);
              if (f < best)
                best = f, argbest = q;
            }
          g_assert_cmpfloat (fabs (p - argbest), <, 2e-4 * (1 + t));
        }
    }
  /* The per-scale weights follow the noise: each scale carries less of it. */
  for (int j = 1; j < SS_STARLET_SCALES; j++)
    g_assert_cmpfloat (norms[j], <, norms[j - 1]);
}

/* 1/2 ||Cx − y||² + α TV(x), in double. */
static double
tv_objective (const TestProblem *p, const float *x, double alpha)
{
  g_autofree float *cx = g_new (float, p->n);
  g_autoptr (GError) error = NULL;
  g_assert_true (ss_operator_apply (p->op, x, cx, &error));
  double r = 0;
  for (gsize i = 0; i < p->n; i++)
    r += ((double) cx[i] - p->y[i]) * ((double) cx[i] - p->y[i]);
  return 0.5 * r + alpha * ss_tv_value (x, p->width, p->height);
}

/* A second algorithm for the same TV problem: Condat–Vũ primal–dual,
 * x ← max(x − τ(Cᵀ(Cx − y) + ∇ᵀp), FLOOR), p ← proj_{|p|₂ <= α}(p + s∇(2x⁺ − x)),
 * with 1/τ − s‖∇‖² >= ‖C‖²/2 (‖∇‖² <= 8, ‖C‖ <= 1 for a blur), run long;
 * FLOOR −∞ for no constraint. */
static float *
tv_primal_dual (const TestProblem *p, double alpha, float floor, int iterations)
{
  int w = p->width, h = p->height;
  gsize n = p->n;
  const double s = 1.0 / 16, tau = 0.9;
  float *x = g_new0 (float, n);
  g_autofree float *px = g_new0 (float, n), *py = g_new0 (float, n);
  g_autofree float *cx = g_new (float, n), *grad = g_new (float, n), *bar = g_new (float, n);
  for (int it = 0; it < iterations; it++)
    {
      g_assert_true (ss_operator_apply (p->op, x, cx, NULL));
      for (gsize i = 0; i < n; i++)
        cx[i] -= p->y[i];
      g_assert_true (ss_operator_apply_adjoint (p->op, cx, grad, NULL));
      for (int r = 0; r < h; r++)
        for (int c = 0; c < w; c++)
          {
            /* ∇ᵀp at (r, c): −(px[r,c] − px[r,c−1]) − (py[r,c] − py[r−1,c]) */
            gsize i = (gsize) r * w + c;
            gsize left = (gsize) r * w + (c + w - 1) % w, up = (gsize) ((r + h - 1) % h) * w + c;
            double div_t = -(px[i] - px[left]) - (py[i] - py[up]);
            float next = fmaxf ((float) (x[i] - tau * (grad[i] + div_t)), floor);
            bar[i] = 2 * next - x[i];
            x[i] = next;
          }
      for (int r = 0; r < h; r++)
        for (int c = 0; c < w; c++)
          {
            gsize i = (gsize) r * w + c;
            double qx = px[i] + s * (bar[(gsize) r * w + (c + 1) % w] - bar[i]);
            double qy = py[i] + s * (bar[(gsize) ((r + 1) % h) * w + c] - bar[i]);
            double scale = MAX (1.0, hypot (qx, qy) / alpha);
            px[i] = (float) (qx / scale);
            py[i] = (float) (qy / scale);
          }
    }
  return x;
}

/* admm with the TV prior, no positivity and DATA_TERM on a fresh 20 × 18
 * problem P (α = ALPHA): a 50-iteration run and one of LONG iterations. */
static void
admm_tv_short_and_long (GRand *rng, SsDataTerm data_term, double alpha, int long_iterations,
                        TestProblem *p, SsSolveResult *shorter, SsSolveResult *longer)
{
  test_problem_init (p, rng, 20, 18, "gaussian:2", 1.0, 0.01);
  SsSolveParams params = test_solve_params (SS_SOLVER_ADMM_PRIOR, alpha, 50);
  params.prior = SS_PRIOR_TV;
  params.data_term = data_term;
  params.nonneg = FALSE;
  *shorter = test_cpu_solve (p, &params);
  params.iterations = params.report_every = long_iterations;
  *longer = test_cpu_solve (p, &params);
}

/* The ADMM's TV solution on a small problem is the minimiser: the objective
 * falls from a short run to a long one and meets a long run of a second
 * algorithm (primal–dual) to 1e-5 relative, the two images to 1e-2. */
static void
test_admm_tv_minimiser (void)
{
  g_autoptr (GRand) rng = test_rng ();
  TestProblem p;
  double alpha = 0.01;
  SsSolveResult shorter, longer;
  admm_tv_short_and_long (rng, SS_DATA_LS, alpha, 5000, &p, &shorter, &longer);
  g_autofree float *reference = tv_primal_dual (&p, alpha, -INFINITY, 20000);
  double f_short = tv_objective (&p, shorter.x, alpha), f_long = tv_objective (&p, longer.x, alpha);
  double f_ref = tv_objective (&p, reference, alpha);
  double gap = test_rel_diff (longer.x, reference, p.n);
  g_test_message ("objective after 50: %.9g, after 5000: %.9g, primal-dual: %.9g; "
                  "images differ by %.3g relative", f_short, f_long, f_ref, gap);
  g_assert_cmpfloat (f_long, <=, f_short);
  g_assert_cmpfloat (fabs (f_long - f_ref), <=, 1e-5 * f_ref);
  g_assert_cmpfloat (gap, <, 1e-2);
  ss_solve_result_clear (&shorter);
  ss_solve_result_clear (&longer);
  test_problem_clear (&p);
}

/* The floor admm's positivity holds P's x to (RL's darkest level, ss-rl.h). */
static float
admm_floor (const TestProblem *p, const SsSolveParams *params)
{
  SsProblem problem = { .op = p->op, .y = p->y };
  SsSolveParams quick = *params;
  quick.rl_stop = SS_RL_STOP_NONE;
  SsRlSetup rl;
  g_autoptr (GError) error = NULL;
  g_assert_true (ss_rl_setup (&problem, &quick, &rl, &error));
  return (float) (rl.darkest - rl.offset);
}

/* TV with positivity: TV's differences and positivity's split are stencils
 * summed in pixel space (ss-cpu-admm-prior.c), both in one iteration. The
 * long run meets the projected primal–dual's minimiser of the same
 * constrained problem: objectives to 1e-5 relative, images to 1e-2, on a
 * fresh 20 × 18 field with negative pixels in its data (so the floor binds). */
static void
test_admm_tv_positive_minimiser (void)
{
  g_autoptr (GRand) rng = test_rng ();
  TestProblem p;
  double alpha = 0.01;
  SsSolveParams params = test_solve_params (SS_SOLVER_ADMM_PRIOR, alpha, 5000);
  params.prior = SS_PRIOR_TV;
  params.data_term = SS_DATA_LS;
  params.nonneg = TRUE;
  params.report_every = params.iterations;
  /* About one field in 150 has no pixel on the floor at the minimiser,
   * where positivity would go untested: such a field is drawn again. */
  float floor = 0;
  float *reference = NULL;
  gsize on_floor = 0;
  for (int draw = 0; draw < 8 && on_floor == 0; draw++)
    {
      if (reference)
        {
          g_free (reference);
          test_problem_clear (&p);
        }
      test_problem_init (&p, rng, 20, 18, "gaussian:2", 1.0, 0.05);
      floor = admm_floor (&p, &params);
      reference = tv_primal_dual (&p, alpha, floor, 20000);
      for (gsize i = 0; i < p.n; i++)
        on_floor += reference[i] <= floor;
    }
  SsSolveResult result = test_cpu_solve (&p, &params);
  double f = tv_objective (&p, result.x, alpha), f_ref = tv_objective (&p, reference, alpha);
  double gap = test_rel_diff (result.x, reference, p.n);
  g_test_message ("floor %.4g (%" G_GSIZE_FORMAT " pixels on it); objective %.9g, projected "
                  "primal-dual %.9g; images differ by %.3g relative", floor, on_floor, f, f_ref,
                  gap);
  g_assert_cmpuint (on_floor, >, 0);
  g_assert_cmpfloat (fabs (f - f_ref), <=, 1e-5 * f_ref);
  g_assert_cmpfloat (gap, <, 1e-2);
  g_free (reference);
  ss_solve_result_clear (&result);
  test_problem_clear (&p);
}

/* L Σ (w − y″ log w) + α TV(x), w = Cx + o: the Poisson data term's
 * objective (ss-data-weights.h), in double; +∞ where w <= 0 under a count. */
static double
poisson_tv_objective (const TestProblem *p, const SsPoissonTerm *term, const float *x,
                      double alpha)
{
  g_autofree float *cx = g_new (float, p->n);
  g_assert_true (ss_operator_apply (p->op, x, cx, NULL));
  double f = 0;
  for (gsize i = 0; i < p->n; i++)
    {
      double w = (double) cx[i] + term->offset, y = MAX ((double) p->y[i] + term->offset, 0.0);
      if (w <= 0 && y > 0)
        return INFINITY;
      f += w - (y > 0 ? y * log (w) : 0.0);
    }
  return term->level * f + alpha * ss_tv_value (x, p->width, p->height);
}

/* The lowest objective one step of STEP away from X along a pixel, either way. */
static double
lowest_step_away (const TestProblem *p, const SsPoissonTerm *term, const float *x, double alpha,
                  double step)
{
  g_autofree float *moved = g_memdup2 (x, p->n * sizeof (float));
  double lowest = INFINITY;
  for (gsize i = 0; i < p->n; i++)
    for (int sign = -1; sign <= 1; sign += 2)
      {
        moved[i] = x[i] + (float) (sign * step);
        lowest = MIN (lowest, poisson_tv_objective (p, term, moved, alpha));
        moved[i] = x[i];
      }
  return lowest;
}

/* admm with the Poisson data term minimises its objective: it falls from a
 * short run to a long one, and no step of 1e-3 of the image's level from the
 * long run's image along any pixel, either way, lowers it (a necessary
 * condition of the minimiser; the short run's image fails it). */
static void
test_admm_poisson_minimiser (void)
{
  g_autoptr (GRand) rng = test_rng ();
  TestProblem p;
  double alpha = 0.01;
  SsSolveResult shorter, longer;
  admm_tv_short_and_long (rng, SS_DATA_POISSON, alpha, 8000, &p, &shorter, &longer);
  SsProblem problem = { .op = p.op, .y = p.y };
  SsPoissonTerm term;
  g_autoptr (GError) error = NULL;
  g_assert_true (ss_poisson_term_init (&problem, &term, &error));
  double f_short = poisson_tv_objective (&p, &term, shorter.x, alpha);
  double f_long = poisson_tv_objective (&p, &term, longer.x, alpha);
  g_test_message ("objective after 50: %.9g, after %d: %.9g", f_short, longer.iterations, f_long);
  g_assert_cmpfloat (f_long, <=, f_short);
  double norm = sqrt (test_dot (longer.x, longer.x, p.n) / (double) p.n);
  double lowest = lowest_step_away (&p, &term, longer.x, alpha, 1e-3 * norm);
  double lowest_short = lowest_step_away (&p, &term, shorter.x, alpha, 1e-3 * norm);
  g_test_message ("lowest objective a step away: %.9g (from the short run's: %.9g)", lowest,
                  lowest_short);
  g_assert_cmpfloat (lowest, >=, f_long - 1e-7 * fabs (f_long));
  g_assert_cmpfloat (lowest_short, <, f_short);
  ss_solve_result_clear (&shorter);
  ss_solve_result_clear (&longer);
  test_problem_clear (&p);
}

/* admm's estimate keeps the positivity it was asked for at every report,
 * not only in the limit: on a fresh noisy star field, 20 iterations (far
 * from converged, where ADMM's own x still dips below the floor) return no
 * pixel under the floor the engine derives from the data (RL's darkest
 * level, ss-rl.h), and some pixels on it. */
static void
test_admm_estimate_is_positive (void)
{
  g_autoptr (GRand) rng = test_rng ();
  TestProblem p;
  test_problem_init_sensing (&p, rng, 48, 40, "gaussian:3", 1.0, 0.02, SS_SENSING_NONE);
  SsSolveParams params = test_solve_params (SS_SOLVER_ADMM_PRIOR, 1e-3, 20);
  params.nonneg = TRUE;
  SsSolveResult result = test_cpu_solve (&p, &params);
  float floor = admm_floor (&p, &params), lowest = INFINITY;
  gsize on_floor = 0;
  for (gsize i = 0; i < p.n; i++)
    {
      lowest = MIN (lowest, result.x[i]);
      on_floor += result.x[i] == floor;
    }
  g_test_message ("floor %.6g, lowest pixel %.6g, %" G_GSIZE_FORMAT " of %" G_GSIZE_FORMAT
                  " on the floor", floor, lowest, on_floor, p.n);
  g_assert_cmpfloat (lowest, >=, floor);
  g_assert_cmpuint (on_floor, >, 0);
  ss_solve_result_clear (&result);
  test_problem_clear (&p);
}

int
main (int argc, char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/priors/starlet/reconstruction", test_starlet_reconstruction);
  g_test_add_func ("/priors/starlet/fourier-equals-direct", test_starlet_spectra_match_direct);
  g_test_add_func ("/priors/starlet/power-and-norms", test_starlet_power_and_norms);
  g_test_add_func ("/priors/poisson/prox-oracle", test_poisson_prox_oracle);
  g_test_add_func ("/priors/tv/shrink-oracle", test_tv_shrink_oracle);
  g_test_add_func ("/priors/starlet/prox-oracle", test_starlet_prox_oracle);
  g_test_add_func ("/priors/admm/tv-minimiser", test_admm_tv_minimiser);
  g_test_add_func ("/priors/admm/tv-positive-minimiser", test_admm_tv_positive_minimiser);
  g_test_add_func ("/priors/admm/poisson-minimiser", test_admm_poisson_minimiser);
  g_test_add_func ("/priors/admm/estimate-is-positive", test_admm_estimate_is_positive);
  return g_test_run ();
}
