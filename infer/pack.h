// The pack step of the inference path: a trained torch module's weights copied once into the plain
// float structs the CPU loops read (kernels/cpu/float_loops.h). Each engine's constructor
// (packed_*.cpp) walks its module and packs the parts through these; after that nothing in infer/
// touches torch but policy.cpp's reference engine, which runs the module itself.
#pragma once
#include <torch/torch.h>

#include <cstdint>
#include <vector>

#include "kernels/cpu/float_loops.h"

namespace minrnn::core::cpu {

// Copies a float tensor (any device, contiguous or not) into a vector.
std::vector<float> to_vector(const torch::Tensor& t);

Dense pack_dense(const torch::nn::LinearImpl& linear);
// Output rows [row0, row0 + count) of `linear`: one part of a fused projection.
Dense pack_dense_rows(const torch::nn::LinearImpl& linear, int64_t row0, int64_t count);
Norm pack_norm(const torch::nn::LayerNormImpl& norm);
ResidualMlp pack_mlp(const torch::nn::LayerNormImpl& norm, const torch::nn::SequentialImpl& mlp);

}  // namespace minrnn::core::cpu
