// Causal attention's probabilities (ops/attention_probs.h), shared by the CPU loops
// (kernels/cpu/attention_probs.cpp) and the CUDA kernels
// (kernels/cuda/attention_probs_programs.h): for each row of raw scores q·kᵀ over T keys,
//   probs = softmax(scale · scores) over the keys at or before the row's query, 0 past it;
//   out = dropout(probs) (ops/dropout.h's hashed dropout, element i of the flat (rows, T) array,
//   so `out` has fused_dropout's bits for the same probabilities);
// and the backward, ∂/∂scores = scale · probs · (g − Σ g·probs), g = ∂/∂probs through the dropout.
#pragma once
#include <cstdint>

#include "kernels/math/dropout_math.h"

namespace minrnn::core {

// Where each row's query sits among the T keys: rows come `queries` a batch × head, the query of
// row r at first + (r mod queries) · stride (every token: 0, 1; the top layer's state tokens: 1,
// 3).
struct QueryRows {
  int64_t queries, first, stride;
  MINRNN_SHARED_INLINE int64_t position(int64_t row) const {
    return first + (row % queries) * stride;
  }
};

// ∂/∂score of one element: prob and g its probability and the gradient through the dropout, dot
// the row's Σ g·probs.
MINRNN_SHARED_INLINE float softmax_score_grad(float prob, float g, float dot, float scale) {
  return scale * (prob * (g - dot));
}

}  // namespace minrnn::core
