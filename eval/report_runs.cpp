// The runs a report reads (eval/report.h): finished and scored, still training, failed, and what
// each was trained and evaluated with, so that a cell says when its seeds differ in more than
// their seed.
#include <algorithm>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <stdexcept>
#include <tuple>

#include "eval/csv.h"
#include "eval/report.h"
#include "eval/sweep_runs.h"
#include "io/input_file.h"
#include "io/python_json.h"
#include "rl/config.h"
#include "rl/run_dir.h"
#include "rl/run_files.h"

namespace minrnn::eval {
namespace {

namespace fs = std::filesystem;

// Settings keys beside config.yaml's: eval.json's ("eval episodes", ...) and the data's.
const std::string kEvalPrefix = "eval ";
const std::string kDataFingerprint = "data fingerprint";

// Config keys that leave what a run learns and how it is scored alone (where it ran, how often it
// logged), or that the report has a column of its own for (the budget: steps), or that eval.json
// says better (the episodes and target return the final evaluation used).
const std::set<std::string> kNotSettings = {"seed",          "device",           "log_every",
                                            "eval_every",    "checkpoint_every", "max_steps",
                                            "eval_episodes", "target_return"};

// What run `dir` was trained with, as training_settings, and evaluated with (its eval.json `e`'s
// episodes, seed, target return, mode, environment and reference scores, as "eval <key>").
std::map<std::string, std::string> run_settings(const fs::path& dir, const nlohmann::json& e) {
  std::map<std::string, std::string> settings = training_settings(dir);
  for (const char* key :
       {"episodes", "seed", "target_return", "mode", "env_id", "ref_min_score", "ref_max_score"}) {
    if (e.is_object() && e.contains(key)) settings[kEvalPrefix + key] = e[key].dump();
  }
  return settings;
}

// Why the finished run in `dir` has no score for the table ("" when it has one), naming its
// eval.json.
std::string why_unscored(const fs::path& dir) {
  const FinalEvaluation e = read_final_evaluation(dir);
  if (e.unreadable.empty()) return "";
  return rl::RunFiles(dir).result.string() + ": " + e.unreadable + " (" + kResultAwayAdvice + ")";
}

}  // namespace

std::map<std::string, std::string> training_settings(const fs::path& run_dir,
                                                     bool scored_during_training) {
  std::map<std::string, std::string> settings;
  const fs::path file = rl::RunFiles(run_dir).config;
  try {
    const rl::TrainConfig config =
        rl::parse_config(io::read_input_file(file.string(), "config"), file.string());
    for (const auto& [key, value] : rl::config_entries(config)) {
      const bool scores = key == "eval_episodes" || key == "target_return";
      if (kNotSettings.count(key) == 0 || (scored_during_training && scores)) settings[key] = value;
    }
  } catch (const std::exception&) {
    // The run trained, but says not with what.
    std::error_code ec;
    settings[kConfigFileKey] = fs::exists(file, ec) ? "unreadable" : "missing";
  }
  // The data itself: one path may have held other data for another run.
  const nlohmann::json env = io::read_json_or_null(rl::RunFiles(run_dir).env.string());
  if (env.is_object() && env.contains("dataset_fingerprint")) {
    const nlohmann::json& f = env["dataset_fingerprint"];
    settings[kDataFingerprint] = f.is_string() ? f.get<std::string>() : f.dump();
  }
  return settings;
}

std::vector<ListedRun> list_report_runs(const std::string& sweep_dir) {
  std::vector<ListedRun> listed;
  for (RunDir& run : list_run_dirs(sweep_dir)) {
    std::string why = why_misplaced(run);
    listed.push_back({std::move(run), std::move(why)});
  }
  return listed;
}

std::vector<RunScore> collect_scores(const std::vector<ListedRun>& listed) {
  std::vector<RunScore> runs;
  for (const auto& [run, misplaced] : listed) {
    // A result is the evaluation of a finished run: an eval.json beside no done.json is of a run
    // still training (collect_unfinished lists it), one beside failed.json is of an attempt
    // before the one that failed (collect_failed lists it).
    const rl::RunFiles files(run.dir);
    if (!files.has_result() || !misplaced.empty()) continue;  // collect_failed lists it
    const fs::path& file = files.result;
    const FinalEvaluation e = read_final_evaluation(run.dir);
    if (!e.unreadable.empty()) continue;  // collect_failed lists it (why_unscored)
    RunScore r;
    r.dataset = run.dataset;
    r.backbone = run.backbone;
    r.run_dir = run.dir.string();
    r.seed = run.seed;
    r.normalized = e.score;
    r.train_step = e.train_step;
    const nlohmann::json j = io::read_json_or_null(file.string());
    r.ref_source = j.is_object() ? j.value("ref_source", std::string()) : "";
    r.env_version = j.is_object() ? j.value("env_version", 0) : 0;
    r.settings = run_settings(run.dir, j);
    const nlohmann::json env = io::read_json_or_null(files.env.string());
    r.made_here = env.is_object() && env.value("dataset_collected_by_minrnn", false);
    runs.push_back(r);
  }
  return runs;
}

std::vector<RunProgress> collect_unfinished(const std::vector<ListedRun>& listed) {
  std::vector<RunProgress> runs;
  for (const auto& [run, misplaced] : listed) {
    const fs::path& dir = run.dir;
    const rl::RunFiles files(dir);
    if (files.has_result() || fs::exists(files.failed) || !misplaced.empty()) continue;
    const auto last = rl::last_metrics_row(files.metrics);
    if (!last) continue;
    RunProgress r{run.dataset, run.backbone, dir.string(), run.seed};
    r.step = last->step;
    runs.push_back(r);
  }
  return runs;
}

std::vector<RunFailure> collect_failed(const std::vector<ListedRun>& listed) {
  std::vector<RunFailure> runs;
  for (const auto& [run, misplaced] : listed) {
    RunFailure f;
    f.dataset = run.dataset;
    f.backbone = run.backbone;
    f.run_dir = run.dir.string();
    f.seed = run.seed;
    const rl::RunFiles files(run.dir);
    if (!misplaced.empty()) {
      f.unreadable = misplaced;
      f.phase = kMisplacedPhase;
    } else if (fs::exists(files.failed)) {
      if (const auto failed = rl::read_failed(files)) {
        f.phase = failed->phase;
        f.exit_code = failed->exit_code;
      }
    } else if (files.has_result()) {
      f.unreadable = why_unscored(run.dir);
      if (f.unreadable.empty()) continue;  // a result: collect_scores scores it
      f.phase = "result";
    } else {
      continue;
    }
    runs.push_back(f);
  }
  return runs;
}

void set_aside_shorter_budgets(std::vector<RunScore>* runs, std::vector<RunProgress>* in_progress) {
  std::map<std::pair<std::string, std::string>, int64_t> budget;
  for (const auto& r : *runs) {
    int64_t& b = budget[{r.dataset, r.backbone}];
    b = std::max(b, r.train_step);
  }
  std::vector<RunScore> kept;
  for (const auto& r : *runs) {
    if (r.train_step >= budget.at({r.dataset, r.backbone})) {
      kept.push_back(r);
      continue;
    }
    in_progress->push_back(
        {r.dataset, r.backbone, r.run_dir, r.seed, r.train_step, r.normalized, r.train_step, true});
  }
  *runs = std::move(kept);
  std::sort(in_progress->begin(), in_progress->end(), [](const auto& a, const auto& b) {
    return std::tie(a.dataset, a.backbone, a.seed) < std::tie(b.dataset, b.backbone, b.seed);
  });
}

std::optional<std::string> compared_setting(const std::map<std::string, std::string>& settings,
                                            const std::string& key) {
  const auto it = settings.find(key);
  if (it != settings.end()) return it->second;
  if (key == kConfigFileKey) return "read";
  if (settings.count(kConfigFileKey) == 0) return "(none)";  // a key of a newer minrnn
  const std::vector<std::string> config_keys = rl::config_keys();
  const bool config_key =
      std::find(config_keys.begin(), config_keys.end(), key) != config_keys.end();
  return config_key ? std::nullopt : std::optional<std::string>("(none)");
}

std::string settings_apart(const std::vector<const RunScore*>& seeds) {
  std::set<std::string> keys;
  for (const RunScore* r : seeds)
    for (const auto& kv : r->settings) keys.insert(kv.first);
  std::string apart;
  for (const std::string& key : keys) {
    std::vector<std::string> values;
    for (const RunScore* r : seeds) {
      const std::optional<std::string> v = compared_setting(r->settings, key);
      if (v && std::find(values.begin(), values.end(), *v) == values.end()) values.push_back(*v);
    }
    if (values.size() < 2) continue;
    apart += (apart.empty() ? "" : "; ") + key + " ";
    for (size_t i = 0; i < values.size(); ++i) apart += (i ? " / " : "") + values[i];
  }
  return apart;
}

}  // namespace minrnn::eval
