// The CUDA dropout-add: the phase program of dropout_program.h under grid_launch.cuh's phase loop.
#include "core/dropout_kernels.h"
#include "core/dropout_program.h"
#include "core/grid_launch.cuh"

namespace minrnn::core::kernels {
namespace {

template <typename T>
cudaError_t run(const DropoutAddArgs& a, cudaStream_t stream) {
  cudaError_t err = cudaSuccess;
  const T* x = static_cast<const T*>(a.x);
  grid::DropoutAdd<T, grid::DeviceMemory> k{a.n,
                                            a.seed,
                                            a.threshold,
                                            static_cast<T>(a.scale),
                                            x != nullptr,
                                            x,
                                            static_cast<const T*>(a.y),
                                            static_cast<T*>(a.out)};
  Launch{stream, &err}(k);
  return err;
}

}  // namespace

cudaError_t dropout_add(const DropoutAddArgs& args, cudaStream_t stream) {
  return args.float64 ? run<double>(args, stream) : run<float>(args, stream);
}

}  // namespace minrnn::core::kernels
