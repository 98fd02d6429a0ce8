// Launchers of the CUDA scan kernels (kernels/cuda/scan.cu). Plain pointers, shapes and a stream:
// no torch here, so the .cu compiles in seconds and the host side (scan_cuda.cpp) owns all tensor
// handling and autograd. Every tensor is contiguous (B, T, D) or (B, D) on the stream's device.
#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>

#include "kernels/cuda/scan_programs.h"
#include "kernels/math/scan_math.h"

namespace minrnn::core::kernels {

enum class Dtype {
  kFloat32,
  kFloat64,
  kBFloat16,
  kFloat16
};  // accumulation: float64 for kFloat64,
    // float32 otherwise

struct Shape {
  int64_t batch, length, channels;  // B, T, D
};

// Real scan. (first, second) = (a, b), (u, c) or (p|k, c) as `source` says, their entries (and
// d_first's, d_second's) `stride` apart (scan_math.h). `kernel`: kAuto lets
// grid::choose_scan_kernel pick by shape and device; tests and benchmarks name one.
struct ScanForwardArgs {
  CoefficientForm source;
  const void *first, *second, *h0;
  void *h, *h_last;
  int64_t stride;
  grid::ScanKernel kernel = grid::ScanKernel::kAuto;
};
struct ScanBackwardArgs {
  CoefficientForm source;
  const void *first, *second, *h, *h0, *grad_h, *grad_last;
  void *d_first, *d_second, *dh0;
  int64_t stride;
  grid::ScanKernel kernel = grid::ScanKernel::kAuto;
};
// The kernel kAuto resolves to for this shape on the current device.
grid::ScanKernel resolve_scan_kernel(Shape shape, grid::ScanKernel requested);
cudaError_t scan_forward(Dtype dtype, Shape shape, const ScanForwardArgs& args,
                         cudaStream_t stream);
cudaError_t scan_backward(Dtype dtype, Shape shape, const ScanBackwardArgs& args,
                          cudaStream_t stream);

// Complex scan (HGRN) on real/imaginary planes; every Dtype, accumulating as the real scan does.
struct ComplexPlanes {
  const void *re, *im;
};
struct MutableComplexPlanes {
  void *re, *im;
};
struct ComplexForwardArgs {
  ComplexPlanes a, b, h0;
  MutableComplexPlanes h, h_last;
};
struct ComplexBackwardArgs {
  ComplexPlanes a, h, h0, grad_h, grad_last;
  MutableComplexPlanes da, db, dh0;
};
cudaError_t complex_scan_forward(Dtype dtype, Shape shape, const ComplexForwardArgs& args,
                                 cudaStream_t stream);
cudaError_t complex_scan_backward(Dtype dtype, Shape shape, const ComplexBackwardArgs& args,
                                  cudaStream_t stream);

}  // namespace minrnn::core::kernels
