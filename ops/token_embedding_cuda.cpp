// Host side of the token embedding's CUDA kernels (token_embedding_cuda.h). Built only with CUDA.
#include "ops/token_embedding_cuda.h"

#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>

#include "kernels/cuda/token_embedding.h"
#include "ops/side_work.h"

namespace minrnn::core {
namespace {

kernels::TokenEmbeddingArgs args_of(const TokenLayout& shape, torch::TensorList flat) {
  kernels::TokenEmbeddingArgs a{};
  a.shape = shape;
  for (int j = 0; j < shape.groups; ++j) {
    a.input[j] = flat[3 * j].data_ptr<float>();
    a.weight[j] = flat[3 * j + 1].data_ptr<float>();
    a.bias[j] = flat[3 * j + 2].data_ptr<float>();
  }
  a.timesteps = flat[token_timesteps_at(shape.groups)].data_ptr<int64_t>();
  a.table = flat[token_table_at(shape.groups)].data_ptr<float>();
  return a;
}

}  // namespace

torch::Tensor token_embedding_cuda(const TokenLayout& shape, torch::TensorList flat) {
  c10::cuda::CUDAGuard guard(flat[0].device());
  torch::Tensor tokens = torch::empty({shape.batch, shape.tokens, shape.width}, flat[0].options());
  C10_CUDA_CHECK(kernels::token_embedding(args_of(shape, flat), tokens.data_ptr<float>(),
                                          at::cuda::getCurrentCUDAStream()));
  return tokens;
}

std::vector<torch::Tensor> token_embedding_backward_cuda(const TokenLayout& shape,
                                                         torch::TensorList flat,
                                                         const torch::Tensor& tokens_grad) {
  c10::cuda::CUDAGuard guard(tokens_grad.device());
  std::vector<torch::Tensor> grads(flat.size());
  kernels::TokenEmbeddingGrads out{};
  for (int j = 0; j < shape.groups; ++j) {
    grads[3 * j + 1] = torch::empty_like(flat[3 * j + 1]);
    grads[3 * j + 2] = torch::empty_like(flat[3 * j + 2]);
    out.weight[j] = grads[3 * j + 1].data_ptr<float>();
    out.bias[j] = grads[3 * j + 2].data_ptr<float>();
  }
  const kernels::TokenEmbeddingArgs args = args_of(shape, flat);
  // The time table's gradient beside the others' (ops/side_work.h), forked before them.
  const size_t table = token_table_at(shape.groups);
  grads[table] = beside({tokens_grad, flat[token_timesteps_at(shape.groups)]}, [&] {
    torch::Tensor table_grad = torch::empty_like(flat[table]);
    C10_CUDA_CHECK(kernels::time_table_grad(args, tokens_grad.data_ptr<float>(),
                                            table_grad.data_ptr<float>(),
                                            at::cuda::getCurrentCUDAStream()));
    return std::vector<torch::Tensor>{table_grad};
  })[0];
  C10_CUDA_CHECK(kernels::token_parameter_grads(args, tokens_grad.data_ptr<float>(), out,
                                                at::cuda::getCurrentCUDAStream()));
  return grads;
}

}  // namespace minrnn::core
