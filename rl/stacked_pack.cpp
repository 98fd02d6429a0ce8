#include "rl/stacked_pack.h"

#include <iomanip>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "datasets/sampler.h"
#include "ops/run_axis.h"
#include "rl/trainer.h"

namespace minrnn::rl {
namespace {

// What two runs must share to be stacked, each field under the name a refusal gives it.
struct StackField {
  const char* name;
  std::string value;
};
std::vector<StackField> stack_fields(const DecisionModelOptions& m, const TrainConfig& c) {
  const auto text = [](auto v) {
    std::ostringstream s;
    s << std::setprecision(17) << v;  // doubles compared to the bit, as configs give them
    return s.str();
  };
  const char* widths = "n_layers, embed_dim, n_heads or expansion";
  return {{"observation or action width", text(m.obs_dim) + "/" + text(m.act_dim)},
          {"backbone", m.backbone},
          {widths, text(m.n_layers)},
          {widths, text(m.embed_dim)},
          {widths, text(m.n_heads)},
          {widths, text(m.expansion)},
          {"dropout", text(m.dropout)},
          {"max_ep_len (the time table's rows)", text(m.max_ep_len)},
          {"log_space", text(m.log_space)},
          {"batch_size or context_len", text(c.batch_size) + "/" + text(c.context_len)},
          {"matmul_precision", c.matmul_precision},
          {"grad_clip", text(c.grad_clip)}};
}

std::string first_difference(const Agent& a, const Agent& b) {
  const std::vector<StackField> x = stack_fields(a.model->options(), a.config),
                                y = stack_fields(b.model->options(), b.config);
  for (size_t i = 0; i < x.size(); ++i) {
    if (x[i].value != y[i].value) return x[i].name;
  }
  if (a.model->parameters().front().device() != b.model->parameters().front().device()) {
    return "device";
  }
  return "";
}

}  // namespace

std::string stack_shape(const DecisionModelOptions& model, const TrainConfig& config) {
  std::string shape;
  for (const StackField& f : stack_fields(model, config)) shape += f.value + ";";
  return shape;
}

std::string stack_refusal(const DecisionModelOptions& m) {
  if (m.backbone != "mingru" && m.backbone != "minlstm" && m.backbone != "transformer") {
    return "backbone " + m.backbone + " has no stacked ops (mingru, minlstm, transformer do)";
  }
  if (m.conv) return "conv: the causal convolution has no stacked op";
  return "";
}

std::string why_not_stacked(const std::vector<const Agent*>& runs) {
  if (runs.size() < 2) return "a stacked pack takes two runs or more";
  if (std::string refusal = stack_refusal(runs[0]->model->options()); !refusal.empty()) {
    return refusal;
  }
  for (size_t r = 1; r < runs.size(); ++r) {
    const std::string differs = first_difference(*runs[0], *runs[r]);
    if (!differs.empty()) {
      return "run " + std::to_string(r) + " differs from run 0 in its " + differs;
    }
  }
  return "";
}

StackedPack::StackedPack(const std::vector<Agent*>& agents,
                         const std::vector<core::FusedAdamW*>& optimizers,
                         const torch::Device& device, StepMode mode)
    : stream_(device.is_cuda()), agents_(agents), optimizers_(optimizers) {
  const std::string why = why_not_stacked({agents.begin(), agents.end()});
  if (!why.empty()) throw std::invalid_argument("stacked pack: " + why);
  if (optimizers.size() != agents.size()) {
    throw std::invalid_argument("stacked pack: one optimizer a run");
  }
  const core::WorkStream::Scope on_stream(stream_);
  stacked_.config = agents[0]->config;
  stacked_.model = DecisionModel(agents[0]->model->options());
  stacked_.model->to(device);
  std::vector<const torch::nn::Module*> models;
  for (const Agent* a : agents) models.push_back(a->model.get());
  core::stack_runs(*stacked_.model, models);
  optimizer_ = std::make_unique<core::FusedAdamW>(stacked_.model->parameters(),
                                                  torch::optim::AdamWOptions(0.0));
  const std::vector<torch::Tensor> params = stacked_.model->parameters();
  std::vector<std::vector<torch::Tensor>> lone_params;
  for (const Agent* a : agents) lone_params.push_back(a->model->parameters());
  const torch::NoGradGuard no_grad;
  for (size_t i = 0; i < params.size(); ++i) {
    std::vector<torch::Tensor> m, v;
    for (size_t r = 0; r < agents.size(); ++r) {
      m.push_back(optimizers[r]->exp_avg(lone_params[r][i]));
      v.push_back(optimizers[r]->exp_avg_sq(lone_params[r][i]));
    }
    optimizer_->exp_avg(params[i]).copy_(torch::stack(m));
    optimizer_->exp_avg_sq(params[i]).copy_(torch::stack(v));
  }
  std::vector<const TrainConfig*> configs;
  for (const Agent* a : agents) configs.push_back(&a->config);
  step_ = std::make_unique<TrainStep>(stacked_, *optimizer_, device, mode, configs);
  step_->set_side_work(side_work_for(true));
  core::drain_current_stream(device.is_cuda());  // the runs' tensors read
}

StackedPack::~StackedPack() = default;

void StackedPack::run(const std::vector<const data::SequenceBatch*>& batches,
                      const std::vector<double>& lrs, const std::vector<uint64_t>& dropout_bases) {
  if (static_cast<int64_t>(batches.size()) != runs() ||
      static_cast<int64_t>(lrs.size()) != runs() ||
      static_cast<int64_t>(dropout_bases.size()) != runs()) {
    throw std::invalid_argument("StackedPack::run: a batch, learning rate and base a run");
  }
  const core::WorkStream::Scope on_stream(stream_);
  // Each run's update from its own optimizer, which counts the step as the lone step counts it.
  std::vector<TrainStep::RunInputs> in;
  for (int64_t r = 0; r < runs(); ++r) {
    in.push_back({batches[r], agents_[r]->step + 1, dropout_bases[r], lrs[r],
                  optimizers_[r]->next_update(lrs[r])});
  }
  step_->run_pack(in);
  for (int64_t r = 0; r < runs(); ++r) {
    optimizers_[r]->count_step();
    ++agents_[r]->step;
  }
}

StepStats StackedPack::last_stats(int64_t run) {
  const core::WorkStream::Scope on_stream(stream_);
  return step_->last_stats(run);
}

std::string StackedPack::failure(int64_t run) {
  const core::WorkStream::Scope on_stream(stream_);
  return step_->failure(run);
}

void StackedPack::write_back(int64_t run) {
  Agent& agent = *agents_.at(run);
  core::FusedAdamW& lone = *optimizers_.at(run);
  const core::WorkStream::Scope on_stream(stream_);
  core::copy_run(*stacked_.model, run, *agent.model);
  const std::vector<torch::Tensor> params = stacked_.model->parameters();
  const std::vector<torch::Tensor> lone_params = agent.model->parameters();
  const torch::NoGradGuard no_grad;
  for (size_t i = 0; i < params.size(); ++i) {
    lone.exp_avg(lone_params[i]).copy_(optimizer_->exp_avg(params[i])[run]);
    lone.exp_avg_sq(lone_params[i]).copy_(optimizer_->exp_avg_sq(params[i])[run]);
  }
  core::drain_current_stream(lone_params.front().is_cuda());  // theirs again
}

}  // namespace minrnn::rl
