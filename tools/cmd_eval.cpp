// `minrnn eval RUN [--episodes N] [--target-return R] [--seed S] [--mode auto|streaming|window]
//  [--engine auto|packed|torch] [--replace | --out FILE]`: rolls the run's checkpoint out and
//  writes its returns and D4RL
// normalized scores as JSON.
//
// <RUN>/eval.json is the run's result, the file Table 3 reads. Only the standard evaluation (none
// of the options that change the result given) or --replace writes it, and only of the run's own
// finished checkpoint (RUN or RUN/checkpoint.pt, with done.json beside it). An ad-hoc one (say
// --episodes 3 --target-return 9000) writes <RUN>/eval-episodes3-target9000.json instead; another
// checkpoint file (an --extend's checkpoint-step10000.pt) or a run still training writes
// <RUN>/eval-checkpoint-step10000.json or <RUN>/eval-step4000.json. The standard evaluation keeps
// an eval.json made with other settings (a sweep's --episodes 30) and writes beside it
// (eval-episodes10.json); --out replaces only an evaluation's JSON, never the run's. So trying
// something can never replace a reported number.
#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include <unistd.h>

#include "envs/registry.h"
#include "eval/rollout.h"
#include "eval/stats.h"
#include "eval/sweep_runs.h"
#include "io/file_identity.h"
#include "io/progress_line.h"
#include "io/progress_pace.h"
#include "io/python_json.h"
#include "io/writable.h"
#include "ops/device.h"
#include "rl/evaluation_progress.h"
#include "rl/run_dir.h"
#include "rl/run_files.h"
#include "rl/trainer.h"
#include "tools/commands.h"

namespace minrnn::cli {
namespace {

// A progress line on stderr every io::ProgressLine::period().
std::function<void(int64_t, int64_t, int)> progress_line(int episodes) {
  io::ProgressLine& line = io::ProgressLine::on_stderr();
  auto progress = std::make_shared<rl::EvaluationProgress>(episodes);
  auto pace = std::make_shared<io::ProgressPace>(line);
  bool closed = false;
  return [=, &line](int64_t steps, int64_t most, int ended) mutable {
    progress->record(steps, most, ended);
    const bool end = progress->finished();
    if (closed || !pace->due(end)) return;
    line.update("eval: " + progress->text());
    if (end) line.close(), closed = true;
  };
}

namespace fs = std::filesystem;
using Given = std::vector<std::pair<std::string, std::string>>;  // option name, value

// The folder that `run` (a run dir or a checkpoint file) keeps its evaluations in.
fs::path run_folder(const std::string& run) {
  return fs::is_directory(run) ? fs::path(run) : fs::path(run).parent_path();
}

// Why an evaluation of `run` (a run dir or a checkpoint file) cannot be the run's result, as a
// name part ("checkpoint-step10000", "step4000"); "" when it can: the run's own checkpoint of a
// run finished at `step` (a done.json of another step: the run was extended since).
std::string not_the_result(const std::string& run, int64_t step) {
  const fs::path file(run);
  if (!fs::is_directory(run) && file.filename() != rl::RunFiles("").checkpoint.filename())
    return file.stem().string();
  if (rl::finished_step(rl::RunFiles(run_folder(run).string())) != step)
    return "step" + std::to_string(step);
  return "";
}

// The checkpoint file `run` names, as the file system tells it apart: a checkpoint is replaced by
// a rename (a `train --force`, an `--extend`'s next save), never written in place.
io::FileIdentity checkpoint_identity(const std::string& run) {
  const fs::path file = fs::is_directory(run) ? rl::RunFiles(run).checkpoint : fs::path(run);
  io::FileIdentity id;
  io::identity_of(file.string(), &id);
  return id;
}

// "eval-episodes3-seed5.json": the options given, so ad-hoc results of different settings coexist.
std::string adhoc_name(const Given& given) {
  std::string name = "eval";
  for (const auto& [key, value] : given) name += "-" + key + value;
  for (char& c : name)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_')) c = '_';
  return name + ".json";
}

// The settings of this evaluation that `result` (a run's eval.json) was made without, as the
// options that give them: a sweep's `--episodes 30` result is kept from a plain eval's 10. None
// where it has them all, or where it cannot be read (nothing there to keep).
Given settings_apart(const fs::path& result, const eval::RolloutOptions& ro,
                     const eval::RolloutResult& r, int64_t step) {
  const nlohmann::json j = io::read_json_or_null(result.string());
  if (!j.is_object()) return {};
  const auto differs = [&](const char* key, const nlohmann::json& mine) {
    return !j.contains(key) || j[key] != mine;
  };
  Given apart;
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
  const std::string engine = rl::policy_engine_name(r.engine);
  if (differs("engine", engine)) apart.push_back({"engine", engine});
  return apart;
}

// --out names a file of the user's choosing, in a folder that is there to write in: an
// evaluation's JSON there is replaced, anything else (a checkpoint, a config) refused before the
// episodes run, and a run's own result (this run's or another's: an eval.json beside a checkpoint
// or done.json) is that run's plain `minrnn eval` to write, there or not yet: another run's
// episodes, or other settings, under that name would read later as the run's score.
void check_out_file(const std::string& out, const fs::path& result) {
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
  // Another run's eval-<settings>.json files too: plain `minrnn eval`s of that run name them by
  // their settings, and this run's episodes there would read as that one's (a walk, 2026-11-29).
  const bool other_run = there.holds_run() && fs::weakly_canonical(folder, ec) !=
                                                  fs::weakly_canonical(result.parent_path(), ec);
  if (other_run && rl::is_run_output(fs::path(out).filename().string())) {
    const std::string named = fs::path(out).parent_path().string();
    refuse("is a name of " + (named.empty() ? std::string(".") : named) +
           "'s files (its own evaluations, named by their settings), and this is another run's "
           "evaluation: name another file");
  }
  if (!fs::exists(out, ec)) return;
  const nlohmann::json j = io::read_json_or_null(out);
  if (!j.is_object() || !j.contains("mean_normalized") || !j.contains("returns"))
    refuse("exists and is not an evaluation's JSON: not replaced (name another file)");
}

struct EvalArgs {
  std::string run;
  int episodes = 10;
  double target_return = 0;  // when given (else the config's)
  int64_t seed = eval::kFinalEvaluationSeed;
  std::string device = "auto";
  std::string video;
  std::string mode = "auto";
  std::string engine = "auto";
  std::string out;
  bool out_given = false;
  int threads = 0;  // 0: LibTorch's intra-op threads
  bool replace = false;
};

// Where an evaluation's JSON goes, and whether the run's result was kept for being of other
// settings.
struct EvalOutput {
  std::string path;
  bool result_kept = false;
};

// The run's result (eval.json) for the standard evaluation (or --replace) of a finished run's own
// checkpoint; else a name from the options `given` and, where the result or an ad-hoc file of
// that name is there already, the settings it was made with apart (so neither is replaced).
// `partial`: why the episodes are not of the run's own checkpoint ("" when they are).
EvalOutput choose_output(const EvalArgs& a, Given given, const std::string& partial,
                         const fs::path& result, const eval::RolloutOptions& ro,
                         const eval::RolloutResult& r, int64_t step) {
  if (a.out_given) return {a.out, false};
  if (!partial.empty()) given.insert(given.begin(), {"", partial});
  bool result_kept = false;
  if (given.empty() && !a.replace && fs::exists(result)) {
    given = settings_apart(result, ro, r, step);
    result_kept = !given.empty();
  }
  if (given.empty() || (a.replace && partial.empty())) return {result.string(), result_kept};
  // An ad-hoc file of other settings is kept too (a finished run's result kept under its step
  // by `--extend`, eval-step200.json, from a plain eval of that checkpoint): the name grows by
  // the settings apart.
  if (const fs::path adhoc = result.parent_path() / adhoc_name(given); fs::exists(adhoc)) {
    for (const auto& setting : settings_apart(adhoc, ro, r, step)) {
      const bool named = std::any_of(given.begin(), given.end(),
                                     [&](const auto& g) { return g.first == setting.first; });
      if (!named) given.push_back(setting);
    }
  }
  return {(result.parent_path() / adhoc_name(given)).string(), result_kept};
}

// Rolls `a.run` out and writes its JSON: eval.json only for the standard evaluation (or
// --replace) of a finished run's own checkpoint, else a name from `given`, the options that change
// the result (see the top).
void run_eval(const EvalArgs& a, Given given, bool target_given) {
  const core::DeviceChoice device = core::resolve_device(a.device, "--device");
  const io::FileIdentity loaded = checkpoint_identity(a.run);
  rl::Agent agent = rl::load_agent(a.run, device.device);
  // Said once the run has loaded: a run that is not there is the one line printed.
  core::say_choice(a.device, device);
  if (a.replace && !not_the_result(a.run, agent.step).empty()) {
    throw usage_error("eval", "--replace writes the run's result (eval.json), but " + a.run +
                                  " is not a finished run's own checkpoint (checkpoint.pt beside "
                                  "done.json); evaluate it without --replace");
  }
  const fs::path result = rl::RunFiles(run_folder(a.run)).result;
  if (a.out_given) check_out_file(a.out, result);
  eval::RolloutOptions ro;
  ro.episodes = a.episodes;
  ro.target_return = target_given ? a.target_return : agent.config.target_return;
  ro.seed = a.seed;
  ro.video_dir = a.video;
  ro.mode = eval::parse_eval_mode(a.mode);
  if (ro.mode == eval::EvalMode::kStreaming) {
    try {
      eval::resolve_eval_mode(ro.mode, agent);
    } catch (const std::invalid_argument& e) {
      throw usage_error("eval", "--mode " + a.mode + ": " + e.what());
    }
  }
  // Last of the checks: it makes the folder.
  if (!a.video.empty()) {
    if (const std::string why = eval::make_video_dir(a.video); !why.empty())
      throw usage_error("eval", "--video " + why);
  }
  ro.engine = rl::parse_policy_engine(a.engine);
  ro.threads = a.threads;
  ro.on_step = progress_line(ro.episodes);
  const auto r = eval::rollout(agent, ro);
  // Asked again: a `train --extend` may have moved the run on while its episodes ran, or its
  // checkpoint been replaced (the run trained on, or `train --force` retrained it).
  const bool replaced = checkpoint_identity(a.run) != loaded;
  const std::string partial =
      replaced ? "replaced-step" + std::to_string(agent.step) : not_the_result(a.run, agent.step);
  const EvalOutput output = choose_output(a, std::move(given), partial, result, ro, r, agent.step);
  const std::string& out = output.path;
  eval::write_eval_json(out, agent, ro, r);
  std::printf(
      "%s %s step %lld (%s, %s engine): return %s, normalized %s over %d episode%s "
      "(%.1fs) → %s\n",
      envs::env_spec(agent.env).id.c_str(), agent.config.backbone.c_str(),
      static_cast<long long>(agent.step), eval::eval_mode_name(r.mode),
      rl::policy_engine_name(r.engine),
      eval::mean_std_text(r.mean_return, r.std_return, ro.episodes).c_str(),
      eval::mean_std_text(r.mean_normalized, r.std_normalized, ro.episodes).c_str(), ro.episodes,
      ro.episodes == 1 ? "" : "s", r.seconds, out.c_str());
  if (output.result_kept) {
    std::printf(
        "%s, the run's result, was made with other settings: kept (--replace replaces it)\n",
        result.string().c_str());
  }
  if (replaced) {
    std::printf(
        "the run's checkpoint was replaced while its episodes ran (the run trained on, or "
        "train --force retrained it): this evaluation of the one it loaded is not the run's "
        "result\n");
  } else if (a.replace && !partial.empty()) {
    std::printf("the run moved on from step %lld while it was evaluated: %s is kept\n",
                static_cast<long long>(agent.step), result.string().c_str());
  }
  if (!r.video_gif.empty()) std::printf("video of episode 0: %s\n", r.video_gif.c_str());
  const auto warned = std::count_if(r.mujoco_warnings.begin(), r.mujoco_warnings.end(),
                                    [](int n) { return n > 0; });
  if (warned > 0) {
    std::printf(
        "note: MuJoCo warned in %lld of %d episodes (an unstable simulation it reset and "
        "went on from; mujoco_warnings in the JSON): their returns are not the env's own\n",
        static_cast<long long>(warned), ro.episodes);
  }
}

}  // namespace

void add_eval_command(CLI::App& app) {
  auto args = std::make_shared<EvalArgs>();
  auto* sub = app.add_subcommand(
      "eval",
      "roll a trained agent out; writes RUN/eval.json (the run's result) when none of the options "
      "changing the result is given (even at its default) or with --replace, else "
      "RUN/eval-<options>.json");
  sub->add_option("run", args->run, "run directory (or checkpoint file)")->required();
  // The options that change the result: given any, the evaluation is ad-hoc (see the top).
  auto* episodes = sub->add_option("--episodes", args->episodes, "episodes (default 10)")
                       ->check(whole_number(1, rl::kMaxEvalEpisodes));
  auto* target = sub->add_option("--target-return", args->target_return,
                                 "raw target return (default: config's)")
                     ->check(finite_float());
  auto* seed = sub->add_option("--seed", args->seed, "episode i uses env seed S + i (default 0)")
                   ->check(whole_number(0, kMaxEnvSeed));
  sub->add_option("--device", args->device,
                  "auto (CUDA when usable, else CPU; default), cpu or cuda[:N]");
  auto* mode =
      sub->add_option("--mode", args->mode,
                      "auto (project default: window for the Transformer, " +
                          std::string(eval::eval_mode_name(eval::kRecurrentDefault)) +
                          " for recurrent backbones), streaming (recurrent only: state carried "
                          "through the episode) or window (re-encode the last K steps)")
          ->check([](const std::string& name) {  // eval_mode_name holds the one list of names
            try {
              eval::parse_eval_mode(name);
              return std::string();
            } catch (const std::invalid_argument& e) {
              return std::string(e.what());
            }
          });
  auto* engine =
      sub->add_option(
             "--engine", args->engine,
             "auto (packed on cpu, torch otherwise), packed (the packed CPU inference path; "
             "'fast' is its old name) or torch (the LibTorch modules: any device; the "
             "packed engine's reference)")
          ->check([](const std::string& name) {
            try {
              rl::parse_policy_engine(name);
              return std::string();
            } catch (const std::invalid_argument& e) {
              return std::string(e.what());
            }
          });
  sub->add_option("--video", args->video,
                  "render episode 0 offscreen into this folder (PNG frames + rollout.gif in real "
                  "time)")
      ->check(path_name("a directory"))
      ->type_name("DIR");
  auto* replace = sub->add_flag(
      "--replace", args->replace,
      "write RUN/eval.json, the run's reported result, even with the options above (what "
      "`minrnn sweep` does); without it they write RUN/eval-<options>.json");
  auto* out = sub->add_option("--out", args->out, "write the JSON here instead")->excludes(replace);
  sub->add_option("--threads", args->threads,
                  "CPU threads the packed engine splits the episodes over, and those beyond the "
                  "episodes' shards each shard's larger products (default: LibTorch's; "
                  "eval.json's \"threads\" says which; any count gives the same numbers)")
      ->check(whole_number(1, 4096));
  sub->callback([args, episodes, target, seed, mode, engine, out] {
    args->out_given = out->count() > 0;
    Given given;
    if (episodes->count() > 0) given.push_back({"episodes", std::to_string(args->episodes)});
    if (target->count() > 0) given.push_back({"target", target->as<std::string>()});
    if (seed->count() > 0) given.push_back({"seed", std::to_string(args->seed)});
    if (mode->count() > 0) given.push_back({"mode", args->mode});
    if (engine->count() > 0)  // "fast" and "packed" name one engine: one file name
      given.push_back({"engine", rl::policy_engine_name(rl::parse_policy_engine(args->engine))});
    run_eval(*args, std::move(given), target->count() > 0);
  });
}

}  // namespace minrnn::cli
