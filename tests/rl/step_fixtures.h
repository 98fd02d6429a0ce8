// What the training-step tests share (tests/rl/train_step_test.cpp, stacked_pack_test.cpp): a
// small agent, its AdamW options, random batches and DT's warm-up learning rate.
#pragma once
#include <torch/torch.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "datasets/sampler.h"
#include "rl/agent.h"

namespace minrnn::testing {

inline constexpr int64_t kObs = 11, kAct = 3;

// A small agent, its weights drawn from `seed`.
inline rl::Agent make_agent(const std::string& backbone, const torch::Device& device,
                            uint64_t seed = 21) {
  torch::manual_seed(seed);
  rl::Agent agent;
  agent.config.batch_size = 6;
  agent.config.context_len = 5;
  agent.config.grad_clip = 0.25;
  agent.config.return_scale = 100;
  agent.config.lr = 1e-3;
  agent.config.warmup_steps = 10;
  rl::DecisionModelOptions mo;
  mo.obs_dim = kObs;
  mo.act_dim = kAct;
  mo.backbone = backbone;
  mo.n_layers = 2;
  mo.embed_dim = 16;
  mo.dropout = 0.1;
  agent.model = rl::DecisionModel(mo);
  agent.model->to(device);
  return agent;
}

inline torch::optim::AdamWOptions adamw_options(const rl::Agent& agent) {
  return torch::optim::AdamWOptions(agent.config.lr).weight_decay(1e-4);
}

// Batch `step` (of the stream `stream`), random, its last two windows padded (mask 0) from
// position 3.
inline data::SequenceBatch batch_at(int64_t step, int64_t stream = 0) {
  torch::manual_seed(1000 + step + 7919 * stream);
  const int64_t B = 6, K = 5;
  auto values = [](const torch::Tensor& t) {
    return std::vector<float>(t.data_ptr<float>(), t.data_ptr<float>() + t.numel());
  };
  data::SequenceBatch b;
  b.batch_size = B;
  b.context_len = K;
  b.obs_dim = kObs;
  b.act_dim = kAct;
  b.states = values(torch::randn({B, K, kObs}));
  b.actions = values(torch::rand({B, K, kAct}) * 2 - 1);
  b.returns_to_go = values(torch::rand({B, K, 1}) * 300);
  const torch::Tensor t = torch::randint(0, 1000, {B, K}, torch::kInt64);
  b.timesteps.assign(t.data_ptr<int64_t>(), t.data_ptr<int64_t>() + t.numel());
  b.mask.assign(B * K, 1.0f);
  for (int64_t k = 3; k < K; ++k) b.mask[(B - 1) * K + k] = b.mask[(B - 2) * K + k] = 0;
  return b;
}

inline double warmup_lr(const rl::Agent& agent, int64_t step) {
  return agent.config.lr * std::min(1.0, double(step + 1) / double(agent.config.warmup_steps));
}

}  // namespace minrnn::testing
