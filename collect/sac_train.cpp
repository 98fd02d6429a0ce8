// The online SAC loop: act, store, one gradient step per environment step, evaluate, checkpoint.
#include <ATen/CPUGeneratorImpl.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <deque>
#include <filesystem>
#include <memory>
#include <numeric>
#include <stdexcept>
#include <utility>

#include "collect/sac.h"
#include "envs/registry.h"
#include "io/progress_line.h"
#include "io/progress_pace.h"
#include "rl/checkpoint.h"
#include "rl/stop_request.h"

namespace minrnn::rl {
namespace {

torch::Tensor floats(const std::vector<float>& v) {
  return torch::from_blob(const_cast<float*>(v.data()), {static_cast<int64_t>(v.size())},
                          torch::kFloat32)
      .clone();
}
torch::Tensor bytes(const std::vector<uint8_t>& v) {
  return torch::from_blob(const_cast<uint8_t*>(v.data()), {static_cast<int64_t>(v.size())},
                          torch::kUInt8)
      .clone();
}
template <typename T>
void read_vector(torch::serialize::InputArchive& archive, const std::string& key,
                 std::vector<T>& out) {
  torch::Tensor t;
  archive.read(key, t);
  t = t.to(torch::kCPU).contiguous();
  out.assign(t.data_ptr<T>(), t.data_ptr<T>() + t.numel());
}

// The seed of step t's minibatch: a fixed function of (seed, t), so no sampler state to save.
uint64_t batch_seed(uint64_t seed, int64_t step) {
  return seed * 0x9E3779B97F4A7C15ULL + static_cast<uint64_t>(step) * 0xD1B54A32D192ED03ULL;
}

}  // namespace

void save_sac_checkpoint(const std::string& path, const Sac& sac, const ReplayBuffer& b,
                         int64_t episodes) {
  torch::serialize::OutputArchive archive;
  torch::serialize::OutputArchive agent;
  sac.save(agent);
  archive.write("sac", agent);
  archive.write("episodes", torch::tensor({episodes}, torch::kInt64));
  archive.write("buffer/dims", torch::tensor({b.obs_dim, b.act_dim, b.nq, b.nv}, torch::kInt64));
  archive.write("buffer/obs", floats(b.obs));
  archive.write("buffer/actions", floats(b.actions));
  archive.write("buffer/rewards", floats(b.rewards));
  archive.write("buffer/next_obs", floats(b.next_obs));
  archive.write("buffer/terminals", bytes(b.terminals));
  archive.write("buffer/timeouts", bytes(b.timeouts));
  archive.write("buffer/qpos", floats(b.qpos));
  archive.write("buffer/qvel", floats(b.qvel));
  archive.write("buffer/log_probs", floats(b.log_probs));
  // Written beside the target and renamed: a crash leaves the previous checkpoint intact.
  save_archive_atomically(archive, path);
}

bool load_sac_checkpoint(const std::string& path, Sac& sac, ReplayBuffer& b, int64_t* episodes) {
  if (!std::filesystem::exists(path)) return false;
  torch::serialize::InputArchive archive;
  try {
    // Onto the agent's device as it is read: its optimizers' state must sit beside its weights,
    // and a CUDA-written archive cannot even be read where there is no CUDA.
    archive.load_from(path, sac.config().device);
  } catch (const c10::Error& e) {  // its what() carries LibTorch's C++ backtrace: not for users
    throw std::runtime_error(path + ": not a readable SAC checkpoint (" +
                             e.what_without_backtrace() + ")");
  } catch (const std::exception& e) {
    throw std::runtime_error(path + ": not a readable SAC checkpoint (" + e.what() + ")");
  }
  torch::Tensor dims, ep;
  archive.read("buffer/dims", dims);
  if (dims[0].item<int64_t>() != sac.obs_dim() || dims[1].item<int64_t>() != sac.act_dim()) {
    throw std::invalid_argument(path + ": checkpoint of other observation/action dimensions");
  }
  torch::serialize::InputArchive agent;
  archive.read("sac", agent);
  check_archive_finite(agent, path, "not a readable SAC checkpoint: state",
                       "delete the work dir to retrain");
  sac.load(agent);
  archive.read("episodes", ep);
  if (episodes) *episodes = ep[0].item<int64_t>();
  b = ReplayBuffer(dims[0].item<int>(), dims[1].item<int>(), dims[2].item<int>(),
                   dims[3].item<int>());
  read_vector(archive, "buffer/obs", b.obs);
  read_vector(archive, "buffer/actions", b.actions);
  read_vector(archive, "buffer/rewards", b.rewards);
  read_vector(archive, "buffer/next_obs", b.next_obs);
  read_vector(archive, "buffer/terminals", b.terminals);
  read_vector(archive, "buffer/timeouts", b.timeouts);
  read_vector(archive, "buffer/qpos", b.qpos);
  read_vector(archive, "buffer/qvel", b.qvel);
  read_vector(archive, "buffer/log_probs", b.log_probs);
  return true;
}

double evaluate_policy(const std::string& env_name, Sac& sac, int episodes, uint64_t seed,
                       bool deterministic) {
  auto env = envs::make_env(env_name, seed);
  // Stochastic evaluation draws its own noise: evaluating must not change what training does next.
  at::Generator noise = at::detail::createCPUGenerator(seed);
  double total = 0;
  for (int e = 0; e < episodes; ++e) {
    std::vector<double> obs = env->reset(static_cast<int64_t>(seed) + e);
    for (;;) {
      envs::StepResult r = env->step(sac.act(obs, deterministic, nullptr, &noise));
      total += r.reward;
      obs = r.obs;
      if (r.terminated || r.truncated) break;
    }
  }
  return total / std::max(episodes, 1);
}

namespace {

// Loads the work dir's checkpoint into `sac` and `buffer` (an empty buffer without one) and drops
// the unfinished episode a kill left; returns the episodes the buffer holds.
int64_t resume_sac(const std::string& env_name, const envs::EnvSpec& spec, Sac& sac,
                   ReplayBuffer& buffer, const SacTrainOptions& opt, SacTrainResult& result) {
  int64_t episodes = 0;
  if (!opt.work_dir.empty()) {
    std::filesystem::create_directories(opt.work_dir);
    result.checkpoint = (std::filesystem::path(opt.work_dir) / "sac.pt").string();
    result.resumed = load_sac_checkpoint(result.checkpoint, sac, buffer, &episodes);
  }
  if (!result.resumed) buffer = ReplayBuffer(spec.obs_dim, spec.act_dim, spec.nq, spec.nv);
  // A resumed run starts a fresh episode: drop the unfinished one, so no episode in the buffer
  // is glued to the next (readers split episodes at terminals | timeouts only).
  int64_t keep = buffer.size();
  while (keep > 0 && !buffer.terminals[keep - 1] && !buffer.timeouts[keep - 1]) --keep;
  if (result.resumed && opt.progress_every > 0) {
    std::fprintf(stderr,
                 "sac %s: resuming from %s at step %lld (%lld episodes; the unfinished episode's "
                 "%lld steps are redone)\n",
                 env_name.c_str(), result.checkpoint.c_str(), static_cast<long long>(keep),
                 static_cast<long long>(episodes), static_cast<long long>(buffer.size() - keep));
  }
  buffer.truncate(keep);
  return episodes;
}

// The evaluation due after `done` steps into `result`; true when it reaches the target.
bool evaluate_sac(const std::string& env_name, Sac& sac, int64_t done, const SacTrainOptions& opt,
                  SacTrainResult& result) {
  result.eval_step = done;
  result.eval_return = evaluate_policy(env_name, sac, opt.eval_episodes,
                                       sac.config().seed + 1000003 + done, /*deterministic=*/false);
  result.eval_normalized = envs::normalized_score(env_name, result.eval_return);
  if (opt.progress_every > 0) {
    char text[256];
    std::snprintf(text, sizeof text,
                  "sac %s: eval at %lld steps (%d episodes, stochastic policy): return %.1f "
                  "(normalized %.1f)",
                  env_name.c_str(), static_cast<long long>(done), opt.eval_episodes,
                  result.eval_return, result.eval_normalized);
    io::ProgressLine::on_stderr().message(text);
  }
  result.reached_target =
      !std::isnan(opt.stop_at_normalized) && result.eval_normalized >= opt.stop_at_normalized;
  return result.reached_target;
}

// The environment's side of the online loop: the episode in progress, its return, and the
// returns of the last 10 that ended (a resume starts that window anew).
struct Episodes {
  std::unique_ptr<envs::Env> env;
  uint64_t seed;
  int64_t count;  // episodes ended, this run's resumes included: episode k resets with seed + k
  std::vector<double> obs;
  double episode_return = 0;
  std::deque<double> recent;

  Episodes(const std::string& env_name, uint64_t seed, int64_t ended)
      : env(envs::make_env(env_name, seed)), seed(seed), count(ended) {
    obs = env->reset(static_cast<int64_t>(seed + count));
  }

  // Takes `action` (its log-probability under the behaviour policy) and records the transition.
  void step(const std::vector<double>& action, double log_prob, ReplayBuffer& buffer) {
    const std::vector<double> qpos = env->qpos(), qvel = env->qvel();
    envs::StepResult r = env->step(action);
    buffer.add(obs, action, r.reward, r.obs, r.terminated, r.truncated, qpos, qvel, log_prob);
    episode_return += r.reward;
    obs = r.obs;
    if (!r.terminated && !r.truncated) return;
    recent.push_back(episode_return);
    if (recent.size() > 10) recent.pop_front();
    episode_return = 0;
    ++count;
    obs = env->reset(static_cast<int64_t>(seed + count));
  }
};

// One progress line (steps, rate, ETA, the last episodes' mean return, the losses). The ETA is
// the learning steps' pace (the random warm-up's runs ~60× faster: no ETA until learning has
// run); with a target (medium) it is the budget's, a bound: the run stops when an evaluation
// reaches it.
class SacProgress {
 public:
  SacProgress(std::string env_name, int64_t first_step, int64_t total, bool has_target)
      : env_name_(std::move(env_name)),
        first_step_(first_step),
        total_(total),
        has_target_(has_target) {}

  void learning_at(int64_t step) {
    if (learning_first_ >= 0) return;
    learning_first_ = step;
    learning_since_ = std::chrono::steady_clock::now();
  }

  void show(int64_t done, const Episodes& episodes, const SacLosses& losses) {
    const auto now = std::chrono::steady_clock::now();
    const double secs = std::chrono::duration<double>(now - start_).count();
    const double learning_secs = std::chrono::duration<double>(now - learning_since_).count();
    const double rate = (done - first_step_) / std::max(secs, 1e-9);
    const double learning_rate = learning_first_ >= 0 && done - learning_first_ > 1
                                     ? (done - learning_first_) / std::max(learning_secs, 1e-9)
                                     : 0;
    char returns[64] = "no episode ended here yet";
    const std::deque<double>& recent = episodes.recent;
    if (!recent.empty()) {
      std::snprintf(returns, sizeof returns, "return(last %zu) %.1f", recent.size(),
                    std::accumulate(recent.begin(), recent.end(), 0.0) / recent.size());
    }
    const std::string eta =
        learning_rate > 0 ? std::string(has_target_ ? "at most " : "") +
                                io::duration_text(io::eta_seconds(done, total_, learning_rate))
                          : std::string("once learning has run");
    char line[256];
    std::snprintf(line, sizeof line,
                  "sac %s: %lld/%lld steps, %.0f steps/s, ETA %s, %lld episodes, %s, alpha %.3f, "
                  "q_loss %.3g",
                  env_name_.c_str(), static_cast<long long>(done), static_cast<long long>(total_),
                  rate, eta.c_str(), static_cast<long long>(episodes.count), returns, losses.alpha,
                  losses.q_loss);
    io::ProgressLine::on_stderr().update(line);
  }

 private:
  std::string env_name_;
  int64_t first_step_, total_;
  bool has_target_;
  const std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  int64_t learning_first_ = -1;  // the first learning step of this process, and when it began
  std::chrono::steady_clock::time_point learning_since_;
};

}  // namespace

SacTrainResult train_sac(const std::string& env_name, Sac& sac, ReplayBuffer& buffer,
                         const SacTrainOptions& opt) {
  const envs::EnvSpec spec = envs::env_spec(env_name);
  const uint64_t seed = sac.config().seed;
  SacTrainResult result;
  Episodes episodes(env_name, seed, resume_sac(env_name, spec, sac, buffer, opt, result));
  BehaviourPolicy random_policy =
      uniform_random_policy(spec.act_dim, batch_seed(seed, buffer.size()));
  SacLosses losses;
  SacProgress progress(env_name, buffer.size(), opt.total_steps,
                       !std::isnan(opt.stop_at_normalized));
  io::ProgressPace pace(io::ProgressLine::on_stderr(), true);
  auto checkpoint = [&] {
    if (!result.checkpoint.empty())
      save_sac_checkpoint(result.checkpoint, sac, buffer, episodes.count);
  };

  while (buffer.size() < opt.total_steps) {
    // A stop signal (rl/stop_request.h): the step in progress has finished; checkpoint below.
    if (stop_requested()) {
      result.interrupted = true;
      break;
    }
    const int64_t step = buffer.size();
    double log_prob = 0;
    const std::vector<double> action = step < opt.start_steps
                                           ? random_policy(episodes.obs, &log_prob)
                                           : sac.act(episodes.obs, false, &log_prob);
    episodes.step(action, log_prob, buffer);
    if (step + 1 >= opt.start_steps) {
      progress.learning_at(step);
      const auto idx =
          sample_indices(batch_seed(seed, step), buffer.size(), sac.config().batch_size);
      losses = sac.update(make_batch(buffer, idx, sac.config().device));
    }
    const int64_t done = step + 1;
    if (opt.eval_every > 0 && done % opt.eval_every == 0 && done >= opt.start_steps &&
        evaluate_sac(env_name, sac, done, opt, result))
      break;
    if (opt.checkpoint_every > 0 && done % opt.checkpoint_every == 0) checkpoint();
    if (opt.progress_every > 0 && done % opt.progress_every == 0 &&
        pace.due(done == opt.total_steps))
      progress.show(done, episodes, losses);
  }
  if (opt.progress_every > 0) io::ProgressLine::on_stderr().close();
  checkpoint();
  result.steps = buffer.size();
  return result;
}

}  // namespace minrnn::rl
