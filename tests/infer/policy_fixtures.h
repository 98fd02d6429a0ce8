// An agent with random weights for the Policy tests (policy_test.cpp, policy_refusals_test.cpp).
#pragma once
#include <torch/torch.h>

#include <string>

#include "envs/registry.h"
#include "rl/agent.h"

namespace minrnn::testing {

// An untrained agent of `kind` on hopper with every parameter moved off its init. `kind` is a
// backbone name, for the minRNNs optionally with "+conv" (a Conv1d before the recurrence) and
// "+plain" (candidates not made positive: log_space off).
inline rl::Agent random_agent(const std::string& kind, int64_t context_len, uint64_t seed,
                              int64_t max_ep_len = 1000, int64_t embed_dim = 32) {
  rl::Agent agent;
  agent.config.max_ep_len = max_ep_len;
  const std::string backbone = kind.substr(0, kind.find('+'));
  agent.config.backbone = backbone;
  agent.config.conv = kind.find("+conv") != std::string::npos;
  agent.config.log_space = kind.find("+plain") == std::string::npos;
  agent.config.context_len = context_len;
  agent.config.n_layers = 2;
  agent.config.embed_dim = embed_dim;
  agent.config.expansion = backbone == "hgrn" ? 1.0 : 1.5;
  agent.env = "hopper";
  auto probe = envs::make_env("hopper", 0);
  const int64_t od = probe->spec().obs_dim, ad = probe->spec().act_dim;
  torch::manual_seed(seed);
  agent.model = rl::DecisionModel(rl::model_options(agent.config, od, ad));
  agent.model->eval();
  torch::NoGradGuard no_grad;
  for (auto& p : agent.model->parameters()) p.add_(torch::randn_like(p) * 0.1);
  agent.state_mean = torch::randn({od}) * 0.1;
  agent.state_std = torch::rand({od}) + 0.5;
  return agent;
}

}  // namespace minrnn::testing
