// Functions shared by a CPU loop and a CUDA kernel: host-and-device under nvcc, and on the host
// always inlined — the CPU loops are built per ISA (kernels/cpu/simd.h) and vectorize only with
// their helpers inlined into each clone.
#pragma once

#if defined(__CUDACC__)
#define MINRNN_SHARED_INLINE __host__ __device__ __forceinline__
#else
#define MINRNN_SHARED_INLINE inline __attribute__((always_inline))
#endif
