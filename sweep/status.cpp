// `minrnn sweep SWEEP.yaml --status`: where every run of a sweep is, for both backends, read from
// the run directories (plus squeue/sacct for a Slurm sweep), never from a process's memory.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "eval/sweep_runs.h"
#include "io/dir_lock.h"
#include "io/python_json.h"
#include "rl/run_dir.h"
#include "rl/run_files.h"
#include "sweep/slurm.h"
#include "sweep/sweep.h"

namespace minrnn::sweep {
namespace {

namespace fs = std::filesystem;

// The statuses a live local sweep wrote for its runs, by run dir: {} when no sweep holds `out`, or
// when sweep_status.json names another pid than the holder's (an earlier sweep's file: the sweep
// holding `out` now has not written its own yet). *note says when the file is stale: another
// sweep's, or the last word of one that ended with runs in it still training (a kill -9).
std::map<std::string, std::string> live_local_statuses(const std::string& out, std::string* note) {
  std::map<std::string, std::string> by_dir;
  const fs::path file = fs::path(out) / "sweep_status.json";
  const nlohmann::json j = io::read_json_or_null(file.string());
  // A file edited or damaged by hand is no sweep's word: its entries of another shape are skipped.
  if (!j.is_object() || !j.contains("runs") || !j["runs"].is_array()) return by_dir;
  for (const auto& r : j["runs"])
    if (r.is_object() && r.value("run_dir", nlohmann::json()).is_string() &&
        r.value("status", nlohmann::json()).is_string())
      by_dir[r["run_dir"].get<std::string>()] = r["status"].get<std::string>();
  // A file of an older minrnn names no pid, a holder's unreadable pid is 0: the file is its.
  const long writer = j.contains("pid") && j["pid"].is_number_integer() ? j["pid"].get<long>() : 0;
  const long holder = io::lock_holder(out);
  if (holder >= 0 && (writer == 0 || holder == 0 || writer == holder)) return by_dir;
  const auto live = std::count_if(by_dir.begin(), by_dir.end(), [](const auto& run) {
    return run.second == "training" || run.second == "evaluating";
  });
  if (holder > 0) {
    *note = file.string() + " is an earlier sweep's (pid " + std::to_string(writer) +
            "), not that of the sweep holding " + out + " now (pid " + std::to_string(holder) +
            "): its statuses are left out, the lines below read from the run dirs";
  } else if (live > 0) {
    *note = file.string() + " is the last word of sweep " + io::holder_text(writer) +
            ", which ended without updating it (killed?): the " + std::to_string(live) +
            " run(s) it calls training or evaluating are read from their run dirs below";
  }
  return {};
}

}  // namespace

int64_t logged_step(const std::string& run_dir) {
  const auto last = rl::last_metrics_row(rl::RunFiles(run_dir).metrics);
  return last ? last->step : 0;
}

namespace {

// A run's state from its directory (done.json, eval.json, failed.json, a lock's holder, a
// checkpoint), its Slurm task's state in s.slurm and the local sweep's word for it; fills s.score
// and s.step (done) or s.failure (failed).
std::string run_state(const fs::path& dir, const std::string& local_status, RunStatus& s) {
  if (s.run.result_unreadable) {  // as the report says (eval/report.h: RunFailure)
    s.failure = s.run.mismatch + "; " + eval::kResultAwayAdvice;
    return "failed";
  }
  // A run another process trains right now is training: whatever its files say, the sweep
  // cannot touch it while that process holds it (a checkpoint copied in by hand, cut short).
  const bool held = s.pid >= 0 && s.run.cannot_go_on;
  if (!s.run.mismatch.empty() && !held) {  // the sweep refuses to run until it is dealt with
    s.failure = s.run.mismatch;
    return s.run.cannot_go_on ? "cannot_go_on" : "mismatched";
  }
  const bool slurm_running = s.slurm.rfind("RUNNING", 0) == 0;
  // A run to extend is not finished whatever its done.json says: that is the shorter budget's.
  const rl::RunFiles files(dir);
  const bool trained = fs::exists(files.done) && !s.run.extend;
  if (trained && fs::exists(files.result)) {
    s.step = s.run.max_steps;
    s.score = eval::read_final_evaluation(dir.string()).score;
    return "done";
  }
  if (s.pid >= 0 && !trained) return "training";
  const bool evaluating = trained && (slurm_running || local_status == "evaluating");
  // A trained run whose evaluation failed holds failed.json beside done.json: failed, not trained.
  const auto failed = rl::read_failed(files);
  if (failed && !slurm_running && local_status != "training" && !evaluating) {
    s.failure = failed->text();
    return "failed";
  }
  if (trained) return evaluating ? "evaluating" : "trained";
  if (slurm_running || local_status == "training") return "training";
  if (s.step > 0 || s.checkpointed) return "stopped";
  return "pending";
}

}  // namespace

std::vector<RunStatus> sweep_status(const SweepSpec& spec, std::vector<std::string>* notes) {
  const std::vector<SweepRun> runs = plan_sweep(spec, PlanMismatches::kReport);
  const SlurmJobView job = slurm_job_view(spec.out);
  bool legacy_job = false;
  const std::map<std::string, int> task_of = slurm_task_of_run(spec.out, &legacy_job);
  if (legacy_job && notes) {
    notes->push_back(
        "the Slurm job's job.json records no run per task (written by an older "
        "minrnn): its tasks are matched to runs by the sweep file's order now");
  }
  const std::map<int, std::string>& tasks = job.states;
  std::string stale_status;
  const auto local = live_local_statuses(spec.out, &stale_status);
  if (notes && !stale_status.empty()) notes->push_back(stale_status);
  std::vector<RunStatus> out;
  for (size_t i = 0; i < runs.size(); ++i) {
    RunStatus s;
    s.run = runs[i];
    const fs::path dir = s.run.run_dir;
    const rl::RunFiles files(dir);
    s.log = files.log.string();
    const auto recorded = task_of.find(slurm_run_key(s.run.run_dir));
    const int task = recorded != task_of.end() ? recorded->second : legacy_job ? int(i) : -1;
    if (const auto t = tasks.find(task); t != tasks.end()) s.slurm = t->second;
    s.slurm_queued = job.queued_tasks.count(task) > 0;
    const auto l = local.find(s.run.run_dir);
    const std::string local_status = l == local.end() ? "" : l->second;
    s.step = logged_step(s.run.run_dir);
    s.checkpointed = fs::exists(files.checkpoint);
    s.pid = io::lock_holder(dir.string());
    s.state = run_state(dir, local_status, s);
    out.push_back(s);
  }
  if (notes && !job.job_id.empty()) {
    std::vector<std::string> lines = {
        "Slurm job " + job.job_id + ": " +
        (job.queue_unknown.empty() ? std::to_string(job.queued) + " task(s) pending or running"
                                   : "queue state unknown (" + job.queue_unknown + ")")};
    if (!job.other_job.empty()) lines.push_back(job.other_job);
    notes->insert(notes->begin(), lines.begin(), lines.end());
    notes->insert(notes->end(), job.notes.begin(), job.notes.end());
  }
  // Every run another's: most likely the sweep was started with --set (or --out) this command
  // lacks, and "move it away" would be the wrong advice for every finished run (a walk,
  // 2026-11-29).
  // (Not where each run only trained fewer steps: their lines say --extend.)
  const auto other_run = [](const RunStatus& s) {
    return s.state == "mismatched" && !s.run.mismatch_in_result && !s.run.mismatch_extends;
  };
  if (notes && !out.empty() && std::all_of(out.begin(), out.end(), other_run)) {
    notes->push_back(
        "every run differs from what this command asks: if the sweep was started with other "
        "--set or --out options, give the same here; move runs away only if they are not this "
        "sweep's");
  }
  return out;
}

namespace {

nlohmann::json status_json(const SweepSpec& spec, const std::vector<RunStatus>& statuses,
                           const std::map<std::string, int>& counts,
                           const std::vector<std::string>& notes) {
  nlohmann::json j;
  j["sweep_file"] = spec.file;
  j["out"] = spec.out;
  j["command_sets"] = spec.command_sets;  // the command line's, or those it was started with
  j["total"] = statuses.size();
  j["counts"] = counts;
  j["notes"] = notes;
  j["runs"] = nlohmann::json::array();
  for (const auto& s : statuses) {
    nlohmann::json r = {{"dataset", s.run.dataset},
                        {"backbone", s.run.backbone},
                        {"seed", s.run.seed},
                        {"run_dir", s.run.run_dir},
                        {"state", s.state},
                        {"step", s.step},
                        {"max_steps", s.run.max_steps},
                        {"log", s.log}};
    if (s.state == "done") r["score"] = s.score;
    if (s.state == "stopped") r["checkpointed"] = s.checkpointed;
    if (s.pid >= 0) r["pid"] = s.pid;
    if (!s.failure.empty()) r["failure"] = s.failure;
    if (s.run.mismatch_extends) r["extends"] = true;  // --extend trains it on
    if (!s.slurm.empty()) r["slurm"] = s.slurm;
    j["runs"].push_back(r);
  }
  return j;
}

// What --status says of one run, after its name.
std::string status_words(const SweepSpec& spec, const RunStatus& s) {
  const std::string steps = std::to_string(s.step) + " of " + std::to_string(s.run.max_steps);
  if (s.state == "done") {
    char score[32];
    std::snprintf(score, sizeof score, "%.1f", s.score);
    return std::string("done, normalized ") + score;
  }
  if (s.state == "training")
    return "training step " + steps + (s.pid >= 0 ? " (pid " + std::to_string(s.pid) + ")" : "");
  if (s.state == "stopped" && s.run.extend) {
    // Finished at a smaller budget the sweep's --extend trains on: the same command line does it,
    // one without --extend refuses its config (a walk through the docs, 2026-11-29).
    return "trained to step " + std::to_string(s.step) + "; `" + sweep_command(spec, "") +
           "` trains it on to " + std::to_string(s.run.max_steps) +
           (s.checkpointed ? " from its checkpoint" : " (no checkpoint: from step 0)");
  }
  // A requeued (or not yet restarted) Slurm task of the run resumes it by itself, where a new
  // submission is refused while it is queued (a walk, 2026-11-30).
  const std::string resumer = s.slurm_queued ? "its queued Slurm task" : "the sweep run again";
  if (s.state == "stopped" && s.checkpointed && s.step >= s.run.max_steps) {
    // Trained through, its done.json lost (a walk, 2026-11-30: the report lists it in progress).
    return "trained to step " + steps + ", not marked finished (no done.json): " + resumer +
           " finishes it from its last checkpoint and evaluates it";
  }
  if (s.state == "stopped") {
    // The logged step, not the checkpoint's: a resume goes back to the last checkpoint.
    return "stopped at step " + steps +
           (s.checkpointed ? " (" + resumer + " resumes it from its last checkpoint)"
                           : " (no checkpoint: starts again at step 0)");
  }
  if (s.state == "trained") return "trained, not evaluated";
  if (s.state == "failed")
    return "failed (" + s.failure + ")" + (s.run.result_unreadable ? "" : ", log " + s.log);
  if (s.state == "cannot_go_on") return "cannot go on: " + s.failure;  // the sweep's own run
  if (s.state == "mismatched") {
    // The run is the sweep's; its result is not (over other episodes).
    if (s.run.mismatch_in_result)
      return "its " + s.failure + ": no result of this sweep; " + eval::kResultAwayAdvice;
    return "not this sweep's run (" + s.failure + "): move it away" +
           (s.run.mismatch_extends ? std::string(", or run the sweep with --extend to train it on")
                                   : std::string());
  }
  return s.state;
}

// A summary line, the notes, then a line a run.
void print_status_text(const SweepSpec& spec, const std::vector<RunStatus>& statuses,
                       const std::map<std::string, int>& counts,
                       const std::vector<std::string>& notes) {
  std::string summary;
  for (const std::string state : {"done", "training", "evaluating", "trained", "stopped", "pending",
                                  "failed", "mismatched", "cannot_go_on"}) {
    const auto n = counts.find(state);
    if (n == counts.end() || n->second == 0) continue;
    std::string word = state;
    std::replace(word.begin(), word.end(), '_', ' ');  // "2 cannot go on"
    summary += (summary.empty() ? "" : ", ") + std::to_string(n->second) + " " + word;
  }
  std::printf("sweep %s → %s: %zu runs: %s\n", spec.file.c_str(), spec.out.c_str(), statuses.size(),
              summary.c_str());
  for (const auto& n : notes) std::printf("%s\n", n.c_str());
  for (const auto& s : statuses) {
    std::printf("  %-40s %s%s%s\n", run_name(s.run).c_str(), status_words(spec, s).c_str(),
                s.slurm.empty() ? "" : "  | slurm: ", s.slurm.c_str());
  }
}

}  // namespace

int print_sweep_status(const SweepSpec& spec, bool json) {
  std::vector<std::string> notes;
  const std::vector<RunStatus> statuses = sweep_status(spec, &notes);
  std::map<std::string, int> counts;
  for (const auto& s : statuses) ++counts[s.state];
  if (json) {
    std::printf("%s\n", status_json(spec, statuses, counts, notes).dump(2).c_str());
  } else {
    print_status_text(spec, statuses, counts, notes);
  }
  return counts["failed"] + counts["mismatched"] + counts["cannot_go_on"];
}

}  // namespace minrnn::sweep
