/* ss-cuda-admm-prior.cu: circulant ADMM with the TV and starlet priors and
 * positivity on the GPU: ss-cpu-admm-prior.c's iteration.
 *
 * Transforming every split ([v + μ | z_k − ν_k ...] forward, x^, then
 * [Cx | W_k x ...] back) would take splits + 1 transform pairs (eight with TV,
 * starlet and positivity). The x-update's numerator is linear in the splits, so
 *
 *   Σ_k conj(w^_k) F(z_k − ν_k) = F(Σ_k W_kᵀ (z_k − ν_k)),
 *
 * and W_k x follows from x itself. For TV and positivity both are pixel
 * stencils (periodic forward differences, their adjoint the backward ones,
 * and the identity), for the starlet scales à trous smoothings
 * (ss-cuda-starlet.cu), so an iteration is two transform pairs, as CPADMM's:
 *
 *   real = [v + μ | Σ_k W_kᵀ (z_k − ν_k)]   --R2C (batch 2)-->   [A | B]
 *   x^ = (ρ conj(c^) A + σ B) / (ρ|c^|² + σ Σ_k |w^_k|²);   spec = [c^ x^ | x^] / n
 *   spec  --C2R-->  out = [Cx | x]
 *   pixel 1: the data split (v, μ), the TV pair (grouped shrinkage) and the
 *            positivity split (projection on x >= floor), their duals (at
 *            the dual step 1 without reweighting the TV pair keeps only
 *            b = ∇x + ν, two images instead of four, as the starlet scales);
 *   starlet: the scales of x and their splits (ss_cuda_starlet_splits);
 *   pixel 2: real = [v + μ | Σ_k W_kᵀ (z_k − ν_k)] (it reads neighbours of the
 *            splits pixel 1 wrote, hence a second pass), then the starlet
 *            scales' share added to it. Without TV the sum's pixel share is
 *            positivity's alone, which pixel 1 writes: no second pass.
 *
 * The same iterates as the CPU's up to rounding (the tests compare them to
 * 1e-4). Σ_j |ψ^_j|² of the starlet scales and their norms come from the
 * host (ss_starlet_power_and_norms), once.
 *
 * The convergence rule is the CPU's: the change since the previous report
 * point, per iteration, below SS_ADMM_CONVERGED_CHANGE relative (read from each report
 * by the iterator's stop hook). Reweighting (--reweight) updates the
 * thresholds at fixed iterations, so with it the iteration is not captured
 * as a graph (each launch is enqueued as it comes).
 *
 * This file holds the solver (its set-up, stages, reset and byte count)
 * with the denominator's, the spectral pass's and the fill kernels; the
 * pixel passes (the data, TV and positivity splits, their adjoint, TV's
 * reweighting) are in ss-cuda-admm-prior-pixel.cu, with what the two share
 * in ss-cuda-admm-prior-private.cuh.
 */
#include "ss-cuda-admm-prior-private.cuh"
#include "ss-data-weights.h"
#include "ss-noise.h"
#include "ss-rl.h"

/* ---- kernels ------------------------------------------------------------------ */

/* ρ|c^|² + σ([|dx^|² + |dy^|²] [+ 1] [+ Σ_j |ψ^_j|²]), dx^ = e^{2πi kx/w} − 1
 * (ss-tv.h); POWER: the starlet scales' sum, or NULL. */
__global__ void
admm_denominator_kernel (float *__restrict__ d, const float2 *__restrict__ chat,
                         const float *__restrict__ power, int sw, size_t count, AdmmConstants k)
{
  for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < count;
       i += (size_t) gridDim.x * blockDim.x)
    {
      int kx = (int) (i % sw), ky = (int) (i / sw);
      double ax = 2.0 * M_PI * kx / k.width, ay = 2.0 * M_PI * ky / k.height;
      float fx0 = (float) (cos (ax) - 1.0), fx1 = (float) sin (ax);
      float fy0 = k.height > 1 ? (float) (cos (ay) - 1.0) : 0.0f;
      float fy1 = k.height > 1 ? (float) sin (ay) : 0.0f;
      float2 c = chat[i];
      double tv = k.tv ? (double) fx0 * fx0 + (double) fx1 * fx1 + (double) fy0 * fy0
                           + (double) fy1 * fy1
                       : 0.0;
      double v = k.rho * ((double) c.x * c.x + (double) c.y * c.y)
                 + k.sigma * (tv + (k.positive ? 1.0 : 0.0) + (power ? (double) power[i] : 0.0));
      d[i] = (float) fmax (v, 1e-12);
    }
}

__global__ void
admm_spectral_kernel (float2 *__restrict__ s0, float2 *__restrict__ s1,
                      const float2 *__restrict__ chat, const float *__restrict__ d,
                      size_t count, AdmmConstants k)
{
  for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < count;
       i += (size_t) gridDim.x * blockDim.x)
    {
      float2 c = chat[i], a = s0[i], b = s1[i];
      float2 ca = ss_cmulc (c, a);
      float scale = k.inv_n / d[i];
      float2 x = make_float2 ((k.rho * ca.x + k.sigma * b.x) * scale,
                              (k.rho * ca.y + k.sigma * b.y) * scale);
      s0[i] = ss_cmul (c, x);
      s1[i] = x;
    }
}

__global__ void
admm_fill_kernel (float *__restrict__ x, size_t n, float value)
{
  for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < n;
       i += (size_t) gridDim.x * blockDim.x)
    x[i] = value;
}

/* ---- launches ----------------------------------------------------------------- */

static const char *const admm_stage_names[] = {
  "R2C batch 2", "spectral", "C2R batch 2", "pixel kernels (splits, then the adjoint)",
};

static gboolean
admm_stage (gpointer solver, int stage, unsigned flags, GError **error)
{
  Admm *s = (Admm *) solver;
  SsCudaContext *ctx = s->base.ctx;
  const SsCudaProblem *p = s->p;
  switch (stage)
    {
    case 0: return CUFFT_OK (cufftExecR2C (s->r2c2, s->real, (cufftComplex *) s->spec));
    case 1:
      admm_spectral_kernel<<<ss_cuda_blocks (ctx, p->spec), SS_CUDA_THREADS, 0,
                                ctx->stream>>> (s->spec, s->spec + p->spec, p->chat,
                                                s->denominator, p->spec, s->k);
      return LAUNCH_OK ("admm_spectral_kernel");
    case 2: return CUFFT_OK (cufftExecC2R (s->c2r2, (cufftComplex *) s->spec, s->out));
    default: return ss_cuda_admm_prior_pixels (s, flags, error);
    }
}

static gboolean
admm_iterate (gpointer solver, unsigned flags, GError **error)
{
  Admm *s = (Admm *) solver;
  for (int stage = 0; stage < (int) G_N_ELEMENTS (admm_stage_names); stage++)
    if (!admm_stage (solver, stage, flags, error))
      return FALSE;
  s->iteration++;
  return ss_cuda_admm_prior_maybe_reweight (s, error);
}

static const float *
admm_estimate (gpointer solver)
{
  return ((Admm *) solver)->estimate;
}

/* The starlet splits and duals at zero, their thresholds unweighted. */
static gboolean
starlet_reset (Admm *s, GError **error)
{
  SsCudaContext *ctx = s->base.ctx;
  size_t bytes = (size_t) s->starlet.scales * s->p->n * sizeof (float);
  if (s->starlet.scales == 0)
    return TRUE;
  if (s->starlet.reweight)
    {
      admm_fill_kernel<<<ss_cuda_blocks (ctx, s->starlet.scales * s->p->n), SS_CUDA_THREADS, 0,
                         ctx->stream>>> (s->starlet.reweight, s->starlet.scales * s->p->n, 1.0f);
      if (!LAUNCH_OK ("admm_fill_kernel"))
        return FALSE;
    }
  return (s->starlet.z == NULL || CUDA_OK (cudaMemsetAsync (s->starlet.z, 0, bytes, ctx->stream)))
         && CUDA_OK (cudaMemsetAsync (s->starlet.nu, 0, bytes, ctx->stream));
}

/* Every split, dual and transform input at zero, thresholds unweighted. */
static gboolean
admm_reset (gpointer solver, GError **error)
{
  Admm *s = (Admm *) solver;
  SsCudaContext *ctx = s->base.ctx;
  size_t n = s->p->n;
  s->iteration = 0;
  admm_fill_kernel<<<ss_cuda_blocks (ctx, n), SS_CUDA_THREADS, 0, ctx->stream>>> (
    s->reweight, n, 1.0f);
  return LAUNCH_OK ("admm_fill_kernel")
         && CUDA_OK (cudaMemsetAsync (s->real, 0, 2 * n * sizeof (float), ctx->stream))
         && CUDA_OK (cudaMemsetAsync (s->out, 0, 2 * n * sizeof (float), ctx->stream))
         && CUDA_OK (cudaMemsetAsync (s->mu, 0, n * sizeof (float), ctx->stream))
         && CUDA_OK (cudaMemsetAsync (s->z, 0, 3 * n * sizeof (float), ctx->stream))
         && CUDA_OK (cudaMemsetAsync (s->nu, 0, 3 * n * sizeof (float), ctx->stream))
         && CUDA_OK (cudaMemsetAsync (s->previous, 0, n * sizeof (float), ctx->stream))
         && starlet_reset (s, error);
}

static gboolean
admm_stop (gpointer solver, const SsReport *report, const double *acc)
{
  Admm *s = (Admm *) solver;
  int interval = MIN (report->iteration, MAX (s->params->report_every, 1));
  return report->iteration > interval && report->rel_change > 0
         && report->rel_change < SS_ADMM_CONVERGED_CHANGE * interval;
}

static void
admm_destroy (SsCudaSolver *solver)
{
  Admm *s = (Admm *) solver;
  SsCudaContext *ctx = solver->ctx;
  size_t image = s->p->n * sizeof (float);
  ss_cuda_free (ctx, s->real, 2 * image);
  ss_cuda_free (ctx, s->out, 2 * image);
  ss_cuda_free (ctx, s->spec, 2 * s->p->spec * sizeof (float2));
  ss_cuda_free (ctx, s->denominator, s->p->spec * sizeof (float));
  ss_cuda_free (ctx, s->mu, image);
  ss_cuda_free (ctx, s->z, 3 * image);
  ss_cuda_free (ctx, s->nu, 3 * image);
  ss_cuda_free (ctx, s->weight, image);
  ss_cuda_free (ctx, s->reweight, image);
  ss_cuda_free (ctx, s->previous, image);
  ss_cuda_free (ctx, s->estimate, image);
  float *starlet[] = { s->starlet.z, s->starlet.nu, s->starlet.u, s->starlet.reweight,
                       s->starlet.smooth[0], s->starlet.smooth[1], s->starlet_power };
  for (gsize i = 0; i < G_N_ELEMENTS (starlet); i++)
    ss_cuda_free (ctx, starlet[i], 0);
  g_free (s);
}

/* ---- setup -------------------------------------------------------------------- */

/* ω of the weighted least squares, from the host as the CPU computes it. */
static gboolean
upload_weights (Admm *s, GError **error)
{
  SsCudaContext *ctx = s->base.ctx;
  g_autofree float *weight = g_new (float, s->p->n);
  ss_data_weights_fill (s->p->host, s->params, weight);
  return CUDA_OK (cudaMemcpyAsync (s->weight, weight, s->p->n * sizeof (float),
                                      cudaMemcpyHostToDevice, ctx->stream))
         && CUDA_OK (cudaStreamSynchronize (ctx->stream));
}

/* Positivity's floor, x >= −sky, or RL's measured darkest level where C is a
 * blur (ss-cpu-admm-prior.c says why), with RL's transforms here; OUT, REAL,
 * MU and SPEC are free until the first iteration (cuFFT wants each image
 * aligned, so not OUT's second half). */
static gboolean
positivity_floor (Admm *s, GError **error)
{
  const SsProblem *host = s->p->host;
  double background = host ? MAX (host->background, 0.0) : 0.0;
  s->k.floor = (float) -background;
  if (host == NULL || !s->params->nonneg)
    return TRUE;
  SsSolveParams quick = *s->params;
  quick.rl_stop = SS_RL_STOP_NONE;   /* the floor needs no noise estimate */
  SsRlSetup rl;
  g_autoptr (GError) local = NULL;
  if (ss_cuda_rl_setup (s->base.ctx, s->p, &quick, s->out, s->real, s->mu, s->spec, &rl,
                        &local))
    s->k.floor = (float) (rl.darkest - rl.offset);
  else if (!g_error_matches (local, SS_ERROR, SS_ERROR_INVALID_ARGUMENT))
    {
      g_propagate_error (error, g_steal_pointer (&local));
      return FALSE;
    }
  return TRUE;
}

/* The starlet scales' thresholds λ_j/σ (α on coefficients normalised by the
 * noise each scale carries, as ss-cpu-admm-prior.c's build_splits), their
 * reweighting ε_j from NOISE, and Σ_j |ψ^_j|² for the denominator. */
static gboolean
starlet_setup (Admm *s, double noise, GError **error)
{
  const SsCudaProblem *p = s->p;
  const int scales = s->starlet.scales;
  g_autofree float *power = g_new (float, p->spec);
  double norms[SS_STARLET_SCALES];
  ss_starlet_power_and_norms (p->width, p->height, scales, power, norms);
  float t = (float) (s->params->alpha / s->params->sigma);
  for (int j = 0; j < scales; j++)
    {
      s->starlet.threshold[j] = (float) (t * norms[0] / norms[j]);
      s->starlet.eps[j] = (float) (noise * norms[j]);
    }
  /* On the solver's stream: a plain cudaMemcpy from pageable memory may
   * return before its DMA lands, and the non-blocking stream's kernels then
   * read a half-written denominator (admm starlet diverged when other
   * processes shared the GPU). Pageable: staged before this returns, so
   * POWER may be freed. */
  return CUDA_OK (cudaMemcpyAsync (s->starlet_power, power, p->spec * sizeof (float),
                                   cudaMemcpyHostToDevice, s->base.ctx->stream));
}

static gboolean
admm_setup (Admm *s, GError **error)
{
  SsCudaContext *ctx = s->base.ctx;
  const SsCudaProblem *p = s->p;
  if (!positivity_floor (s, error))
    return FALSE;
  /* ε of the reweighting: the noise each split's coefficients carry (TV's
   * differences √2 σ_noise, starlet scale j ‖ψ_j‖ σ_noise). */
  double noise = 0.0;
  if (s->params->reweight > 0 && p->host)
    ss_problem_noise_and_median (p->host, &noise, NULL);
  s->noise = (float) (noise * G_SQRT2);
  if (s->starlet.scales > 0 && !starlet_setup (s, noise, error))
    return FALSE;
  if (s->k.poisson)
    {
      SsPoissonTerm term;
      if (!ss_poisson_term_init (p->host, &term, error))
        return FALSE;
      s->k.offset = (float) term.offset;
      s->k.level = (float) term.level;
    }
  admm_denominator_kernel<<<ss_cuda_blocks (ctx, p->spec), SS_CUDA_THREADS, 0, ctx->stream>>> (
    s->denominator, p->chat, s->starlet_power, p->width / 2 + 1, p->spec, s->k);
  return LAUNCH_OK ("admm_denominator_kernel")
         && (s->weight == NULL || upload_weights (s, error)) && admm_reset (s, error);
}

static gboolean
check_supported (const SsCudaProblem *p, const SsSolveParams *params, GError **error)
{
  if (params->data_term != SS_DATA_LS && p->host == NULL)
    {
      g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT,
                   "admm's %s data term needs the host problem",
                   params->data_term == SS_DATA_WLS ? "weighted" : "Poisson");
      return FALSE;
    }
  return TRUE;
}

static gboolean
uses_tv (const SsSolveParams *params)
{
  return params->prior == SS_PRIOR_TV || params->prior == SS_PRIOR_TV_STARLET;
}

static int
starlet_scales (const SsSolveParams *params)
{
  return params->prior == SS_PRIOR_STARLET || params->prior == SS_PRIOR_TV_STARLET
         ? SS_STARLET_SCALES : 0;
}

/* At the dual step 1 without reweighting a split keeps b = W x + ν alone:
 * one image a starlet scale instead of two (ν, u), TV's pair b instead of
 * z and ν (ss-cuda-starlet.cu says why). */
static gboolean
splits_merge (const SsSolveParams *params)
{
  return params->tau == 1.0 && params->reweight <= 0;
}

/* The starlet splits' buffers: ν and u (and z and the reweighting), or b,
 * for every scale, two smoothings; Σ|ψ^_j|². */
static size_t
starlet_images (const SsSolveParams *params)
{
  int scales = starlet_scales (params);
  size_t each = splits_merge (params) ? 1 : params->reweight > 0 ? 4 : 2;
  return scales == 0 ? 0 : (size_t) scales * each + 2;
}

static gboolean
starlet_alloc (Admm *s, const char *what, GError **error)
{
  SsCudaContext *ctx = s->base.ctx;
  size_t image = s->p->n * sizeof (float), scales = (size_t) s->starlet.scales;
  if (scales == 0)
    return TRUE;
  gboolean reweighted = s->params->reweight > 0;
  return ss_cuda_alloc (ctx, (void **) &s->starlet.nu, scales * image, what, error)
         && (s->starlet.merged
             || ss_cuda_alloc (ctx, (void **) &s->starlet.u, scales * image, what, error))
         && (!reweighted
             || (ss_cuda_alloc (ctx, (void **) &s->starlet.z, scales * image, what, error)
                 && ss_cuda_alloc (ctx, (void **) &s->starlet.reweight, scales * image, what,
                                   error)))
         && ss_cuda_alloc (ctx, (void **) &s->starlet.smooth[0], image, what, error)
         && ss_cuda_alloc (ctx, (void **) &s->starlet.smooth[1], image, what, error)
         && ss_cuda_alloc (ctx, (void **) &s->starlet_power, s->p->spec * sizeof (float), what,
                           error);
}

SsCudaSolver *
ss_cuda_admm_prior_new (SsCudaContext *ctx, const SsCudaProblem *p, const SsSolveParams *params,
                        SsCudaIterator *it, SsCudaReporter *reporter, GError **error)
{
  if (!check_supported (p, params, error))
    return NULL;
  gboolean weighted = params->data_term == SS_DATA_WLS;
  size_t image = p->n * sizeof (float);
  size_t bytes = (14 + (weighted ? 1 : 0) + starlet_images (params)) * image
                 + 3 * p->spec * sizeof (float2) + (starlet_scales (params) ? p->spec * 4 : 0);
  g_autofree char *what = g_strdup_printf ("a %d×%d admm solve", p->width, p->height);
  if (!ss_cuda_check_solver_room (ctx, p->width, p->height, 2, bytes, what, error))
    return NULL;

  Admm *s = g_new0 (Admm, 1);
  s->base.ctx = ctx;
  s->base.destroy = admm_destroy;
  s->base.bytes = bytes;
  s->p = p;
  s->params = params;
  s->reporter = reporter;
  /* Beside the starlet term TV is weighted SS_ADMM_TV_BESIDE_STARLET α, as on the CPU. */
  float tv_weight = params->prior == SS_PRIOR_TV_STARLET ? SS_ADMM_TV_BESIDE_STARLET : 1.0f;
  s->k = (AdmmConstants) { .rho = (float) params->rho, .sigma = (float) params->sigma,
                           .tau = (float) params->tau,
                           .threshold = (float) (params->alpha / params->sigma) * tv_weight,
                           .floor = 0.0f, .inv_n = (float) (1.0 / (double) p->n),
                           .width = p->width, .height = p->height, .tv = uses_tv (params) != 0,
                           .tv_merged = uses_tv (params) && splits_merge (params),
                           .positive = params->nonneg != FALSE,
                           .poisson = params->data_term == SS_DATA_POISSON, .offset = 0.0f,
                           .level = 0.0f };
  s->starlet.scales = starlet_scales (params);
  s->starlet.merged = splits_merge (params);
  gboolean ok = ss_cuda_plan (ctx, p->width, p->height, 2, CUFFT_R2C, &s->r2c2, error)
                && ss_cuda_plan (ctx, p->width, p->height, 2, CUFFT_C2R, &s->c2r2, error)
                && ss_cuda_alloc (ctx, (void **) &s->real, 2 * image, what, error)
                && ss_cuda_alloc (ctx, (void **) &s->out, 2 * image, what, error)
                && ss_cuda_alloc (ctx, (void **) &s->spec, 2 * p->spec * sizeof (float2), what,
                                  error)
                && ss_cuda_alloc (ctx, (void **) &s->denominator, p->spec * sizeof (float), what,
                                  error)
                && ss_cuda_alloc (ctx, (void **) &s->mu, image, what, error)
                && ss_cuda_alloc (ctx, (void **) &s->z, 3 * image, what, error)
                && ss_cuda_alloc (ctx, (void **) &s->nu, 3 * image, what, error)
                && ss_cuda_alloc (ctx, (void **) &s->reweight, image, what, error)
                && ss_cuda_alloc (ctx, (void **) &s->previous, image, what, error)
                && ss_cuda_alloc (ctx, (void **) &s->estimate, image, what, error)
                && (!weighted || ss_cuda_alloc (ctx, (void **) &s->weight, image, what, error))
                && starlet_alloc (s, what, error) && admm_setup (s, error);
  if (!ok)
    {
      admm_destroy (&s->base);
      return NULL;
    }
  /* The report's C x goes where this iteration's Cx was: the pixel passes
   * have read it, and REAL already holds the next iteration's input. */
  ss_cuda_reporter_borrow (reporter, s->spec, s->out, TRUE);
  ss_cuda_iterator_bind (it, s, admm_iterate, admm_estimate, admm_reset, params->reweight <= 0);
  ss_cuda_iterator_stages (it, admm_stage, admm_stage_names, G_N_ELEMENTS (admm_stage_names));
  it->stop = admm_stop;
  return &s->base;
}

/* Elementwise bytes of one iteration, for the benchmark's floor: the spectral
 * pass reads two spectra, c^ and the denominator and writes two spectra; the
 * pixel pass reads Cx, x (and its two neighbours, from cache), y, μ, the TV
 * pair's and positivity's splits and duals and the reweight, and writes the
 * two inputs' first half, μ, splits and duals; the adjoint pass reads the
 * splits and duals (and their neighbours, from cache) and writes the second
 * input. Without TV there is no adjoint pass: the pixel pass reads
 * positivity's dual and writes it and the second input. The starlet
 * scales' passes come on top (ss-cuda-starlet.cu). */
double
ss_cuda_admm_prior_iteration_bytes (const SsCudaProblem *p, const SsSolveParams *params)
{
  gboolean tv = uses_tv (params);
  double splits = (tv ? 4 : 0) + (params->nonneg ? 2 : 0);
  double spectral = (double) p->spec * (2 * 8 + 8 + 4 + 2 * 8);
  double pixel, adjoint;
  if (tv && splits_merge (params))
    {
      /* Merged TV: Cx, x, y, μ, b read, μ, the first input, b written (and
       * positivity's ν read, ν and z written); the adjoint reads b (and
       * positivity's z and ν) and writes the second input. */
      double positivity = params->nonneg ? 1 : 0;
      pixel = (double) p->n * 4 * (2 + 1 + 1 + 2 + 1 + 1 + 2 + 3 * positivity);
      adjoint = (double) p->n * 4 * (2 + 2 * positivity + 1);
    }
  else if (tv)
    {
      pixel = (double) p->n * 4 * (2 + 1 + 1 + 2 * splits + 1 + 1 + 1);
      adjoint = (double) p->n * 4 * (splits + 1);
    }
  else
    {
      /* Cx, x, y, μ, ν_p read; μ, ν_p and both inputs' halves written. */
      pixel = (double) p->n * 4 * (2 + 1 + 1 + (params->nonneg ? 2 : 0) + 1 + 2);
      adjoint = 0.0;
    }
  pixel += p->mask ? (double) p->n : 0.0;
  return spectral + pixel + adjoint
         + ss_cuda_starlet_iteration_bytes (starlet_scales (params), params->reweight > 0,
                                            splits_merge (params), p->width, p->height);
}
