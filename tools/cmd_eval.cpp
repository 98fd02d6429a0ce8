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
// <RUN>/eval-checkpoint-step10000.json or <RUN>/eval-step4000.json. So trying something can never
// replace a reported number.
#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "envs/registry.h"
#include "eval/rollout.h"
#include "io/progress_line.h"
#include "ops/device.h"
#include "rl/trainer.h"
#include "tools/commands.h"

namespace minrnn::cli {
namespace {

// A progress line on stderr every second on a terminal (rewritten in place), every 10 s otherwise.
// The ETA assumes every episode runs to the time limit, so it is an upper bound.
std::function<void(int, int, int)> progress_line(int episodes) {
  io::ProgressLine& line = io::ProgressLine::on_stderr();
  const auto start = std::chrono::steady_clock::now();
  auto last = start;
  return [=, &line](int step, int max_steps, int finished) mutable {
    const auto now = std::chrono::steady_clock::now();
    const bool end = step == max_steps || finished == episodes;
    if (!end && now - last < std::chrono::seconds(line.terminal() ? 1 : 10)) return;
    last = now;
    const double elapsed = std::chrono::duration<double>(now - start).count();
    const double rate = step / std::max(elapsed, 1e-9);
    char eta[32] = "done";
    if (!end)
      std::snprintf(eta, sizeof eta, "ETA <= %.0f s", (max_steps - step) / std::max(rate, 1e-9));
    char text[160];
    std::snprintf(text, sizeof text, "eval: step %d/%d, %d/%d episodes ended, %.0f steps/s, %s",
                  step, max_steps, finished, episodes, rate, eta);
    line.update(text);
    if (end) line.close();
  };
}

// Why an evaluation of `run` (a run dir or a checkpoint file) cannot be the run's result, as a
// name part ("checkpoint-step10000", "step4000"); "" when it can: the run's own checkpoint of a
// finished run.
std::string not_the_result(const std::string& run, int64_t step) {
  namespace fs = std::filesystem;
  const bool dir = fs::is_directory(run);
  const fs::path file(run);
  if (!dir && file.filename() != "checkpoint.pt") return file.stem().string();
  const fs::path run_dir = dir ? file : file.parent_path();
  if (!fs::exists(run_dir / "done.json")) return "step" + std::to_string(step);
  return "";
}

// "eval-episodes3-seed5.json": the options given, so ad-hoc results of different settings coexist.
std::string adhoc_name(const std::vector<std::pair<std::string, std::string>>& given) {
  std::string name = "eval";
  for (const auto& [key, value] : given) name += "-" + key + value;
  for (char& c : name)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_')) c = '_';
  return name + ".json";
}

struct EvalArgs {
  std::string run;
  int episodes = 10;
  double target_return = -1e300;
  int64_t seed = 0;
  std::string device = "auto";
  std::string video;
  std::string mode = "auto";
  std::string engine = "auto";
  std::string out;
  bool replace = false;
};

// Rolls `a.run` out and writes its JSON: eval.json only for the standard evaluation (or
// --replace) of a finished run's own checkpoint, else a name from `given`, the options that change
// the result (see the top).
void run_eval(const EvalArgs& a, std::vector<std::pair<std::string, std::string>> given) {
  const core::DeviceChoice device = core::resolve_device(a.device, "--device");
  rl::Agent agent = rl::load_agent(a.run, device.device);
  // Said once the run has loaded: a run that is not there is the one line printed.
  core::say_choice(a.device, device);
  const std::string partial = not_the_result(a.run, agent.step);
  if (a.replace && !partial.empty()) {
    throw ExitError{2, "minrnn eval: --replace writes the run's result (eval.json), but " + a.run +
                           " is not a finished run's own checkpoint (checkpoint.pt beside "
                           "done.json); evaluate it without --replace"};
  }
  eval::RolloutOptions ro;
  ro.episodes = a.episodes;
  ro.target_return = a.target_return > -1e299 ? a.target_return : agent.config.target_return;
  ro.seed = a.seed;
  ro.video_dir = a.video;
  ro.mode = eval::parse_eval_mode(a.mode);
  ro.engine = rl::parse_policy_engine(a.engine);
  ro.on_step = progress_line(ro.episodes);
  const auto r = eval::rollout(agent, ro);
  const std::string dir = std::filesystem::is_directory(a.run)
                              ? a.run
                              : std::filesystem::path(a.run).parent_path().string();
  if (!partial.empty()) given.insert(given.begin(), {"", partial});
  const std::string name = given.empty() || a.replace ? "eval.json" : adhoc_name(given);
  const std::string out = a.out.empty() ? (std::filesystem::path(dir) / name).string() : a.out;
  eval::write_eval_json(out, agent, ro, r);
  std::printf(
      "%s %s step %lld (%s, %s engine): return %.1f ± %.1f, normalized %.1f ± %.1f over %d "
      "episodes "
      "(%.1fs) → %s\n",
      envs::env_spec(agent.env).id.c_str(), agent.config.backbone.c_str(),
      static_cast<long long>(agent.step), eval::eval_mode_name(r.mode),
      rl::policy_engine_name(r.engine), r.mean_return, r.std_return, r.mean_normalized,
      r.std_normalized, ro.episodes, r.seconds, out.c_str());
  if (!r.video_gif.empty()) std::printf("video of episode 0: %s\n", r.video_gif.c_str());
}

}  // namespace

void add_eval_command(CLI::App& app) {
  auto args = std::make_shared<EvalArgs>();
  auto* sub = app.add_subcommand(
      "eval",
      "roll a trained agent out; writes RUN/eval.json (the run's result) when no option changing "
      "the result is given or with --replace, else RUN/eval-<options>.json");
  sub->add_option("run", args->run, "run directory (or checkpoint file)")->required();
  // The options that change the result: given any, the evaluation is ad-hoc (see the top).
  auto* episodes =
      sub->add_option("--episodes", args->episodes, "episodes (default 10)")->check(positive());
  auto* target = sub->add_option("--target-return", args->target_return,
                                 "raw target return (default: config's)");
  auto* seed = sub->add_option("--seed", args->seed, "episode i uses env seed S + i (default 0)");
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
                  "render episode 0 offscreen into this folder (PNG frames + rollout.gif)");
  auto* replace = sub->add_flag(
      "--replace", args->replace,
      "write RUN/eval.json, the run's reported result, even with the options above (what "
      "`minrnn sweep` does); without it they write RUN/eval-<options>.json");
  sub->add_option("--out", args->out, "write the JSON here instead")->excludes(replace);
  sub->callback([args, episodes, target, seed, mode, engine] {
    std::vector<std::pair<std::string, std::string>> given;
    if (episodes->count() > 0) given.push_back({"episodes", std::to_string(args->episodes)});
    if (target->count() > 0) given.push_back({"target", target->as<std::string>()});
    if (seed->count() > 0) given.push_back({"seed", std::to_string(args->seed)});
    if (mode->count() > 0) given.push_back({"mode", args->mode});
    if (engine->count() > 0) given.push_back({"engine", args->engine});
    run_eval(*args, std::move(given));
  });
}

}  // namespace minrnn::cli
