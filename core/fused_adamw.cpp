#include "core/fused_adamw.h"

#include <ATen/Parallel.h>

#include <cmath>

#include "core/cpu_simd.h"

namespace minrnn::core {
namespace {

struct Update {
  float decay;  // 1 − lr·weight_decay
  float beta1, beta2;
  float one_minus_beta1, one_minus_beta2;
  float inv_sqrt_bc2;  // 1 / √(1 − β₂ᵗ)
  float eps;
  float step_size;  // lr / (1 − β₁ᵗ)
};

// p ← p·decay − step_size · m / (√v / √bc2 + ε), after m ← β₁m + (1−β₁)g, v ← β₂v + (1−β₂)g²:
// torch's AdamW, one element at a time.
MINRNN_VECTOR_CLONES void update_range(float* p, const float* g, float* m, float* v, int64_t begin,
                                       int64_t end, Update u) {
  for (int64_t i = begin; i < end; ++i) {
    const float gi = g[i];
    const float mi = m[i] * u.beta1 + u.one_minus_beta1 * gi;
    const float vi = v[i] * u.beta2 + u.one_minus_beta2 * gi * gi;
    m[i] = mi;
    v[i] = vi;
    const float denom = std::sqrt(vi) * u.inv_sqrt_bc2 + u.eps;
    p[i] = p[i] * u.decay - u.step_size * mi / denom;
  }
}

bool fusable(const torch::Tensor& t) {
  return t.device().is_cpu() && t.scalar_type() == torch::kFloat && t.is_contiguous();
}

}  // namespace

torch::Tensor FusedAdamW::step(LossClosure closure) {
  for (const auto& group : param_groups_) {
    const auto& options = static_cast<const torch::optim::AdamWOptions&>(group.options());
    if (options.amsgrad()) return torch::optim::AdamW::step(closure);
    for (const auto& p : group.params()) {
      if (p.grad().defined() && (!fusable(p) || !fusable(p.grad()))) {
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
      if (!fusable(m) || !fusable(v)) {  // a loaded state: make it ours to write in place
        m = m.to(torch::kCPU, torch::kFloat).contiguous();
        v = v.to(torch::kCPU, torch::kFloat).contiguous();
      }
      const double bc1 = 1 - std::pow(beta1, static_cast<double>(state.step()));
      const double bc2 = 1 - std::pow(beta2, static_cast<double>(state.step()));
      const Update u{static_cast<float>(1 - options.lr() * options.weight_decay()),
                     static_cast<float>(beta1),
                     static_cast<float>(beta2),
                     static_cast<float>(1 - beta1),
                     static_cast<float>(1 - beta2),
                     static_cast<float>(1 / std::sqrt(bc2)),
                     static_cast<float>(options.eps()),
                     static_cast<float>(options.lr() / bc1)};
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
