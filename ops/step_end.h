// The end of a training step that reads nothing back to the host (rl/train_step.h): after the
// backward, the clip's gradient scale, whether AdamW applies the step and, for the first step whose
// loss or gradient norm is not finite, which step and what (kernels/math/adamw_math.h,
// end_of_step), with the global gradient norm it clips by. On CUDA two launches (the gradients'
// squares summed a block at a time, then one block for the rest) where LibTorch's foreach norm,
// stack and norm and ~20 one-element ops took ~25 kernels, each a gap in a replayed step; on the
// CPU the same arithmetic.
#pragma once
#include <torch/torch.h>

#include <vector>

namespace minrnn::core {

// Every tensor on one device, each at an address that stays (a CUDA graph replays them).
struct StepEndTensors {
  torch::Tensor loss;                // the step's, a float32 scalar
  std::vector<torch::Tensor> grads;  // the step's gradients, contiguous float32
  torch::Tensor step;                // int64, one value: the step's number
  torch::Tensor scalars;             // kAdamWStepScalarCount float32: grad scale and apply written
  torch::Tensor verdict;  // kStepVerdictCount int64 (kernels/math/adamw_math.h, StepVerdict)
  torch::Tensor loss_kept, norm_kept;  // float32 scalars: the loss and norm, for the host to read
};

// `clip`: the largest global gradient norm (≤ 0: no clipping, and the norm kept is 0). The norm is
// LibTorch's clip_grad_norm_'s on the CPU (each tensor's norm, then theirs); on CUDA the squares
// summed in a fixed order (kernels/cuda/step_end_programs.h, SquareSums), the same to rounding.
// A pack's runs stacked (ops/run_axis.h) when the loss is (runs): every gradient (runs, …), the
// step numbers (runs), scalars (runs, kAdamWStepScalarCount), verdicts (runs, kStepVerdictCount)
// and the kept loss and norm (runs): each run's step ends as it would alone, by one clip.
void end_step(const StepEndTensors& t, double clip);

}  // namespace minrnn::core
