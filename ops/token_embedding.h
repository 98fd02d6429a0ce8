// A Decision Transformer window's tokens as one op (kernels/math/token_embedding_math.h): each step
// k of a window gives one token per group — return-to-go, state, action — token G·k + j being
// group j's Linear of its step-k input plus the time table's row for the step's timestep. Fused, it
// is one CUDA launch forward and two backward, where LibTorch's ops (a block-diagonal product, the
// time lookup, the add) take ~10 and ~18, each a gap in a replayed training step; every sum runs
// in a fixed order (LibTorch's embedding backward on CUDA may add with atomics).
#pragma once
#include <torch/torch.h>

#include <vector>

namespace minrnn::core {

struct TokenGroup {
  torch::Tensor input;   // (B, K, n): each step's input
  torch::Tensor weight;  // (D, n): the group's Linear
  torch::Tensor bias;    // (D)
};

// The tokens (B, L, D), L ≤ G·K (the window's last tokens left out): token G·k + j is
// groups[j]'s Linear of its step-k input plus row clamp(timesteps[b, k], 0, rows − 1) of
// time_table (rows, D); timesteps (B, K) int64. Fused for float32, contiguous tensors on one
// device (the CPU or CUDA), at most four groups, inputs without gradient; anything else runs the
// same in LibTorch ops. Gradients reach the weights, biases and the time table. A pack's runs
// stacked (ops/run_axis.h): every weight, bias and the time table with a leading axis of P, dim 0
// of the inputs and timesteps the runs' rows.
torch::Tensor embed_tokens(const std::vector<TokenGroup>& groups, const torch::Tensor& timesteps,
                           const torch::Tensor& time_table, int64_t tokens);

}  // namespace minrnn::core
