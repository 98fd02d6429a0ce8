// The CUDA element-wise kernels: the phase programs of pointwise_programs.h under
// kernels/cuda/launch.cuh's phase loop. Built with --fmad=false (core/CMakeLists.txt): no product
// is contracted into an FMA, so each rounds as the CPU loops' do.
#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/pointwise.h"
#include "kernels/cuda/pointwise_programs.h"

namespace minrnn::core::kernels {
namespace {

using grid::DeviceMemory;

template <typename K>
cudaError_t launch(const K& k, cudaStream_t stream) {
  cudaError_t err = cudaSuccess;
  Launch{stream, &err}(k);
  return err;
}

template <typename T>
grid::DropoutAdd<T, DeviceMemory> dropout_program(const DropoutAddArgs& a) {
  const T* x = static_cast<const T*>(a.x);
  return {{a.n},
          a.seed,
          a.seed_base,
          a.threshold,
          static_cast<T>(a.scale),
          x != nullptr,
          x,
          static_cast<const T*>(a.y),
          static_cast<T*>(a.out)};
}
template <typename T>
grid::BiasGelu<T, DeviceMemory> bias_gelu_program(const BiasGeluArgs& a) {
  return {{a.n},
          a.width,
          static_cast<const T*>(a.pre),
          static_cast<const T*>(a.bias),
          static_cast<T*>(a.activated),
          static_cast<T*>(a.slope)};
}
template <typename T>
grid::GeluBackward<T, DeviceMemory> gelu_backward_program(const GeluBackwardArgs& a) {
  return {{a.n},
          static_cast<const T*>(a.d_activated),
          static_cast<const T*>(a.slope),
          static_cast<T*>(a.d_hidden)};
}

}  // namespace

cudaError_t dropout_add(const DropoutAddArgs& a, cudaStream_t stream) {
  return a.float64 ? launch(dropout_program<double>(a), stream)
                   : launch(dropout_program<float>(a), stream);
}
cudaError_t bias_gelu(const BiasGeluArgs& a, cudaStream_t stream) {
  return a.float64 ? launch(bias_gelu_program<double>(a), stream)
                   : launch(bias_gelu_program<float>(a), stream);
}
cudaError_t gelu_backward(const GeluBackwardArgs& a, cudaStream_t stream) {
  return a.float64 ? launch(gelu_backward_program<double>(a), stream)
                   : launch(gelu_backward_program<float>(a), stream);
}
cudaError_t adamw_step(const AdamWStepArgs& a, cudaStream_t stream) {
  return launch(
      grid::AdamWStep<DeviceMemory>{{a.n}, a.update, a.scalars, a.p, a.g, a.m, a.v, a.p, a.m, a.v},
      stream);
}

}  // namespace minrnn::core::kernels
