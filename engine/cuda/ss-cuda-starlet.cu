/* ss-cuda-starlet.cu: the starlet splits of admm on the GPU, with à trous
 * stencils instead of the CPU's Fourier filters (ss-starlet.h has the
 * transform; ss-cpu-admm-prior.c the splits).
 *
 * Forward, fused with the splits' prox: c_0 = x, c_{j+1} = h_j * c_j (the
 * B3 kernel (1 4 6 4 1)/16 with 2^j − 1 holes along each axis, periodic),
 * w_{j+1} = c_j − c_{j+1}; then the split: w + ν soft-thresholded into z, ν
 * stepped, and u = z − ν written, the numerator's input. No scale is
 * stored (z only when reweighting needs it).
 *
 * Adjoint: every ψ_j = φ_{j−1} − φ_j = φ_{j−1} * (δ − h_{j−1}) is symmetric,
 * so Σ_j ψ_jᵀ u_j = Σ_j φ_{j−1} * (u_j − h_{j−1} * u_j), which Horner's rule
 * evaluates from the coarsest scale with one smoothing a scale:
 *
 *   A_{J+1} = 0,   A_j = u_j + h_{j−1} * (A_{j+1} − u_j),   Σ_j ψ_jᵀ u_j = A_1,
 *
 * and A_1 is added to the x-update's numerator image in the last pass.
 *
 * With the dual step τ = 1 and no reweighting (the defaults) a scale keeps
 * one image instead of two: b = w + ν, the shrinkage's input. The split's
 * step is z = S(b), ν' = ν + w − z = b − z, so both what the adjoint wants,
 * u = z − ν' = 2 S(b) − b, and the next iteration's ν' = b − S(b) are b's
 * (S the soft threshold); each forward pass then reads b and writes b
 * instead of reading ν and writing ν and u: a pass fewer a scale.
 *
 * Each smoothing is one kernel over 32 × 32 tiles: the tile and its halo
 * (2 steps each side, wrapped) go to shared memory, the row pass stays there,
 * the column pass and the step's own work follow. So a scale reads its
 * input once from memory (the halos come from L2) and writes only what the
 * next step needs: 4J + 2 image passes an iteration besides CPADMM's.
 * A scale's kernel is compiled for its step, and each thread issues all its
 * loads (its share of the tile and halo, its own pixels' operands) before it
 * stores any: the kernels wait on their loads (Nsight Compute: long
 * scoreboard stalls, 63% of DRAM bandwidth), and this took an admm
 * iteration at 4096² from 2.146 to 2.112 ms on the H100.
 */
#include "ss-cuda-internal.h"

#define STARLET_LOOP(i, n) \
  for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < (n); \
       i += (size_t) gridDim.x * blockDim.x)

#define BLOCK_THREADS 256

__device__ __forceinline__ int
wrap (int v, int size)
{
  v %= size;
  return v < 0 ? v + size : v;
}

/* The B3 taps at offsets −2..2 steps. */
/* The soft threshold S(b) at T. */
__device__ __forceinline__ float
soft (float b, float t)
{
  return copysignf (fmaxf (fabsf (b) - t, 0.0f), b);
}

/* u = z − ν' of a merged scale's b: 2 S(b) − b. */
__device__ __forceinline__ float
merged_u (float b, float t)
{
  return 2.0f * soft (b, t) - b;
}

__device__ __forceinline__ float
b3_sum (float m2, float m1, float c, float p1, float p2)
{
  return (m2 + p2) * (1.0f / 16) + (m1 + p1) * (4.0f / 16) + c * (6.0f / 16);
}

/* One smoothing at STEP and what follows it, for a scale j.
 * Forward: the input is c_j; C_NEXT (NULL at the last scale) gets the
 * smoothing, and the split of w = c_j − it updates NU (Z when not NULL,
 * thresholds scaled by REWEIGHT when not NULL) and writes U.
 * Adjoint: the input is A − U (A NULL: 0); the output U + smoothing goes to
 * C_NEXT, or is added to SUM.
 * MERGED: NU holds b (above) and U is not stored; the adjoint reads b from
 * NU and derives u with THRESHOLD. */
typedef struct {
  const float *in, *a;
  float *c_next, *z, *nu, *u, *sum;
  const float *reweight;
  int width, height;
  float threshold, tau;
} StarletPass;

/* A TW × TH tile of one scale whose smoothing steps STEP pixels (its halo
 * 2·STEP each side), with BLOCK_THREADS threads: TW across, the rest down. */
template <bool FORWARD, bool MERGED, int TW, int TH, int STEP>
__global__ void __launch_bounds__ (BLOCK_THREADS)
starlet_tile_kernel (StarletPass pass)
{
  constexpr int HALO = 2 * STEP, SW = TW + 2 * HALO, SH = TH + 2 * HALO;
  __shared__ float tile[SH][SW];
  __shared__ float rows[SH][TW];
  constexpr int BY = BLOCK_THREADS / TW;   /* threads down a column */
  constexpr int LOAD_ROWS = (SH + BY - 1) / BY, LOAD_COLS = (SW + TW - 1) / TW;
  const int w = pass.width, h = pass.height;
  const int x0 = blockIdx.x * TW, y0 = blockIdx.y * TH;
  /* Most tiles and their halos lie inside the image: they need no wrapping,
   * whose two integer divisions a load would otherwise cost. */
  const bool inside = x0 >= HALO && y0 >= HALO && x0 + TW + HALO <= w && y0 + TH + HALO <= h;
  /* Every load of the thread is issued before the first is stored: the
   * loads, not the smoothing, are what a scale waits on. */
  float v[LOAD_ROWS][LOAD_COLS];
#pragma unroll
  for (int r = 0; r < LOAD_ROWS; r++)
#pragma unroll
    for (int c = 0; c < LOAD_COLS; c++)
      {
        int ty = threadIdx.y + r * BY, tx = threadIdx.x + c * TW;
        if (ty >= SH || tx >= SW)
          continue;
        int gy = y0 - HALO + ty, gx = x0 - HALO + tx;
        size_t g = inside ? (size_t) gy * w + gx : (size_t) wrap (gy, h) * w + wrap (gx, w);
        float u = FORWARD ? 0.0f : MERGED ? merged_u (pass.nu[g], pass.threshold) : pass.u[g];
        v[r][c] = FORWARD ? pass.in[g] : (pass.a ? pass.a[g] : 0.0f) - u;
      }
  /* The thread's own pixels' operands too, before anything waits. */
  constexpr int OUT_ROWS = TH / BY;
  static_assert (TH % BY == 0, "a tile's rows split evenly between the threads");
  const int gx = x0 + threadIdx.x;
  float own[OUT_ROWS], other[OUT_ROWS];   /* forward: ν (b), reweight; adjoint: u, sum */
#pragma unroll
  for (int k = 0; k < OUT_ROWS; k++)
    {
      int gy = y0 + threadIdx.y + k * BY;
      if (gx >= w || gy >= h)
        continue;
      size_t g = (size_t) gy * w + gx;
      own[k] = FORWARD ? pass.nu[g] : MERGED ? merged_u (pass.nu[g], pass.threshold) : pass.u[g];
      if (FORWARD)
        other[k] = pass.reweight ? pass.reweight[g] : 1.0f;
      else
        other[k] = pass.sum ? pass.sum[g] : 0.0f;
    }
#pragma unroll
  for (int r = 0; r < LOAD_ROWS; r++)
#pragma unroll
    for (int c = 0; c < LOAD_COLS; c++)
      {
        int ty = threadIdx.y + r * BY, tx = threadIdx.x + c * TW;
        if (ty < SH && tx < SW)
          tile[ty][tx] = v[r][c];
      }
  __syncthreads ();
#pragma unroll
  for (int ty = threadIdx.y; ty < SH; ty += BY)
    {
      int cx = threadIdx.x + HALO;
      const float *t = tile[ty];
      rows[ty][threadIdx.x] = b3_sum (t[cx - 2 * STEP], t[cx - STEP], t[cx], t[cx + STEP],
                                      t[cx + 2 * STEP]);
    }
  __syncthreads ();
  if (gx >= w)
    return;
#pragma unroll
  for (int k = 0; k < OUT_ROWS; k++)
    {
      int ty = threadIdx.y + k * BY;
      if (y0 + ty >= h)
        break;
      int cy = ty + HALO;
      const int tx = threadIdx.x;
      /* A row image (height 1) is not smoothed along y. */
      float smooth = h == 1 ? rows[cy][tx]
                            : b3_sum (rows[cy - 2 * STEP][tx], rows[cy - STEP][tx], rows[cy][tx],
                                      rows[cy + STEP][tx], rows[cy + 2 * STEP][tx]);
      size_t g = (size_t) (y0 + ty) * w + gx;
      if (FORWARD)
        {
          if (pass.c_next)
            pass.c_next[g] = smooth;
          float wj = tile[cy][tx + HALO] - smooth, t = pass.threshold * other[k];
          if (MERGED)
            {
              /* own is the previous b: ν = b − S(b). */
              pass.nu[g] = wj + (own[k] - soft (own[k], t));
              continue;
            }
          float m = own[k], b = wj + m;
          float zi = soft (b, t);
          m += pass.tau * (wj - zi);
          pass.nu[g] = m;
          if (pass.z)
            pass.z[g] = zi;
          pass.u[g] = zi - m;
        }
      else
        {
          float v = own[k] + smooth;
          if (pass.sum)
            pass.sum[g] = other[k] + v;
          else
            pass.c_next[g] = v;
        }
    }
}

/* Larger tiles (64 × 32, 64 × 16, 128 × 16: fewer halo bytes) measured
 * slower at every scale on the H100 (2.25–2.87 ms an admm iteration at
 * 4096² against 2.11 ms), so every scale takes 32 × 32. */
template <bool FORWARD, bool MERGED, int STEP>
static void
launch_step (const StarletPass &pass, cudaStream_t stream)
{
  constexpr int TW = 32, TH = 32;
  dim3 grid ((unsigned) ((pass.width + TW - 1) / TW), (unsigned) ((pass.height + TH - 1) / TH));
  starlet_tile_kernel<FORWARD, MERGED, TW, TH, STEP>
    <<<grid, dim3 (TW, BLOCK_THREADS / TW), 0, stream>>> (pass);
}

template <bool FORWARD, bool MERGED>
static void
launch_merged (const StarletPass &pass, int scale, cudaStream_t stream)
{
  switch (scale)
    {
    case 0: launch_step<FORWARD, MERGED, 1> (pass, stream); break;
    case 1: launch_step<FORWARD, MERGED, 2> (pass, stream); break;
    case 2: launch_step<FORWARD, MERGED, 4> (pass, stream); break;
    default: launch_step<FORWARD, MERGED, 8> (pass, stream); break;
    }
}

template <bool FORWARD>
static void
launch_scale (const StarletPass &pass, gboolean merged, int scale, cudaStream_t stream)
{
  if (merged)
    launch_merged<FORWARD, true> (pass, scale, stream);
  else
    launch_merged<FORWARD, false> (pass, scale, stream);
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
  const float *c = x;
  for (int j = 0; j < s->scales; j++)
    {
      /* c_{j+1} alternates between the two smoothing buffers. */
      float *next = j + 1 < s->scales ? s->smooth[j % 2] : NULL;
      StarletPass pass = { c, NULL, next, s->reweight ? s->z + j * n : NULL, s->nu + j * n,
                           s->merged ? NULL : s->u + j * n, NULL,
                           s->reweight ? s->reweight + j * n : NULL, width, height,
                           s->threshold[j], tau };
      launch_scale<true> (pass, s->merged, j, ctx->stream);
      if (!LAUNCH_OK ("starlet_tile_kernel (forward)"))
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
  const float *a = NULL;   /* A_{J+1} = 0 */
  for (int j = s->scales - 1; j >= 0; j--)
    {
      float *next = j > 0 ? s->smooth[j % 2] : NULL;
      StarletPass pass = { NULL, a, next, NULL, s->merged ? s->nu + j * n : NULL,
                           s->merged ? NULL : s->u + j * n, j > 0 ? NULL : sum, NULL,
                           width, height, s->merged ? s->threshold[j] : 0.0f, 0.0f };
      launch_scale<false> (pass, s->merged, j, ctx->stream);
      if (!LAUNCH_OK ("starlet_tile_kernel (adjoint)"))
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
ss_cuda_starlet_iteration_bytes (int scales, gboolean reweighted, gboolean merged, size_t n)
{
  /* A scale forward reads c_j and ν (and r) and writes c_{j+1} (not at the
   * last scale), ν and u (and z); merged, it reads c_j and b and writes
   * c_{j+1} and b. Its adjoint reads A (not at the coarsest scale) and u (b)
   * and writes the next A (the finest reads and writes the numerator
   * instead). */
  double forward = merged ? 2 + 2 : 2 + 3 + (reweighted ? 2 : 0), adjoint = 3;
  return (double) n * 4 * (scales * (forward + adjoint) - 1);
}
