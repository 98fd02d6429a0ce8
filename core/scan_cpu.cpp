#include "core/scan_cpu.h"

namespace minrnn::core {
namespace {

using detail::for_each_slice;
using detail::kSlice;

template <typename T>
void scan_forward(const T* a, const T* b, const T* h0, T* h, T* h_last, int64_t B, int64_t L,
                  int64_t D) {
  for_each_slice(B, D, [&](int64_t row, int64_t d0, int64_t d1) {
    T state[kSlice];
    for (int64_t d = d0; d < d1; ++d) state[d - d0] = h0[row * D + d];
    const int64_t base = row * L * D;
    for (int64_t t = 0; t < L; ++t) {
      const T* a_t = a + base + t * D;
      const T* b_t = b + base + t * D;
      T* h_t = h + base + t * D;
      for (int64_t d = d0; d < d1; ++d) {
        state[d - d0] = a_t[d] * state[d - d0] + b_t[d];
        h_t[d] = state[d - d0];
      }
    }
    for (int64_t d = d0; d < d1; ++d) h_last[row * D + d] = state[d - d0];
  });
}

// The backward is the same recurrence run in reverse with the gates shifted by one step:
//     g_t = dL/dh_t (total) = grad_h_t + a_{t+1} g_{t+1},   g_T includes grad of h_last,
//     db_t = g_t,   da_t = g_t h_{t-1},   dh_0 = a_1 g_1.
template <typename T>
void scan_backward(const T* a, const T* h, const T* h0, const T* grad_h, const T* grad_last, T* da,
                   T* db, T* dh0, int64_t B, int64_t L, int64_t D) {
  for_each_slice(B, D, [&](int64_t row, int64_t d0, int64_t d1) {
    T carry[kSlice];
    for (int64_t d = d0; d < d1; ++d) carry[d - d0] = grad_last[row * D + d];
    const int64_t base = row * L * D;
    for (int64_t t = L - 1; t >= 0; --t) {
      const int64_t off = base + t * D;
      const T* h_prev = t > 0 ? h + off - D : h0 + row * D;
      for (int64_t d = d0; d < d1; ++d) {
        const T g = grad_h[off + d] + carry[d - d0];
        db[off + d] = g;
        da[off + d] = g * h_prev[d];
        carry[d - d0] = a[off + d] * g;
      }
    }
    for (int64_t d = d0; d < d1; ++d) dh0[row * D + d] = carry[d - d0];
  });
}

class LinearScanFunction : public torch::autograd::Function<LinearScanFunction> {
 public:
  static torch::autograd::variable_list forward(torch::autograd::AutogradContext* ctx,
                                                const torch::Tensor& a_in,
                                                const torch::Tensor& b_in,
                                                const torch::Tensor& h0_in) {
    torch::Tensor a = a_in.contiguous(), b = b_in.contiguous(), h0 = h0_in.contiguous();
    const int64_t B = a.size(0), L = a.size(1), D = a.size(2);
    torch::Tensor h = torch::empty_like(a);
    torch::Tensor h_last = torch::empty_like(h0);
    AT_DISPATCH_FLOATING_TYPES(a.scalar_type(), "linear_scan_cpu_forward", [&] {
      scan_forward<scalar_t>(a.data_ptr<scalar_t>(), b.data_ptr<scalar_t>(),
                             h0.data_ptr<scalar_t>(), h.data_ptr<scalar_t>(),
                             h_last.data_ptr<scalar_t>(), B, L, D);
    });
    ctx->save_for_backward({a, h, h0});
    return {h, h_last};
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    auto saved = ctx->get_saved_variables();
    const torch::Tensor &a = saved[0], &h = saved[1], &h0 = saved[2];
    torch::Tensor grad_h = grads[0].defined() ? grads[0].contiguous() : torch::zeros_like(h);
    torch::Tensor grad_last = grads[1].defined() ? grads[1].contiguous() : torch::zeros_like(h0);
    const int64_t B = a.size(0), L = a.size(1), D = a.size(2);
    torch::Tensor da = torch::empty_like(a), db = torch::empty_like(a), dh0 = torch::empty_like(h0);
    AT_DISPATCH_FLOATING_TYPES(a.scalar_type(), "linear_scan_cpu_backward", [&] {
      scan_backward<scalar_t>(a.data_ptr<scalar_t>(), h.data_ptr<scalar_t>(),
                              h0.data_ptr<scalar_t>(), grad_h.data_ptr<scalar_t>(),
                              grad_last.data_ptr<scalar_t>(), da.data_ptr<scalar_t>(),
                              db.data_ptr<scalar_t>(), dh0.data_ptr<scalar_t>(), B, L, D);
    });
    return {da, db, dh0};
  }
};

}  // namespace

ScanResult linear_scan_cpu(const torch::Tensor& a, const torch::Tensor& b,
                           const torch::Tensor& h0) {
  auto out = LinearScanFunction::apply(a, b, h0);
  return {out[0], out[1]};
}

}  // namespace minrnn::core
