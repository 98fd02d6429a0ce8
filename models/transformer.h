// The Decision Transformer baseline backbone: GPT-style pre-LN blocks with causal self-attention,
//   x = x + Dropout(Attn(LN(x)));   x = x + Dropout(MLP(LN(x)))
// and a final LayerNorm. No position embedding: DT adds timestep embeddings to its tokens.
// Attention sees the whole window at once, so there is no O(1) step mode (streaming() == false).
#pragma once
#include <torch/torch.h>

#include "models/sequence_model.h"

namespace minrnn::core {

struct TransformerOptions {
  int64_t d_model = 128;
  int64_t n_heads = 1;  // DT uses one head
  int64_t mlp_ratio = 4;
  double dropout = 0.1;
};

class CausalSelfAttentionImpl : public torch::nn::Module {
 public:
  explicit CausalSelfAttentionImpl(const TransformerOptions& options);
  // (B,T,D) → (B,T',D): every token is a key and value, only `read`'s tokens ask queries.
  torch::Tensor forward(const torch::Tensor& x, const TokenSelection& read = {});

  torch::nn::Linear qkv{nullptr}, proj{nullptr};
  torch::nn::Dropout attn_dropout{nullptr};

 private:
  int64_t n_heads_;
};
TORCH_MODULE(CausalSelfAttention);

class TransformerStack : public SequenceModel {
 public:
  TransformerStack(const TransformerOptions& options, int64_t n_layers);
  // `state` must be null: attention keeps no recurrent state.
  torch::Tensor forward(const torch::Tensor& x, SequenceState* state = nullptr,
                        const TokenSelection& read = {},
                        const InputDropout& input_dropout = {}) override;
  // Throws std::logic_error: re-encode the window with forward() instead.
  torch::Tensor step(const torch::Tensor& x_t, SequenceState& state,
                     const InputDropout& input_dropout = {}) override;
  SequenceState initial_state() const override { return {}; }
  bool streaming() const override { return false; }

  struct Block {
    torch::nn::LayerNorm norm_attn{nullptr}, norm_mlp{nullptr};
    CausalSelfAttention attn{nullptr};
    torch::nn::Sequential mlp{nullptr};
  };
  const std::vector<Block>& blocks() const { return blocks_; }
  const torch::nn::LayerNorm& norm_out() const { return norm_out_; }
  int64_t n_heads() const { return n_heads_; }

 private:
  std::vector<Block> blocks_;
  int64_t n_heads_ = 1;
  torch::nn::Dropout dropout_{nullptr};
  torch::nn::LayerNorm norm_out_{nullptr};
};

}  // namespace minrnn::core
