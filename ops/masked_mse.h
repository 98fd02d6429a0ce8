// DT's loss as one op: the mean squared error of predicted actions (B, K, A) against the dataset's
// (B, K, A) over the steps whose mask (B, K) is 1, the padding left out
// (kernels/math/masked_mse_math.h). Fused, the forward is one pass (one CUDA kernel) and the
// backward one more, where the same formula in LibTorch ops takes ~14 launches, each a gap in a
// replayed training step. Float32 on the CPU or CUDA, contiguous; anything else runs the formula
// in LibTorch ops. Only `predicted` gets a gradient.
#pragma once
#include <torch/torch.h>

namespace minrnn::core {

// With runs > 1 the batch is a pack's runs' (ops/run_axis.h), dim 0 their rows one after the
// other: each run's loss on its own, (runs).
torch::Tensor masked_mse(const torch::Tensor& predicted, const torch::Tensor& target,
                         const torch::Tensor& mask, int64_t runs = 1);

}  // namespace minrnn::core
