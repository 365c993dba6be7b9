/* ss-cuda-report.cu: metrics and previews at report points, on the device.
 *
 * A report enqueues C x (one R2C + C2R pair on scratch the solver lends), one
 * fused reduction pass (residual, l1, error against the truth, norm) and a
 * box-average preview, all into one small device block that the driver copies
 * asynchronously into pinned memory. Sums are kept in double, as the CPU does.
 */
#include "ss-cuda-internal.h"
#include "ss-cuda-device.cuh"

#include <math.h>
#include <string.h>

template <bool MASK, bool TRUTH>
__global__ void
metrics_kernel (const float *__restrict__ x, const float *__restrict__ cx,
                const float *__restrict__ y, const unsigned char *__restrict__ mask,
                const float *__restrict__ truth, size_t n, double *__restrict__ acc)
{
  double v[4] = { 0.0, 0.0, 0.0, 0.0 };
  for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < n;
       i += (size_t) gridDim.x * blockDim.x)
    {
      double xi = x[i];
      if (!MASK || mask[i])
        {
          double d = (double) cx[i] - (double) y[i];
          v[0] += d * d;
        }
      v[1] += fabs (xi);
      if (TRUTH)
        {
          double e = xi - (double) truth[i];
          v[2] += e * e;
        }
      v[3] += xi * xi;
    }
  ss_block_sum_to<4> (v, acc);
}

/* A validation run's held-out error (SsProblem.held_out): Σ (C x − y)² over
 * the counted held-out pixels, a pass of its own since only validation runs
 * pay for it. */
__global__ void
held_out_kernel (const float *__restrict__ cx, const float *__restrict__ y,
                 const unsigned char *__restrict__ counted, size_t n, double *__restrict__ acc)
{
  double v[1] = { 0.0 };
  for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < n;
       i += (size_t) gridDim.x * blockDim.x)
    if (counted[i])
      {
        double d = (double) cx[i] - (double) y[i];
        v[0] += d * d;
      }
  ss_block_sum_to<1> (v, acc);
}

/* One warp per preview pixel: the same blocks and the same double sums as
 * ss_preview_reduce on the CPU. */
__global__ void
preview_kernel (const float *__restrict__ x, int w, int h, float *__restrict__ out, int pw,
                int ph)
{
  int lane = threadIdx.x & 31;
  long long pixel = (blockIdx.x * (long long) blockDim.x + threadIdx.x) >> 5;
  if (pixel >= (long long) pw * ph)
    return;
  int py = (int) (pixel / pw), px = (int) (pixel % pw);
  int y0 = (int) ((long long) py * h / ph), y1 = (int) ((long long) (py + 1) * h / ph);
  int x0 = (int) ((long long) px * w / pw), x1 = (int) ((long long) (px + 1) * w / pw);
  y1 = max (y1, y0 + 1);
  x1 = max (x1, x0 + 1);
  double sum = 0.0;
  for (int yy = y0; yy < y1; yy++)
    for (int xx = x0 + lane; xx < x1; xx += 32)
      sum += x[(size_t) yy * w + xx];
  sum = ss_warp_sum (sum);
  if (lane == 0)
    out[pixel] = (float) (sum / ((double) (y1 - y0) * (x1 - x0)));
}

gboolean
ss_cuda_reporter_init (SsCudaReporter *r, SsCudaContext *ctx, const SsCudaProblem *p,
                       const SsSolveParams *params, GError **error)
{
  memset (r, 0, sizeof *r);
  r->ctx = ctx;
  r->p = p;
  r->params = params;
  if (params->preview_width > 0 && params->preview_height > 0)
    {
      r->pw = MIN (params->preview_width, p->width);
      r->ph = MIN (params->preview_height, p->height);
    }
  r->block_bytes = SS_ACC_COUNT * sizeof (double) + (size_t) r->pw * r->ph * sizeof (float);
  if (!ss_cuda_alloc (ctx, (void **) &r->block, r->block_bytes, "the report buffer", error))
    return FALSE;
  r->preview = r->pw > 0 ? (float *) (r->block + SS_ACC_COUNT) : NULL;
  return CUDA_OK (cudaMemsetAsync (r->block, 0, r->block_bytes, ctx->stream));
}

void
ss_cuda_reporter_clear (SsCudaReporter *r)
{
  if (r->ctx)
    ss_cuda_free (r->ctx, r->block, r->block_bytes);
  r->block = NULL;
}

gboolean
ss_cuda_reporter_reset (SsCudaReporter *r, GError **error)
{
  SsCudaContext *ctx = r->ctx;
  return CUDA_OK (cudaMemsetAsync (r->block, 0, SS_ACC_COUNT * sizeof (double), ctx->stream));
}

gboolean
ss_cuda_reporter_enqueue (SsCudaReporter *r, const float *x, GError **error)
{
  SsCudaContext *ctx = r->ctx;
  const SsCudaProblem *p = r->p;
  cufftHandle r2c, c2r;
  if (!ss_cuda_plan (ctx, p->width, p->height, 1, CUFFT_R2C, &r2c, error)
      || !ss_cuda_plan (ctx, p->width, p->height, 1, CUFFT_C2R, &c2r, error))
    return FALSE;
  /* An out-of-place R2C keeps its input, so X needs no copy. */
  if (!CUFFT_OK (cufftExecR2C (r2c, (cufftReal *) x, (cufftComplex *) r->spec))
      || !ss_cuda_spectrum_multiply (ctx, r->spec, p->chat, p->spec, 1, FALSE,
                                     (float) (1.0 / (double) p->n), error)
      || !CUFFT_OK (cufftExecC2R (c2r, (cufftComplex *) r->spec, r->real)))
    return FALSE;
  return ss_cuda_reporter_enqueue_metrics (r, x, r->real, error);
}

gboolean
ss_cuda_reporter_enqueue_metrics (SsCudaReporter *r, const float *x, const float *cx,
                                  GError **error)
{
  SsCudaContext *ctx = r->ctx;
  const SsCudaProblem *p = r->p;
  unsigned blocks = ss_cuda_blocks (ctx, p->n);
  cudaStream_t s = ctx->stream;
  if (p->mask && p->truth)
    metrics_kernel<true, true><<<blocks, SS_CUDA_THREADS, 0, s>>> (x, cx, p->y, p->mask,
                                                                   p->truth, p->n, r->block);
  else if (p->mask)
    metrics_kernel<true, false><<<blocks, SS_CUDA_THREADS, 0, s>>> (x, cx, p->y, p->mask,
                                                                    NULL, p->n, r->block);
  else if (p->truth)
    metrics_kernel<false, true><<<blocks, SS_CUDA_THREADS, 0, s>>> (x, cx, p->y, NULL,
                                                                    p->truth, p->n, r->block);
  else
    metrics_kernel<false, false><<<blocks, SS_CUDA_THREADS, 0, s>>> (x, cx, p->y, NULL,
                                                                     NULL, p->n, r->block);
  if (!LAUNCH_OK ("metrics_kernel"))
    return FALSE;
  if (p->held_y)
    {
      held_out_kernel<<<blocks, SS_CUDA_THREADS, 0, s>>> (cx, p->held_y, p->held_counted, p->n,
                                                          r->block + SS_ACC_HELD_OUT);
      if (!LAUNCH_OK ("held_out_kernel"))
        return FALSE;
    }

  if (r->pw > 0)
    {
      size_t threads = (size_t) r->pw * r->ph * 32;
      unsigned pblocks = (unsigned) ((threads + SS_CUDA_THREADS - 1) / SS_CUDA_THREADS);
      preview_kernel<<<pblocks, SS_CUDA_THREADS, 0, s>>> (x, p->width, p->height, r->preview,
                                                          r->pw, r->ph);
      if (!LAUNCH_OK ("preview_kernel"))
        return FALSE;
    }
  return TRUE;
}

void
ss_cuda_reporter_fill (const SsCudaReporter *r, const void *host_block, SsReport *report)
{
  const double *acc = (const double *) host_block;
  const SsCudaProblem *p = r->p;
  report->residual = acc[SS_ACC_RESIDUAL] / (double) p->m;
  report->objective = 0.5 * acc[SS_ACC_RESIDUAL] + r->params->alpha * acc[SS_ACC_L1];
  report->mse = p->truth ? acc[SS_ACC_ERROR] / (double) p->n : NAN;
  report->psnr = isnan (report->mse) ? NAN : 10.0 * log10 (1.0 / report->mse);
  report->held_out = p->held_y ? acc[SS_ACC_HELD_OUT] : NAN;
  /* As the CPU: 0 when the estimate is 0 or the solver is not iterative. */
  if (r->has_delta && acc[SS_ACC_NORM] > 0)
    report->rel_change = sqrt (acc[SS_ACC_DELTA] / acc[SS_ACC_NORM]);
  else
    report->rel_change = 0.0;
  report->preview = r->pw > 0 ? (const float *) (acc + SS_ACC_COUNT) : NULL;
  report->preview_width = r->pw;
  report->preview_height = r->ph;
}
