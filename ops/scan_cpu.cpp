// The CPU scans on torch's threads: channels (B × D) split across threads in slices along D, each
// slice run by the loops of kernels/cpu/scan.h. One loop pair serves every coefficient source of
// scan_math.h (direct a/b, or minGRU/minLSTM gates computed on the fly).
#include "ops/scan_cpu.h"

#include "kernels/cpu/scan.h"
#include "kernels/math/scan_math.h"

namespace minrnn::core {
namespace {

using detail::for_each_slice;
using scan_cpu::backward_slice;
using scan_cpu::forward_slice;
using scan_math::with_coefficients;

template <typename T, typename Coef>
void scan_forward(const Coef& coef, const T* h0, T* h, T* h_last, int64_t B, int64_t L, int64_t D) {
  for_each_slice(B, D, [&](int64_t row, int64_t d0, int64_t d1) {
    forward_slice<T, Coef>(coef, h0, h, h_last, row, d0, d1, L, D);
  });
}

template <typename T, typename Coef>
void scan_backward(const Coef& coef, const T* h, const T* h0, const T* grad_h, const T* grad_last,
                   T* d_first, T* d_second, T* dh0, int64_t B, int64_t L, int64_t D) {
  for_each_slice(B, D, [&](int64_t row, int64_t d0, int64_t d1) {
    backward_slice<T, Coef>(coef, h, h0, grad_h, grad_last, d_first, d_second, dh0, row, d0, d1, L,
                            D);
  });
}

}  // namespace

void scan_forward_cpu(CoefficientForm source, const torch::Tensor& first,
                      const torch::Tensor& second, const torch::Tensor& h0, torch::Tensor& h,
                      torch::Tensor& h_last) {
  const int64_t B = h.size(0), L = h.size(1), D = h.size(2);
  AT_DISPATCH_FLOATING_TYPES(first.scalar_type(), "scan_forward_cpu", [&] {
    with_coefficients<scalar_t, scalar_t>(
        source, first.data_ptr<scalar_t>(), second.data_ptr<scalar_t>(), scan_row_stride(first), D,
        [&](const auto& coef) {
          scan_forward<scalar_t>(coef, h0.data_ptr<scalar_t>(), h.data_ptr<scalar_t>(),
                                 h_last.data_ptr<scalar_t>(), B, L, D);
        });
  });
}

void scan_backward_cpu(CoefficientForm source, const torch::Tensor& first,
                       const torch::Tensor& second, const torch::Tensor& h, const torch::Tensor& h0,
                       const torch::Tensor& grad_h, const torch::Tensor& grad_last,
                       torch::Tensor& d_first, torch::Tensor& d_second, torch::Tensor& dh0) {
  const int64_t B = h.size(0), L = h.size(1), D = h.size(2);
  AT_DISPATCH_FLOATING_TYPES(first.scalar_type(), "scan_backward_cpu", [&] {
    with_coefficients<scalar_t, scalar_t>(
        source, first.data_ptr<scalar_t>(), second.data_ptr<scalar_t>(), scan_row_stride(first), D,
        [&](const auto& coef) {
          scan_backward<scalar_t>(coef, h.data_ptr<scalar_t>(), h0.data_ptr<scalar_t>(),
                                  grad_h.data_ptr<scalar_t>(), grad_last.data_ptr<scalar_t>(),
                                  d_first.data_ptr<scalar_t>(), d_second.data_ptr<scalar_t>(),
                                  dh0.data_ptr<scalar_t>(), B, L, D);
        });
  });
}

}  // namespace minrnn::core
