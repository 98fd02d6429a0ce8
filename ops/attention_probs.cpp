#include "ops/attention_probs.h"

#include <limits>

#include "kernels/cpu/attention_probs.h"
#include "kernels/cuda/phase_program.h"  // RowGrid: the widest row the CUDA kernels take
#include "kernels/math/attention_math.h"
#include "ops/device.h"
#include "ops/dropout.h"
#include "ops/parallel_tasks.h"
#ifdef MINRNN_WITH_CUDA
#include "ops/attention_probs_cuda.h"
#endif

namespace minrnn::core {
namespace {

// Rows a CPU task takes.
constexpr int64_t kTaskRows = 64;

// (rows, T) as the passes take it: rows of unit stride, each `pitch` (its stride(0)) ≥ T floats
// from the next; x itself where it is so, else its contiguous copy.
torch::Tensor rows_with_pitch(const torch::Tensor& x) {
  const bool pitched = x.dim() == 2 && x.stride(1) == 1 && x.stride(0) >= x.size(1);
  return pitched ? x : x.contiguous();
}

// Empty rows of `like`'s shape and pitch (the pad past each row's T never touched).
torch::Tensor empty_rows_like(const torch::Tensor& like) {
  return torch::empty({like.size(0), like.stride(0)}, like.options()).narrow(1, 0, like.size(1));
}

class AttentionProbsFunction : public torch::autograd::Function<AttentionProbsFunction> {
 public:
  // scores as (rows, T), contiguous.
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& scores,
                               const QueryRows& queries, const PassDropout& dropout, double scale) {
    const AttentionProbs pass = attention_probs_forward(scores, queries, dropout, scale);
    ctx->save_for_backward({pass.probs});
    ctx->saved_data["scale"] = scale;
    dropout.save(ctx);
    return pass.out;
  }

  static torch::autograd::tensor_list backward(torch::autograd::AutogradContext* ctx,
                                               torch::autograd::tensor_list grads) {
    const torch::Tensor scores_grad =
        attention_probs_backward(ctx->get_saved_variables()[0], grads[0], PassDropout::saved(ctx),
                                 ctx->saved_data["scale"].toDouble());
    return {scores_grad, torch::Tensor(), torch::Tensor(), torch::Tensor()};
  }
};

// The same in LibTorch ops: what anything the op does not take runs.
torch::Tensor unfused(const torch::Tensor& scores, double scale, const TokenSelection& queries,
                      double p, bool training) {
  const int64_t T = scores.size(-1);
  const auto key_pos = torch::arange(T, scores.options().dtype(torch::kLong));
  const auto query_pos = queries.apply(key_pos.unsqueeze(0)).squeeze(0);
  const auto future = key_pos.unsqueeze(0) > query_pos.unsqueeze(1);  // (Tq, T)
  const torch::Tensor masked =
      (scores * scale).masked_fill(future, -std::numeric_limits<float>::infinity());
  return fused_dropout(torch::softmax(masked, -1), p, training);
}

}  // namespace

AttentionProbs attention_probs_forward(const torch::Tensor& scores_rows, const QueryRows& queries,
                                       const PassDropout& dropout, double scale) {
  const torch::Tensor scores = rows_with_pitch(scores_rows);
  const int64_t rows = scores.size(0), T = scores.size(1), pitch = scores.stride(0);
  AttentionProbs pass{empty_rows_like(scores), empty_rows_like(scores)};
#ifdef MINRNN_WITH_CUDA
  if (scores.is_cuda()) {
    attention_probs_cuda(scores, queries, dropout, static_cast<float>(scale), pass.probs, pass.out);
    return pass;
  }
#endif
  const float* s = scores.data_ptr<float>();
  float *p = pass.probs.data_ptr<float>(), *o = pass.out.data_ptr<float>();
  parallel_ranges(rows, kTaskRows, [&](int64_t r0, int64_t r1) {
    attention_probs_forward_rows(s, T, pitch, queries, static_cast<float>(scale), r0, r1,
                                 dropout.dropout, p, o);
  });
  return pass;
}

torch::Tensor attention_probs_backward(const torch::Tensor& probs, const torch::Tensor& out_grad,
                                       const PassDropout& dropout, double scale) {
  // out_grad in probs' pitch, as the passes read both by one index.
  torch::Tensor g = out_grad;
  if (g.strides() != probs.strides()) g = empty_rows_like(probs).copy_(out_grad);
  torch::Tensor scores_grad = empty_rows_like(probs);
#ifdef MINRNN_WITH_CUDA
  if (probs.is_cuda()) {
    attention_probs_backward_cuda(probs, g, dropout, static_cast<float>(scale), scores_grad);
    return scores_grad;
  }
#endif
  const int64_t rows = probs.size(0), T = probs.size(1), pitch = probs.stride(0);
  const float *p = probs.data_ptr<float>(), *gp = g.data_ptr<float>();
  float* d = scores_grad.data_ptr<float>();
  parallel_ranges(rows, kTaskRows, [&](int64_t r0, int64_t r1) {
    attention_probs_backward_rows(p, gp, T, pitch, static_cast<float>(scale), r0, r1,
                                  dropout.dropout, d);
  });
  return scores_grad;
}

bool attention_probs_fusable(const torch::Tensor& like, int64_t keys) {
  if (like.scalar_type() != torch::kFloat) return false;
#ifdef MINRNN_WITH_CUDA
  if (like.is_cuda() && keys > grid::RowGrid::kMaxWidth) return false;
#else
  (void)keys;
#endif
  return has_own_kernels(like.device());
}

torch::Tensor causal_attention_probs(const torch::Tensor& scores, double scale,
                                     const TokenSelection& queries, double p, bool training) {
  if (scores.dim() != 4) {
    throw std::invalid_argument("causal_attention_probs: scores must be (B, H, Tq, T)");
  }
  const int64_t Tq = scores.size(2), T = scores.size(3);
  if (queries.first + (Tq - 1) * queries.stride >= T && Tq > 0) {
    throw std::invalid_argument("causal_attention_probs: the queries select past the T keys");
  }
  if (scores.numel() == 0 || !attention_probs_fusable(scores, T)) {
    return unfused(scores, scale, queries, p, training);
  }
  const PassDropout dropout = next_pass_dropout(p, training, scores.device());
  const QueryRows rows{Tq, queries.first, queries.stride};
  return AttentionProbsFunction::apply(scores.reshape({-1, T}).contiguous(), rows, dropout, scale)
      .view(scores.sizes());
}

}  // namespace minrnn::core
