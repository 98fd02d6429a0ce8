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

#include "infer/policy_engine.h"

namespace minrnn::eval {

// The history modes and their names live with the policy that implements them (infer/policy.h,
// which mode a run resolves to infer/policy_engine.h).
using rl::eval_mode_name;
using rl::EvalMode;
using rl::kRecurrentDefault;
using rl::parse_eval_mode;
using rl::resolve_eval_mode;

struct RolloutOptions {
  EvalMode mode = EvalMode::kAuto;
  rl::PolicyEngine engine = rl::PolicyEngine::kAuto;  // auto: fast on CPU (infer/policy.h)
  int episodes = 10;
  double target_return = 0;  // raw (unscaled); the agent's config gives the default
  int64_t seed = 0;          // episode i resets its env with seed + i
  int max_steps = 0;         // per episode; 0 = the env's time limit
  // When set, episode 0 is rendered offscreen: <video_dir>/frame_00000.png ... and rollout.gif.
  std::string video_dir;
  int video_width = 320, video_height = 240;
  // Called after every step of a shard (below) with (env steps taken, the most there may be,
  // episodes ended): for a progress line. A shard's step moves each of its episodes still running
  // one env step; an episode that ends takes none of the steps left to its limit (max_steps, else
  // the env's), which leave the most. Unset: silent.
  std::function<void(int64_t, int64_t, int)> on_step;
  // Threads that step the packed engine's shards (0 = torch's intra-op thread count). Shard k
  // holds episodes [B·k/n, B·(k+1)/n) of a wave of B, n = rollout_shards(B), stepped as one batch
  // by a Policy of its own; threads beyond the shards' count (one episode is one shard) split
  // each shard's larger products (PolicyOptions::threads). The split follows from the episodes
  // alone, never the threads: a rollout's numbers are the same on any thread count. With the
  // packed engine an episode's result is also the one it gets alone, to the bit (its products
  // give a row the same bits in any batch and over any threads: kernels/cpu/float_loops.h,
  // kernels/cpu/workers.h); with the torch engine it moves with its shard's batch size
  // by float rounding (hopper ~1e-5 relative, Rollout.BatchedEpisodesReturnWhatEachReturnsAlone),
  // which HalfCheetah's dynamics can grow into percents of an episode's return.
  int threads = 0;
  // Polled every step: true cuts the rollout short with rl::StopRequested (a training's
  // evaluation, on SIGTERM or Ctrl-C: its resume redoes it). Unset: runs to the end.
  std::function<bool()> should_stop;
};

// Each episode holds its own MuJoCo model and data (~5 MB) while it runs: rollout() runs the
// episodes in waves of at most this many, so memory stays bounded however many are asked for.
// A wave's result is the same as that of a rollout of its episodes alone.
constexpr int kEpisodesAtOnce = 256;

// How many shards rollout() splits a wave of `episodes` into: ⌈√episodes⌉, as even as they split.
// A shard's step costs a pass over the weights whatever its batch, so fewer shards cost less in
// all; more spread over more threads. The square root grows both alike: 10 episodes are 4 shards,
// 100 are 10 of 10, a wave of 256 is 16 of 16 (measured, halfcheetah, 2 cores: docs/agent.md).
int rollout_shards(int64_t episodes);

struct RolloutResult {
  std::vector<double> returns;     // raw undiscounted, per episode
  std::vector<double> normalized;  // D4RL normalized score, per episode
  std::vector<int> lengths;
  // MuJoCo's warnings per episode (a bad acceleration: MuJoCo reset the state and the episode went
  // on, where D4RL's mujoco-py raised): an episode with any is not the env's own dynamics.
  std::vector<int> mujoco_warnings;
  double mean_return = 0, std_return = 0;
  double mean_normalized = 0, std_normalized = 0;  // population std, as D4RL papers report
  double seconds = 0;                              // wall time of the whole call
  double step_seconds = 0;  // of the stepping alone (seconds less making envs and the policy)
  std::string video_gif;    // the GIF written for episode 0, when options.video_dir was set
  EvalMode mode = EvalMode::kAuto;  // the mode actually used (kStreaming or kWindow)
  rl::PolicyEngine engine = rl::PolicyEngine::kAuto;  // the engine actually used
  int threads = 0;  // the threads that stepped the shards and split their products (resolved)
};

RolloutResult rollout(rl::Agent& agent, const RolloutOptions& options);

// Makes the video folder `dir`, or says why it cannot be one ("" where it can): a file, a folder
// that cannot be made or written in, or one holding anything but an earlier rollout's frames
// (which the new ones replace: named as write_video names them and carrying minrnn's writer tag,
// envs::written_by_minrnn; a user's other files, its own rollout.gif too, are not). The message
// begins with `dir`.
// rollout() refuses such a folder before any episode runs.
std::string make_video_dir(const std::string& dir);

}  // namespace minrnn::eval
