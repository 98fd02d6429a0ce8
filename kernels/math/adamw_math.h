// One element of torch's AdamW update, shared by FusedAdamW's CPU loop (ops/fused_adamw.cpp) and
// its CUDA kernel (kernels/cuda/pointwise_programs.h).
#pragma once
#include <math.h>

#include "kernels/math/shared_inline.h"

namespace minrnn::core {

struct AdamWUpdate {
  float decay;  // 1 − lr·weight_decay
  float beta1, beta2;
  float one_minus_beta1, one_minus_beta2;
  float inv_sqrt_bc2;  // 1 / √(1 − β₂ᵗ)
  float eps;
  float step_size;  // lr / (1 − β₁ᵗ)
};

// A step's values as a step that reads no host value finds them in device memory (rl/train_step.h:
// what a CUDA graph replays): the update the host wrote for this step, the clip's gradient scale
// and whether to apply the step at all (0 once a loss or gradient norm was not finite), both
// computed on the device.
struct AdamWStepScalars {
  AdamWUpdate update;
  float grad_scale;
  float apply;
};
constexpr int kAdamWStepScalarCount = sizeof(AdamWStepScalars) / sizeof(float);

// m ← β₁m + (1−β₁)g, v ← β₂v + (1−β₂)g², p ← p·decay − step_size · m / (√v / √bc2 + ε).
MINRNN_SHARED_INLINE void adamw_element(float& p, float g, float& m, float& v,
                                        const AdamWUpdate& u) {
  m = m * u.beta1 + u.one_minus_beta1 * g;
  v = v * u.beta2 + u.one_minus_beta2 * g * g;
  const float denom = sqrtf(v) * u.inv_sqrt_bc2 + u.eps;
  p = p * u.decay - u.step_size * m / denom;
}

}  // namespace minrnn::core
