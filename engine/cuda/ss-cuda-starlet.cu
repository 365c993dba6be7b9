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
 * Each smoothing is one kernel over 32 × 32 tiles: the tile and its halo
 * (2 steps each side, wrapped) go to shared memory, the row pass stays there,
 * the column pass and the step's own work follow. So a scale reads its
 * input once from memory (the halos come from L2) and writes only what the
 * next step needs: 4J + 2 image passes an iteration besides CPADMM's.
 */
#include "ss-cuda-internal.h"

#define STARLET_LOOP(i, n) \
  for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < (n); \
       i += (size_t) gridDim.x * blockDim.x)

#define TILE 32
#define TILE_ROWS 8          /* threads along y; each does TILE / TILE_ROWS rows */
#define HALO_MAX (2 << (SS_STARLET_SCALES - 1))   /* 2 steps of the coarsest scale */
#define SPAN_MAX (TILE + 2 * HALO_MAX)

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

/* One smoothing at STEP and what follows it, for a scale j.
 * Forward: the input is c_j; C_NEXT (NULL at the last scale) gets the
 * smoothing, and the split of w = c_j − it updates NU (Z when not NULL,
 * thresholds scaled by REWEIGHT when not NULL) and writes U.
 * Adjoint: the input is A − U (A NULL: 0); the output U + smoothing goes to
 * C_NEXT, or is added to SUM. */
typedef struct {
  const float *in, *a;
  float *c_next, *z, *nu, *u, *sum;
  const float *reweight;
  int width, height, step;
  float threshold, tau;
} StarletPass;

template <bool FORWARD>
__global__ void
starlet_tile_kernel (StarletPass pass)
{
  __shared__ float tile[SPAN_MAX][SPAN_MAX];
  __shared__ float rows[SPAN_MAX][TILE];
  const int w = pass.width, h = pass.height, step = pass.step, halo = 2 * step;
  const int span = TILE + 2 * halo, x0 = blockIdx.x * TILE, y0 = blockIdx.y * TILE;
  /* Most tiles and their halos lie inside the image: they need no wrapping,
   * whose two integer divisions a load would otherwise cost. */
  const bool inside = x0 >= halo && y0 >= halo && x0 + TILE + halo <= w && y0 + TILE + halo <= h;
  for (int ty = threadIdx.y; ty < span; ty += blockDim.y)
    {
      int gy = y0 - halo + ty;
      size_t row = (size_t) (inside ? gy : wrap (gy, h)) * w;
      for (int tx = threadIdx.x; tx < span; tx += blockDim.x)
        {
          int gx = x0 - halo + tx;
          size_t g = row + (inside ? gx : wrap (gx, w));
          tile[ty][tx] = FORWARD ? pass.in[g] : (pass.a ? pass.a[g] : 0.0f) - pass.u[g];
        }
    }
  __syncthreads ();
  for (int ty = threadIdx.y; ty < span; ty += blockDim.y)
    {
      int cx = threadIdx.x + halo;
      const float *t = tile[ty];
      rows[ty][threadIdx.x] = b3_sum (t[cx - 2 * step], t[cx - step], t[cx], t[cx + step],
                                      t[cx + 2 * step]);
    }
  __syncthreads ();
  const int gx = x0 + threadIdx.x;
  if (gx >= w)
    return;
  for (int ty = threadIdx.y; ty < TILE && y0 + ty < h; ty += blockDim.y)
    {
      int cy = ty + halo;
      const int tx = threadIdx.x;
      /* A row image (height 1) is not smoothed along y. */
      float smooth = h == 1 ? rows[cy][tx]
                            : b3_sum (rows[cy - 2 * step][tx], rows[cy - step][tx], rows[cy][tx],
                                      rows[cy + step][tx], rows[cy + 2 * step][tx]);
      size_t g = (size_t) (y0 + ty) * w + gx;
      if (FORWARD)
        {
          if (pass.c_next)
            pass.c_next[g] = smooth;
          float wj = tile[cy][tx + halo] - smooth, m = pass.nu[g];
          float t = pass.reweight ? pass.threshold * pass.reweight[g] : pass.threshold;
          float b = wj + m;
          float zi = copysignf (fmaxf (fabsf (b) - t, 0.0f), b);
          m += pass.tau * (wj - zi);
          pass.nu[g] = m;
          if (pass.z)
            pass.z[g] = zi;
          pass.u[g] = zi - m;
        }
      else
        {
          float v = pass.u[g] + smooth;
          if (pass.sum)
            pass.sum[g] += v;
          else
            pass.c_next[g] = v;
        }
    }
}

static dim3
tile_grid (int width, int height)
{
  return dim3 ((unsigned) ((width + TILE - 1) / TILE), (unsigned) ((height + TILE - 1) / TILE));
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
                           s->u + j * n, NULL, s->reweight ? s->reweight + j * n : NULL,
                           width, height, 1 << j, s->threshold[j], tau };
      starlet_tile_kernel<true><<<tile_grid (width, height), dim3 (TILE, TILE_ROWS), 0,
                                  ctx->stream>>> (pass);
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
      StarletPass pass = { NULL, a, next, NULL, NULL, s->u + j * n, j > 0 ? NULL : sum, NULL,
                           width, height, 1 << j, 0.0f, 0.0f };
      starlet_tile_kernel<false><<<tile_grid (width, height), dim3 (TILE, TILE_ROWS), 0,
                                   ctx->stream>>> (pass);
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
ss_cuda_starlet_iteration_bytes (int scales, gboolean reweighted, size_t n)
{
  /* A scale forward reads c_j and ν (and r) and writes c_{j+1} (not at the
   * last scale), ν and u (and z); its adjoint reads A (not at the coarsest
   * scale) and u and writes the next A (the finest reads and writes the
   * numerator instead). */
  double forward = 2 + 3 + (reweighted ? 2 : 0), adjoint = 3;
  return (double) n * 4 * (scales * (forward + adjoint) - 1);
}
