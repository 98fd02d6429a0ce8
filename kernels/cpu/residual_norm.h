// The residual join's CPU loops (ops/residual_norm.h): sum = x + dropout(y), then each row's
// LayerNorm, forward and backward, over a range of rows. No threads and no tensors here:
// ops/residual_norm.cpp hands fixed ranges of rows to torch's threads.
#pragma once
#include <cstdint>

#include "kernels/math/dropout_math.h"
#include "kernels/math/residual_norm_math.h"

namespace minrnn::core {

// Rows [first, end) of the forward (x null: no residual): sum, normed and each row's (mean, rstd)
// in moments; `scratch` holds D floats.
void residual_norm_forward_rows(const JoinRows& rows, int64_t D, int64_t first, int64_t end,
                                const HashedDropout& dropout, float eps, const float* x,
                                const float* y, const float* gamma, const float* beta, float* sum,
                                float* normed, float* moments, float* scratch);

// Rows [first, end) of the backward: x's and y's gradients (x_grad null: no residual; sum_grad
// null: nothing read the sum), the rows' γ and β gradients added into gamma_partial and
// beta_partial; `scratch` holds 4·D floats.
void residual_norm_backward_rows(const JoinRows& rows, int64_t D, int64_t first, int64_t end,
                                 const HashedDropout& dropout, const float* sum,
                                 const float* moments, const float* gamma, const float* sum_grad,
                                 const float* normed_grad, float* x_grad, float* y_grad,
                                 float* gamma_partial, float* beta_partial, float* scratch);

}  // namespace minrnn::core
