#include "infer/policy.h"

#include <algorithm>
#include <cstdio>
#include <new>
#include <stdexcept>

#include "infer/policy_engine.h"
#include "ops/device.h"

namespace minrnn::rl {

const char* eval_mode_name(EvalMode mode) {
  switch (mode) {
    case EvalMode::kAuto:
      return "auto";
    case EvalMode::kStreaming:
      return "streaming";
    case EvalMode::kWindow:
      return "window";
  }
  return "?";
}

EvalMode parse_eval_mode(const std::string& name) {
  for (EvalMode m : {EvalMode::kAuto, EvalMode::kStreaming, EvalMode::kWindow}) {
    if (name == eval_mode_name(m)) return m;
  }
  throw std::invalid_argument("unknown eval mode '" + name +
                              "' (expected auto, streaming or window)");
}

EvalMode resolve_eval_mode(EvalMode requested, const Agent& agent) {
  if (requested == EvalMode::kAuto) return default_eval_mode(agent.model->options().backbone);
  if (requested == EvalMode::kStreaming && !agent.model->streaming()) {
    throw std::invalid_argument("eval mode 'streaming' needs a recurrent backbone; backbone '" +
                                agent.config.backbone +
                                "' has no step mode (use mode window or auto)");
  }
  return requested;
}

PolicyEngine resolve_policy_engine(PolicyEngine requested, const Agent& agent) {
  if (!agent.model) throw std::invalid_argument("Policy: the agent has no model");
  if (requested != PolicyEngine::kAuto) return requested;
  return agent.model->parameters().front().device().is_cpu() ? PolicyEngine::kPacked
                                                             : PolicyEngine::kTorch;
}

const char* policy_engine_name(PolicyEngine engine) {
  switch (engine) {
    case PolicyEngine::kAuto:
      return "auto";
    case PolicyEngine::kPacked:
      return "packed";
    case PolicyEngine::kTorch:
      return "torch";
  }
  return "?";
}

PolicyEngine parse_policy_engine(const std::string& name) {
  if (name == "fast")
    return PolicyEngine::kPacked;  // its name before 2026-11-27, in users' scripts
  for (PolicyEngine e : {PolicyEngine::kAuto, PolicyEngine::kPacked, PolicyEngine::kTorch}) {
    if (name == policy_engine_name(e)) return e;
  }
  throw std::invalid_argument("unknown policy engine '" + name +
                              "' (expected auto, packed or torch)");
}

namespace {

// The reference engine: DecisionModel's own streaming step (act / observe_action) or a forward
// pass over the last K steps, on whatever device the model is.
class TorchEngine final : public PolicyEngineImpl {
 public:
  TorchEngine(const Agent& agent, EvalMode mode)
      : model_(agent.model),
        streaming_(mode == EvalMode::kStreaming),
        K_(agent.config.context_len),
        device_(agent.model->parameters().front().device()) {}

  void reset(int64_t batch) override {
    batch_ = batch;
    state_ = model_->initial_state();
    previous_ = torch::Tensor();
    h_rtg_.clear();
    h_obs_.clear();
    h_act_.clear();
    h_time_.clear();
  }

  void act(const float* rtg, const float* obs, int64_t t, float* actions) override {
    torch::NoGradGuard no_grad;
    model_->eval();
    const int64_t obs_dim = model_->options().obs_dim, act_dim = model_->options().act_dim;
    auto r = torch::from_blob(const_cast<float*>(rtg), {batch_, 1}).clone().to(device_);
    auto s = torch::from_blob(const_cast<float*>(obs), {batch_, obs_dim}).clone().to(device_);
    auto time = torch::full({batch_}, t, torch::kInt64).to(device_);
    torch::Tensor action;
    if (streaming_) {
      if (previous_.defined()) model_->observe_action(previous_, time - 1, state_);
      action = model_->act(r, s, time, state_);
    } else {
      h_rtg_.push_back(r);
      h_obs_.push_back(s);
      h_act_.push_back(torch::zeros({batch_, act_dim}, s.options()));  // unseen: causal mask
      h_time_.push_back(time);
      if (h_obs_.size() > size_t(K_)) {  // keep the last K steps (fewer before step K: no padding)
        for (auto* h : {&h_rtg_, &h_obs_, &h_act_, &h_time_}) h->erase(h->begin());
      }
      auto window = [](const std::vector<torch::Tensor>& h) { return torch::stack(h, 1); };
      DecisionBatch b{window(h_rtg_), window(h_obs_), window(h_act_), window(h_time_)};
      action = model_->forward(b).select(1, -1);  // recurrent backbones: from a zero state
      h_act_.back() = action;
    }
    previous_ = action;
    auto out = action.to(torch::kCPU, torch::kFloat32).contiguous();
    std::copy_n(out.data_ptr<float>(), batch_ * act_dim, actions);
  }

 private:
  DecisionModel model_;
  bool streaming_;
  int64_t K_, batch_ = 1;
  torch::Device device_;
  core::SequenceState state_;
  torch::Tensor previous_;
  std::vector<torch::Tensor> h_rtg_, h_obs_, h_act_, h_time_;
};

// A value in an error message, as short as "%g" writes it (std::to_string wrote 1e300 in full).
std::string number(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", value);
  return text;
}

}  // namespace

std::unique_ptr<PolicyEngineImpl> make_torch_engine(const Agent& agent, EvalMode mode) {
  return std::make_unique<TorchEngine>(agent, resolve_eval_mode(mode, agent));
}

Policy Policy::load(const std::string& run_or_checkpoint, const PolicyOptions& options) {
  // A device that is not there is named as such before the file is read (not blamed on it).
  const torch::Device device = core::resolve_device(options.device, "PolicyOptions::device").device;
  return Policy(load_agent(run_or_checkpoint, device), options);
}

Policy::Policy(Agent agent, const PolicyOptions& options)
    : agent_(std::make_unique<Agent>(std::move(agent))) {
  const Agent& a = *agent_;
  engine_kind_ =
      resolve_policy_engine(options.engine, a);  // first: it refuses an agent without model
  if (options.threads < 0 || options.threads > PolicyOptions::kMaxThreads) {
    throw std::invalid_argument("Policy: PolicyOptions::threads must be 0 to " +
                                std::to_string(PolicyOptions::kMaxThreads) + ", got " +
                                std::to_string(options.threads));
  }
  mode_ = resolve_eval_mode(options.mode, a);
  const torch::Device on = a.model->parameters().front().device();
  if (engine_kind_ == PolicyEngine::kPacked && !on.is_cpu()) {
    throw std::invalid_argument("Policy: the packed engine runs on the CPU; the model is on " +
                                on.str() + " (use engine torch, or load onto cpu)");
  }
  engine_ = engine_kind_ == PolicyEngine::kPacked
                ? make_packed_engine(a, mode_, std::max(options.threads, 1))
                : make_torch_engine(a, mode_);
  obs_dim_ = a.model->options().obs_dim;
  act_dim_ = a.model->options().act_dim;
  return_scale_ = a.config.return_scale;
  auto as_floats = [&](const torch::Tensor& t, const char* what) {
    auto c = t.detach().to(torch::kCPU, torch::kFloat32).contiguous();
    if (c.numel() != obs_dim_) {
      throw std::invalid_argument(std::string("Policy: the run's state ") + what + " has " +
                                  std::to_string(c.numel()) + " values, the model's obs_dim is " +
                                  std::to_string(obs_dim_));
    }
    return std::vector<float>(c.data_ptr<float>(), c.data_ptr<float>() + obs_dim_);
  };
  mean_ = as_floats(a.state_mean, "mean");
  std_ = as_floats(a.state_std, "std");
  reset();
  // Process-wide, so set once everything else was accepted: a refused policy changes nothing.
  if (options.threads > 0 && engine_kind_ == PolicyEngine::kTorch)
    torch::set_num_threads(options.threads);
}

Policy::~Policy() = default;
Policy::Policy(Policy&&) noexcept = default;
// A self-move keeps the policy: the members' own moves emptied its buffers and left its engine
// (the next act() read past them; an audit, 2026-11-29). Policy holds no const or reference
// member and nothing derives from it, so ending its life and making it anew in place is sound.
Policy& Policy::operator=(Policy&& other) noexcept {
  if (this != &other) {
    this->~Policy();
    ::new (this) Policy(std::move(other));
  }
  return *this;
}

void Policy::check_usable(const char* call) const {
  if (!engine_) {
    throw std::logic_error(std::string("Policy::") + call +
                           ": this Policy was moved from; assign a loaded one to it first");
  }
}

const Agent& Policy::agent() const {
  check_usable("agent");
  return *agent_;
}
const std::string& Policy::env() const {
  check_usable("env");
  return agent_->env;
}
const std::string& Policy::backbone() const {
  check_usable("backbone");
  return agent_->config.backbone;
}
int64_t Policy::context_len() const {
  check_usable("context_len");
  return agent_->config.context_len;
}
int64_t Policy::train_step() const {
  check_usable("train_step");
  return agent_->step;
}
double Policy::target_return() const {
  check_usable("target_return");
  return agent_->config.target_return;
}
double Policy::normalized(double episode_return) const {
  check_usable("normalized");
  return agent_->normalized(episode_return);
}

void Policy::reset(int64_t batch, double target_return) {
  check_usable("reset");
  if (batch < 1 || batch > kMaxBatch) {
    throw std::invalid_argument("Policy::reset: batch must be in [1, " + std::to_string(kMaxBatch) +
                                "], got " + std::to_string(batch));
  }
  if (std::isnan(target_return)) target_return = agent_->config.target_return;
  // Float, as the tensors of training held it: the same conditioning bit for bit.
  const float rtg = static_cast<float>(target_return / return_scale_);
  if (!std::isfinite(rtg)) {
    throw std::invalid_argument(
        "Policy::reset: target_return must be finite (within float's "
        "range once divided by the return scale), got " +
        number(target_return));
  }
  // Everything sized before anything changes: a batch that cannot be allocated leaves the policy
  // as it was.
  std::vector<float> rtg_new(batch, rtg), obs_new(batch * obs_dim_), actions_new(batch * act_dim_);
  engine_->reset(batch);
  batch_ = batch;
  t_ = 0;
  rtg_.swap(rtg_new);
  obs_.swap(obs_new);
  actions_.swap(actions_new);
}

std::vector<double> Policy::act(const std::vector<double>& observations) {
  check_usable("act");
  if (static_cast<int64_t>(observations.size()) != batch_ * obs_dim_) {
    throw std::invalid_argument(
        "Policy::act: expected batch × obs_dim = " + std::to_string(batch_) + " × " +
        std::to_string(obs_dim_) + " observation values for env '" + agent_->env + "', got " +
        std::to_string(observations.size()));
  }
  std::vector<double> actions(batch_ * act_dim_);
  act(observations.data(), actions.data());
  return actions;
}

void Policy::act(const double* observations, double* actions) {
  check_usable("act");
  // One pass, normalizing into scratch, refuses what the model cannot take before any state
  // moves: a value no float holds (1e39 is as unusable as inf), and one far enough from the data
  // to overflow the embedding's LayerNorm (its squares pass float's range near 1e17–1e19 standard
  // deviations: the action was NaN, and a recurrent state stayed NaN for the rest of the episode;
  // a walk, 2026-11-29, 1e38 for a hopper), with a margin of a hundred below that.
  constexpr float kMostStds = 1e15f;
  for (int64_t b = 0; b < batch_; ++b) {
    for (int64_t j = 0; j < obs_dim_; ++j) {
      const double given = observations[b * obs_dim_ + j];
      const float o = static_cast<float>(given);
      const float normalized = (o - mean_[j]) / std_[j];
      if (!(std::abs(normalized) <= kMostStds)) {
        const std::string where = "Policy: observation of episode " + std::to_string(b) +
                                  " has a value at index " + std::to_string(j) + " (" +
                                  number(given) + ") ";
        throw std::invalid_argument(where + (std::isfinite(o)
                                                 ? "more than 1e15 of the training data's standard "
                                                   "deviations from its mean"
                                                 : "a float cannot hold"));
      }
      obs_[b * obs_dim_ + j] = normalized;
    }
  }
  engine_->act(rtg_.data(), obs_.data(), t_, actions_.data());
  ++t_;
  for (int64_t i = 0; i < batch_ * act_dim_; ++i) actions[i] = actions_[i];
}

void Policy::observe_reward(const std::vector<double>& rewards) {
  check_usable("observe_reward");
  if (static_cast<int64_t>(rewards.size()) != batch_) {
    throw std::invalid_argument("Policy::observe_reward: expected " + std::to_string(batch_) +
                                " rewards (one per episode), got " +
                                std::to_string(rewards.size()));
  }
  observe_reward(rewards.data());
}

void Policy::observe_reward(const double* rewards) {
  check_usable("observe_reward");
  for (int64_t b = 0; b < batch_; ++b) {
    if (!std::isfinite(rtg_[b] - static_cast<float>(rewards[b] / return_scale_))) {
      throw std::invalid_argument("Policy::observe_reward: the reward of episode " +
                                  std::to_string(b) + " (" + number(rewards[b]) + ") " +
                                  (std::isfinite(rewards[b])
                                       ? "takes its return-to-go out of float's range"
                                       : "is not finite"));
    }
  }
  for (int64_t b = 0; b < batch_; ++b) rtg_[b] -= static_cast<float>(rewards[b] / return_scale_);
}

void Policy::observe_reward(double reward) {
  if (batch_ != 1) {
    throw std::invalid_argument("Policy::observe_reward: one reward given for a batch of " +
                                std::to_string(batch_) + " episodes");
  }
  observe_reward(&reward);
}

double Policy::return_to_go(int64_t i) const {
  check_usable("return_to_go");
  if (i < 0 || i >= batch_)
    throw std::out_of_range("Policy::return_to_go: no episode " + std::to_string(i));
  return static_cast<double>(rtg_[i]) * return_scale_;
}

}  // namespace minrnn::rl
