// load_dataset: one entry point from an id or a path to a validated, episode-split Dataset.
#include <filesystem>
#include <stdexcept>

#include "datasets/env_table.h"
#include "datasets/episodes.h"
#include "datasets/minari.h"

namespace minrnn::data {

Dataset load_dataset(const std::string& id_or_path, const ReadOptions& options) {
  Dataset ds;
  std::string name_hint;  // where the environment's name may appear
  if (is_minari_reference(id_or_path)) {
    const std::string dir = resolve_minari_dir(id_or_path);
    MinariInfo info;
    ds.data = read_minari(dir, &info, options);
    ds.source = (std::filesystem::path(dir) / "data" / "main_data.hdf5").string();
    ds.format = "minari";
    const bool eval_spec = !info.eval_env_spec.empty();
    ds.env_spec = eval_spec ? info.eval_env_spec : info.env_spec;
    ds.env_spec_field = ds.env_spec.empty() ? "" : eval_spec ? "eval_env_spec" : "env_spec";
    const std::string& spec_id = eval_spec ? info.eval_env_id : info.env_id;
    name_hint = spec_id.empty() ? info.dataset_id : spec_id;
    if (info.has_ref_scores) {
      ds.ref_min_return = info.ref_min_score;
      ds.ref_max_return = info.ref_max_score;
      ds.has_ref_returns = true;
      ds.ref_source = "metadata.json ref_min_score/ref_max_score";
    }
    ds.minari = info;
  } else {
    ds.source = resolve_d4rl_path(id_or_path);
    ds.format = "d4rl";
    ds.data = read_d4rl(ds.source, options);
    name_hint = std::filesystem::path(ds.source).filename().string();
    // A file `minrnn collect` wrote records the env it was made in (Gymnasium v5, options).
    const D4rlMadeHere made = read_d4rl_made_here(ds.source);
    ds.env_spec = made.env_spec;
    ds.synthetic = made.synthetic;
    if (!ds.env_spec.empty()) ds.env_spec_field = "metadata/env_spec";
  }
  const bool asked = !options.env.empty() && options.env != "none";
  const EnvInfo* env = asked ? find_env(options.env) : guess_env_from_name(name_hint);
  ds.env_source = asked                   ? "the env asked for"
                  : ds.format == "minari" ? "the Minari dataset's id"
                                          : "the file's name";
  if (env == nullptr) {
    env = guess_env_from_dims(ds.data.obs_dim, ds.data.act_dim);
    ds.env_from_widths = env != nullptr;
    ds.env_source = "its widths (obs " + std::to_string(ds.data.obs_dim) + ", act " +
                    std::to_string(ds.data.act_dim) + ")";
  }
  const int x_column = ds.minari.observes_x ? 1 : 0;  // a Minari env that observes x
  if (env == nullptr || env->obs_dim + x_column != ds.data.obs_dim ||
      env->act_dim != ds.data.act_dim) {
    if (env != nullptr && !asked && ds.format == "d4rl") {
      ds.name_env_conflict =
          dims_apart(ds.source, ds.data.obs_dim, ds.data.act_dim, *env, ds.env_source);
    }
    ds.env_source.clear();
    ds.env_from_widths = false;
  } else {
    ds.env = env->name;
    if (!ds.has_ref_returns) {
      ds.ref_min_return = env->ref_min_return;
      ds.ref_max_return = env->ref_max_return;
      ds.has_ref_returns = ds.ref_from_table = true;
      ds.ref_source = std::string("D4RL table (") + env->name + ")";
    }
  }
  ds.index = split_episodes(ds.data, ds.source);
  ds.fingerprint = ds.data.fingerprint();
  if (!ds.env.empty() || ds.minari.max_episode_steps > 0) {
    ds.max_episode_steps =
        ds.minari.max_episode_steps > 0 ? ds.minari.max_episode_steps : env->max_episode_steps;
    for (const Episode& e : ds.index.episodes) {
      if (e.length() > ds.max_episode_steps) ++ds.episodes_over_time_limit;
    }
  }
  return ds;
}

}  // namespace minrnn::data
