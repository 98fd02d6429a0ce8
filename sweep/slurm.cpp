#include "sweep/slurm.h"

#include <unistd.h>

#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

#include "io/atomic_file.h"
#include "io/dir_lock.h"
#include "io/tensorboard.h"
#include "sweep/slurm_files.h"

namespace minrnn::sweep {
namespace {

namespace fs = std::filesystem;

std::string trim(std::string s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  size_t at = 0;
  while (at < s.size() && std::isspace(static_cast<unsigned char>(s[at]))) ++at;
  return s.substr(at);
}

// The job id <out>/slurm/job.json records ("" when there is none).
std::string recorded_job(const std::string& out) {
  const fs::path file = slurm_dir(out) / "job.json";
  if (!fs::exists(file)) return "";
  try {
    std::ifstream in(file);
    return nlohmann::json::parse(in).at("job_id").get<std::string>();
  } catch (const std::exception& e) {
    throw std::runtime_error(file.string() + ": unreadable (" + e.what() +
                             "); move it away to submit anew");
  }
}

// A line of squeue's or sacct's '|'-separated output as its fields, each trimmed.
std::vector<std::string> fields_of(const std::string& line) {
  std::vector<std::string> fields;
  std::stringstream in(line);
  for (std::string part; std::getline(in, part, '|');) fields.push_back(trim(part));
  return fields;
}

std::string command_message(const CommandOutput& r) {
  std::string m = trim(r.err + (r.err.empty() || r.out.empty() ? "" : "\n") + r.out);
  return m.empty() ? "(no message)" : m;
}

}  // namespace

std::string live_slurm_job(const std::string& out, bool require_squeue, int* listed) {
  if (listed) *listed = 0;
  const std::string job = recorded_job(out);
  if (job.empty()) return "";
  if (find_on_path("squeue").empty()) {
    if (!require_squeue) return "";
    throw std::runtime_error("no `squeue` on PATH: cannot tell whether Slurm job " + job +
                             " (recorded in " + (slurm_dir(out) / "job.json").string() +
                             ") is still queued");
  }
  const CommandOutput r =
      run_command({"squeue", "--noheader", "--array", "--jobs=" + job, "--format=%K|%T"});
  if (r.exit_code != 0) {
    // A job slurmctld has forgotten (finished more than MinJobAge ago) is not queued.
    if (command_message(r).find("Invalid job id") != std::string::npos) return "";
    throw std::runtime_error("cannot tell whether Slurm job " + job + " of " + out +
                             " is still queued: squeue says: " + command_message(r));
  }
  int n = 0;
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);) n += !trim(line).empty();
  if (listed) *listed = n;
  return n > 0 ? job : "";
}

std::string slurm_run_key(const std::string& run_dir) {
  return fs::absolute(run_dir).lexically_normal().string();
}

std::map<std::string, int> slurm_task_of_run(const std::string& out, bool* legacy) {
  std::map<std::string, int> task_of;
  *legacy = false;
  const fs::path file = slurm_dir(out) / "job.json";
  if (!fs::exists(file)) return task_of;
  try {
    std::ifstream in(file);
    const nlohmann::json j = nlohmann::json::parse(in);
    if (!j.contains("tasks")) {
      *legacy = true;
      return task_of;
    }
    for (const auto& t : j.at("tasks"))
      task_of[slurm_run_key(t.at("run_dir").get<std::string>())] = t.at("task").get<int>();
  } catch (const std::exception& e) {
    throw std::runtime_error(file.string() + ": unreadable tasks (" + e.what() +
                             "); expected [{\"task\": N, \"run_dir\": \"...\"}, ...]");
  }
  return task_of;
}

std::map<int, std::string> slurm_task_states(const std::string& out, std::string* job_id,
                                             std::vector<std::string>* notes) {
  std::map<int, std::string> states;
  const std::string job = recorded_job(out);
  if (job_id) *job_id = job;
  if (job.empty()) return states;
  auto note = [&](const std::string& n) {
    if (notes) notes->push_back(n);
  };
  if (find_on_path("squeue").empty()) {
    note("no `squeue` on PATH: the queue's view of Slurm job " + job + " is unknown here");
    return states;
  }
  const CommandOutput q =
      run_command({"squeue", "--noheader", "--array", "--jobs=" + job, "--format=%K|%T|%M|%R"});
  if (q.exit_code == 0) {
    std::istringstream in(q.out);
    for (std::string line; std::getline(in, line);) {
      const std::vector<std::string> f = fields_of(line);
      if (f.size() < 4 || f[0].empty() || !std::isdigit(static_cast<unsigned char>(f[0][0])))
        continue;
      const int task = std::atoi(f[0].c_str());
      states[task] = f[1] == "RUNNING" || f[1] == "COMPLETING"
                         ? f[1] + " " + f[2] + " on " + f[3]
                         : f[1] + (f[3].empty() ? "" : " " + f[3]);
    }
  } else if (command_message(q).find("Invalid job id") == std::string::npos) {
    note("squeue: " + command_message(q));
  }
  if (find_on_path("sacct").empty()) return states;
  const CommandOutput a = run_command({"sacct", "--noheader", "--parsable2", "--allocations",
                                       "--jobs=" + job, "--format=JobID,State,ExitCode,Elapsed"});
  if (a.exit_code != 0) {
    note("sacct: " + command_message(a));
    return states;
  }
  std::istringstream in(a.out);
  for (std::string line; std::getline(in, line);) {
    const std::vector<std::string> f = fields_of(line);
    const size_t underscore = f.empty() ? std::string::npos : f[0].find('_');
    if (f.size() < 4 || underscore == std::string::npos) continue;
    const std::string index = f[0].substr(underscore + 1);
    if (index.empty() || !std::isdigit(static_cast<unsigned char>(index[0]))) continue;
    const int task = std::atoi(index.c_str());
    if (!states.count(task)) states[task] = f[1] + " (exit " + f[2] + ", " + f[3] + ")";
  }
  return states;
}

namespace {

// The runs a submission leaves out (done, or trained by a live process on this host, which it
// names) and the indices of those it submits.
struct Submission {
  int done = 0, busy = 0;
  std::vector<int> tasks;
};

Submission runs_to_submit(const std::vector<SweepRun>& runs) {
  Submission s;
  for (size_t i = 0; i < runs.size(); ++i) {
    if (runs[i].state == RunState::kDone) {
      ++s.done;
    } else if (const long holder = io::lock_holder(runs[i].run_dir); holder >= 0) {
      ++s.busy;  // a live process on this host trains it; never two writers in one run dir
      std::printf("  %s: running in pid %ld here, not submitted\n", runs[i].run_dir.c_str(),
                  holder);
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

// sbatch's job id for `script`; where sbatch refuses it, <dir>/submit_error.txt says why and the
// error does too.
std::string sbatch(const fs::path& script, const fs::path& dir) {
  const fs::path error_file = dir / "submit_error.txt";
  const CommandOutput r = run_command({"sbatch", "--parsable", script.string()});
  std::string job = trim(r.out);
  job = job.substr(0, job.find(';'));  // "id;cluster" on multi-cluster set-ups
  if (r.exit_code != 0 || job.empty() || job.find_first_not_of("0123456789") != std::string::npos) {
    const std::string message = command_message(r);
    io::write_file_atomically(error_file.string(),
                              now_text() + ": sbatch " + script.string() + " failed (exit " +
                                  std::to_string(r.exit_code) + "):\n" + message + "\n");
    throw std::runtime_error("sbatch refused the job array (exit " + std::to_string(r.exit_code) +
                             "): " + message + "\nNothing was submitted (" + error_file.string() +
                             " says so); fix the cause and run the same command again");
  }
  std::error_code ec;
  fs::remove(error_file, ec);
  return job;
}

// <dir>/job.json: the job and which task trains which run dir. Unrecorded, the job could be
// submitted twice, so where it cannot be written the job is cancelled.
void record_job(const fs::path& dir, const std::string& job, const SweepSpec& spec,
                const fs::path& script, const std::string& array, const std::vector<SweepRun>& runs,
                const std::vector<std::vector<int>>& packs) {
  nlohmann::json j;
  j["job_id"] = job;
  j["submitted"] = now_text();
  j["sweep_file"] = spec.file;
  j["script"] = script.string();
  j["array"] = array;
  j["tasks"] = nlohmann::json::array();
  for (const auto& pack : packs)
    for (int i : pack)
      j["tasks"].push_back({{"task", pack[0]}, {"run_dir", runs[size_t(i)].run_dir}});
  try {
    io::write_file_atomically((dir / "job.json").string(), j.dump(2) + "\n");
  } catch (const std::exception& e) {
    run_command({"scancel", job});
    throw std::runtime_error(std::string(e.what()) + "; cancelled Slurm job " + job +
                             " again, since this sweep could not record it");
  }
}

}  // namespace

int submit_slurm_sweep(const SweepSpec& spec, const SweepOptions& opt) {
  const std::vector<SweepRun> runs = plan_sweep(spec);    // throws before anything is written
  if (!opt.dry_run) refuse_missing_datasets(spec, runs);  // each task would fail on the cluster
  const Submission submission = runs_to_submit(runs);
  const std::vector<std::vector<int>> packs = group_packs(spec, runs, submission.tasks);
  const fs::path dir = slurm_dir(spec.out), script = dir / "sweep.sbatch";
  std::printf(
      "sweep %s: %zu runs (%d already done%s) → Slurm job array of %zu task(s)%s\n",
      spec.file.c_str(), runs.size(), submission.done,
      submission.busy ? (", " + std::to_string(submission.busy) + " running here").c_str() : "",
      packs.size(), packs.size() < submission.tasks.size() ? ", seeds in packs" : "");
  if (submission.tasks.empty()) {
    std::printf("nothing to submit; `minrnn report %s` makes the table\n", spec.out.c_str());
    return 0;
  }
  std::string exe = opt.exe;
  std::error_code ec;
  if (const fs::path real = fs::canonical(exe, ec); !ec) exe = real.string();
  // Before anything is written: a path no #SBATCH line can carry is refused here.
  const std::string text = slurm_batch_script(spec, runs, packs, exe);
  if (!opt.dry_run) std::printf("%s\n", io::watch_line(spec.out).c_str());
  const std::string array = slurm_array_spec(first_runs(packs), spec.slurm.array_throttle);
  if (opt.dry_run) {
    print_dry_run(runs, packs, script, array);
    return 0;
  }
  if (find_on_path("sbatch").empty()) {
    throw std::runtime_error(
        "--backend slurm: no `sbatch` on PATH. Run this on a Slurm login node (or start a "
        "single-node cluster with scripts/slurm-local.sh and export the SLURM_CONF it prints)");
  }
  fs::create_directories(dir / "logs");
  const io::DirLock lock(spec.out, "minrnn sweep");  // one submission (or local sweep) at a time
  int listed = 0;
  if (const std::string live = live_slurm_job(spec.out, true, &listed); !live.empty()) {
    throw std::runtime_error(
        "sweep " + spec.file + " is already submitted: Slurm job " + live + " has " +
        std::to_string(listed) + " task(s) pending or running. Wait for it (`minrnn sweep " +
        spec.file + " --status`), or cancel it (`scancel " + live + "`) before submitting again");
  }
  io::write_file_atomically(script.string(), text);
  const std::string job = sbatch(script, dir);
  record_job(dir, job, spec, script, array, runs, packs);
  std::printf(
      "submitted Slurm job %s: %zu task(s), --array=%s, script %s\n"
      "  watch: minrnn sweep %s --status   task logs: %s/<run>/train.log, %s/logs/\n",
      job.c_str(), packs.size(), array.c_str(), script.c_str(), spec.file.c_str(), spec.out.c_str(),
      dir.c_str());
  return 0;
}

}  // namespace minrnn::sweep
