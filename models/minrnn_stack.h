// The residual minRNN block and stack (paper App. C.2: minRNN → MLP with residuals and
// pre-LayerNorm; the language/LRA setting adds a causal Conv1d with kernel 4 before the minRNN):
//   x = x + Dropout(MinRNN(Conv?(LN(x))));   x = x + Dropout(MLP(LN(x)))
#pragma once
#include <torch/torch.h>

#include "models/minrnn.h"
#include "models/sequence_model.h"
#include "ops/residual_norm.h"

namespace minrnn::core {

// Depthwise causal convolution over time: y_t = Σ_{j<k} w_j ⊙ x_{t−k+1+j} + bias (zeros before t =
// 1).
class CausalConv1dImpl : public torch::nn::Module {
 public:
  CausalConv1dImpl(int64_t channels, int64_t kernel);
  // x (B,T,C); history (B,kernel−1,C) or undefined (zeros) is prepended, and replaced by the last
  // inputs when given.
  torch::Tensor forward(const torch::Tensor& x, torch::Tensor* history = nullptr);
  int64_t kernel() const { return kernel_; }
  torch::Tensor weight, bias;  // (C, kernel), (C)

 private:
  int64_t channels_, kernel_;
};
TORCH_MODULE(CausalConv1d);

struct BlockOptions {
  CellKind cell = CellKind::kMinGRU;
  int64_t d_model = 128;
  double expansion = 1.0;
  bool conv = false;
  int64_t conv_kernel = 4;
  int64_t mlp_ratio = 4;
  double dropout = 0.1;
  bool log_space = true;
  ScanMode scan = ScanMode::kFused;
};

// A pre-norm block: x + dropout(minRNN(norm_rnn(x))), then + dropout(MLP(norm_mlp(·))). It takes
// its input already normed by norm_rnn and gives its output normed by `next` (the next block's
// norm_rnn, or the stack's norm_out) beside it: each residual join and the norm after it are one
// op (ops/residual_norm.h).
class ResidualBlockImpl : public torch::nn::Module {
 public:
  explicit ResidualBlockImpl(const BlockOptions& options);
  // (B,T,D) → (B,T',D): the recurrence runs over all T tokens, what follows it over `read`'s.
  ResidualNorm forward(const torch::Tensor& x, const torch::Tensor& x_normed,
                       const torch::nn::LayerNorm& next, LayerState* state = nullptr,
                       const TokenSelection& read = {});
  ResidualNorm step(const torch::Tensor& x_t, const torch::Tensor& x_normed,
                    const torch::nn::LayerNorm& next, LayerState& state);  // (B,D)

  torch::nn::LayerNorm norm_rnn{nullptr}, norm_mlp{nullptr};
  CausalConv1d conv{nullptr};
  MinRnn rnn{nullptr};
  torch::nn::Sequential mlp{nullptr};
  torch::nn::Dropout dropout{nullptr};
};
TORCH_MODULE(ResidualBlock);

// N residual blocks and a final LayerNorm.
class MinRnnStack : public SequenceModel {
 public:
  MinRnnStack(const BlockOptions& options, int64_t n_layers);
  torch::Tensor forward(const torch::Tensor& x, SequenceState* state = nullptr,
                        const TokenSelection& read = {},
                        const InputDropout& input_dropout = {}) override;
  torch::Tensor step(const torch::Tensor& x_t, SequenceState& state,
                     const InputDropout& input_dropout = {}) override;
  SequenceState initial_state() const override { return SequenceState(blocks_.size()); }
  bool streaming() const override { return true; }
  const std::vector<ResidualBlock>& blocks() const { return blocks_; }
  const torch::nn::LayerNorm& norm_out() const { return norm_out_; }

 private:
  void check_state(const SequenceState& state) const;
  // The input dropped out and normed by the first block's norm_rnn, in one op.
  ResidualNorm input_join(const torch::Tensor& x, const InputDropout& input_dropout) const;
  const torch::nn::LayerNorm& norm_after(size_t block) const;
  std::vector<ResidualBlock> blocks_;
  torch::nn::LayerNorm norm_out_{nullptr};
};

}  // namespace minrnn::core
