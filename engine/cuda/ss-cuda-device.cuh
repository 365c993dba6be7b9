/* ss-cuda-device.cuh: device helpers shared by the kernels (inline, so each
 * .cu file compiles on its own without relocatable device code). */
#pragma once

#include <cuda_runtime.h>

/* soft(a, t) = sign(a) max(|a| - t, 0); with non-negativity max(a - t, 0). */
__device__ __forceinline__ float
ss_soft (float a, float t, bool nonneg)
{
  if (nonneg)
    return fmaxf (a - t, 0.0f);
  float m = fmaxf (fabsf (a) - t, 0.0f);
  return copysignf (m, a);
}

__device__ __forceinline__ double
ss_warp_sum (double v)
{
  for (int offset = 16; offset > 0; offset >>= 1)
    v += __shfl_down_sync (0xffffffffu, v, offset);
  return v;
}

/* Sums N per-thread values over the block and adds them to OUT[0..N) with one
 * atomic per block and value. Every thread of the block must call it. */
template <int N>
__device__ __forceinline__ void
ss_block_sum_to (double (&v)[N], double *out)
{
  __shared__ double partial[32][N];
  int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
#pragma unroll
  for (int j = 0; j < N; j++)
    v[j] = ss_warp_sum (v[j]);
  if (lane == 0)
#pragma unroll
    for (int j = 0; j < N; j++)
      partial[warp][j] = v[j];
  __syncthreads ();
  if (warp == 0)
    {
      int warps = (blockDim.x + 31) >> 5;
#pragma unroll
      for (int j = 0; j < N; j++)
        {
          double s = lane < warps ? partial[lane][j] : 0.0;
          s = ss_warp_sum (s);
          if (lane == 0 && s != 0.0)
            atomicAdd (out + j, s);
        }
    }
}

/* A counter-based hash (splitmix-style) to draw reproducible random numbers
 * on the device without state. */
__device__ __forceinline__ unsigned int
ss_hash (unsigned long long x)
{
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  x ^= x >> 31;
  return (unsigned int) (x >> 32);
}

__device__ __forceinline__ float
ss_uniform (unsigned long long key)
{
  return (ss_hash (key) >> 8) * (1.0f / 16777216.0f);
}

__device__ __forceinline__ float2
ss_cmul (float2 a, float2 b)
{
  return make_float2 (a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x);
}

/* conj(a) * b */
__device__ __forceinline__ float2
ss_cmulc (float2 a, float2 b)
{
  return make_float2 (a.x * b.x + a.y * b.y, a.x * b.y - a.y * b.x);
}
