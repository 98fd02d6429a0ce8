// The fast CPU scan: channels (B × D) split across threads, the time loop innermost-but-one so the
// D loop vectorises. Differentiable (custom autograd function); float32 and float64.
#pragma once
#include <ATen/Parallel.h>

#include <algorithm>

#include "core/scan.h"

namespace minrnn::core {

namespace detail {
// Channels are processed in slices of kSlice along D so a thread owns a contiguous run it can
// vectorise. Shared by the real (scan_cpu.cpp) and complex (scan_complex.cpp) kernels.
constexpr int64_t kSlice = 64;

// Calls body(row, d0, d1) for every (batch row, channel slice [d0, d1)), spread across threads.
template <typename F>
void for_each_slice(int64_t B, int64_t D, F&& body) {
  const int64_t slices_per_row = (D + kSlice - 1) / kSlice;
  at::parallel_for(0, B * slices_per_row, 1, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const int64_t row = i / slices_per_row;
      const int64_t d0 = (i % slices_per_row) * kSlice;
      body(row, d0, std::min(D, d0 + kSlice));
    }
  });
}
}  // namespace detail

// a, b: (B,T,D); h0: (B,D), all defined, same dtype (float/double), CPU.
ScanResult linear_scan_cpu(const torch::Tensor& a, const torch::Tensor& b, const torch::Tensor& h0);

}  // namespace minrnn::core
