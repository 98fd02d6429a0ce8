// Zeros that nothing writes, shared: the inputs an op reads as zero when the caller gave none (a
// scan's start state, the gradient of a state nobody used). A fresh torch::zeros there is a fill
// kernel in every replay of a captured training step, one launch each (6 a minGRU step); these
// are filled once.
#pragma once
#include <torch/torch.h>

namespace minrnn::core {

// Zeros of `shape` on like's device in like's dtype: a view of one buffer per device and dtype,
// made on first use and grown as needed (the smaller ones kept: a captured graph may read them),
// never written after. Nothing may write into the result.
// While the current CUDA stream is capturing a graph, a buffer not yet there is not made (its fill
// would only run at the first replay, and an eager reader before that would see garbage): the
// caller gets torch::zeros, as it did before.
torch::Tensor zeros_to_read(at::IntArrayRef shape, const torch::Tensor& like);

}  // namespace minrnn::core
