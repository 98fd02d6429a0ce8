// The files of a run directory as a training run writes them (rl/training_run.cpp): their paths,
// a new directory removed again unless the run keeps it, env.json, the rows of metrics.csv and
// evals.csv a resume redoes, and done.json.
#pragma once
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>

#include "io/atomic_dir.h"
#include "rl/dataset_env.h"
#include "rl/trainer.h"

namespace minrnn::rl {

// The files of a run directory (trainer.h says what each holds), and those the commands after
// training write there: the result `minrnn eval` writes (eval.json), a sweep's record of a
// failed phase (failed.json, removed when the run starts again) and the log a sweep's children
// write (train.log). The C++ that reads or writes them names them from here (the Slurm task's
// shell script, sweep/slurm_script.cpp, spells them out).
struct RunFiles {
  std::filesystem::path dir, checkpoint, metrics, evals, done, config, env, result, failed, log;
  explicit RunFiles(const std::filesystem::path& run_dir)
      : dir(run_dir),
        checkpoint(dir / "checkpoint.pt"),
        metrics(dir / "metrics.csv"),
        evals(dir / "evals.csv"),
        done(dir / "done.json"),
        config(dir / "config.yaml"),
        env(dir / "env.json"),
        result(dir / "eval.json"),
        failed(dir / "failed.json"),
        log(dir / "train.log") {}
  // Holds a run (config.yaml, checkpoint.pt or done.json): its files of a run's names
  // (rl::is_run_output) are its own, not a user's.
  bool holds_run() const {
    std::error_code ec;
    return std::filesystem::exists(config, ec) || std::filesystem::exists(checkpoint, ec) ||
           std::filesystem::exists(done, ec);
  }
  // Trained here (checkpoint.pt or done.json): a run's own folder, not one where a config.yaml
  // of any kind (a user's Hydra file) sits beside a checkpoint of another name (a download).
  bool trained_here() const {
    std::error_code ec;
    return std::filesystem::exists(checkpoint, ec) || std::filesystem::exists(done, ec);
  }
  // Finished and evaluated (done.json and eval.json), its last attempt not failed: a run a report
  // scores (when its eval.json reads as a result).
  bool has_result() const {
    std::error_code ec;
    return std::filesystem::exists(done, ec) && std::filesystem::exists(result, ec) &&
           !std::filesystem::exists(failed, ec);
  }
};

// Removes `dir` (when not empty) at scope exit unless keep() was called.
class RemoveUnlessKept {
 public:
  explicit RemoveUnlessKept(std::filesystem::path dir) : dir_(std::move(dir)) {}
  ~RemoveUnlessKept() {
    if (!dir_.empty()) io::remove_tree(dir_);
  }
  RemoveUnlessKept(const RemoveUnlessKept&) = delete;
  RemoveUnlessKept& operator=(const RemoveUnlessKept&) = delete;
  void keep() { dir_.clear(); }

 private:
  std::filesystem::path dir_;
};

// A run extended before to this very budget: nothing left to train.
TrainResult already_trained(const RunFiles& files, int64_t max_steps, bool quiet);

// env.json: the environment and reference scores the run is evaluated with, and the data it trains
// on (the config's `dataset`, the file it read, its steps and fingerprint).
void record_env(const RunFiles& files, const std::string& dataset, const data::Dataset& data,
                const DatasetEnv& env, bool quiet);
// A run going on (a resume, an extension) reads the data it trained on: its env.json's
// fingerprint is `data`'s. A relative `dataset` or a D4RL id read from another folder, or a file
// changed since, would train on other data and normalize states by other statistics. Why the run
// in `files` cannot go on with `data`, naming both files ("" where it can; an env.json without a
// fingerprint, from before 2026-11-29, passes); a sweep asks it before any run starts.
struct OtherData {
  std::string why;
  bool record_damaged = false;  // env.json does not read: it cannot say which data
};
OtherData why_other_data(const RunFiles& files, const data::Dataset& data);
// The same as `minrnn train`'s std::runtime_error, with what to do about it.
void check_same_data(const RunFiles& files, const data::Dataset& data);

// Why `agent`, loaded from `checkpoint`, is not this run's to score ("" where it is, or where the
// run records no environment: a bare checkpoint's folder, whose config.yaml, if any, is read only
// where a run trained there, trained_here()): it runs in another environment than the run's
// env.json names (a run without one: config.yaml's `env` where both configs set it, else its
// `dataset`, the key the environment came from), naming both; or the file that says it does not
// read. Its
// evaluation would otherwise be scored in the run's cell (a walk, 2026-11-29: a Walker2d
// checkpoint copied into a hopper run).
std::string why_other_env(const RunFiles& files, const Agent& agent, const std::string& checkpoint);

// A run going on keeps its metrics.csv: its first line must be a run's header (step,loss,...) or
// a row (a file from before the header). Throws std::runtime_error naming the file otherwise.
void check_metrics_header(const RunFiles& files);

// Rows past the checkpoint (or any at all, with none: a run killed before its first one) are
// from steps this run does again.
void drop_rows_after(const RunFiles& files, int64_t step);

// done.json: what the sweep and the report read to know the run is finished.
void write_done(const RunFiles& files, const DatasetEnv& env, int64_t step, double last_loss);

// The step done.json says the run finished at; -1 where there is none (or it cannot be read).
int64_t finished_step(const RunFiles& files);

// What failed.json says (a sweep writes it: sweep/local_pool.cpp, sweep/slurm_script.cpp). A
// field that is not there or not of its type (a hand-edited file) reads as unknown: "?" and -1.
struct FailedAttempt {
  std::string phase = "?";  // "train" or "eval"
  int exit_code = -1;
  std::string text() const;  // "train exit 1"; "? exit ?" where unknown
};
// nullopt where the run holds no failed.json (or one that is not a JSON object).
std::optional<FailedAttempt> read_failed(const RunFiles& files);
// A local sweep's failed.json for a phase that failed (with the pid of the sweep that saw it).
// Throws std::runtime_error naming the file where it cannot be written.
void write_failed(const RunFiles& files, const FailedAttempt& failed);

}  // namespace minrnn::rl
