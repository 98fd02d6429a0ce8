// One element of torch's AdamW update, shared by FusedAdamW's CPU loop (ops/fused_adamw.cpp) and
// its CUDA kernel (kernels/cuda/step_end_programs.h).
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
// Where the fields the step writes sit among the floats (the host writes the update before them).
constexpr int kHostWrittenScalars = sizeof(AdamWUpdate) / sizeof(float);
constexpr int kGradScaleScalar = kHostWrittenScalars, kApplyScalar = kHostWrittenScalars + 1;

// How a training step ends on the device, after its backward (rl/train_step.h): the clip's
// gradient scale for a global gradient norm `norm` (clip > 0; else 1), whether AdamW applies the
// step (`apply`, the previous steps' flag, stays 0 once a loss or norm was not finite), and, for
// the first step that was not, what was not (record: kBadLoss or kBadGradNorm, else 0).
constexpr int64_t kBadLoss = 1, kBadGradNorm = 2;
// A step's verdict, two int64 values: the first step that was not finite (0: none yet), and what.
enum StepVerdict : int { kFirstBadStep, kBadWhat, kStepVerdictCount };
struct StepEnd {
  float grad_scale, apply;
  int64_t record;
};
MINRNN_SHARED_INLINE StepEnd end_of_step(float loss, float norm, float clip, float apply) {
  const bool loss_ok = isfinite(loss), ok = loss_ok && isfinite(norm);
  // As LibTorch's clip_grad_norm_: clip / (norm + 1e-6), at most 1 (a NaN stays NaN).
  const float ratio = clip / (norm + 1e-6f);
  StepEnd end;
  end.grad_scale = clip > 0.0f ? (ratio > 1.0f ? 1.0f : ratio) : 1.0f;
  end.apply = ok ? apply : 0.0f;
  end.record = apply != 0.0f && !ok ? (loss_ok ? kBadGradNorm : kBadLoss) : 0;
  return end;
}

// m ← β₁m + (1−β₁)g, v ← β₂v + (1−β₂)g², p ← p·decay − step_size · m / (√v / √bc2 + ε).
MINRNN_SHARED_INLINE void adamw_element(float& p, float g, float& m, float& v,
                                        const AdamWUpdate& u) {
  m = m * u.beta1 + u.one_minus_beta1 * g;
  v = v * u.beta2 + u.one_minus_beta2 * g * g;
  const float denom = sqrtf(v) * u.inv_sqrt_bc2 + u.eps;
  p = p * u.decay - u.step_size * m / denom;
}

}  // namespace minrnn::core
