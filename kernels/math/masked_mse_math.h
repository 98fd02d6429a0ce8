// DT's loss, the mean squared error of the predicted actions over the steps whose mask is 1
// (rl::masked_action_loss), shared by its CPU loops (kernels/cpu/masked_mse.h) and CUDA kernels
// (kernels/cuda/step_end_programs.h): for rows r of `width` actions,
//   loss = Σ_r mask_r Σ_a (p_ra − t_ra)² / (width · max(Σ_r mask_r, 1)),
// and its gradient with respect to p.
#pragma once
#include <cstdint>

#include "kernels/math/shared_inline.h"

namespace minrnn::core {

// Σ_a (p_a − t_a)² of the row starting at `first` (p, t: pointers, or the emulator's arrays).
template <typename Values>
MINRNN_SHARED_INLINE float row_squared_error(const Values& p, const Values& t, int64_t first,
                                             int64_t width) {
  float sum = 0.0f;
  for (int64_t a = first; a < first + width; ++a) {
    const float d = static_cast<float>(p[a]) - static_cast<float>(t[a]);
    sum += d * d;
  }
  return sum;
}

// ∂loss/∂p_ra times the loss's own gradient g; `denominator` is max(Σ mask, 1).
MINRNN_SHARED_INLINE float masked_mse_grad(float g, float mask, float p, float t, int64_t width,
                                           float denominator) {
  return g * mask * 2.0f * (p - t) / (static_cast<float>(width) * denominator);
}

}  // namespace minrnn::core
