// Submitting a sweep as one Slurm job array (sweep/slurm.h): what to submit, sbatch, job.json.
#include "sweep/slurm.h"

#include <cstdio>
#include <filesystem>
#include <sstream>
#include <stdexcept>

#include "io/atomic_file.h"
#include "io/dir_lock.h"
#include "io/tensorboard.h"
#include "sweep/command_sets.h"
#include "sweep/slurm_files.h"

namespace minrnn::sweep {
namespace {

namespace fs = std::filesystem;

// The runs a submission leaves out (done, or held by a live process, a line each naming it) and
// the indices of those it submits.
struct Submission {
  int done = 0;
  std::vector<std::string> busy;
  std::vector<int> tasks;
};

Submission runs_to_submit(const std::vector<SweepRun>& runs) {
  Submission s;
  for (size_t i = 0; i < runs.size(); ++i) {
    if (runs[i].state == RunState::kDone) {
      ++s.done;
    } else if (const long holder = io::lock_holder(runs[i].run_dir); holder >= 0) {
      // Never two writers in one run dir. The holder may be on another host (a shared folder).
      s.busy.push_back("  " + runs[i].run_dir + ": held by a running minrnn (" +
                       io::holder_text(holder) + "), not submitted");
    } else {
      s.tasks.push_back(int(i));
    }
  }
  return s;
}

void print_dry_run(const std::vector<SweepRun>& runs, const std::vector<std::vector<int>>& packs,
                   const fs::path& script, const std::string& array) {
  for (const auto& pack : packs) {
    for (int i : pack) {
      const SweepRun& r = runs[size_t(i)];
      std::printf("  task %-4d %s  %s\n", pack[0], r.run_dir.c_str(),
                  r.state == RunState::kTrained ? "(evaluate only)" : data_missing_note(r).c_str());
    }
  }
  std::printf("would write %s and run: sbatch --parsable %s (--array=%s)\n", script.c_str(),
              script.c_str(), array.c_str());
}

// The job id in sbatch's answer: "12" or "12;cluster" (--parsable), or "Submitted batch job 12"
// (a site's wrapper may drop --parsable); "" when it holds neither.
std::string job_id_in(const std::string& answer) {
  std::istringstream in(answer);
  std::string id;
  for (std::string line; std::getline(in, line);) {
    const std::string words = "Submitted batch job ";
    const size_t at = line.find(words);
    std::string candidate = at != std::string::npos ? line.substr(at + words.size()) : line;
    candidate = candidate.substr(0, candidate.find_first_of("; \t\r"));
    if (!candidate.empty() && candidate.find_first_not_of("0123456789") == std::string::npos)
      id = candidate;
  }
  return id;
}

// sbatch's job id for `script`. Where sbatch refuses it, <dir>/submit_error.txt says why and the
// error does too; where it exits 0 (or does not answer) without an id, the job may be queued, and
// the error says how to find it.
std::string sbatch(const fs::path& script, const fs::path& dir, const std::string& tag) {
  const fs::path error_file = dir / "submit_error.txt";
  const CommandOutput r = run_slurm_command({"sbatch", "--parsable", script.string()});
  const std::string job = job_id_in(r.out);
  if (r.exit_code == 0 && !job.empty()) {
    std::error_code ec;
    fs::remove(error_file, ec);
    return job;
  }
  const std::string message = command_message(r);
  io::write_file_atomically(error_file.string(),
                            now_text() + ": sbatch " + script.string() + " failed (exit " +
                                std::to_string(r.exit_code) + "):\n" + message + "\n");
  if (r.exit_code == 0 || r.timed_out) {
    throw std::runtime_error(
        "sbatch " + std::string(r.timed_out ? "did not finish" : "exited 0") +
        " without a job id minrnn can read: " + message + "\nThe job array may have been " +
        "submitted: `squeue --format='%F %k' | grep -F '" + tag + "'` lists it. Running the same " +
        "command again finds it by that comment and refuses while it is queued");
  }
  throw std::runtime_error("sbatch refused the job array (exit " + std::to_string(r.exit_code) +
                           "): " + message + "\nNothing was submitted (" + error_file.string() +
                           " says so); fix the cause and run the same command again");
}

}  // namespace

std::string live_slurm_job_note(const SweepSpec& spec, const std::string& refused) {
  int listed = 0;
  std::string job;
  try {
    job = live_slurm_job(spec.out, false, &listed);
  } catch (const std::runtime_error& e) {
    return std::string("note: whether this sweep's Slurm job is still queued is unknown: ") +
           e.what();
  }
  if (job.empty()) return "";
  return "note: Slurm job " + job + " of this sweep has " + std::to_string(listed) +
         " task(s) pending or running: the plan is as of this moment, and " + refused +
         " would be refused until they end (`" + sweep_command(spec, "--status") + "`)";
}

int submit_slurm_sweep(const SweepSpec& spec, const SweepOptions& opt) {
  const std::vector<SweepRun> runs = plan_sweep(spec);    // throws before anything is written
  if (!opt.dry_run) refuse_missing_datasets(spec, runs);  // each task would fail on the cluster
  const Submission submission = runs_to_submit(runs);
  const std::vector<std::vector<int>> packs = group_packs(spec, runs, submission.tasks);
  const fs::path dir = slurm_dir(spec.out), script = dir / "sweep.sbatch";
  // Printed once nothing can refuse the submission (every refusal before the first line).
  const auto print_header = [&] {
    const size_t busy = submission.busy.size();
    std::printf("sweep %s: %zu runs (%d already done%s) → Slurm job array of %zu task(s)%s\n",
                spec.file.c_str(), runs.size(), submission.done,
                busy ? (", " + std::to_string(busy) + " held by running processes").c_str() : "",
                packs.size(), packs.size() < submission.tasks.size() ? ", seeds in packs" : "");
    for (const std::string& line : submission.busy) std::printf("%s\n", line.c_str());
  };
  if (submission.tasks.empty()) {
    print_header();
    std::printf(
        "nothing to submit%s\n",
        submission.done > 0 ? ("; `minrnn report " + spec.out + "` makes the table").c_str() : "");
    return 0;
  }
  std::string exe = opt.exe;
  std::error_code ec;
  if (const fs::path real = fs::canonical(exe, ec); !ec) exe = real.string();
  // Before anything is written: a path no #SBATCH line can carry is refused here.
  const std::string text = slurm_batch_script(spec, runs, packs, exe);
  const std::string array = slurm_array_spec(first_runs(packs), spec.slurm.array_throttle);
  if (opt.dry_run) {
    print_header();
    print_dry_run(runs, packs, script, array);
    if (const std::string note = live_slurm_job_note(spec, "a submission now"); !note.empty())
      std::printf("%s\n", note.c_str());
    return 0;
  }
  // Every refusal before the first line, as a local sweep's.
  if (find_on_path("sbatch").empty()) {
    throw std::runtime_error(
        "--backend slurm: no `sbatch` on PATH. Run this on a Slurm login node (or start a "
        "single-node cluster with scripts/slurm-local.sh and export the SLURM_CONF it prints)");
  }
  make_sweep_dir(spec, (dir / "logs").string());
  const io::DirLock lock(spec.out, "minrnn sweep");  // one submission (or local sweep) at a time
  int listed = 0;
  if (const std::string live = live_slurm_job(spec.out, true, &listed); !live.empty()) {
    throw std::runtime_error("sweep " + spec.file + " is already submitted: Slurm job " + live +
                             " has " + std::to_string(listed) +
                             " task(s) pending or running. Wait for it (`" +
                             sweep_command(spec, "--status") + "`), or cancel it (`scancel " +
                             live + "`) before submitting again");
  }
  record_command_sets(spec);
  io::write_file_atomically(script.string(), text);
  const std::string job = sbatch(script, dir, slurm_tag(spec.out));
  record_job(job, spec, array, runs, packs);
  print_header();
  note_lookalike_datasets(runs);
  std::printf("%s\n", io::watch_line(spec.out).c_str());
  std::printf(
      "submitted Slurm job %s: %zu task(s), --array=%s, script %s\n"
      "  watch: %s   task logs: %s/<run>/train.log, %s/logs/\n",
      job.c_str(), packs.size(), array.c_str(), script.c_str(),
      sweep_command(spec, "--status").c_str(), spec.out.c_str(), dir.c_str());
  return 0;
}

}  // namespace minrnn::sweep
