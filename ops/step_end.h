// The end of a training step that reads nothing back to the host (rl/train_step.h): after the
// backward, the clip's gradient scale, whether AdamW applies the step and, for the first step whose
// loss or gradient norm is not finite, which step and what (kernels/math/adamw_math.h,
// end_of_step). On CUDA one thread does it all, one launch where the same arithmetic in LibTorch
// ops took ~20 one-element kernels, each a gap in a replayed step; on the CPU the same arithmetic.
#pragma once
#include <torch/torch.h>

namespace minrnn::core {

// Every tensor on one device, each at an address that stays (a CUDA graph replays them).
struct StepEndTensors {
  torch::Tensor loss, norm;  // the step's, float32 scalars (norm 0 where nothing clips)
  torch::Tensor step;        // int64, one value: the step's number
  torch::Tensor scalars;     // kAdamWStepScalarCount float32: grad scale and apply written
  torch::Tensor verdict;     // kStepVerdictCount int64 (kernels/math/adamw_math.h, StepVerdict)
  torch::Tensor loss_kept, norm_kept;  // float32 scalars: the loss and norm, for the host to read
};

// `clip`: the largest global gradient norm (≤ 0: no clipping).
void end_step(const StepEndTensors& t, double clip);

}  // namespace minrnn::core
