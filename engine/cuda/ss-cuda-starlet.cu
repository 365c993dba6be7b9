/* ss-cuda-starlet.cu: the starlet splits of admm on the GPU, with à trous
 * stencils instead of the CPU's Fourier filters (ss-starlet.h has the
 * transform; ss-cpu-admm-prior.c the splits).
 *
 * Forward, fused with the splits' prox: c_0 = x, c_{j+1} = h_j * c_j (the
 * B3 kernel (1 4 6 4 1)/16 with 2^j − 1 holes, a row pass then a column
 * pass, periodic), w_{j+1} = c_j − c_{j+1}; the column pass then soft-
 * thresholds w + ν into z, steps ν and writes u = z − ν, the numerator's
 * input. No scale is stored.
 *
 * Adjoint: every ψ_j = φ_{j−1} − φ_j = φ_{j−1} * (δ − h_{j−1}) is symmetric,
 * so Σ_j ψ_jᵀ u_j = Σ_j φ_{j−1} * (u_j − h_{j−1} * u_j), which Horner's rule
 * evaluates from the coarsest scale with one smoothing a scale:
 *
 *   A_{J+1} = 0,   A_j = u_j + h_{j−1} * (A_{j+1} − u_j),   Σ_j ψ_jᵀ u_j = A_1,
 *
 * and A_1 is added to the x-update's numerator image in the last pass.
 * Each smoothing is two stencil passes of five taps, so an iteration adds
 * 4J passes over the image to CPADMM's: no transform.
 */
#include "ss-cuda-internal.h"

#define STARLET_LOOP(i, n) \
  for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < (n); \
       i += (size_t) gridDim.x * blockDim.x)

__device__ __forceinline__ int
wrap (int v, int size)
{
  v %= size;
  return v < 0 ? v + size : v;
}

/* The B3 taps at offsets −2..2 steps. */
__device__ __forceinline__ float
b3_sum (float m2, float m1, float c, float p1, float p2)
{
  return (m2 + p2) * (1.0f / 16) + (m1 + p1) * (4.0f / 16) + c * (6.0f / 16);
}

/* OUT = the row smoothing at STEP of (A − B); A or B may be NULL (0). */
__global__ void
starlet_row_kernel (const float *__restrict__ a, const float *__restrict__ b,
                    float *__restrict__ out, int width, int height, int step)
{
  const size_t n = (size_t) width * height;
  STARLET_LOOP (i, n)
    {
      int px = (int) (i % width);
      size_t row = i - px;
      float v[5];
      for (int t = -2; t <= 2; t++)
        {
          size_t at = row + wrap (px + t * step, width);
          v[t + 2] = (a ? a[at] : 0.0f) - (b ? b[at] : 0.0f);
        }
      out[i] = b3_sum (v[0], v[1], v[2], v[3], v[4]);
    }
}

/* The column smoothing of TMP at I (a row image is not smoothed along y). */
__device__ __forceinline__ float
column_smooth (const float *__restrict__ tmp, size_t i, int width, int height, int step)
{
  if (height == 1)
    return tmp[i];
  int px = (int) (i % width), py = (int) (i / width);
  float v[5];
  for (int t = -2; t <= 2; t++)
    v[t + 2] = tmp[(size_t) wrap (py + t * step, height) * width + px];
  return b3_sum (v[0], v[1], v[2], v[3], v[4]);
}

/* Scale j + 1: c = h_j * c_j from the row pass's TMP, w = c_j − c; C_NEXT (or
 * NULL at the last scale) keeps c; the split z = soft(w + ν, t r), ν += τ(w − z),
 * U = z − ν. REWEIGHT NULL: r = 1. */
__global__ void
starlet_forward_column_kernel (const float *__restrict__ tmp, const float *__restrict__ c_j,
                               float *__restrict__ c_next, float *__restrict__ z,
                               float *__restrict__ nu, const float *__restrict__ reweight,
                               float *__restrict__ u, int width, int height, int step,
                               float threshold, float tau)
{
  const size_t n = (size_t) width * height;
  STARLET_LOOP (i, n)
    {
      float c = column_smooth (tmp, i, width, height, step);
      if (c_next)
        c_next[i] = c;
      float w = c_j[i] - c, m = nu[i];
      float t = reweight ? threshold * reweight[i] : threshold;
      float b = w + m;
      float zi = copysignf (fmaxf (fabsf (b) - t, 0.0f), b);
      m += tau * (w - zi);
      nu[i] = m;
      z[i] = zi;
      u[i] = zi - m;
    }
}

/* A_j = u_j + h_{j−1} * (A_{j+1} − u_j), from the row pass's TMP; into A, or
 * added to SUM (the last scale). */
__global__ void
starlet_adjoint_column_kernel (const float *__restrict__ tmp, const float *__restrict__ u,
                               float *__restrict__ a, float *__restrict__ sum, int width,
                               int height, int step)
{
  const size_t n = (size_t) width * height;
  STARLET_LOOP (i, n)
    {
      float v = u[i] + column_smooth (tmp, i, width, height, step);
      if (sum)
        sum[i] += v;
      else
        a[i] = v;
    }
}

/* ε_j/(ε_j + |z_j|) for every scale (ss-cpu-admm-prior.c's update_reweights). */
__global__ void
starlet_reweight_kernel (float *__restrict__ reweight, const float *__restrict__ z, size_t n,
                         SsCudaStarletSplits splits)
{
  STARLET_LOOP (i, n * splits.scales)
    {
      float eps = splits.eps[i / n];
      reweight[i] = eps / (eps + fabsf (z[i]));
    }
}

gboolean
ss_cuda_starlet_splits (SsCudaContext *ctx, const SsCudaStarletSplits *s, const float *x,
                        int width, int height, float tau, GError **error)
{
  size_t n = (size_t) width * height;
  unsigned blocks = ss_cuda_blocks (ctx, n);
  const float *c = x;
  for (int j = 0; j < s->scales; j++)
    {
      int step = 1 << j;
      /* c_{j+1} alternates between the two smoothing buffers. */
      float *next = j + 1 < s->scales ? s->smooth[j % 2] : NULL;
      starlet_row_kernel<<<blocks, SS_CUDA_THREADS, 0, ctx->stream>>> (c, NULL, s->tmp, width,
                                                                       height, step);
      starlet_forward_column_kernel<<<blocks, SS_CUDA_THREADS, 0, ctx->stream>>> (
        s->tmp, c, next, s->z + j * n, s->nu + j * n, s->reweight ? s->reweight + j * n : NULL,
        s->u + j * n, width, height, step, s->threshold[j], tau);
      if (!LAUNCH_OK ("starlet forward kernels"))
        return FALSE;
      c = next;
    }
  return TRUE;
}

gboolean
ss_cuda_starlet_adjoint_add (SsCudaContext *ctx, const SsCudaStarletSplits *s, float *sum,
                             int width, int height, GError **error)
{
  size_t n = (size_t) width * height;
  unsigned blocks = ss_cuda_blocks (ctx, n);
  const float *a = NULL;   /* A_{J+1} = 0 */
  for (int j = s->scales - 1; j >= 0; j--)
    {
      int step = 1 << j;
      float *next = j > 0 ? s->smooth[j % 2] : NULL;
      starlet_row_kernel<<<blocks, SS_CUDA_THREADS, 0, ctx->stream>>> (a, s->u + j * n, s->tmp,
                                                                       width, height, step);
      starlet_adjoint_column_kernel<<<blocks, SS_CUDA_THREADS, 0, ctx->stream>>> (
        s->tmp, s->u + j * n, next, j > 0 ? NULL : sum, width, height, step);
      if (!LAUNCH_OK ("starlet adjoint kernels"))
        return FALSE;
      a = next;
    }
  return TRUE;
}

gboolean
ss_cuda_starlet_reweight (SsCudaContext *ctx, const SsCudaStarletSplits *s, size_t n,
                          GError **error)
{
  starlet_reweight_kernel<<<ss_cuda_blocks (ctx, n * s->scales), SS_CUDA_THREADS, 0,
                            ctx->stream>>> (s->reweight, s->z, n, *s);
  return LAUNCH_OK ("starlet_reweight_kernel");
}

double
ss_cuda_starlet_iteration_bytes (int scales, gboolean reweighted, size_t n)
{
  /* A scale forward: the row pass reads c and writes tmp; the column pass
   * reads tmp, c_j, z, ν (and r) and writes c, z, ν, u. Its adjoint: the
   * row pass reads A and u and writes tmp; the column pass reads tmp and u
   * and writes A (the last one reads and writes the sum). */
  double forward = 2 + 4 + (reweighted ? 1 : 0) + 4, adjoint = 3 + 3;
  return (double) n * 4 * scales * (forward + adjoint);
}
