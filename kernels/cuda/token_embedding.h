// Launchers of the token embedding's CUDA kernels (kernels/cuda/token_embedding_programs.h): plain
// pointers to contiguous float32 / int64 device arrays and a stream, no torch.
#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>

#include "kernels/math/token_embedding_math.h"

namespace minrnn::core::kernels {

// Group j (< shape.groups): input (B·K, n_j), weight (D, n_j), bias (D); timesteps (B·K); the time
// table (rows, D).
struct TokenEmbeddingArgs {
  TokenLayout shape;
  const float* input[kMaxTokenGroups];
  const float* weight[kMaxTokenGroups];
  const float* bias[kMaxTokenGroups];
  const int64_t* timesteps;
  const float* table;
};
// The tokens (B·L, D), one launch.
cudaError_t token_embedding(const TokenEmbeddingArgs& args, float* tokens, cudaStream_t stream);

// Where the backward writes: each group's weight (D, n_j) and bias (D) gradients, and the time
// table's (rows, D), whole.
struct TokenEmbeddingGrads {
  float* weight[kMaxTokenGroups];
  float* bias[kMaxTokenGroups];
  float* table;
};
// From the tokens' gradient (B·L, D): two launches.
cudaError_t token_embedding_backward(const TokenEmbeddingArgs& args, const float* tokens_grad,
                                     const TokenEmbeddingGrads& grads, cudaStream_t stream);

}  // namespace minrnn::core::kernels
