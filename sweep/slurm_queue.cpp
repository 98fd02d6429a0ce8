// What squeue and sacct say of a sweep's job (sweep/slurm.h): whether it is still queued, and each
// array task's state. A line counts only where its comment is the sweep's tag (slurm_tag): after
// a cluster restart reuses job ids, the recorded id may name someone else's job.
#include <pwd.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "io/text.h"
#include "sweep/slurm.h"
#include "sweep/slurm_files.h"

namespace minrnn::sweep {
namespace {

namespace fs = std::filesystem;

std::chrono::milliseconds g_timeout = std::chrono::seconds(60);

// A line of squeue's or sacct's '|'-separated output as its `n` fields, each trimmed, the last
// holding the rest of the line (a comment may hold '|'), missing ones "" (a job.json older than
// tags asks no comment).
std::vector<std::string> fields_of(const std::string& line, size_t n) {
  std::vector<std::string> fields;
  size_t at = 0;
  for (size_t i = 0; i + 1 < n && at != std::string::npos; ++i) {
    const size_t bar = line.find('|', at);
    fields.push_back(io::trimmed(line.substr(at, bar == std::string::npos ? bar : bar - at)));
    at = bar == std::string::npos ? bar : bar + 1;
  }
  if (at != std::string::npos) fields.push_back(io::trimmed(line.substr(at)));
  fields.resize(n);
  return fields;
}

bool is_index(const std::string& s) {
  return !s.empty() && s.find_first_not_of("0123456789") == std::string::npos;
}

// squeue's lines of the recorded job's array tasks that carry the sweep's tag (any, for a job.json
// older than tags), as index → [state, time, reason or nodes]; *unknown says why squeue could not
// tell, *other names the job that now has the id.
std::map<int, std::vector<std::string>> queued_tasks(const RecordedJob& job, std::string* unknown,
                                                     std::string* other) {
  std::map<int, std::vector<std::string>> tasks;
  if (find_on_path("squeue").empty()) {
    *unknown = "no `squeue` on PATH";
    return tasks;
  }
  const CommandOutput r = run_slurm_command(
      {"squeue", "--noheader", "--array", "--jobs=" + job.id, "--format=%K|%T|%M|%R|%k"});
  if (r.exit_code != 0) {
    // A job slurmctld has forgotten (finished more than MinJobAge ago) is not queued.
    if (!r.timed_out && command_message(r).find("Invalid job id") != std::string::npos)
      return tasks;
    *unknown = "squeue says: " + command_message(r);
    return tasks;
  }
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);) {
    const std::vector<std::string> f = fields_of(line, 5);
    if (!is_index(f[0])) continue;
    if (!job.tag.empty() && f[4] != job.tag) {
      *other = "squeue lists job " + job.id + " with the comment '" + f[4] + "', not '" + job.tag +
               "': the id is another job's now, this sweep's has left the queue";
      continue;
    }
    tasks[std::atoi(f[0].c_str())] = {f[1], f[2], f[3]};
  }
  return tasks;
}

// The jobs squeue lists with `tag` as their comment, each with its number of tasks; throws where
// squeue cannot tell.
std::map<std::string, int> tagged_jobs(const std::string& tag, const std::string& context) {
  // This user's jobs only: a sweep's job is its submitter's, and a big cluster lists many.
  std::vector<std::string> argv = {"squeue", "--noheader", "--array", "--format=%F|%k"};
  if (const passwd* user = ::getpwuid(::getuid()); user != nullptr)
    argv.push_back(std::string("--user=") + user->pw_name);
  const CommandOutput r = run_slurm_command(argv);
  if (r.exit_code != 0) {
    throw std::runtime_error(context + ": cannot tell whether a job of this sweep is queued: " +
                             "squeue says: " + command_message(r));
  }
  std::map<std::string, int> jobs;
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);) {
    const std::vector<std::string> f = fields_of(line, 2);
    if (is_index(f[0]) && f[1] == tag) ++jobs[f[0]];
  }
  return jobs;
}

// Where job.json is missing (or unreadable: `unreadable` says why), a queued job carrying the
// sweep's tag: "" with none; throws for an unreadable job.json, naming the job where there is one,
// else saying that moving the file away is safe.
std::string live_tagged_job(const std::string& out, const std::string& unreadable, int* listed) {
  const std::string tag = slurm_tag(out);
  const std::map<std::string, int> jobs =
      tagged_jobs(tag, unreadable.empty() ? "sweep " + out : unreadable);
  if (!unreadable.empty()) {
    if (jobs.empty()) {
      throw std::runtime_error(unreadable + ". squeue lists no job with this sweep's comment '" +
                               tag + "': move the file away to submit anew");
    }
    throw std::runtime_error(unreadable + ". Slurm job " + jobs.begin()->first +
                             ", with this sweep's comment '" + tag +
                             "', is still queued: wait for it or `scancel " + jobs.begin()->first +
                             "`, then move the file away");
  }
  if (jobs.empty()) return "";
  if (listed) *listed = jobs.begin()->second;
  return jobs.begin()->first;
}

// sacct's states of the tasks squeue no longer lists, where the cluster keeps accounting.
void add_accounted_states(const std::string& job, SlurmJobView& view) {
  if (find_on_path("sacct").empty()) return;
  const CommandOutput a =
      run_slurm_command({"sacct", "--noheader", "--parsable2", "--allocations", "--jobs=" + job,
                         "--format=JobID,State,ExitCode,Elapsed"});
  if (a.exit_code != 0) {
    const std::string m = command_message(a);
    view.notes.push_back(m.find("accounting storage is disabled") != std::string::npos
                             ? "no Slurm accounting here (sacct): tasks that have left the queue "
                               "show no Slurm state"
                             : "sacct says: " + m);
    return;
  }
  std::istringstream in(a.out);
  for (std::string line; std::getline(in, line);) {
    const std::vector<std::string> f = fields_of(line, 4);
    const size_t underscore = f[0].find('_');
    if (underscore == std::string::npos) continue;
    const std::string index = f[0].substr(underscore + 1);
    if (!is_index(index)) continue;  // "12_[3-5]": tasks not started yet
    const int task = std::atoi(index.c_str());
    if (!view.states.count(task)) view.states[task] = f[1] + " (exit " + f[2] + ", " + f[3] + ")";
  }
}

}  // namespace

void set_slurm_command_timeout(std::chrono::milliseconds timeout) {
  g_timeout = timeout;
}

CommandOutput run_slurm_command(const std::vector<std::string>& argv) {
  CommandOutput r = run_command(argv, g_timeout);
  if (r.timed_out) {
    const auto ms = g_timeout.count();
    r.err = argv[0] + " did not answer within " +
            (ms % 1000 ? std::to_string(ms) + " ms" : std::to_string(ms / 1000) + " s") +
            " (stopped); is slurmctld reachable?" + (r.err.empty() ? "" : " It said: " + r.err);
  }
  return r;
}

std::string command_message(const CommandOutput& r) {
  std::string m = io::trimmed(r.err + (r.err.empty() || r.out.empty() ? "" : "\n") + r.out);
  return m.empty() ? "(no message)" : m;
}

std::string live_slurm_job(const std::string& out, bool require_squeue, int* listed) {
  if (listed) *listed = 0;
  RecordedJob job;
  std::string unreadable;
  try {
    job = read_recorded_job(out);
  } catch (const std::runtime_error& e) {
    unreadable = e.what();
  }
  const bool have_squeue = !find_on_path("squeue").empty();
  if (job.id.empty()) {  // no job.json, or an unreadable one: look for the sweep's tag instead
    if (!have_squeue && !unreadable.empty()) {
      throw std::runtime_error(unreadable +
                               ". No `squeue` on PATH to tell whether this sweep's job is queued");
    }
    return have_squeue && (require_squeue || !unreadable.empty())
               ? live_tagged_job(out, unreadable, listed)
               : "";
  }
  if (!have_squeue && !require_squeue) {
    // A sweep folder back from a cluster, most likely; but one the cluster shares would have its
    // tasks and this sweep train the same runs (pending tasks hold no run's lock).
    std::fprintf(stderr,
                 "note: %s records Slurm job %s, and no `squeue` here tells whether it still "
                 "runs: if it does (this folder shared with the cluster), stop one of the two\n",
                 (slurm_dir(out) / "job.json").c_str(), job.id.c_str());
    return "";
  }
  std::string unknown, other;
  const auto tasks = queued_tasks(job, &unknown, &other);
  if (!unknown.empty()) {
    throw std::runtime_error("cannot tell whether Slurm job " + job.id + " (recorded in " +
                             (slurm_dir(out) / "job.json").string() +
                             ") is still queued: " + unknown);
  }
  if (listed) *listed = int(tasks.size());
  if (!tasks.empty()) return job.id;
  // A job submitted by hand (`sbatch <out>/slurm/sweep.sbatch`, as docs/sweeps.md offers) carries
  // the sweep's tag, not job.json's id.
  return live_tagged_job(out, "", listed);
}

// Where the recorded job has left the queue, a job of the sweep's tag that has not (its script
// submitted again by hand): its id, or "" (also where squeue cannot list the user's jobs: the
// view then shows the recorded job alone, as before such jobs were looked for).
std::string resubmitted_job(const RecordedJob& job, const std::string& out) {
  try {
    for (const auto& [id, tasks] : tagged_jobs(job.tag.empty() ? slurm_tag(out) : job.tag, out))
      if (id != job.id) return id;
  } catch (const std::runtime_error&) {
  }
  return "";
}

SlurmJobView slurm_job_view(const std::string& out) {
  SlurmJobView view;
  RecordedJob job = read_recorded_job(out);
  view.job_id = job.id;
  if (job.id.empty()) return view;
  auto queued = queued_tasks(job, &view.queue_unknown, &view.other_job);
  if (queued.empty() && view.queue_unknown.empty()) {
    if (const std::string again = resubmitted_job(job, out); !again.empty()) {
      view.notes.push_back("Slurm job " + again + " carries this sweep's comment: its script (" +
                           (slurm_dir(out) / "sweep.sbatch").string() +
                           ") submitted again, by hand; job.json records job " + job.id);
      job.id = view.job_id = again;
      view.other_job.clear();
      queued = queued_tasks(job, &view.queue_unknown, &view.other_job);
    }
  }
  for (const auto& [task, fields] : queued) {
    const std::string& state = fields[0];
    view.states[task] = state == "RUNNING" || state == "COMPLETING"
                            ? state + " " + fields[1] + " on " + fields[2]
                            : state + (fields[2].empty() ? "" : " " + fields[2]);
    view.queued_tasks.insert(task);
    ++view.queued;
  }
  // sacct only for tasks that have left the queue, and never for an id that is another job's now.
  std::set<int> gone;
  for (const auto& [dir, task] : job.task_of_run)
    if (!view.states.count(task)) gone.insert(task);
  if (view.queue_unknown.empty() && view.other_job.empty() && (job.legacy || !gone.empty()))
    add_accounted_states(job.id, view);
  return view;
}

}  // namespace minrnn::sweep
