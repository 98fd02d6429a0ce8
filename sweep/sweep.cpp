#include "sweep/sweep.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <stdexcept>

#include "io/cpus.h"
#include "io/dir_lock.h"
#include "io/shell_word.h"
#include "io/tensorboard.h"
#include "rl/run_files.h"
#include "rl/stop_request.h"
#include "sweep/command_sets.h"
#include "sweep/local_pool.h"
#include "sweep/slurm.h"

namespace minrnn::sweep {
namespace {

namespace fs = std::filesystem;

// Torch threads per child: the sweep's `threads`, or the cores shared among the children that
// run at once (twice `parallel` where evaluations run beside the trainings).
int threads_per_run(const SweepSpec& spec, bool evaluations_beside) {
  if (spec.threads > 0) return spec.threads;
  const int children = std::max(1, spec.parallel) * (evaluations_beside ? 2 : 1);
  return std::max(1, io::usable_cpu_count() / children);
}

// ", its last attempt failed (train exit 1)" where the run holds a failed.json (the sweep tries it
// again), "" otherwise.
std::string failed_before(const SweepRun& r) {
  const auto failed = rl::read_failed(rl::RunFiles(r.run_dir));
  return failed ? ", its last attempt failed (" + failed->text() + ")" : "";
}

// What --dry-run says a run will do.
std::string planned(const SweepRun& r) {
  if (r.state == RunState::kDone) return "done";
  if (r.state == RunState::kTrained) return "trained, not evaluated" + failed_before(r);
  if (const std::string missing = data_missing_note(r); !missing.empty()) return missing;
  // A run another process trains now (a `minrnn train` of the user's, another sweep): a sweep
  // started now would leave it to that process and train it only once it lets go.
  if (const long holder = io::lock_holder(r.run_dir); holder >= 0)
    return "running in " + io::holder_text(holder) + " (not started here)";
  const bool checkpointed = fs::exists(rl::RunFiles(r.run_dir).checkpoint);
  if (r.extend && !checkpointed) return "to train again from step 0 (--extend; no checkpoint here)";
  if (r.extend) return "to train further (--extend)" + failed_before(r);
  if (!checkpointed) return "to train" + failed_before(r);
  // As --status says it (status_words): a run stopped part-way, or trained through but not marked
  // finished (its done.json lost: the sweep finishes it and evaluates it again).
  const int64_t step = logged_step(r.run_dir);
  return (step >= r.max_steps ? "to finish (trained to step " + std::to_string(step) +
                                    ", no done.json) and evaluate"
                              : "to resume from its last checkpoint (stopped at step " +
                                    std::to_string(step) + ")") +
         failed_before(r);
}

void print_plan(const std::vector<SweepRun>& runs) {
  for (const auto& r : runs)
    std::printf("  %-40s %s  %s\n", run_name(r).c_str(), planned(r).c_str(), r.config.c_str());
}

}  // namespace

std::string sweep_command(const SweepSpec& spec, const std::string& flag) {
  return "minrnn sweep " + io::shell_word(spec.file) + spec.command_options +
         (flag.empty() ? "" : " " + flag);
}

std::string run_name(const SweepRun& r) {
  return r.dataset + "/" + r.backbone + "/seed" + std::to_string(r.seed);
}

int run_sweep(const SweepSpec& spec, const SweepOptions& opt, SweepSummary* summary) {
  std::vector<SweepRun> runs = plan_sweep(spec);
  if (opt.check_devices) {
    try {
      refuse_unusable_device(spec, runs);
    } catch (const std::runtime_error& e) {
      if (!opt.dry_run) throw;
      std::fprintf(stderr, "note: %s\n", e.what());  // the plan, and why none of it could train
    }
  }
  // Asked once: each run's device `auto` asks CUDA whether a device is usable.
  const bool evaluations_beside = evaluates_beside_training(runs);
  const int threads = threads_per_run(spec, evaluations_beside);
  int already = 0;
  for (const auto& r : runs) already += r.state == RunState::kDone;
  const int pack = runs.empty() ? 1 : pack_limit(spec, runs[0].device);
  const auto print_header = [&] {
    std::printf(
        "sweep %s: %zu runs (%d already done), %d at a time%s%s, %d torch thread%s each → %s\n",
        spec.file.c_str(), runs.size(), already, spec.parallel,
        evaluations_beside ? " (and as many evaluations beside them)" : "",
        pack > 1 ? (", seeds in packs of up to " + pack_limit_text(spec, runs[0].device)).c_str()
                 : "",
        threads, threads == 1 ? "" : "s", spec.out.c_str());
  };
  if (opt.dry_run) {
    print_header();
    print_plan(runs);
    // The plan of a sweep that cannot start now (a walk, 2026-11-30: no word of it).
    if (const long holder = io::lock_holder(spec.out); holder >= 0) {
      std::printf(
          "note: a sweep (%s) holds %s now: the plan is as of this moment, and the "
          "sweep run now would be refused until it ends\n",
          io::holder_text(holder).c_str(), spec.out.c_str());
    }
    if (const std::string note = live_slurm_job_note(spec, "the sweep run here now"); !note.empty())
      std::printf("%s\n", note.c_str());
    return 0;
  }
  // Every refusal before the first line: a sweep that will not run does not start to say it does.
  refuse_missing_datasets(spec, runs);  // before the first directory is made
  make_sweep_dir(spec, spec.out);
  const io::DirLock lock(spec.out, "minrnn sweep");  // one sweep per output dir
  // Nor beside a Slurm array of the same directory (sweep/slurm.h).
  if (const std::string job = live_slurm_job(spec.out, false); !job.empty()) {
    throw std::runtime_error(spec.out + " is being swept by Slurm job " + job +
                             " (pending or running); wait for it (`--status`) or `scancel " + job +
                             "` before sweeping it here");
  }
  record_command_sets(spec);
  // The pool passes a stop on to its children; from the first line, which a `| head` may end.
  const rl::ScopedStopHandlers stop_handlers;
  print_header();
  note_lookalike_datasets(runs);
  std::printf("%s\n", io::watch_line(spec.out).c_str());
  const SweepSummary left = run_local_pool(spec, opt, std::move(runs), threads, evaluations_beside);
  if (summary) *summary = left;
  return left.failed;
}

}  // namespace minrnn::sweep
