// `minrnn train CONFIG [--seed S] [--run-dir DIR] [--set key=value]... [--force | --extend]
//               [--download]`
// Trains a decision agent; re-running the same command after a kill resumes from the checkpoint,
// and with a larger max_steps and --extend, a finished run trains on from its last checkpoint.
// SIGTERM or SIGINT (Ctrl-C) stops it cleanly: the step in progress ends, its checkpoint is
// written, and it exits with status 75 (rl::kExitInterrupted); the same command resumes there.
// --download first fetches the config's dataset when it is missing (`minrnn data download`).
#include <cstdio>

#include "eval/rollout.h"
#include "rl/config.h"
#include "rl/stop_request.h"
#include "rl/trainer.h"
#include "tools/commands.h"
#include "tools/data_download.h"

namespace minrnn::cli {

void add_train_command(CLI::App& app) {
  struct Args {
    std::string config, run_dir;
    int64_t seed = -1;
    std::vector<std::string> sets;
    bool force = false, extend = false, quiet = false, download = false;
  };
  auto args = std::make_shared<Args>();
  auto* sub = app.add_subcommand("train", "train a decision agent from a YAML config");
  sub->add_option("config", args->config, "YAML config (configs/*.yaml)")->required();
  sub->add_option("--seed", args->seed, "seed (overrides the config's)");
  sub->add_option("--run-dir", args->run_dir, "run directory (default runs/<config>-s<seed>)");
  sub->add_option("--set", args->sets, "override a config key: key=value (repeatable)");
  sub->add_flag(
      "--force", args->force,
      "replace the run in the run directory (a finished one, or one with another config): "
      "its checkpoint, metrics, evaluations and eval*.json are removed first");
  sub->add_flag("--extend", args->extend,
                "train a run further: its config with only a larger max_steps goes on from the "
                "last checkpoint (its results so far are kept as *-step<N> files)")
      ->excludes("--force");
  sub->add_flag("--quiet", args->quiet, "no progress line");
  sub->add_flag("--download", args->download,
                "fetch the config's dataset first when it is missing (as `minrnn data download`)");
  sub->callback([args] {
    auto sets = args->sets;
    if (args->seed >= 0) sets.push_back("seed=" + std::to_string(args->seed));
    const rl::TrainConfig cfg = rl::load_config(args->config, sets);
    if (args->download) download_missing_datasets({cfg.dataset}, "minrnn train");
    rl::TrainOptions opt;
    opt.run_dir =
        args->run_dir.empty() ? rl::default_run_dir(args->config, cfg.seed) : args->run_dir;
    opt.force = args->force;
    opt.extend = args->extend;
    opt.quiet = args->quiet;
    const std::string run_dir = opt.run_dir;
    // Periodic evaluation during training: a short rollout, a row of <run>/evals.csv.
    opt.evaluate = [run_dir](int64_t step, rl::Agent& agent) {
      eval::RolloutOptions ro;
      ro.episodes = static_cast<int>(agent.config.eval_episodes);
      ro.target_return = agent.config.target_return;
      ro.seed = 1000000 + agent.config.seed * 1000;
      const auto r = eval::rollout(agent, ro);
      rl::append_eval_row(run_dir,
                          {step, r.mean_return, r.std_return, r.mean_normalized, r.std_normalized});
      std::fprintf(stderr, "\neval @ step %lld: return %.1f ± %.1f, normalized %.1f ± %.1f\n",
                   static_cast<long long>(step), r.mean_return, r.std_return, r.mean_normalized,
                   r.std_normalized);
    };
    rl::install_stop_handlers();
    const auto result = rl::train(cfg, opt);
    const std::string resumed =
        result.resumed_from == 0 ? ""
        : result.resumed_from == result.step && result.finished
            ? " (nothing left to train)"
            : " (resumed from step " + std::to_string(result.resumed_from) + ")";
    if (result.interrupted) {
      throw ExitError{rl::kExitInterrupted,
                      "minrnn train: stopped by " + rl::stop_signal_name() + " at step " +
                          std::to_string(result.step) + "/" + std::to_string(cfg.max_steps) +
                          resumed + "; checkpoint " + opt.run_dir +
                          "/checkpoint.pt written. Run the same command to resume."};
    }
    std::printf("%s: step %lld, last loss %.5f%s\n", opt.run_dir.c_str(),
                static_cast<long long>(result.step), result.last_loss, resumed.c_str());
  });
}

}  // namespace minrnn::cli
