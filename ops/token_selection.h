// Which tokens of a (B, T, …) sequence an op or a model reads or returns (models/sequence_model.h,
// ops/residual_norm.h).
#pragma once
#include <torch/torch.h>

namespace minrnn::core {

// The tokens whose outputs a parallel forward returns: t = first, first + stride, ... A decision
// agent reads only its state tokens (every third), so the top layer does the work after its token
// mixing (MLP, residuals, final norm; the Transformer's top queries too) for those alone — the
// outputs it returns equal the full forward's at those tokens.
struct TokenSelection {
  int64_t first = 0, stride = 1;
  bool all() const { return first == 0 && stride == 1; }
  // How many of `tokens` tokens it selects (apply's T').
  int64_t count(int64_t tokens) const {
    return tokens > first ? (tokens - first + stride - 1) / stride : 0;
  }
  // x (B, T, …) → (B, T', …), a strided view of the selected tokens.
  torch::Tensor apply(const torch::Tensor& x) const {
    return all() ? x : x.slice(1, first, x.size(1), stride);
  }
};

}  // namespace minrnn::core
