// What the rollout tests share (rollout_test.cpp, rollout_video_test.cpp): a briefly trained
// agent, a short rollout's options.
#pragma once
#include <filesystem>
#include <string>

#include "eval/rollout.h"
#include "rl/trainer.h"
#include "tests/rl/fixtures.h"

namespace minrnn::testing {

// A briefly trained agent of `backbone` with K = context_len.
inline rl::Agent tiny_agent(const std::filesystem::path& dir, const std::string& data,
                            const std::string& backbone, int context_len) {
  auto cfg = tiny_config(
      data, backbone,
      {"max_steps=5", "checkpoint_every=5", "context_len=" + std::to_string(context_len)});
  rl::TrainOptions opt;
  opt.quiet = true;
  opt.run_dir = (dir / backbone).string();
  rl::train(cfg, opt);
  return rl::load_agent(opt.run_dir);
}

inline eval::RolloutOptions short_rollout(int episodes, int max_steps, eval::EvalMode mode) {
  eval::RolloutOptions ro;
  ro.episodes = episodes;
  ro.target_return = 1000;
  ro.max_steps = max_steps;
  ro.mode = mode;
  return ro;
}

}  // namespace minrnn::testing
