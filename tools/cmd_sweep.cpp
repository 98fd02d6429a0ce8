// `minrnn sweep SWEEP.yaml [--set key=value]... [--out DIR] [--parallel N] [--dry-run]`: trains
// and evaluates every seed × dataset × backbone of a sweep file (see eval/sweep.h, docs/sweeps.md).
// Re-running the same command resumes: finished runs are skipped.
#include "eval/sweep.h"
#include "tools/commands.h"

namespace minrnn::cli {

void add_sweep_command(CLI::App& app) {
  struct Args {
    std::string file, out;
    std::vector<std::string> sets;
    int parallel = 0;
    bool dry_run = false;
  };
  auto args = std::make_shared<Args>();
  auto* sub = app.add_subcommand("sweep", "train + evaluate seeds × datasets × backbones");
  sub->add_option("sweep", args->file, "sweep file (configs/sweeps/*.yaml)")->required();
  sub->add_option("--set", args->sets, "extra config override for every run: key=value");
  sub->add_option("--out", args->out, "output directory (default: the file's `out`)");
  sub->add_option("--parallel", args->parallel, "runs at a time (default: the file's `parallel`)")
      ->check(positive());
  sub->add_flag("--dry-run", args->dry_run, "print the runs and their state; start nothing");
  sub->callback([args] {
    eval::SweepSpec spec = eval::load_sweep(args->file);
    spec.sets.insert(spec.sets.end(), args->sets.begin(), args->sets.end());
    if (!args->out.empty()) spec.out = args->out;
    if (args->parallel > 0) spec.parallel = args->parallel;
    eval::SweepOptions opt;
    opt.dry_run = args->dry_run;
    const int failed = eval::run_sweep(spec, opt);
    if (failed > 0)
      throw ExitError{1, "minrnn sweep: " + std::to_string(failed) + " run(s) failed"};
  });
}

}  // namespace minrnn::cli
