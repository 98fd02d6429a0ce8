// The fast CPU scans (linear and gated) and the slice loop the CPU kernels share.
#pragma once
#include <ATen/Parallel.h>

#include <algorithm>

#include "core/scan.h"
#include "core/scan_math.h"

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

// The raw kernels behind linear_scan and gated_scan (autograd lives in scan.cpp). first, second:
// contiguous (B,T,D) — (a, b) or (u, c) as `source` says (second may be any tensor for kDirect's
// backward, which reads a only); h0 (B,D); outputs preallocated with matching shapes. float/double.
void scan_forward_cpu(ScanSource source, const torch::Tensor& first, const torch::Tensor& second,
                      const torch::Tensor& h0, torch::Tensor& h, torch::Tensor& h_last);
void scan_backward_cpu(ScanSource source, const torch::Tensor& first, const torch::Tensor& second,
                       const torch::Tensor& h, const torch::Tensor& h0, const torch::Tensor& grad_h,
                       const torch::Tensor& grad_last, torch::Tensor& d_first,
                       torch::Tensor& d_second, torch::Tensor& dh0);

}  // namespace minrnn::core
