// The fast CPU kernel of linear_scan_complex (declared in core/scan.h): the same channel slicing as
// the real kernel (scan_cpu.h), complex arithmetic spelled out on real/imaginary pairs.
#pragma once
#include "core/scan.h"

namespace minrnn::core {

// All six tensors defined, same dtype (float/double), CPU; shapes already checked.
ComplexScanResult linear_scan_complex_cpu(const torch::Tensor& a_re, const torch::Tensor& a_im,
                                          const torch::Tensor& b_re, const torch::Tensor& b_im,
                                          const torch::Tensor& h0_re, const torch::Tensor& h0_im);

}  // namespace minrnn::core
