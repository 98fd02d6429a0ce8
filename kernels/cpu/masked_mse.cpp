#include "kernels/cpu/masked_mse.h"

#include "kernels/math/masked_mse_math.h"

namespace minrnn::core {

void masked_mse_forward(const float* predicted, const float* target, const float* mask,
                        int64_t width, int64_t rows_per_run, int64_t runs, float* loss,
                        float* denominator) {
  for (int64_t run = 0; run < runs; ++run) {
    double squares = 0, weights = 0;
    for (int64_t r = run * rows_per_run; r < (run + 1) * rows_per_run; ++r) {
      squares +=
          static_cast<double>(mask[r]) * row_squared_error(predicted, target, r * width, width);
      weights += mask[r];
    }
    const float denom = static_cast<float>(weights > 1 ? weights : 1);
    loss[run] = static_cast<float>(squares / (double(width) * denom));
    denominator[run] = denom;
  }
}

void masked_mse_backward(const float* predicted, const float* target, const float* mask,
                         int64_t width, int64_t rows_per_run, int64_t runs, const float* grad_loss,
                         const float* denominator, float* grad) {
  const int64_t entries = runs * rows_per_run * width;
  for (int64_t i = 0; i < entries; ++i) {
    const int64_t row = i / width, run = row / rows_per_run;
    grad[i] = masked_mse_grad(grad_loss[run], mask[row], predicted[i], target[i], width,
                              denominator[run]);
  }
}

}  // namespace minrnn::core
