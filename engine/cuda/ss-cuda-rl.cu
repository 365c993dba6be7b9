/* ss-cuda-rl.cu: Richardson–Lucy and RL-TV on the GPU, step for step as
 * ss-cpu-rl.c:
 *
 *   z ← z ⊙ Cᵀ(P y' ⊘ (Cz + β)) ⊘ Cᵀ(P1) ⊘ (1 − λ div(∇z/|∇z|)),   x = z + β − b
 *
 * An iteration is two dependent R2C/C2R pairs and two fused pixel kernels:
 * R2C(z), times c^/n, C2R, the ratio kernel (y' ⊘ (Cz + β), 0 off the mask),
 * R2C, times conj(c^)/n, C2R, then the update kernel (normaliser, TV factor,
 * and at the last iterations of a report interval the estimate x and the
 * squared change). Without TV the update is in place; with TV it reads z's
 * neighbours, so it writes the new z beside it and a device copy follows.
 * The offset b, the background β, the start and the normaliser 1/Cᵀ(P1) are
 * ss-rl.h's, with their transforms done here (ss-cuda-rl-setup.cu). The
 * iteration's arguments are fixed, so it is captured as a CUDA graph. The
 * discrepancy rule is the iterator's stop hook: one wait per report, none per
 * iteration. The hold-out rule (ss-rl-holdout.h) is two or three runs of
 * the iterator (next_run): the validation run fits three quarters of the
 * image's pixels, its reports come every SS_RL_HOLDOUT_EVERY iterations and
 * the ratio of each report's last iteration also sums the held-out error
 * over the held-out pixels made once (rl_roles_kernel),
 * read by the stop hook; with --floor holdout (ss-rl.h), a second
 * validation run with the floor raised; then the run on all the data. Each
 * run captures graphs of its own, since β is a kernel argument. The
 * brightness blend (ss-rl-blend.h): the stop hook, which runs while the
 * device waits, copies z at the readings the blend keeps; the validation's
 * end (next_run) predicts the held-out pixels with each blend; where one is
 * chosen the full run is two runs, E copied between them, and its last
 * iteration (SS_ITER_LAST) blends the estimate before the final report.
 * Accelerated (ss-rl-accel.h), an iteration starts with the extrapolation
 * kernel, which moves z to the point the step starts from, and the update
 * kernel also sums how its move agrees with the last; a one-thread kernel
 * turns the sums into the next factor on the device, so no iteration waits.
 * Where the validation reached its cap, the full run is accelerated even
 * when the validation was not (ss_rl_holdout_full_accel), as on the CPU.
 */
#include "ss-cuda-internal.h"
#include "ss-cuda-device.cuh"
#include "ss-rl.h"
#include "ss-rl-accel.h"
#include "ss-rl-blend.h"
#include "ss-rl-holdout.h"
#include "ss-rl-tv.h"

#include <math.h>
#include <string.h>

typedef struct {
  SsCudaSolver base;
  const SsCudaProblem *p;
  const SsSolveParams *params;
  SsRlSetup setup;
  cufftHandle r2c, c2r;
  float *z, *r, *back, *weight, *estimate;
  float2 *spec;
  unsigned char *roles;     /* the validation runs' part of each pixel (rl_roles_kernel),
                               kept to the end (freeing it would wait on the device);
                               NULL without the hold-out rule */
  SsCudaReporter *reporter;
  SsCudaIterator *it;
  SsRegion image;           /* the pixels the hold-out rule splits */
  gboolean holdout;         /* the hold-out rule is on */
  gboolean validating;      /* in its validation run */
  int runs;                 /* runs started */
  int first_validation;     /* iterations of the first validation run (the cap counts them) */
  SsRlHoldout sky_rule;     /* the first's rule, while the floor raised is validated */
  int floor_iterations;     /* the second validation run's, where the floor was chosen */
  int iterations;           /* the solve's iterations and report interval, as asked for: */
  int report_every;         /* params is the driver's run, which next_run changes */
  SsRlHoldout rule;
  /* The brightness blend (ss-rl-blend.h), as ss-cpu-rl.c's: */
  float blend_level;        /* SS_RL_BLEND_SIGMAS σ; 0 when there is none to choose */
  float *best_image;        /* the validation's best reading's z */
  float *ladder[SS_RL_BLEND_SLOTS]; /* its rungs' z; ladder[0] holds E in the full run */
  SsRlBlendLadder ladder_at;
  double *blend_errors;     /* device: the held-out errors of the best and each blend */
  cudaError_t keep_status;  /* of the stop hook's copies, reported by the next run */
  int validated;            /* the validation runs' iterations, the full run's start */
  int early;                /* the full run's iterations at which E is kept; 0: no blend */
  int after_early;          /* and those after it */
  gboolean blending;        /* in the full run's part after E: its last iteration blends */
  /* The extrapolation (ss-rl-accel.h), as ss-cpu-rl.c's: */
  float accel_cap;          /* 0: plain RL, none of these (allocated with the first cap) */
  float *previous;          /* z before the last step */
  float *move;              /* the last step's move, its new z less its start point */
  double *accel;            /* device: Σ g g_prev and Σ g_prev² of the step, then the factor */
} Rl;

/* Where Rl.accel keeps each. */
enum { ACCEL_CROSS, ACCEL_LAST, ACCEL_FACTOR, ACCEL_N };

/* r = P (y + b)₊ ⊘ (r + β), 0 off the mask (r holds C z on entry). */
template <bool MASK>
__global__ void
rl_ratio_kernel (float *__restrict__ r, const float *__restrict__ y,
                 const unsigned char *__restrict__ mask, size_t n, float b, float beta)
{
  for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < n;
       i += (size_t) gridDim.x * blockDim.x)
    {
      float observed = (!MASK || mask[i]) ? fmaxf (y[i] + b, 0.0f) : 0.0f;
      r[i] = observed / fmaxf (r[i] + beta, 1e-30f);
    }
}

/* Each pixel's part in the validation run (ss-rl-holdout.h), made once
 * before it, as the CPU makes them: FIT, TEST where held out, observed
 * and its neighbours' mean y above LEVEL, else NONE. */
__global__ void
rl_roles_kernel (unsigned char *__restrict__ roles, const float *__restrict__ y,
                 const unsigned char *__restrict__ mask, size_t n, int width, int height,
                 SsRegion image, float level)
{
  for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < n;
       i += (size_t) gridDim.x * blockDim.x)
    {
      int role = (mask == NULL || mask[i]) ? ss_rl_holdout_role (i, width, image)
                                           : SS_RL_HOLDOUT_NONE;
      if (role == SS_RL_HOLDOUT_TEST
          && !(ss_rl_holdout_neighbour_level (y, mask, width, height, i) > level))
        role = SS_RL_HOLDOUT_NONE;
      roles[i] = (unsigned char) role;
    }
}

/* The validation run's ratio: as above on the fitted part of IMAGE's
 * observed pixels, 0 elsewhere; with MEASURE, Σ (y' − r − β)² over the TEST
 * pixels of ROLES into ACC (the held-out error of the z that r = C z is of).
 * Only the measuring iteration reads ROLES: computing the neighbours' mean
 * there took 398–408 µs on a 26-megapixel frame (H100, ncu) against
 * 126–127 reading the roles; the others compute the fitted part from the
 * split's hash, which the memory traffic hides (117–119 µs, as the plain
 * ratio's 116, against 146–147 reading the roles' byte). */
template <bool MEASURE>
__global__ void
rl_validation_ratio_kernel (float *__restrict__ r, const float *__restrict__ y,
                            const unsigned char *__restrict__ mask,
                            const unsigned char *__restrict__ roles, size_t n, int width,
                            SsRegion image, float b, float beta, double *__restrict__ acc)
{
  double held_out[1] = { 0.0 };
  for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < n;
       i += (size_t) gridDim.x * blockDim.x)
    {
      float data = fmaxf (y[i] + b, 0.0f), model = r[i] + beta;
      int role = MEASURE ? (int) roles[i]
                         : (mask == NULL || mask[i]) ? ss_rl_holdout_role (i, width, image)
                                                     : SS_RL_HOLDOUT_NONE;
      if (MEASURE && role == SS_RL_HOLDOUT_TEST)
        {
          double d = (double) data - model;
          held_out[0] += d * d;
        }
      r[i] = role == SS_RL_HOLDOUT_FIT ? data / fmaxf (model, 1e-30f) : 0.0f;
    }
  if (MEASURE)
    ss_block_sum_to<1> (held_out, acc);
}

/* z = the point the step starts from (ss_rl_accel_point, the factor the
 * last step left in ACCEL), previous = the z it came from. */
__global__ void
rl_extrapolate_kernel (float *__restrict__ z, float *__restrict__ previous, size_t n,
                       const double *__restrict__ accel)
{
  const float factor = (float) accel[ACCEL_FACTOR];
  for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < n;
       i += (size_t) gridDim.x * blockDim.x)
    {
      float zi = z[i];
      z[i] = ss_rl_accel_point (zi, previous[i], factor);
      previous[i] = zi;
    }
}

/* The next step's factor from the sums the update left, which it clears
 * for the next. */
__global__ void
rl_accel_factor_kernel (double *accel, double cap)
{
  accel[ACCEL_FACTOR] = ss_rl_accel_factor (accel[ACCEL_CROSS], accel[ACCEL_LAST], cap);
  accel[ACCEL_CROSS] = 0.0;
  accel[ACCEL_LAST] = 0.0;
}

/* z_new = z ⊙ (back ⊙ weight, or 1 where weight is 0) (⊙ TV factor), into z
 * (no TV) or back (TV); the estimate x = z_new + shift and the squared change
 * when FLAGS ask; ACCEL: the move z_new − z into MOVE, summing its product
 * with the move there before and that one's square into SUMS. */
template <bool TV, bool ACCEL, unsigned FLAGS>
__global__ void
rl_update_kernel (float *__restrict__ z, float *__restrict__ back,
                  const float *__restrict__ weight, float *__restrict__ estimate, int w, int h,
                  float lambda, float shift, double *__restrict__ acc,
                  float *__restrict__ move, double *__restrict__ sums)
{
  size_t n = (size_t) w * h;
  double delta[1] = { 0.0 };
  double agree[2] = { 0.0, 0.0 };
  for (size_t p = blockIdx.x * (size_t) blockDim.x + threadIdx.x; p < n;
       p += (size_t) gridDim.x * blockDim.x)
    {
      float wp = weight[p];
      float step = wp > 0 ? back[p] * wp : 1.0f;
      if (TV)
        step *= ss_rl_tv_factor (z, w, h, (int) (p % w), (int) (p / w), lambda);
      float zn = z[p] * step;
      if (FLAGS & SS_ITER_DELTA)
        {
          float d = zn - z[p];
          delta[0] += (double) d * d;
        }
      if (ACCEL)
        {
          float g = zn - z[p], last = move[p];
          agree[0] += (double) g * last;
          agree[1] += (double) last * last;
          move[p] = g;
        }
      if (FLAGS & SS_ITER_WRITE_ESTIMATE)
        estimate[p] = zn + shift;
      if (TV)
        back[p] = zn;
      else
        z[p] = zn;
    }
  if (FLAGS & SS_ITER_DELTA)
    ss_block_sum_to<1> (delta, acc + SS_ACC_DELTA);
  if (ACCEL)
    ss_block_sum_to<2> (agree, sums + ACCEL_CROSS);
}

/* OUT = the blend of EARLY and LATE (z units) + OUT_SHIFT. */
__global__ void
rl_blend_kernel (float *__restrict__ out, const float *__restrict__ early,
                 const float *__restrict__ late, size_t n, float shift, float level,
                 float out_shift)
{
  for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < n;
       i += (size_t) gridDim.x * blockDim.x)
    out[i] = ss_rl_blend_value (early[i], late[i], shift, level) + out_shift;
}

__global__ void
rl_fill_kernel (float *__restrict__ x, size_t n, float value)
{
  for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < n;
       i += (size_t) gridDim.x * blockDim.x)
    x[i] = value;
}

/* ---- launches ---------------------------------------------------------------- */

/* The validation runs' roles, into a buffer of their own; held-out pixels
 * count above ss_rl_holdout_source_level of the setup's noise. */
static gboolean
rl_make_roles (Rl *s, const char *what, GError **error)
{
  SsCudaContext *ctx = s->base.ctx;
  const SsCudaProblem *p = s->p;
  float level = (float) ss_rl_holdout_source_level (s->setup.noise, SS_RL_HOLDOUT_SOURCE_SIGMAS);
  if (!ss_cuda_alloc (ctx, (void **) &s->roles, p->n, what, error))
    return FALSE;
  rl_roles_kernel<<<ss_cuda_blocks (ctx, p->n), SS_CUDA_THREADS, 0, ctx->stream>>> (
    s->roles, p->y, p->mask, p->n, p->width, p->height, s->image, level);
  return LAUNCH_OK ("rl_roles_kernel");
}

/* The validation run's ratio; the iteration ending a report interval
 * (FLAGS with SS_ITER_DELTA) measures the held-out error for the report. */
static gboolean
rl_validation_ratio (Rl *s, unsigned flags, GError **error)
{
  SsCudaContext *ctx = s->base.ctx;
  const SsCudaProblem *p = s->p;
  unsigned blocks = ss_cuda_blocks (ctx, p->n);
  float b = (float) s->setup.offset, beta = (float) s->setup.background;
  double *acc = s->reporter->block + SS_ACC_HELD_OUT;
  if (flags & SS_ITER_DELTA)
    rl_validation_ratio_kernel<true><<<blocks, SS_CUDA_THREADS, 0, ctx->stream>>> (
      s->r, p->y, p->mask, s->roles, p->n, p->width, s->image, b, beta, acc);
  else
    rl_validation_ratio_kernel<false><<<blocks, SS_CUDA_THREADS, 0, ctx->stream>>> (
      s->r, p->y, p->mask, s->roles, p->n, p->width, s->image, b, beta, acc);
  return LAUNCH_OK ("rl_validation_ratio_kernel");
}

static gboolean
rl_ratio (Rl *s, unsigned flags, GError **error)
{
  SsCudaContext *ctx = s->base.ctx;
  const SsCudaProblem *p = s->p;
  if (s->validating)
    return rl_validation_ratio (s, flags, error);
  unsigned blocks = ss_cuda_blocks (ctx, p->n);
  float b = (float) s->setup.offset, beta = (float) s->setup.background;
  if (p->mask)
    rl_ratio_kernel<true><<<blocks, SS_CUDA_THREADS, 0, ctx->stream>>> (s->r, p->y, p->mask,
                                                                        p->n, b, beta);
  else
    rl_ratio_kernel<false><<<blocks, SS_CUDA_THREADS, 0, ctx->stream>>> (s->r, p->y, NULL, p->n,
                                                                         b, beta);
  return LAUNCH_OK ("rl_ratio_kernel");
}

/* The full run's last estimate: x = the blend of E (ladder[0]) and z, + the
 * shift. */
static gboolean
rl_blend_estimate (Rl *s, GError **error)
{
  SsCudaContext *ctx = s->base.ctx;
  float shift = (float) ss_rl_estimate_shift (&s->setup);
  rl_blend_kernel<<<ss_cuda_blocks (ctx, s->p->n), SS_CUDA_THREADS, 0, ctx->stream>>> (
    s->estimate, s->ladder[0], s->z, s->p->n, shift, s->blend_level, shift);
  return LAUNCH_OK ("rl_blend_kernel");
}

template <bool TV, bool ACCEL>
static void
launch_update (Rl *s, unsigned flags, unsigned blocks)
{
  const SsCudaProblem *p = s->p;
  cudaStream_t st = s->base.ctx->stream;
  float lambda = (float) s->params->tv;
  float shift = (float) ss_rl_estimate_shift (&s->setup);
  double *acc = s->reporter->block;
  if (flags & SS_ITER_DELTA)
    rl_update_kernel<TV, ACCEL, SS_ITER_WRITE_ESTIMATE | SS_ITER_DELTA>
      <<<blocks, SS_CUDA_THREADS, 0, st>>> (s->z, s->back, s->weight, s->estimate, p->width,
                                            p->height, lambda, shift, acc, s->move, s->accel);
  else if (flags & SS_ITER_WRITE_ESTIMATE)
    rl_update_kernel<TV, ACCEL, SS_ITER_WRITE_ESTIMATE><<<blocks, SS_CUDA_THREADS, 0, st>>> (
      s->z, s->back, s->weight, s->estimate, p->width, p->height, lambda, shift, acc, s->move,
      s->accel);
  else
    rl_update_kernel<TV, ACCEL, 0><<<blocks, SS_CUDA_THREADS, 0, st>>> (
      s->z, s->back, s->weight, s->estimate, p->width, p->height, lambda, shift, acc, s->move,
      s->accel);
}

/* The extrapolation before a step (nothing without acceleration). */
static gboolean
rl_extrapolate (Rl *s, GError **error)
{
  if (s->accel_cap <= 0)
    return TRUE;
  SsCudaContext *ctx = s->base.ctx;
  rl_extrapolate_kernel<<<ss_cuda_blocks (ctx, s->p->n), SS_CUDA_THREADS, 0, ctx->stream>>> (
    s->z, s->previous, s->p->n, s->accel);
  return LAUNCH_OK ("rl_extrapolate_kernel");
}

static gboolean
rl_update (Rl *s, unsigned flags, GError **error)
{
  SsCudaContext *ctx = s->base.ctx;
  unsigned blocks = ss_cuda_blocks (ctx, s->p->n);
  gboolean tv = s->params->tv > 0, accel = s->accel_cap > 0;
  if (tv && accel)
    launch_update<true, true> (s, flags, blocks);
  else if (tv)
    launch_update<true, false> (s, flags, blocks);
  else if (accel)
    launch_update<false, true> (s, flags, blocks);
  else
    launch_update<false, false> (s, flags, blocks);
  if (!LAUNCH_OK ("rl_update_kernel"))
    return FALSE;
  if (accel)
    {
      rl_accel_factor_kernel<<<1, 1, 0, ctx->stream>>> (s->accel, (double) s->accel_cap);
      if (!LAUNCH_OK ("rl_accel_factor_kernel"))
        return FALSE;
    }
  if (tv && !CUDA_OK (cudaMemcpyAsync (s->z, s->back, s->p->n * sizeof (float),
                                       cudaMemcpyDeviceToDevice, ctx->stream)))
    return FALSE;
  return !(s->blending && (flags & SS_ITER_LAST)) || rl_blend_estimate (s, error);
}

static const char *const rl_stage_names[] = {
  "extrapolation (accelerated)", "R2C z", "times c^/n", "C2R", "ratio kernel", "R2C ratio",
  "times conj(c^)/n", "C2R", "update kernel (+ copy with TV, factor kernel accelerated)",
};

static gboolean
rl_stage (gpointer solver, int stage, unsigned flags, GError **error)
{
  Rl *s = (Rl *) solver;
  SsCudaContext *ctx = s->base.ctx;
  const SsCudaProblem *p = s->p;
  float inv_n = (float) (1.0 / (double) p->n);
  switch (stage)
    {
    case 0: return rl_extrapolate (s, error);
    case 1: return CUFFT_OK (cufftExecR2C (s->r2c, s->z, (cufftComplex *) s->spec));
    case 2: return ss_cuda_spectrum_multiply (ctx, s->spec, p->chat, p->spec, 1, FALSE, inv_n,
                                              error);
    case 3: return CUFFT_OK (cufftExecC2R (s->c2r, (cufftComplex *) s->spec, s->r));
    case 4: return rl_ratio (s, flags, error);
    case 5: return CUFFT_OK (cufftExecR2C (s->r2c, s->r, (cufftComplex *) s->spec));
    case 6: return ss_cuda_spectrum_multiply (ctx, s->spec, p->chat, p->spec, 1, TRUE, inv_n,
                                              error);
    case 7: return CUFFT_OK (cufftExecC2R (s->c2r, (cufftComplex *) s->spec, s->back));
    default: return rl_update (s, flags, error);
    }
}

static gboolean
rl_iterate (gpointer solver, unsigned flags, GError **error)
{
  for (int stage = 0; stage < (int) G_N_ELEMENTS (rl_stage_names); stage++)
    if (!rl_stage (solver, stage, flags, error))
      return FALSE;
  return TRUE;
}

/* The extrapolation at CAP from the next reset on; its buffers are
 * allocated the first time (the full run may be accelerated alone,
 * ss_rl_holdout_full_accel; ss_cuda_rl_new counted them where it may). */
static gboolean
rl_accel_set (Rl *s, double cap, GError **error)
{
  SsCudaContext *ctx = s->base.ctx;
  size_t image = s->p->n * sizeof (float);
  if (cap > 0 && s->accel == NULL)
    {
      g_autofree char *what = g_strdup_printf ("a %d×%d rl solve", s->p->width, s->p->height);
      if (!(ss_cuda_alloc (ctx, (void **) &s->previous, image, what, error)
            && ss_cuda_alloc (ctx, (void **) &s->move, image, what, error)
            && ss_cuda_alloc (ctx, (void **) &s->accel, ACCEL_N * sizeof (double), what,
                              error)))
        return FALSE;
    }
  s->accel_cap = (float) cap;
  return TRUE;
}

/* The flat start, and with acceleration no move yet (factor 0). */
static gboolean
rl_reset (gpointer solver, GError **error)
{
  Rl *s = (Rl *) solver;
  SsCudaContext *ctx = s->base.ctx;
  unsigned blocks = ss_cuda_blocks (ctx, s->p->n);
  rl_fill_kernel<<<blocks, SS_CUDA_THREADS, 0, ctx->stream>>> (s->z, s->p->n,
                                                               (float) s->setup.start);
  if (!LAUNCH_OK ("rl_fill_kernel"))
    return FALSE;
  if (s->accel_cap <= 0)
    return TRUE;
  rl_fill_kernel<<<blocks, SS_CUDA_THREADS, 0, ctx->stream>>> (s->previous, s->p->n,
                                                               (float) s->setup.start);
  return LAUNCH_OK ("rl_fill_kernel")
         && CUDA_OK (cudaMemsetAsync (s->move, 0, s->p->n * sizeof (float), ctx->stream))
         && CUDA_OK (cudaMemsetAsync (s->accel, 0, ACCEL_N * sizeof (double), ctx->stream));
}

static const float *
rl_estimate (gpointer solver)
{
  return ((Rl *) solver)->estimate;
}

static gboolean
rl_stop (gpointer solver, const SsReport *report, const double *acc)
{
  Rl *s = (Rl *) solver;
  return report->residual <= s->setup.stop_level;
}

/* z kept after READING iterations of a validation run (ss-rl-blend.h): as
 * the best reading's when it IMPROVED the held-out error, and on the
 * ladder at its rungs. Called by the stop hook, while the device waits for
 * the next interval; a failed copy is reported by the next run. */
static void
rl_keep_iterates (Rl *s, int reading, gboolean improved)
{
  if (s->blend_level <= 0)
    return;
  cudaStream_t st = s->base.ctx->stream;
  size_t bytes = s->p->n * sizeof (float);
  cudaError_t status = cudaSuccess;
  if (improved)
    status = cudaMemcpyAsync (s->best_image, s->z, bytes, cudaMemcpyDeviceToDevice, st);
  int slot = ss_rl_blend_ladder_slot (reading);
  if (slot >= 0 && status == cudaSuccess)
    {
      status = cudaMemcpyAsync (s->ladder[slot], s->z, bytes, cudaMemcpyDeviceToDevice, st);
      s->ladder_at.iterations[slot] = reading;
    }
  if (s->keep_status == cudaSuccess)
    s->keep_status = status;
}

/* Enqueues the held-out error of Z (the validation's roles) into ACC,
 * with r and the spectrum as scratch. */
static gboolean
rl_held_out_error (Rl *s, const float *z, double *acc, GError **error)
{
  SsCudaContext *ctx = s->base.ctx;
  const SsCudaProblem *p = s->p;
  float b = (float) s->setup.offset, beta = (float) s->setup.background;
  /* Out of place, cuFFT's R2C leaves its input as it was. */
  if (!CUFFT_OK (cufftExecR2C (s->r2c, (float *) z, (cufftComplex *) s->spec))
      || !ss_cuda_spectrum_multiply (ctx, s->spec, p->chat, p->spec, 1, FALSE,
                                     (float) (1.0 / (double) p->n), error)
      || !CUFFT_OK (cufftExecC2R (s->c2r, (cufftComplex *) s->spec, s->r)))
    return FALSE;
  rl_validation_ratio_kernel<true><<<ss_cuda_blocks (ctx, p->n), SS_CUDA_THREADS, 0,
                                     ctx->stream>>> (s->r, p->y, p->mask, s->roles, p->n,
                                                     p->width, s->image, b, beta, acc);
  return LAUNCH_OK ("rl_validation_ratio_kernel");
}

/* At a validation run's end, as ss-cpu-rl.c's choose_blend: the blend of
 * its best iterate with the ladder's earlier ones that predicts the
 * held-out pixels best, into the rule, where one predicts them better than
 * the best alone. One wait, for the errors. */
static gboolean
rl_choose_blend (Rl *s, GError **error)
{
  SsCudaContext *ctx = s->base.ctx;
  int slots[SS_RL_BLEND_SLOTS];
  cudaError_t kept = s->keep_status;
  s->keep_status = cudaSuccess;
  if (!CUDA_OK (kept))
    return FALSE;
  int count = s->blend_level > 0 ? ss_rl_blend_candidates (&s->ladder_at, &s->rule, slots) : 0;
  if (count == 0)
    return TRUE;
  float shift = (float) ss_rl_estimate_shift (&s->setup);
  double errors[1 + SS_RL_BLEND_SLOTS];
  gboolean ok = CUDA_OK (cudaMemsetAsync (s->blend_errors, 0, sizeof errors, ctx->stream))
                && rl_held_out_error (s, s->best_image, s->blend_errors, error);
  for (int i = 0; ok && i < count; i++)
    {
      rl_blend_kernel<<<ss_cuda_blocks (ctx, s->p->n), SS_CUDA_THREADS, 0, ctx->stream>>> (
        s->back, s->ladder[slots[i]], s->best_image, s->p->n, shift, s->blend_level, 0.0f);
      ok = LAUNCH_OK ("rl_blend_kernel")
           && rl_held_out_error (s, s->back, s->blend_errors + 1 + i, error);
    }
  ok = ok
       && CUDA_OK (cudaMemcpyAsync (errors, s->blend_errors, sizeof errors,
                                    cudaMemcpyDeviceToHost, ctx->stream))
       && CUDA_OK (cudaStreamSynchronize (ctx->stream));
  if (ok)
    ss_rl_blend_choose (&s->rule, &s->ladder_at, slots, count, errors);
  return ok;
}

/* The validation run's stop hook: the report's last iteration measured the
 * held-out error of the estimate it started from, one iteration before the
 * report's (the CPU does the same); it came with the report's block. The
 * rule counts the run's own iterations (the floor's follows the first). */
static gboolean
rl_validation_stop (gpointer solver, const SsReport *report, const double *acc)
{
  Rl *s = (Rl *) solver;
  int reading = report->iteration - s->it->iteration_offset;
  gboolean stop = ss_rl_holdout_record (&s->rule, reading - 1, acc[SS_ACC_HELD_OUT]);
  rl_keep_iterates (s, reading, s->rule.best == reading - 1);
  return stop;
}

/* After the floor's validation run (ss-rl.h): the floor whose run predicts
 * the held-out pixels as well stays, with its rule. */
static void
rl_choose_floor (Rl *s, int done)
{
  s->floor_iterations = done - s->first_validation;
  if (!ss_rl_setup_choose_floor (&s->setup, s->sky_rule.best_error, s->rule.best_error))
    s->rule = s->sky_rule;
}

/* After the full run's first part, where a blend was chosen: E kept in
 * ladder[0], and the rest of the full run, whose last iteration blends
 * (rl_update). FALSE, with no error, when the solve is done. */
static gboolean
rl_keep_early (Rl *s, SsSolveParams *run, GError **error)
{
  if (s->early <= 0 || s->blending)
    return FALSE;
  SsCudaContext *ctx = s->base.ctx;
  s->blending = TRUE;
  s->it->provisional = FALSE;
  run->iterations = s->after_early;
  return CUDA_OK (cudaMemcpyAsync (s->ladder[0], s->z, s->p->n * sizeof (float),
                                   cudaMemcpyDeviceToDevice, ctx->stream));
}

/* The hold-out rule's runs (SsCudaIterator.next_run): the validation run,
 * where the floor is the rule's to choose a second one with it raised (as
 * ss-cpu-rl.c's validate), then the run on all the data. Both validation
 * runs share the fitted pixels' normaliser, set up before the first. */
static gboolean
rl_next_run (gpointer solver, SsSolveParams *run, int done, GError **error)
{
  Rl *s = (Rl *) solver;
  SsCudaContext *ctx = s->base.ctx;
  s->runs++;
  if (!s->validating)
    return rl_keep_early (s, run, error);
  if (s->runs > 1 && !rl_choose_blend (s, error))
    return FALSE;
  gboolean floor_run = s->runs == 2 && ss_rl_floor_choosable (&s->setup);
  if (s->runs == 1 || floor_run)
    {
      /* No ladder iterate kept yet (the rule's best starts afresh too). */
      memset (&s->ladder_at, 0, sizeof s->ladder_at);
      if (floor_run)
        {
          s->first_validation = done;
          s->sky_rule = s->rule;
          ss_rl_holdout_init (&s->rule, s->iterations);
          ss_rl_setup_raise_floor (&s->setup, TRUE);
          if (!rl_reset (s, error))
            return FALSE;
        }
      /* Readings every SS_RL_HOLDOUT_EVERY iterations until the rule ends
       * the run; the count only bounds it. */
      run->report_every = SS_RL_HOLDOUT_EVERY;
      run->iterations = (s->rule.cap / SS_RL_HOLDOUT_EVERY + 2) * SS_RL_HOLDOUT_EVERY;
      return TRUE;
    }
  if (s->runs == 2)
    s->first_validation = done;
  else
    rl_choose_floor (s, done);
  s->validating = FALSE;
  s->validated = done;
  s->it->stop = NULL;
  int full = ss_rl_holdout_full_iterations (&s->rule, s->setup.raised,
                                            s->iterations - s->first_validation);
  /* With a blend, the full run stops at E to keep it (rl_keep_early). */
  s->early = ss_rl_blend_early_iterations (full, s->rule.blend_ratio);
  s->after_early = full - s->early;
  s->it->provisional = s->early > 0;
  run->report_every = s->report_every;
  run->iterations = s->early > 0 ? s->early : full;
  return rl_accel_set (s, ss_rl_holdout_full_accel (&s->rule, s->params->rl_accel), error)
         && ss_cuda_rl_normaliser (ctx, s->p, FALSE, s->image, s->weight, s->back, s->spec, error)
         && rl_reset (s, error);
}

/* SsCudaIterator.finish: the floor (and a warning where it could not be
 * raised as asked), the validation's iterations and the blend. */
static void
rl_finish (gpointer solver, SsSolveResult *result)
{
  Rl *s = (Rl *) solver;
  ss_rl_result_floor (&s->setup, s->floor_iterations, result);
  /* The validation runs' iterations: the full run's part before E is a
   * run of its own, but not a validation. */
  result->validation_iterations = s->validated;
  result->blend_early_iterations = s->early;
  result->blend_error_ratio = s->early > 0 ? s->rule.blend_error : 0;
  /* Where the full run started, the rule's raised cap (as ss-cpu-rl.c's). */
  result->full_accel = s->holdout && !s->validating
                         ? ss_rl_holdout_raised_accel (&s->rule, s->params->rl_accel) : 0;
}

static void
rl_destroy (SsCudaSolver *solver)
{
  Rl *s = (Rl *) solver;
  SsCudaContext *ctx = solver->ctx;
  size_t image = s->p->n * sizeof (float);
  ss_cuda_free (ctx, s->z, image);
  ss_cuda_free (ctx, s->r, image);
  ss_cuda_free (ctx, s->back, image);
  ss_cuda_free (ctx, s->weight, image);
  ss_cuda_free (ctx, s->estimate, image);
  ss_cuda_free (ctx, s->spec, s->p->spec * sizeof (float2));
  ss_cuda_free (ctx, s->roles, s->p->n);
  ss_cuda_free (ctx, s->best_image, image);
  for (int i = 0; i < SS_RL_BLEND_SLOTS; i++)
    ss_cuda_free (ctx, s->ladder[i], image);
  ss_cuda_free (ctx, s->blend_errors, (1 + SS_RL_BLEND_SLOTS) * sizeof (double));
  ss_cuda_free (ctx, s->previous, image);
  ss_cuda_free (ctx, s->move, image);
  ss_cuda_free (ctx, s->accel, ACCEL_N * sizeof (double));
  g_free (s);
}

/* The blend's buffers (the best reading's z, the ladder's, the errors). */
static size_t
rl_blend_bytes (const SsCudaProblem *p)
{
  return (1 + SS_RL_BLEND_SLOTS) * (p->n * sizeof (float) + sizeof (double));
}

/* Where the noise is known (the setup's), the blend's buffers. */
static gboolean
rl_blend_alloc (Rl *s, const char *what, GError **error)
{
  SsCudaContext *ctx = s->base.ctx;
  size_t image = s->p->n * sizeof (float);
  s->blend_level = (float) ss_rl_blend_level (s->setup.noise);
  if (s->blend_level <= 0)
    return TRUE;
  if (!ss_cuda_alloc (ctx, (void **) &s->best_image, image, what, error)
      || !ss_cuda_alloc (ctx, (void **) &s->blend_errors,
                         (1 + SS_RL_BLEND_SLOTS) * sizeof (double), what, error))
    return FALSE;
  for (int i = 0; i < SS_RL_BLEND_SLOTS; i++)
    if (!ss_cuda_alloc (ctx, (void **) &s->ladder[i], image, what, error))
      return FALSE;
  return TRUE;
}

SsCudaSolver *
ss_cuda_rl_new (SsCudaContext *ctx, const SsCudaProblem *p, const SsSolveParams *params,
                SsCudaIterator *it, SsCudaReporter *reporter, GError **error)
{
  if (p->host == NULL)
    {
      g_set_error (error, SS_ERROR, SS_ERROR_INVALID_ARGUMENT,
                   "Richardson–Lucy needs the host problem for its setup");
      return NULL;
    }
  size_t image = p->n * sizeof (float);
  gboolean holdout = params->rl_stop == SS_RL_STOP_HOLDOUT;
  /* With the hold-out rule, a byte a pixel for the validation's roles and
   * the blend's iterates (ss-rl-blend.h). */
  /* And with acceleration two more images (ss-rl-accel.h): asked, or
   * possible in the hold-out rule's full run (ss_rl_holdout_full_accel). */
  gboolean accel = params->rl_accel > 0;
  gboolean may_accel = accel || holdout;
  size_t bytes = (may_accel ? 7 : 5) * image + p->spec * sizeof (float2)
                 + (may_accel ? ACCEL_N * sizeof (double) : 0)
                 + (holdout ? p->n + rl_blend_bytes (p) : 0);
  g_autofree char *what = g_strdup_printf ("a %d×%d rl solve", p->width, p->height);
  if (!ss_cuda_check_solver_room (ctx, p->width, p->height, 1, bytes, what, error))
    return NULL;

  Rl *s = g_new0 (Rl, 1);
  s->base.ctx = ctx;
  s->base.destroy = rl_destroy;
  s->base.bytes = bytes;
  s->p = p;
  s->params = params;
  s->reporter = reporter;
  s->it = it;
  s->iterations = params->iterations;
  s->report_every = params->report_every;
  s->image = p->host->image;
  s->holdout = params->rl_stop == SS_RL_STOP_HOLDOUT
               && ss_rl_holdout_init (&s->rule, params->iterations);
  s->validating = s->holdout;
  gboolean ok = ss_cuda_plan (ctx, p->width, p->height, 1, CUFFT_R2C, &s->r2c, error)
                && ss_cuda_plan (ctx, p->width, p->height, 1, CUFFT_C2R, &s->c2r, error)
                && ss_cuda_alloc (ctx, (void **) &s->z, image, what, error)
                && ss_cuda_alloc (ctx, (void **) &s->r, image, what, error)
                && ss_cuda_alloc (ctx, (void **) &s->back, image, what, error)
                && ss_cuda_alloc (ctx, (void **) &s->weight, image, what, error)
                && ss_cuda_alloc (ctx, (void **) &s->estimate, image, what, error)
                && ss_cuda_alloc (ctx, (void **) &s->spec, p->spec * sizeof (float2), what,
                                  error)
                && rl_accel_set (s, params->rl_accel, error)
                && ss_cuda_rl_setup (ctx, p, params, s->weight, s->z, s->back, s->spec,
                                     &s->setup, error)
                && (!s->holdout
                    || (ss_cuda_rl_normaliser (ctx, p, TRUE, s->image, s->weight, s->back,
                                               s->spec, error)
                        && rl_make_roles (s, what, error) && rl_blend_alloc (s, what, error)))
                && rl_reset (s, error);
  if (!ok)
    {
      rl_destroy (&s->base);
      return NULL;
    }
  ss_cuda_reporter_borrow (reporter, s->spec, s->r, TRUE);
  ss_cuda_iterator_bind (it, s, rl_iterate, rl_estimate, rl_reset, TRUE);
  ss_cuda_iterator_stages (it, rl_stage, rl_stage_names, G_N_ELEMENTS (rl_stage_names));
  it->stop = s->setup.stop_level >= 0 ? rl_stop : NULL;
  it->finish = rl_finish;
  if (s->holdout)
    {
      it->stop = rl_validation_stop;
      it->next_run = rl_next_run;
      it->provisional = TRUE;
    }
  return &s->base;
}

double
ss_cuda_rl_iteration_bytes (const SsCudaProblem *p, const SsSolveParams *params)
{
  return ss_bench_rl_iteration_bytes (p->width, p->height, p->mask != NULL,
                                      params->rl_accel > 0);
}
