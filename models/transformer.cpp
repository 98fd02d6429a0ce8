#include "models/transformer.h"

#include "ops/affine.h"

#include <stdexcept>
#include <string>

#include "ops/causal_attention.h"
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
  const double p = attn_dropout->options.p();
  const bool training = attn_dropout->is_training();
  torch::Tensor y;  // (B, T', D)
  if (read.all()) {
    y = causal_attention(affine(x, qkv->weight, qkv->bias), {}, n_heads_, read, p, training);
  } else {
    // The read tokens' queries alone; keys and values for all.
    const SelectedQueries projected = project_selected_queries(x, qkv->weight, qkv->bias, read);
    y = causal_attention(projected.keys_values, projected.queries, n_heads_, read, p, training);
  }
  return affine(y, proj->weight, proj->bias);
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
