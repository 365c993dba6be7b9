/* ss-host-device.h: one spelling for the small functions that the CPU
 * solvers and the CUDA kernels share (ss-rl-tv.h, ss-data-weights.h,
 * ss-rl-holdout.h), so both backends compute them from one definition. */
#pragma once

#ifdef __CUDACC__
#define SS_HOST_DEVICE_FN __host__ __device__ __forceinline__
#else
#define SS_HOST_DEVICE_FN static inline
#endif
