// DT's masked MSE's CPU loops (ops/masked_mse.h) over kernels/math/masked_mse_math.h: every run's
// loss and its denominator, and the gradient of the predictions. No tensors here:
// ops/masked_mse.cpp allocates and dispatches.
#pragma once
#include <cstdint>

namespace minrnn::core {

// For each of `runs` runs (rows_per_run rows of `width` actions each, one after the other):
// loss[run] and denominator[run] = max(Σ mask, 1). Each row's error in float, the sums in double,
// so the result rounds once and does not depend on a thread count.
void masked_mse_forward(const float* predicted, const float* target, const float* mask,
                        int64_t width, int64_t rows_per_run, int64_t runs, float* loss,
                        float* denominator);

// grad[i] = ∂loss/∂predicted[i] · grad_loss of i's run, for every entry of `runs` runs' rows.
void masked_mse_backward(const float* predicted, const float* target, const float* mask,
                         int64_t width, int64_t rows_per_run, int64_t runs, const float* grad_loss,
                         const float* denominator, float* grad);

}  // namespace minrnn::core
