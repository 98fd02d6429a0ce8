#include "eval/rollout.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>
#include <stdexcept>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "envs/image_io.h"
#include "envs/registry.h"
#include "envs/render.h"
#include "eval/stats.h"
#include "infer/policy_engine.h"
#include "io/cpus.h"
#include "io/workers.h"
#include "io/writable.h"
#include "rl/config.h"
#include "rl/stop_request.h"

namespace minrnn::eval {
namespace {

namespace fs = std::filesystem;

// Episodes [first, first + count) of a rollout, stepped as one batch by their own Policy.
struct Shard {
  int64_t first = 0, count = 0;
  std::unique_ptr<rl::Policy> policy;
};

// RolloutOptions::on_step across shards: the env steps the episodes have taken, out of the most
// they may take (each episode its limit, less what an ended one will not take).
class Progress {
 public:
  Progress(const RolloutOptions& opt, int episodes, int max_steps)
      : opt_(opt), max_steps_(max_steps), most_(int64_t{episodes} * max_steps) {}
  // A shard has taken its `steps`-th step, moving `running` episodes, of which `episodes_ended`
  // ended there.
  void shard_step(int steps, int running, int episodes_ended) {
    if (!opt_.on_step) return;
    std::lock_guard<std::mutex> lock(mutex_);
    ended_ += episodes_ended;
    env_steps_ += running;
    most_ -= int64_t{episodes_ended} * (max_steps_ - steps);  // the steps they will not take
    opt_.on_step(env_steps_, most_, ended_);
  }

 private:
  const RolloutOptions& opt_;
  std::mutex mutex_;
  const int max_steps_;
  int64_t env_steps_ = 0, most_;
  int ended_ = 0;
};

// Runs one shard's episodes to their end (or max_steps), filling its slots of `r` (from
// `r_first`, the wave's first episode, on). `renderer` (episode 0, shard 0 only) is null elsewhere.
void run_shard(Shard& shard, std::vector<std::unique_ptr<envs::Env>>& envs,
               std::vector<double>& obs_all, const RolloutOptions& opt, int max_steps,
               envs::Renderer* renderer, std::vector<std::vector<uint8_t>>* frames,
               Progress& progress, int64_t r_first, RolloutResult& r) {
  const int64_t B = shard.count, first = shard.first;
  rl::Policy& policy = *shard.policy;
  const int64_t obs_dim = policy.obs_dim(), act_dim = policy.act_dim();
  double* obs = obs_all.data() + first * obs_dim;
  std::vector<double> actions(B * act_dim), rewards(B), action(act_dim);
  std::vector<uint8_t> done(B, 0);
  int ended_here = 0;
  policy.reset(B, opt.target_return);
  for (int t = 0; t < max_steps; ++t) {
    if (opt.should_stop && opt.should_stop()) {
      throw rl::StopRequested("rollout: stopped at step " + std::to_string(t) + " of " +
                              std::to_string(max_steps) + " by a stop request");
    }
    // Finished episodes keep being fed (frozen obs, reward 0) so the batch stays rectangular.
    policy.act(obs, actions.data());
    const int running = static_cast<int>(B) - ended_here;
    int ended_now = 0;
    for (int64_t i = 0; i < B; ++i) {
      rewards[i] = 0;
      if (done[i]) continue;
      action.assign(actions.begin() + i * act_dim, actions.begin() + (i + 1) * act_dim);
      auto step = envs[first + i]->step(action);
      rewards[i] = step.reward;
      r.returns[r_first + first + i] += step.reward;
      r.lengths[r_first + first + i] += 1;
      r.mujoco_warnings[r_first + first + i] += step.mujoco_warnings;
      std::copy(step.obs.begin(), step.obs.end(), obs + i * obs_dim);
      done[i] = step.terminated || step.truncated;
      if (renderer && i == 0) frames->push_back(renderer->render_rgb());
      ended_now += done[i];
    }
    policy.observe_reward(rewards.data());
    ended_here += ended_now;
    progress.shard_step(t + 1, running, ended_now);
    if (ended_here == B) break;
  }
}

// One environment an episode, each reset with its episode's seed, and their first observations
// row-major (episodes, obs_dim), checked against the policy's widths.
struct Episodes {
  std::vector<std::unique_ptr<envs::Env>> envs;
  std::vector<double> obs;
  int max_steps = 0;
};

Episodes start_episodes(const rl::Agent& agent, const rl::Policy& policy,
                        const RolloutOptions& opt) {
  Episodes e;
  for (int64_t i = 0; i < opt.episodes; ++i) {
    e.envs.push_back(envs::make_env(agent.env, opt.seed + i));
  }
  const int64_t obs_dim = e.envs[0]->spec().obs_dim, act_dim = e.envs[0]->spec().act_dim;
  if (obs_dim != policy.obs_dim() || act_dim != policy.act_dim()) {
    throw std::invalid_argument(
        "rollout: env '" + agent.env + "' has obs_dim " + std::to_string(obs_dim) + ", act_dim " +
        std::to_string(act_dim) + " but the agent was trained on " +
        std::to_string(policy.obs_dim()) + ", " + std::to_string(policy.act_dim()));
  }
  e.obs.resize(opt.episodes * obs_dim);
  for (int64_t i = 0; i < opt.episodes; ++i) {
    const auto o = e.envs[i]->reset(opt.seed + i);
    std::copy(o.begin(), o.end(), e.obs.begin() + i * obs_dim);
  }
  e.max_steps = opt.max_steps > 0 ? opt.max_steps : e.envs[0]->spec().max_episode_steps;
  return e;
}

// `first`'s policy and `count - 1` more made with `options` over the episodes, shard k
// [B·k/count, B·(k+1)/count).
std::vector<Shard> split_into_shards(const rl::Agent& agent, const RolloutOptions& opt,
                                     const rl::PolicyOptions& options,
                                     std::unique_ptr<rl::Policy> first, int count) {
  std::vector<Shard> shards(count);
  for (int k = 0; k < count; ++k) {
    shards[k].first = opt.episodes * k / count;
    shards[k].count = opt.episodes * (k + 1) / count - shards[k].first;
    shards[k].policy = k == 0 ? std::move(first) : std::make_unique<rl::Policy>(agent, options);
  }
  return shards;
}

// Runs every shard to its end on `workers`, each thread taking the next shard not yet taken
// (shard 0 on this thread: it renders), and rethrows the first error a shard threw; the seconds
// it took.
double run_shards(std::vector<Shard>& shards, Episodes& e, const RolloutOptions& opt,
                  io::Workers& workers, envs::Renderer* renderer,
                  std::vector<std::vector<uint8_t>>* frames, int64_t r_first, RolloutResult& r) {
  const int count = static_cast<int>(shards.size());
  Progress progress(opt, opt.episodes, e.max_steps);
  const auto start = std::chrono::steady_clock::now();
  workers.for_each(count, [&](int64_t k) {
    run_shard(shards[k], e.envs, e.obs, opt, e.max_steps, k == 0 ? renderer : nullptr, frames,
              progress, r_first, r);
  });
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// A file of a video write_video writes: frame_NNNNN.png or rollout.gif.
bool is_video_file(const std::string& name) {
  return name == "rollout.gif" ||
         (name.size() == 15 && name.rfind("frame_", 0) == 0 && name.compare(11, 4, ".png") == 0 &&
          std::all_of(name.begin() + 6, name.begin() + 11, ::isdigit));
}

// Episode 0's frames as <dir>/frame_NNNNN.png and <dir>/rollout.gif (in real time: an env step is
// `step_seconds`), an earlier rollout's later frames removed; the GIF's path.
std::string write_video(const std::string& dir, std::vector<std::vector<uint8_t>>& frames,
                        const envs::Renderer& renderer, double step_seconds) {
  envs::make_directories(dir);
  for (size_t f = 0; f < frames.size(); ++f) {
    char name[32];
    std::snprintf(name, sizeof(name), "/frame_%05zu.png", f);
    envs::write_png(dir + name, frames[f], renderer.width(), renderer.height());
  }
  std::vector<fs::path> stale;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name != "rollout.gif" && is_video_file(name) &&
        std::stoul(name.substr(6, 5)) >= frames.size())
      stale.push_back(it->path());
  }
  for (const fs::path& frame : stale) fs::remove(frame, ec);
  const std::string gif = dir + "/rollout.gif";
  const envs::GifTiming timing = envs::real_time_gif(step_seconds);
  std::vector<std::vector<uint8_t>> gif_frames;
  for (size_t f = 0; f < frames.size(); f += timing.stride)
    gif_frames.push_back(std::move(frames[f]));
  envs::write_gif(gif, gif_frames, renderer.width(), renderer.height(), timing.delay_centiseconds);
  return gif;
}

// Episodes [first, first + wave.episodes) of the rollout, their envs reset with wave.seed + i:
// made, stepped to their end and freed, their results in r's slots from `first`.
// r.threads and r.engine are the rollout's; `workers` step its shards.
void roll_wave(rl::Agent& agent, const RolloutOptions& wave, int64_t first, io::Workers& workers,
               RolloutResult& r) {
  // The packed engine's episodes are split into shards, which the threads step (model and
  // physics) one core each: the physics is serial per env. The split follows from the episodes
  // alone, so the thread count (and a video, which shard 0 renders on this thread) leaves the
  // numbers as they are. Threads beyond the shards' (one episode: one shard) split each shard's
  // larger products (PolicyOptions::threads), again with the same bits. The torch engine's module
  // is shared, so it keeps one batch (torch parallelises its own ops).
  const int count = r.engine == rl::PolicyEngine::kPacked ? rollout_shards(wave.episodes) : 1;
  rl::PolicyOptions options{wave.mode, r.engine};
  // Threads past the CPUs we may use would only wait for each other (and a pool's spin for them).
  const int usable = std::min(r.threads, io::usable_cpu_count());
  if (r.engine == rl::PolicyEngine::kPacked) options.threads = std::max(1, usable / count);
  auto policy = std::make_unique<rl::Policy>(agent, options);
  Episodes episodes = start_episodes(agent, *policy, wave);
  std::unique_ptr<envs::Renderer> renderer;
  std::vector<std::vector<uint8_t>> frames;
  if (!wave.video_dir.empty()) {
    renderer =
        std::make_unique<envs::Renderer>(*episodes.envs[0], wave.video_width, wave.video_height);
    frames.push_back(renderer->render_rgb());
  }
  r.mode = policy->mode();
  std::vector<Shard> shards = split_into_shards(agent, wave, options, std::move(policy), count);
  r.step_seconds += run_shards(shards, episodes, wave, workers, renderer.get(), &frames, first, r);
  if (renderer)
    r.video_gif = write_video(wave.video_dir, frames, *renderer, episodes.envs[0]->spec().dt);
}

}  // namespace

std::string make_video_dir(const std::string& dir) {
  std::error_code ec;
  if (fs::exists(dir, ec) && !fs::is_directory(dir, ec)) return dir + " is a file, not a folder";
  if (!fs::create_directories(dir, ec) && ec) return dir + " cannot be made: " + ec.message();
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    // By name and by the writer's tag: a user's own rollout.gif is kept, not replaced.
    if (!is_video_file(name) || !envs::written_by_minrnn(it->path().string())) {
      return dir + " holds " + name +
             ", not only an earlier rollout's frames (written by minrnn): name a new or empty "
             "folder (its frames and rollout.gif would be replaced)";
    }
  }
  if (ec) return dir + " cannot be read: " + ec.message();
  return io::why_folder_unwritable(dir, false);  // which names the folder
}

int rollout_shards(int64_t episodes) {
  int64_t shards = 1;
  while (shards * shards < episodes) ++shards;
  return static_cast<int>(shards);
}

RolloutResult rollout(rl::Agent& agent, const RolloutOptions& opt) {
  if (opt.episodes < 1 || opt.episodes > rl::kMaxEvalEpisodes) {
    throw std::invalid_argument("rollout: episodes must be from 1 to " +
                                std::to_string(rl::kMaxEvalEpisodes));
  }
  if (agent.env.empty()) {
    throw std::invalid_argument("rollout: the run names no environment; set config key 'env'");
  }
  if (!opt.video_dir.empty()) {
    if (const std::string why = make_video_dir(opt.video_dir); !why.empty())
      throw std::invalid_argument("video folder " + why);
  }
  const auto start = std::chrono::steady_clock::now();
  RolloutResult r;
  r.returns.assign(opt.episodes, 0.0);
  r.lengths.assign(opt.episodes, 0);
  r.mujoco_warnings.assign(opt.episodes, 0);
  // The progress of the waves in a row, so a progress line's rate and ETA span the whole rollout:
  // the steps the waves before took, and the most the waves after may take.
  const int max_steps =
      opt.max_steps > 0 ? opt.max_steps : envs::env_spec(agent.env).max_episode_steps;
  r.threads = opt.threads > 0 ? opt.threads : at::get_num_threads();
  r.engine = rl::resolve_policy_engine(opt.engine, agent);
  // The shards' threads, kept across the waves: as many as the first (largest) wave has shards.
  const int shards = r.engine == rl::PolicyEngine::kPacked
                         ? rollout_shards(std::min(opt.episodes, kEpisodesAtOnce))
                         : 1;
  io::Workers shard_workers(std::min(r.threads, shards));
  int ended_before = 0, ended_in_wave = 0;
  int64_t steps_before = 0, steps_in_wave = 0;
  for (int first = 0; first < opt.episodes; first += kEpisodesAtOnce) {
    RolloutOptions wave = opt;
    wave.episodes = std::min(kEpisodesAtOnce, opt.episodes - first);
    wave.seed = opt.seed + first;
    if (first > 0) wave.video_dir.clear();
    if (opt.on_step) {
      // The most the later waves' episodes may step.
      const int64_t later = int64_t{opt.episodes - first - wave.episodes} * max_steps;
      wave.on_step = [&, later](int64_t steps, int64_t most, int ended) {
        ended_in_wave = ended;
        steps_in_wave = steps;
        opt.on_step(steps_before + steps, steps_before + most + later, ended_before + ended);
      };
    }
    roll_wave(agent, wave, first, shard_workers, r);
    // A wave's ~5 MB an env go back to the system before the next wave makes its own: glibc kept
    // the freed memory in its heaps (having raised its mmap threshold to their size) and the next
    // wave's pieces fit it ever worse — 256 episodes peaked at 1.4 GB, 768 at 2.8 GB, 3 000 at
    // 3.6 GB (a walk, 2026-11-29), where one wave's worth was the promise.
#ifdef __GLIBC__
    malloc_trim(0);
#endif
    ended_before += ended_in_wave;
    steps_before += steps_in_wave;
  }
  for (double ret : r.returns) r.normalized.push_back(agent.normalized(ret));
  const MeanStd returns = mean_std(r.returns), normalized = mean_std(r.normalized);
  r.mean_return = returns.mean;
  r.std_return = returns.std;
  r.mean_normalized = normalized.mean;
  r.std_normalized = normalized.std;
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

}  // namespace minrnn::eval
