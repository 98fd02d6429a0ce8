#include "ops/residual_norm.h"

#include <stdexcept>
#include <vector>

#include "kernels/cpu/residual_norm.h"
#include "kernels/cuda/phase_program.h"  // RowGrid: the widest row the CUDA kernels take
#include "kernels/math/residual_norm_math.h"
#include "ops/device.h"
#include "ops/dropout.h"
#include "ops/parallel_tasks.h"
#include "ops/run_axis.h"
#include "ops/shared_zeros.h"
#ifdef MINRNN_WITH_CUDA
#include "kernels/cuda/residual_norm.h"
#include "ops/residual_norm_cuda.h"
#endif

namespace minrnn::core {
namespace {

// Rows a CPU task takes: fixed, so the γ and β gradients' partial sums (one a task, added in task
// order) are the same bits under any number of threads.
constexpr int64_t kTaskRows = 64;

int64_t task_count(int64_t rows) {
  return (rows + kTaskRows - 1) / kTaskRows;
}

std::vector<torch::Tensor> forward_cpu(const torch::Tensor& x, const torch::Tensor& y,
                                       const JoinRows& rows, const HashedDropout& dropout,
                                       const torch::Tensor& gamma, const torch::Tensor& beta,
                                       float eps) {
  const int64_t D = y.size(1);
  torch::Tensor sum = torch::empty({rows.rows, D}, y.options());
  torch::Tensor normed = torch::empty_like(sum),
                moments = torch::empty({rows.rows, 2}, y.options());
  parallel_tasks(task_count(rows.rows), [&](int64_t task) {
    std::vector<float> scratch(static_cast<size_t>(D));
    residual_norm_forward_rows(
        rows, D, task * kTaskRows, std::min(rows.rows, (task + 1) * kTaskRows), dropout, eps,
        x.numel() > 0 ? x.data_ptr<float>() : nullptr, y.data_ptr<float>(), gamma.data_ptr<float>(),
        beta.data_ptr<float>(), sum.data_ptr<float>(), normed.data_ptr<float>(),
        moments.data_ptr<float>(), scratch.data());
  });
  return {sum, normed, moments};
}

// x_grad and y_grad come zeroed where no output row reads (a token selection).
std::vector<torch::Tensor> backward_cpu(const torch::Tensor& sum, const torch::Tensor& moments,
                                        const torch::Tensor& gamma, const torch::Tensor& sum_grad,
                                        const torch::Tensor& normed_grad, const JoinRows& rows,
                                        const HashedDropout& dropout, torch::Tensor x_grad,
                                        torch::Tensor y_grad) {
  const int64_t D = sum.size(1), tasks = task_count(rows.rows);
  // [task][γ | β][channel]: each task's rows' sums, then added in task order (the same bits
  // under any number of threads).
  std::vector<float> partials(static_cast<size_t>(tasks * 2 * D), 0.0f);
  parallel_tasks(tasks, [&](int64_t task) {
    std::vector<float> scratch(static_cast<size_t>(4 * D));
    float* partial = partials.data() + task * 2 * D;
    residual_norm_backward_rows(
        rows, D, task * kTaskRows, std::min(rows.rows, (task + 1) * kTaskRows), dropout,
        sum.data_ptr<float>(), moments.data_ptr<float>(), gamma.data_ptr<float>(),
        sum_grad.defined() ? sum_grad.data_ptr<float>() : nullptr, normed_grad.data_ptr<float>(),
        x_grad.defined() ? x_grad.data_ptr<float>() : nullptr, y_grad.data_ptr<float>(), partial,
        partial + D, scratch.data());
  });
  torch::Tensor gamma_grad = torch::zeros_like(gamma), beta_grad = torch::zeros_like(gamma);
  float *g = gamma_grad.data_ptr<float>(), *b = beta_grad.data_ptr<float>();
  for (int64_t task = 0; task < tasks; ++task) {
    const float* partial = partials.data() + task * 2 * D;
    for (int64_t d = 0; d < D; ++d) {
      g[d] += partial[d];
      b[d] += partial[D + d];
    }
  }
  return {x_grad, y_grad, gamma_grad, beta_grad};
}

// A join's rows as the context keeps them: the output rows, then x's and y's maps.
std::vector<int64_t> as_list(const JoinRows& r) {
  return {r.rows,           r.x.out_per_batch, r.x.in_per_batch,
          r.x.first,        r.x.stride,        r.y.out_per_batch,
          r.y.in_per_batch, r.y.first,         r.y.stride};
}
JoinRows join_rows_of(const c10::IValue& saved) {
  const std::vector<int64_t> v = saved.toIntVector();
  return {v[0], {v[1], v[2], v[3], v[4]}, {v[5], v[6], v[7], v[8]}};
}

// An input's gradient, zeroed first where a selection leaves rows no output reads (a map reads
// each row at most once, so as many outputs as rows means every row).
torch::Tensor input_grad(int64_t rows, const torch::Tensor& like, const JoinRows& join) {
  const auto shape = std::vector<int64_t>{rows, like.size(1)};
  return rows == join.rows ? torch::empty(shape, like.options())
                           : torch::zeros(shape, like.options());
}

class ResidualNormFunction : public torch::autograd::Function<ResidualNormFunction> {
 public:
  // x, y as (their rows, D), read through `rows`; x with no rows: no residual (autograd takes no
  // undefined input). On the CPU the dropout's seed is the full one; on CUDA, with a base, the
  // offset the kernel adds the base's value to.
  static torch::autograd::variable_list forward(torch::autograd::AutogradContext* ctx,
                                                const torch::Tensor& x, const torch::Tensor& y,
                                                const torch::Tensor& gamma,
                                                const torch::Tensor& beta, const JoinRows& rows,
                                                const PassDropout& dropout, double eps) {
    // A sum nothing reads (the last join's, the tokens' norm's) sends no gradient: the kernels
    // skip it, where LibTorch would fill a (rows, D) tensor with zeros for them to read.
    ctx->set_materialize_grads(false);
    std::vector<torch::Tensor> out;
#ifdef MINRNN_WITH_CUDA
    if (y.is_cuda()) {
      const ResidualNormCuda r =
          residual_norm_cuda(x, y, rows, dropout, gamma, beta, static_cast<float>(eps));
      out = {r.sum, r.normed, r.moments};
    }
#endif
    if (!y.is_cuda()) {
      out = forward_cpu(x, y, rows, dropout.dropout, gamma, beta, static_cast<float>(eps));
    }
    ctx->save_for_backward({out[0], gamma});
    ctx->saved_data["moments"] = out[2];
    ctx->saved_data["rows"] = as_list(rows);
    ctx->saved_data["residual"] = x.numel() > 0;
    ctx->saved_data["input_rows"] = std::vector<int64_t>{x.size(0), y.size(0)};
    dropout.save(ctx);
    return {out[0], out[1]};
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const torch::Tensor &sum = saved[0], &gamma = saved[1];
    const torch::Tensor moments = ctx->saved_data["moments"].toTensor();
    const torch::Tensor sum_grad = grads[0].defined() ? grads[0].contiguous() : grads[0];
    const torch::Tensor normed_grad =
        grads[1].defined() ? grads[1].contiguous() : zeros_to_read(sum.sizes(), sum);
    const PassDropout dropout = PassDropout::saved(ctx);
    const JoinRows rows = join_rows_of(ctx->saved_data["rows"]);
    const std::vector<int64_t> input_rows = ctx->saved_data["input_rows"].toIntVector();
    torch::Tensor x_grad = ctx->saved_data["residual"].toBool()
                               ? input_grad(input_rows[0], sum, rows)
                               : torch::Tensor();
    torch::Tensor y_grad = input_grad(input_rows[1], sum, rows);
    std::vector<torch::Tensor> out;
#ifdef MINRNN_WITH_CUDA
    if (sum.is_cuda()) {
      out = residual_norm_backward_cuda(sum, moments, gamma, sum_grad, normed_grad, rows, dropout,
                                        x_grad, y_grad);
    }
#endif
    if (!sum.is_cuda()) {
      out = backward_cpu(sum, moments, gamma, sum_grad, normed_grad, rows, dropout.dropout, x_grad,
                         y_grad);
    }
    return {out[0], out[1], out[2], out[3], torch::Tensor(), torch::Tensor(), torch::Tensor()};
  }
};

bool fusable(const torch::Tensor& x, const torch::Tensor& y, const torch::Tensor& gamma,
             const torch::Tensor& beta) {
  for (const torch::Tensor* t : {&x, &y, &gamma, &beta}) {
    if (!t->defined()) continue;  // x: no residual
    if (t->scalar_type() != torch::kFloat || t->device() != y.device()) return false;
  }
  if (!gamma.is_contiguous() || !beta.is_contiguous()) return false;
  const int64_t D = y.size(-1);
  if (gamma.sizes() != torch::IntArrayRef{D} || beta.sizes() != torch::IntArrayRef{D}) return false;
#ifdef MINRNN_WITH_CUDA
  if (y.is_cuda() && D > grid::RowGrid::kMaxWidth) return false;
#endif
  return has_own_kernels(y.device());
}

// Whether a pack's stacked join (gamma, beta (runs, D)) runs as one pass for all its runs — on
// CUDA, whose kernels take each row's run's γ, β and seed base, where the runs' rows fill whole
// blocks and the pack's scope gives each run its seeds — rather than a run at a time.
bool joins_runs_at_once(const torch::Tensor& x, const torch::Tensor& y_as_read,
                        const torch::Tensor& gamma, const torch::Tensor& beta, double p,
                        bool training, int64_t runs) {
#ifdef MINRNN_WITH_CUDA
  const int64_t D = y_as_read.size(-1), rows = D > 0 ? y_as_read.numel() / D : 0;
  return y_as_read.is_cuda() && rows > 0 && beta.sizes() == gamma.sizes() &&
         fusable(x, y_as_read, gamma[0], beta[0]) && gamma.is_contiguous() &&
         beta.is_contiguous() && rows % (runs * kernels::residual_norm_block_rows()) == 0 &&
         runs_dropout_ready(p, training, y_as_read.device(), runs);
#else
  (void)x, (void)y_as_read, (void)gamma, (void)beta, (void)p, (void)training, (void)runs;
  return false;
#endif
}

// How the join reads an input of `tokens` tokens a batch through `read`, for `out` tokens a batch.
RowMap row_map(const TokenSelection& read, int64_t tokens, int64_t out) {
  return read.all() ? RowMap::identity(out) : RowMap{out, tokens, read.first, read.stride};
}

}  // namespace

ResidualNorm add_dropout_norm(const torch::Tensor& x, const torch::Tensor& y, double p,
                              bool training, const torch::Tensor& gamma, const torch::Tensor& beta,
                              double eps, const TokenSelection& x_read,
                              const TokenSelection& y_read) {
  const bool residual = x.defined();
  const bool selects = (residual && !x_read.all()) || !y_read.all();
  if (y.dim() < 1 || (selects && (y.dim() != 3 || (residual && x.dim() != 3)))) {
    throw std::invalid_argument(
        "add_dropout_norm: x and y, as read, must have one shape (…, D); (B, T, D) to select "
        "tokens");
  }
  const torch::Tensor y_as_read = y_read.apply(y);  // views
  const torch::Tensor x_as_read = residual ? x_read.apply(x) : torch::Tensor();
  if (residual && x_as_read.sizes() != y_as_read.sizes()) {
    throw std::invalid_argument("add_dropout_norm: x and y, as read, must have one shape (…, D)");
  }
  const int64_t runs = stacked_runs(gamma, 1, "add_dropout_norm's gamma");
  const bool at_once = runs > 0 && joins_runs_at_once(x, y_as_read, gamma, beta, p, training, runs);
  if (runs > 0 && !at_once) {
    const auto out = for_each_run(runs, [&](int64_t r) {
      const ResidualNorm run =
          add_dropout_norm(run_rows(x, runs, r), run_rows(y, runs, r), p, training,
                           run_param(gamma, r), run_param(beta, r), eps, x_read, y_read);
      return std::vector<torch::Tensor>{run.sum, run.normed};
    });
    return {out[0], out[1]};
  }
  if (!at_once && (!fusable(x, y, gamma, beta) || y_as_read.numel() == 0)) {
    const torch::Tensor sum = residual ? add_dropout(x_as_read, y_as_read, p, training)
                                       : fused_dropout(y_as_read, p, training);
    return {sum, torch::layer_norm(sum, {y.size(-1)}, gamma, beta, eps)};
  }
  const PassDropout dropout = at_once ? next_runs_dropout(p, training, y.device())
                                      : next_pass_dropout(p, training, y.device());
  const std::vector<int64_t> out_shape = y_as_read.sizes().vec();
  const int64_t D = y.size(-1), out_rows = y_as_read.numel() / D;
  // Without a selection every row is a batch of its own: the maps are the identity.
  const int64_t out_tokens = selects ? out_shape[1] : out_rows;
  const JoinRows rows{out_rows,
                      residual ? row_map(x_read, selects ? x.size(1) : out_rows, out_tokens)
                               : RowMap::identity(out_rows),
                      row_map(y_read, selects ? y.size(1) : out_rows, out_tokens)};
  const auto out = ResidualNormFunction::apply(
      residual ? x.reshape({-1, D}).contiguous() : torch::empty({0, D}, y.options()),
      y.reshape({-1, D}).contiguous(), gamma, beta, rows, dropout, eps);
  return {out[0].view(out_shape), out[1].view(out_shape)};
}

ResidualNorm add_dropout_norm(const torch::Tensor& x, const torch::Tensor& y, double p,
                              bool training, const torch::nn::LayerNorm& norm,
                              const TokenSelection& x_read, const TokenSelection& y_read) {
  return add_dropout_norm(x, y, p, training, norm->weight, norm->bias, norm->options.eps(), x_read,
                          y_read);
}

torch::Tensor layer_norm(const torch::Tensor& x, const torch::nn::LayerNorm& norm) {
  return add_dropout_norm(torch::Tensor(), x, 0.0, false, norm).normed;
}

}  // namespace minrnn::core
