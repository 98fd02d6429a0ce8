// `minrnn data`: look inside D4RL / Minari datasets, write synthetic D4RL-layout files, and fetch
// the published ones (`download`: tools/data_download.cpp).
//   minrnn data inspect hopper-medium-v2 [--json] [--env hopper|none]
//   minrnn data synth out.hdf5 --env hopper --steps 1000000 [--seed 0] [--force]
//   minrnn data download hopper-medium-v2 mujoco/hopper/medium-v0
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <random>

#include "datasets/catalog.h"
#include "datasets/d4rl.h"
#include "datasets/env_table.h"
#include "datasets/episodes.h"
#include "io/shell_word.h"
#include "io/writable.h"
#include "rl/dataset_env.h"
#include "tools/commands.h"
#include "tools/data_download.h"
#include "tools/data_inspect_text.h"

namespace minrnn::cli {
namespace {

double peak_rss_mib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss / 1024.0;  // Linux reports KiB
}

double sum(const std::vector<float>& v) {
  double total = 0;
  for (float x : v) total += x;
  return total;
}

nlohmann::json space_json(const data::MinariSpace& space) {
  if (!space.present) return nullptr;
  return {{"type", space.type}, {"dtype", space.dtype}, {"shape", space.shape}};
}

// What a Minari dataset's metadata.json said.
nlohmann::json minari_json(const data::MinariInfo& m) {
  return {{"dataset_id", m.dataset_id},
          {"minari_version", m.minari_version},
          {"metadata", m.metadata_path},
          {"env_spec", m.env_spec.empty() ? nlohmann::json(nullptr) : nlohmann::json(m.env_spec)},
          {"eval_env_spec",
           m.eval_env_spec.empty() ? nlohmann::json(nullptr) : nlohmann::json(m.eval_env_spec)},
          {"observation_space", space_json(m.observation_space)},
          {"action_space", space_json(m.action_space)},
          {"ref_min_score",
           m.has_ref_scores ? nlohmann::json(m.ref_min_score) : nlohmann::json(nullptr)},
          {"ref_max_score",
           m.has_ref_scores ? nlohmann::json(m.ref_max_score) : nlohmann::json(nullptr)},
          {"episodes_without_end_flag", m.episodes_without_end_flag}};
}

// A normalized return past which `data inspect` warns: ten times the expert's.
constexpr double kFarPastReference = 1000.0;

nlohmann::json describe(const data::Dataset& ds, const rl::DatasetEnv& env, double load_seconds,
                        double rss_before, double rss_after) {
  const data::Transitions& d = ds.data;
  const data::EpisodeStats& s = ds.index.stats;
  nlohmann::json j;
  j["source"] = ds.source;
  j["format"] = ds.format;
  j["env"] = ds.env.empty() ? nlohmann::json(nullptr) : nlohmann::json(ds.env);
  // The environment the dataset is evaluated in (rl/dataset_env.h), with its Gymnasium version.
  const bool known = !env.env.empty();
  j["env_id"] = known ? nlohmann::json(env.env_id) : nlohmann::json(nullptr);
  j["env_version"] = known ? nlohmann::json(env.env_version) : nlohmann::json(nullptr);
  j["env_source"] = known ? nlohmann::json(env.env_source) : nlohmann::json(nullptr);
  j["env_name"] = known ? nlohmann::json(env.env) : nlohmann::json(nullptr);
  if (ds.format == "minari") j["minari"] = minari_json(ds.minari);
  // Sums of what was read, for comparing two readers of one file (tests/python).
  j["checksums"] = {{"observations", sum(d.observations)},
                    {"actions", sum(d.actions)},
                    {"rewards", sum(d.rewards)},
                    {"next_observations", sum(d.next_observations)}};
  j["obs_dim"] = d.obs_dim;
  j["act_dim"] = d.act_dim;
  j["steps"] = d.num_steps();
  j["fingerprint"] = ds.fingerprint;  // a run's env.json dataset_fingerprint: the same data
  j["episodes"] = s.num_episodes;
  j["terminals"] = s.num_terminals;
  j["timeouts"] = s.num_timeouts;
  j["terminal_and_timeout"] = s.both_flags;
  // The three envs act in [-1, 1]: a value past it is one the policy's tanh cannot output.
  j["actions_outside_unit_box"] = std::count_if(d.actions.begin(), d.actions.end(),
                                                [](float a) { return a < -1.0f || a > 1.0f; });
  j["dropped_tail_steps"] = s.dropped_tail_steps;
  j["episode_length"] = {{"min", s.min_length}, {"mean", s.mean_length}, {"max", s.max_length}};
  j["episodes_over_time_limit"] =
      ds.env.empty() ? nlohmann::json(nullptr) : nlohmann::json(ds.episodes_over_time_limit);
  j["time_limit"] = ds.env.empty() ? nlohmann::json(nullptr) : nlohmann::json(ds.max_episode_steps);
  j["return"] = {
      {"min", s.min_return}, {"mean", s.mean_return}, {"max", s.max_return}, {"std", s.std_return}};
  if (env.has_ref_scores || ds.has_ref_returns) {
    const double lo = env.has_ref_scores ? env.ref_min_score : ds.ref_min_return;
    const double hi = env.has_ref_scores ? env.ref_max_score : ds.ref_max_return;
    auto norm = [&](double r) { return 100.0 * (r - lo) / (hi - lo); };
    // The envs' best policies score ~100-130: a return ten times the expert's is a reward of
    // another scale (scaled, summed, in other units), not this env's.
    j["returns_past_reference"] =
        std::max(std::abs(norm(s.min_return)), std::abs(norm(s.max_return))) > kFarPastReference;
    j["normalized_return"] = {{"min", norm(s.min_return)},
                              {"mean", norm(s.mean_return)},
                              {"max", norm(s.max_return)},
                              {"ref_min", lo},
                              {"ref_max", hi},
                              {"ref_source", env.has_ref_scores ? env.ref_source : ds.ref_source}};
  } else {
    j["normalized_return"] = nullptr;
    j["returns_past_reference"] = nullptr;
  }
  j["next_observations"] = !d.next_observations.empty();
  nlohmann::json infos = nlohmann::json::object();
  for (const auto& [name, array] : d.infos) infos[name] = array.shape;
  j["infos"] = infos;
  nlohmann::json meta = nlohmann::json::object();
  for (const auto& [name, value] : d.metadata.strings) meta[name] = value;
  for (const auto& [name, value] : d.metadata.ints) meta[name] = value;
  for (const auto& [name, array] : d.metadata.arrays) meta[name] = {{"shape", array.shape}};
  for (const auto& name : d.metadata.unread) meta[name] = "(not read: unsupported type)";
  j["metadata"] = meta;
  j["load_seconds"] = load_seconds;
  j["peak_rss_mib"] = {{"before_load", rss_before}, {"after_load", rss_after}};
  return j;
}

// Synthetic data with D4RL's layout and sizes (random states and actions, episodes of the given
// length ending in timeouts, infos/qpos|qvel|action_log_probs, a small metadata/policy) so the
// reader can be exercised and timed at D4RL scale without the real files.
data::Transitions synthetic(const data::EnvInfo& env, int64_t steps, int episode_len,
                            uint64_t seed) {
  data::Transitions d;
  d.obs_dim = env.obs_dim;
  d.act_dim = env.act_dim;
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  d.observations.resize(steps * env.obs_dim);
  d.next_observations.resize(steps * env.obs_dim);
  d.actions.resize(steps * env.act_dim);
  d.rewards.resize(steps);
  d.terminals.assign(steps, 0);
  d.timeouts.assign(steps, 0);
  for (auto& x : d.observations) x = normal(rng);
  for (auto& x : d.next_observations) x = normal(rng);
  for (auto& x : d.actions) x = unit(rng);
  for (auto& x : d.rewards) x = 3.0f + normal(rng);
  for (int64_t t = episode_len - 1; t < steps; t += episode_len) d.timeouts[t] = 1;
  const int64_t nq = (env.obs_dim + 1) / 2, nv = nq;  // obs = qpos[1:] ++ qvel, nq == nv
  data::FloatArray qpos{{steps, nq}, std::vector<float>(steps * nq)};
  data::FloatArray qvel{{steps, nv}, std::vector<float>(steps * nv)};
  data::FloatArray log_probs{{steps}, std::vector<float>(steps)};
  for (auto& x : qpos.values) x = normal(rng);
  for (auto& x : qvel.values) x = normal(rng);
  for (auto& x : log_probs.values) x = normal(rng);
  d.infos = {{"qpos", qpos}, {"qvel", qvel}, {"action_log_probs", log_probs}};
  d.metadata.strings = {{"algorithm", data::kSyntheticAlgorithm},
                        {"policy/nonlinearity", "relu"},
                        {"policy/output_distribution", "tanh_gaussian"}};
  d.metadata.ints["iteration"] = 0;
  data::FloatArray w{{256, env.obs_dim}, std::vector<float>(256 * env.obs_dim)};
  for (auto& x : w.values) x = 0.1f * normal(rng);
  d.metadata.arrays["policy/fc0/weight"] = w;
  d.metadata.arrays["policy/fc0/bias"] = data::FloatArray{{256}, std::vector<float>(256, 0.0f)};
  return d;
}

// A fault in what only inspect reads (a NaN in next_observations, a broken infos group, a chunk
// that cannot be read) is still refused, but says that training, which reads none of them, takes
// the file. The file is read again as training reads it: without those, and with the env checked
// as a config without `env` has it (inspect's --env none checks no widths; training weighs the
// env the name says, rl::resolve_dataset_env).
data::Dataset load_for_inspect(const std::string& target, const data::ReadOptions& options) {
  try {
    return data::load_dataset(target, options);
  } catch (const std::exception& e) {
    const std::exception_ptr fault = std::current_exception();
    if (!options.read_next_observations && !options.read_infos && !options.read_metadata) throw;
    data::ReadOptions lean = options.only_what_training_reads();
    if (lean.env == "none") lean.env.clear();
    try {
      (void)rl::resolve_dataset_env(data::load_dataset(target, lean), "");
    } catch (const std::exception&) {
      std::rethrow_exception(fault);
    }
    const std::string message =
        std::string(e.what()) +
        "\n(training reads this dataset all the same: it reads no next observations, infos or "
        "metadata; `minrnn data inspect --minimal " +
        io::shell_word(target) + "` explains what it reads)";
    if (dynamic_cast<const std::invalid_argument*>(&e) != nullptr)
      throw std::invalid_argument(message);
    throw std::runtime_error(message);
  }
}

void add_inspect_command(CLI::App& data_cmd) {
  struct InspectArgs {
    std::string target, env;
    bool json = false;
    bool minimal = false;
  };
  auto inspect_args = std::make_shared<InspectArgs>();
  auto* inspect = data_cmd.add_subcommand(
      "inspect", "Summarize a D4RL file or id (hopper-medium-v2), or a Minari directory or id");
  inspect->add_option("target", inspect_args->target, "FILE | D4RL id | Minari dir | Minari id")
      ->required();
  inspect
      ->add_option("--env", inspect_args->env,
                   "environment the dims must match (default: guessed from the name; 'none')")
      ->check(env_to_check());
  inspect->add_flag("--json", inspect_args->json, "print one JSON object");
  inspect->add_flag("--minimal", inspect_args->minimal,
                    "read only what training needs (skip next_observations, infos, metadata)");
  inspect->callback([inspect_args] {
    data::ReadOptions options;
    options.env = inspect_args->env;
    if (inspect_args->minimal) options = options.only_what_training_reads();
    const double rss_before = peak_rss_mib();
    const auto t0 = std::chrono::steady_clock::now();
    data::Dataset ds = load_for_inspect(inspect_args->target, options);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    // What training would evaluate in: the same checks, so a bad env_spec shows here first.
    const rl::DatasetEnv env =
        inspect_args->env == "none" ? rl::DatasetEnv{} : rl::resolve_dataset_env(ds, "");
    nlohmann::json j = describe(ds, env, seconds, rss_before, peak_rss_mib());
    const std::string made_by = data::made_by_minrnn(ds);
    const std::string lookalike = data::d4rl_lookalike_note(inspect_args->target, made_by);
    j["not_the_published_file"] = lookalike.empty() ? nlohmann::json() : nlohmann::json(lookalike);
    j["collected_here"] = !made_by.empty();  // by collect or data synth (the key is older)
    j["made_by"] = made_by;
    if (inspect_args->json) {
      std::printf("%s\n", j.dump(2).c_str());
    } else {
      print_inspect_text(j);
    }
  });
}

void add_synth_command(CLI::App& data_cmd) {
  struct SynthArgs {
    std::string out, env = "hopper";
    int64_t steps = 1000000;
    int episode_len = 1000;
    uint64_t seed = 0;
    bool overwrite = false;
  };
  auto synth_args = std::make_shared<SynthArgs>();
  auto* synth = data_cmd.add_subcommand(
      "synth", "Write a synthetic D4RL-layout file (random data, real layout and sizes)");
  synth->add_option("out", synth_args->out, "output .hdf5 path")
      ->required()
      ->check(path_name("a file name"));
  synth->add_option("--env", synth_args->env, "hopper | halfcheetah | walker2d (sets the dims)")
      ->check(env_family());  // no version: it sets only the dims
  synth->add_option("--steps", synth_args->steps, "number of steps")->check(positive_count());
  synth->add_option("--episode-len", synth_args->episode_len, "steps per episode (timeouts)")
      ->check(positive_count());
  synth->add_option("--seed", synth_args->seed, "random seed")->check(whole_number(0, kMaxEnvSeed));
  // --force as train and collect name it; --overwrite as synth always has.
  synth->add_flag("--force,--overwrite", synth_args->overwrite, "replace an existing file");
  synth->callback([synth_args] {
    const data::EnvInfo& env = data::require_env(synth_args->env);
    // A file no episode of which ends would be refused by every reader (no complete episode).
    if (synth_args->episode_len > synth_args->steps) {
      throw usage_error("data synth", "--episode-len " + std::to_string(synth_args->episode_len) +
                                          " is more than --steps " +
                                          std::to_string(synth_args->steps) +
                                          ": no episode of the file would end");
    }
    const int nq = (env.obs_dim + 1) / 2;  // as synthetic() makes them
    check_transitions_fit("--steps", synth_args->steps, env.obs_dim, env.act_dim, nq, nq);
    // Its folders are made, as collect's --out's: `data synth data/x.hdf5` in a fresh checkout.
    if (const std::string why = io::make_folders_for(synth_args->out); !why.empty())
      throw std::runtime_error("cannot write " + synth_args->out + ": " + why);
    data::Transitions d =
        synthetic(env, synth_args->steps, synth_args->episode_len, synth_args->seed);
    const auto t0 = std::chrono::steady_clock::now();
    data::write_d4rl(synth_args->out, d, {synth_args->overwrite});
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("wrote %s: %lld steps, %s dims %d/%d, in %.2f s\n", synth_args->out.c_str(),
                static_cast<long long>(d.num_steps()), env.name, d.obs_dim, d.act_dim, seconds);
  });
}

}  // namespace

void add_data_command(CLI::App& app) {
  auto* data_cmd = app.add_subcommand(
      "data", "Inspect D4RL/Minari datasets; write synthetic ones; download the published ones");
  data_cmd->require_subcommand(1);
  add_inspect_command(*data_cmd);
  add_synth_command(*data_cmd);
  add_data_download_command(*data_cmd);
}

}  // namespace minrnn::cli
