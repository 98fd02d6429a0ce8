// The token embedding's CUDA kernels: the phase programs of token_embedding_programs.h and
// token_embedding_grad_programs.h under kernels/cuda/launch.cuh's phase loop. Built with
// --fmad=false (kernels/CMakeLists.txt): the forward rounds each product and sum as the CPU loops
// do, to the same bits.
#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/token_embedding.h"
#include "kernels/cuda/token_embedding_grad_programs.h"
#include "kernels/cuda/token_embedding_programs.h"

namespace minrnn::core::kernels {
namespace {

using grid::DeviceMemory;

template <typename K>
void set_groups(K& k, const TokenEmbeddingArgs& a) {
  for (int j = 0; j < a.shape.groups; ++j) {
    k.input[j] = a.input[j];
    k.weight[j] = a.weight[j];
    k.bias[j] = a.bias[j];
  }
}

}  // namespace

cudaError_t token_embedding(const TokenEmbeddingArgs& a, float* tokens, cudaStream_t stream) {
  grid::TokenEmbedding<DeviceMemory> k{};
  set_groups(k, a);
  k.shape = a.shape;
  k.timesteps = a.timesteps;
  k.table = a.table;
  k.out = tokens;
  return launch(k.prepared(), stream);
}

cudaError_t token_parameter_grads(const TokenEmbeddingArgs& a, const float* tokens_grad,
                                  const TokenEmbeddingGrads& grads, cudaStream_t stream) {
  grid::TokenParameterGrads<DeviceMemory> parameters{};
  set_groups(parameters, a);
  parameters.shape = a.shape;
  parameters.grad = tokens_grad;
  for (int j = 0; j < a.shape.groups; ++j) {
    parameters.weight_grad[j] = grads.weight[j];
    parameters.bias_grad[j] = grads.bias[j];
  }
  return launch(parameters, stream);
}

cudaError_t time_table_grad(const TokenEmbeddingArgs& a, const float* tokens_grad,
                            float* table_grad, cudaStream_t stream) {
  const grid::TimeTableGrad<DeviceMemory> table{a.shape, a.timesteps, tokens_grad, table_grad};
  return launch(table, stream);
}

}  // namespace minrnn::core::kernels
