#include "ops/tanh_head.h"

#include <vector>

#include "ops/affine.h"
#include "ops/run_axis.h"
#ifdef MINRNN_WITH_CUDA
#include "ops/tanh_head_cuda.h"
#endif

namespace minrnn::core {
namespace {

#ifdef MINRNN_WITH_CUDA
class TanhHeadFunction : public torch::autograd::Function<TanhHeadFunction> {
 public:
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& x,
                               const torch::Tensor& w, const torch::Tensor& b) {
    const torch::Tensor rows = x.reshape({-1, x.size(-1)}).contiguous();
    const torch::Tensor y = tanh_head_cuda(rows, w, b);
    ctx->save_for_backward({rows, w, y});
    ctx->saved_data["in_sizes"] = x.sizes().vec();
    std::vector<int64_t> out_sizes = x.sizes().vec();
    out_sizes.back() = w.size(-2);
    return y.view(out_sizes);
  }

  static torch::autograd::tensor_list backward(torch::autograd::AutogradContext* ctx,
                                               torch::autograd::tensor_list grads) {
    const auto saved = ctx->get_saved_variables();
    const torch::Tensor &rows = saved[0], &w = saved[1], &y = saved[2];
    std::vector<torch::Tensor> made =
        tanh_head_backward_cuda(rows, w, y, grads[0].reshape(y.sizes()).contiguous());
    made[0] = made[0].view(ctx->saved_data["in_sizes"].toIntVector());
    return made;
  }
};

// Where the kernels take the op: float32 on CUDA, contiguous parameters, widths within their
// limits, and a pack's runs filling whole backward blocks.
bool fusable(const torch::Tensor& x, const torch::Tensor& w, const torch::Tensor& b) {
  const auto float32_here = [&](const torch::Tensor& t) {
    return t.defined() && t.device() == x.device() && t.scalar_type() == torch::kFloat;
  };
  if (!x.is_cuda() || !float32_here(x) || !float32_here(w) || !float32_here(b)) return false;
  if (!w.is_contiguous() || !b.is_contiguous() || x.dim() < 1 || x.numel() == 0) return false;
  const int64_t outputs = w.size(-2), width = w.size(-1);
  if (x.size(-1) != width || width > tanh_head_cuda_max_width() ||
      outputs > tanh_head_cuda_max_outputs() || outputs * width > tanh_head_cuda_max_terms() ||
      b.size(-1) != outputs) {
    return false;
  }
  if (w.dim() == 2) return b.dim() == 1;
  const int64_t runs = w.size(0), rows = x.numel() / width;
  return w.dim() == 3 && b.dim() == 2 && b.size(0) == runs && rows % runs == 0 &&
         (rows / runs) % tanh_head_cuda_block_rows() == 0;
}
#endif

}  // namespace

torch::Tensor tanh_head(const torch::Tensor& x, const torch::Tensor& w, const torch::Tensor& b) {
  stacked_runs(w, 2, "tanh_head's weight");  // refuses a weight of any other rank
#ifdef MINRNN_WITH_CUDA
  if (fusable(x, w, b)) return TanhHeadFunction::apply(x, w, b);
#endif
  return torch::tanh(affine(x, w, b));
}

}  // namespace minrnn::core
