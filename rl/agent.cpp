#include "rl/agent.h"

#include "envs/registry.h"

namespace minrnn::rl {

double Agent::normalized(double ret) const {
  if (ref_max_score > ref_min_score) {
    return envs::normalized_score(ret, ref_min_score, ref_max_score);
  }
  return envs::normalized_score(env, ret);
}

double min_model_weights(const TrainConfig& c, int64_t obs_dim, int64_t act_dim) {
  const double d = static_cast<double>(c.embed_dim);
  return d * (static_cast<double>(obs_dim) + 2.0 * static_cast<double>(act_dim) +
              static_cast<double>(c.max_ep_len) + 2) +
         static_cast<double>(c.n_layers) * d * d;
}

DecisionModelOptions model_options(const TrainConfig& c, int64_t obs_dim, int64_t act_dim) {
  DecisionModelOptions o;
  o.obs_dim = obs_dim;
  o.act_dim = act_dim;
  o.backbone = c.backbone;
  o.n_layers = c.n_layers;
  o.embed_dim = c.embed_dim;
  o.n_heads = c.n_heads;
  o.expansion = c.expansion;
  o.conv = c.conv;
  o.log_space = c.log_space;
  o.dropout = c.dropout;
  o.max_ep_len = c.max_ep_len;
  return o;
}

Agent cpu_copy(const Agent& agent) {
  Agent copy = agent;
  // A new model draws initial weights from the global generator; what is drawn is overwritten
  // below, and the generator goes back to where it was, so a run is the same with or without it.
  at::Generator generator = at::detail::getDefaultCPUGenerator();
  const at::Tensor generator_state = generator.get_state();
  copy.model = DecisionModel(agent.model->options());
  generator.set_state(generator_state);
  torch::NoGradGuard no_grad;
  const auto params = agent.model->named_parameters();
  for (auto& p : copy.model->named_parameters()) p.value().copy_(params[p.key()]);
  const auto buffers = agent.model->named_buffers();
  for (auto& b : copy.model->named_buffers()) b.value().copy_(buffers[b.key()]);
  copy.model->train(agent.model->is_training());
  copy.state_mean = agent.state_mean.clone();
  copy.state_std = agent.state_std.clone();
  return copy;
}

}  // namespace minrnn::rl
