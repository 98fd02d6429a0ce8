#include "eval/eval_result.h"

#include <nlohmann/json.hpp>

#include "envs/registry.h"
#include "infer/policy.h"
#include "io/atomic_file.h"

namespace minrnn::eval {

void write_eval_json(const std::string& path, const rl::Agent& agent, const RolloutOptions& opt,
                     const RolloutResult& r) {
  nlohmann::json j;
  // The environment the episodes ran in, and the scores they were normalized with.
  const envs::EnvSpec spec = envs::env_spec(agent.env);
  j["env"] = agent.env;
  j["env_id"] = spec.id;
  j["env_version"] = spec.version;
  const bool own_refs = agent.ref_max_score > agent.ref_min_score;
  j["ref_min_score"] = own_refs ? agent.ref_min_score : spec.ref_min_score;
  j["ref_max_score"] = own_refs ? agent.ref_max_score : spec.ref_max_score;
  j["ref_source"] =
      own_refs && !agent.ref_source.empty() ? agent.ref_source : "D4RL table (" + spec.name + ")";
  j["dataset"] = agent.config.dataset;
  j["backbone"] = agent.config.backbone;
  j["mode"] = eval_mode_name(r.mode);
  j["mode_requested"] = eval_mode_name(opt.mode);
  j["engine"] = rl::policy_engine_name(r.engine);
  j["threads"] = r.threads;
  j["context_len"] = agent.config.context_len;
  j["train_step"] = agent.step;
  j["episodes"] = opt.episodes;
  j["seed"] = opt.seed;
  j["target_return"] = opt.target_return;
  j["return_scale"] = agent.config.return_scale;
  j["returns"] = r.returns;
  j["normalized_scores"] = r.normalized;
  j["lengths"] = r.lengths;
  j["mujoco_warnings"] = r.mujoco_warnings;
  j["mean_return"] = r.mean_return;
  j["std_return"] = r.std_return;
  j["mean_normalized"] = r.mean_normalized;
  j["std_normalized"] = r.std_normalized;
  j["seconds"] = r.seconds;
  io::write_file_atomically(path, j.dump(2) + "\n");
}

}  // namespace minrnn::eval
