// A trained decision agent: its model, the state normalization and config it was trained with, the
// environment it is evaluated in and that environment's reference scores. What evaluation, the
// policy and a user's own control loop need of a run; written and read by rl/checkpoint.h.
#pragma once
#include <torch/torch.h>

#include <cstdint>
#include <string>

#include "rl/config.h"
#include "rl/decision_model.h"

namespace minrnn::rl {

// What evaluation needs from a trained run.
struct Agent {
  TrainConfig config;
  DecisionModel model{nullptr};
  torch::Tensor state_mean, state_std;  // (obs_dim) float, on CPU
  // The environment rollouts use: a canonical name (envs/registry.h) such as "hopper" (v4, D4RL),
  // "hopper-v5" or a Gymnasium env_spec JSON, chosen from the dataset (rl/dataset_env.h).
  std::string env;
  int64_t step = 0;  // optimizer steps taken
  // Reference scores of normalized returns: the dataset's (a Minari dataset's own, else D4RL's
  // table), recorded at training. 0/0 (older checkpoints, hand-made agents): the env's table.
  double ref_min_score = 0, ref_max_score = 0;
  std::string ref_source;
  // 100 * (ret - ref_min) / (ref_max - ref_min).
  double normalized(double ret) const;
};

// The model options a config implies for given dimensions.
DecisionModelOptions model_options(const TrainConfig& config, int64_t obs_dim, int64_t act_dim);
// A lower bound on the weights (floats) of that model, counting only what every backbone has: the
// embeddings and the action head, and at least d × d per layer. Computed in double: a hostile
// config's product does not wrap.
double min_model_weights(const TrainConfig& config, int64_t obs_dim, int64_t act_dim);
// A copy of `agent` that shares no tensor with it, its model on the CPU: what an evaluation on
// another thread reads while the original trains on (rl/run_evaluations.h). Leaves torch's global
// random generator as it was.
Agent cpu_copy(const Agent& agent);
// Loads <run_dir>/checkpoint.pt (or a checkpoint file) with the model's tensors on `device`,
// whatever device wrote it (a CUDA checkpoint loads where there is no GPU); state_mean/state_std
// on CPU. Throws naming the file.
Agent load_agent(const std::string& run_dir_or_file, const torch::Device& device = torch::kCPU);
}  // namespace minrnn::rl
