// Rolling a trained decision agent out in its MuJoCo environment, DT style: condition on a target
// return (divided by the return scale) and decrement it by reward / scale after every step.
// Recurrent backbones run in streaming mode (O(1) per step, state carried from the episode start);
// the Transformer re-encodes the last K steps every step. All episodes advance in one batch.
#pragma once
#include <string>
#include <vector>

#include "rl/trainer.h"

namespace minrnn::eval {

struct RolloutOptions {
  int episodes = 10;
  double target_return = 0;  // raw (unscaled); the agent's config gives the default
  int64_t seed = 0;          // episode i resets its env with seed + i
  int max_steps = 0;         // per episode; 0 = the env's time limit
  // When set, episode 0 is rendered offscreen: <video_dir>/frame_00000.png ... and rollout.gif.
  std::string video_dir;
  int video_width = 320, video_height = 240;
};

struct RolloutResult {
  std::vector<double> returns;     // raw undiscounted, per episode
  std::vector<double> normalized;  // D4RL normalized score, per episode
  std::vector<int> lengths;
  double mean_return = 0, std_return = 0;
  double mean_normalized = 0, std_normalized = 0;  // population std, as D4RL papers report
  double seconds = 0;
  std::string video_gif;  // the GIF written for episode 0, when options.video_dir was set
};

RolloutResult rollout(rl::Agent& agent, const RolloutOptions& options);

// Writes <path> (JSON, tmp + rename): the options, the agent's step and the per-episode results.
void write_eval_json(const std::string& path, const rl::Agent& agent, const RolloutOptions& options,
                     const RolloutResult& result);

}  // namespace minrnn::eval
