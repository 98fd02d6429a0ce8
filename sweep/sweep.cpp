#include "sweep/sweep.h"

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "eval/csv.h"
#include "sweep/slurm.h"
#include "io/atomic_file.h"
#include "io/dir_lock.h"
#include "rl/config.h"
#include "rl/stop_request.h"

namespace minrnn::eval {
namespace {

namespace fs = std::filesystem;

std::string run_name(const SweepRun& r) {
  return r.dataset + "/" + r.backbone + "/seed" + std::to_string(r.seed);
}

std::string format_duration(double s) {
  char buf[32];
  if (s < 60)
    std::snprintf(buf, sizeof buf, "%.0fs", s);
  else if (s < 3600)
    std::snprintf(buf, sizeof buf, "%dm%02ds", int(s) / 60, int(s) % 60);
  else
    std::snprintf(buf, sizeof buf, "%dh%02dm", int(s) / 3600, int(s) % 3600 / 60);
  return buf;
}

// Starts `exe args...` with stdout and stderr appended to `log` and OMP/MKL limited to `threads`.
pid_t spawn(const std::string& exe, const std::vector<std::string>& args, const std::string& log,
            int threads) {
  const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  if (fd < 0) {
    throw std::runtime_error("cannot open log file " + log +
                             " to append to it: " + std::strerror(errno));
  }
  std::string line = "$ minrnn";
  for (const auto& a : args) line += " " + a;
  line += "\n";
  if (::write(fd, line.data(), line.size()) < 0) { /* the log is best effort */
  }
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {  // child: only async-signal-safe calls until exec
    // A run never outlives its sweep unnoticed: when the sweep dies (any signal, SIGKILL too) the
    // kernel sends the child SIGTERM; the run resumes from its checkpoint on the next sweep.
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (::getppid() != parent) ::_exit(143);  // the sweep died before prctl took effect
    ::dup2(fd, 1);
    ::dup2(fd, 2);
    const std::string t = std::to_string(threads);
    ::setenv("OMP_NUM_THREADS", t.c_str(), 1);
    ::setenv("MKL_NUM_THREADS", t.c_str(), 1);
    std::vector<char*> argv;
    static char name[] = "minrnn";
    argv.push_back(name);
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(exe.c_str(), argv.data());
    ::_exit(127);
  }
  ::close(fd);
  return pid;
}

// Where a training run is: "hopper-medium/mingru/seed0 400/2000 (2.2 steps/s, ETA 12m07s)", from
// the last row of its metrics.csv; "starting" before the first row.
std::string training_progress(const SweepRun& r) {
  Series rate;
  if (!read_csv_columns(fs::path(r.run_dir) / "metrics.csv", true, "step", "steps_per_s", -1, -1,
                        &rate)) {
    return run_name(r) + " starting";
  }
  const double step = rate.x.back(), per_s = rate.y.back();
  char buf[96];
  std::snprintf(buf, sizeof buf, " %.0f/%lld (%.1f steps/s, ETA %s)", step,
                static_cast<long long>(r.max_steps), per_s,
                per_s > 0 ? format_duration((r.max_steps - step) / per_s).c_str() : "?");
  return run_name(r) + buf;
}

void write_json_atomic(const fs::path& path, const nlohmann::json& j) {
  io::write_file_atomically(path.string(), j.dump(2) + "\n");
}

// A failed phase leaves <run_dir>/failed.json (what `--status` reports) until the run starts again.
void mark_failed(const SweepRun& r, const char* phase, int exit_code) {
  try {
    write_json_atomic(fs::path(r.run_dir) / "failed.json",
                      {{"phase", phase}, {"exit_code", exit_code}, {"pid", ::getpid()}});
  } catch (const std::exception& e) {
    std::fprintf(stderr, "minrnn sweep: %s\n", e.what());  // the status line still says it
  }
}

}  // namespace

int run_sweep(const SweepSpec& spec, const SweepOptions& opt, SweepSummary* summary) {
  std::vector<SweepRun> runs = plan_sweep(spec);
  const int total = int(runs.size());
  const int threads =
      spec.threads > 0
          ? spec.threads
          : std::max(1, int(std::thread::hardware_concurrency()) / std::max(1, spec.parallel));
  int already = 0;
  for (const auto& r : runs) already += r.state == RunState::kDone;
  std::printf("sweep %s: %d runs (%d already done), %d at a time, %d torch threads each → %s\n",
              spec.file.c_str(), total, already, spec.parallel, threads, spec.out.c_str());
  if (opt.dry_run) {
    for (const auto& r : runs) {
      std::printf("  %-40s %s  %s\n", run_name(r).c_str(),
                  r.state == RunState::kDone      ? "done"
                  : r.state == RunState::kTrained ? "trained, not evaluated"
                  : r.extend && !fs::exists(fs::path(r.run_dir) / "checkpoint.pt")
                      ? "to train again from step 0 (--extend; no checkpoint here)"
                  : r.extend ? "to train further (--extend)"
                             : "to train",
                  r.config.c_str());
    }
    return 0;
  }
  fs::create_directories(spec.out);
  const io::DirLock lock(spec.out, "minrnn sweep");  // one sweep per output dir
  // Nor beside a Slurm array of the same directory (sweep/slurm.h).
  if (const std::string job = live_slurm_job(spec.out, false); !job.empty()) {
    throw std::runtime_error(spec.out + " is being swept by Slurm job " + job +
                             " (pending or running); wait for it (`--status`) or `scancel " + job +
                             "` before sweeping it here");
  }
  // Ctrl-C / SIGTERM: start nothing more, pass SIGTERM on, let the children checkpoint and exit.
  const rl::ScopedStopHandlers stop_handlers;

  // Per-run bookkeeping for the status file.
  std::vector<std::string> status(total, "pending");
  std::vector<double> seconds(total, 0);
  for (int i = 0; i < total; ++i)
    if (runs[i].state == RunState::kDone) status[i] = "done (earlier)";
  const auto t0 = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  int finished = 0, failed = 0, busy = 0;  // in this invocation; busy: held by another process
  int interrupted = 0;                     // stopped by a signal after checkpointing
  bool stopping = false;                   // this sweep got SIGINT/SIGTERM
  double finished_seconds = 0;             // wall time of runs finished here (for the ETA)
  auto remaining = [&] { return total - already - finished - failed - busy - interrupted; };
  auto eta = [&]() -> std::string {
    if (finished == 0) return "?";
    const double per_run = finished_seconds / finished;
    return format_duration(per_run * remaining() / spec.parallel);
  };
  auto write_status = [&] {
    nlohmann::json j;
    j["sweep_file"] = spec.file;
    j["total"] = total;
    j["done"] = already + finished;
    j["failed"] = failed;
    j["elapsed_s"] = elapsed();
    j["runs"] = nlohmann::json::array();
    for (int i = 0; i < total; ++i) {
      j["runs"].push_back({{"dataset", runs[i].dataset},
                           {"backbone", runs[i].backbone},
                           {"seed", runs[i].seed},
                           {"run_dir", runs[i].run_dir},
                           {"config", runs[i].config},
                           {"status", status[i]},
                           {"seconds", seconds[i]}});
    }
    write_json_atomic(fs::path(spec.out) / "sweep_status.json", j);
  };

  struct Active {
    int run;
    bool evaluating;
    double started;
  };
  std::map<pid_t, Active> active;
  size_t next = 0;
  auto start_phase = [&](int i, bool evaluate, double started) {
    const SweepRun& r = runs[i];
    fs::create_directories(r.run_dir);
    std::error_code ec;
    fs::remove(fs::path(r.run_dir) / "failed.json", ec);  // started again: no longer failed
    std::vector<std::string> args;
    if (evaluate) {
      // --replace: this is the run's result (eval.json), not an ad-hoc evaluation.
      args = {"eval",     r.run_dir, "--episodes", std::to_string(spec.eval_episodes),
              "--device", r.device,  "--replace"};
    } else {
      args = {"train",     r.config,  "--seed", std::to_string(r.seed),
              "--run-dir", r.run_dir, "--quiet"};
      for (const auto& s : r.overrides) args.insert(args.end(), {"--set", s});
      if (r.extend) args.push_back("--extend");
    }
    const pid_t pid = spawn(opt.exe, args, (fs::path(r.run_dir) / "train.log").string(), threads);
    active[pid] = {i, evaluate, started};
    status[i] = evaluate ? "evaluating" : "training";
  };
  // Runs are minutes to hours long: between finishes, say where the training ones are.
  double last_progress = 0;
  auto print_progress = [&] {
    std::string line;
    for (const auto& [pid, a] : active) {
      if (a.evaluating) continue;
      line += (line.empty() ? "" : "; ") + training_progress(runs[a.run]);
    }
    if (!line.empty()) {
      std::printf("[%d/%d done] training: %s\n", already + finished, total, line.c_str());
    }
    last_progress = elapsed();
  };
  write_status();
  auto stop_children = [&] {
    stopping = true;
    std::printf("sweep %s: %s: stopping %zu running run(s); each checkpoints first\n",
                spec.file.c_str(), rl::stop_signal_name().c_str(), active.size());
    for (const auto& [pid, a] : active) ::kill(pid, SIGTERM);
  };
  while (true) {
    if (rl::stop_requested() && !stopping) stop_children();
    while (!stopping && int(active.size()) < spec.parallel && next < runs.size()) {
      const int i = int(next++);
      if (runs[i].state == RunState::kDone) continue;
      start_phase(i, runs[i].state == RunState::kTrained, elapsed());
    }
    if (active.empty()) break;
    write_status();
    int wstatus = 0;
    pid_t pid = 0;
    while ((pid = ::waitpid(-1, &wstatus, WNOHANG)) == 0) {
      if (rl::stop_requested() && !stopping) stop_children();
      if (elapsed() - last_progress >= opt.progress_every_s) print_progress();
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    if (pid < 0) break;
    auto it = active.find(pid);
    if (it == active.end()) continue;
    const Active a = it->second;
    active.erase(it);
    const bool ok = WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0;
    const std::string name = run_name(runs[a.run]);
    const std::string log = (fs::path(runs[a.run].run_dir) / "train.log").string();
    if (ok && !a.evaluating && !stopping) {
      start_phase(a.run, true, a.started);  // trained: evaluate next
      continue;
    }
    seconds[a.run] = elapsed() - a.started;
    const bool stopped_by_signal =
        (WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == rl::kExitInterrupted) ||
        (stopping && WIFSIGNALED(wstatus));
    if (ok && !a.evaluating) {  // trained, and the sweep is stopping: evaluated next time
      ++interrupted;
      status[a.run] = "trained, not evaluated";
    } else if (ok) {
      ++finished;
      finished_seconds += seconds[a.run];
      status[a.run] = "done";
      double score = 0;
      try {
        std::ifstream in(fs::path(runs[a.run].run_dir) / "eval.json");
        score = nlohmann::json::parse(in).at("mean_normalized").get<double>();
      } catch (const std::exception&) {
      }
      std::printf(
          "[%d/%d done] %s: normalized %.1f (%s) | %d running, %d failed, elapsed %s, "
          "ETA %s\n",
          already + finished, total, name.c_str(), score, format_duration(seconds[a.run]).c_str(),
          int(active.size()), failed, format_duration(elapsed()).c_str(), eta().c_str());
    } else if (stopped_by_signal) {
      // Checkpointed and stopped (this sweep's SIGTERM, or one sent to the child): not a failure;
      // the next sweep resumes it.
      ++interrupted;
      status[a.run] = a.evaluating ? "trained, not evaluated" : "stopped (checkpointed)";
      std::printf("[%d/%d done] %s: %s by a signal; the next sweep resumes it\n",
                  already + finished, total, name.c_str(),
                  a.evaluating ? "evaluation stopped" : "training stopped");
    } else if (const long holder = io::lock_holder(runs[a.run].run_dir); holder >= 0) {
      // Refused because another live process (a second sweep, an orphan of a killed one, a
      // user's own train) holds the run dir: that run is going on, not failed.
      ++busy;
      status[a.run] = "running in pid " + std::to_string(holder);
      std::printf("[%d/%d done] %s: %s (another process holds %s), not started here\n",
                  already + finished, total, name.c_str(), status[a.run].c_str(),
                  runs[a.run].run_dir.c_str());
    } else {
      ++failed;
      status[a.run] = a.evaluating ? "eval failed" : "train failed";
      mark_failed(runs[a.run], a.evaluating ? "eval" : "train",
                  WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 128 + WTERMSIG(wstatus));
      std::printf("[%d/%d done] %s: %s (exit %d), see %s | %d failed\n", already + finished, total,
                  name.c_str(), status[a.run].c_str(),
                  WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : -1, log.c_str(), failed);
    }
  }
  write_status();
  std::printf(
      "sweep %s: %d/%d done, %d failed, %d running in other processes, %s; `minrnn report %s` "
      "makes the table\n",
      spec.file.c_str(), already + finished, total, failed, busy,
      format_duration(elapsed()).c_str(), spec.out.c_str());
  if (interrupted > 0 || stopping) {
    std::printf(
        "sweep %s: %d run(s) stopped after checkpointing%s; the same command resumes them\n",
        spec.file.c_str(), interrupted,
        stopping ? (" (" + rl::stop_signal_name() + ")").c_str() : "");
  }
  if (summary) *summary = {failed, busy, interrupted, stopping ? rl::stop_signal() : 0};
  return failed;
}

}  // namespace minrnn::eval
