#include "tools/eval_destination.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "io/python_json.h"
#include "io/writable.h"
#include "rl/run_dir.h"
#include "rl/run_files.h"
#include "tools/commands.h"

namespace minrnn::cli {

namespace fs = std::filesystem;

fs::path eval_folder(const std::string& run) {
  return fs::is_directory(run) ? fs::path(run) : fs::path(run).parent_path();
}

std::string not_the_result(const std::string& run, int64_t step) {
  const fs::path file(run);
  if (!fs::is_directory(run) && file.filename() != rl::RunFiles("").checkpoint.filename())
    return file.stem().string();
  if (rl::finished_step(rl::RunFiles(eval_folder(run).string())) != step)
    return "step" + std::to_string(step);
  return "";
}

std::string adhoc_name(EvalGiven given, const std::string& partial) {
  if (!partial.empty()) given.insert(given.begin(), {"", partial});
  std::string name = "eval";
  for (const auto& [key, value] : given) name += "-" + key + value;
  for (char& c : name)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_')) c = '_';
  return name + ".json";
}

namespace {

bool is_evaluation(const nlohmann::json& j) {
  return j.is_object() && j.contains("mean_normalized") && j.contains("returns");
}

// Whether `name` is one adhoc_name makes: "eval-" and then what it begins with, an option given,
// an option a result lacks (options_missing_from) or why the episodes are not the run's result
// (not_the_result). Each part with the value it is followed by (a number, a mode, an engine): not a
// name of the user's own (the demo's eval-video.json; a review, 2026-11-30: the part alone took a
// user's eval-mode-comparison.json).
bool named_by_settings(const std::string& name) {
  const std::string prefix = "eval-";
  if (name.rfind(prefix, 0) != 0 || fs::path(name).extension() != ".json") return false;
  const std::string rest = name.substr(prefix.size());
  const auto starts = [&](const std::string& part, const std::string& then) {
    if (rest.compare(0, part.size() + then.size(), part + then) != 0) return false;
    const size_t at = part.size() + then.size();
    return !then.empty() ||
           (at < rest.size() &&
            (std::isdigit(static_cast<unsigned char>(rest[at])) || rest[at] == '-'));
  };
  for (const char* number : {"episodes", "target", "seed", "train_step", "step", "replaced-step"})
    if (starts(number, "")) return true;
  for (const char* value : {"auto", "window", "streaming"})
    if (starts("mode", value)) return true;
  for (const char* value : {"packed", "torch"})
    if (starts("engine", value)) return true;
  return starts("checkpoint", "-step");
}

// The settings of this evaluation that `result` (a run's eval.json) was made without, as the
// options that give them: a sweep's `--episodes 30` result is kept from a plain eval's 10. None
// where it has them all, or where it is no evaluation (why_not_destination refuses it).
EvalGiven options_missing_from(const fs::path& result, const eval::RolloutOptions& ro,
                               rl::PolicyEngine engine, int64_t step) {
  const nlohmann::json j = io::read_json_or_null(result.string());
  if (!is_evaluation(j)) return {};
  const auto differs = [&](const char* key, const nlohmann::json& mine) {
    return !j.contains(key) || j[key] != mine;
  };
  EvalGiven apart;
  // Another checkpoint's (a file put there by hand; files from before train_step was written are
  // taken as this one's). Not "step": `--extend` keeps a finished run's result as
  // eval-step<N>.json.
  if (j.contains("train_step") && j["train_step"] != step)
    apart.push_back({"train_step", std::to_string(step)});
  if (differs("episodes", ro.episodes)) apart.push_back({"episodes", std::to_string(ro.episodes)});
  if (differs("seed", ro.seed)) apart.push_back({"seed", std::to_string(ro.seed)});
  if (differs("target_return", ro.target_return)) {
    char target[32];
    std::snprintf(target, sizeof target, "%g", ro.target_return);
    apart.push_back({"target", target});
  }
  const std::string mode = eval::eval_mode_name(ro.mode);
  if (differs("mode_requested", mode)) apart.push_back({"mode", mode});
  // The engines compute one function but round apart (a GPU sweep's torch-engine result is kept
  // from a plain eval on a CPU, which takes the packed one).
  const std::string engine_name = rl::policy_engine_name(engine);
  if (differs("engine", engine_name)) apart.push_back({"engine", engine_name});
  return apart;
}

}  // namespace

std::string why_not_an_evaluation(const std::string& path) {
  std::error_code ec;
  if (!fs::exists(path, ec) || is_evaluation(io::read_json_or_null(path))) return "";
  return "exists and is not an evaluation's JSON: not replaced";
}

// A run's own result (this run's or another's: an eval.json beside a checkpoint or done.json) is
// that run's plain `minrnn eval` to write, there or not yet; and its evaluations named by their
// settings hold those settings: another run's episodes, or other settings, under such a name would
// read later as the run's score or as what the name says.
void check_out_file(const std::string& out, const fs::path& result, const std::string& own_name) {
  const auto refuse = [&](const std::string& why) {
    throw usage_error("eval", "--out " + out + ": " + why);
  };
  if (out.empty()) refuse("expected a file name");
  if (const std::string why = io::why_unwritable(out, /*make_folders=*/false); !why.empty())
    refuse("cannot write it: " + why);
  std::error_code ec;
  const fs::path folder = fs::absolute(out, ec).parent_path();
  const rl::RunFiles there(folder);
  const bool a_result = fs::path(out).filename() == there.result.filename() && there.holds_run();
  const fs::path out_path = fs::weakly_canonical(out, ec);
  const bool this_runs = !ec && out_path == fs::weakly_canonical(result, ec) && !ec;
  if (a_result || this_runs) {
    refuse(fs::exists(there.done, ec)
               ? "is a run's result (eval.json): `minrnn eval " + folder.string() +
                     "` writes it (with --replace over an earlier one), not --out"
               : "is a run's result (eval.json), which its evaluation writes once the run has "
                 "finished: name another file");
  }
  const std::string name = fs::path(out).filename().string();
  const std::string named = fs::path(out).parent_path().string();
  const bool own_folder =
      fs::weakly_canonical(folder, ec) == fs::weakly_canonical(result.parent_path(), ec);
  // Another run's files of a run's names (a walk, 2026-11-29).
  if (there.holds_run() && !own_folder && rl::is_run_output(name)) {
    refuse("is a name of " + (named.empty() ? std::string(".") : named) +
           "'s files (its own evaluations, named by their settings), and this is another run's "
           "evaluation: name another file");
  }
  // This run's, named by other settings than these (a walk, 2026-11-29: --episodes 1 into
  // eval-episodes2.json).
  if (own_folder && named_by_settings(name) && name != own_name) {
    refuse(
        "is the name of this run's evaluation with the settings it says, and these settings' "
        "is " +
        own_name + ": name that or another file");
  }
  if (const std::string why = why_not_an_evaluation(out); !why.empty())
    refuse(why + " (name another file)");
}

EvalOutput choose_output(EvalGiven given, const std::string& partial, bool replace,
                         const fs::path& result, const eval::RolloutOptions& ro,
                         rl::PolicyEngine engine, int64_t step) {
  bool result_kept = false;
  if (given.empty() && partial.empty() && !replace && fs::exists(result)) {
    given = options_missing_from(result, ro, engine, step);
    result_kept = !given.empty();
  }
  if ((given.empty() && partial.empty()) || (replace && partial.empty()))
    return {result.string(), result_kept};
  // An ad-hoc file of other settings is kept too (a finished run's result kept under its step
  // by `--extend`, eval-step200.json, from a plain eval of that checkpoint): the name grows by
  // the settings apart.
  if (const fs::path adhoc = result.parent_path() / adhoc_name(given, partial); fs::exists(adhoc)) {
    for (const auto& setting : options_missing_from(adhoc, ro, engine, step)) {
      const bool named = std::any_of(given.begin(), given.end(),
                                     [&](const auto& g) { return g.first == setting.first; });
      if (!named) given.push_back(setting);
    }
  }
  return {(result.parent_path() / adhoc_name(given, partial)).string(), result_kept};
}

std::string why_not_destination(const std::string& path) {
  if (const std::string why = io::why_unwritable(path, /*make_folders=*/false); !why.empty())
    return "cannot write it: " + why;
  return why_not_an_evaluation(path);
}

}  // namespace minrnn::cli
