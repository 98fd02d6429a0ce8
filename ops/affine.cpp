#include "ops/affine.h"

#include "io/env_switch.h"
#include "ops/gemm_cpu.h"
#include "ops/run_axis.h"
#include "ops/side_work.h"
#ifdef MINRNN_WITH_CUDA
#include "ops/pointwise_cuda.h"
#include "ops/tuned_gemm_cuda.h"
#endif

namespace minrnn::core {
namespace {

bool stacked(const torch::Tensor& w) {
  return w.dim() == 3;
}

// An output gradient's rows (…, n, out) as the backward's products read them. Rows of a width
// not a multiple of 4 (a head to a few outputs) make cuBLAS take its unaligned kernels for both
// products (on an H200, 2026-11-27 20:33, DT's action head's before ops/tanh_head.h: 16 µs each
// for 1 280 × 3 rows, where the step's aligned products of that size took 3–7 µs); laid out by
// columns instead (one small copy), each product reads them n floats apart.
torch::Tensor rows_for_products(const torch::Tensor& dy) {
  if (dy.size(-1) % 4 == 0) return dy;
  return dy.transpose(-1, -2).contiguous().transpose(-1, -2);
}

class LinearFunction : public torch::autograd::Function<LinearFunction> {
 public:
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& x,
                               const torch::Tensor& w, const torch::Tensor& b) {
    const torch::Tensor rows = rows_of(x, w).contiguous();
    ctx->save_for_backward({rows, w});
    ctx->saved_data["in_sizes"] = x.sizes().vec();
    ctx->saved_data["bias"] = b.numel() > 0;
    std::vector<int64_t> out_sizes = x.sizes().vec();
    out_sizes.back() = w.size(-2);
    return rows_product(rows, w, b.numel() > 0 ? b : torch::Tensor()).view(out_sizes);
  }

  static torch::autograd::tensor_list backward(torch::autograd::AutogradContext* ctx,
                                               torch::autograd::tensor_list grads) {
    const auto saved = ctx->get_saved_variables();
    const torch::Tensor &rows = saved[0], &w = saved[1];
    const torch::Tensor dy = rows_of(grads[0], w).contiguous();
    // The weight's and bias's gradients, which nothing later in the backward reads: forked first
    // (ops/side_work.h), so that they run beside the input gradient too.
    const bool with_bias = ctx->saved_data["bias"].toBool() && ctx->needs_input_grad(2);
    const bool with_weight = ctx->needs_input_grad(1);
    const torch::Tensor dy_products = rows_for_products(dy);
    const auto made = beside({dy, dy_products, rows}, [&] {
      return rows_param_grads(dy, dy_products, rows, with_weight, with_bias);
    });
    torch::Tensor dx;
    if (ctx->needs_input_grad(0)) {
      dx = rows_input_grad(dy_products, w).view(ctx->saved_data["in_sizes"].toIntVector());
    }
    return {dx, made[0], made[1]};
  }
};

// Float32/float64, w and b (where defined) on x's device in x's dtype.
bool same_floats(const torch::Tensor& x, const torch::Tensor& w, const torch::Tensor& b) {
  const auto same = [&](const torch::Tensor& t) {
    return !t.defined() || (t.device() == x.device() && t.scalar_type() == x.scalar_type());
  };
  return same(w) && same(b) && x.dim() >= 1 &&
         (x.scalar_type() == torch::kFloat || x.scalar_type() == torch::kDouble);
}

// CUDA where built with it: where the column-sum kernel takes the bias's gradient.
bool cuda_floats(const torch::Tensor& x, const torch::Tensor& w, const torch::Tensor& b) {
#ifdef MINRNN_WITH_CUDA
  return x.is_cuda() && same_floats(x, w, b);
#else
  (void)x, (void)w, (void)b;
  return false;
#endif
}

}  // namespace

torch::Tensor rows_of(const torch::Tensor& x, const torch::Tensor& w) {
  return stacked(w) ? x.reshape({w.size(0), -1, x.size(-1)}) : x.reshape({-1, x.size(-1)});
}

bool stacked_bias_after_product() {
  return io::env_switch(
      "MINRNN_STACKED_BIAS", true, "gemm", "add",
      "add (the bias added after the product) or gemm (the product starts from it)");
}

namespace {

#ifdef MINRNN_WITH_CUDA
// Whether a stacked product of `a` is a tuned one (tuned_gemm_cuda.h).
bool tuned_product(const torch::Tensor& a) {
  return a.is_cuda() && a.scalar_type() == torch::kFloat && stacked_products_tuned();
}
#endif

// a (P, m, k) · b (P, k, n) (+ bias (P, n)): a stacked pack's one product for all its runs.
torch::Tensor stacked_product(const torch::Tensor& a, const torch::Tensor& b,
                              const torch::Tensor& bias) {
#ifdef MINRNN_WITH_CUDA
  if (tuned_product(a)) return tuned_bmm(a, b, bias);
#endif
  if (!bias.defined()) return torch::bmm(a, b);
  if (stacked_bias_after_product()) return torch::bmm(a, b).add_(bias.unsqueeze(1));
  return torch::baddbmm(bias.unsqueeze(1), a, b);
}

}  // namespace

torch::Tensor rows_product(const torch::Tensor& rows, const torch::Tensor& w,
                           const torch::Tensor& b) {
  return stacked(w) ? stacked_product(rows, w.transpose(1, 2), b) : linear_rows(rows, w, b);
}

torch::Tensor rows_input_grad(const torch::Tensor& dy, const torch::Tensor& w) {
  return stacked(w) ? stacked_product(dy, w, {}) : input_grad_rows(dy, w);
}

torch::Tensor rows_weight_grad(const torch::Tensor& dy, const torch::Tensor& rows) {
  return dy.dim() == 3 ? stacked_product(dy.transpose(1, 2), rows, {}) : dy.t().mm(rows);
}

torch::Tensor rows_bias_grad(const torch::Tensor& dy) {
  return dy.dim() == 3 ? run_column_sums(dy.view({-1, dy.size(2)}), dy.size(0)) : bias_grad(dy);
}

std::vector<torch::Tensor> rows_param_grads(const torch::Tensor& dy,
                                            const torch::Tensor& dy_products,
                                            const torch::Tensor& rows, bool weight, bool bias) {
#ifdef MINRNN_WITH_CUDA
  if (weight && bias && dy.dim() == 3 && tuned_product(dy) && stacked_bias_grads_in_products()) {
    auto [w, b] = tuned_bmm_and_sums(dy_products.transpose(1, 2), rows);
    return {w, b};
  }
#endif
  return {weight ? rows_weight_grad(dy_products, rows) : torch::Tensor(),
          bias ? rows_bias_grad(dy) : torch::Tensor()};
}

torch::Tensor bias_grad(const torch::Tensor& dy_rows) {
#ifdef MINRNN_WITH_CUDA
  if (dy_rows.is_cuda()) return column_sums_cuda(dy_rows);
#endif
  return dy_rows.sum(0);
}

torch::Tensor affine(const torch::Tensor& x, const torch::Tensor& w, const torch::Tensor& b) {
  // An autograd Function takes no undefined inputs: no bias is an empty one.
  const auto linear = [&] {
    return LinearFunction::apply(x, w, b.defined() ? b : torch::empty({0}, w.options()));
  };
  if (const int64_t runs = stacked_runs(w, 2, "affine's weight")) {
    if (batched_runs(x.device()) && same_floats(x, w, b) && x.numel() > 0) return linear();
    return for_each_run(runs, [&](int64_t r) {
      return affine(run_rows(x, runs, r), run_param(w, r), run_param(b, r));
    });
  }
  // On CUDA with a bias, the column sum is what the op adds there.
  const bool cuda_with_bias = b.defined() && cuda_floats(x, w, b);
  if (x.numel() == 0 || !(gemm_cpu_fits_linear(x, w) || cuda_with_bias)) {
    return torch::linear(x, w, b);
  }
  return linear();
}

}  // namespace minrnn::core
