// The fast CPU scans (linear and gated) and the slice loop the CPU kernels share.
#pragma once

#include <algorithm>

#include "kernels/cpu/scan.h"
#include "kernels/math/scan_math.h"
#include "ops/parallel_tasks.h"
#include "ops/scan.h"

namespace minrnn::core {

namespace detail {
using scan_cpu::kSlice;

// Calls body(row, d0, d1) for every (batch row, channel slice [d0, d1)), spread across threads in
// 16 runs of consecutive slices: one slice per task was 18% slower than a fixed split (a slice is
// a few microseconds of work), 16 runs measure level with it or ahead.
template <typename F>
void for_each_slice(int64_t B, int64_t D, F&& body) {
  const int64_t slices_per_row = (D + kSlice - 1) / kSlice, slices = B * slices_per_row;
  parallel_ranges(slices, std::max<int64_t>(1, slices / 16), [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const int64_t row = i / slices_per_row;
      const int64_t d0 = (i % slices_per_row) * kSlice;
      body(row, d0, std::min(D, d0 + kSlice));
    }
  });
}
}  // namespace detail

// The distance between consecutive (batch row, step) entries of a scan operand (scan_math.h's
// `stride`). A size-1 dimension's stride is arbitrary even in a contiguous tensor, so with one
// step it is the batch stride. Shared by the CPU and CUDA host sides.
inline int64_t scan_row_stride(const torch::Tensor& x) {
  return x.size(1) > 1 ? x.stride(1) : x.stride(0);
}

// The raw kernels behind linear_scan, gated_scan and gated_projection_scan (autograd lives in
// scan.cpp). first, second: (a, b), (u, c) or (p|k, c) as `source` says, (B,T,·) with unit channel
// stride and one row stride (scan_row_stride) shared by both and by d_first, d_second (a contiguous
// (B,T,D) tensor, or column blocks of one (B,T,G·D) tensor); second may be any tensor for
// kDirect's backward, which reads a only. h0 (B,D); h, h_last, grad_h, dh0 contiguous and
// preallocated. float/double.
void scan_forward_cpu(CoefficientForm source, const torch::Tensor& first,
                      const torch::Tensor& second, const torch::Tensor& h0, torch::Tensor& h,
                      torch::Tensor& h_last);
void scan_backward_cpu(CoefficientForm source, const torch::Tensor& first,
                       const torch::Tensor& second, const torch::Tensor& h, const torch::Tensor& h0,
                       const torch::Tensor& grad_h, const torch::Tensor& grad_last,
                       torch::Tensor& d_first, torch::Tensor& d_second, torch::Tensor& dh0);

}  // namespace minrnn::core
