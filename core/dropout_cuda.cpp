// Host side of the CUDA dropout-add (dropout_cuda.h). Built only with CUDA.
#include "core/dropout_cuda.h"

#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>

#include "core/dropout_kernels.h"

namespace minrnn::core {

torch::Tensor dropout_add_cuda(const torch::Tensor& x_in, const torch::Tensor& y_in, uint64_t seed,
                               int64_t threshold, double scale) {
  c10::cuda::CUDAGuard guard(y_in.device());
  const torch::Tensor y = y_in.contiguous();
  const torch::Tensor x = x_in.defined() ? x_in.contiguous() : x_in;
  torch::Tensor out = torch::empty_like(y, torch::MemoryFormat::Contiguous);
  const kernels::DropoutAddArgs args{x.defined() ? x.data_ptr() : nullptr,
                                     y.data_ptr(),
                                     out.data_ptr(),
                                     y.numel(),
                                     seed,
                                     threshold,
                                     scale,
                                     y.scalar_type() == torch::kDouble};
  C10_CUDA_CHECK(kernels::dropout_add(args, at::cuda::getCurrentCUDAStream()));
  return out;
}

}  // namespace minrnn::core
