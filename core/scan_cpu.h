// The fast CPU scan: channels (B × D) split across threads, the time loop innermost-but-one so the
// D loop vectorises. Differentiable (custom autograd function); float32 and float64.
#pragma once
#include "core/scan.h"

namespace minrnn::core {

// a, b: (B,T,D); h0: (B,D), all defined, same dtype (float/double), CPU.
ScanResult linear_scan_cpu(const torch::Tensor& a, const torch::Tensor& b, const torch::Tensor& h0);

}  // namespace minrnn::core
