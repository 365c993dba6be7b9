/* ss-cuda-admm-tv.cu: circulant ADMM with the TV prior and positivity on the
 * GPU: ss-cpu-admm-prior.c's iteration for --prior tv.
 *
 * The CPU transforms every split: [v + μ | z_k − ν_k ...] forward, x^, then
 * [Cx | W_k x ...] back, splits + 1 transform pairs (four with TV and
 * positivity). The x-update's numerator is linear in the splits, so
 *
 *   Σ_k conj(w^_k) F(z_k − ν_k) = F(Σ_k W_kᵀ (z_k − ν_k)),
 *
 * and W_k x follows from x itself. For TV and positivity both are pixel
 * stencils (periodic forward differences, their adjoint the backward ones,
 * and the identity), so an iteration is two transform pairs, as CPADMM's:
 *
 *   real = [v + μ | Σ_k W_kᵀ (z_k − ν_k)]   --R2C (batch 2)-->   [A | B]
 *   x^ = (ρ conj(c^) A + σ B) / (ρ|c^|² + σ Σ_k |w^_k|²);   spec = [c^ x^ | x^] / n
 *   spec  --C2R-->  out = [Cx | x]
 *   pixel 1: the data split (v, μ), the TV pair (grouped shrinkage) and the
 *            positivity split (projection on x >= floor), their duals;
 *   pixel 2: real = [v + μ | Σ_k W_kᵀ (z_k − ν_k)] (it reads neighbours of the
 *            splits pixel 1 wrote, hence a second pass).
 *
 * The same iterates as the CPU's up to rounding (the tests compare them to
 * 1e-4). The starlet priors keep the CPU's form: their filters are not short
 * stencils, and this file says UNSUPPORTED for them, which the backend
 * answers by solving on the CPU.
 *
 * The convergence rule is the CPU's: the change since the previous report
 * point, per iteration, below SS_ADMM_CONVERGED_CHANGE relative (read from each report
 * by the iterator's stop hook). Reweighting (--reweight) updates the TV
 * thresholds at fixed iterations, so with it the iteration is not captured
 * as a graph (each launch is enqueued as it comes).
 */
#include "ss-cuda-internal.h"
#include "ss-cuda-device.cuh"
#include "ss-data-weights.h"
#include "ss-noise.h"
#include "ss-rl.h"

#include <math.h>
#include <string.h>


typedef struct {
  float rho, sigma, tau;
  float threshold;   /* TV's λ/σ */
  float floor;       /* positivity: x >= floor */
  float inv_n;
  int width, height;
  bool positive;     /* the positivity split is on */
} AdmmTvConstants;

typedef struct {
  SsCudaSolver base;
  const SsCudaProblem *p;
  const SsSolveParams *params;
  AdmmTvConstants k;
  cufftHandle r2c2, c2r2;
  float *real;        /* 2n: [v + μ | Σ W_kᵀ(z_k − ν_k)] */
  float2 *spec;       /* 2 half-spectra */
  float *out;         /* 2n: [Cx | x] */
  float *denominator; /* half-spectrum */
  float *mu, *z, *nu; /* n, 3n (zx, zy, zp), 3n */
  float *weight;      /* n: ω (weighted least squares), or NULL: 1 where observed */
  float *reweight;    /* n: TV's per-pixel factor on the threshold */
  float *previous;    /* n: x at the previous report point */
  float *estimate;    /* n: x at report iterations (OUT's second half is not aligned
                         for cuFFT when n is odd, and the report transforms x) */
  float noise;        /* ε of the reweighting */
  int iteration;      /* counted by iterate(), for the reweighting stages */
  SsCudaReporter *reporter;
} AdmmTv;

/* ---- kernels ------------------------------------------------------------------ */

/* ρ|c^|² + σ(|dx^|² + |dy^|² [+ 1]), dx^ = e^{2πi kx/w} − 1 (ss-tv.h). */
__global__ void
admm_tv_denominator_kernel (float *__restrict__ d, const float2 *__restrict__ chat, int sw,
                            size_t count, AdmmTvConstants k)
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
      double v = k.rho * ((double) c.x * c.x + (double) c.y * c.y)
                 + k.sigma * ((double) fx0 * fx0 + (double) fx1 * fx1 + (double) fy0 * fy0
                              + (double) fy1 * fy1 + (k.positive ? 1.0 : 0.0));
      d[i] = (float) fmax (v, 1e-12);
    }
}

__global__ void
admm_tv_spectral_kernel (float2 *__restrict__ s0, float2 *__restrict__ s1,
                         const float2 *__restrict__ chat, const float *__restrict__ d,
                         size_t count, AdmmTvConstants k)
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

/* The splits from Cx and x: data (v, μ), TV (zx, zy, νx, νy), positivity
 * (zp, νp); with WRITE x into ESTIMATE, with DELTA the squared change of x
 * since the previous report. */
template <bool MASK, bool WEIGHTED, bool WRITE, bool DELTA>
__global__ void
admm_tv_pixel_kernel (float *__restrict__ real, const float *__restrict__ out,
                      float *__restrict__ mu, float *__restrict__ z, float *__restrict__ nu,
                      const float *__restrict__ y, const unsigned char *__restrict__ mask,
                      const float *__restrict__ weight, const float *__restrict__ reweight,
                      float *__restrict__ previous, float *__restrict__ estimate,
                      AdmmTvConstants k, double *__restrict__ acc)
{
  const int w = k.width, h = k.height;
  const size_t n = (size_t) w * h;
  const float *cx = out, *x = out + n;
  double delta[1] = { 0.0 };
  for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < n;
       i += (size_t) gridDim.x * blockDim.x)
    {
      int px = (int) (i % w), py = (int) (i / w);
      float om = WEIGHTED ? weight[i] : (!MASK || mask[i]) ? 1.0f : 0.0f;
      float u = cx[i], m = mu[i];
      float v = (om * y[i] + k.rho * (u - m)) / (om + k.rho);
      m += k.tau * (v - u);
      mu[i] = m;
      real[i] = v + m;

      float xi = x[i];
      float ax = x[(size_t) py * w + (px + 1 == w ? 0 : px + 1)] - xi;
      float ay = x[(size_t) (py + 1 == h ? 0 : py + 1) * w + px] - xi;
      float gx = ax + nu[i], gy = ay + nu[n + i];
      float t = k.threshold * reweight[i];
      float norm = sqrtf (gx * gx + gy * gy);
      float scale = norm > t ? 1.0f - t / norm : 0.0f;
      gx *= scale;
      gy *= scale;
      nu[i] += k.tau * (ax - gx);
      nu[n + i] += k.tau * (ay - gy);
      z[i] = gx;
      z[n + i] = gy;
      if (k.positive)
        {
          float zp = fmaxf (xi + nu[2 * n + i], k.floor);
          nu[2 * n + i] += k.tau * (xi - zp);
          z[2 * n + i] = zp;
        }
      if (WRITE)
        estimate[i] = xi;
      if (DELTA)
        {
          float d = xi - previous[i];
          delta[0] += (double) d * d;
          previous[i] = xi;
        }
    }
  if (DELTA)
    ss_block_sum_to<1> (delta, acc + SS_ACC_DELTA);
}

/* real[n + i] = Σ_k W_kᵀ (z_k − ν_k): backward differences of the TV pair,
 * plus the positivity split. */
__global__ void
admm_tv_adjoint_kernel (float *__restrict__ real, const float *__restrict__ z,
                        const float *__restrict__ nu, AdmmTvConstants k)
{
  const int w = k.width, h = k.height;
  const size_t n = (size_t) w * h;
  for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < n;
       i += (size_t) gridDim.x * blockDim.x)
    {
      int px = (int) (i % w), py = (int) (i / w);
      size_t left = (size_t) py * w + (px == 0 ? w - 1 : px - 1);
      size_t up = (size_t) (py == 0 ? h - 1 : py - 1) * w + px;
      float b = (z[left] - nu[left]) - (z[i] - nu[i])
                + (z[n + up] - nu[n + up]) - (z[n + i] - nu[n + i]);
      if (k.positive)
        b += z[2 * n + i] - nu[2 * n + i];
      real[n + i] = b;
    }
}

/* ε/(ε + |(zx, zy)|): ss-cpu-admm-prior.c's update_reweights for TV. */
__global__ void
admm_tv_reweight_kernel (float *__restrict__ reweight, const float *__restrict__ z, size_t n,
                         float eps)
{
  for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < n;
       i += (size_t) gridDim.x * blockDim.x)
    reweight[i] = eps / (eps + hypotf (z[i], z[n + i]));
}

__global__ void
admm_tv_fill_kernel (float *__restrict__ x, size_t n, float value)
{
  for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < n;
       i += (size_t) gridDim.x * blockDim.x)
    x[i] = value;
}

/* ---- launches ----------------------------------------------------------------- */

template <bool MASK, bool WEIGHTED, bool WRITE, bool DELTA>
static void
launch_pixel (AdmmTv *s, unsigned blocks)
{
  const SsCudaProblem *p = s->p;
  admm_tv_pixel_kernel<MASK, WEIGHTED, WRITE, DELTA>
    <<<blocks, SS_CUDA_THREADS, 0, s->base.ctx->stream>>> (
      s->real, s->out, s->mu, s->z, s->nu, p->y, p->mask, s->weight, s->reweight, s->previous,
      s->estimate, s->k, s->reporter->block);
}

template <bool MASK, bool WEIGHTED>
static void
launch_pixel_flags (AdmmTv *s, unsigned flags, unsigned blocks)
{
  if (flags & SS_ITER_DELTA)
    launch_pixel<MASK, WEIGHTED, true, true> (s, blocks);
  else if (flags & SS_ITER_WRITE_ESTIMATE)
    launch_pixel<MASK, WEIGHTED, true, false> (s, blocks);
  else
    launch_pixel<MASK, WEIGHTED, false, false> (s, blocks);
}

static gboolean
admm_tv_pixels (AdmmTv *s, unsigned flags, GError **error)
{
  SsCudaContext *ctx = s->base.ctx;
  unsigned blocks = ss_cuda_blocks (ctx, s->p->n);
  if (s->weight)
    launch_pixel_flags<false, true> (s, flags, blocks);
  else if (s->p->mask)
    launch_pixel_flags<true, false> (s, flags, blocks);
  else
    launch_pixel_flags<false, false> (s, flags, blocks);
  if (!LAUNCH_OK ("admm_tv_pixel_kernel"))
    return FALSE;
  admm_tv_adjoint_kernel<<<blocks, SS_CUDA_THREADS, 0, ctx->stream>>> (s->real, s->z, s->nu,
                                                                        s->k);
  return LAUNCH_OK ("admm_tv_adjoint_kernel");
}

/* The reweighting stages split the run evenly, as on the CPU. */
static gboolean
admm_tv_maybe_reweight (AdmmTv *s, GError **error)
{
  int stages = s->params->reweight, length = s->params->iterations / (stages + 1);
  if (stages <= 0 || length <= 0 || s->iteration % length != 0 || s->iteration / length > stages
      || !(s->noise > 0))
    return TRUE;
  SsCudaContext *ctx = s->base.ctx;
  admm_tv_reweight_kernel<<<ss_cuda_blocks (ctx, s->p->n), SS_CUDA_THREADS, 0, ctx->stream>>> (
    s->reweight, s->z, s->p->n, s->noise);
  return LAUNCH_OK ("admm_tv_reweight_kernel");
}

static const char *const admm_tv_stage_names[] = {
  "R2C batch 2", "spectral", "C2R batch 2", "pixel kernels (splits, then the adjoint)",
};

static gboolean
admm_tv_stage (gpointer solver, int stage, unsigned flags, GError **error)
{
  AdmmTv *s = (AdmmTv *) solver;
  SsCudaContext *ctx = s->base.ctx;
  const SsCudaProblem *p = s->p;
  switch (stage)
    {
    case 0: return CUFFT_OK (cufftExecR2C (s->r2c2, s->real, (cufftComplex *) s->spec));
    case 1:
      admm_tv_spectral_kernel<<<ss_cuda_blocks (ctx, p->spec), SS_CUDA_THREADS, 0,
                                ctx->stream>>> (s->spec, s->spec + p->spec, p->chat,
                                                s->denominator, p->spec, s->k);
      return LAUNCH_OK ("admm_tv_spectral_kernel");
    case 2: return CUFFT_OK (cufftExecC2R (s->c2r2, (cufftComplex *) s->spec, s->out));
    default: return admm_tv_pixels (s, flags, error);
    }
}

static gboolean
admm_tv_iterate (gpointer solver, unsigned flags, GError **error)
{
  AdmmTv *s = (AdmmTv *) solver;
  for (int stage = 0; stage < (int) G_N_ELEMENTS (admm_tv_stage_names); stage++)
    if (!admm_tv_stage (solver, stage, flags, error))
      return FALSE;
  s->iteration++;
  return admm_tv_maybe_reweight (s, error);
}

static const float *
admm_tv_estimate (gpointer solver)
{
  return ((AdmmTv *) solver)->estimate;
}

/* Every split, dual and transform input at zero, thresholds unweighted. */
static gboolean
admm_tv_reset (gpointer solver, GError **error)
{
  AdmmTv *s = (AdmmTv *) solver;
  SsCudaContext *ctx = s->base.ctx;
  size_t n = s->p->n;
  s->iteration = 0;
  admm_tv_fill_kernel<<<ss_cuda_blocks (ctx, n), SS_CUDA_THREADS, 0, ctx->stream>>> (
    s->reweight, n, 1.0f);
  return LAUNCH_OK ("admm_tv_fill_kernel")
         && CUDA_OK (cudaMemsetAsync (s->real, 0, 2 * n * sizeof (float), ctx->stream))
         && CUDA_OK (cudaMemsetAsync (s->out, 0, 2 * n * sizeof (float), ctx->stream))
         && CUDA_OK (cudaMemsetAsync (s->mu, 0, n * sizeof (float), ctx->stream))
         && CUDA_OK (cudaMemsetAsync (s->z, 0, 3 * n * sizeof (float), ctx->stream))
         && CUDA_OK (cudaMemsetAsync (s->nu, 0, 3 * n * sizeof (float), ctx->stream))
         && CUDA_OK (cudaMemsetAsync (s->previous, 0, n * sizeof (float), ctx->stream));
}

static gboolean
admm_tv_stop (gpointer solver, const SsReport *report)
{
  AdmmTv *s = (AdmmTv *) solver;
  int interval = MIN (report->iteration, MAX (s->params->report_every, 1));
  return report->iteration > interval && report->rel_change > 0
         && report->rel_change < SS_ADMM_CONVERGED_CHANGE * interval;
}

static void
admm_tv_destroy (SsCudaSolver *solver)
{
  AdmmTv *s = (AdmmTv *) solver;
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
  g_free (s);
}

/* ---- setup -------------------------------------------------------------------- */

/* ω of the weighted least squares, from the host as the CPU computes it. */
static gboolean
upload_weights (AdmmTv *s, GError **error)
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
positivity_floor (AdmmTv *s, GError **error)
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
    s->k.floor = (float) (rl.background - rl.offset);
  else if (!g_error_matches (local, SS_ERROR, SS_ERROR_INVALID_ARGUMENT))
    {
      g_propagate_error (error, g_steal_pointer (&local));
      return FALSE;
    }
  return TRUE;
}

static gboolean
admm_tv_setup (AdmmTv *s, GError **error)
{
  SsCudaContext *ctx = s->base.ctx;
  const SsCudaProblem *p = s->p;
  if (!positivity_floor (s, error))
    return FALSE;
  /* ε of the reweighting: the noise TV's differences carry (√2 σ_noise). */
  if (s->params->reweight > 0 && p->host)
    s->noise = (float) (ss_noise_estimate (p->host->y, p->width, p->height) * G_SQRT2);
  admm_tv_denominator_kernel<<<ss_cuda_blocks (ctx, p->spec), SS_CUDA_THREADS, 0,
                               ctx->stream>>> (s->denominator, p->chat, p->width / 2 + 1,
                                               p->spec, s->k);
  return LAUNCH_OK ("admm_tv_denominator_kernel")
         && (s->weight == NULL || upload_weights (s, error)) && admm_tv_reset (s, error);
}

static gboolean
check_supported (const SsCudaProblem *p, const SsSolveParams *params, GError **error)
{
  if (params->prior != SS_PRIOR_TV)
    {
      g_set_error (error, SS_ERROR, SS_ERROR_UNSUPPORTED,
                   "admm's %s prior has no CUDA implementation (tv has)",
                   params->prior == SS_PRIOR_STARLET ? "starlet" : "tv+starlet");
      return FALSE;
    }
  if (params->data_term == SS_DATA_WLS && p->host == NULL)
    {
      g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT,
                   "admm's weighted data term needs the host problem");
      return FALSE;
    }
  return TRUE;
}

SsCudaSolver *
ss_cuda_admm_tv_new (SsCudaContext *ctx, const SsCudaProblem *p, const SsSolveParams *params,
                     SsCudaIterator *it, SsCudaReporter *reporter, GError **error)
{
  if (!check_supported (p, params, error))
    return NULL;
  gboolean weighted = params->data_term == SS_DATA_WLS;
  size_t image = p->n * sizeof (float);
  size_t bytes = (14 + (weighted ? 1 : 0)) * image + 3 * p->spec * sizeof (float2);
  size_t work = MAX (ss_cuda_plan_work_estimate (p->width, p->height, 2, CUFFT_R2C),
                     ss_cuda_plan_work_estimate (p->width, p->height, 2, CUFFT_C2R));
  g_autofree char *what = g_strdup_printf ("a %d×%d admm solve", p->width, p->height);
  if (!ss_cuda_check_free (ctx, bytes + work, what, error))
    return NULL;

  AdmmTv *s = g_new0 (AdmmTv, 1);
  s->base.ctx = ctx;
  s->base.destroy = admm_tv_destroy;
  s->base.bytes = bytes;
  s->p = p;
  s->params = params;
  s->reporter = reporter;
  s->k = (AdmmTvConstants) { .rho = (float) params->rho, .sigma = (float) params->sigma,
                             .tau = (float) params->tau,
                             .threshold = (float) (params->alpha / params->sigma), .floor = 0.0f,
                             .inv_n = (float) (1.0 / (double) p->n), .width = p->width,
                             .height = p->height, .positive = params->nonneg != FALSE };
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
                && admm_tv_setup (s, error);
  if (!ok)
    {
      admm_tv_destroy (&s->base);
      return NULL;
    }
  /* The report's C x goes where this iteration's Cx was: the pixel passes
   * have read it, and REAL already holds the next iteration's input. */
  reporter->spec = s->spec;
  reporter->real = s->out;
  reporter->has_delta = TRUE;
  it->solver = s;
  it->iterate = admm_tv_iterate;
  it->stage = admm_tv_stage;
  it->stage_count = G_N_ELEMENTS (admm_tv_stage_names);
  it->stage_names = admm_tv_stage_names;
  it->estimate = admm_tv_estimate;
  it->reset = admm_tv_reset;
  it->capturable = params->reweight <= 0;
  it->stop = admm_tv_stop;
  return &s->base;
}

/* Elementwise bytes of one iteration, for the benchmark's floor: the spectral
 * pass reads two spectra, c^ and the denominator and writes two spectra; the
 * pixel pass reads Cx, x (and its two neighbours, from cache), y, μ, the three
 * splits and duals and the reweight, and writes the two inputs' first half,
 * μ, splits and duals; the adjoint pass reads the splits and duals (and their
 * neighbours, from cache) and writes the second input. */
double
ss_cuda_admm_tv_iteration_bytes (const SsCudaProblem *p)
{
  double spectral = (double) p->spec * (2 * 8 + 8 + 4 + 2 * 8);
  double pixel = (double) p->n * 4 * (2 + 1 + 1 + 6 + 1 + 1 + 1 + 6)
                 + (p->mask ? (double) p->n : 0.0);
  double adjoint = (double) p->n * 4 * (6 + 1);
  return spectral + pixel + adjoint;
}
