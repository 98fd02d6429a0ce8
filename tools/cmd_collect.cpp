// `minrnn collect ENV QUALITY`: behaviour data in D4RL's layout. Today: random (actions ~ U[-1, 1],
// as D4RL's random datasets). medium / medium-replay / expert / medium-expert need the SAC trainer.
#include <cstdio>
#include <filesystem>

#include "envs/registry.h"
#include "rl/collect.h"
#include "tools/commands.h"

namespace minrnn::cli {

void add_collect_command(CLI::App& app) {
  struct Args {
    std::string env, quality, out;
    int64_t steps = 1000000;
    uint64_t seed = 0;
    bool force = false;
  };
  auto args = std::make_shared<Args>();
  auto* sub =
      app.add_subcommand("collect", "Collect a D4RL-layout dataset with a behaviour policy");
  sub->add_option("env", args->env, "hopper | halfcheetah | walker2d")->required();
  sub->add_option("quality", args->quality, "random (medium, medium-replay, expert: issue #7)")
      ->required();
  sub->add_option("--steps", args->steps, "Transitions to record (D4RL: 1000000)")
      ->check(CLI::PositiveNumber);
  sub->add_option("--seed", args->seed, "Seed of the environment and the policy");
  sub->add_option("--out", args->out, "Output .hdf5 (default data/<env>_<quality>-v2.hdf5)");
  sub->add_flag("--force", args->force, "Replace an existing output file");
  sub->callback([args] {
    const envs::EnvSpec spec = envs::env_spec(args->env);
    if (args->quality != "random") {
      throw ExitError{2, "minrnn collect: quality '" + args->quality +
                             "' needs the SAC behaviour-policy trainer, not built yet (issue #7); "
                             "available now: random"};
    }
    if (args->out.empty()) args->out = "data/" + spec.name + "_" + args->quality + "-v2.hdf5";
    if (std::filesystem::exists(args->out) && !args->force) {
      throw std::runtime_error(args->out + " exists; pass --force to replace it");
    }
    const auto parent = std::filesystem::path(args->out).parent_path();
    if (!parent.empty()) std::filesystem::create_directories(parent);
    auto env = envs::make_env(spec.name, args->seed);
    rl::CollectOptions options;
    options.steps = args->steps;
    options.seed = args->seed;
    options.progress_every = 1000;
    int64_t warnings = 0;
    data::D4rlData d = rl::collect(*env, rl::uniform_random_policy(spec.act_dim, args->seed + 7919),
                                   options, &warnings);
    d.metadata.strings["algorithm"] = "random";
    d.metadata.ints["iteration"] = 0;
    data::D4rlWriteOptions write_options;
    write_options.overwrite = args->force;
    data::write_d4rl(args->out, d, write_options);
    std::printf("wrote %s: %lld steps of %s (%s), %lld MuJoCo warnings\n", args->out.c_str(),
                static_cast<long long>(d.num_steps()), spec.name.c_str(), args->quality.c_str(),
                static_cast<long long>(warnings));
  });
}

}  // namespace minrnn::cli
