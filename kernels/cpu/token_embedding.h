// DT's token embedding's CPU loops (ops/token_embedding.h): each token = its group's bias + its
// input · W + the timestep's row of the time table, and the gradients of all of them. The
// forward's sums run in token_channels' order (kernels/math/token_embedding_math.h), each product
// and sum rounded on its own, so its bits are the CUDA kernel's; the gradients sum the steps in
// ascending order, where the GPU's run in another fixed order (the two agree to rounding). No
// tensors here.
#pragma once
#include <cstdint>

#include "kernels/math/token_embedding_math.h"

namespace minrnn::core {

// Group j's input (steps, n_j), its weight as (n_j, D) — Linear's transposed, so a token's
// channels are one contiguous run — and its bias (D).
struct TokenGroupsCpu {
  const float* inputs[kMaxTokenGroups];
  const float* weights_t[kMaxTokenGroups];
  const float* biases[kMaxTokenGroups];
};

// out (B·L, D) from the groups, the steps' timesteps and the time table (table_rows, D).
void token_embedding_forward(const TokenLayout& s, const TokenGroupsCpu& groups,
                             const int64_t* timesteps, const float* table, float* out);

// The gradients from tokens_grad (B·L, D), summed over the steps in ascending order, added into
// weight_t_grads[j] (n_j, D), bias_grads[j] (D) and table_grad (table_rows, D), which come
// zeroed; `scratch` holds D floats.
void token_embedding_backward(const TokenLayout& s, const float* const inputs[],
                              const int64_t* timesteps, const float* tokens_grad,
                              float* const weight_t_grads[], float* const bias_grads[],
                              float* table_grad, float* scratch);

}  // namespace minrnn::core
