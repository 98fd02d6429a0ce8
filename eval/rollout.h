// Rolling a trained decision agent out in its MuJoCo environment, DT style: condition on a target
// return (divided by the return scale) and decrement it by reward / scale after every step.
// Two ways to feed the history to the model (EvalMode):
//   streaming  recurrent backbones only: O(1) per step, state carried from the episode start;
//   window     re-encode the last K (= config context_len) steps from a zero state every step, as
//              DT does; the only mode of the Transformer, available to every backbone.
// Windows are never padded: before step K the window is simply shorter (steps 0..t), which is a
// prefix of an unpadded training window starting at the episode start. Hence for t < K window and
// streaming agree up to float rounding (parallel scan vs step). All episodes advance in one batch.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "rl/trainer.h"

namespace minrnn::eval {

enum class EvalMode {
  kAuto,       // the project default for the backbone: kRecurrentDefault, or window (Transformer)
  kStreaming,  // recurrent backbones only; std::invalid_argument for the Transformer
  kWindow,
};

// What kAuto means for recurrent (streaming-capable) backbones. Chosen by measurement:
// docs/agent.md, "Streaming vs sliding-window evaluation".
inline constexpr EvalMode kRecurrentDefault = EvalMode::kStreaming;

// "auto" | "streaming" | "window".
const char* eval_mode_name(EvalMode mode);
// Inverse of eval_mode_name; std::invalid_argument listing the names otherwise.
EvalMode parse_eval_mode(const std::string& name);
// The concrete mode (never kAuto) a rollout of `agent` uses; std::invalid_argument for streaming
// on a backbone without a step mode.
EvalMode resolve_eval_mode(EvalMode requested, const rl::Agent& agent);

struct RolloutOptions {
  EvalMode mode = EvalMode::kAuto;
  int episodes = 10;
  double target_return = 0;  // raw (unscaled); the agent's config gives the default
  int64_t seed = 0;          // episode i resets its env with seed + i
  int max_steps = 0;         // per episode; 0 = the env's time limit
  // When set, episode 0 is rendered offscreen: <video_dir>/frame_00000.png ... and rollout.gif.
  std::string video_dir;
  int video_width = 320, video_height = 240;
  // Called after every step of the batch with (steps done, max steps per episode, episodes
  // finished): for a progress line. Unset: silent.
  std::function<void(int, int, int)> on_step;
};

struct RolloutResult {
  std::vector<double> returns;     // raw undiscounted, per episode
  std::vector<double> normalized;  // D4RL normalized score, per episode
  std::vector<int> lengths;
  double mean_return = 0, std_return = 0;
  double mean_normalized = 0, std_normalized = 0;  // population std, as D4RL papers report
  double seconds = 0;
  std::string video_gif;            // the GIF written for episode 0, when options.video_dir was set
  EvalMode mode = EvalMode::kAuto;  // the mode actually used (kStreaming or kWindow)
};

RolloutResult rollout(rl::Agent& agent, const RolloutOptions& options);

// Writes <path> (JSON, tmp + rename): the options (with "mode" the mode used and "mode_requested"),
// the agent's step and the per-episode results.
void write_eval_json(const std::string& path, const rl::Agent& agent, const RolloutOptions& options,
                     const RolloutResult& result);

}  // namespace minrnn::eval
