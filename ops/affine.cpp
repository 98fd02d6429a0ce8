#include "ops/affine.h"

#include "ops/gemm_cpu.h"
#include "ops/run_axis.h"
#include "ops/side_work.h"
#ifdef MINRNN_WITH_CUDA
#include "ops/pointwise_cuda.h"
#endif

namespace minrnn::core {
namespace {

class LinearFunction : public torch::autograd::Function<LinearFunction> {
 public:
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& x,
                               const torch::Tensor& w, const torch::Tensor& b) {
    const torch::Tensor rows = x.reshape({-1, x.size(-1)}).contiguous();
    ctx->save_for_backward({rows, w});
    ctx->saved_data["in_sizes"] = x.sizes().vec();
    ctx->saved_data["bias"] = b.numel() > 0;
    std::vector<int64_t> out_sizes = x.sizes().vec();
    out_sizes.back() = w.size(0);
    return linear_rows(rows, w, b.numel() > 0 ? b : torch::Tensor()).view(out_sizes);
  }

  static torch::autograd::tensor_list backward(torch::autograd::AutogradContext* ctx,
                                               torch::autograd::tensor_list grads) {
    const auto saved = ctx->get_saved_variables();
    const torch::Tensor &rows = saved[0], &w = saved[1];
    const torch::Tensor dy = grads[0].reshape({-1, w.size(0)}).contiguous();
    // The weight's and bias's gradients, which nothing later in the backward reads: forked first
    // (ops/side_work.h), so that they run beside the input gradient too.
    const bool with_bias = ctx->saved_data["bias"].toBool() && ctx->needs_input_grad(2);
    const bool with_weight = ctx->needs_input_grad(1);
    const auto made = beside({dy, rows}, [&] {
      return std::vector<torch::Tensor>{with_weight ? dy.t().mm(rows) : torch::Tensor(),
                                        with_bias ? bias_grad(dy) : torch::Tensor()};
    });
    torch::Tensor dx;
    if (ctx->needs_input_grad(0)) {
      dx = input_grad_rows(dy, w).view(ctx->saved_data["in_sizes"].toIntVector());
    }
    return {dx, made[0], made[1]};
  }
};

// A pack's stacked Linear (ops/run_axis.h, batched_runs): one batched product each way for all
// its runs, and the bias's gradient each run's own column sums, where a run at a time launches
// every product once a run.
class StackedLinearFunction : public torch::autograd::Function<StackedLinearFunction> {
 public:
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& x,
                               const torch::Tensor& w, const torch::Tensor& b) {
    const int64_t runs = w.size(0), out = w.size(1), in = w.size(2);
    const torch::Tensor rows = x.reshape({runs, -1, in}).contiguous();
    const torch::Tensor wt = w.transpose(1, 2);
    const torch::Tensor y =
        b.numel() > 0 ? torch::baddbmm(b.unsqueeze(1), rows, wt) : torch::bmm(rows, wt);
    ctx->save_for_backward({rows, w});
    ctx->saved_data["in_sizes"] = x.sizes().vec();
    ctx->saved_data["bias"] = b.numel() > 0;
    std::vector<int64_t> out_sizes = x.sizes().vec();
    out_sizes.back() = out;
    return y.view(out_sizes);
  }

  static torch::autograd::tensor_list backward(torch::autograd::AutogradContext* ctx,
                                               torch::autograd::tensor_list grads) {
    const auto saved = ctx->get_saved_variables();
    const torch::Tensor &rows = saved[0], &w = saved[1];
    const int64_t runs = w.size(0), out = w.size(1);
    const torch::Tensor dy = grads[0].reshape({runs, -1, out}).contiguous();
    const bool with_bias = ctx->saved_data["bias"].toBool() && ctx->needs_input_grad(2);
    const bool with_weight = ctx->needs_input_grad(1);
    const auto made = beside({dy, rows}, [&] {
      return std::vector<torch::Tensor>{
          with_weight ? torch::bmm(dy.transpose(1, 2), rows) : torch::Tensor(),
          with_bias ? run_column_sums(dy.view({-1, out}), runs) : torch::Tensor()};
    });
    torch::Tensor dx;
    if (ctx->needs_input_grad(0)) {
      dx = torch::bmm(dy, w).view(ctx->saved_data["in_sizes"].toIntVector());
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

torch::Tensor bias_grad(const torch::Tensor& dy_rows) {
#ifdef MINRNN_WITH_CUDA
  if (dy_rows.is_cuda()) return column_sums_cuda(dy_rows);
#endif
  return dy_rows.sum(0);
}

torch::Tensor affine(const torch::Tensor& x, const torch::Tensor& w, const torch::Tensor& b) {
  if (const int64_t runs = stacked_runs(w, 2, "affine's weight")) {
    if (batched_runs(x.device()) && same_floats(x, w, b) && x.numel() > 0) {
      return StackedLinearFunction::apply(x, w, b.defined() ? b : torch::empty({0}, w.options()));
    }
    return for_each_run(runs, [&](int64_t r) {
      return affine(run_rows(x, runs, r), run_param(w, r), run_param(b, r));
    });
  }
  // On CUDA with a bias, the column sum is what the op adds there.
  const bool cuda_with_bias = b.defined() && cuda_floats(x, w, b);
  if (x.numel() == 0 || !(gemm_cpu_fits_linear(x, w) || cuda_with_bias)) {
    return torch::linear(x, w, b);
  }
  // An autograd Function takes no undefined inputs: no bias is an empty one.
  return LinearFunction::apply(x, w, b.defined() ? b : torch::empty({0}, w.options()));
}

}  // namespace minrnn::core
