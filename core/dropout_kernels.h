// Launcher of the CUDA dropout-add (dropout_kernels.cu): plain pointers and a stream, no torch, as
// scan_kernels.h. Contiguous arrays of n elements on the stream's device.
#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>

namespace minrnn::core::kernels {

struct DropoutAddArgs {
  const void* x;  // null: out = keep · y · scale
  const void* y;
  void* out;
  int64_t n;
  uint64_t seed;
  int64_t threshold;
  double scale;
  bool float64;  // else float32
};
cudaError_t dropout_add(const DropoutAddArgs& args, cudaStream_t stream);

}  // namespace minrnn::core::kernels
