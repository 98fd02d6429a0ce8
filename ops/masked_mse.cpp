#include "ops/masked_mse.h"

#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "kernels/cpu/masked_mse.h"
#include "ops/device.h"
#ifdef MINRNN_WITH_CUDA
#include "ops/pointwise_cuda.h"
#endif

namespace minrnn::core {
namespace {

// {loss, max(Σ mask, 1)} on the CPU, a value each of `runs` runs ((runs), or scalars for one).
std::pair<torch::Tensor, torch::Tensor> forward_cpu(const torch::Tensor& p, const torch::Tensor& t,
                                                    const torch::Tensor& m, int64_t width,
                                                    int64_t runs) {
  const auto shape = runs > 1 ? std::vector<int64_t>{runs} : std::vector<int64_t>{};
  const auto scalar = p.options().dtype(torch::kFloat);
  torch::Tensor loss = torch::empty(shape, scalar), denominator = torch::empty(shape, scalar);
  masked_mse_forward(p.data_ptr<float>(), t.data_ptr<float>(), m.data_ptr<float>(), width,
                     m.numel() / runs, runs, loss.data_ptr<float>(), denominator.data_ptr<float>());
  return {loss, denominator};
}

// grad_loss and denom: a value a run.
torch::Tensor backward_cpu(const torch::Tensor& p, const torch::Tensor& t, const torch::Tensor& m,
                           int64_t width, const torch::Tensor& grad_loss,
                           const torch::Tensor& denom) {
  torch::Tensor grad = torch::empty_like(p);
  const int64_t runs = denom.numel();
  masked_mse_backward(p.data_ptr<float>(), t.data_ptr<float>(), m.data_ptr<float>(), width,
                      m.numel() / runs, runs, grad_loss.data_ptr<float>(), denom.data_ptr<float>(),
                      grad.data_ptr<float>());
  return grad;
}

class MaskedMseFunction : public torch::autograd::Function<MaskedMseFunction> {
 public:
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& p,
                               const torch::Tensor& t, const torch::Tensor& m, int64_t runs) {
    const int64_t width = p.size(-1);
    std::pair<torch::Tensor, torch::Tensor> out;
#ifdef MINRNN_WITH_CUDA
    if (p.is_cuda()) out = masked_mse_cuda(p, t, m, width, runs);
#endif
    if (!p.is_cuda()) out = forward_cpu(p, t, m, width, runs);
    ctx->save_for_backward({p, t, m, out.second});
    ctx->saved_data["width"] = width;
    return out.first;
  }

  static torch::autograd::tensor_list backward(torch::autograd::AutogradContext* ctx,
                                               torch::autograd::tensor_list grads) {
    const auto saved = ctx->get_saved_variables();
    const torch::Tensor &p = saved[0], &t = saved[1], &m = saved[2], &denom = saved[3];
    const int64_t width = ctx->saved_data["width"].toInt();
    const torch::Tensor g = grads[0].contiguous();
    torch::Tensor d_p;
#ifdef MINRNN_WITH_CUDA
    if (p.is_cuda()) d_p = masked_mse_backward_cuda(p, t, m, width, g, denom);
#endif
    if (!p.is_cuda()) d_p = backward_cpu(p, t, m, width, g, denom);
    return {d_p, torch::Tensor(), torch::Tensor(), torch::Tensor()};
  }
};

bool fusable(const torch::Tensor& p, const torch::Tensor& t, const torch::Tensor& m) {
  for (const torch::Tensor* x : {&p, &t, &m}) {
    if (x->scalar_type() != torch::kFloat || !x->is_contiguous() || x->device() != p.device())
      return false;
  }
  if (t.requires_grad() || m.requires_grad() || p.dim() < 1) return false;
  if (t.sizes() != p.sizes() || m.numel() * p.size(-1) != p.numel()) return false;
  return has_own_kernels(p.device());
}

}  // namespace

torch::Tensor masked_mse(const torch::Tensor& predicted, const torch::Tensor& target,
                         const torch::Tensor& mask, int64_t runs) {
  if (runs < 1 || (mask.dim() >= 1 && mask.size(0) % runs != 0)) {
    throw std::invalid_argument("masked_mse: " + std::to_string(runs) +
                                " runs do not split the batch");
  }
  if (fusable(predicted, target, mask)) {
    return MaskedMseFunction::apply(predicted, target, mask, runs);
  }
  const torch::Tensor squared = (predicted - target).pow(2).mean(-1);
  if (runs == 1) return (squared * mask).sum() / mask.sum().clamp_min(1);
  const torch::Tensor each = mask.reshape({runs, -1});
  return (squared.reshape({runs, -1}) * each).sum(1) / each.sum(1).clamp_min(1);
}

}  // namespace minrnn::core
