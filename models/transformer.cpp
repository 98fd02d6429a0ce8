#include "models/transformer.h"

#include "ops/affine.h"

#include <stdexcept>
#include <string>

#include "ops/attention_probs.h"
#include "ops/mlp.h"
#include "ops/residual_norm.h"

namespace minrnn::core {

CausalSelfAttentionImpl::CausalSelfAttentionImpl(const TransformerOptions& o)
    : n_heads_(o.n_heads) {
  if (o.n_heads <= 0 || o.d_model % o.n_heads != 0) {
    throw std::invalid_argument("TransformerOptions: d_model " + std::to_string(o.d_model) +
                                " must be a positive multiple of n_heads " +
                                std::to_string(o.n_heads));
  }
  qkv = register_module("qkv", torch::nn::Linear(o.d_model, 3 * o.d_model));
  proj = register_module("proj", torch::nn::Linear(o.d_model, o.d_model));
  attn_dropout = register_module("attn_dropout", torch::nn::Dropout(o.dropout));
}

torch::Tensor CausalSelfAttentionImpl::forward(const torch::Tensor& x, const TokenSelection& read) {
  const int64_t B = x.size(0), T = x.size(1), D = x.size(2), H = n_heads_;
  torch::Tensor q, k, v;  // (B,H,T_q or T,D/H)
  if (read.all()) {
    // (B,T,3D) → 3 × (B,H,T,D/H)
    auto parts = affine(x, qkv->weight, qkv->bias)
                     .view({B, T, 3, H, D / H})
                     .permute({2, 0, 3, 1, 4})
                     .unbind(0);
    q = parts[0], k = parts[1], v = parts[2];
  } else {
    // The query rows of the packed weight for the read tokens alone; keys and values for all.
    const torch::Tensor xq = read.apply(x);
    const int64_t Tq = xq.size(1);
    q = affine(xq, qkv->weight.narrow(0, 0, D), qkv->bias.narrow(0, 0, D))
            .view({B, Tq, H, D / H})
            .transpose(1, 2);
    auto kv = affine(x, qkv->weight.narrow(0, D, 2 * D), qkv->bias.narrow(0, D, 2 * D))
                  .view({B, T, 2, H, D / H})
                  .permute({2, 0, 3, 1, 4})
                  .unbind(0);
    k = kv[0], v = kv[1];
  }
  // The query of token t may only attend to tokens ≤ t: the scale, that mask, the softmax and
  // the dropout in one op.
  auto probs =
      causal_attention_probs(torch::matmul(q, k.transpose(-2, -1)), 1.0 / std::sqrt(double(D / H)),
                             read, attn_dropout->options.p(), attn_dropout->is_training());
  auto y = torch::matmul(probs, v);
  return affine(y.transpose(1, 2).reshape({B, q.size(2), D}), proj->weight, proj->bias);
}

TransformerStack::TransformerStack(const TransformerOptions& o, int64_t n_layers)
    : n_heads_(o.n_heads) {
  for (int64_t i = 0; i < n_layers; ++i) {
    Block b;
    const std::string p = "block" + std::to_string(i) + "_";  // module names may not hold dots
    b.norm_attn = register_module(p + "norm_attn",
                                  torch::nn::LayerNorm(torch::nn::LayerNormOptions({o.d_model})));
    b.attn = register_module(p + "attn", CausalSelfAttention(o));
    b.norm_mlp = register_module(p + "norm_mlp",
                                 torch::nn::LayerNorm(torch::nn::LayerNormOptions({o.d_model})));
    b.mlp = register_module(
        p + "mlp", torch::nn::Sequential(torch::nn::Linear(o.d_model, o.mlp_ratio * o.d_model),
                                         torch::nn::GELU(),
                                         torch::nn::Linear(o.mlp_ratio * o.d_model, o.d_model)));
    blocks_.push_back(b);
  }
  dropout_ = register_module("dropout", torch::nn::Dropout(o.dropout));
  norm_out_ =
      register_module("norm_out", torch::nn::LayerNorm(torch::nn::LayerNormOptions({o.d_model})));
}

torch::Tensor TransformerStack::forward(const torch::Tensor& x, SequenceState* state,
                                        const TokenSelection& read,
                                        const InputDropout& input_dropout) {
  if (state != nullptr) {
    throw std::logic_error("TransformerStack::forward: attention carries no state; pass nullptr");
  }
  // Each residual add and the LayerNorm after it are one op (ops/residual_norm.h): a block takes
  // its input normed by its norm_attn and hands its output on normed by the next block's (the
  // last block's by norm_out); the first, the input dropped out and normed.
  const double p = dropout_->options.p();
  const bool training = dropout_->is_training();
  ResidualNorm h =
      add_dropout_norm({}, x, input_dropout.p, input_dropout.training, blocks_[0].norm_attn);
  for (size_t i = 0; i < blocks_.size(); ++i) {
    Block& b = blocks_[i];
    const bool top = i + 1 == blocks_.size();
    const TokenSelection top_read = top ? read : TokenSelection{};
    const torch::nn::LayerNorm& next = top ? norm_out_ : blocks_[i + 1].norm_attn;
    h = add_dropout_norm(h.sum, b.attn(h.normed, top_read), p, training, b.norm_mlp, top_read);
    h = add_dropout_norm(h.sum, mlp_forward(b.mlp, h.normed), p, training, next);
  }
  return h.normed;
}

torch::Tensor TransformerStack::step(const torch::Tensor&, SequenceState&, const InputDropout&) {
  throw std::logic_error("TransformerStack::step: not a streaming model; re-encode the window");
}

}  // namespace minrnn::core
