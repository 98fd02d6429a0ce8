#include "rl/stacked_pack.h"

#include <stdexcept>

#include "datasets/sampler.h"
#include "ops/run_axis.h"

namespace minrnn::rl {
namespace {

// What two runs must share to be stacked, named for the reason they cannot ("" where they can).
std::string first_difference(const Agent& a, const Agent& b) {
  const DecisionModelOptions &m = a.model->options(), &n = b.model->options();
  const TrainConfig &c = a.config, &d = b.config;
  if (m.obs_dim != n.obs_dim || m.act_dim != n.act_dim) return "observation or action width";
  if (m.backbone != n.backbone) return "backbone";
  if (m.n_layers != n.n_layers || m.embed_dim != n.embed_dim || m.n_heads != n.n_heads ||
      m.expansion != n.expansion) {
    return "n_layers, embed_dim, n_heads or expansion";
  }
  if (m.dropout != n.dropout) return "dropout";
  if (m.max_ep_len != n.max_ep_len) return "max_ep_len (the time table's rows)";
  if (m.log_space != n.log_space) return "log_space";
  if (c.batch_size != d.batch_size || c.context_len != d.context_len) {
    return "batch_size or context_len";
  }
  if (c.matmul_precision != d.matmul_precision) return "matmul_precision";
  if (c.grad_clip != d.grad_clip) return "grad_clip";
  if (a.model->parameters().front().device() != b.model->parameters().front().device()) {
    return "device";
  }
  return "";
}

}  // namespace

std::string why_not_stacked(const std::vector<const Agent*>& runs) {
  if (runs.size() < 2) return "a stacked pack takes two runs or more";
  const DecisionModelOptions& m = runs[0]->model->options();
  if (m.backbone != "mingru" && m.backbone != "minlstm" && m.backbone != "transformer") {
    return "backbone " + m.backbone + " has no stacked ops (mingru, minlstm, transformer do)";
  }
  if (m.conv) return "conv: the causal convolution has no stacked op";
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
  core::StreamFence::drain(device.is_cuda());  // the runs' tensors read
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
  core::StreamFence::drain(lone_params.front().is_cuda());  // theirs again
}

}  // namespace minrnn::rl
