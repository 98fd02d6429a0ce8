// `minrnn eval RUN [--episodes N] [--target-return R] [--seed S] [--mode auto|streaming|window]
//  [--engine auto|packed|torch] [--replace | --out FILE]`: rolls the run's checkpoint out and
//  writes its returns and D4RL normalized scores as JSON, where tools/eval_destination.h says.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <unistd.h>

#include "envs/registry.h"
#include "eval/eval_result.h"
#include "eval/rollout.h"
#include "eval/stats.h"
#include "eval/sweep_runs.h"
#include "io/file_identity.h"
#include "io/progress_line.h"
#include "io/progress_pace.h"
#include "ops/device.h"
#include "rl/evaluation_progress.h"
#include "rl/run_files.h"
#include "rl/trainer.h"
#include "tools/commands.h"
#include "tools/eval_destination.h"

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

// The checkpoint file `run` (a run dir or a checkpoint file) names.
fs::path checkpoint_file(const std::string& run) {
  return fs::is_directory(run) ? rl::RunFiles(run).checkpoint : fs::path(run);
}

// It as the file system tells it apart: a checkpoint is replaced by a rename (a `train --force`,
// an `--extend`'s next save), never written in place.
io::FileIdentity checkpoint_identity(const std::string& run) {
  io::FileIdentity id;
  io::identity_of(checkpoint_file(run).string(), &id);
  return id;
}

struct EvalArgs {
  std::string run;
  int episodes = 10;
  double target_return = 0;  // when given (else the checkpoint's config's)
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

// The options the episodes run with; a mode the run's backbone has not is refused by name.
eval::RolloutOptions rollout_options(const EvalArgs& a, rl::Agent& agent, bool target_given) {
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
  ro.engine = rl::parse_policy_engine(a.engine);
  ro.threads = a.threads;
  return ro;
}

// Refuses, before any episode runs, a destination without --out that the evaluation may not have
// (each was found only once the episodes had run, a walk, 2026-11-29): a run whose environment is
// not the checkpoint's, a place the file system refuses, a file there that is no evaluation.
void check_destination(const EvalArgs& a, const rl::Agent& agent, const std::string& path) {
  const rl::RunFiles run(eval_folder(a.run));
  const std::string ckpt = checkpoint_file(a.run).string();
  if (const std::string why = rl::why_other_env(run, agent, ckpt); !why.empty()) {
    throw std::runtime_error(why + ": its evaluation is not this run's, so nothing is written in " +
                             run.dir.string() + " (--out FILE writes it elsewhere)");
  }
  if (const std::string why = why_not_destination(path); !why.empty()) {
    throw usage_error("eval", path + ", where this evaluation goes: " + why +
                                  " (--out FILE writes it elsewhere)");
  }
}

// "Hopper-v4 mingru step 300 (streaming, packed engine): return 1.0 ± 0.1, normalized ... over 10
// episodes (3.2s)": what the episodes scored.
std::string summary(const rl::Agent& agent, const eval::RolloutOptions& ro,
                    const eval::RolloutResult& r) {
  char line[1024];
  std::snprintf(line, sizeof line,
                "%s %s step %lld (%s, %s engine): return %s, normalized %s over %d episode%s "
                "(%.1fs)",
                envs::env_spec(agent.env).id.c_str(), agent.config.backbone.c_str(),
                static_cast<long long>(agent.step), eval::eval_mode_name(r.mode),
                rl::policy_engine_name(r.engine),
                eval::mean_std_text(r.mean_return, r.std_return, ro.episodes).c_str(),
                eval::mean_std_text(r.mean_normalized, r.std_normalized, ro.episodes).c_str(),
                ro.episodes, ro.episodes == 1 ? "" : "s", r.seconds);
  return line;
}

// Writes the JSON to `out` (a destination without --out, `asked`, asked again: the run may have
// moved on to another name meanwhile) and prints what the episodes scored; where it cannot be
// written, that line comes first, so the numbers are not lost with the rollout.
void write_result(const std::string& out, bool asked, const rl::Agent& agent,
                  const eval::RolloutOptions& ro, const eval::RolloutResult& r) {
  try {
    if (const std::string why = asked ? why_not_destination(out) : ""; !why.empty())
      throw std::runtime_error(out + ": " + why);
    eval::write_eval_json(out, agent, ro, r);
  } catch (const std::exception&) {
    std::printf("%s: not written\n", summary(agent, ro, r).c_str());
    std::fflush(stdout);
    throw;
  }
  std::printf("%s → %s\n", summary(agent, ro, r).c_str(), out.c_str());
}

// What the reader of the line should know besides the score: the run's result kept, the run moved
// on, MuJoCo's warnings.
void say_notes(const EvalArgs& a, const fs::path& result, const EvalOutput& output, bool replaced,
               const std::string& partial, int64_t step, const eval::RolloutOptions& ro,
               const eval::RolloutResult& r) {
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
                static_cast<long long>(step), result.string().c_str());
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

// Rolls `a.run` out and writes its JSON where eval_destination.h says, `given` the options that
// change the result; every destination is checked before the episodes run.
void run_eval(const EvalArgs& a, const EvalGiven& given, bool target_given) {
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
  const fs::path result = rl::RunFiles(eval_folder(a.run)).result;
  eval::RolloutOptions ro = rollout_options(a, agent, target_given);
  const auto planned = [&](const std::string& partial, rl::PolicyEngine engine) {
    return choose_output(given, partial, a.replace, result, ro, engine, agent.step);
  };
  const std::string own =
      planned(not_the_result(a.run, agent.step), rl::resolve_policy_engine(ro.engine, agent)).path;
  if (a.out_given)
    check_out_file(a.out, result, fs::path(own).filename().string());
  else
    check_destination(a, agent, own);
  // Last of the checks: it makes the folder.
  if (!a.video.empty()) {
    if (const std::string why = eval::make_video_dir(a.video); !why.empty())
      throw usage_error("eval", "--video " + why);
  }
  ro.on_step = progress_line(ro.episodes);
  const auto r = eval::rollout(agent, ro);
  // Asked again: a `train --extend` may have moved the run on while its episodes ran, or its
  // checkpoint been replaced (the run trained on, or `train --force` retrained it).
  const bool replaced = checkpoint_identity(a.run) != loaded;
  const std::string partial =
      replaced ? "replaced-step" + std::to_string(agent.step) : not_the_result(a.run, agent.step);
  const EvalOutput output = a.out_given ? EvalOutput{a.out, false} : planned(partial, r.engine);
  write_result(output.path, !a.out_given, agent, ro, r);
  say_notes(a, result, output, replaced, partial, agent.step, ro, r);
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
                                 "raw target return (default: the target_return of the config "
                                 "stored in the checkpoint; an edited config.yaml is not read)")
                     ->check(finite_float());
  auto* seed = sub->add_option("--seed", args->seed, "episode i uses env seed S + i (default 0)")
                   ->check(whole_number(0, rl::training_eval_seed(rl::kMaxSeed)));
  sub->add_option("--device", args->device,
                  "auto (CUDA when usable, else CPU; default), cpu or cuda[:N]")
      ->check(device_name());
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
    EvalGiven given;
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
