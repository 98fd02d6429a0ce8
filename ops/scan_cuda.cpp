// Host side of the CUDA scans (see scan_cuda.h). Built only with CUDA (cmake/Targets.cmake builds
// *_cuda.cpp files only when MINRNN_WITH_CUDA is on).
#include "ops/scan_cuda.h"

#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>

#include <atomic>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "kernels/cuda/scan.h"
#include "ops/scan_cpu.h"

namespace minrnn::core {
namespace {

// MINRNN_SCAN_KERNEL names the kernel every scan of the process runs (simple, tiled8, tiled32;
// unset or auto: chosen by shape): scripts/gpu-check.sh times the training step with each.
grid::ScanKernel kernel_from_environment() {
  const char* name = std::getenv("MINRNN_SCAN_KERNEL");
  grid::ScanKernel kernel = grid::ScanKernel::kAuto;
  if (name != nullptr && *name != '\0' && !grid::scan_kernel_named(name, &kernel)) {
    throw std::invalid_argument(std::string("MINRNN_SCAN_KERNEL=") + name +
                                ": expected auto, simple, tiled8 or tiled32");
  }
  return kernel;
}

std::atomic<grid::ScanKernel>& chosen_kernel() {
  static std::atomic<grid::ScanKernel> kernel{kernel_from_environment()};
  return kernel;
}

kernels::Dtype dtype_of(const torch::Tensor& t) {
  switch (t.scalar_type()) {
    case torch::kFloat:
      return kernels::Dtype::kFloat32;
    case torch::kDouble:
      return kernels::Dtype::kFloat64;
    case torch::kBFloat16:
      return kernels::Dtype::kBFloat16;
    case torch::kHalf:
      return kernels::Dtype::kFloat16;
    default:
      throw std::invalid_argument(std::string("CUDA scan: unsupported dtype ") +
                                  c10::toString(t.scalar_type()) +
                                  " (expected float32, float64, bfloat16 or float16)");
  }
}

// (B, T, D) of the state: a source's first input may be wider (the minLSTM pair), never narrower.
kernels::Shape kernel_shape(const torch::Tensor& h) {
  return {h.size(0), h.size(1), h.size(2)};
}

kernels::ComplexPlanes planes(const ComplexPair& p) {
  return {p.re.data_ptr(), p.im.data_ptr()};
}
kernels::MutableComplexPlanes mutable_planes(ComplexPair& p) {
  return {p.re.data_ptr(), p.im.data_ptr()};
}

}  // namespace

void set_cuda_scan_kernel(grid::ScanKernel kernel) {
  chosen_kernel().store(kernel);
}
grid::ScanKernel cuda_scan_kernel() {
  return chosen_kernel().load();
}

void scan_forward_cuda(CoefficientForm source, const torch::Tensor& first,
                       const torch::Tensor& second, const torch::Tensor& h0, torch::Tensor& h,
                       torch::Tensor& h_last) {
  c10::cuda::CUDAGuard guard(first.device());
  const kernels::ScanForwardArgs args{
      source,       first.data_ptr(),  second.data_ptr(),      h0.data_ptr(),
      h.data_ptr(), h_last.data_ptr(), scan_row_stride(first), cuda_scan_kernel()};
  C10_CUDA_CHECK(kernels::scan_forward(dtype_of(first), kernel_shape(h), args,
                                       at::cuda::getCurrentCUDAStream()));
}

void scan_backward_cuda(CoefficientForm source, const torch::Tensor& first,
                        const torch::Tensor& second, const torch::Tensor& h,
                        const torch::Tensor& h0, const torch::Tensor& grad_h,
                        const torch::Tensor& grad_last, torch::Tensor& d_first,
                        torch::Tensor& d_second, torch::Tensor& dh0) {
  c10::cuda::CUDAGuard guard(first.device());
  const kernels::ScanBackwardArgs args{source,
                                       first.data_ptr(),
                                       second.data_ptr(),
                                       h.data_ptr(),
                                       h0.data_ptr(),
                                       grad_h.data_ptr(),
                                       grad_last.data_ptr(),
                                       d_first.data_ptr(),
                                       d_second.data_ptr(),
                                       dh0.data_ptr(),
                                       scan_row_stride(first),
                                       cuda_scan_kernel()};
  C10_CUDA_CHECK(kernels::scan_backward(dtype_of(first), kernel_shape(h), args,
                                        at::cuda::getCurrentCUDAStream()));
}

void complex_scan_forward_cuda(const ComplexPair& a, const ComplexPair& b, const ComplexPair& h0,
                               ComplexPair& h, ComplexPair& h_last) {
  c10::cuda::CUDAGuard guard(a.re.device());
  const kernels::ComplexForwardArgs args{planes(a), planes(b), planes(h0), mutable_planes(h),
                                         mutable_planes(h_last)};
  C10_CUDA_CHECK(kernels::complex_scan_forward(dtype_of(a.re), kernel_shape(a.re), args,
                                               at::cuda::getCurrentCUDAStream()));
}

void complex_scan_backward_cuda(const ComplexPair& a, const ComplexPair& h, const ComplexPair& h0,
                                const ComplexPair& grad_h, const ComplexPair& grad_last,
                                ComplexPair& da, ComplexPair& db, ComplexPair& dh0) {
  c10::cuda::CUDAGuard guard(a.re.device());
  const kernels::ComplexBackwardArgs args{
      planes(a),         planes(h),          planes(h0),         planes(grad_h),
      planes(grad_last), mutable_planes(da), mutable_planes(db), mutable_planes(dh0)};
  C10_CUDA_CHECK(kernels::complex_scan_backward(dtype_of(a.re), kernel_shape(a.re), args,
                                                at::cuda::getCurrentCUDAStream()));
}

}  // namespace minrnn::core
