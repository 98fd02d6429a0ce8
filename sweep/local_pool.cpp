// The local backend of `minrnn sweep`: each run's train and then eval phase as a child `minrnn`
// process, at most `parallel` at once, with sweep_status.json kept current and a line per finish.
#include "sweep/local_pool.h"

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
#include <stdexcept>
#include <thread>

#include "eval/csv.h"
#include "io/atomic_file.h"
#include "io/dir_lock.h"
#include "rl/stop_request.h"

namespace minrnn::sweep {
namespace {

namespace fs = std::filesystem;

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
  eval::Series rate;
  if (!eval::read_csv_columns(fs::path(r.run_dir) / "metrics.csv", true, "step", "steps_per_s", -1,
                              -1, &rate)) {
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

// The pool's state: which child runs which phase of which run, and the counts the status file and
// the closing lines report.
class LocalPool {
 public:
  LocalPool(const SweepSpec& spec, const SweepOptions& opt, std::vector<SweepRun> runs, int threads)
      : spec_(spec),
        opt_(opt),
        runs_(std::move(runs)),
        threads_(threads),
        total_(int(runs_.size())) {
    status_.assign(total_, "pending");
    seconds_.assign(total_, 0);
    for (int i = 0; i < total_; ++i) {
      if (runs_[i].state != RunState::kDone) continue;
      ++already_;
      status_[i] = "done (earlier)";
    }
  }

  // Until every run has finished, failed, is held elsewhere or stopped on a signal.
  void run() {
    write_status();
    while (true) {
      if (rl::stop_requested() && !stopping_) stop_children();
      fill_slots();
      if (active_.empty()) break;
      write_status();
      int wstatus = 0;
      const pid_t pid = wait_for_child(&wstatus);
      if (pid < 0) break;
      auto it = active_.find(pid);
      if (it == active_.end()) continue;
      const Active a = it->second;
      active_.erase(it);
      on_exit(a, wstatus);
    }
    write_status();
    print_closing_lines();
  }

  SweepSummary summary() const {
    return {failed_, busy_, interrupted_, stopping_ ? rl::stop_signal() : 0};
  }

 private:
  struct Active {
    int run;
    bool evaluating;
    double started;
  };

  double elapsed() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
  }
  int remaining() const { return total_ - already_ - finished_ - failed_ - busy_ - interrupted_; }
  std::string eta() const {
    if (finished_ == 0) return "?";
    return format_duration(finished_seconds_ / finished_ * remaining() / spec_.parallel);
  }
  int done() const { return already_ + finished_; }

  void fill_slots() {
    while (!stopping_ && int(active_.size()) < spec_.parallel && next_ < runs_.size()) {
      const int i = int(next_++);
      if (runs_[i].state == RunState::kDone) continue;
      start_phase(i, runs_[i].state == RunState::kTrained, elapsed());
    }
  }

  void start_phase(int i, bool evaluate, double started) {
    const SweepRun& r = runs_[i];
    fs::create_directories(r.run_dir);
    std::error_code ec;
    fs::remove(fs::path(r.run_dir) / "failed.json", ec);  // started again: no longer failed
    std::vector<std::string> args;
    if (evaluate) {
      // --replace: this is the run's result (eval.json), not an ad-hoc evaluation.
      args = {"eval",     r.run_dir, "--episodes", std::to_string(spec_.eval_episodes),
              "--device", r.device,  "--replace"};
    } else {
      args = {"train",     r.config,  "--seed", std::to_string(r.seed),
              "--run-dir", r.run_dir, "--quiet"};
      for (const auto& s : r.overrides) args.insert(args.end(), {"--set", s});
      if (r.extend) args.push_back("--extend");
    }
    const pid_t pid = spawn(opt_.exe, args, (fs::path(r.run_dir) / "train.log").string(), threads_);
    active_[pid] = {i, evaluate, started};
    status_[i] = evaluate ? "evaluating" : "training";
  }

  // Ctrl-C / SIGTERM: start nothing more, pass SIGTERM on, let the children checkpoint and exit.
  void stop_children() {
    stopping_ = true;
    std::printf("sweep %s: %s: stopping %zu running run(s); each checkpoints first\n",
                spec_.file.c_str(), rl::stop_signal_name().c_str(), active_.size());
    for (const auto& [pid, a] : active_) ::kill(pid, SIGTERM);
  }

  // The next child to end; meanwhile passes a stop on and prints where the runs are.
  pid_t wait_for_child(int* wstatus) {
    pid_t pid = 0;
    while ((pid = ::waitpid(-1, wstatus, WNOHANG)) == 0) {
      if (rl::stop_requested() && !stopping_) stop_children();
      if (elapsed() - last_progress_ >= opt_.progress_every_s) print_progress();
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    return pid;
  }

  // Runs are minutes to hours long: between finishes, say where the training ones are.
  void print_progress() {
    std::string line;
    for (const auto& [pid, a] : active_) {
      if (a.evaluating) continue;
      line += (line.empty() ? "" : "; ") + training_progress(runs_[a.run]);
    }
    if (!line.empty()) std::printf("[%d/%d done] training: %s\n", done(), total_, line.c_str());
    last_progress_ = elapsed();
  }

  // One phase ended: start the evaluation after a training, or record how the run ended.
  void on_exit(const Active& a, int wstatus) {
    const bool ok = WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0;
    if (ok && !a.evaluating && !stopping_) {
      start_phase(a.run, true, a.started);  // trained: evaluate next
      return;
    }
    seconds_[a.run] = elapsed() - a.started;
    const bool stopped_by_signal =
        (WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == rl::kExitInterrupted) ||
        (stopping_ && WIFSIGNALED(wstatus));
    if (ok && !a.evaluating) {  // trained, and the sweep is stopping: evaluated next time
      ++interrupted_;
      status_[a.run] = "trained, not evaluated";
    } else if (ok) {
      on_done(a.run);
    } else if (stopped_by_signal) {
      on_stopped(a);
    } else if (const long holder = io::lock_holder(runs_[a.run].run_dir); holder >= 0) {
      on_busy(a.run, holder);
    } else {
      on_failed(a, wstatus);
    }
  }

  void on_done(int i) {
    ++finished_;
    finished_seconds_ += seconds_[i];
    status_[i] = "done";
    double score = 0;
    try {
      std::ifstream in(fs::path(runs_[i].run_dir) / "eval.json");
      score = nlohmann::json::parse(in).at("mean_normalized").get<double>();
    } catch (const std::exception&) {
    }
    std::printf(
        "[%d/%d done] %s: normalized %.1f (%s) | %d running, %d failed, elapsed %s, ETA %s\n",
        done(), total_, run_name(runs_[i]).c_str(), score, format_duration(seconds_[i]).c_str(),
        int(active_.size()), failed_, format_duration(elapsed()).c_str(), eta().c_str());
  }

  // Checkpointed and stopped (this sweep's SIGTERM, or one sent to the child): not a failure; the
  // next sweep resumes it.
  void on_stopped(const Active& a) {
    ++interrupted_;
    status_[a.run] = a.evaluating ? "trained, not evaluated" : "stopped (checkpointed)";
    std::printf("[%d/%d done] %s: %s by a signal; the next sweep resumes it\n", done(), total_,
                run_name(runs_[a.run]).c_str(),
                a.evaluating ? "evaluation stopped" : "training stopped");
  }

  // Refused because another live process (a second sweep, an orphan of a killed one, a user's
  // own train) holds the run dir: that run is going on, not failed.
  void on_busy(int i, long holder) {
    ++busy_;
    status_[i] = "running in pid " + std::to_string(holder);
    std::printf("[%d/%d done] %s: %s (another process holds %s), not started here\n", done(),
                total_, run_name(runs_[i]).c_str(), status_[i].c_str(), runs_[i].run_dir.c_str());
  }

  void on_failed(const Active& a, int wstatus) {
    ++failed_;
    status_[a.run] = a.evaluating ? "eval failed" : "train failed";
    mark_failed(runs_[a.run], a.evaluating ? "eval" : "train",
                WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 128 + WTERMSIG(wstatus));
    const std::string log = (fs::path(runs_[a.run].run_dir) / "train.log").string();
    std::printf("[%d/%d done] %s: %s (exit %d), see %s | %d failed\n", done(), total_,
                run_name(runs_[a.run]).c_str(), status_[a.run].c_str(),
                WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : -1, log.c_str(), failed_);
  }

  void write_status() const {
    nlohmann::json j;
    j["sweep_file"] = spec_.file;
    j["total"] = total_;
    j["done"] = done();
    j["failed"] = failed_;
    j["elapsed_s"] = elapsed();
    j["runs"] = nlohmann::json::array();
    for (int i = 0; i < total_; ++i) {
      j["runs"].push_back({{"dataset", runs_[i].dataset},
                           {"backbone", runs_[i].backbone},
                           {"seed", runs_[i].seed},
                           {"run_dir", runs_[i].run_dir},
                           {"config", runs_[i].config},
                           {"status", status_[i]},
                           {"seconds", seconds_[i]}});
    }
    write_json_atomic(fs::path(spec_.out) / "sweep_status.json", j);
  }

  void print_closing_lines() const {
    std::printf(
        "sweep %s: %d/%d done, %d failed, %d running in other processes, %s; `minrnn report %s` "
        "makes the table\n",
        spec_.file.c_str(), done(), total_, failed_, busy_, format_duration(elapsed()).c_str(),
        spec_.out.c_str());
    if (interrupted_ > 0 || stopping_) {
      std::printf(
          "sweep %s: %d run(s) stopped after checkpointing%s; the same command resumes them\n",
          spec_.file.c_str(), interrupted_,
          stopping_ ? (" (" + rl::stop_signal_name() + ")").c_str() : "");
    }
  }

  const SweepSpec& spec_;
  const SweepOptions& opt_;
  const std::vector<SweepRun> runs_;
  const int threads_, total_;
  std::vector<std::string> status_;  // per run, for the status file
  std::vector<double> seconds_;      // per run, wall time of its phases here
  std::map<pid_t, Active> active_;
  size_t next_ = 0;  // the next run to start
  const std::chrono::steady_clock::time_point t0_ = std::chrono::steady_clock::now();
  double last_progress_ = 0;
  int already_ = 0;                // done before this sweep started
  int finished_ = 0, failed_ = 0;  // in this invocation
  int busy_ = 0;                   // held by another process
  int interrupted_ = 0;            // stopped by a signal after checkpointing
  bool stopping_ = false;          // this sweep got SIGINT/SIGTERM
  double finished_seconds_ = 0;    // wall time of runs finished here (for the ETA)
};

}  // namespace

SweepSummary run_local_pool(const SweepSpec& spec, const SweepOptions& opt,
                            std::vector<SweepRun> runs, int threads) {
  LocalPool pool(spec, opt, std::move(runs), threads);
  pool.run();
  return pool.summary();
}

}  // namespace minrnn::sweep
