// The fast path of linear_scan_complex (declared in ops/scan.h): a CPU kernel with the same
// channel slicing as the real one (scan_cpu.h), complex arithmetic spelled out on real/imaginary
// pairs, and the CUDA kernel (kernels/cuda/scan.cu) for CUDA tensors; one autograd function over
// both.
#pragma once
#include "ops/scan.h"

namespace minrnn::core {

// All six tensors defined, same dtype (float/double), same device (CPU, or CUDA when built with
// it); shapes already checked.
ComplexScanResult linear_scan_complex_fast(const torch::Tensor& a_re, const torch::Tensor& a_im,
                                           const torch::Tensor& b_re, const torch::Tensor& b_im,
                                           const torch::Tensor& h0_re, const torch::Tensor& h0_im);

}  // namespace minrnn::core
