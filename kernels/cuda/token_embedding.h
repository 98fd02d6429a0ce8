// Launchers of the token embedding's CUDA kernels (kernels/cuda/token_embedding_programs.h and
// token_embedding_grad_programs.h): plain pointers to contiguous float32 / int64 device arrays and
// a stream, no torch.
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

// Where the backward writes each group's weight (D, n_j) and bias (D) gradients.
struct TokenEmbeddingGrads {
  float* weight[kMaxTokenGroups];
  float* bias[kMaxTokenGroups];
};
// From the tokens' gradient (B·L, D), one launch each: the groups' weight and bias gradients, and
// the time table's (rows, D), whole. Neither reads the other's: two streams may take them.
cudaError_t token_parameter_grads(const TokenEmbeddingArgs& args, const float* tokens_grad,
                                  const TokenEmbeddingGrads& grads, cudaStream_t stream);
cudaError_t time_table_grad(const TokenEmbeddingArgs& args, const float* tokens_grad,
                            float* table_grad, cudaStream_t stream);

}  // namespace minrnn::core::kernels
