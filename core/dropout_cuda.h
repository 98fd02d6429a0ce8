// Host side of the CUDA dropout-add (dropout_kernels.h), for core/dropout.cpp. Built only with
// CUDA (cmake/Targets.cmake).
#pragma once
#include <torch/torch.h>

#include <cstdint>

namespace minrnn::core {

// (x +) keep · y · scale on a CUDA float32/float64 y (x: undefined, or y's shape, device and
// dtype); the mask is the CPU pass's (core/dropout_math.h).
torch::Tensor dropout_add_cuda(const torch::Tensor& x, const torch::Tensor& y, uint64_t seed,
                               int64_t threshold, double scale);

}  // namespace minrnn::core
