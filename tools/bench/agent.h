// An untrained decision agent of the given shape, for the benchmarks that time inference
// (`bench eval`, `bench policy`): speed does not depend on the weights. Seeded, so every row of a
// benchmark runs the same model.
#pragma once
#include <string>

#include "envs/registry.h"
#include "rl/agent.h"

namespace minrnn::cli {

inline rl::Agent untrained_agent(const std::string& env, const std::string& backbone,
                                 int64_t layers, int64_t embed, int64_t context) {
  const auto probe = envs::make_env(env, 0);
  const int64_t obs_dim = probe->spec().obs_dim, act_dim = probe->spec().act_dim;
  rl::Agent agent;
  agent.env = env;
  agent.config.backbone = backbone;
  agent.config.n_layers = layers;
  agent.config.embed_dim = embed;
  agent.config.context_len = context;
  torch::manual_seed(0);
  agent.model = rl::DecisionModel(rl::model_options(agent.config, obs_dim, act_dim));
  agent.model->eval();
  agent.state_mean = torch::zeros({obs_dim});
  agent.state_std = torch::ones({obs_dim});
  return agent;
}

}  // namespace minrnn::cli
