// Causal attention's probabilities as one op: dropout(softmax(scale · scores)) over the keys at or
// before each query, 0 past it (kernels/math/attention_math.h). In LibTorch ops that is the scale,
// a causal mask made (two aranges and a comparison) and applied, the softmax and the dropout —
// ~7 launches a layer forward and ~4 backward, each a gap in a replayed training step; fused, one
// CUDA launch each way. The dropout is ops/dropout.h's hashed one, its mask fused_dropout's on the
// same probabilities. Float32 on the CPU or CUDA (CUDA: rows of at most 256 keys); anything else
// runs the LibTorch ops.
#pragma once
#include <torch/torch.h>

#include "ops/token_selection.h"

namespace minrnn::core {

// scores (B, H, Tq, T): the queries' raw q·kᵀ against all T keys, the queries at the tokens
// `queries` selects of the T (all: Tq = T). Returns the probabilities after their dropout, of
// scores' shape; the gradient flows to scores.
torch::Tensor causal_attention_probs(const torch::Tensor& scores, double scale,
                                     const TokenSelection& queries, double p, bool training);

}  // namespace minrnn::core
