// Host side of the CUDA scan (kernels in scan_cuda.cu). Only compiled with MINRNN_WITH_CUDA.
#pragma once
#include "core/scan.h"

namespace minrnn::core {

// a, b: (B,T,D) CUDA tensors (float32, float64, bfloat16 or float16; accumulation in float32 or
// float64); h0: (B,D). Differentiable.
ScanResult linear_scan_cuda(const torch::Tensor& a, const torch::Tensor& b,
                            const torch::Tensor& h0);

}  // namespace minrnn::core
