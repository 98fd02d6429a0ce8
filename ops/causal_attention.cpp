#include "ops/causal_attention.h"

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "ops/affine.h"
#include "ops/attention_probs.h"
#include "ops/dropout.h"
#include "ops/gemm_cpu.h"
#include "ops/run_axis.h"
#include "ops/side_work.h"

namespace minrnn::core {
namespace {

// One of q, k, v: `width` columns of `source` (B, rows, …) from column `first`, `heads` heads.
struct Columns {
  torch::Tensor source;
  int64_t first, width, heads;
  // Head h's (B, rows, width / heads): a strided view the batched products read and write as is.
  torch::Tensor head(int64_t h) const {
    const int64_t w = width / heads;
    return source.narrow(2, first + h * w, w);
  }
  // Every head as (B, heads, rows, width / heads), for the LibTorch ops.
  torch::Tensor all_heads() const {
    return source.narrow(2, first, width).unflatten(2, {heads, width / heads}).transpose(1, 2);
  }
};
struct QueriesKeysValues {
  Columns q, k, v;
};

// Where q, k and v sit: in `projected` alone (queries empty), or the queries apart. The same
// layout serves the inputs and their gradients.
QueriesKeysValues columns_of(const torch::Tensor& projected, const torch::Tensor& queries,
                             int64_t heads, const TokenSelection& read) {
  if (!queries.defined() || queries.numel() == 0) {
    const int64_t D = projected.size(2) / 3;
    return {{read.apply(projected), 0, D, heads},
            {projected, D, D, heads},
            {projected, 2 * D, D, heads}};
  }
  const int64_t D = queries.size(2);
  return {{queries, 0, D, heads}, {projected, 0, D, heads}, {projected, D, D, heads}};
}

// out = a · b (batched when 3-D), written through out, a view into a larger tensor. cuBLAS takes
// its strides as they are (the last one is 1). LibTorch's CPU product into a strided view took
// 3× the contiguous product at a training step's shapes (940 against 310 µs for 64 × 60 × 60 ×
// 128): there, the product and a copy.
void product_into(torch::Tensor out, const torch::Tensor& a, const torch::Tensor& b) {
  if (!out.is_cuda() && !out.is_contiguous()) {
    out.copy_(out.dim() == 3 ? torch::bmm(a, b) : torch::mm(a, b));
  } else if (out.dim() == 3) {
    torch::bmm_out(out, a, b);
  } else {
    torch::mm_out(out, a, b);
  }
}

// Empty (B, heads, Tq, T) for scores, probabilities or their gradients, each row of T keys
// `pitch` floats from the next: on CUDA the next multiple of 4, so that cuBLAS's products reading
// or writing these rows take its aligned kernels (DT's 59 keys a row made it take its unaligned
// ones: 12 launches, ~116 µs of a Transformer step on an H200, 2026-11-27 20:33). The pad past
// each row's T is never read or written.
int64_t key_pitch(int64_t T, const torch::Device& device) {
  return device.is_cuda() ? (T + 3) / 4 * 4 : T;
}
torch::Tensor empty_key_rows(int64_t B, int64_t heads, int64_t Tq, int64_t T,
                             const torch::Tensor& like) {
  return torch::empty({B, heads, Tq, key_pitch(T, like.device())}, like.options()).narrow(3, 0, T);
}

double scale_of(const Columns& q) {
  return 1.0 / std::sqrt(static_cast<double>(q.width / q.heads));
}

class CausalAttentionFunction : public torch::autograd::Function<CausalAttentionFunction> {
 public:
  // queries: an empty tensor where projected holds them (an autograd function takes no undefined
  // inputs).
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx,
                               const torch::Tensor& projected, const torch::Tensor& queries,
                               int64_t heads, const TokenSelection& read,
                               const PassDropout& dropout) {
    const QueriesKeysValues in = columns_of(projected, queries, heads, read);
    const int64_t B = projected.size(0), T = projected.size(1), Tq = in.q.source.size(1);
    torch::Tensor scores = empty_key_rows(B, heads, Tq, T, projected);
    for (int64_t h = 0; h < heads; ++h) {
      product_into(scores.select(1, h), in.q.head(h), in.k.head(h).transpose(1, 2));
    }
    const double scale = scale_of(in.q);
    const AttentionProbs probs = attention_probs_forward(
        scores.view({-1, T}), {Tq, read.first, read.stride}, dropout, scale);
    const torch::Tensor out = probs.out.view(scores.sizes());
    torch::Tensor y = torch::empty({B, Tq, in.q.width}, projected.options());
    const Columns y_columns{y, 0, in.q.width, heads};
    for (int64_t h = 0; h < heads; ++h) {
      product_into(y_columns.head(h), out.select(1, h), in.v.head(h));
    }
    ctx->save_for_backward({projected, queries, probs.probs, out});
    ctx->saved_data["heads"] = heads;
    ctx->saved_data["read_first"] = read.first;
    ctx->saved_data["read_stride"] = read.stride;
    dropout.save(ctx);
    return y;
  }

  static torch::autograd::tensor_list backward(torch::autograd::AutogradContext* ctx,
                                               torch::autograd::tensor_list grads) {
    const auto saved = ctx->get_saved_variables();
    const torch::Tensor &projected = saved[0], &queries = saved[1], &probs = saved[2],
                        &out = saved[3];
    const int64_t heads = ctx->saved_data["heads"].toInt();
    const TokenSelection read{ctx->saved_data["read_first"].toInt(),
                              ctx->saved_data["read_stride"].toInt()};
    const bool apart = queries.numel() > 0;
    // Tokens that ask no query get no q gradient: zeros where projected holds their q.
    torch::Tensor projected_grad =
        apart || read.all() ? torch::empty_like(projected) : torch::zeros_like(projected);
    torch::Tensor queries_grad = apart ? torch::empty_like(queries) : torch::Tensor();
    const QueriesKeysValues in = columns_of(projected, queries, heads, read);
    const QueriesKeysValues grad =
        columns_of(projected_grad, apart ? queries_grad : queries, heads, read);
    const Columns y_grad{grads[0].contiguous(), 0, in.q.width, heads};

    torch::Tensor out_grad = empty_key_rows(out.size(0), heads, out.size(2), out.size(3), out);
    for (int64_t h = 0; h < heads; ++h) {
      product_into(out_grad.select(1, h), y_grad.head(h), in.v.head(h).transpose(1, 2));
      product_into(grad.v.head(h), out.select(1, h).transpose(1, 2), y_grad.head(h));
    }
    const torch::Tensor scores_grad =
        attention_probs_backward(probs, out_grad.view({-1, out.size(3)}), PassDropout::saved(ctx),
                                 scale_of(in.q))
            .view(out.sizes());
    for (int64_t h = 0; h < heads; ++h) {
      product_into(grad.q.head(h), scores_grad.select(1, h), in.k.head(h));
      product_into(grad.k.head(h), scores_grad.select(1, h).transpose(1, 2), in.q.head(h));
    }
    return {projected_grad, queries_grad, torch::Tensor(), torch::Tensor(), torch::Tensor()};
  }
};

// The same in LibTorch ops (views of every head, matmuls, the probabilities op): what anything
// the function does not take runs.
torch::Tensor unfused(const QueriesKeysValues& in, const TokenSelection& read, double p,
                      bool training) {
  const torch::Tensor q = in.q.all_heads();
  const torch::Tensor probs = causal_attention_probs(
      torch::matmul(q, in.k.all_heads().transpose(-2, -1)), scale_of(in.q), read, p, training);
  const torch::Tensor y = torch::matmul(probs, in.v.all_heads());  // (B, heads, Tq, D / heads)
  return y.transpose(1, 2).reshape({q.size(0), q.size(2), in.q.width});
}

void check_shapes(const torch::Tensor& projected, const torch::Tensor& queries, int64_t heads,
                  const TokenSelection& read) {
  const auto fail = [](const std::string& what) {
    throw std::invalid_argument("causal_attention: " + what);
  };
  if (projected.dim() != 3) fail("projected must be (B, T, 3D) or (B, T, 2D)");
  const int64_t selected = read.count(projected.size(1));
  const int64_t D = queries.defined() ? queries.size(-1) : projected.size(2) / 3;
  if (queries.defined() &&
      (queries.dim() != 3 || queries.size(0) != projected.size(0) || queries.size(1) != selected)) {
    fail("queries must be (B, " + std::to_string(selected) + ", D), the selected tokens'");
  }
  if (projected.size(2) != (queries.defined() ? 2 : 3) * D) {
    fail(queries.defined() ? "projected must be [k | v], (B, T, 2D)"
                           : "projected must be [q | k | v], (B, T, 3D)");
  }
  if (heads <= 0 || D % heads != 0) {
    fail("the width " + std::to_string(D) + " must be a positive multiple of heads " +
         std::to_string(heads));
  }
}

// One run's projection, or a pack's stacked runs' (w (runs, 3D, in), b (runs, 3D): each product
// one batched product for all runs, the bias's gradient each run's column sums).
class SelectedQueriesFunction : public torch::autograd::Function<SelectedQueriesFunction> {
 public:
  static torch::autograd::tensor_list forward(torch::autograd::AutogradContext* ctx,
                                              const torch::Tensor& x, const torch::Tensor& w,
                                              const torch::Tensor& b, const TokenSelection& read) {
    ctx->set_materialize_grads(false);  // the backward makes its own zeros (rows_like)
    const int64_t B = x.size(0), T = x.size(1), D = w.size(-2) / 3;
    const torch::Tensor rows = rows_of(x, w).contiguous();
    const torch::Tensor asking = rows_of(read.apply(x), w).contiguous();
    const torch::Tensor q = rows_product(asking, w.narrow(-2, 0, D), b.narrow(-1, 0, D));
    const torch::Tensor kv = rows_product(rows, w.narrow(-2, D, 2 * D), b.narrow(-1, D, 2 * D));
    ctx->save_for_backward({rows, asking, w});
    ctx->saved_data["x_sizes"] = x.sizes().vec();
    ctx->saved_data["read_first"] = read.first;
    ctx->saved_data["read_stride"] = read.stride;
    return {q.view({B, -1, D}), kv.view({B, T, 2 * D})};
  }

  static torch::autograd::tensor_list backward(torch::autograd::AutogradContext* ctx,
                                               torch::autograd::tensor_list grads) {
    const auto saved = ctx->get_saved_variables();
    const torch::Tensor &rows = saved[0], &asking = saved[1], &w = saved[2];
    const int64_t D = w.size(-2) / 3, in = w.size(-1);
    // An output nothing read has no gradient: zeros of its rows.
    const auto rows_like = [&](const torch::Tensor& g, const torch::Tensor& like, int64_t width) {
      if (g.defined()) return rows_of(g, w).contiguous();
      std::vector<int64_t> shape = like.sizes().vec();
      shape.back() = width;
      return torch::zeros(shape, like.options());
    };
    const torch::Tensor dq = rows_like(grads[0], asking, D), dkv = rows_like(grads[1], rows, 2 * D);
    // The weight's and bias's gradients beside the rest of the backward (ops/side_work.h).
    const auto made = beside({dq, dkv, asking, rows}, [&] {
      torch::Tensor dw = torch::empty_like(w);
      product_into(dw.narrow(-2, 0, D), dq.transpose(-2, -1), asking);
      product_into(dw.narrow(-2, D, 2 * D), dkv.transpose(-2, -1), rows);
      return std::vector<torch::Tensor>{dw,
                                        torch::cat({rows_bias_grad(dq), rows_bias_grad(dkv)}, -1)};
    });
    // Every token's x gradient from its k and v, and the asking tokens' from their q added in.
    const std::vector<int64_t> sizes = ctx->saved_data["x_sizes"].toIntVector();
    const TokenSelection read{ctx->saved_data["read_first"].toInt(),
                              ctx->saved_data["read_stride"].toInt()};
    const torch::Tensor dx = rows_input_grad(dkv, w.narrow(-2, D, 2 * D)).view(sizes);
    read.apply(dx).add_(rows_input_grad(dq, w.narrow(-2, 0, D)).view({sizes[0], -1, in}));
    return {dx, made[0], made[1], torch::Tensor()};
  }
};

}  // namespace

torch::Tensor causal_attention(const torch::Tensor& projected, const torch::Tensor& queries,
                               int64_t heads, const TokenSelection& read, double p, bool training) {
  check_shapes(projected, queries, heads, read);
  const int64_t T = projected.size(1);
  const bool fusable = projected.numel() > 0 && attention_probs_fusable(projected, T);
  // Under a pack's scope (ops/run_axis.h) the rows are its runs': each run's probabilities
  // dropped out with its own seeds, by the kernels at once on CUDA, else a run at a time.
  const int64_t runs = dropout_runs();
  const bool at_once =
      runs > 1 && fusable && runs_dropout_ready(p, training, projected.device(), runs);
  if (runs > 1 && !at_once) {
    return for_each_run(runs, [&](int64_t r) {
      return causal_attention(run_rows(projected, runs, r), run_rows(queries, runs, r), heads, read,
                              p, training);
    });
  }
  if (!fusable) return unfused(columns_of(projected, queries, heads, read), read, p, training);
  const PassDropout dropout = at_once ? next_runs_dropout(p, training, projected.device())
                                      : next_pass_dropout(p, training, projected.device());
  return CausalAttentionFunction::apply(
      projected, queries.defined() ? queries : projected.new_empty({0}), heads, read, dropout);
}

SelectedQueries project_selected_queries(const torch::Tensor& x, const torch::Tensor& w,
                                         const torch::Tensor& b, const TokenSelection& read) {
  if (const int64_t runs = stacked_runs(w, 2, "project_selected_queries' weight")) {
    const bool floats = x.scalar_type() == torch::kFloat || x.scalar_type() == torch::kDouble;
    if (batched_runs(x.device()) && floats && x.dim() == 3 && x.numel() > 0 && b.defined() &&
        w.dim() == 3 && b.dim() == 2 && w.size(2) == x.size(2) && w.size(1) % 3 == 0 &&
        b.size(1) == w.size(1) && x.size(0) % runs == 0) {
      const auto out = SelectedQueriesFunction::apply(x, w, b, read);
      return {out[0], out[1]};
    }
    const auto out = for_each_run(runs, [&](int64_t r) {
      const SelectedQueries run =
          project_selected_queries(run_rows(x, runs, r), run_param(w, r), run_param(b, r), read);
      return std::vector<torch::Tensor>{run.queries, run.keys_values};
    });
    return {out[0], out[1]};
  }
  if (x.dim() != 3 || w.dim() != 2 || w.size(1) != x.size(2) || w.size(0) % 3 != 0 ||
      !b.defined() || b.dim() != 1 || b.size(0) != w.size(0)) {
    throw std::invalid_argument(
        "project_selected_queries: expected x (B, T, in), w (3D, in) and b (3D)");
  }
  const auto out = SelectedQueriesFunction::apply(x, w, b, read);
  return {out[0], out[1]};
}

}  // namespace minrnn::core
