#include "ops/fused_adamw.h"

#include <ATen/Parallel.h>

#include <array>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/cpu/adamw.h"
#include "ops/device.h"
#ifdef MINRNN_WITH_CUDA
#include "ops/pointwise_cuda.h"
#endif

namespace minrnn::core {
namespace {

using torch::optim::AdamWOptions;
using torch::optim::AdamWParamState;

// Contiguous float32 on the CPU, or on CUDA where built with CUDA (the kernel of
// kernels/cuda/step_end_programs.h).
bool fusable(const torch::Tensor& t) {
  return t.scalar_type() == torch::kFloat && t.is_contiguous() && has_own_kernels(t.device());
}

// The update of step t (1-based) with these options: torch's bias corrections, in double.
AdamWUpdate adamw_update(const AdamWOptions& options, int64_t t) {
  const double beta1 = std::get<0>(options.betas()), beta2 = std::get<1>(options.betas());
  const double bc1 = 1 - std::pow(beta1, static_cast<double>(t));
  const double bc2 = 1 - std::pow(beta2, static_cast<double>(t));
  return {static_cast<float>(1 - options.lr() * options.weight_decay()),
          static_cast<float>(beta1),
          static_cast<float>(beta2),
          static_cast<float>(1 - beta1),
          static_cast<float>(1 - beta2),
          static_cast<float>(1 / std::sqrt(bc2)),
          static_cast<float>(options.eps()),
          static_cast<float>(options.lr() / bc1)};
}

// p's state, made (zero moments) on its first step; a loaded state's moments moved to p's device
// and dtype so that the update can write them in place.
using ParamStates = ska::flat_hash_map<void*, std::unique_ptr<torch::optim::OptimizerParamState>>;

AdamWParamState& state_of(ParamStates& states, const torch::Tensor& p) {
  auto found = states.find(p.unsafeGetTensorImpl());
  if (found == states.end()) {
    auto state = std::make_unique<AdamWParamState>();
    state->step(0);
    state->exp_avg(torch::zeros_like(p, torch::MemoryFormat::Preserve));
    state->exp_avg_sq(torch::zeros_like(p, torch::MemoryFormat::Preserve));
    found = states.emplace(p.unsafeGetTensorImpl(), std::move(state)).first;
  }
  auto& state = static_cast<AdamWParamState&>(*found->second);
  torch::Tensor& m = state.exp_avg();
  torch::Tensor& v = state.exp_avg_sq();
  if (!fusable(m) || !fusable(v) || m.device() != p.device() || v.device() != p.device()) {
    m = m.to(p.device(), torch::kFloat).contiguous();
    v = v.to(p.device(), torch::kFloat).contiguous();
  }
  return state;
}

// One parameter's update (p, its gradient g and moments m, v: contiguous float32 of one size on one
// device): with `u`, or with `scalars` (undefined, or AdamWStepScalars on p's device) as it holds
// them when the update runs.
void update_param(const torch::Tensor& p, const torch::Tensor& g, const torch::Tensor& m,
                  const torch::Tensor& v, const AdamWUpdate& u, const torch::Tensor& scalars) {
#ifdef MINRNN_WITH_CUDA
  if (p.is_cuda()) {
    adamw_step_cuda({{p, g, m, v}}, u, scalars);  // the callers checked it is fusable
    return;
  }
#endif
  AdamWUpdate update = u;
  float grad_scale = 1;
  if (scalars.defined()) {
    const auto* s = reinterpret_cast<const AdamWStepScalars*>(scalars.data_ptr<float>());
    if (s->apply == 0.0f) return;
    update = s->update;
    grad_scale = s->grad_scale;
  }
  float* pp = p.data_ptr<float>();
  const float* gp = g.data_ptr<float>();
  float* mp = m.data_ptr<float>();
  float* vp = v.data_ptr<float>();
  at::parallel_for(0, p.numel(), 1 << 15, [&](int64_t begin, int64_t end) {
    adamw_range(pp, gp, mp, vp, begin, end, update, grad_scale);
  });
}

// The parameter's gradient, checked as step_with's kernels take it.
const torch::Tensor& checked_grad(const torch::Tensor& p, const torch::Tensor& scalars,
                                  const char* caller) {
  if (!p.grad().defined() || !fusable(p) || !fusable(p.grad()) || p.grad().device() != p.device() ||
      scalars.device() != p.device()) {
    throw std::logic_error(std::string(caller) +
                           ": every parameter needs a contiguous float32 gradient on the device "
                           "of its scalars");
  }
  return p.grad();
}

}  // namespace

torch::Tensor FusedAdamW::step(LossClosure closure) {
  for (const auto& group : param_groups_) {
    const auto& options = static_cast<const AdamWOptions&>(group.options());
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
    const auto& options = static_cast<const AdamWOptions&>(group.options());
    for (auto& p : group.params()) {
      if (!p.grad().defined()) continue;
      AdamWParamState& state = state_of(state_, p);
      state.step(state.step() + 1);
      update_param(p, p.grad(), state.exp_avg(), state.exp_avg_sq(),
                   adamw_update(options, state.step()), torch::Tensor());
    }
  }
  return loss;
}

void FusedAdamW::step_with(const torch::Tensor& scalars) {
  if (param_groups_.size() != 1)
    throw std::logic_error("FusedAdamW::step_with: one parameter group only");
  auto& group = param_groups_[0];
  if (static_cast<const AdamWOptions&>(group.options()).amsgrad())
    throw std::logic_error("FusedAdamW::step_with: amsgrad is not supported");
  // A pack's: a row of scalars a run, each parameter's leading axis its runs.
  const int64_t runs = scalars.dim() == 2 ? scalars.size(0) : 1;
  torch::NoGradGuard no_grad;
  std::vector<std::array<torch::Tensor, 4>> params;  // p, its gradient and moments
  for (auto& p : group.params()) {
    checked_grad(p, scalars, "FusedAdamW::step_with");
    if (scalars.dim() == 2 && (p.dim() < 1 || p.size(0) != runs)) {
      throw std::logic_error("FusedAdamW::step_with: a parameter is not stacked over " +
                             std::to_string(runs) + " runs");
    }
    AdamWParamState& state = state_of(state_, p);
    params.push_back({p, p.grad(), state.exp_avg(), state.exp_avg_sq()});
  }
#ifdef MINRNN_WITH_CUDA
  if (scalars.is_cuda()) {  // updated together: a few launches for all (and all runs)
    std::vector<AdamWTensors> on_cuda;
    for (const auto& [p, g, m, v] : params) on_cuda.push_back({p, g, m, v});
    adamw_step_cuda(on_cuda, AdamWUpdate{}, scalars, runs);
    return;
  }
#endif
  for (const auto& [p, g, m, v] : params) {
    if (scalars.dim() == 1) {
      update_param(p, g, m, v, AdamWUpdate{}, scalars);
      continue;
    }
    for (int64_t r = 0; r < runs; ++r) update_param(p[r], g[r], m[r], v[r], {}, scalars[r]);
  }
}

AdamWUpdate FusedAdamW::next_update() {
  return adamw_update(static_cast<const AdamWOptions&>(param_groups_.at(0).options()), steps() + 1);
}

AdamWUpdate FusedAdamW::next_update(double lr) {
  for (auto& group : param_groups_) static_cast<AdamWOptions&>(group.options()).lr(lr);
  return next_update();
}

torch::Tensor& FusedAdamW::exp_avg(const torch::Tensor& p) {
  return state_of(state_, p).exp_avg();
}

torch::Tensor& FusedAdamW::exp_avg_sq(const torch::Tensor& p) {
  return state_of(state_, p).exp_avg_sq();
}

int64_t FusedAdamW::steps() const {
  const auto& params = param_groups_.at(0).params();
  if (params.empty()) return 0;
  const auto found = state_.find(params[0].unsafeGetTensorImpl());
  return found == state_.end() ? 0 : static_cast<AdamWParamState&>(*found->second).step();
}

void FusedAdamW::count_step() {
  for (auto& group : param_groups_) {
    for (auto& p : group.params()) {
      // A count, once a step (a pack's optimizers' each step): no more than a lookup where the
      // state is there, as after any step.
      const auto found = state_.find(p.unsafeGetTensorImpl());
      auto& state = found != state_.end() ? static_cast<AdamWParamState&>(*found->second)
                                          : state_of(state_, p);
      state.step(state.step() + 1);
    }
  }
}

}  // namespace minrnn::core
