// Host side of a tanh head's CUDA kernels (tanh_head_cuda.h). Built only with CUDA.
#include "ops/tanh_head_cuda.h"

#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>

#include "kernels/cuda/tanh_head.h"
#include "ops/pointwise_cuda.h"
#include "ops/side_work.h"

namespace minrnn::core {
namespace {

int64_t runs_of(const torch::Tensor& w) {
  return w.dim() == 3 ? w.size(0) : 1;
}

// b: null in the backward, which reads no bias.
kernels::TanhHeadArgs args_of(const torch::Tensor& x, const torch::Tensor& w, const float* b) {
  const int64_t runs = runs_of(w);
  return {x.size(0),
          x.size(1),
          w.size(-2),
          x.data_ptr<float>(),
          w.data_ptr<float>(),
          b,
          runs > 1 ? x.size(0) / runs : 0};
}

}  // namespace

int64_t tanh_head_cuda_max_outputs() {
  return kernels::tanh_head_max_outputs();
}
int64_t tanh_head_cuda_max_width() {
  return kernels::tanh_head_max_width();
}
int64_t tanh_head_cuda_max_terms() {
  return kernels::tanh_head_max_terms();
}
int64_t tanh_head_cuda_block_rows() {
  return kernels::tanh_head_block_rows();
}

torch::Tensor tanh_head_cuda(const torch::Tensor& x, const torch::Tensor& w,
                             const torch::Tensor& b) {
  c10::cuda::CUDAGuard guard(x.device());
  torch::Tensor y = torch::empty({x.size(0), w.size(-2)}, x.options());
  C10_CUDA_CHECK(kernels::tanh_head_forward(args_of(x, w, b.data_ptr<float>()), y.data_ptr<float>(),
                                            at::cuda::getCurrentCUDAStream()));
  return y;
}

std::vector<torch::Tensor> tanh_head_backward_cuda(const torch::Tensor& x, const torch::Tensor& w,
                                                   const torch::Tensor& y,
                                                   const torch::Tensor& y_grad) {
  c10::cuda::CUDAGuard guard(x.device());
  const int64_t outputs = w.size(-2), width = x.size(1), runs = runs_of(w);
  torch::Tensor x_grad = torch::empty_like(x);
  torch::Tensor partials = torch::empty(
      {kernels::tanh_head_partial_rows(x.size(0)), outputs * width + outputs}, x.options());
  C10_CUDA_CHECK(kernels::tanh_head_backward(
      args_of(x, w, nullptr), y.data_ptr<float>(), y_grad.data_ptr<float>(),
      x_grad.data_ptr<float>(), partials.data_ptr<float>(), at::cuda::getCurrentCUDAStream()));
  // The parameters' gradients, which nothing later in the backward reads (ops/side_work.h): each
  // run's partial rows summed, the weight's terms then the bias's.
  const auto made = beside({partials}, [&] {
    const torch::Tensor sums = column_sums_cuda(partials, runs).view({runs, -1});
    std::vector<int64_t> bias_sizes = w.sizes().vec();
    bias_sizes.pop_back();
    return std::vector<torch::Tensor>{
        sums.narrow(1, 0, outputs * width).reshape(w.sizes()).contiguous(),
        sums.narrow(1, outputs * width, outputs).reshape(bias_sizes).contiguous()};
  });
  return {x_grad, made[0], made[1]};
}

}  // namespace minrnn::core
