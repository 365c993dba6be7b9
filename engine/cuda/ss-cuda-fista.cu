/* ss-cuda-fista.cu: FISTA and ISTA on the GPU, step for step as ss-cpu-fista.c.
 *
 *   x+ = soft(y_k - (1/L) C^T P^T (P C y_k - y), lambda/L)
 *   t+ = (1 + sqrt(1 + 4t^2)) / 2,  y_{k+1} = x+ + ((t - 1)/t+)(x+ - x)
 *
 * With a mask an iteration is two dependent R2C/C2R pairs: R2C(y_k), times
 * c^/n, C2R, residual kernel (r = P r - y), R2C(r), times conj(c^)/n, C2R (the
 * gradient), then one pixel kernel (proximal step and momentum). Without a
 * mask it is one pair, C^T C y_k - C^T y, with C^T y computed once.
 *
 * The step, threshold and momentum of every iteration do not depend on the
 * data (the t sequence and the continuation schedule are fixed once
 * max|A^T y| is known), so they are computed on the host in double, as the CPU
 * does, and read by the pixel kernel from a device table indexed by an
 * iteration counter that the first spectral kernel of each iteration
 * advances: the iteration body has fixed arguments and can be a CUDA graph.
 *
 * Backtracking decides the step from the data at every iteration, so it
 * waits for three sums per trial (one host synchronisation per trial); it is
 * an option, off by default, and such runs are not captured in graphs.
 */
#include "ss-cuda-internal.h"
#include "ss-cuda-device.cuh"

#include <math.h>
#include <string.h>

typedef struct {
  float step, thresh, beta;
} FistaStep;

enum { SPECTRUM_FORWARD, SPECTRUM_ADJOINT, SPECTRUM_POWER };

typedef struct {
  SsCudaSolver base;
  const SsCudaProblem *p;
  const SsSolveParams *params;
  gboolean masked_path;   /* two pairs (mask present, or backtracking) */
  cufftHandle r2c, c2r;
  float *x, *yk, *r, *aty, *trial;
  float2 *spec;
  FistaStep *table;       /* device, iterations + 1 entries */
  int *counter;           /* device iteration counter */
  double *sums;           /* device, backtracking sums */
  double *host_sums;      /* pinned */
  FistaStep *host_table;
  SsCudaReporter *reporter;
  /* backtracking state (host) */
  double lipschitz, lambda, decay, t;
  double host_table_lambda; /* lambda of the first iteration */
  int iteration;
} Fista;

template <int MODE>
__global__ void
fista_spectrum_kernel (float2 *__restrict__ s, const float2 *__restrict__ c, size_t count,
                       float inv_n, int *__restrict__ counter)
{
  if (counter && blockIdx.x == 0 && threadIdx.x == 0)
    *counter += 1;
  for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < count;
       i += (size_t) gridDim.x * blockDim.x)
    {
      float2 cv = c[i], sv = s[i];
      if (MODE == SPECTRUM_POWER)
        {
          float pw = (cv.x * cv.x + cv.y * cv.y) * inv_n;
          s[i] = make_float2 (sv.x * pw, sv.y * pw);
        }
      else
        {
          /* The CPU scales c^ first, then multiplies: same rounding. */
          float cr = cv.x * inv_n, ci = (MODE == SPECTRUM_ADJOINT ? -cv.y : cv.y) * inv_n;
          s[i] = make_float2 (cr * sv.x - ci * sv.y, cr * sv.y + ci * sv.x);
        }
    }
}

/* r = P r - y (0 off the mask); with SUM, accumulates sum r^2 into acc[0]. */
template <bool MASK, bool SUM>
__global__ void
fista_residual_kernel (float *__restrict__ r, const float *__restrict__ y,
                       const unsigned char *__restrict__ mask, size_t n, double *__restrict__ acc)
{
  double v[1] = { 0.0 };
  for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < n;
       i += (size_t) gridDim.x * blockDim.x)
    {
      float d = (!MASK || mask[i]) ? r[i] - y[i] : 0.0f;
      r[i] = d;
      if (SUM)
        v[0] += (double) d * d;
    }
  if (SUM)
    ss_block_sum_to<1> (v, acc);
}

/* x+ = soft(y_k - step g, thresh); y_k = x+ + beta (x+ - x); x = x+.
 * ATY: the unmasked gradient is g - C^T y. */
template <bool ATY, unsigned FLAGS>
__global__ void
fista_pixel_kernel (float *__restrict__ x, float *__restrict__ yk, const float *__restrict__ g,
                    const float *__restrict__ aty, size_t n, const FistaStep *__restrict__ table,
                    const int *__restrict__ counter, int last, FistaStep direct, bool nonneg,
                    double *__restrict__ acc)
{
  FistaStep k = table ? table[min (*counter, last)] : direct;
  double delta[1] = { 0.0 };
  for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < n;
       i += (size_t) gridDim.x * blockDim.x)
    {
      float gi = ATY ? g[i] - aty[i] : g[i];
      float xn = ss_soft (yk[i] - k.step * gi, k.thresh, nonneg);
      float diff = xn - x[i];
      if (FLAGS & SS_ITER_DELTA)
        delta[0] += (double) diff * diff;
      yk[i] = xn + k.beta * diff;
      x[i] = xn;
    }
  if (FLAGS & SS_ITER_DELTA)
    ss_block_sum_to<1> (delta, acc + SS_ACC_DELTA);
}

/* Backtracking: trial = soft(y_k - step g, thresh); sums[1] += <trial - y_k, g>,
 * sums[2] += ||trial - y_k||^2. */
__global__ void
fista_trial_kernel (float *__restrict__ trial, const float *__restrict__ yk,
                    const float *__restrict__ g, size_t n, float step, float thresh, bool nonneg,
                    double *__restrict__ sums)
{
  double v[2] = { 0.0, 0.0 };
  for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < n;
       i += (size_t) gridDim.x * blockDim.x)
    {
      float t = ss_soft (yk[i] - step * g[i], thresh, nonneg);
      trial[i] = t;
      double d = (double) t - yk[i];
      v[0] += d * g[i];
      v[1] += d * d;
    }
  ss_block_sum_to<2> (v, sums + 1);
}

/* Backtracking: y_k = trial + beta (trial - x); x = trial. */
template <unsigned FLAGS>
__global__ void
fista_momentum_kernel (float *__restrict__ x, float *__restrict__ yk,
                       const float *__restrict__ trial, size_t n, float beta,
                       double *__restrict__ acc)
{
  double delta[1] = { 0.0 };
  for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < n;
       i += (size_t) gridDim.x * blockDim.x)
    {
      float xn = trial[i], diff = xn - x[i];
      if (FLAGS & SS_ITER_DELTA)
        delta[0] += (double) diff * diff;
      yk[i] = xn + beta * diff;
      x[i] = xn;
    }
  if (FLAGS & SS_ITER_DELTA)
    ss_block_sum_to<1> (delta, acc + SS_ACC_DELTA);
}

__global__ void
max_abs_kernel (const float *__restrict__ x, size_t n, unsigned int *__restrict__ out)
{
  float best = 0.0f;
  for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < n;
       i += (size_t) gridDim.x * blockDim.x)
    best = fmaxf (best, fabsf (x[i]));
  for (int offset = 16; offset > 0; offset >>= 1)
    best = fmaxf (best, __shfl_down_sync (0xffffffffu, best, offset));
  /* Non-negative floats order like their bit patterns. */
  if ((threadIdx.x & 31) == 0)
    atomicMax (out, __float_as_uint (best));
}

/* ---- launches ---------------------------------------------------------------- */

static gboolean
spectrum (Fista *s, int mode, gboolean advance, GError **error)
{
  SsCudaContext *ctx = s->base.ctx;
  const SsCudaProblem *p = s->p;
  float inv_n = 1.0f / (float) p->n;
  int *counter = advance ? s->counter : NULL;
  unsigned blocks = ss_cuda_blocks (ctx, p->spec);
  if (mode == SPECTRUM_FORWARD)
    fista_spectrum_kernel<SPECTRUM_FORWARD><<<blocks, SS_CUDA_THREADS, 0, ctx->stream>>> (
      s->spec, p->chat, p->spec, inv_n, counter);
  else if (mode == SPECTRUM_ADJOINT)
    fista_spectrum_kernel<SPECTRUM_ADJOINT><<<blocks, SS_CUDA_THREADS, 0, ctx->stream>>> (
      s->spec, p->chat, p->spec, inv_n, counter);
  else
    fista_spectrum_kernel<SPECTRUM_POWER><<<blocks, SS_CUDA_THREADS, 0, ctx->stream>>> (
      s->spec, p->chat, p->spec, inv_n, counter);
  return LAUNCH_OK ("fista_spectrum_kernel");
}

static gboolean
residual (Fista *s, gboolean sum, GError **error)
{
  SsCudaContext *ctx = s->base.ctx;
  const SsCudaProblem *p = s->p;
  unsigned blocks = ss_cuda_blocks (ctx, p->n);
  cudaStream_t st = ctx->stream;
  if (p->mask && sum)
    fista_residual_kernel<true, true><<<blocks, SS_CUDA_THREADS, 0, st>>> (s->r, p->y, p->mask,
                                                                           p->n, s->sums);
  else if (p->mask)
    fista_residual_kernel<true, false><<<blocks, SS_CUDA_THREADS, 0, st>>> (s->r, p->y, p->mask,
                                                                            p->n, s->sums);
  else if (sum)
    fista_residual_kernel<false, true><<<blocks, SS_CUDA_THREADS, 0, st>>> (s->r, p->y, NULL,
                                                                            p->n, s->sums);
  else
    fista_residual_kernel<false, false><<<blocks, SS_CUDA_THREADS, 0, st>>> (s->r, p->y, NULL,
                                                                             p->n, s->sums);
  return LAUNCH_OK ("fista_residual_kernel");
}

/* r = P C v - y (0 off the mask), optionally summing its square into sums[0]. */
static gboolean
forward_residual (Fista *s, const float *v, gboolean advance, gboolean sum, GError **error)
{
  return CUFFT_OK (cufftExecR2C (s->r2c, (cufftReal *) v, (cufftComplex *) s->spec))
         && spectrum (s, SPECTRUM_FORWARD, advance, error)
         && CUFFT_OK (cufftExecC2R (s->c2r, (cufftComplex *) s->spec, s->r))
         && residual (s, sum, error);
}

/* r = C^T P^T (P C y_k - y): the gradient at y_k, in r. */
static gboolean
gradient (Fista *s, gboolean sum, GError **error)
{
  if (!s->masked_path)
    return CUFFT_OK (cufftExecR2C (s->r2c, (cufftReal *) s->yk, (cufftComplex *) s->spec))
           && spectrum (s, SPECTRUM_POWER, TRUE, error)
           && CUFFT_OK (cufftExecC2R (s->c2r, (cufftComplex *) s->spec, s->r));
  return forward_residual (s, s->yk, TRUE, sum, error)
         && CUFFT_OK (cufftExecR2C (s->r2c, s->r, (cufftComplex *) s->spec))
         && spectrum (s, SPECTRUM_ADJOINT, FALSE, error)
         && CUFFT_OK (cufftExecC2R (s->c2r, (cufftComplex *) s->spec, s->r));
}

template <bool ATY>
static void
launch_pixel (Fista *s, unsigned flags, unsigned blocks)
{
  const SsCudaProblem *p = s->p;
  cudaStream_t st = s->base.ctx->stream;
  FistaStep none = { 0, 0, 0 };
  bool nonneg = s->params->nonneg != FALSE;
  double *acc = s->reporter->block;
  if (flags & SS_ITER_DELTA)
    fista_pixel_kernel<ATY, SS_ITER_WRITE_ESTIMATE | SS_ITER_DELTA>
      <<<blocks, SS_CUDA_THREADS, 0, st>>> (s->x, s->yk, s->r, s->aty, p->n, s->table,
                                            s->counter, s->params->iterations, none, nonneg, acc);
  else
    fista_pixel_kernel<ATY, 0><<<blocks, SS_CUDA_THREADS, 0, st>>> (
      s->x, s->yk, s->r, s->aty, p->n, s->table, s->counter, s->params->iterations, none, nonneg, acc);
}

static const char *const fista_masked_stage_names[] = {
  "R2C y_k", "times c^/n", "C2R", "residual kernel", "R2C r", "times conj(c^)/n", "C2R",
  "prox+momentum kernel",
};
static const char *const fista_unmasked_stage_names[] = {
  "R2C y_k", "times |c^|^2/n", "C2R", "prox+momentum kernel",
};

static gboolean
fista_pixel (Fista *s, unsigned flags, GError **error)
{
  unsigned blocks = ss_cuda_blocks (s->base.ctx, s->p->n);
  if (s->masked_path)
    launch_pixel<false> (s, flags, blocks);
  else
    launch_pixel<true> (s, flags, blocks);
  return LAUNCH_OK ("fista_pixel_kernel");
}

/* The iteration's stages, in order (gradient() as separate steps). */
static gboolean
fista_stage (gpointer solver, int stage, unsigned flags, GError **error)
{
  Fista *s = (Fista *) solver;
  if (!s->masked_path)
    switch (stage)
      {
      case 0: return CUFFT_OK (cufftExecR2C (s->r2c, (cufftReal *) s->yk, (cufftComplex *) s->spec));
      case 1: return spectrum (s, SPECTRUM_POWER, TRUE, error);
      case 2: return CUFFT_OK (cufftExecC2R (s->c2r, (cufftComplex *) s->spec, s->r));
      default: return fista_pixel (s, flags, error);
      }
  switch (stage)
    {
    case 0: return CUFFT_OK (cufftExecR2C (s->r2c, (cufftReal *) s->yk, (cufftComplex *) s->spec));
    case 1: return spectrum (s, SPECTRUM_FORWARD, TRUE, error);
    case 2: return CUFFT_OK (cufftExecC2R (s->c2r, (cufftComplex *) s->spec, s->r));
    case 3: return residual (s, FALSE, error);
    case 4: return CUFFT_OK (cufftExecR2C (s->r2c, s->r, (cufftComplex *) s->spec));
    case 5: return spectrum (s, SPECTRUM_ADJOINT, FALSE, error);
    case 6: return CUFFT_OK (cufftExecC2R (s->c2r, (cufftComplex *) s->spec, s->r));
    default: return fista_pixel (s, flags, error);
    }
}

static gboolean
fista_iterate (gpointer solver, unsigned flags, GError **error)
{
  Fista *s = (Fista *) solver;
  int count = s->masked_path ? 8 : 4;
  for (int stage = 0; stage < count; stage++)
    if (!fista_stage (solver, stage, flags, error))
      return FALSE;
  return TRUE;
}

/* Reads the backtracking sums: [0] sum r^2 of the last residual, [1] the
 * linear term, [2] the squared step. */
static gboolean
read_sums (Fista *s, GError **error)
{
  SsCudaContext *ctx = s->base.ctx;
  return CUDA_OK (cudaMemcpyAsync (s->host_sums, s->sums, 3 * sizeof (double),
                                   cudaMemcpyDeviceToHost, ctx->stream))
         && CUDA_OK (cudaStreamSynchronize (ctx->stream));
}

/* One backtracking iteration (Beck-Teboulle, as the CPU): L only doubles,
 * never past max|c^|^2, which always satisfies the bound. */
static gboolean
fista_iterate_backtracking (gpointer solver, unsigned flags, GError **error)
{
  Fista *s = (Fista *) solver;
  SsCudaContext *ctx = s->base.ctx;
  const SsCudaProblem *p = s->p;
  unsigned blocks = ss_cuda_blocks (ctx, p->n);
  if (!CUDA_OK (cudaMemsetAsync (s->sums, 0, 3 * sizeof (double), ctx->stream))
      || !gradient (s, TRUE, error) || !read_sums (s, error))
    return FALSE;
  double f_y = 0.5 * s->host_sums[0];
  for (;;)
    {
      float step = (float) (1.0 / s->lipschitz), thresh = (float) (s->lambda / s->lipschitz);
      if (!CUDA_OK (cudaMemsetAsync (s->sums, 0, 3 * sizeof (double), ctx->stream)))
        return FALSE;
      fista_trial_kernel<<<blocks, SS_CUDA_THREADS, 0, ctx->stream>>> (
        s->trial, s->yk, s->r, p->n, step, thresh, s->params->nonneg != FALSE, s->sums);
      if (!LAUNCH_OK ("fista_trial_kernel") || !forward_residual (s, s->trial, FALSE, TRUE, error)
          || !read_sums (s, error))
        return FALSE;
      double f_trial = 0.5 * s->host_sums[0];
      if (f_trial <= f_y + s->host_sums[1] + 0.5 * s->lipschitz * s->host_sums[2] * (1 + 1e-6)
          || s->lipschitz >= p->lipschitz)
        break;
      s->lipschitz = MIN (2.0 * s->lipschitz, p->lipschitz);
    }
  gboolean momentum = s->params->kind == SS_SOLVER_FISTA;
  double t_next = momentum ? 0.5 * (1.0 + sqrt (1.0 + 4.0 * s->t * s->t)) : 1.0;
  float beta = momentum ? (float) ((s->t - 1.0) / t_next) : 0.0f;
  s->t = t_next;
  double *acc = s->reporter->block;
  if (flags & SS_ITER_DELTA)
    fista_momentum_kernel<SS_ITER_DELTA><<<blocks, SS_CUDA_THREADS, 0, ctx->stream>>> (
      s->x, s->yk, s->trial, p->n, beta, acc);
  else
    fista_momentum_kernel<0><<<blocks, SS_CUDA_THREADS, 0, ctx->stream>>> (s->x, s->yk, s->trial,
                                                                          p->n, beta, acc);
  s->lambda = MAX (s->lambda * s->decay, s->params->alpha);
  return LAUNCH_OK ("fista_momentum_kernel");
}

static gboolean
fista_reset (gpointer solver, GError **error)
{
  Fista *s = (Fista *) solver;
  SsCudaContext *ctx = s->base.ctx;
  size_t image = s->p->n * sizeof (float);
  s->lipschitz = s->p->lipschitz;
  if (s->params->backtracking)
    s->lipschitz *= (double) s->p->m / (double) s->p->n;
  s->lambda = s->host_table_lambda;
  s->t = 1.0;
  return CUDA_OK (cudaMemsetAsync (s->x, 0, image, ctx->stream))
         && CUDA_OK (cudaMemsetAsync (s->yk, 0, image, ctx->stream))
         && CUDA_OK (cudaMemsetAsync (s->counter, 0, sizeof (int), ctx->stream));
}

static const float *
fista_estimate (gpointer solver)
{
  return ((Fista *) solver)->x;
}

static void
fista_destroy (SsCudaSolver *solver)
{
  Fista *s = (Fista *) solver;
  SsCudaContext *ctx = solver->ctx;
  size_t image = s->p->n * sizeof (float);
  ss_cuda_free (ctx, s->x, image);
  ss_cuda_free (ctx, s->yk, image);
  ss_cuda_free (ctx, s->r, image);
  ss_cuda_free (ctx, s->aty, image);
  ss_cuda_free (ctx, s->trial, image);
  ss_cuda_free (ctx, s->spec, s->p->spec * sizeof (float2));
  ss_cuda_free (ctx, s->table, (s->params->iterations + 1) * sizeof (FistaStep));
  ss_cuda_free (ctx, s->counter, sizeof (int));
  ss_cuda_free (ctx, s->sums, 4 * sizeof (double));
  if (s->host_sums)
    cudaFreeHost (s->host_sums);
  g_free (s->host_table);
  g_free (s);
}

double
ss_cuda_fista_iteration_bytes (const SsCudaProblem *p)
{
  double spec = (double) p->spec, n = (double) p->n;
  if (p->mask == NULL)
    /* power multiply: read spectrum + c^, write spectrum; pixel: read y_k,
     * g, C^T y, x, write x, y_k. */
    return 24.0 * spec + 24.0 * n;
  /* two multiplies; residual: read r, y, mask, write r; pixel: read y_k, g,
   * x, write x, y_k. */
  return 2 * 24.0 * spec + 13.0 * n + 20.0 * n;
}

/* max|A^T y| for the continuation start (one wait, before the loop). */
static gboolean
max_abs_aty (Fista *s, double *top, GError **error)
{
  SsCudaContext *ctx = s->base.ctx;
  const SsCudaProblem *p = s->p;
  unsigned int *bits = (unsigned int *) s->sums;
  unsigned int host_bits = 0;
  /* The CPU transforms y (0 off the mask) with the adjoint, no mask applied. */
  if (!CUFFT_OK (cufftExecR2C (s->r2c, p->y, (cufftComplex *) s->spec))
      || !spectrum (s, SPECTRUM_ADJOINT, FALSE, error)
      || !CUFFT_OK (cufftExecC2R (s->c2r, (cufftComplex *) s->spec, s->r))
      || !CUDA_OK (cudaMemsetAsync (bits, 0, sizeof (unsigned int), ctx->stream)))
    return FALSE;
  max_abs_kernel<<<ss_cuda_blocks (ctx, p->n), SS_CUDA_THREADS, 0, ctx->stream>>> (s->r, p->n,
                                                                                   bits);
  if (!LAUNCH_OK ("max_abs_kernel")
      || !CUDA_OK (cudaMemcpyAsync (&host_bits, bits, sizeof host_bits, cudaMemcpyDeviceToHost,
                                    ctx->stream))
      || !CUDA_OK (cudaStreamSynchronize (ctx->stream)))
    return FALSE;
  float value;
  memcpy (&value, &host_bits, sizeof value);
  *top = value;
  return TRUE;
}

/* The data-independent schedule: step, threshold and momentum per iteration,
 * in the CPU's arithmetic. */
static void
build_table (Fista *s, double lambda_start, double decay)
{
  const SsSolveParams *params = s->params;
  gboolean momentum = params->kind == SS_SOLVER_FISTA;
  double lipschitz = s->p->lipschitz, t = 1.0, lambda = lambda_start;
  s->host_table[0] = (FistaStep) { 0, 0, 0 };
  for (int k = 1; k <= params->iterations; k++)
    {
      double t_next = momentum ? 0.5 * (1.0 + sqrt (1.0 + 4.0 * t * t)) : 1.0;
      FistaStep step = { (float) (1.0 / lipschitz), (float) (lambda / lipschitz),
                         momentum ? (float) ((t - 1.0) / t_next) : 0.0f };
      s->host_table[k] = step;
      t = t_next;
      lambda = MAX (lambda * decay, params->alpha);
    }
}

static size_t
fista_bytes (const SsCudaProblem *p, const SsSolveParams *params, gboolean masked)
{
  size_t images = 3 + (masked ? 0 : 1) + (params->backtracking ? 1 : 0);
  return images * p->n * sizeof (float) + p->spec * sizeof (float2)
         + (params->iterations + 1) * sizeof (FistaStep) + 64;
}

SsCudaSolver *
ss_cuda_fista_new (SsCudaContext *ctx, const SsCudaProblem *p, const SsSolveParams *params,
                   SsCudaIterator *it, SsCudaReporter *reporter, GError **error)
{
  if (!(p->lipschitz > 0))
    {
      g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT, "the operator is zero");
      return NULL;
    }
  gboolean masked = p->mask != NULL || params->backtracking;
  g_autofree char *what = g_strdup_printf ("a %d×%d %s solve", p->width, p->height,
                                           ss_solver_kind_to_string (params->kind));
  if (!ss_cuda_check_solver_room (ctx, p->width, p->height, 1, fista_bytes (p, params, masked),
                                  what, error))
    return NULL;

  Fista *s = g_new0 (Fista, 1);
  s->base.ctx = ctx;
  s->base.destroy = fista_destroy;
  s->base.bytes = fista_bytes (p, params, masked);
  s->p = p;
  s->params = params;
  s->masked_path = masked;
  s->reporter = reporter;
  size_t image = p->n * sizeof (float);
  size_t table_bytes = (params->iterations + 1) * sizeof (FistaStep);
  s->host_table = g_new0 (FistaStep, params->iterations + 1);
  gboolean ok =
    ss_cuda_plan (ctx, p->width, p->height, 1, CUFFT_R2C, &s->r2c, error)
    && ss_cuda_plan (ctx, p->width, p->height, 1, CUFFT_C2R, &s->c2r, error)
    && ss_cuda_alloc (ctx, (void **) &s->x, image, what, error)
    && ss_cuda_alloc (ctx, (void **) &s->yk, image, what, error)
    && ss_cuda_alloc (ctx, (void **) &s->r, image, what, error)
    && (masked || ss_cuda_alloc (ctx, (void **) &s->aty, image, what, error))
    && (!params->backtracking || ss_cuda_alloc (ctx, (void **) &s->trial, image, what, error))
    && ss_cuda_alloc (ctx, (void **) &s->spec, p->spec * sizeof (float2), what, error)
    && ss_cuda_alloc (ctx, (void **) &s->table, table_bytes, what, error)
    && ss_cuda_alloc (ctx, (void **) &s->counter, sizeof (int), what, error)
    && ss_cuda_alloc (ctx, (void **) &s->sums, 4 * sizeof (double), what, error)
    && CUDA_OK (cudaHostAlloc ((void **) &s->host_sums, 4 * sizeof (double), cudaHostAllocDefault))
    && CUDA_OK (cudaMemsetAsync (s->x, 0, image, ctx->stream))
    && CUDA_OK (cudaMemsetAsync (s->yk, 0, image, ctx->stream))
    && CUDA_OK (cudaMemsetAsync (s->counter, 0, sizeof (int), ctx->stream));
  /* C^T y once, for the one-pair gradient. */
  if (ok && !masked)
    ok = CUFFT_OK (cufftExecR2C (s->r2c, p->y, (cufftComplex *) s->spec))
         && spectrum (s, SPECTRUM_ADJOINT, FALSE, error)
         && CUFFT_OK (cufftExecC2R (s->c2r, (cufftComplex *) s->spec, s->aty));

  /* Continuation: lambda falls geometrically from max|A^T y| to alpha over
   * the first half of the iterations. */
  double lambda = params->alpha, decay = 1.0;
  if (ok && params->continuation)
    {
      double top = 0;
      ok = max_abs_aty (s, &top, error);
      int steps = MAX (params->iterations / 2, 1);
      double start = MAX (top, params->alpha);
      if (ok && params->alpha > 0 && start > params->alpha)
        {
          decay = pow (params->alpha / start, 1.0 / steps);
          lambda = start;
        }
    }
  if (ok)
    {
      build_table (s, lambda, decay);
      ok = CUDA_OK (cudaMemcpyAsync (s->table, s->host_table, table_bytes,
                                     cudaMemcpyHostToDevice, ctx->stream))
           && CUDA_OK (cudaStreamSynchronize (ctx->stream));
    }
  if (!ok)
    {
      fista_destroy (&s->base);
      return NULL;
    }
  s->host_table_lambda = lambda;
  s->decay = decay;
  fista_reset (s, NULL);

  ss_cuda_reporter_borrow (reporter, s->spec, s->r, TRUE);
  ss_cuda_iterator_bind (it, s, params->backtracking ? fista_iterate_backtracking : fista_iterate,
                         fista_estimate, fista_reset, !params->backtracking);
  if (!params->backtracking)
    ss_cuda_iterator_stages (it, fista_stage,
                             masked ? fista_masked_stage_names : fista_unmasked_stage_names,
                             masked ? 8 : 4);
  return &s->base;
}
