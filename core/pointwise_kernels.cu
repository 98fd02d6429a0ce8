// The CUDA element-wise kernels: the phase programs of pointwise_programs.h under
// grid_launch.cuh's phase loop.
#include "core/grid_launch.cuh"
#include "core/pointwise_kernels.h"
#include "core/pointwise_programs.h"

namespace minrnn::core::kernels {
namespace {

using grid::DeviceMemory;

template <typename T>
cudaError_t run_dropout(const DropoutAddArgs& a, cudaStream_t stream) {
  cudaError_t err = cudaSuccess;
  const T* x = static_cast<const T*>(a.x);
  Launch{stream, &err}(grid::DropoutAdd<T, DeviceMemory>{{a.n},
                                                         a.seed,
                                                         a.threshold,
                                                         static_cast<T>(a.scale),
                                                         x != nullptr,
                                                         x,
                                                         static_cast<const T*>(a.y),
                                                         static_cast<T*>(a.out)});
  return err;
}

template <typename T>
cudaError_t run_bias_gelu(const BiasGeluArgs& a, cudaStream_t stream) {
  cudaError_t err = cudaSuccess;
  Launch{stream, &err}(grid::BiasGelu<T, DeviceMemory>{{a.n},
                                                       a.width,
                                                       static_cast<const T*>(a.pre),
                                                       static_cast<const T*>(a.bias),
                                                       static_cast<T*>(a.activated),
                                                       static_cast<T*>(a.slope)});
  return err;
}

template <typename T>
cudaError_t run_gelu_backward(const GeluBackwardArgs& a, cudaStream_t stream) {
  cudaError_t err = cudaSuccess;
  Launch{stream, &err}(grid::GeluBackward<T, DeviceMemory>{{a.n},
                                                           static_cast<const T*>(a.d_activated),
                                                           static_cast<const T*>(a.slope),
                                                           static_cast<T*>(a.d_hidden)});
  return err;
}

}  // namespace

cudaError_t adamw_step(const AdamWStepArgs& a, cudaStream_t stream) {
  cudaError_t err = cudaSuccess;
  Launch{stream,
         &err}(grid::AdamWStep<DeviceMemory>{{a.n}, a.update, a.p, a.g, a.m, a.v, a.p, a.m, a.v});
  return err;
}

cudaError_t dropout_add(const DropoutAddArgs& args, cudaStream_t stream) {
  return args.float64 ? run_dropout<double>(args, stream) : run_dropout<float>(args, stream);
}
cudaError_t bias_gelu(const BiasGeluArgs& args, cudaStream_t stream) {
  return args.float64 ? run_bias_gelu<double>(args, stream) : run_bias_gelu<float>(args, stream);
}
cudaError_t gelu_backward(const GeluBackwardArgs& args, cudaStream_t stream) {
  return args.float64 ? run_gelu_backward<double>(args, stream)
                      : run_gelu_backward<float>(args, stream);
}

}  // namespace minrnn::core::kernels
