/* test-engine.c: PSFs, the circulant operator, simulation and scaling,
 * each against an independent oracle (direct convolution, sorting, sums). */
#include "ss-config.h"
#include "test-common.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void
test_psf_parse_round_trip (void)
{
  const char *specs[] = { "box:5", "box2d:3", "gaussian:2.5", "moffat:3,2.5", "none", "file:p.fits" };
  for (unsigned i = 0; i < G_N_ELEMENTS (specs); i++)
    {
      SsPsfSpec spec;
      g_autoptr (GError) error = NULL;
      g_assert_true (ss_psf_spec_parse (specs[i], &spec, &error));
      g_assert_no_error (error);
      g_autofree char *text = ss_psf_spec_to_string (&spec);
      g_assert_cmpstr (text, ==, specs[i]);
      ss_psf_spec_clear (&spec);
    }
  const char *bad[] = { "box", "box:0", "box:-3", "gaussian:x", "moffat:3", "blur:4", "" };
  for (unsigned i = 0; i < G_N_ELEMENTS (bad); i++)
    {
      SsPsfSpec spec;
      g_autoptr (GError) error = NULL;
      g_assert_false (ss_psf_spec_parse (bad[i], &spec, &error));
      g_assert_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT);
    }
}

/* Sum 1, and centred: the wrapped first moments vanish; second moments match
 * the profile's closed form (Gaussian: sigma² = (FWHM/2.3548)² per axis). */
static void
test_psf_normalised_and_centred (void)
{
  g_autoptr (GRand) rng = test_rng ();
  int w = 64 + g_rand_int_range (rng, 0, 17), h = 48 + g_rand_int_range (rng, 0, 17);
  double fwhm = g_rand_double_range (rng, 2.0, 5.0);
  g_autofree char *gauss = g_strdup_printf ("gaussian:%.4f", fwhm);
  const char *specs[] = { "box:5", "box2d:7", "moffat:3,3.5", gauss };
  for (unsigned s = 0; s < G_N_ELEMENTS (specs); s++)
    {
      SsPsfSpec spec;
      g_assert_true (ss_psf_spec_parse (specs[s], &spec, NULL));
      g_autoptr (GError) error = NULL;
      g_autoptr (SsImage) psf = ss_psf_render (&spec, w, h, &error);
      g_assert_no_error (error);
      double sum = 0, mx = 0, my = 0, mxx = 0;
      for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
          {
            double v = psf->data[(gsize) y * w + x];
            int dx = x < (w + 1) / 2 ? x : x - w, dy = y < (h + 1) / 2 ? y : y - h;
            g_assert_cmpfloat (v, >=, 0);
            sum += v;
            mx += v * dx;
            my += v * dy;
            mxx += v * dx * dx;
          }
      g_assert_cmpfloat_with_epsilon (sum, 1.0, 1e-5);
      g_assert_cmpfloat (fabs (mx), <, 1e-5);
      g_assert_cmpfloat (fabs (my), <, 1e-5);
      if (spec.kind == SS_PSF_GAUSSIAN)
        {
          double sigma = fwhm / 2.3548200450309493;
          g_assert_cmpfloat (fabs (mxx - sigma * sigma) / (sigma * sigma), <, 1e-2);
        }
      if (spec.kind == SS_PSF_BOX_ROW) /* five taps of 1/5 on row 0, offsets -2..2 */
        for (int dx = -2; dx <= 2; dx++)
          g_assert_cmpfloat_with_epsilon (psf->data[(dx + w) % w], 0.2, 1e-6);
      ss_psf_spec_clear (&spec);
    }
}

static void
test_psf_larger_than_image (void)
{
  SsPsfSpec spec;
  g_assert_true (ss_psf_spec_parse ("box:9", &spec, NULL));
  g_autoptr (GError) error = NULL;
  g_autoptr (SsImage) psf = ss_psf_render (&spec, 8, 8, &error);
  g_assert_null (psf);
  g_assert_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull (strstr (error->message, "larger than the image"));
}

/* C x from the FFT equals the circular convolution done directly. */
static void
test_operator_matches_direct_convolution (void)
{
  g_autoptr (GRand) rng = test_rng ();
  int w = g_rand_int_range (rng, 9, 40), h = g_rand_int_range (rng, 9, 40);
  gsize n = (gsize) w * h;
  SsAcquisition acq;
  ss_acquisition_init (&acq);
  g_assert_true (ss_psf_spec_parse ("gaussian:2.2", &acq.psf, NULL));
  g_autoptr (GError) error = NULL;
  g_autoptr (SsOperator) op = ss_operator_new (&acq, w, h, &error);
  g_assert_no_error (error);
  g_autoptr (SsImage) k = ss_psf_render (&acq.psf, w, h, NULL);
  g_autofree float *x = test_sparse_image (rng, w, h, 0.3);
  g_autofree float *fast = g_new (float, n);
  g_autofree float *slow = g_new0 (float, n);
  g_assert_true (ss_operator_apply (op, x, fast, &error));
  for (int y = 0; y < h; y++)
    for (int xx = 0; xx < w; xx++)
      {
        double s = 0;
        for (int ky = 0; ky < h; ky++)
          for (int kx = 0; kx < w; kx++)
            s += k->data[(gsize) ky * w + kx] * x[(gsize) ((y - ky + h) % h) * w + (xx - kx + w) % w];
        slow[(gsize) y * w + xx] = (float) s;
      }
  g_assert_cmpfloat (test_rel_diff (fast, slow, n), <, 1e-5);
  ss_acquisition_clear (&acq);
}

/* <P C x, y> = <x, Cᵀ Pᵀ y> with sensing and sampling on. */
static void
test_operator_adjoint (void)
{
  g_autoptr (GRand) rng = test_rng ();
  int w = g_rand_int_range (rng, 16, 70), h = g_rand_int_range (rng, 16, 70);
  gsize n = (gsize) w * h;
  SsAcquisition acq;
  ss_acquisition_init (&acq);
  g_assert_true (ss_psf_spec_parse ("box:5", &acq.psf, NULL));
  acq.ratio = g_rand_double_range (rng, 0.2, 0.9);
  acq.seed = g_rand_int (rng);
  g_autoptr (GError) error = NULL;
  g_autoptr (SsOperator) op = ss_operator_new (&acq, w, h, &error);
  g_assert_no_error (error);
  g_assert_cmpuint (op->m, ==, (gsize) llround (acq.ratio * n));
  gsize observed = 0;
  for (gsize i = 0; i < n; i++)
    observed += op->mask[i];
  g_assert_cmpuint (observed, ==, op->m);

  g_autofree float *x = test_sparse_image (rng, w, h, 1.0);
  g_autofree float *y = test_sparse_image (rng, w, h, 1.0);
  g_autofree float *ax = g_new (float, n);
  g_autofree float *aty = g_new (float, n);
  g_assert_true (ss_operator_apply (op, x, ax, NULL));
  g_assert_true (ss_operator_apply_adjoint (op, y, aty, NULL));
  double lhs = test_dot (ax, y, n), rhs = test_dot (x, aty, n);
  g_assert_cmpfloat (fabs (lhs - rhs) / fabs (lhs), <, 1e-5);

  /* ||C||² = max|c^|²: the power method on CᵀC (no mask) approaches it from below. */
  g_autoptr (SsOperator) full = ss_operator_new_from_parts (w, h, op->chat, NULL, NULL);
  double estimate = 0;
  for (int it = 0; it < 300; it++)
    {
      g_assert_true (ss_operator_apply (full, x, ax, NULL));
      g_assert_true (ss_operator_apply_adjoint (full, ax, aty, NULL));
      estimate = sqrt (test_dot (aty, aty, n) / test_dot (x, x, n));
      double norm = sqrt (test_dot (aty, aty, n));
      for (gsize i = 0; i < n; i++)
        x[i] = (float) (aty[i] / norm);
    }
  g_assert_cmpfloat (estimate, <=, full->lipschitz * (1 + 1e-4));
  g_assert_cmpfloat (estimate, >=, full->lipschitz * 0.9);
  ss_acquisition_clear (&acq);
}

/* Same seed, same operator; a different seed, a different mask. Noise has the
 * requested standard deviation. */
static void
test_simulation_is_seeded (void)
{
  guint32 seed = test_seed ();
  int w = 64, h = 48;
  gsize n = (gsize) w * h;
  SsAcquisition acq;
  ss_acquisition_init (&acq);
  g_assert_true (ss_psf_spec_parse ("box:3", &acq.psf, NULL));
  acq.ratio = 0.5;
  acq.seed = seed;
  acq.noise = 0.05;
  g_autoptr (SsOperator) a = ss_operator_new (&acq, w, h, NULL);
  g_autoptr (SsOperator) b = ss_operator_new (&acq, w, h, NULL);
  g_assert_cmpmem (a->mask, n, b->mask, n);
  g_assert_cmpmem (a->chat, ss_fft_spectrum_floats (w, h) * 4, b->chat, ss_fft_spectrum_floats (w, h) * 4);
  acq.seed = seed + 12345;
  g_autoptr (SsOperator) c = ss_operator_new (&acq, w, h, NULL);
  g_assert_true (memcmp (a->mask, c->mask, n) != 0);

  g_autofree float *zero = g_new0 (float, n);
  acq.seed = seed;
  g_autofree float *y = ss_simulate (a, &acq, zero, NULL);
  double sum2 = 0;
  for (gsize i = 0; i < n; i++)
    {
      if (!a->mask[i])
        g_assert_cmpfloat (y[i], ==, 0.0f);
      sum2 += (double) y[i] * y[i];
    }
  double sigma = sqrt (sum2 / a->m);
  /* m = 1536 samples: the estimate's relative spread is about 1/sqrt(2m) = 1.8%. */
  g_assert_cmpfloat (fabs (sigma - 0.05) / 0.05, <, 0.1);
  ss_acquisition_clear (&acq);
}

static int
compare_floats (const void *a, const void *b)
{
  float x = *(const float *) a, y = *(const float *) b;
  return (x > y) - (x < y);
}

static void
test_median_and_scaling (void)
{
  g_autoptr (GRand) rng = test_rng ();
  for (int round = 0; round < 20; round++)
    {
      gsize n = (gsize) g_rand_int_range (rng, 1, 2000);
      g_autofree float *v = g_new (float, n);
      g_autofree float *sorted = g_new (float, n);
      gsize finite = 0;
      for (gsize i = 0; i < n; i++)
        {
          v[i] = g_rand_double (rng) < 0.1 ? NAN : (float) g_rand_double_range (rng, -5, 5);
          if (!isnan (v[i]))
            sorted[finite++] = v[i];
        }
      qsort (sorted, finite, sizeof (float), compare_floats);
      double expected = finite == 0 ? NAN
                        : finite % 2 ? sorted[finite / 2]
                                     : 0.5 * (sorted[finite / 2 - 1] + sorted[finite / 2]);
      double got = ss_median (v, n);
      if (finite == 0)
        g_assert_true (isnan (got));
      else
        g_assert_cmpfloat_with_epsilon (got, expected, 1e-6);
    }
  /* Scaling: (x - sky)/scale then back is the identity; the maximum maps to 1. */
  gsize n = 1000;
  g_autofree float *data = g_new (float, n);
  for (gsize i = 0; i < n; i++)
    data[i] = (float) g_rand_double_range (rng, 100, 200);
  SsScaling scaling;
  g_assert_true (ss_scaling_estimate (data, n, SS_SKY_MEDIAN, 0, &scaling, NULL));
  g_autofree float *scaled = g_new (float, n);
  g_autofree float *back = g_new (float, n);
  ss_scaling_apply (&scaling, data, scaled, n, FALSE);
  ss_scaling_unapply (&scaling, scaled, back, n);
  float top = 0;
  for (gsize i = 0; i < n; i++)
    top = MAX (top, scaled[i]);
  g_assert_cmpfloat_with_epsilon (top, 1.0, 1e-6);
  g_assert_cmpfloat (test_rel_diff (back, data, n), <, 1e-6);
  /* No finite pixel, or nothing above the sky: clear errors. */
  for (gsize i = 0; i < n; i++)
    data[i] = NAN;
  g_autoptr (GError) error = NULL;
  g_assert_false (ss_scaling_estimate (data, n, SS_SKY_MEDIAN, 0, &scaling, &error));
  g_assert_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT);
}

/* The clipped median ignores a bright minority that drags the plain median. */
static void
test_clipped_sky (void)
{
  g_autoptr (GRand) rng = test_rng ();
  gsize n = 20000;
  g_autofree float *data = g_new (float, n);
  for (gsize i = 0; i < n; i++)
    {
      double u1 = MAX (g_rand_double (rng), 1e-12), u2 = g_rand_double (rng);
      data[i] = (float) (10.0 + sqrt (-2 * log (u1)) * cos (2 * G_PI * u2));
      if (g_rand_double (rng) < 0.3) /* stars: 30% of pixels well above the sky */
        data[i] += (float) g_rand_double_range (rng, 5, 500);
    }
  SsScaling plain, clipped;
  g_assert_true (ss_scaling_estimate (data, n, SS_SKY_MEDIAN, 0, &plain, NULL));
  g_assert_true (ss_scaling_estimate (data, n, SS_SKY_CLIPPED_MEDIAN, 0, &clipped, NULL));
  g_assert_cmpfloat (fabs (clipped.sky - 10.0), <, fabs (plain.sky - 10.0));
  g_assert_cmpfloat (fabs (clipped.sky - 10.0), <, 0.6);
}

static void
test_acquisition_header_round_trip (void)
{
  SsAcquisition acq, back;
  ss_acquisition_init (&acq);
  g_assert_true (ss_psf_spec_parse ("moffat:3.5,2.5", &acq.psf, NULL));
  acq.ratio = 0.37;
  acq.seed = 4000000000u;
  acq.noise = 0.0125;
  g_autoptr (SsHeader) header = ss_header_new ();
  ss_acquisition_to_header (&acq, header);
  gboolean found = FALSE;
  g_autoptr (GError) error = NULL;
  g_assert_true (ss_acquisition_from_header (header, &back, &found, &error));
  g_assert_no_error (error);
  g_assert_true (found);
  g_assert_cmpint (back.psf.kind, ==, SS_PSF_MOFFAT);
  g_assert_cmpfloat (back.psf.beta, ==, 2.5);
  g_assert_cmpfloat (back.ratio, ==, 0.37);
  g_assert_cmpuint (back.seed, ==, acq.seed);
  g_assert_cmpfloat (back.noise, ==, 0.0125);
  g_assert_true (ss_acquisition_uses_sensing (&back));
  ss_acquisition_clear (&acq);
  ss_acquisition_clear (&back);
}

/* A deferred operator (made for a GPU: kernel kept, no spectrum) gives
 * what an ordinary one does: the host scalars from its kernel, c^ made on
 * first use identical to FFTW's, the same solve; realised once under
 * concurrent use; and a kernel with negative values gives an ordinary one. */
static gpointer
realize_in_thread (gpointer data)
{
  return GINT_TO_POINTER (ss_operator_realize (data, NULL));
}

static void
test_operator_deferred (void)
{
  g_autoptr (GRand) rng = test_rng ();
  int w = g_rand_int_range (rng, 20, 70), h = g_rand_int_range (rng, 16, 60);
  gsize n = (gsize) w * h;
  g_autofree float *kernel = g_new (float, n);
  g_autofree float *observed = g_new (float, n);
  g_autofree float *x = g_new (float, n);
  for (gsize i = 0; i < n; i++)
    {
      kernel[i] = (float) g_rand_double (rng) / (float) n;
      observed[i] = g_rand_double (rng) < 0.2 ? NAN : (float) g_rand_double (rng);
      x[i] = (float) g_rand_double (rng);
    }
  g_autoptr (GError) error = NULL;
  g_autoptr (SsOperator) eager = ss_operator_new_from_kernel (kernel, observed, w, h, &error);
  g_autoptr (SsOperator) deferred = ss_operator_new_deferred (kernel, observed, w, h, &error);
  g_assert_no_error (error);
  g_assert_null (deferred->chat);
  g_assert_nonnull (deferred->kernel);
  g_assert_true (deferred->kernel_nonnegative);
  g_assert_cmpuint (deferred->m, ==, eager->m);
  g_assert_cmpmem (deferred->mask, n, eager->mask, n);
  g_assert_cmpfloat (fabs (deferred->lipschitz / eager->lipschitz - 1), <, 1e-5);
  g_assert_cmpfloat (fabs (ss_operator_dc (deferred) / eager->chat[0] - 1), <, 1e-5);
  g_assert_cmpfloat (fabs (ss_operator_column_norm (deferred) / ss_operator_column_norm (eager)
                           - 1), <, 1e-6);

  /* The DC term is the plain in-order sum to the bit, also where most rows
   * are 0 (a frame's kernel beyond the PSF's reach), and _take keeps the
   * kernel it is given. */
  g_autofree float *sparse = g_memdup2 (kernel, n * sizeof (float));
  for (int y = 0; y < h; y++)
    if (g_rand_double (rng) < 0.7)
      memset (sparse + (gsize) y * w, 0, (gsize) w * sizeof (float));
  sparse[0] = 0.5f;   /* at least one row holds something */
  double plain = 0;
  for (gsize i = 0; i < n; i++)
    plain += sparse[i];
  float *given = g_memdup2 (sparse, n * sizeof (float));
  g_autoptr (SsOperator) taken = ss_operator_new_deferred_take (given, NULL, w, h, &error);
  g_assert_no_error (error);
  g_assert_true (taken->kernel == given);
  g_assert_cmpfloat (ss_operator_dc (taken), ==, plain);
  g_assert_cmpfloat (taken->lipschitz, ==, plain * plain);
  /* With a negative value it is an ordinary operator, the kernel freed. */
  float *negative = g_memdup2 (sparse, n * sizeof (float));
  negative[1] = -1.0f;
  g_autoptr (SsOperator) ordinary = ss_operator_new_deferred_take (negative, NULL, w, h, &error);
  g_assert_no_error (error);
  g_assert_null (ordinary->kernel);
  g_assert_nonnull (ordinary->chat);
  /* By backend kind: made on the host for the CPU, deferred where a GPU
   * may solve (a build with CUDA), the kernel taken either way. */
  g_autoptr (SsOperator) on_cpu = ss_backend_kind_new_operator (
    SS_BACKEND_CPU, g_memdup2 (sparse, n * sizeof (float)), NULL, w, h, &error);
  g_assert_no_error (error);
  g_assert_null (on_cpu->kernel);
  g_assert_nonnull (on_cpu->chat);
  g_assert_cmpfloat (fabs (on_cpu->chat[0] / plain - 1), <, 1e-6);
  g_autoptr (SsOperator) on_auto = ss_backend_kind_new_operator (
    SS_BACKEND_AUTO, g_memdup2 (sparse, n * sizeof (float)), NULL, w, h, &error);
  g_assert_no_error (error);
  g_assert_true ((on_auto->kernel != NULL) == (gboolean) SHARPSKY_HAVE_CUDA);
  g_assert_cmpfloat (fabs (ss_operator_dc (on_auto) / plain - 1), <, 1e-6);

  /* A solve realises it: the same spectrum, the same answer. */
  g_autofree float *y = g_new (float, n);
  g_assert_true (ss_operator_apply (eager, x, y, &error));
  SsProblem a = { .op = eager, .y = y }, b = { .op = deferred, .y = y };
  SsSolveParams params = test_solve_params (SS_SOLVER_CPADMM, 1e-3, 20);
  SsSolveResult ra = { 0 }, rb = { 0 };
  g_assert_true (ss_cpu_solve (&a, &params, NULL, NULL, NULL, &ra, &error));
  g_assert_true (ss_cpu_solve (&b, &params, NULL, NULL, NULL, &rb, &error));
  g_assert_no_error (error);
  g_assert_nonnull (deferred->chat);
  gsize floats = 2 * (gsize) h * (w / 2 + 1);
  g_assert_cmpmem (deferred->chat, floats * sizeof (float), eager->chat, floats * sizeof (float));
  g_assert_cmpfloat (test_rel_diff (ra.x, rb.x, n), ==, 0.0);
  ss_solve_result_clear (&ra);
  ss_solve_result_clear (&rb);

  /* Four threads ask at once: one spectrum, every one sees it. */
  g_autoptr (SsOperator) shared = ss_operator_new_deferred (kernel, NULL, w, h, &error);
  GThread *threads[4];
  for (int t = 0; t < 4; t++)
    threads[t] = g_thread_new ("realize", realize_in_thread, shared);
  for (int t = 0; t < 4; t++)
    g_assert_true (GPOINTER_TO_INT (g_thread_join (threads[t])));
  g_assert_cmpmem (shared->chat, floats * sizeof (float), eager->chat, floats * sizeof (float));

  /* Batches compare deferred operators by their kernels. */
  g_autoptr (SsOperator) twin = ss_operator_new_deferred (kernel, observed, w, h, &error);
  g_autoptr (SsOperator) other = ss_operator_new_deferred (kernel, observed, w, h, &error);
  other->kernel[g_rand_int_range (rng, 0, (gint32) n)] *= 2.0f;
  SsProblem pair[2] = { { .op = twin, .y = y }, { .op = deferred, .y = y } };
  SsProblem twin_other[2] = { { .op = twin, .y = y }, { .op = other, .y = y } };
  g_assert_false (ss_problems_share_operator (pair, 2));   /* one realised, one not */
  pair[1].op = twin;
  g_assert_true (ss_problems_share_operator (pair, 2));
  g_assert_false (ss_problems_share_operator (twin_other, 2));

  /* Negative values: an ordinary operator, spectrum made at once. */
  kernel[0] = -kernel[1] - 1.0f;
  g_autoptr (SsOperator) sharpening = ss_operator_new_deferred (kernel, NULL, w, h, &error);
  g_assert_no_error (error);
  g_assert_nonnull (sharpening->chat);
  g_assert_null (sharpening->kernel);
  g_assert_false (sharpening->kernel_nonnegative);
}

/* A blur folded onto a smaller frame (ss_operator_blur_kernel_at) blurs
 * there as the original does in the larger one: an image that is zero
 * within the kernel's reach of the crop's edges gives the same blur, by
 * FFTW at both sizes, whether the kernel was kept (deferred) or comes back
 * from c^; and a kernel wider than the crop keeps its sum. */
static void
test_operator_blur_kernel_at (void)
{
  g_autoptr (GRand) rng = test_rng ();
  int w = g_rand_int_range (rng, 60, 90), h = g_rand_int_range (rng, 50, 80);
  int cw = g_rand_int_range (rng, 24, 40), ch = g_rand_int_range (rng, 20, 40);
  int reach = g_rand_int_range (rng, 2, 6);
  gsize n = (gsize) w * h, cn = (gsize) cw * ch;
  g_autofree float *kernel = g_new0 (float, n);
  for (int dy = -reach; dy <= reach; dy++)
    for (int dx = -reach; dx <= reach; dx++)
      kernel[(gsize) ((dy + h) % h) * w + (dx + w) % w] = (float) g_rand_double (rng);
  g_autoptr (GError) error = NULL;
  g_autoptr (SsOperator) deferred = ss_operator_new_deferred (kernel, NULL, w, h, &error);
  g_autoptr (SsOperator) eager = ss_operator_new_from_kernel (kernel, NULL, w, h, &error);
  g_assert_no_error (error);
  g_assert_nonnull (deferred->kernel);
  g_assert_null (eager->kernel);

  int x0 = g_rand_int_range (rng, 0, w - cw), y0 = g_rand_int_range (rng, 0, h - ch);
  g_autofree float *frame = g_new0 (float, n), *crop = g_new0 (float, cn);
  for (int r = reach; r < ch - reach; r++)
    for (int c = reach; c < cw - reach; c++)
      {
        float v = (float) g_rand_double (rng);
        crop[(gsize) r * cw + c] = v;
        frame[(gsize) (y0 + r) * w + x0 + c] = v;
      }
  g_autofree float *frame_blur = g_new (float, n), *crop_blur = g_new (float, cn);
  g_assert_true (ss_operator_apply (eager, frame, frame_blur, &error));
  const SsOperator *sources[] = { deferred, eager };
  for (int k = 0; k < 2; k++)
    {
      g_autofree float *folded = ss_operator_blur_kernel_at (sources[k], cw, ch, &error);
      g_assert_no_error (error);
      g_autoptr (SsOperator) small = ss_operator_new_from_kernel (folded, NULL, cw, ch, &error);
      g_assert_true (ss_operator_apply (small, crop, crop_blur, &error));
      double worst = 0;
      for (int r = 0; r < ch; r++)
        for (int c = 0; c < cw; c++)
          worst = fmax (worst, fabs (crop_blur[(gsize) r * cw + c]
                                     - frame_blur[(gsize) (y0 + r) * w + x0 + c]));
      g_test_message ("%s kernel %d×%d folded to %d×%d: largest difference %.3g",
                      k ? "c^'s" : "kept", w, h, cw, ch, worst);
      g_assert_cmpfloat (worst, <, 1e-4);
    }

  /* Wider than the crop: every tap lands somewhere. */
  g_autofree float *narrow = ss_operator_blur_kernel_at (deferred, reach, reach, &error);
  double sum = 0, folded_sum = 0;
  for (gsize i = 0; i < n; i++)
    sum += kernel[i];
  for (int i = 0; i < reach * reach; i++)
    folded_sum += narrow[i];
  g_assert_cmpfloat (fabs (folded_sum / sum - 1), <, 1e-5);
}

int
main (int argc, char **argv)
{
  g_setenv ("SHARPSKY_FFTW", "estimate", FALSE);
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/engine/psf/parse", test_psf_parse_round_trip);
  g_test_add_func ("/engine/psf/normalised-centred", test_psf_normalised_and_centred);
  g_test_add_func ("/engine/psf/larger-than-image", test_psf_larger_than_image);
  g_test_add_func ("/engine/operator/direct-convolution", test_operator_matches_direct_convolution);
  g_test_add_func ("/engine/operator/adjoint-and-norm", test_operator_adjoint);
  g_test_add_func ("/engine/operator/deferred", test_operator_deferred);
  g_test_add_func ("/engine/operator/blur-kernel-at", test_operator_blur_kernel_at);
  g_test_add_func ("/engine/simulation/seeded", test_simulation_is_seeded);
  g_test_add_func ("/engine/scaling/median", test_median_and_scaling);
  g_test_add_func ("/engine/scaling/clipped-sky", test_clipped_sky);
  g_test_add_func ("/engine/model/header-round-trip", test_acquisition_header_round_trip);
  return g_test_run ();
}
