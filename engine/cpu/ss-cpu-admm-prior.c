/* ss-cpu-admm-prior.c: circulant ADMM with analysis priors (TV, starlet ℓ1),
 * positivity as a split and a noise-weighted data term (DESIGN.md, "Analysis
 * priors in the same frame").
 *
 *   min_x  1/2 Σ ω_i (PCx − y)_i² + Σ_k λ_k ‖W_k x‖₁ (TV: grouped)  + ι(x >= 0)
 *
 * Every W_k is circulant (periodic differences, starlet scales, the identity
 * for positivity), so with splits v = Cx and z_k = W_k x the x-update is
 * diagonal in Fourier space:
 *
 *   x^ = (ρ conj(c^) F(v + μ) + σ Σ_k conj(w^_k) F(z_k − ν_k)) / (ρ|c^|² + σ Σ_k |w^_k|²)
 *
 * TV's differences and positivity's identity are stencils: their W_kᵀ(z_k − ν_k)
 * are summed in pixel space into one image s, whose transform stands for all
 * of theirs (σ F(s) = σ Σ conj(w^_k) F(z_k − ν_k)), and their W_k x are taken
 * from x. The starlet scales keep their Fourier filters. So one batched
 * forward FFT of [v + μ | s | z_j − ν_j (starlet) ...], one spectral pass, one
 * batched inverse FFT giving [Cx | x | W_j x ...], then the pixel passes for
 * the proxes (weighted least squares, soft thresholds, grouped shrinkage,
 * projection), the duals and s: TV + positivity transform 2 images a step
 * instead of 4, TV + starlet + positivity 6 instead of 8.
 *
 * ω are the data term's weights (ss-data-weights.h). The GPU runs every
 * prior in two transform pairs, the starlet scales too as à trous stencils
 * (ss-cuda-admm-prior.cu); on the CPU their Fourier filters cost less.
 */
#include "ss-cpu-private.h"
#include "ss-data-weights.h"
#include "ss-error.h"
#include "ss-noise.h"
#include "ss-rl.h"
#include "ss-scaling.h"
#include "ss-starlet.h"
#include "ss-tv.h"

#include <math.h>
#include <string.h>

typedef enum {
  SPLIT_SOFT,       /* λ‖W x‖₁: soft threshold */
  SPLIT_TV_X,       /* with the next split (TV_Y): grouped shrinkage */
  SPLIT_TV_Y,
  SPLIT_POSITIVE,   /* ι(x >= 0): projection */
} SplitKind;

#define MAX_SPLITS (2 + SS_STARLET_SCALES + 1)


typedef struct {
  gsize n, count;         /* pixels, half-spectrum entries */
  int splits;
  SplitKind kind[MAX_SPLITS];
  float threshold[MAX_SPLITS];  /* λ_k / σ */
  float scale[MAX_SPLITS];      /* the noise each split's coefficients carry (reweighting) */
  float *reweight;        /* splits × n per-coefficient factors on the thresholds, 1 at start */
  float *filters;         /* splits half-spectra (complex) */
  float *denominator;     /* ρ|c^|² + σ Σ |w^_k|², count floats */
  float *weight;          /* ω, n floats */
  /* Which splits are stencils (TV, positivity: W_k x from x, W_kᵀ into s)
   * and which are filtered in Fourier space (the starlet scales), and each
   * filtered split's image in the batch. */
  gboolean stencil[MAX_SPLITS];
  int image[MAX_SPLITS];
  int images;             /* the batch: [v + μ | s (when any stencil) | filtered ...] */
  gboolean any_stencil;
  float *in, *spectrum, *out;   /* IMAGES images / half-spectra */
  float *z, *nu, *mu;
  float *x, *x_previous;  /* the estimate at report points */
  float *cx_projected;    /* C x of the estimate handed out, when positivity projects it */
  float floor;            /* positivity: x >= floor = −sky, i.e. the data as measured >= 0 */
  gboolean poisson;       /* the data term is the Poisson likelihood (ss-data-weights.h) */
  SsPoissonTerm term;
} PriorState;

/* Adds a split with the complex filter SPEC (or a real one, REAL, or the
 * identity when both are NULL). */
static void
add_split (PriorState *s, SplitKind kind, float threshold, float noise, const float *spec,
           const float *real)
{
  int k = s->splits++;
  s->kind[k] = kind;
  /* Differences and the identity are stencils; the starlet scales filters. */
  s->stencil[k] = kind != SPLIT_SOFT;
  s->threshold[k] = threshold;
  s->scale[k] = noise;
  float *f = s->filters + (gsize) k * 2 * s->count;
  for (gsize i = 0; i < s->count; i++)
    {
      f[2 * i] = spec ? spec[2 * i] : real ? real[i] : 1.0f;
      f[2 * i + 1] = spec ? spec[2 * i + 1] : 0.0f;
    }
}

/* The splits of PARAMS's prior, thresholds λ_k/σ: TV weight α (half of it
 * beside starlet); starlet
 * scale j weight α‖ψ_1‖/‖ψ_j‖, i.e. α on the coefficients normalised by the
 * noise each scale carries, so the coarse scales, where the blur leaves the
 * signal and the noise is small, are held hardest. Measured on quality's
 * small cases (ρ = σ = 0.03, ls, best α each): weights ∝ ‖ψ_j‖ gave
 * 30.30 / 49.52 / 33.13 dB (HDF / stars / Sun), flat 30.25 / 50.19 / 33.12,
 * ∝ 1/‖ψ_j‖ 29.31 / 53.06 / 33.08. */
static void
build_splits (PriorState *s, const SsOperator *op, const SsSolveParams *p, double noise)
{
  float t = (float) (p->alpha / p->sigma);
  /* Beside the starlet term, TV is weighted SS_ADMM_TV_BESIDE_STARLET α. */
  float ttv = p->prior == SS_PRIOR_TV_STARLET ? t * SS_ADMM_TV_BESIDE_STARLET : t;
  gboolean tv = p->prior == SS_PRIOR_TV || p->prior == SS_PRIOR_TV_STARLET;
  gboolean starlet = p->prior == SS_PRIOR_STARLET || p->prior == SS_PRIOR_TV_STARLET;
  if (tv)
    {
      g_autofree float *d = ss_tv_spectra (op->width, op->height);
      add_split (s, SPLIT_TV_X, ttv, (float) (noise * G_SQRT2), d, NULL);
      add_split (s, SPLIT_TV_Y, ttv, (float) (noise * G_SQRT2), d + 2 * s->count, NULL);
    }
  if (starlet)
    {
      g_autofree float *w = ss_starlet_spectra (op->width, op->height, SS_STARLET_SCALES);
      double norms[SS_STARLET_SCALES];
      ss_starlet_noise_norms (w, op->width, op->height, SS_STARLET_SCALES, norms);
      for (int j = 0; j < SS_STARLET_SCALES; j++)
        add_split (s, SPLIT_SOFT, (float) (t * norms[0] / norms[j]), (float) (noise * norms[j]),
                   NULL, w + (gsize) j * s->count);
    }
  if (p->nonneg)
    add_split (s, SPLIT_POSITIVE, 0, 0, NULL, NULL);
}

/* The batch's layout: v + μ first, then s when a split is a stencil, then
 * one image for each filtered split. */
static void
assign_images (PriorState *s)
{
  s->any_stencil = FALSE;
  for (int k = 0; k < s->splits; k++)
    s->any_stencil |= s->stencil[k];
  s->images = s->any_stencil ? 2 : 1;
  for (int k = 0; k < s->splits; k++)
    s->image[k] = s->stencil[k] ? -1 : s->images++;
}

static void
fill_denominator (PriorState *s, const float *chat, float rho, float sigma)
{
  for (gsize i = 0; i < s->count; i++)
    {
      double d = rho * ((double) chat[2 * i] * chat[2 * i] + (double) chat[2 * i + 1] * chat[2 * i + 1]);
      for (int k = 0; k < s->splits; k++)
        {
          const float *f = s->filters + (gsize) k * 2 * s->count + 2 * i;
          d += sigma * ((double) f[0] * f[0] + (double) f[1] * f[1]);
        }
      /* Only the zero frequency of a prior-only problem can vanish; keep it finite. */
      s->denominator[i] = (float) MAX (d, 1e-12);
    }
}

static gboolean
state_alloc (PriorState *s, const SsProblem *problem, const SsSolveParams *p, SsMemCounter *mem,
             GError **error)
{
  const SsOperator *op = problem->op;
  s->n = (gsize) op->width * op->height;
  s->count = (gsize) op->height * op->spec_width;
  gsize real = s->n * sizeof (float), spec = 2 * s->count * sizeof (float);
  if (!((s->filters = ss_mem_alloc (mem, MAX_SPLITS * spec, error))
        && (s->denominator = ss_mem_alloc (mem, spec / 2, error))
        && (s->weight = ss_mem_alloc (mem, real, error))
        && (s->mu = ss_mem_alloc (mem, real, error))
        && (s->x = ss_mem_alloc (mem, real, error))
        && (s->x_previous = ss_mem_alloc (mem, real, error))
        && (!p->nonneg || (s->cx_projected = ss_mem_alloc (mem, real, error)))))
    return FALSE;
  /* The engine's x has the sky subtracted: a frame the Sun fills has a median
   * far above its dark parts, so x >= 0 would clip them. */
  s->floor = (float) -MAX (problem->background, 0.0);
  /* Where C is a blur, RL's measured darkest level β is a tighter floor
   * (ss-rl.h): x + b >= β. A sensing operator keeps the loose one. */
  SsRlSetup rl;
  SsSolveParams quick = *p;
  quick.rl_stop = SS_RL_STOP_NONE;   /* the floor needs no noise estimate */
  if (ss_rl_setup (problem, &quick, &rl, NULL))
    s->floor = (float) (rl.darkest - rl.offset);
  /* The noise sets only the reweighting's ε (below). */
  double noise = 0.0;
  if (p->reweight > 0)
    ss_problem_noise_and_median (problem, &noise, NULL);
  build_splits (s, op, p, noise);
  assign_images (s);
  /* The splits and the batch as this prior has them (TV with positivity:
   * 3 splits and 2 images, not 7 and 8). */
  gsize splits = (gsize) s->splits, images = (gsize) s->images;
  if (!((s->in = ss_mem_alloc (mem, images * real, error))
        && (s->spectrum = ss_mem_alloc (mem, images * spec, error))
        && (s->out = ss_mem_alloc (mem, images * real, error))
        && (s->z = ss_mem_alloc (mem, splits * real, error))
        && (s->nu = ss_mem_alloc (mem, splits * real, error))
        && (s->reweight = ss_mem_alloc (mem, splits * real, error))))
    return FALSE;
  for (gsize i = 0; i < splits * s->n; i++)
    s->reweight[i] = 1.0f;
  fill_denominator (s, op->chat, (float) p->rho, (float) p->sigma);
  ss_data_weights_fill (problem, p, s->weight);
  s->poisson = p->data_term == SS_DATA_POISSON;
  if (s->poisson && !ss_poisson_term_init (problem, &s->term, error))
    return FALSE;
  /* Every split and dual starts at zero, and so does every FFT input. */
  memset (s->in, 0, (gsize) s->images * real);
  memset (s->z, 0, (gsize) s->splits * real);
  memset (s->nu, 0, (gsize) s->splits * real);
  memset (s->mu, 0, real);
  memset (s->x_previous, 0, real);
  return TRUE;
}

static void
state_free (PriorState *s, SsMemCounter *mem)
{
  float *buffers[] = { s->filters, s->denominator, s->weight, s->in, s->spectrum, s->out,
                       s->z, s->nu, s->mu, s->x, s->x_previous, s->cx_projected,
                       s->reweight };
  for (guint i = 0; i < G_N_ELEMENTS (buffers); i++)
    ss_mem_free (mem, buffers[i], 0);
}

/* x^ from the batch's spectra, then [c^ x^ | x^ | w^_j x^ (filtered) ...] in
 * place (scaled by 1/n for FFTW's unnormalised inverse). When KEEP is not
 * NULL, x^/n goes there. */
static void
spectral_pass (PriorState *s, const float *chat, float rho, float sigma, float *keep)
{
  const float inv_n = 1.0f / (float) s->n;
  const int splits = s->splits;
  const gsize count = s->count;
  float *stencils = s->any_stencil ? s->spectrum + 2 * count : NULL;
#pragma omp parallel for schedule(static) if (count > SS_PARALLEL_MIN)
  for (gsize i = 0; i < count; i++)
    {
      float cr = chat[2 * i], ci = chat[2 * i + 1];
      float *b = s->spectrum + 2 * i;
      /* conj(c) b = (cr br + ci bi) + i (cr bi − ci br) */
      float nr = rho * (cr * b[0] + ci * b[1]), ni = rho * (cr * b[1] - ci * b[0]);
      if (stencils)
        {
          /* s already holds Σ W_kᵀ (z_k − ν_k) of the stencils. */
          nr += sigma * stencils[2 * i];
          ni += sigma * stencils[2 * i + 1];
        }
      for (int k = 0; k < splits; k++)
        {
          if (s->stencil[k])
            continue;
          const float *f = s->filters + (gsize) k * 2 * count + 2 * i;
          const float *a = s->spectrum + (gsize) s->image[k] * 2 * count + 2 * i;
          nr += sigma * (f[0] * a[0] + f[1] * a[1]);
          ni += sigma * (f[0] * a[1] - f[1] * a[0]);
        }
      float scale = inv_n / s->denominator[i];
      float xr = nr * scale, xi = ni * scale;
      if (keep)
        {
          keep[2 * i] = xr;
          keep[2 * i + 1] = xi;
        }
      b[0] = cr * xr - ci * xi;
      b[1] = cr * xi + ci * xr;
      if (stencils)
        {
          stencils[2 * i] = xr;
          stencils[2 * i + 1] = xi;
        }
      for (int k = 0; k < splits; k++)
        {
          if (s->stencil[k])
            continue;
          const float *f = s->filters + (gsize) k * 2 * count + 2 * i;
          float *a = s->spectrum + (gsize) s->image[k] * 2 * count + 2 * i;
          a[0] = f[0] * xr - f[1] * xi;
          a[1] = f[0] * xi + f[1] * xr;
        }
    }
}

/* The data split: v = argmin ω/2 (v − y)² + ρ/2 (v − (u − μ))² (or the
 * Poisson likelihood's prox on observed pixels), then μ and the next FFT
 * input v + μ. */
static void
data_pass (PriorState *s, const float *y, float rho, float tau)
{
  const float *u = s->out;
  const gboolean poisson = s->poisson;
  const float offset = (float) s->term.offset, level = (float) s->term.level;
#pragma omp parallel for simd schedule(static) if (s->n > SS_PARALLEL_MIN)
  for (gsize i = 0; i < s->n; i++)
    {
      float a = u[i] - s->mu[i];
      float v = !poisson ? (s->weight[i] * y[i] + rho * a) / (s->weight[i] + rho)
                : s->weight[i] > 0 ? ss_poisson_prox (a, y[i], rho, offset, level) : a;
      float mu = s->mu[i] + tau * (v - u[i]);
      s->mu[i] = mu;
      s->in[i] = v + mu;
    }
}

/* A filtered split (a starlet scale): z = S(W x + ν), ν += τ(W x − z), and
 * the next FFT input z − ν. */
static void
filtered_split_pass (PriorState *s, int k, float tau)
{
  const gsize n = s->n;
  const float *a = s->out + (gsize) s->image[k] * n;
  float *z = s->z + (gsize) k * n, *nu = s->nu + (gsize) k * n;
  float *next = s->in + (gsize) s->image[k] * n;
  const float *r = s->reweight + (gsize) k * n;
  const float t = s->threshold[k];
#pragma omp parallel for simd schedule(static) if (n > SS_PARALLEL_MIN)
  for (gsize i = 0; i < n; i++)
    {
      float b = a[i] + nu[i];
      float zi = ss_soft_threshold (b, t * r[i], FALSE);
      nu[i] += tau * (a[i] - zi);
      z[i] = zi;
      next[i] = zi - nu[i];
    }
}

/* TV's pair (split K and K + 1): the periodic forward differences of X
 * (ss_tv_spectra's), their grouped shrinkage into z and the duals. */
static void
tv_split_pass (PriorState *s, int k, const float *x, int w, int h, float tau)
{
  const gsize n = s->n;
  float *zx = s->z + (gsize) k * n, *zy = zx + n, *nux = s->nu + (gsize) k * n, *nuy = nux + n;
  const float *r = s->reweight + (gsize) k * n;
  const float t = s->threshold[k];
#pragma omp parallel for schedule(static) if (n > SS_PARALLEL_MIN)
  for (int py = 0; py < h; py++)
    {
      const float *row = x + (gsize) py * w, *below = x + (gsize) (py + 1 == h ? 0 : py + 1) * w;
      for (int px = 0; px < w; px++)
        {
          gsize i = (gsize) py * w + px;
          float ax = row[px + 1 == w ? 0 : px + 1] - row[px], ay = below[px] - row[px];
          float gx = ax + nux[i], gy = ay + nuy[i];
          ss_tv_shrink_pair (&gx, &gy, t * r[i]);
          nux[i] += tau * (ax - gx);
          nuy[i] += tau * (ay - gy);
          zx[i] = gx;
          zy[i] = gy;
        }
    }
}

/* s = Σ W_kᵀ (z_k − ν_k) of the stencils, the next FFT input beside v + μ:
 * TV's backward differences (the forward ones' adjoint), and positivity's
 * split (z = max(x + ν, floor), ν += τ(x − z)) updated on the way. */
static void
stencil_sum_pass (PriorState *s, int tv, int positive, const float *x, int w, int h, float tau)
{
  const gsize n = s->n;
  float *sum = s->in + n;
  const float *zx = tv >= 0 ? s->z + (gsize) tv * n : NULL;
  const float *nux = tv >= 0 ? s->nu + (gsize) tv * n : NULL;
  float *zp = positive >= 0 ? s->z + (gsize) positive * n : NULL;
  float *nup = positive >= 0 ? s->nu + (gsize) positive * n : NULL;
  const float floor = s->floor;
#pragma omp parallel for schedule(static) if (n > SS_PARALLEL_MIN)
  for (int py = 0; py < h; py++)
    for (int px = 0; px < w; px++)
      {
        gsize i = (gsize) py * w + px;
        float b = 0.0f;
        if (zx)
          {
            gsize left = (gsize) py * w + (px == 0 ? w - 1 : px - 1);
            gsize up = (gsize) (py == 0 ? h - 1 : py - 1) * w + px;
            b = (zx[left] - nux[left]) - (zx[i] - nux[i]) + (zx[n + up] - nux[n + up])
                - (zx[n + i] - nux[n + i]);
          }
        if (zp)
          {
            float zi = fmaxf (x[i] + nup[i], floor);
            nup[i] += tau * (x[i] - zi);
            zp[i] = zi;
            b += zi - nup[i];
          }
        sum[i] = b;
      }
}

/* The prior splits from this step's x (the batch's second output) and W_j x
 * (its filtered outputs), and the next FFT inputs. */
static void
prior_pass (PriorState *s, int w, int h, float tau)
{
  int tv = -1, positive = -1;
  for (int k = 0; k < s->splits; k++)
    if (s->kind[k] == SPLIT_TV_X)
      tv = k;
    else if (s->kind[k] == SPLIT_POSITIVE)
      positive = k;
    else if (!s->stencil[k])
      filtered_split_pass (s, k, tau);
  if (!s->any_stencil)
    return;
  const float *x = s->out + s->n;
  if (tv >= 0)
    tv_split_pass (s, tv, x, w, h, tau);
  stencil_sum_pass (s, tv, positive, x, w, h, tau);
}

/* Reweighted ℓ1 (Candès, Wakin & Boyd): each coefficient's threshold is
 * scaled by ε/(ε + |z|), with ε the noise the split's coefficients carry, so
 * coefficients well above the noise (bright sources) are barely shrunk while
 * the noise still is: the textbook ℓ1's loss on bright, resolved sources. */
static void
update_reweights (PriorState *s)
{
  const gsize n = s->n;
  for (int k = 0; k < s->splits; k++)
    {
      if (s->kind[k] == SPLIT_POSITIVE || s->kind[k] == SPLIT_TV_Y || !(s->scale[k] > 0))
        continue;
      const float eps = s->scale[k];
      const float *z = s->z + (gsize) k * n;
      float *r = s->reweight + (gsize) k * n;
      const gboolean grouped = s->kind[k] == SPLIT_TV_X;
      for (gsize i = 0; i < n; i++)
        {
          float size = grouped ? hypotf (z[i], z[i + n]) : fabsf (z[i]);
          r[i] = eps / (eps + size);
        }
    }
}

/* x from the kept x^/n, the relative change since the last report point, and
 * the report (Cx is the batch's first output, the same x). *CONVERGED when
 * the change per iteration fell below SS_ADMM_CONVERGED_CHANGE. */
static gboolean
report_point (SsCpuReporter *reporter, PriorState *s, const SsFft *fft1, float *kept,
              int iteration, gboolean *converged, GError **error)
{
  ss_fft_inverse (fft1, kept, s->x);
  /* ADMM's x meets x >= floor only in the limit (the positivity split's z
   * meets it at every step): the estimate handed out is x projected on it,
   * so that no reported image breaks the constraint the user asked for, and
   * the report measures that estimate (its own C x, as the GPU's report
   * does), not the iteration's x. KEPT, consumed by the inverse, is scratch. */
  const float *cx = s->out;
  if (reporter->params->nonneg)
    {
      for (gsize i = 0; i < s->n; i++)
        s->x[i] = fmaxf (s->x[i], s->floor);
      ss_cpu_circulant (fft1, reporter->problem->op, s->x, s->cx_projected, kept,
                        s->cx_projected, FALSE);
      cx = s->cx_projected;
    }
  double change2 = 0, norm2 = 0;
  for (gsize i = 0; i < s->n; i++)
    {
      double d = s->x[i] - s->x_previous[i];
      change2 += d * d;
      norm2 += (double) s->x[i] * s->x[i];
    }
  memcpy (s->x_previous, s->x, s->n * sizeof (float));
  int interval = MIN (iteration, reporter->params->report_every);
  *converged = iteration > interval && norm2 > 0
               && sqrt (change2 / norm2) < SS_ADMM_CONVERGED_CHANGE * interval;
  return ss_cpu_report_iterate (reporter, iteration, s->x, cx, change2, norm2, *converged, error);
}

gboolean
ss_cpu_admm_prior (const SsProblem *problem, const SsSolveParams *params, SsReportFunc report,
                   gpointer user_data, GCancellable *cancellable, SsSolveResult *result,
                   GError **error)
{
  const SsOperator *op = problem->op;
  SsMemCounter mem = { 0 };
  PriorState s = { 0 };
  SsCpuReporter reporter;
  ss_cpu_reporter_init (&reporter, problem, params, report, user_data, cancellable);
  gboolean ok = state_alloc (&s, problem, params, &mem, error);
  SsFft *batch = ok ? ss_fft_get (op->width, op->height, s.images, error) : NULL;
  SsFft *fft1 = batch ? ss_fft_get (op->width, op->height, 1, error) : NULL;
  float *kept = fft1 ? ss_mem_alloc (&mem, 2 * s.count * sizeof (float), error) : NULL;
  ok = kept != NULL;
  const float rho = (float) params->rho, sigma = (float) params->sigma, tau = (float) params->tau;
  int iteration = 0;
  while (ok && iteration < params->iterations)
    {
      iteration++;
      gboolean measure = ss_cpu_is_report_point (params, iteration);
      ss_fft_forward (batch, s.in, s.spectrum);
      spectral_pass (&s, op->chat, rho, sigma, measure ? kept : NULL);
      ss_fft_inverse (batch, s.spectrum, s.out);
      if (measure)
        {
          gboolean converged = FALSE;
          ok = report_point (&reporter, &s, fft1, kept, iteration, &converged, error);
          if (ok && converged)
            break;
        }
      data_pass (&s, problem->y, rho, tau);
      prior_pass (&s, op->width, op->height, tau);
      /* The reweighting stages split the run evenly. */
      int stage_length = params->iterations / (params->reweight + 1);
      if (params->reweight > 0 && stage_length > 0 && iteration % stage_length == 0
          && iteration / stage_length <= params->reweight)
        update_reweights (&s);
    }
  /* A cancelled run keeps the estimate of its last report point, as CPADMM does. */
  if (s.x && reporter.last.iteration > 0)
    ss_cpu_finish_result (result, &reporter, &s.x, reporter.last.iteration, &mem);
  ss_mem_free (&mem, kept, 0);
  state_free (&s, &mem);
  ss_cpu_reporter_clear (&reporter);
  return ok;
}
