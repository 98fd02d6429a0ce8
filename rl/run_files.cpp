#include "rl/run_files.h"

#include <unistd.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <sstream>

#include "datasets/episodes.h"
#include "envs/registry.h"
#include "io/atomic_file.h"
#include "io/input_file.h"
#include "io/progress_line.h"
#include "io/python_json.h"
#include "io/writable.h"
#include "rl/run_dir.h"

namespace minrnn::rl {

namespace fs = std::filesystem;

// A run extended before to this very budget: nothing left to train.
TrainResult already_trained(const RunFiles& files, int64_t max_steps, bool quiet) {
  TrainResult result;
  result.step = result.resumed_from = max_steps;
  result.finished = true;
  result.last_loss = last_metrics_row(files.metrics).value_or(MetricsRow{}).loss;
  if (!quiet)
    std::fprintf(stderr, "%s is already trained to max_steps %lld\n", files.dir.c_str(),
                 static_cast<long long>(max_steps));
  return result;
}

namespace {

// The file `data` was read from, absolute: what env.json records and a refused resume names.
std::string data_file(const data::Dataset& data) {
  return fs::absolute(data.source).lexically_normal().string();
}

}  // namespace

// env.json: the environment and reference scores the run is evaluated with, and its data.
void record_env(const RunFiles& files, const std::string& dataset, const data::Dataset& data,
                const DatasetEnv& env, bool quiet) {
  nlohmann::ordered_json j;
  j["env"] = env.env;
  j["env_id"] = env.env_id;
  j["env_version"] = env.env_version;
  j["env_source"] = env.env_source;
  j["ref_min_score"] = env.ref_min_score;
  j["ref_max_score"] = env.ref_max_score;
  j["ref_source"] = env.ref_source;
  j["dataset"] = dataset;
  j["dataset_file"] = data_file(data);
  j["dataset_steps"] = data.data.num_steps();
  j["dataset_fingerprint"] = data.fingerprint;
  // Data minrnn made (collect's, data synth's): the report keeps its score apart from the papers'
  // (they were measured on D4RL's own files). The key's name is older than data synth's mark.
  const std::string made_by = data::made_by_minrnn(data);
  j["dataset_collected_by_minrnn"] = !made_by.empty();
  j["dataset_made_by"] = made_by;
  io::write_file_atomically(files.env.string(), j.dump(2) + "\n");
  if (!quiet && !env.env.empty()) {
    char line[512];
    std::snprintf(line, sizeof line,
                  "env %s (from %s); normalized scores with ref_min %g, ref_max %g (%s)",
                  env.env_id.c_str(), env.env_source.c_str(), env.ref_min_score, env.ref_max_score,
                  env.ref_source.c_str());
    io::ProgressLine::on_stderr().message_once(line);  // a pack's runs share it, mostly
  }
}

OtherData why_other_data(const RunFiles& files, const data::Dataset& data) {
  const std::string env_json = files.env.string();
  const nlohmann::json j = io::read_json_or_null(env_json);
  // Written whole (tmp + rename), so one that does not read is damaged: the check it holds is not
  // skipped unsaid (a walk, 2026-11-29). A run from before env.json existed has none.
  if (!j.is_object() && fs::exists(files.env)) {
    return {env_json +
                ": not a JSON object (a damaged file?), so which data this run trained on cannot "
                "be checked",
            true};
  }
  if (!j.is_object() || !j.contains("dataset_fingerprint") ||
      j["dataset_fingerprint"] == data.fingerprint)
    return {};
  const auto text = [&](const char* key) {
    return j.contains(key) ? j[key].dump() : std::string("?");
  };
  return {env_json + ": this run trained on " + text("dataset_file") + " (" +
              text("dataset_steps") + " steps, fingerprint " + text("dataset_fingerprint") +
              "), but its dataset now reads " + data_file(data) + " (" +
              std::to_string(data.data.num_steps()) + " steps, fingerprint \"" + data.fingerprint +
              "\"): other data",
          false};
}

void check_same_data(const RunFiles& files, const data::Dataset& data) {
  const OtherData other = why_other_data(files, data);
  if (other.why.empty()) return;
  throw std::runtime_error(
      other.why +
      (other.record_damaged
           ? ". Delete it to go on with this run's dataset, or pass --force to train it "
             "anew"
           : ". Point `dataset` at the run's data (a relative path is read from the "
             "working directory), or pass --force to train it anew"));
}

namespace {

// An environment as a message names it: its Gymnasium id and the name it was given (a spec's
// kwargs tell two of one id apart).
std::string env_text(const std::string& env) {
  try {
    return envs::env_spec(env).id + " (env \"" + env + "\")";
  } catch (const std::exception&) {
    return "env \"" + env + "\"";
  }
}

}  // namespace

std::string why_other_env(const RunFiles& files, const Agent& agent,
                          const std::string& checkpoint) {
  const std::string its = checkpoint + " runs in " + env_text(agent.env);
  std::error_code ec;
  if (fs::exists(files.env, ec)) {
    // Written whole (tmp + rename): one that does not read is damaged, not a run of no env.
    const nlohmann::json j = io::read_json_or_null(files.env.string());
    if (!j.is_object() || !j.contains("env") || !j["env"].is_string()) {
      return files.env.string() +
             ": not a JSON object with the run's \"env\" (a damaged file?), so which environment "
             "this run is evaluated in cannot be told; " +
             its;
    }
    const std::string run_env = j["env"].get<std::string>();
    if (run_env == agent.env) return "";
    return its + ", but " + files.env.string() + " says this run is evaluated in " +
           env_text(run_env);
  }
  // A user's own config.yaml beside a downloaded model.pt is no run's (a review, 2026-11-30: a
  // Hydra file was refused as "a damaged file?").
  if (!fs::exists(files.config, ec) || !files.trained_here()) return "";
  TrainConfig stored;
  try {
    stored =
        parse_config(io::read_input_file(files.config.string(), "config"), files.config.string());
  } catch (const std::exception& e) {
    return std::string(e.what()) +
           " (a damaged file?); with no env.json beside it, which environment this run is "
           "evaluated in cannot be told; " +
           its;
  }
  // Key against key, as the checkpoint's config holds them: without `env` the environment is the
  // dataset's, which only reading the data would resolve.
  const bool by_env = !stored.env.empty() && !agent.config.env.empty();
  const std::string key = by_env ? "env" : "dataset";
  const std::string& run = by_env ? stored.env : stored.dataset;
  const std::string& trained = by_env ? agent.config.env : agent.config.dataset;
  if (run == trained) return "";
  return checkpoint + " was trained with " + key + " \"" + trained + "\", but " +
         files.config.string() + " says " + key + " \"" + run + "\" (and the run has no env.json)";
}

void check_metrics_header(const RunFiles& files) {
  // Neither a run's header (step, loss, ...) nor a row (a file written before there was one):
  // damaged, or not a run's curve; kept, the rows went on under it and the report dropped the
  // seed's curve without a word (a walk, 2026-11-29). Its first line alone is read.
  const std::string why =
      io::why_not_of_kind(files.metrics.string(), "a run's curve", [](const std::string& first) {
        return row_step(first) >= 0 || first.rfind("step,loss", 0) == 0;
      });
  if (!why.empty()) {
    throw std::runtime_error(files.metrics.string() +
                             ": its first line is neither the header a run writes (step,loss,...) "
                             "nor a row: move it away to resume (the curve then starts at the "
                             "checkpoint's step)");
  }
}

// Rows past the checkpoint (or any at all, with none: a run killed before its first one) are
// from steps this run does again.
void drop_rows_after(const RunFiles& files, int64_t step) {
  if (fs::exists(files.metrics)) truncate_rows(files.metrics, step, /*header=*/true);
  if (fs::exists(files.evals)) truncate_rows(files.evals, step, /*header=*/true);
  if (!fs::exists(files.metrics))
    io::write_file_atomically(files.metrics, header_line(metrics_columns()));
}

// done.json: what the sweep and the report read to know the run is finished. A Slurm task's
// script reads its `"step": N` with sed (sweep/slurm_script.cpp, trained()): one line.
void write_done(const RunFiles& files, const DatasetEnv& env, int64_t step, double last_loss) {
  std::ostringstream js;
  js << "{\"env_id\": " << nlohmann::json(env.env_id).dump()
     << ", \"env_version\": " << env.env_version << ", \"step\": " << step
     << ", \"last_loss\": " << last_loss << "}\n";
  io::write_file_atomically(files.done, js.str());
}

std::string FailedAttempt::text() const {
  return phase + " exit " + (exit_code >= 0 ? std::to_string(exit_code) : std::string("?"));
}

void write_failed(const RunFiles& files, const FailedAttempt& failed) {
  const nlohmann::json j = {
      {"phase", failed.phase}, {"exit_code", failed.exit_code}, {"pid", ::getpid()}};
  io::write_file_atomically(files.failed.string(), j.dump(2) + "\n");
}

std::optional<FailedAttempt> read_failed(const RunFiles& files) {
  const nlohmann::json j = io::read_json_or_null(files.failed.string());
  if (!j.is_object()) return std::nullopt;
  FailedAttempt failed;
  if (const auto phase = j.find("phase"); phase != j.end() && phase->is_string())
    failed.phase = phase->get<std::string>();
  const auto code = j.find("exit_code");
  if (code != j.end() && code->is_number_integer() && code->get<int64_t>() >= 0 &&
      code->get<int64_t>() <= 255)
    failed.exit_code = code->get<int>();
  return failed;
}

int64_t finished_step(const RunFiles& files) {
  const nlohmann::json done = io::read_json_or_null(files.done.string());
  return done.is_object() && done.contains("step") && done["step"].is_number_integer()
             ? done["step"].get<int64_t>()
             : -1;
}

}  // namespace minrnn::rl
