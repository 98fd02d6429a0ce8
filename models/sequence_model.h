// The interface every backbone of the decision agent implements (minGRU/minLSTM stacks, HGRN, the
// causal Transformer baseline): (B,T,D) → (B,T,D), plus an O(1)-per-token step mode where the model
// is recurrent.
#pragma once
#include <torch/torch.h>

#include <vector>

#include "ops/token_selection.h"  // TokenSelection

namespace minrnn::core {

// What one layer carries between tokens in step mode.
struct LayerState {
  torch::Tensor h;  // recurrent state (B, d_h); undefined = zeros
  torch::Tensor
      conv;  // the causal conv's last (kernel − 1) inputs (B, kernel − 1, D); undefined = zeros
};
using SequenceState = std::vector<LayerState>;

// The dropout a backbone applies to its input before anything else: the agent's embedding dropout
// (DT's). The minRNN and Transformer stacks join it to their first LayerNorm in one op
// (ops/residual_norm.h), where applied apart it would be a pass and a launch of its own.
struct InputDropout {
  double p = 0;
  bool training = false;
};

class SequenceModel : public torch::nn::Module {
 public:
  // Parallel (training) mode: (B,T,D) → (B,T',D), T' the tokens `read` selects. When state is given
  // it is the initial state and receives the final one (all T tokens advance it).
  virtual torch::Tensor forward(const torch::Tensor& x, SequenceState* state = nullptr,
                                const TokenSelection& read = {},
                                const InputDropout& input_dropout = {}) = 0;
  // One token x_t (B, D) → (B, D), carrying state. Only for streaming() models.
  virtual torch::Tensor step(const torch::Tensor& x_t, SequenceState& state,
                             const InputDropout& input_dropout = {}) = 0;
  // A fresh state (all zeros) for a batch.
  virtual SequenceState initial_state() const = 0;
  // True for recurrent models (step is O(1) per token); false for attention.
  virtual bool streaming() const = 0;
};

}  // namespace minrnn::core
