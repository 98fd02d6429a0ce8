// torch::optim::AdamW with each tensor's update done in one pass over its values. LibTorch's step
// runs ~7 tensor ops per parameter (weight decay, two moment updates, sqrt, divide, add, addcdiv),
// each a dispatch and a pass over memory: ~4 ms of a ~80 ms minGRU training step at embed 128, for
// arithmetic worth a fraction of that. Same options, same per-parameter state (AdamWParamState),
// same save/load: checkpoints move freely between the two. The update is torch's, in float
// arithmetic that may round differently in the last bit (a fused multiply-add, a reciprocal).
// Contiguous float32 parameters on the CPU run a vectorised loop, on CUDA one kernel per tensor
// (kernels/cuda/pointwise_programs.h; LibTorch's step is ~7 launches per tensor there); anything
// else, or amsgrad, takes LibTorch's step unchanged.
#pragma once
#include <torch/torch.h>

namespace minrnn::core {

class FusedAdamW : public torch::optim::AdamW {
 public:
  using torch::optim::AdamW::AdamW;
  torch::Tensor step(LossClosure closure = nullptr) override;
};

}  // namespace minrnn::core
