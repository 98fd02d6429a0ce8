#include "core/gate_logit.h"

#include <ATen/Parallel.h>

#include <cmath>

#include "core/fast_ops.h"

namespace minrnn::core {
namespace {

using fast::sigmoid;
using fast::softplus_approx;

// torch's softplus (β = 1, threshold 20) in double, exactly.
double softplus(double x) {
  return x > 20.0 ? x : std::max(x, 0.0) + std::log1p(std::exp(-std::abs(x)));
}
// Its derivative as torch's softplus_backward takes it: 1 past the threshold, σ(x) below.
double softplus_grad(double x) {
  return x > 20.0 ? 1.0 : 1.0 / (1.0 + std::exp(-x));
}
MINRNN_INLINE float softplus_grad(float x) {
  return x > 20.0f ? 1.0f : sigmoid(x);
}

MINRNN_VECTOR_CLONES void forward_row(const float* p, const float* k, int64_t n, float* u) {
  for (int64_t c = 0; c < n; ++c) u[c] = softplus_approx(-p[c]) - softplus_approx(-k[c]);
}
void forward_row(const double* p, const double* k, int64_t n, double* u) {
  for (int64_t c = 0; c < n; ++c) u[c] = softplus(-p[c]) - softplus(-k[c]);
}

MINRNN_VECTOR_CLONES void backward_row(const float* g, const float* p, const float* k, int64_t n,
                                       float* gp, float* gk) {
  for (int64_t c = 0; c < n; ++c) {
    gp[c] = -g[c] * softplus_grad(-p[c]);
    gk[c] = g[c] * softplus_grad(-k[c]);
  }
}
void backward_row(const double* g, const double* p, const double* k, int64_t n, double* gp,
                  double* gk) {
  for (int64_t c = 0; c < n; ++c) {
    gp[c] = -g[c] * softplus_grad(-p[c]);
    gk[c] = g[c] * softplus_grad(-k[c]);
  }
}

// A tensor as rows of its last dimension, one row stride apart (a chunk of a contiguous tensor
// along its last dimension is: the gate projection's parts); a copy when it is not so laid out.
struct Rows {
  torch::Tensor t;  // keeps a copy alive
  int64_t rows = 0, width = 0, stride = 0;
};
Rows as_rows(const torch::Tensor& x) {
  Rows r{x, 0, x.size(-1), x.size(-1)};
  bool uniform = x.stride(-1) == 1;
  for (int64_t d = 0; uniform && d + 2 < x.dim(); ++d) {
    uniform = x.stride(d) == x.stride(d + 1) * x.size(d + 1);
  }
  if (!uniform) r.t = x.contiguous();
  r.stride = r.t.dim() >= 2 ? r.t.stride(-2) : r.width;
  r.rows = r.width == 0 ? 0 : r.t.numel() / r.width;
  return r;
}

int64_t grain(int64_t width) {
  return std::max<int64_t>(1, 16384 / std::max<int64_t>(1, width));
}

class GateLogitFunction : public torch::autograd::Function<GateLogitFunction> {
 public:
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& p,
                               const torch::Tensor& k) {
    ctx->save_for_backward({p, k});
    torch::Tensor u = torch::empty(p.sizes(), p.options());
    const Rows rp = as_rows(p), rk = as_rows(k);
    AT_DISPATCH_FLOATING_TYPES(p.scalar_type(), "minlstm_gate_logit", [&] {
      const scalar_t* pp = rp.t.data_ptr<scalar_t>();
      const scalar_t* kp = rk.t.data_ptr<scalar_t>();
      scalar_t* up = u.data_ptr<scalar_t>();
      at::parallel_for(0, rp.rows, grain(rp.width), [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
          forward_row(pp + r * rp.stride, kp + r * rk.stride, rp.width, up + r * rp.width);
        }
      });
    });
    return u;
  }

  static torch::autograd::tensor_list backward(torch::autograd::AutogradContext* ctx,
                                               torch::autograd::tensor_list grads) {
    const auto saved = ctx->get_saved_variables();
    const torch::Tensor& p = saved[0];
    const torch::Tensor g = grads[0].contiguous();
    torch::Tensor gp = torch::empty(p.sizes(), p.options());
    torch::Tensor gk = torch::empty(p.sizes(), p.options());
    const Rows rp = as_rows(p), rk = as_rows(saved[1]);
    AT_DISPATCH_FLOATING_TYPES(p.scalar_type(), "minlstm_gate_logit_backward", [&] {
      const scalar_t* pp = rp.t.data_ptr<scalar_t>();
      const scalar_t* kp = rk.t.data_ptr<scalar_t>();
      const scalar_t* gg = g.data_ptr<scalar_t>();
      scalar_t* gpp = gp.data_ptr<scalar_t>();
      scalar_t* gkp = gk.data_ptr<scalar_t>();
      const int64_t w = rp.width;
      at::parallel_for(0, rp.rows, grain(w), [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
          backward_row(gg + r * w, pp + r * rp.stride, kp + r * rk.stride, w, gpp + r * w,
                       gkp + r * w);
        }
      });
    });
    return {gp, gk};
  }
};

}  // namespace

torch::Tensor minlstm_gate_logit_reference(const torch::Tensor& p, const torch::Tensor& k) {
  namespace F = torch::nn::functional;
  return F::softplus(-p) - F::softplus(-k);
}

torch::Tensor minlstm_gate_logit(const torch::Tensor& p, const torch::Tensor& k) {
  const bool fused = p.device().is_cpu() && k.device().is_cpu() && p.sizes() == k.sizes() &&
                     p.scalar_type() == k.scalar_type() && p.dim() >= 1 &&
                     (p.scalar_type() == torch::kFloat || p.scalar_type() == torch::kDouble);
  if (!fused) return minlstm_gate_logit_reference(p, k);
  return GateLogitFunction::apply(p, k);
}

}  // namespace minrnn::core
