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
 * instead of reading ν and writing ν and u: a pass fewer a scale. The
 * merged scales 0 and 1 also go as a pair, one kernel each way
 * (starlet_pair_kernel), whose middle image stays on chip.
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
 *
 * A smoothing at step s only mixes rows s apart, so the coarser scales'
 * tiles take every s-th row (one phase of the rows): a 32-row tile's
 * y-halo is then 2 rows instead of 2s, and a step-8 tile loads 64 × 36
 * pixels instead of 64 × 64. Rows stay whole in x, so the loads stay
 * coalesced.
 */
#include "ss-cuda-internal.h"
#include "ss-cuda-device.cuh"

#define STARLET_LOOP(i, n) \
  for (size_t i = blockIdx.x * (size_t) blockDim.x + threadIdx.x; i < (n); \
       i += (size_t) gridDim.x * blockDim.x)

#define BLOCK_THREADS 256
/* How many blocks of a merged split's pair and phased tiles an SM must
 * hold, which caps their registers at 65536 / (256 · blocks): forward 6 (40
 * registers), adjoint 8 (32). Left to the compiler they took 43–54
 * registers, so an SM held 4–5 blocks, half its warps, and the tiles waited
 * on their loads with nothing else to run. At 4096² on the H200 an admm
 * iteration with the starlet prior went from 1.631 to 1.455 ms (CPADMM
 * 0.729 ms in the same call); forward, 5 blocks gave 1.463 ms, 4 gave 1.501,
 * and 8 spill. The rest (0: the compiler's choice) spill at these counts or
 * are not the default's: unphased tiles (a row image, or a split too short
 * for the pair) and the unmerged split (reweighting, τ ≠ 1). */
template <bool FORWARD, bool MERGED, bool PHASED>
constexpr int
min_blocks ()
{
  return !MERGED || !PHASED ? 0 : FORWARD ? 6 : 8;
}

__device__ __forceinline__ int
wrap (int v, int size)
{
  v %= size;
  return v < 0 ? v + size : v;
}

/* u = z − ν' of a merged scale's b: 2 S(b) − b, S the soft threshold. */
__device__ __forceinline__ float
merged_u (float b, float t)
{
  return 2.0f * ss_soft (b, t, false) - b;
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
 * 2·STEP each side; along y 2 rows when PHASED), with BLOCK_THREADS
 * threads: TW across, the rest down. */
template <bool FORWARD, bool MERGED, int TW, int TH, int STEP, bool PHASED>
__global__ void
__launch_bounds__ (BLOCK_THREADS, (min_blocks<FORWARD, MERGED, PHASED && (STEP > 1)> ()))
starlet_tile_kernel (StarletPass pass)
{
  /* PHASED: the tile's rows are STEP apart (one phase of the rows), so its
   * y-neighbours are the adjacent tile rows and its y-halo 2 rows. */
  constexpr int YSTEP = PHASED ? 1 : STEP, PHASES = PHASED ? STEP : 1;
  constexpr int HALO = 2 * STEP, YHALO = 2 * YSTEP;
  constexpr int SW = TW + 2 * HALO, SH = TH + 2 * YHALO;
  __shared__ float tile[SH][SW];
  __shared__ float rows[SH][TW];
  constexpr int BY = BLOCK_THREADS / TW;   /* threads down a column */
  constexpr int LOAD_ROWS = (SH + BY - 1) / BY, LOAD_COLS = (SW + TW - 1) / TW;
  const int w = pass.width, h = pass.height;
  const int x0 = blockIdx.x * TW;
  /* Tile row ty (halo included) is image row phase + STEP/YSTEP · (q0 + ty). */
  const int phase = blockIdx.y % PHASES, q0 = (int) (blockIdx.y / PHASES) * TH - YHALO;
  auto row_of = [&] (int ty) { return phase + (STEP / YSTEP) * (q0 + ty); };
  /* Most tiles and their halos lie inside the image: they need no wrapping,
   * whose two integer divisions a load would otherwise cost. */
  const bool inside = x0 >= HALO && x0 + TW + HALO <= w && row_of (0) >= 0 && row_of (SH - 1) < h;
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
        int gy = row_of (ty), gx = x0 - HALO + tx;
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
      int gy = row_of (threadIdx.y + k * BY + YHALO);
      if (gx >= w || gy >= h)
        continue;
      size_t g = (size_t) gy * w + gx;
      own[k] = FORWARD ? pass.nu[g] : MERGED ? merged_u (pass.nu[g], pass.threshold) : pass.u[g];
      /* A merged split is never reweighted (ss-cuda-admm-prior.cu). */
      if (!FORWARD)
        other[k] = pass.sum ? pass.sum[g] : 0.0f;
      else if (!MERGED)
        other[k] = pass.reweight ? pass.reweight[g] : 1.0f;
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
      int ty = threadIdx.y + k * BY, cy = ty + YHALO, gy = row_of (cy);
      if (gy >= h)
        break;
      const int tx = threadIdx.x;
      /* A row image (height 1) is not smoothed along y. */
      float smooth = h == 1 ? rows[cy][tx]
                            : b3_sum (rows[cy - 2 * YSTEP][tx], rows[cy - YSTEP][tx],
                                      rows[cy][tx], rows[cy + YSTEP][tx],
                                      rows[cy + 2 * YSTEP][tx]);
      size_t g = (size_t) gy * w + gx;
      if (FORWARD)
        {
          if (pass.c_next)
            pass.c_next[g] = smooth;
          float wj = tile[cy][tx + HALO] - smooth;
          float t = MERGED ? pass.threshold : pass.threshold * other[k];
          if (MERGED)
            {
              /* own is the previous b: ν = b − S(b). */
              pass.nu[g] = wj + (own[k] - ss_soft (own[k], t, false));
              continue;
            }
          float m = own[k], b = wj + m;
          float zi = ss_soft (b, t, false);
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
template <bool FORWARD, bool MERGED, int STEP, bool PHASED>
static void
launch_phased (const StarletPass &pass, cudaStream_t stream)
{
  constexpr int TW = 32, TH = 32, PHASES = PHASED ? STEP : 1;
  /* Each phase's rows, PHASES · TH rows a tile row. */
  int phase_rows = (pass.height + PHASES - 1) / PHASES;
  dim3 grid ((unsigned) ((pass.width + TW - 1) / TW),
             (unsigned) (PHASES * ((phase_rows + TH - 1) / TH)));
  starlet_tile_kernel<FORWARD, MERGED, TW, TH, STEP, PHASED>
    <<<grid, dim3 (TW, BLOCK_THREADS / TW), 0, stream>>> (pass);
}
/* Every step but the finest goes by phases (above): a step-8 tile loads
 * 64 × 36 pixels instead of 64 × 64. On the H100 at 4096², an admm
 * iteration with the starlet prior went from 1.909 to 1.790 ms with the
 * steps 4 and 8 phased, 1.792 with step 2 too (1.969 to 1.847 without
 * pairs, where step 2 is a kernel of its own). */
template <bool FORWARD, bool MERGED, int STEP>
static void
launch_step (const StarletPass &pass, cudaStream_t stream)
{
  if (STEP > 1 && pass.height > 1)
    launch_phased<FORWARD, MERGED, STEP, true> (pass, stream);
  else
    launch_phased<FORWARD, MERGED, STEP, false> (pass, stream);
}

template <bool FORWARD, bool MERGED>
static void
launch_at_scale (const StarletPass &pass, int scale, cudaStream_t stream)
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
    launch_at_scale<FORWARD, true> (pass, scale, stream);
  else
    launch_at_scale<FORWARD, false> (pass, scale, stream);
}

/* Two neighbouring scales of a merged split in one kernel: the smoothing at
 * step S then at 2S (forward, scales j and j + 1), or at 2S then at S
 * (adjoint, j + 1 then j), the image between the two kept in shared memory.
 * The pair's middle image (c_{j+1} forward, A_{j+1} adjoint) never goes to
 * memory: two image passes fewer a pair. A tile loads its input
 * with both halos (2S + 4S each side), as many loads from L2 as the two
 * scales' own tiles make.
 * Forward: IN is c_j; B0, B1 the scales' b, C_NEXT (or NULL) gets c_{j+2}.
 * Adjoint: A is A_{j+2} (NULL: 0); A_j is added to SUM (the pair is the
 * finest two scales). */
typedef struct {
  const float *in, *a;
  float *b0, *b1, *c_next, *sum;
  float t0, t1;   /* the scales' thresholds */
  int width, height;
} StarletPair;

template <bool FORWARD, int S, int TW, int TH>
__global__ void __launch_bounds__ (BLOCK_THREADS, (min_blocks<FORWARD, true, true> ()))
starlet_pair_kernel (StarletPair pair)
{
  constexpr int BY = BLOCK_THREADS / TW;
  constexpr int SA = FORWARD ? S : 2 * S, SB = FORWARD ? 2 * S : S;   /* the two steps */
  constexpr int HA = 2 * SA, HB = 2 * SB;
  constexpr int MW = TW + 2 * HB, MH = TH + 2 * HB;   /* the middle image */
  constexpr int LW = MW + 2 * HA, LH = MH + 2 * HA;   /* the input with both halos */
  constexpr int LOADS = (LW * LH + BLOCK_THREADS - 1) / BLOCK_THREADS;
  constexpr int MIDS = (MW * MH + BLOCK_THREADS - 1) / BLOCK_THREADS;
  constexpr int OUT_ROWS = TH / BY;
  /* The input, then the middle image; the first row pass, then the second. */
  __shared__ float big[LH * LW];
  __shared__ float rows[LH * MW];
  const int w = pair.width, h = pair.height;
  const int x0 = blockIdx.x * TW, y0 = blockIdx.y * TH;
  const int tid = threadIdx.y * TW + threadIdx.x;
  const bool inside = x0 >= HA + HB && y0 >= HA + HB && x0 + TW + HA + HB <= w
                      && y0 + TH + HA + HB <= h;
  /* Every load first (the tile kernel above says why). */
  float v[LOADS];
#pragma unroll
  for (int r = 0; r < LOADS; r++)
    {
      int i = tid + r * BLOCK_THREADS;
      if (i >= LW * LH)
        continue;
      int gy = y0 - HA - HB + i / LW, gx = x0 - HA - HB + i % LW;
      size_t g = inside ? (size_t) gy * w + gx : (size_t) wrap (gy, h) * w + wrap (gx, w);
      v[r] = FORWARD ? pair.in[g] : (pair.a ? pair.a[g] : 0.0f) - merged_u (pair.b1[g], pair.t1);
    }
  /* Adjoint: u_{j+1} − u_j where the middle image lies (one register an
   * element instead of two: the kernel runs 8 blocks an SM, 32 registers). */
  float mid_du[MIDS];
  if (!FORWARD)
#pragma unroll
    for (int r = 0; r < MIDS; r++)
      {
        int i = tid + r * BLOCK_THREADS;
        if (i >= MW * MH)
          continue;
        int gy = y0 - HB + i / MW, gx = x0 - HB + i % MW;
        size_t g = inside ? (size_t) gy * w + gx : (size_t) wrap (gy, h) * w + wrap (gx, w);
        mid_du[r] = merged_u (pair.b1[g], pair.t1) - merged_u (pair.b0[g], pair.t0);
      }
  const int gx = x0 + threadIdx.x;
  float own0[OUT_ROWS], own1[OUT_ROWS];   /* forward: b_j, b_{j+1}; adjoint: b_j, sum */
#pragma unroll
  for (int k = 0; k < OUT_ROWS; k++)
    {
      int gy = y0 + threadIdx.y + k * BY;
      if (gx >= w || gy >= h)
        continue;
      size_t g = (size_t) gy * w + gx;
      own0[k] = pair.b0[g];
      own1[k] = FORWARD ? pair.b1[g] : pair.sum[g];
    }
#pragma unroll
  for (int r = 0; r < LOADS; r++)
    {
      int i = tid + r * BLOCK_THREADS;
      if (i < LW * LH)
        big[i] = v[r];
    }
  __syncthreads ();
  /* The first smoothing along x, over the input's rows; forward, c_j at the
   * thread's own pixels too, before BIG is overwritten. */
  for (int i = tid; i < LH * MW; i += BLOCK_THREADS)
    {
      const float *t = big + (i / MW) * LW + i % MW + HA;
      rows[i] = b3_sum (t[-2 * SA], t[-SA], t[0], t[SA], t[2 * SA]);
    }
  float c_own[OUT_ROWS];
  if (FORWARD)
#pragma unroll
    for (int k = 0; k < OUT_ROWS; k++)
      c_own[k] = big[(threadIdx.y + k * BY + HA + HB) * LW + threadIdx.x + HA + HB];
  __syncthreads ();
  /* Along y, into the middle image: c_{j+1}, or A_{j+1} − u_j. */
#pragma unroll
  for (int r = 0; r < MIDS; r++)
    {
      int i = tid + r * BLOCK_THREADS;
      if (i >= MW * MH)
        continue;
      const float *t = rows + (i / MW + HA) * MW + i % MW;
      float smooth = b3_sum (t[-2 * SA * MW], t[-SA * MW], t[0], t[SA * MW], t[2 * SA * MW]);
      if (FORWARD)
        big[i] = smooth;
      else
        big[i] = mid_du[r] + smooth;
    }
  __syncthreads ();
  /* The second smoothing along x; forward, c_{j+1} at the own pixels. */
  for (int i = tid; i < MH * TW; i += BLOCK_THREADS)
    {
      const float *t = big + (i / TW) * MW + i % TW + HB;
      rows[i] = b3_sum (t[-2 * SB], t[-SB], t[0], t[SB], t[2 * SB]);
    }
  float mid_own[OUT_ROWS];
  if (FORWARD)
#pragma unroll
    for (int k = 0; k < OUT_ROWS; k++)
      mid_own[k] = big[(threadIdx.y + k * BY + HB) * MW + threadIdx.x + HB];
  __syncthreads ();
  if (gx >= w)
    return;
#pragma unroll
  for (int k = 0; k < OUT_ROWS; k++)
    {
      int ty = threadIdx.y + k * BY;
      if (y0 + ty >= h)
        break;
      const float *t = rows + (ty + HB) * TW + threadIdx.x;
      float smooth = b3_sum (t[-2 * SB * TW], t[-SB * TW], t[0], t[SB * TW], t[2 * SB * TW]);
      size_t g = (size_t) (y0 + ty) * w + gx;
      if (FORWARD)
        {
          /* w_j = c_j − c_{j+1}, w_{j+1} = c_{j+1} − c_{j+2}; b ← w + (b − S(b)). */
          if (pair.c_next)
            pair.c_next[g] = smooth;
          pair.b0[g] = (c_own[k] - mid_own[k]) + (own0[k] - ss_soft (own0[k], pair.t0, false));
          pair.b1[g] = (mid_own[k] - smooth) + (own1[k] - ss_soft (own1[k], pair.t1, false));
        }
      else
        pair.sum[g] = own1[k] + merged_u (own0[k], pair.t0) + smooth;
    }
}

/* Scales 0 and 1 as a pair, 32 × 32 tiles each way. H100, 4096², admm with
 * the starlet prior, the pair forward: 1.921 ms/it at 32 × 32 (1.922–1.939
 * at 64 × 16, 64 × 32, 32 × 16, 32 × 64; 1.982 without the pair). The
 * adjoint was best at 32 × 16 (1.939 ms/it) while the compiler chose its
 * registers; at 8 blocks an SM (min_blocks) 32 × 32 is: H200, 1.455 ms/it
 * against 1.486 at 32 × 16 (and 64 × 16 forward, 1.466). Scales 2 and 3 are
 * not paired: their pair, whose middle image is 64 × 64 for a 32 × 32 tile,
 * smooths twice the pixels the two kernels do and was slower each way
 * (2.111 and 2.451 ms/it). */
template <bool FORWARD>
static void
launch_pair (const StarletPair &pair, cudaStream_t stream)
{
  constexpr int TW = 32, TH = 32;
  dim3 grid ((unsigned) ((pair.width + TW - 1) / TW), (unsigned) ((pair.height + TH - 1) / TH));
  starlet_pair_kernel<FORWARD, 1, TW, TH>
    <<<grid, dim3 (TW, BLOCK_THREADS / TW), 0, stream>>> (pair);
}

/* The smoothing buffer a pass writes: the one it does not read (the image
 * smoothed, or A, alternate between the two). */
static float *
other_buffer (const SsCudaStarletSplits *s, const float *reading)
{
  return reading == s->smooth[0] ? s->smooth[1] : s->smooth[0];
}

/* Merged scales 0 and 1 go as a pair where the image has rows to smooth
 * along y (the pair kernel always smooths both ways). */
static gboolean
pair_applies (gboolean merged, int scales, int height)
{
  return merged && height > 1 && scales >= 2;
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
  int j = 0;
  if (pair_applies (s->merged, s->scales, height))
    {
      /* Scales 0 and 1; c_2 for the next scale, if any. */
      float *next = s->scales > 2 ? other_buffer (s, c) : NULL;
      StarletPair pair = { c, NULL, s->nu, s->nu + n, next, NULL, s->threshold[0],
                           s->threshold[1], width, height };
      launch_pair<true> (pair, ctx->stream);
      if (!LAUNCH_OK ("starlet_pair_kernel (forward)"))
        return FALSE;
      c = next;
      j = 2;
    }
  for (; j < s->scales; j++)
    {
      float *next = j + 1 < s->scales ? other_buffer (s, c) : NULL;
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
  gboolean paired = pair_applies (s->merged, s->scales, height);
  for (int j = s->scales - 1; j >= (paired ? 2 : 0); j--)
    {
      float *next = j > 0 ? other_buffer (s, a) : NULL;
      StarletPass pass = { NULL, a, next, NULL, s->merged ? s->nu + j * n : NULL,
                           s->merged ? NULL : s->u + j * n, j > 0 ? NULL : sum, NULL,
                           width, height, s->merged ? s->threshold[j] : 0.0f, 0.0f };
      launch_scale<false> (pass, s->merged, j, ctx->stream);
      if (!LAUNCH_OK ("starlet_tile_kernel (adjoint)"))
        return FALSE;
      a = next;
    }
  if (paired)
    {
      /* Scales 1 and 0, from A_2 (or 0) into SUM. */
      StarletPair pair = { NULL, a, s->nu, s->nu + n, NULL, sum, s->threshold[0],
                           s->threshold[1], width, height };
      launch_pair<false> (pair, ctx->stream);
      if (!LAUNCH_OK ("starlet_pair_kernel (adjoint)"))
        return FALSE;
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
ss_cuda_starlet_iteration_bytes (int scales, gboolean reweighted, gboolean merged,
                                 int width, int height)
{
  /* A scale forward reads c_j and ν (and r) and writes c_{j+1} (not at the
   * last scale), ν and u (and z); merged, it reads c_j and b and writes
   * c_{j+1} and b. Its adjoint reads A (not at the coarsest scale) and u (b)
   * and writes the next A (the finest reads and writes the numerator
   * instead). The pair of merged scales 0 and 1 reads and writes its
   * middle image in neither direction. */
  double forward = merged ? 2 + 2 : 2 + 3 + (reweighted ? 2 : 0), adjoint = 3;
  int pairs = pair_applies (merged, scales, height) ? 1 : 0;
  return (double) width * height * 4 * (scales * (forward + adjoint) - 1 - pairs * 4);
}
