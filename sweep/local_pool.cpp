// The local backend of `minrnn sweep`: each run's train and then eval phase as a child `minrnn`
// process, at most `parallel` at once (of each phase where runs train on CUDA), with
// sweep_status.json kept current and a line per finish.
#include "sweep/local_pool.h"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <deque>
#include <filesystem>
#include <map>
#include <thread>

#include "eval/sweep_runs.h"
#include "io/atomic_file.h"
#include "io/dir_lock.h"
#include "io/isolated.h"
#include "io/progress_line.h"
#include "rl/run_files.h"
#include "rl/stop_request.h"
#include "sweep/progress.h"
#include "sweep/spawn.h"

namespace minrnn::sweep {
namespace {
namespace fs = std::filesystem;

// The pool's state: which child runs which phase of which run, and the counts the status file and
// the closing lines report.
class LocalPool {
 public:
  LocalPool(const SweepSpec& spec, const SweepOptions& opt, std::vector<SweepRun> runs, int threads,
            bool evaluations_beside)
      : spec_(spec),
        opt_(opt),
        runs_(std::move(runs)),
        threads_(threads),
        total_(int(runs_.size())),
        evaluations_beside_(evaluations_beside) {
    status_.assign(total_, "pending");
    seconds_.assign(total_, 0);
    started_.assign(total_, 0);
    eval_started_.assign(total_, 0);
    eval_file_time_.assign(total_, fs::file_time_type::min());
    start_step_.assign(total_, 0);
    std::vector<int> untrained;
    for (int i = 0; i < total_; ++i) {
      if (runs_[i].state == RunState::kDone) {
        ++already_;
        status_[i] = "done (earlier)";
      } else if (runs_[i].state == RunState::kTrained) {
        to_evaluate_.push_back(i);
        start_step_[i] = runs_[i].max_steps;
      } else {
        untrained.push_back(i);
        start_step_[i] = std::min(logged_step(runs_[i].run_dir), runs_[i].max_steps);
      }
    }
    for (auto& pack : group_packs(spec_, runs_, untrained)) to_train_.push_back(std::move(pack));
    earlier_rate_ = earlier_run_steps_per_s(runs_, to_train_, spec_.parallel);
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
    const int stopped = interrupted_ + uncheckpointed_ + unevaluated_;
    const int signal = stopping_ ? rl::stop_signal() : 0;
    return {failed_, busy_, stopped, unevaluated_, uncheckpointed_, remaining(), signal};
  }

 private:
  struct Active {
    std::vector<int> runs;  // one run, or the runs a training pack holds
    bool evaluating;
  };

  double elapsed() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
  }
  int remaining() const {
    return total_ - already_ - finished_ - failed_ - busy_ - interrupted_ - uncheckpointed_ -
           unevaluated_;
  }
  // Steps: a run waiting to train is where it started; one training, where its metrics.csv is;
  // one trained (evaluating or waiting to), at its max_steps.
  std::string eta() const {
    SweepPace pace;
    pace.evaluations_left = remaining();
    pace.evaluations_here = evaluations_here_;
    pace.elapsed_s = elapsed();
    pace.evaluation_s = evaluation_seconds_;
    pace.parallel = spec_.parallel;
    pace.earlier_rate = earlier_rate_;
    auto add = [&](int i, int64_t step) {
      pace.steps_left += runs_[i].max_steps - step;
      pace.steps_trained_here += step - start_step_[i];
    };
    for (const auto& pack : to_train_)
      for (int i : pack) add(i, start_step_[i]);
    for (const auto& [pid, a] : active_)
      for (int i : a.runs) add(i, a.evaluating ? runs_[i].max_steps : current_step(i));
    for (int i : to_evaluate_) add(i, runs_[i].max_steps);
    pace.steps_trained_here += settled_steps_here_;
    const double s = eta_seconds(pace);
    return s < 0 ? "?" : io::duration_text(s);
  }
  int64_t current_step(int i) const {
    return std::min(std::max(logged_step(runs_[i].run_dir), start_step_[i]), runs_[i].max_steps);
  }
  int done() const { return already_ + finished_; }

  // Evaluations first (a trained run is a result away), then the next pack to train.
  void fill_slots() {
    while (!stopping_) {
      if (!to_evaluate_.empty() && slot_free(true)) {
        const int i = to_evaluate_.front();
        to_evaluate_.pop_front();
        start_evaluation(i);
      } else if (!to_train_.empty() && slot_free(false)) {
        start_training(to_train_.front());
        to_train_.pop_front();
      } else {
        return;
      }
    }
  }
  // evaluates_beside_training: on CUDA the next pack trains while the last one's runs are
  // evaluated (an H200, 2026-11-30: 64 evaluations in turn, ~0.9 s each, left it idle 58 s).
  bool slot_free(bool for_evaluation) const {
    if (!evaluations_beside_) return int(active_.size()) < spec_.parallel;
    const auto same_phase = [&](const auto& child) {
      return child.second.evaluating == for_evaluation;
    };
    return std::count_if(active_.begin(), active_.end(), same_phase) < spec_.parallel;
  }

  void prepare(int i) {
    fs::create_directories(runs_[i].run_dir);
    std::error_code ec;
    fs::remove(rl::RunFiles(runs_[i].run_dir).failed, ec);  // started again: not failed
  }
  std::string log_of(int i) const { return rl::RunFiles(runs_[i].run_dir).log.string(); }

  // One `minrnn train` for the pack (rl::train_pack when it holds several runs), its output in
  // the first run's train.log; the others' logs say where.
  void start_training(const std::vector<int>& pack) {
    const SweepRun& first = runs_[pack[0]];
    for (int i : pack) {
      prepare(i);
      if (i != pack[0])
        io::append_to_file(log_of(i), "$ trained in one process with " + first.run_dir + ": see " +
                                          log_of(pack[0]) + "\n");
      status_[i] =
          pack.size() > 1 ? "training (pack of " + std::to_string(pack.size()) + ")" : "training";
      started_[i] = elapsed();
    }
    const auto args = pack_train_args(runs_, pack, [](const std::string& p) { return p; });
    active_[spawn(opt_.exe, args, log_of(pack[0]), threads_)] = {pack, false};
  }

  void start_evaluation(int i) {
    prepare(i);
    const SweepRun& r = runs_[i];
    // --replace: this is the run's result (eval.json), not an ad-hoc evaluation.
    const std::vector<std::string> args = {
        "eval",     r.run_dir,         "--episodes", std::to_string(spec_.eval_episodes),
        "--device", kEvaluationDevice, "--replace"};
    if (started_[i] == 0) started_[i] = elapsed();
    eval_started_[i] = elapsed();
    eval_file_time_[i] = fs::file_time_type::clock::now();
    active_[spawn(opt_.exe, args, log_of(i), threads_)] = {{i}, true};
    status_[i] = "evaluating";
  }

  // Ctrl-C / SIGTERM: start nothing more, pass SIGTERM on, let the children checkpoint and exit.
  void stop_children() {
    stopping_ = true;
    for (int i : to_evaluate_) {
      if (status_[i] != "trained") continue;  // trained here: evaluated by the next sweep
      ++unevaluated_;
      status_[i] = "trained, not evaluated";
    }
    const std::string running = active_.empty() ? "no run is running"
                                                : std::to_string(active_.size()) +
                                                      " running run(s); each checkpoints first";
    std::printf("sweep %s: %s: stopping: %s\n", spec_.file.c_str(), rl::stop_signal_name().c_str(),
                running.c_str());
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
      for (int i : a.runs) line += (line.empty() ? "" : "; ") + training_progress(runs_[i]);
    }
    if (!line.empty()) std::printf("[%d/%d done] training: %s\n", done(), total_, line.c_str());
    last_progress_ = elapsed();
  }

  // A run's training got to its max_steps: done.json says so (a pack's exit status speaks for
  // all its runs; an --extend run holds the shorter budget's done.json until it trains).
  bool trained(int i) const {
    return rl::finished_step(rl::RunFiles(runs_[i].run_dir)) == runs_[i].max_steps;
  }

  // The evaluation `a` ran left the sweep's result in place: an eval.json written since it started
  // (a sweep evaluates only runs without one), readable, of the sweep's episodes and the run's
  // budget. So an evaluation that a stop's signal ended after its rename did finish.
  bool evaluated(const Active& a) const {
    if (!a.evaluating) return false;
    const int i = a.runs.front();
    const fs::path result = rl::RunFiles(runs_[i].run_dir).result;
    std::error_code ec;
    const auto written = fs::last_write_time(result, ec);
    if (ec || written < eval_file_time_[i]) return false;
    const eval::FinalEvaluation e = eval::read_final_evaluation(runs_[i].run_dir);
    return e.unreadable.empty() && e.episodes == spec_.eval_episodes &&
           e.train_step == runs_[i].max_steps;
  }

  // A child ended: queue each trained run's evaluation, or record how each run ended.
  void on_exit(const Active& a, int wstatus) {
    const bool ok = (WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0) || evaluated(a);
    // Stopped: checkpointed and exited 75, or killed by the sweep stopping, or by a stop signal
    // of its own before its handlers were in place (its first half second, LibTorch loading):
    // its last checkpoint stands either way, and the next sweep resumes it.
    const bool stopped_by_signal =
        (WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == rl::kExitInterrupted) ||
        (WIFSIGNALED(wstatus) && (stopping_ || rl::is_stop_signal(WTERMSIG(wstatus))));
    for (int i : a.runs) {
      seconds_[i] = elapsed() - started_[i];
      if (a.evaluating) {
        evaluation_seconds_ += elapsed() - eval_started_[i];
        ++evaluations_here_;
      }
      const int64_t step = a.evaluating || trained(i) ? runs_[i].max_steps : current_step(i);
      const bool to_evaluate = !a.evaluating && !stopping_ && (ok || trained(i));
      if (!to_evaluate) settled_steps_here_ += step - start_step_[i];
      if (!a.evaluating && (ok || trained(i))) {
        if (!stopping_) {
          to_evaluate_.push_back(i);  // trained: evaluated next
          status_[i] = "trained";
        } else {
          ++unevaluated_;  // the sweep is stopping: evaluated next time
          status_[i] = "trained, not evaluated";
        }
      } else if (ok) {
        on_done(i);
      } else if (stopped_by_signal) {
        on_stopped(i, a.evaluating);
      } else if (const long holder = io::lock_holder(runs_[i].run_dir);
                 holder >= 0 || (WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == io::kExitDirBusy)) {
        on_busy(i, holder);
      } else {
        on_failed(i, a.evaluating, wstatus);
      }
    }
  }

  void on_done(int i) {
    ++finished_;
    status_[i] = "done";
    const double score = eval::read_final_evaluation(runs_[i].run_dir).score;
    std::printf(
        "[%d/%d done] %s: normalized %.1f (%s) | %d running, %d failed, elapsed %s, ETA %s\n",
        done(), total_, run_name(runs_[i]).c_str(), score, io::duration_text(seconds_[i]).c_str(),
        int(active_.size()), failed_, io::duration_text(elapsed()).c_str(), eta().c_str());
  }

  // Stopped (this sweep's SIGTERM, or one sent to the child): not a failure; the next sweep
  // resumes it from its checkpoint, or starts it again where a stop came before its first (a
  // walk, 2026-11-30: a Ctrl-C in the first second was "stopped after checkpointing").
  void on_stopped(int i, bool evaluating) {
    const bool checkpointed = evaluating || fs::exists(rl::RunFiles(runs_[i].run_dir).checkpoint);
    ++(evaluating ? unevaluated_ : checkpointed ? interrupted_ : uncheckpointed_);
    status_[i] = evaluating     ? "trained, not evaluated"
                 : checkpointed ? "stopped (checkpointed)"
                                : "stopped (no checkpoint)";
    std::printf("[%d/%d done] %s: %s by a signal; the next sweep %s\n", done(), total_,
                run_name(runs_[i]).c_str(), evaluating ? "evaluation stopped" : "training stopped",
                checkpointed ? "resumes it" : "starts it again (no checkpoint yet)");
  }

  // Refused because another live process (a second sweep, an orphan of a killed one, a user's
  // own train) holds the run dir: that run is going on, not failed. `holder` is -1 when no
  // process holds it now: the child said a lock refused it (exit kExitDirBusy), a lock of this
  // run's, since released, or of another run of its pack; the next sweep takes the run up.
  void on_busy(int i, long holder) {
    ++busy_;
    if (holder < 0) {
      status_[i] = "not started: a run dir of its training was held by another process";
      std::printf("[%d/%d done] %s: %s (exit %d); the next sweep resumes it\n", done(), total_,
                  run_name(runs_[i]).c_str(), status_[i].c_str(), io::kExitDirBusy);
      return;
    }
    status_[i] = "running in pid " + std::to_string(holder);
    std::printf("[%d/%d done] %s: %s (another process holds %s), not started here\n", done(),
                total_, run_name(runs_[i]).c_str(), status_[i].c_str(), runs_[i].run_dir.c_str());
  }

  void on_failed(int i, bool evaluating, int wstatus) {
    ++failed_;
    status_[i] = evaluating ? "eval failed" : "train failed";
    // The shell's number for a signal (137 for kill -9), as failed.json and --status say it.
    const int code = io::exit_code_of(wstatus);
    // A failed phase leaves failed.json (what `--status` reports) until the run starts again.
    try {
      rl::write_failed(rl::RunFiles(runs_[i].run_dir), {evaluating ? "eval" : "train", code});
    } catch (const std::exception& e) {
      std::fprintf(stderr, "minrnn sweep: %s\n", e.what());  // the status line still says it
    }
    const std::string signal = WIFSIGNALED(wstatus) ? ": " + io::wait_status_text(wstatus) : "";
    std::printf("[%d/%d done] %s: %s (exit %d%s), see %s | %d failed\n", done(), total_,
                run_name(runs_[i]).c_str(), status_[i].c_str(), code, signal.c_str(),
                log_of(i).c_str(), failed_);
  }

  void write_status() const {
    write_sweep_status(spec_, runs_, status_, seconds_, done(), failed_, elapsed());
  }

  void print_closing_lines() const {
    // The report only once a run has a score to put in it.
    const std::string report =
        done() > 0 ? "; `minrnn report " + spec_.out + "` makes the table" : "";
    std::printf("sweep %s: %d/%d done, %d failed, %d running in other processes, %s%s\n",
                spec_.file.c_str(), done(), total_, failed_, busy_,
                io::duration_text(elapsed()).c_str(), report.c_str());
    // Nothing left where a stop came once every run was done (the command then exits 0).
    if (interrupted_ + uncheckpointed_ + unevaluated_ + (stopping_ ? remaining() : 0) > 0) {
      std::printf(
          "sweep %s: %s%s; the same command resumes them\n", spec_.file.c_str(),
          left_unfinished({interrupted_, uncheckpointed_, unevaluated_, remaining()}).c_str(),
          stopping_ ? (" (" + rl::stop_signal_name() + ")").c_str() : "");
    }
  }

  const SweepSpec& spec_;
  const SweepOptions& opt_;
  const std::vector<SweepRun> runs_;
  const int threads_, total_;
  const bool evaluations_beside_;     // `parallel` trainings and `parallel` evaluations at once
  std::vector<std::string> status_;   // per run, for the status file
  std::vector<double> seconds_;       // per run, wall time of its phases here
  std::vector<double> started_;       // per run, when its first phase here started
  std::vector<double> eval_started_;  // per run, when its evaluation here started
  std::vector<fs::file_time_type> eval_file_time_;  // the same, as the file system's clock
  std::vector<int64_t> start_step_;        // per run, the step it stood at when this sweep began
  std::deque<std::vector<int>> to_train_;  // packs waiting for a slot, in the plan's order
  std::deque<int> to_evaluate_;            // runs waiting for a slot, in the plan's order
  std::map<pid_t, Active> active_;
  const std::chrono::steady_clock::time_point t0_ = std::chrono::steady_clock::now();
  double last_progress_ = 0;
  int already_ = 0;                // done before this sweep started
  int finished_ = 0, failed_ = 0;  // in this invocation
  int busy_ = 0;                   // held by another process
  int interrupted_ = 0;            // training stopped by a signal after checkpointing
  int uncheckpointed_ = 0;         // training stopped by a signal before its first checkpoint
  int unevaluated_ = 0;            // trained, its evaluation not run or stopped by a signal
  bool stopping_ = false;          // this sweep got a stop signal
  // For the ETA: run-steps trained here by runs no longer pending, training or awaiting their
  // evaluation; the evaluations finished here and their wall time; the rate before (SweepPace).
  int64_t settled_steps_here_ = 0;
  int evaluations_here_ = 0;
  double evaluation_seconds_ = 0, earlier_rate_ = 0;
};

}  // namespace

SweepSummary run_local_pool(const SweepSpec& spec, const SweepOptions& opt,
                            std::vector<SweepRun> runs, int threads, bool evaluations_beside) {
  LocalPool pool(spec, opt, std::move(runs), threads, evaluations_beside);
  pool.run();
  return pool.summary();
}

}  // namespace minrnn::sweep
