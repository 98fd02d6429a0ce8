// The GPU side of every phase program (kernels/cuda/phase_program.h): the __global__ phase loop and
// its launcher, shared by the scan kernels (kernels/cuda/scan.cu) and the dropout kernel
// (kernels/cuda/pointwise.cu).
#pragma once
#include <cuda_runtime_api.h>

#include "kernels/cuda/phase_program.h"

namespace minrnn::core::kernels {

// What separates phase p from p + 1 (kernels/cuda/phase_program.h). Every thread of the block gets
// here: no kernel returns early, so the barrier and the full-warp shuffle are legal.
template <typename Regs>
__device__ __forceinline__ void cross(grid::Step step, Regs& r) {
  if (step.boundary == grid::Boundary::kBarrier) {
    __syncthreads();
  } else if (step.boundary == grid::Boundary::kShuffleUp) {
    r.in.a = __shfl_up_sync(0xffffffffu, r.out.a, step.delta);
    r.in.b = __shfl_up_sync(0xffffffffu, r.out.b, step.delta);
  } else if (step.boundary == grid::Boundary::kShuffleXor) {
    r.in.a = __shfl_xor_sync(0xffffffffu, r.out.a, step.delta);
    r.in.b = __shfl_xor_sync(0xffffffffu, r.out.b, step.delta);
  }
}

// The whole GPU side of every kernel: the phase loop. Unrolled, each phase index is a constant
// and the phase's dispatch folds away.
template <typename K>
__global__ void __launch_bounds__(K::kThreads, grid::MinBlocksPerSm<K>::value) grid_kernel(K k) {
  __shared__ typename K::Shared shared;
  typename K::Regs regs{};
  const grid::Thread th{static_cast<int64_t>(blockIdx.x), static_cast<int>(threadIdx.x)};
  const int64_t rounds = k.rounds();
  for (int64_t round = 0; round < rounds; ++round) {
#pragma unroll
    for (int p = 0; p < K::kPhases; ++p) {
      k.phase(p, round, th, regs, shared);
      cross(K::step(p), regs);
    }
  }
}

struct Launch {
  cudaStream_t stream;
  cudaError_t* err;
  template <typename K>
  void operator()(const K& k) const {
    const int64_t blocks = k.blocks();
    if (blocks == 0) return;  // an empty batch
    grid_kernel<K><<<static_cast<unsigned>(blocks), K::kThreads, 0, stream>>>(k);
    *err = cudaGetLastError();
  }
};

// Launches `k` on `stream`: CUDA's error of the launch, or cudaSuccess.
template <typename K>
cudaError_t launch(const K& k, cudaStream_t stream) {
  cudaError_t err = cudaSuccess;
  Launch{stream, &err}(k);
  return err;
}

}  // namespace minrnn::core::kernels
