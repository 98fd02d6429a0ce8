// Causal attention's probabilities as one op: dropout(softmax(scale · scores)) over the keys at or
// before each query, 0 past it (kernels/math/attention_math.h). In LibTorch ops that is the scale,
// a causal mask made (two aranges and a comparison) and applied, the softmax and the dropout —
// ~7 launches a layer forward and ~4 backward, each a gap in a replayed training step; fused, one
// CUDA launch each way. The dropout is ops/dropout.h's hashed one, its mask fused_dropout's on the
// same probabilities. Float32 on the CPU or CUDA (CUDA: rows of at most 256 keys); anything else
// runs the LibTorch ops.
#pragma once
#include <torch/torch.h>

#include "kernels/math/attention_math.h"
#include "ops/dropout.h"
#include "ops/token_selection.h"

namespace minrnn::core {

// scores (B, H, Tq, T): the queries' raw q·kᵀ against all T keys, the queries at the tokens
// `queries` selects of the T (all: Tq = T). Returns the probabilities after their dropout, of
// scores' shape; the gradient flows to scores.
torch::Tensor causal_attention_probs(const torch::Tensor& scores, double scale,
                                     const TokenSelection& queries, double p, bool training);

// The op's two passes without autograd, for an op that keeps the scores inside itself
// (ops/causal_attention.h). Whether they take rows of `keys` scores of `like`'s dtype on its
// device (else the LibTorch ops run):
bool attention_probs_fusable(const torch::Tensor& like, int64_t keys);
// scores (rows, T), each row of unit stride and `pitch` (its stride(0), ≥ T) floats from the next:
// the probabilities (kept for the backward) and their dropout, in the same pitch. A pitch a
// multiple of 4 keeps the products that read and write these rows on cuBLAS's aligned kernels.
struct AttentionProbs {
  torch::Tensor probs, out;
};
AttentionProbs attention_probs_forward(const torch::Tensor& scores, const QueryRows& queries,
                                       const PassDropout& dropout, double scale);
// The scores' gradient from the probabilities and the gradient of their dropout (out_grad), in
// probs' pitch.
torch::Tensor attention_probs_backward(const torch::Tensor& probs, const torch::Tensor& out_grad,
                                       const PassDropout& dropout, double scale);

}  // namespace minrnn::core
