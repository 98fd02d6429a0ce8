#include "ops/fused_adamw.h"

#include <ATen/Parallel.h>

#include <cmath>

#include "kernels/cpu/simd.h"
#include "kernels/math/adamw_math.h"
#ifdef MINRNN_WITH_CUDA
#include "ops/pointwise_cuda.h"
#endif

namespace minrnn::core {
namespace {

// torch's AdamW over [begin, end), one element at a time (kernels/math/adamw_math.h).
MINRNN_VECTOR_CLONES void update_range(float* p, const float* g, float* m, float* v, int64_t begin,
                                       int64_t end, AdamWUpdate u) {
  for (int64_t i = begin; i < end; ++i) adamw_element(p[i], g[i], m[i], v[i], u);
}

// Contiguous float32 on the CPU, or on CUDA where built with CUDA (the kernel of
// kernels/cuda/pointwise_programs.h).
bool fusable(const torch::Tensor& t) {
  if (t.scalar_type() != torch::kFloat || !t.is_contiguous()) return false;
#ifdef MINRNN_WITH_CUDA
  if (t.is_cuda()) return true;
#endif
  return t.is_cpu();
}

}  // namespace

torch::Tensor FusedAdamW::step(LossClosure closure) {
  for (const auto& group : param_groups_) {
    const auto& options = static_cast<const torch::optim::AdamWOptions&>(group.options());
    if (options.amsgrad()) return torch::optim::AdamW::step(closure);
    for (const auto& p : group.params()) {
      if (p.grad().defined() &&
          (!fusable(p) || !fusable(p.grad()) || p.grad().device() != p.device())) {
        return torch::optim::AdamW::step(closure);
      }
    }
  }
  torch::NoGradGuard no_grad;
  torch::Tensor loss;
  if (closure != nullptr) {
    at::AutoGradMode enable_grad(true);
    loss = closure();
  }
  for (auto& group : param_groups_) {
    const auto& options = static_cast<const torch::optim::AdamWOptions&>(group.options());
    const double beta1 = std::get<0>(options.betas()), beta2 = std::get<1>(options.betas());
    for (auto& p : group.params()) {
      if (!p.grad().defined()) continue;
      auto found = state_.find(p.unsafeGetTensorImpl());
      if (found == state_.end()) {
        auto state = std::make_unique<torch::optim::AdamWParamState>();
        state->step(0);
        state->exp_avg(torch::zeros_like(p, torch::MemoryFormat::Preserve));
        state->exp_avg_sq(torch::zeros_like(p, torch::MemoryFormat::Preserve));
        found = state_.emplace(p.unsafeGetTensorImpl(), std::move(state)).first;
      }
      auto& state = static_cast<torch::optim::AdamWParamState&>(*found->second);
      state.step(state.step() + 1);
      torch::Tensor& m = state.exp_avg();
      torch::Tensor& v = state.exp_avg_sq();
      if (!fusable(m) || !fusable(v) || m.device() != p.device() || v.device() != p.device()) {
        // a loaded state: make it ours to write in place
        m = m.to(p.device(), torch::kFloat).contiguous();
        v = v.to(p.device(), torch::kFloat).contiguous();
      }
      const double bc1 = 1 - std::pow(beta1, static_cast<double>(state.step()));
      const double bc2 = 1 - std::pow(beta2, static_cast<double>(state.step()));
      const AdamWUpdate u{static_cast<float>(1 - options.lr() * options.weight_decay()),
                          static_cast<float>(beta1),
                          static_cast<float>(beta2),
                          static_cast<float>(1 - beta1),
                          static_cast<float>(1 - beta2),
                          static_cast<float>(1 / std::sqrt(bc2)),
                          static_cast<float>(options.eps()),
                          static_cast<float>(options.lr() / bc1)};
#ifdef MINRNN_WITH_CUDA
      if (p.is_cuda()) {
        adamw_step_cuda(p, p.grad(), m, v, u);
        continue;
      }
#endif
      float* pp = p.data_ptr<float>();
      const float* gp = p.grad().data_ptr<float>();
      float* mp = m.data_ptr<float>();
      float* vp = v.data_ptr<float>();
      at::parallel_for(0, p.numel(), 1 << 15, [&](int64_t begin, int64_t end) {
        update_range(pp, gp, mp, vp, begin, end, u);
      });
    }
  }
  return loss;
}

}  // namespace minrnn::core
