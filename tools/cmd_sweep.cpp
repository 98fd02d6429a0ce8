// `minrnn sweep SWEEP.yaml [--set key=value]... [--out DIR] [--parallel N] [--dry-run] [--extend]
//                          [--backend local|slurm] [--status [--json]] [--download]
//                          [--estimate [--rates CSV,...] [--json]]`: trains
// and evaluates every seed × dataset × backbone of a sweep file (see sweep/sweep.h, sweep/slurm.h,
// docs/sweeps.md). Re-running the same command resumes: finished runs are skipped. Ctrl-C or
// SIGTERM stops a local sweep cleanly (its runs checkpoint first) with exit status 75. A sweep
// whose runs still to train name a missing dataset is refused before it starts anything, naming
// the `minrnn data download` command; --download fetches those datasets first. --estimate starts
// nothing: it projects the time the runs left take from the benchmarks' rates (sweep/estimate.h).
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <optional>
#include <stdexcept>

#include "io/shell_word.h"
#include "rl/config.h"
#include "rl/stop_request.h"
#include "sweep/command_sets.h"
#include "sweep/estimate.h"
#include "sweep/slurm.h"
#include "sweep/sweep.h"
#include "tools/commands.h"
#include "tools/data_download.h"

namespace minrnn::cli {

namespace {

void print_estimate(const sweep::SweepSpec& spec, std::vector<std::string> rates, bool json) {
  const std::vector<sweep::SweepRun> runs = sweep::plan_sweep(spec);
  // A finished sweep needs no rates to say that nothing is left (a docs walk, 2026-11-29).
  const bool all_done = std::all_of(runs.begin(), runs.end(), [](const sweep::SweepRun& r) {
    return r.state == sweep::RunState::kDone;
  });
  if (rates.empty() && !all_done) {
    const std::string packs = sweep::kPackRatesCsv;
    if (!std::filesystem::exists(packs)) {
      throw std::runtime_error(
          "--estimate: no --rates given and no " + packs +
          " here: `minrnn bench pack` on the machine the sweep will run on measures its training "
          "rates (and `minrnn bench eval` its evaluations'), or pass --rates CSV,...");
    }
    rates.push_back(packs);
    if (std::filesystem::exists(sweep::kEvalRatesCsv)) rates.push_back(sweep::kEvalRatesCsv);
  }
  const sweep::SweepEstimate e = sweep::estimate_sweep(
      spec, runs, rates.empty() ? sweep::MeasuredRates{} : sweep::read_measured_rates(rates));
  if (json) {
    std::cout << sweep::estimate_json(e).dump(2) << "\n";
  } else {
    std::cout << sweep::format_estimate(spec, e);
  }
}

struct SweepArgs {
  std::string file, out, backend = "local";
  std::vector<std::string> sets, rates;
  int parallel = 0, pack = 0;
  bool dry_run = false, status = false, json = false, extend = false, download = false,
       estimate = false;
};

// A key of the file's `set` changed since the sweep started, which a kept --set would silently
// outvote (a walk, 2026-11-30: an edited max_steps=400 ran as the recorded 300): refused where
// runs would start, until the user says which; a note where the command only looks (--status,
// --estimate, --dry-run: they show the sweep as it runs, the kept value).
void refuse_file_changes_under(const SweepArgs& args, const std::string& record,
                               const sweep::RecordedSets& recorded,
                               const std::vector<std::string>& kept,
                               const std::vector<std::string>& file_sets) {
  const std::vector<std::string> changed =
      sweep::changed_under_kept_sets(recorded, kept, file_sets);
  if (changed.empty()) return;
  std::string lines;
  for (const std::string& line : changed) lines += "\n  " + line;
  const std::string what = args.file + " has changed a key that the --set options it was " +
                           "started with (" + record + ") replace:" + lines;
  if (!args.status && !args.estimate && !args.dry_run) {
    throw usage_error("sweep", what +
                                   "\ngive --set KEY=VALUE for each: the file's value, or the "
                                   "recorded one");
  }
  if (!args.json) {
    std::fprintf(stderr,
                 "minrnn sweep: note: %s\nshown with the recorded value; the sweep run "
                 "again refuses until --set says which\n",
                 what.c_str());
  }
}

// The command line's --set options over those the sweep in `out` was last started with (a key
// given replaces its own); the recorded ones kept are said on stderr (not under --json: `--status
// --json 2>&1 | jq` stays JSON, and the status's JSON lists them). Another sweep file's record
// (two files sharing an `out`) is not used: told apart by its file's name, which a snapshot
// restored on another machine keeps.
std::vector<std::string> command_line_sets(const SweepArgs& args, const std::string& out,
                                           const std::vector<std::string>& file_sets) {
  const std::string record = (std::filesystem::path(out) / sweep::kCommandSetsFile).string();
  std::optional<sweep::RecordedSets> recorded = sweep::recorded_command_sets(out);
  const auto name_of = [](const std::string& f) { return std::filesystem::path(f).filename(); };
  if (recorded && !recorded->sweep_file.empty() &&
      name_of(recorded->sweep_file) != name_of(args.file)) {
    if (!args.json) {
      std::fprintf(stderr, "minrnn sweep: %s holds the --set options of %s, not of %s: not used\n",
                   record.c_str(), recorded->sweep_file.c_str(), args.file.c_str());
    }
    recorded.reset();
  }
  const std::vector<std::string> sets =
      sweep::with_overrides(recorded ? recorded->sets : std::vector<std::string>{}, args.sets);
  const std::vector<std::string> kept_sets(sets.begin(), sets.end() - long(args.sets.size()));
  if (recorded) refuse_file_changes_under(args, record, *recorded, kept_sets, file_sets);
  std::string kept;
  for (const std::string& set : kept_sets) kept += " --set " + io::shell_word(set);
  if (!kept.empty() && !args.json) {
    std::fprintf(stderr, "minrnn sweep: with the --set options it was started with (%s):%s\n",
                 record.c_str(), kept.c_str());
  }
  return sets;
}

// The sweep file with the command line's changes, then its status, its estimate, or its runs.
void run_sweep_command(const SweepArgs& args) {
  sweep::SweepSpec spec = sweep::load_sweep(args.file);
  check_command_line_sets("sweep", args.sets, [&spec](const std::string& set) {
    const std::string why = sweep::why_not_sweep_set(set, spec);
    return why.empty() ? sweep::why_a_sweeps_own_key(spec, set) : why;
  });
  if (!args.out.empty()) spec.out = args.out;
  sweep::apply_command_sets(spec, command_line_sets(args, spec.out, spec.sets));
  for (const std::string& set : args.sets) spec.command_options += " --set " + io::shell_word(set);
  if (!args.out.empty()) spec.command_options += " --out " + io::shell_word(args.out);
  if (args.extend) spec.command_options += " --extend";
  if (args.parallel > 0) spec.parallel = args.parallel;
  if (args.pack > 0) spec.pack = args.pack;
  spec.extend = args.extend;
  if (args.json && !args.status && !args.estimate)
    throw usage_error("sweep", "--json goes with --status or --estimate");
  // Exit 1 with failed runs, as the sweep itself, so that a script can tell; nothing more on
  // stderr: the summary (or the JSON's counts) says how many, and `--json 2>&1 | jq` stays JSON.
  if (args.status) {
    if (sweep::print_sweep_status(spec, args.json) > 0) throw ExitError{1, ""};
    return;
  }
  if (args.estimate) {
    print_estimate(spec, args.rates, args.json);
    return;
  }
  if (args.download)
    download_missing_datasets(sweep::missing_datasets(sweep::plan_sweep(spec)), "minrnn sweep");
  sweep::SweepOptions opt;
  opt.dry_run = args.dry_run;
  if (args.backend == "slurm") {
    sweep::submit_slurm_sweep(spec, opt);
    return;
  }
  sweep::SweepSummary summary;
  const int failed = sweep::run_sweep(spec, opt, &summary);
  if (failed > 0) throw ExitError{1, "minrnn sweep: " + std::to_string(failed) + " run(s) failed"};
  const std::string left =
      sweep::left_unfinished({summary.interrupted - summary.unevaluated - summary.uncheckpointed,
                              summary.uncheckpointed, summary.unevaluated, summary.not_started});
  // A stop that came once every run was done (a SIGPIPE from the last line's `| head`) left none.
  if (summary.stop_signal != 0 && summary.interrupted + summary.not_started > 0) {
    throw ExitError{rl::kExitInterrupted, "minrnn sweep: stopped by " + rl::stop_signal_name() +
                                              "; " + left + ". Run the same command to resume."};
  }
  // A run stopped by a signal of its own (Slurm's, a user's kill) leaves the sweep unfinished:
  // `minrnn sweep ... && minrnn report ...` must not go on to a table with a cell missing.
  if (summary.interrupted > 0) {
    throw ExitError{rl::kExitInterrupted,
                    "minrnn sweep: " + left + " (a signal). Run the same command to resume."};
  }
  if (summary.busy > 0) {
    throw ExitError{rl::kExitInterrupted,
                    "minrnn sweep: " + std::to_string(summary.busy) +
                        " run(s) held by another process, not trained here. Run the same command "
                        "when it has ended."};
  }
}

// run_sweep_command, where a --set of the command line whose value a config refuses by range
// (max_steps=0, device=tpu; found as the plan loads each cell's config) is a usage error, as one
// of the wrong type is (check_command_line_sets); the sweep file's own `set` stays its error.
void run_sweep_command_checked(const SweepArgs& args) {
  try {
    run_sweep_command(args);
  } catch (const rl::RefusedOverride& e) {
    if (!rl::override_of(args.sets, e.key).empty()) throw usage_error("sweep", e.what());
    throw;
  }
}

}  // namespace

void add_sweep_command(CLI::App& app) {
  auto args = std::make_shared<SweepArgs>();
  auto* sub = app.add_subcommand("sweep", "train + evaluate seeds × datasets × backbones");
  sub->add_option("sweep", args->file, "sweep file (configs/sweeps/*.yaml)")->required();
  sub->add_option("--set", args->sets, "extra config override for every run: key=value");
  sub->add_option("--out", args->out, "output directory (default: the file's `out`)")
      ->check(path_name("a directory"))
      ->type_name("DIR");
  // The file's limits (sweep::kSweepCountMax), so that the command line cannot ask what it may not.
  sub->add_option("--parallel", args->parallel,
                  "processes at a time (default: the file's `parallel`)")
      ->check(whole_number(1, sweep::kSweepCountMax));
  sub->add_option("--pack", args->pack,
                  "seeds of one dataset × backbone trained in one process (default: the file's "
                  "`pack`, else on CUDA up to 16, 32 where the pack is one stacked model; 1 on "
                  "the CPU)")
      ->check(whole_number(1, sweep::kSweepCountMax));
  sub->add_flag("--extend", args->extend,
                "train runs whose config differs only by a smaller max_steps further, from "
                "their checkpoints (their results so far are kept as *-step<N> files)");
  auto* dry_run =
      sub->add_flag("--dry-run", args->dry_run, "print the runs and their state; start nothing");
  sub->add_option("--backend", args->backend,
                  "local: child processes here; slurm: submit one job array with sbatch "
                  "(the file's `slurm:` section)")
      ->check(CLI::IsMember({"local", "slurm"}));
  auto* status = sub->add_flag("--status", args->status,
                               "print every run's state (and the Slurm job's); start nothing");
  auto* estimate = sub->add_flag(
      "--estimate", args->estimate,
      "print how long the runs left take on this machine, from the rates `minrnn bench pack` and "
      "`bench eval` measured (--rates); start nothing");
  estimate->excludes(dry_run)->excludes(status);
  dry_run->excludes(status);  // both print the runs: one was silently dropped
  sub->add_option("--rates", args->rates,
                  "with --estimate: bench CSVs to project from (default runs/bench/pack.csv, and "
                  "runs/bench/eval.csv where it exists)")
      ->delimiter(',')
      ->needs(estimate);
  sub->add_flag("--json", args->json, "with --status or --estimate: as JSON");
  sub->add_flag("--download", args->download,
                "first fetch the datasets of runs still to train that are missing (as `minrnn "
                "data download`)")
      ->excludes(dry_run)
      ->excludes(status)
      ->excludes(estimate);
  sub->callback([args] { run_sweep_command_checked(*args); });
}

}  // namespace minrnn::cli
