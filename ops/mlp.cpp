#include "ops/mlp.h"

#include <stdexcept>
#include <utility>
#include <vector>

#include "kernels/cpu/float_loops.h"
#include "ops/affine.h"
#include "ops/gemm_cpu.h"
#include "ops/parallel_tasks.h"
#include "ops/run_axis.h"
#include "ops/side_work.h"
#ifdef MINRNN_WITH_CUDA
#include "ops/pointwise_cuda.h"
#endif

namespace minrnn::core {
namespace {

// Rows per chunk of the fused gelu-backward pass: each chunk sums its own bias-gradient partial,
// so the sum's order does not depend on the thread count (CPU runs stay deterministic).
constexpr int64_t kRowsPerChunk = 256;

// pre (rows, width) + bias → {GELU of it, what the backward reads}. CPU: GELU′, in float32 one
// vectorised pass writing it where pre was; CUDA: pre itself, BiasGelu
// (kernels/cuda/pointwise_programs.h) writing GELU alone and the backward's pass recomputing GELU′
// (one (rows, width) array fewer written, and the same read back). bias (runs, width): a pack's
// stacked runs (ops/run_axis.h), each run's rows its own row (on the CPU, GELU's formula in
// LibTorch ops: a test's batched passes).
std::pair<torch::Tensor, torch::Tensor> bias_gelu_pass(torch::Tensor pre,
                                                       const torch::Tensor& bias) {
#ifdef MINRNN_WITH_CUDA
  if (pre.is_cuda()) return {bias_gelu_cuda(pre, bias), pre};
#endif
  const int64_t width = pre.size(1);
  if (bias.dim() == 2) {
    const torch::Tensor v =
        (pre.view({bias.size(0), -1, width}) + bias.unsqueeze(1)).view(pre.sizes());
    const torch::Tensor cdf = 0.5 * (1 + torch::erf(v * 0.70710678118654752440));
    const torch::Tensor pdf = 0.39894228040143267794 * torch::exp(-0.5 * v * v);
    return {v * cdf, cdf + v * pdf};
  }
  torch::Tensor activated = torch::empty_like(pre);
  float* h = pre.data_ptr<float>();
  const float* b = bias.data_ptr<float>();
  float* g = activated.data_ptr<float>();
  parallel_ranges(pre.size(0), std::max<int64_t>(1, 16384 / width), [&](int64_t r0, int64_t r1) {
    cpu::bias_gelu_with_grad(h + r0 * width, b, g + r0 * width, r1 - r0, width);
  });
  return {activated, pre};
}

// ∂/∂activated → {∂/∂pre, the first bias's gradient}, gelu′ applied with the bias gradient summed
// in the same pass; `saved`: bias_gelu_pass's second output (GELU′ on the CPU, pre on CUDA). CPU:
// in place, per chunk of rows, then the chunks; CUDA: the column-sum kernel
// (kernels/cuda/pointwise_programs.h, ColumnSums) with GELU′(pre + bias) and the product. runs >
// 1: a pack's stacked runs' rows, each run's bias gradient its own, (runs, width).
std::pair<torch::Tensor, torch::Tensor> gelu_backward_pass(torch::Tensor d_activated,
                                                           const torch::Tensor& saved,
                                                           const torch::Tensor& bias,
                                                           int64_t runs) {
#ifdef MINRNN_WITH_CUDA
  if (d_activated.is_cuda()) return gelu_backward_cuda(d_activated, saved, bias, runs);
#else
  (void)bias;
#endif
  const torch::Tensor& slope = saved;
  if (runs > 1) {
    const torch::Tensor d_hidden = d_activated * slope;
    return {d_hidden, run_column_sums(d_hidden, runs)};
  }
  const int64_t n = d_activated.size(0), width = d_activated.size(1);
  const int64_t chunks = (n + kRowsPerChunk - 1) / kRowsPerChunk;
  torch::Tensor partial = torch::zeros({std::max<int64_t>(chunks, 1), width}, slope.options());
  const float* dgelu = slope.data_ptr<float>();
  float* dh = d_activated.data_ptr<float>();
  float* sums = partial.data_ptr<float>();
  parallel_ranges(n, kRowsPerChunk, [&](int64_t r0, int64_t r1) {
    const int64_t c = r0 / kRowsPerChunk;
    cpu::gelu_backward(dgelu + r0 * width, dh + r0 * width, r1 - r0, width, sums + c * width);
  });
  return {d_activated, partial.sum(0)};
}

// The MLP as one op: one run's weights, or a pack's stacked runs' (w1 (runs, hidden, in), …: each
// product one batched product for all runs, the GELU pass and the bias gradients each run's own
// rows of one pass).
class MlpFunction : public torch::autograd::Function<MlpFunction> {
 public:
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& x,
                               const torch::Tensor& w1, const torch::Tensor& b1,
                               const torch::Tensor& w2, const torch::Tensor& b2) {
    const torch::Tensor rows = rows_of(x, w1).contiguous();
    // The first bias joins the GELU pass (addmm would first copy it into every row and make the
    // GEMM read its output back: slower than the add it saves). The second is 1/4 the width.
    const torch::Tensor pre = rows_product(rows, w1, {});
    auto [activated, gelu_saved] = bias_gelu_pass(pre.view({-1, pre.size(-1)}), b1);
    activated = activated.view(pre.sizes());
    torch::Tensor out = rows_product(activated, w2, b2);
    ctx->save_for_backward({rows, w1, b1, w2, gelu_saved, activated});
    std::vector<int64_t> out_sizes = x.sizes().vec();
    out_sizes.back() = w2.size(-2);
    ctx->saved_data["in_sizes"] = x.sizes().vec();
    return out.view(out_sizes);
  }

  static torch::autograd::tensor_list backward(torch::autograd::AutogradContext* ctx,
                                               torch::autograd::tensor_list grads) {
    const auto saved = ctx->get_saved_variables();
    const torch::Tensor &rows = saved[0], &w1 = saved[1], &b1 = saved[2], &w2 = saved[3],
                        &gelu_saved = saved[4], &activated = saved[5];
    const torch::Tensor d_out = rows_of(grads[0], w2).contiguous();
    // The weights' and the second bias's gradients beside the chain to d_x (ops/side_work.h); the
    // first bias's comes out of the GELU pass on the chain.
    const auto second = beside(
        {d_out, activated}, [&] { return rows_param_grads(d_out, d_out, activated, true, true); });
    const torch::Tensor d_activated = rows_input_grad(d_out, w2);
    const int64_t runs = w1.dim() == 3 ? w1.size(0) : 1;
    auto [d_hidden, d_b1] =
        gelu_backward_pass(d_activated.view({-1, d_activated.size(-1)}), gelu_saved, b1, runs);
    d_hidden = d_hidden.view(d_activated.sizes());
    const auto first = beside({d_hidden, rows}, [&] {
      return std::vector<torch::Tensor>{rows_weight_grad(d_hidden, rows)};
    });
    torch::Tensor d_x;
    if (ctx->needs_input_grad(0)) {
      d_x = rows_input_grad(d_hidden, w1).view(ctx->saved_data["in_sizes"].toIntVector());
    }
    return {d_x, first[0], d_b1, second[0], second[1]};
  }
};

// The Sequential's two Linears when it is Linear → exact GELU → Linear with biases, else null.
struct Layers {
  torch::nn::LinearImpl *up = nullptr, *down = nullptr;
};
Layers layers_of(torch::nn::Sequential& mlp) {
  if (mlp->size() != 3) return {};
  auto* up = mlp->ptr(0)->as<torch::nn::LinearImpl>();
  auto* gelu = mlp->ptr(1)->as<torch::nn::GELUImpl>();
  auto* down = mlp->ptr(2)->as<torch::nn::LinearImpl>();
  if (!up || !gelu || !down || gelu->options.approximate() != "none") return {};
  if (!up->bias.defined() || !down->bias.defined()) return {};
  return {up, down};
}

// CPU float32 (the loops of kernels/cpu/float_loops.h), or CUDA float32/float64 where built with
// CUDA (the kernels of kernels/cuda/pointwise_programs.h); every tensor on x's device in x's dtype.
bool fusable(const torch::Tensor& t, const torch::Tensor& x) {
  if (t.device() != x.device() || t.scalar_type() != x.scalar_type()) return false;
#ifdef MINRNN_WITH_CUDA
  if (x.is_cuda()) return x.scalar_type() == torch::kFloat || x.scalar_type() == torch::kDouble;
#endif
  return x.is_cpu() && x.scalar_type() == torch::kFloat;
}

// The MLP of one run's weights: fused where it can be, else Linear → exact GELU → Linear as the
// Sequential's modules compute them.
torch::Tensor mlp_of(const torch::Tensor& x, const torch::Tensor& w1, const torch::Tensor& b1,
                     const torch::Tensor& w2, const torch::Tensor& b2) {
  const bool fused = x.dim() >= 1 && x.numel() > 0 && fusable(x, x) && fusable(w1, x) &&
                     fusable(w2, x) && fusable(b1, x) && fusable(b2, x);
  if (fused) return MlpFunction::apply(x, w1, b1, w2, b2);
  // What the Sequential's own modules compute (the C++ API's linear: matmul, then the bias).
  namespace F = torch::nn::functional;
  return F::linear(F::gelu(F::linear(x, w1, b1)), w2, b2);
}

}  // namespace

torch::Tensor mlp_forward(torch::nn::Sequential& mlp, const torch::Tensor& x) {
  const Layers l = layers_of(mlp);
  if (!l.up) {
    if (stacked_runs(mlp->parameters().front(), 2, "mlp_forward's first weight")) {
      throw std::invalid_argument(
          "mlp_forward: a pack's stacked MLP must be Linear → exact GELU → Linear with biases");
    }
    return mlp->forward(x);
  }
  const torch::Tensor &w1 = l.up->weight, &b1 = l.up->bias, &w2 = l.down->weight,
                      &b2 = l.down->bias;
  if (const int64_t runs = stacked_runs(w1, 2, "mlp_forward's first weight")) {
    const auto same = [&](const torch::Tensor& t) {
      return t.device() == x.device() && t.scalar_type() == x.scalar_type();
    };
    const bool floats = x.scalar_type() == torch::kFloat || x.scalar_type() == torch::kDouble;
    if (batched_runs(x.device()) && x.dim() >= 1 && x.numel() > 0 && floats && same(w1) &&
        same(b1) && same(w2) && same(b2)) {
      return MlpFunction::apply(x, w1, b1, w2, b2);
    }
    return for_each_run(runs, [&](int64_t r) {
      return mlp_of(run_rows(x, runs, r), run_param(w1, r), run_param(b1, r), run_param(w2, r),
                    run_param(b2, r));
    });
  }
  return mlp_of(x, w1, b1, w2, b2);
}

}  // namespace minrnn::core
