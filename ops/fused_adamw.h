// torch::optim::AdamW with each tensor's update done in one pass over its values. LibTorch's step
// runs ~7 tensor ops per parameter (weight decay, two moment updates, sqrt, divide, add, addcdiv),
// each a dispatch and a pass over memory: ~4 ms of a ~80 ms minGRU training step at embed 128, for
// arithmetic worth a fraction of that. Same options, same per-parameter state (AdamWParamState),
// same save/load: checkpoints move freely between the two. The update is torch's, in float
// arithmetic that may round differently in the last bit (a fused multiply-add, a reciprocal).
// Contiguous float32 parameters on the CPU run a vectorised loop, on CUDA one kernel per tensor
// (kernels/cuda/step_end_programs.h; LibTorch's step is ~7 launches per tensor there); anything
// else, or amsgrad, takes LibTorch's step unchanged.
#pragma once
#include <torch/torch.h>

#include "kernels/math/adamw_math.h"

namespace minrnn::core {

class FusedAdamW : public torch::optim::AdamW {
 public:
  using torch::optim::AdamW::AdamW;
  torch::Tensor step(LossClosure closure = nullptr) override;

  // A step that reads no host value, for a CUDA graph to capture once and replay
  // (rl/train_step.h). One parameter group of contiguous float32 parameters, each with a
  // gradient, on one device. The values come from `scalars` (an AdamWStepScalars as
  // kAdamWStepScalarCount float32 on that device) as it holds them when the step runs: the
  // update (next_update(), written there by the host before each step), the gradient scale and
  // whether to apply the step. A pack's runs stacked as one model (ops/run_axis.h;
  // rl/stacked_pack.h): every parameter (P, …) and `scalars` (P, kAdamWStepScalarCount), run r's
  // slices stepped with row r. Counts nothing: call count_step() after each step taken.
  void step_with(const torch::Tensor& scalars);
  // The update of the next step (each state's count + 1) at the group's learning rate, or at
  // `lr`, which becomes the group's.
  AdamWUpdate next_update();
  AdamWUpdate next_update(double lr);
  // One more step in every parameter's state (what checkpoints save), as step() counts.
  void count_step();

  // p's moments, made (zeros) where p has no state yet: what a pack's optimizer takes in from its
  // runs' and gives back to them.
  torch::Tensor& exp_avg(const torch::Tensor& p);
  torch::Tensor& exp_avg_sq(const torch::Tensor& p);
  // The steps counted (the first parameter's; every one counts alike).
  int64_t steps() const;
};

}  // namespace minrnn::core
