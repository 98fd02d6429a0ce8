#include "ops/residual_norm.h"

#include <cmath>
#include <stdexcept>
#include <vector>

#include "kernels/cpu/simd.h"
#include "kernels/math/residual_norm_math.h"
#include "ops/dropout.h"
#include "ops/parallel_tasks.h"
#ifdef MINRNN_WITH_CUDA
#include "ops/residual_norm_cuda.h"
#endif

namespace minrnn::core {
namespace {

// Rows a CPU task takes: fixed, so the γ and β gradients' partial sums (one a task, added in task
// order) are the same bits under any number of threads.
constexpr int64_t kTaskRows = 64;

// Σ v over n values with 16 running sums, added pairwise at the end: a fixed order the compiler
// can keep in one vector register (a single running sum cannot be vectorized without reordering).
MINRNN_INLINE float row_sum(const float* v, int64_t n) {
  float acc[16] = {};
  int64_t d = 0;
  for (; d + 16 <= n; d += 16) {
    for (int l = 0; l < 16; ++l) acc[l] += v[d + l];
  }
  for (int l = 0; d < n; ++d, ++l) acc[l] += v[d];
  for (int width = 8; width >= 1; width /= 2) {
    for (int l = 0; l < width; ++l) acc[l] += acc[l + width];
  }
  return acc[0];
}

struct Rows {
  int64_t rows, width;
};

// One task's rows of the forward; `scratch` holds a row's squared deviations.
MINRNN_VECTOR_CLONES void forward_rows(const Rows& r, int64_t first, int64_t end,
                                       const ResidualDropout& dropout, float eps, const float* x,
                                       const float* y, const float* gamma, const float* beta,
                                       float* sum, float* normed, float* moments, float* scratch) {
  const int64_t D = r.width;
  for (int64_t row = first; row < end; ++row) {
    const int64_t at = row * D;
    for (int64_t d = 0; d < D; ++d) sum[at + d] = dropout.sum(x[at + d], y[at + d], at + d);
    const float mean = row_sum(sum + at, D) / static_cast<float>(D);
    for (int64_t d = 0; d < D; ++d) scratch[d] = (sum[at + d] - mean) * (sum[at + d] - mean);
    const float rstd = 1.0f / std::sqrt(row_sum(scratch, D) / static_cast<float>(D) + eps);
    for (int64_t d = 0; d < D; ++d) {
      normed[at + d] = (sum[at + d] - mean) * rstd * gamma[d] + beta[d];
    }
    moments[2 * row] = mean;
    moments[2 * row + 1] = rstd;
  }
}

// One task's rows of the backward, its γ and β gradients summed into its partial rows;
// `scratch` holds 3·D floats. One simple loop a quantity, so each vectorizes.
MINRNN_VECTOR_CLONES void backward_rows(const Rows& r, int64_t first, int64_t end,
                                        const ResidualDropout& dropout, const float* sum,
                                        const float* moments, const float* gamma,
                                        const float* sum_grad, const float* normed_grad,
                                        float* __restrict x_grad, float* __restrict y_grad,
                                        float* __restrict gamma_partial,
                                        float* __restrict beta_partial, float* __restrict scratch) {
  const int64_t D = r.width;
  const ResidualDropout drop = dropout;  // a local: its fields stay in registers across the stores
  float* __restrict xhat = scratch;
  float* __restrict dn = scratch + D;
  float* __restrict dn_xhat = scratch + 2 * D;
  for (int64_t row = first; row < end; ++row) {
    const int64_t at = row * D;
    const float mean = moments[2 * row], rstd = moments[2 * row + 1];
    const float* g = normed_grad + at;
    for (int64_t d = 0; d < D; ++d) xhat[d] = (sum[at + d] - mean) * rstd;
    for (int64_t d = 0; d < D; ++d) dn[d] = g[d] * gamma[d];
    for (int64_t d = 0; d < D; ++d) dn_xhat[d] = dn[d] * xhat[d];
    for (int64_t d = 0; d < D; ++d) gamma_partial[d] += g[d] * xhat[d];
    for (int64_t d = 0; d < D; ++d) beta_partial[d] += g[d];
    const float dn_mean = row_sum(dn, D) / static_cast<float>(D);
    const float dn_xhat_mean = row_sum(dn_xhat, D) / static_cast<float>(D);
    float* dx = x_grad + at;
    for (int64_t d = 0; d < D; ++d) {
      dx[d] = norm_input_grad(dn[d], xhat[d], dn_mean, dn_xhat_mean, rstd);
    }
    if (sum_grad) {
      for (int64_t d = 0; d < D; ++d) dx[d] += sum_grad[at + d];
    }
    for (int64_t d = 0; d < D; ++d) y_grad[at + d] = drop.y_grad(dx[d], at + d);
  }
}

int64_t task_count(int64_t rows) {
  return (rows + kTaskRows - 1) / kTaskRows;
}

std::vector<torch::Tensor> forward_cpu(const torch::Tensor& x, const torch::Tensor& y,
                                       const ResidualDropout& dropout, const torch::Tensor& gamma,
                                       const torch::Tensor& beta, float eps) {
  const Rows r{x.size(0), x.size(1)};
  torch::Tensor sum = torch::empty_like(x), normed = torch::empty_like(x);
  torch::Tensor moments = torch::empty({r.rows, 2}, x.options());
  parallel_tasks(task_count(r.rows), [&](int64_t task) {
    std::vector<float> scratch(static_cast<size_t>(r.width));
    forward_rows(r, task * kTaskRows, std::min(r.rows, (task + 1) * kTaskRows), dropout, eps,
                 x.data_ptr<float>(), y.data_ptr<float>(), gamma.data_ptr<float>(),
                 beta.data_ptr<float>(), sum.data_ptr<float>(), normed.data_ptr<float>(),
                 moments.data_ptr<float>(), scratch.data());
  });
  return {sum, normed, moments};
}

std::vector<torch::Tensor> backward_cpu(const torch::Tensor& sum, const torch::Tensor& moments,
                                        const torch::Tensor& gamma, const torch::Tensor& sum_grad,
                                        const torch::Tensor& normed_grad,
                                        const ResidualDropout& dropout) {
  const Rows r{sum.size(0), sum.size(1)};
  const int64_t tasks = task_count(r.rows);
  torch::Tensor x_grad = torch::empty_like(sum), y_grad = torch::empty_like(sum);
  // [task][γ | β][channel]: each task's rows' sums, then added in task order (the same bits
  // under any number of threads).
  std::vector<float> partials(static_cast<size_t>(tasks * 2 * r.width), 0.0f);
  parallel_tasks(tasks, [&](int64_t task) {
    std::vector<float> scratch(static_cast<size_t>(3 * r.width));
    float* partial = partials.data() + task * 2 * r.width;
    backward_rows(r, task * kTaskRows, std::min(r.rows, (task + 1) * kTaskRows), dropout,
                  sum.data_ptr<float>(), moments.data_ptr<float>(), gamma.data_ptr<float>(),
                  sum_grad.defined() ? sum_grad.data_ptr<float>() : nullptr,
                  normed_grad.data_ptr<float>(), x_grad.data_ptr<float>(), y_grad.data_ptr<float>(),
                  partial, partial + r.width, scratch.data());
  });
  torch::Tensor gamma_grad = torch::zeros_like(gamma), beta_grad = torch::zeros_like(gamma);
  float *g = gamma_grad.data_ptr<float>(), *b = beta_grad.data_ptr<float>();
  for (int64_t task = 0; task < tasks; ++task) {
    const float* partial = partials.data() + task * 2 * r.width;
    for (int64_t d = 0; d < r.width; ++d) {
      g[d] += partial[d];
      b[d] += partial[r.width + d];
    }
  }
  return {x_grad, y_grad, gamma_grad, beta_grad};
}

// The dropout's base tensor, wrapped so that autograd does not take it for an input.
struct SeedBase {
  torch::Tensor tensor;
};

ResidualDropout dropout_of(torch::autograd::AutogradContext* ctx) {
  return {static_cast<uint64_t>(ctx->saved_data["seed"].toInt()),
          ctx->saved_data["threshold"].toInt(),
          static_cast<float>(ctx->saved_data["scale"].toDouble())};
}

class ResidualNormFunction : public torch::autograd::Function<ResidualNormFunction> {
 public:
  // x, y as (rows, D). On the CPU the dropout's seed is the full one; on CUDA, with a base, the
  // offset the kernel adds the base's value to.
  static torch::autograd::variable_list forward(torch::autograd::AutogradContext* ctx,
                                                const torch::Tensor& x, const torch::Tensor& y,
                                                const torch::Tensor& gamma,
                                                const torch::Tensor& beta,
                                                const ResidualDropout& dropout,
                                                const SeedBase& base, double eps) {
    std::vector<torch::Tensor> out;
#ifdef MINRNN_WITH_CUDA
    if (x.is_cuda()) {
      const ResidualNormCuda r =
          residual_norm_cuda(x, y, dropout, base.tensor, gamma, beta, static_cast<float>(eps));
      out = {r.sum, r.normed, r.moments};
    }
#endif
    if (!x.is_cuda()) out = forward_cpu(x, y, dropout, gamma, beta, static_cast<float>(eps));
    ctx->save_for_backward({out[0], gamma});
    ctx->saved_data["moments"] = out[2];
    ctx->saved_data["seed"] = static_cast<int64_t>(dropout.seed);
    ctx->saved_data["threshold"] = dropout.threshold;
    ctx->saved_data["scale"] = static_cast<double>(dropout.scale);
    if (base.tensor.defined()) ctx->saved_data["base"] = base.tensor;
    return {out[0], out[1]};
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const torch::Tensor &sum = saved[0], &gamma = saved[1];
    const torch::Tensor moments = ctx->saved_data["moments"].toTensor();
    const torch::Tensor sum_grad = grads[0].defined() ? grads[0].contiguous() : grads[0];
    const torch::Tensor normed_grad =
        grads[1].defined() ? grads[1].contiguous() : torch::zeros_like(sum);
    const ResidualDropout dropout = dropout_of(ctx);
    std::vector<torch::Tensor> out;
#ifdef MINRNN_WITH_CUDA
    if (sum.is_cuda()) {
      const auto base = ctx->saved_data.find("base");
      out = residual_norm_backward_cuda(
          sum, moments, gamma, sum_grad, normed_grad, dropout,
          base == ctx->saved_data.end() ? torch::Tensor() : base->second.toTensor());
    }
#endif
    if (!sum.is_cuda()) out = backward_cpu(sum, moments, gamma, sum_grad, normed_grad, dropout);
    return {out[0], out[1], out[2], out[3], torch::Tensor(), torch::Tensor(), torch::Tensor()};
  }
};

// x and y may be strided (the top block's selected tokens): they are copied contiguous, as
// add_dropout does.
bool fusable(const torch::Tensor& x, const torch::Tensor& y, const torch::Tensor& gamma,
             const torch::Tensor& beta) {
  for (const torch::Tensor* t : {&x, &y, &gamma, &beta}) {
    if (t->scalar_type() != torch::kFloat || t->device() != x.device()) return false;
  }
  if (!gamma.is_contiguous() || !beta.is_contiguous()) return false;
  const int64_t D = x.size(-1);
  if (gamma.sizes() != torch::IntArrayRef{D} || beta.sizes() != torch::IntArrayRef{D}) return false;
#ifdef MINRNN_WITH_CUDA
  if (x.is_cuda()) return D <= residual_norm_cuda_max_width();
#endif
  return x.is_cpu();
}

}  // namespace

ResidualNorm add_dropout_norm(const torch::Tensor& x, const torch::Tensor& y, double p,
                              bool training, const torch::Tensor& gamma, const torch::Tensor& beta,
                              double eps) {
  if (x.sizes() != y.sizes() || x.dim() < 1) {
    throw std::invalid_argument("add_dropout_norm: x and y must have one shape (…, D)");
  }
  if (!fusable(x, y, gamma, beta) || x.numel() == 0) {
    const torch::Tensor sum = add_dropout(x, y, p, training);
    return {sum, torch::layer_norm(sum, {x.size(-1)}, gamma, beta, eps)};
  }
  const DropoutCall call = next_dropout_call(p, training);
  const bool device_base = call.base.defined() && x.is_cuda();
  const ResidualDropout dropout{device_base ? call.seed : call.host_seed(), call.threshold,
                                static_cast<float>(call.scale)};
  const int64_t D = x.size(-1);
  const auto out = ResidualNormFunction::apply(
      x.reshape({-1, D}).contiguous(), y.reshape({-1, D}).contiguous(), gamma, beta, dropout,
      SeedBase{device_base ? call.base : torch::Tensor()}, eps);
  return {out[0].view(x.sizes()), out[1].view(x.sizes())};
}

ResidualNorm add_dropout_norm(const torch::Tensor& x, const torch::Tensor& y, double p,
                              bool training, const torch::nn::LayerNorm& norm) {
  return add_dropout_norm(x, y, p, training, norm->weight, norm->bias, norm->options.eps());
}

}  // namespace minrnn::core
