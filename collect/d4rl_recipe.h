// D4RL's recipe for each quality of behaviour data (Fu et al. 2020, "D4RL: Datasets for Deep
// Data-Driven Reinforcement Learning"):
//   random        actions ~ U[-1, 1]
//   medium        SAC trained until its evaluation reaches ~1/3 of the expert's normalized score
//                 (or the training budget), then `steps` transitions of that policy, sampled
//   medium-replay SAC's replay buffer up to that point (every transition it was trained on)
//   expert        the same SAC run continued to the full budget (the medium run itself where it
//                 used the whole budget), then `steps` sampled transitions
//   medium-expert medium ++ expert
// SAC trains in a work dir (<work>/medium/sac.pt, <work>/expert/sac.pt, run.txt): an interrupted
// collection resumes where it stopped, and the other qualities of the same env and seed reuse the
// trained agents.
//
//   rl::D4rlRecipe recipe;  recipe.env = "hopper";  recipe.quality = "medium";
//   data::Transitions d = rl::collect_d4rl_quality(recipe, torch::kCPU);
#pragma once
#include <torch/torch.h>

#include <cstdint>
#include <string>
#include <vector>

#include "datasets/d4rl.h"
#include "envs/registry.h"

namespace minrnn::rl {

struct D4rlRecipe {
  std::string env;                // any name envs/registry.h accepts, or an env_spec JSON
  std::string quality;            // one of collectable_qualities()
  std::string work_dir;           // SAC's checkpoints; "" = default_sac_work_dir(env, seed)
  uint64_t seed = 0;              // of the environment, SAC and sampling
  int64_t steps = 1000000;        // transitions sampled per policy (medium-replay: unused)
  int64_t train_steps = 1000000;  // SAC's environment-step budget (the expert's)
  int64_t start_steps = 5000;     // SAC's uniform random steps before it learns
  int64_t eval_every = 5000;      // SAC's evaluation period, in environment steps
  double target = 100.0 / 3.0;    // the normalized score at which SAC counts as medium
};

// The qualities of envs::d4rl_qualities() the recipe makes: random, medium, medium-replay,
// medium-expert, expert.
std::vector<std::string> collectable_qualities();
// Why the recipe does not make `quality`, one of envs::d4rl_qualities() ("" where it does).
std::string why_not_collectable(const std::string& quality);

// "hopper" for v2-v4 (one semantics, so one work dir and one file name), "hopper-v5" for v5.
std::string env_family_version(const envs::EnvSpec& spec);

// data/work/<family>-sac-s<seed>; an env_spec JSON trains in <family>-custom-sac-s<seed>.
std::string default_sac_work_dir(const std::string& env, uint64_t seed);

// Refuses (std::invalid_argument, naming `minrnn collect`'s option) a count below 1, a target
// that is not finite, an unknown quality, and for SAC's qualities more start steps than training
// steps: a caller checks before it creates anything.
void check_d4rl_recipe(const D4rlRecipe& recipe);

// The recipe's transitions for `quality`, with its policy's metadata (D4RL's keys). Stops early on
// SIGTERM or SIGINT (rl/stop_request.h): SAC training writes its checkpoint and this throws
// io::StopRequested saying where it stopped; sampling returns what it has, and the caller, seeing
// stop_requested(), drops it. Throws what check_d4rl_recipe and check_work_dir_recipe throw, and
// what io::DirLock throws while another collection holds the work dir.
data::Transitions collect_d4rl_quality(const D4rlRecipe& recipe, torch::Device device);

}  // namespace minrnn::rl
