#include "rl/run_dir.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "io/atomic_file.h"
#include "io/csv.h"
#include "io/input_file.h"
#include "io/text.h"
#include "rl/agent.h"
#include "rl/run_files.h"

namespace minrnn::rl {
namespace {

namespace fs = std::filesystem;

void remove_run_outputs(const fs::path& run) {
  if (!fs::is_directory(run)) return;
  std::vector<fs::path> outputs;
  for (const auto& entry : fs::directory_iterator(run))
    if (!entry.is_directory() && is_run_output(entry.path().filename().string()))
      outputs.push_back(entry.path());
  for (const fs::path& output : outputs) fs::remove(output);
}

// The first file of a run's names in `run` where it holds no run (config.yaml, checkpoint.pt or
// done.json); "" otherwise.
std::string run_output_without_run(const fs::path& run) {
  std::error_code ec;
  if (!fs::is_directory(run, ec) || RunFiles(run).holds_run()) return "";
  for (const auto& entry : fs::directory_iterator(run, ec)) {
    const std::string name = entry.path().filename().string();
    if (is_run_output(name)) return name;
  }
  return "";
}

// Rewrites a run's CSV with the rows whose step `keep` accepts and, with `header`, a first line
// that is no row (the header; a file from before it had one keeps its rows alone). Lines that are
// no row elsewhere (a torn write's remains) go.
template <class KeepStep>
void keep_rows(const std::string& csv, bool header, KeepStep keep) {
  const auto lines = io::read_complete_lines(csv);
  std::string kept;
  for (size_t i = 0; i < lines.size(); ++i) {
    const int64_t step = row_step(lines[i]);
    if (step >= 0 ? keep(step) : header && i == 0) kept += lines[i] + "\n";
  }
  io::write_file_atomically(csv, kept);
}

void remove_row(const fs::path& csv, int64_t step, bool header) {
  if (fs::exists(csv)) keep_rows(csv.string(), header, [step](int64_t s) { return s != step; });
}

// run/<stem>.json, or run/<stem>-2.json, -3 … where that is taken: a kept result never replaces
// another (a plain eval of the same step, made before the run finished, may hold the name).
fs::path unused_json_name(const fs::path& run, const std::string& stem) {
  fs::path path = run / (stem + ".json");
  for (int n = 2; fs::exists(path); ++n) path = run / (stem + "-" + std::to_string(n) + ".json");
  return path;
}

// Keeps what a finished run reported under its step before training goes on. Without a
// checkpoint training starts again from step 0 and would rewrite the curves, so they are kept too.
// Safe to repeat after a kill part-way: done.json, which marks the run finished, moves last.
void keep_finished_results(const fs::path& run, int64_t step, const TrainConfig& cfg) {
  const std::string at = "-step" + std::to_string(step);
  const RunFiles files(run);
  const fs::path& ckpt = files.checkpoint;
  if (fs::exists(ckpt)) {
    const std::string kept_ckpt = (run / ("checkpoint" + at + ".pt")).string();
    io::replace_file_atomically(kept_ckpt, [&](const std::string& tmp) {
      fs::copy_file(ckpt, tmp, fs::copy_options::overwrite_existing);
    });
    // The finished run logged and evaluated at its last step whatever the cadence; a run given the
    // larger budget from the start did not, so those rows go (eval-step<N>.json keeps the score).
    if (step % std::max<int64_t>(1, cfg.log_every) != 0) remove_row(files.metrics, step, true);
    if (cfg.eval_every <= 0 || step % cfg.eval_every != 0) remove_row(files.evals, step, true);
  } else {
    for (const char* curve : {"metrics", "evals"}) {
      const fs::path file = run / (std::string(curve) + ".csv");
      if (fs::exists(file)) fs::rename(file, run / (curve + at + ".csv"));
    }
  }
  if (fs::exists(files.result)) fs::rename(files.result, unused_json_name(run, "eval" + at));
  // The ad-hoc evaluations of the finished checkpoint (eval-episodes3.json) are named for its
  // step as `minrnn eval` names those of other checkpoints, so the extended run's do not replace
  // them.
  std::vector<std::string> adhoc;
  for (const auto& entry : fs::directory_iterator(run)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("eval-", 0) == 0 && entry.path().extension() == ".json" &&
        name.rfind("eval-step", 0) != 0 && name.rfind("eval-checkpoint-", 0) != 0)
      adhoc.push_back(name);
  }
  for (const std::string& name : adhoc) {
    const std::string rest = name.substr(4, name.size() - 4 - 5);  // "-episodes3" of eval-…json
    fs::rename(run / name, unused_json_name(run, "eval" + at + rest));
  }
  fs::rename(files.done, run / ("done" + at + ".json"));
}

}  // namespace

int64_t row_step(const std::string& line) {
  char* end = nullptr;
  const long long step = std::strtoll(line.c_str(), &end, 10);
  return end != line.c_str() && *end == ',' ? step : -1;
}

void truncate_rows(const std::string& path, int64_t step, bool header) {
  keep_rows(path, header, [step](int64_t s) { return s <= step; });
}

bool has_row(const std::string& path, int64_t step) {
  for (const auto& line : io::read_complete_lines(path))
    if (row_step(line) == step) return true;
  return false;
}

const std::vector<std::string>& metrics_columns() {
  static const std::vector<std::string> columns = {kStepColumn, kLossColumn,   "lr",
                                                   "grad_norm", "steps_per_s", "elapsed_s"};
  return columns;
}

const std::vector<std::string>& evals_columns() {
  static const std::vector<std::string> columns = {kStepColumn, "mean_return", "std_return",
                                                   kMeanNormalizedColumn, "std_normalized"};
  return columns;
}

std::string header_line(const std::vector<std::string>& columns) {
  return io::csv_line(columns);
}

std::string row_line(const RunRow& row, const char* format) {
  std::vector<std::string> cells = {std::to_string(row.step)};
  for (size_t i = 1; i < row.values.size(); ++i) {
    char cell[64] = "";
    if (row.values[i]) std::snprintf(cell, sizeof cell, format, *row.values[i]);
    cells.emplace_back(cell);
  }
  return io::csv_line(cells);
}

namespace {

// A row's step and the value in each cell at `at` (-1: a column the file lacks); nullopt where the
// first cell is no whole number of steps.
std::optional<RunRow> row_of(const std::vector<std::string>& cells, const std::vector<int>& at) {
  char* end = nullptr;
  const long long step = std::strtoll(cells[0].c_str(), &end, 10);
  if (cells[0].empty() || *end != '\0' || step < 0) return std::nullopt;
  RunRow row{step, {}};
  for (const int col : at) {
    const bool there = col >= 0 && static_cast<size_t>(col) < cells.size();
    row.values.push_back(there ? io::number_in(cells[col]) : std::nullopt);
  }
  return row;
}

}  // namespace

std::vector<RunRow> run_rows(const std::string& csv, const std::vector<std::string>& columns) {
  const io::CsvRows file = io::read_csv_rows(csv, columns);
  std::vector<int> at;  // each of `columns` in the file
  for (const std::string& name : columns) at.push_back(file.column(name));
  std::vector<RunRow> rows;
  for (const io::CsvRows::Row& line : file.rows)
    if (std::optional<RunRow> row = row_of(line.cells, at)) rows.push_back(std::move(*row));
  return rows;
}

std::optional<RunRow> row_in_line(const std::string& line,
                                  const std::vector<std::string>& columns) {
  std::vector<int> at(columns.size());
  for (size_t i = 0; i < at.size(); ++i) at[i] = static_cast<int>(i);
  const bool newline = !line.empty() && line.back() == '\n';
  return row_of(io::csv_cells(newline ? line.substr(0, line.size() - 1) : line), at);
}

std::vector<MetricsRow> metrics_rows(const std::string& metrics) {
  std::vector<MetricsRow> rows;
  // A cell that is not there or no number reads 0: a run's pace or ETA is a guess, not a record.
  const auto value = [](const RunRow& row, size_t i) { return row.values[i].value_or(0); };
  for (const RunRow& row : run_rows(metrics, metrics_columns())) {
    rows.push_back(
        {row.step, value(row, 1), value(row, 2), value(row, 3), value(row, 4), value(row, 5)});
  }
  return rows;
}

std::optional<MetricsRow> last_metrics_row(const std::string& metrics) {
  const std::vector<MetricsRow> rows = metrics_rows(metrics);
  if (rows.empty()) return std::nullopt;
  return rows.back();
}

bool is_run_output(const std::string& name) {
  const RunFiles f("");
  for (const fs::path* p : {&f.checkpoint, &f.metrics, &f.evals, &f.done, &f.result, &f.env})
    if (name == p->filename().string()) return true;
  const std::string ext = fs::path(name).extension().string();
  return (io::starts_with(name, "eval-") && ext == ".json") ||
         (io::starts_with(name, "done-step") && ext == ".json") ||
         ((io::starts_with(name, "metrics-step") || io::starts_with(name, "evals-step")) &&
          ext == ".csv") ||
         (io::starts_with(name, "checkpoint-step") && ext == ".pt") ||
         io::starts_with(name, "events.out.tfevents.");
}

StoredConfig compare_stored_config(const std::string& run_dir, const TrainConfig& wanted) {
  const RunFiles files(run_dir);
  const fs::path& file = files.config;
  if (!fs::exists(file)) {
    for (const fs::path* held : {&files.checkpoint, &files.done}) {
      if (fs::exists(*held)) {
        return {"no config.yaml beside its " + held->filename().string(), true, false, 0};
      }
    }
    return {};
  }
  try {
    const TrainConfig stored =
        parse_config(io::read_input_file(file.string(), "config"), file.string());
    TrainConfig with_new_budget = stored;
    with_new_budget.max_steps = wanted.max_steps;
    const bool grows =
        wanted.max_steps > stored.max_steps && config_differences(with_new_budget, wanted).empty();
    return {config_differences(stored, wanted), false, grows, stored.max_steps};
  } catch (const std::invalid_argument& e) {
    return {e.what(), false, false, 0};
  }
}

namespace {

// Whether `files`' checkpoint was trained with `cfg` (max_steps aside): where config.yaml alone
// differs, it was edited by hand, and putting it back resumes the run. Read only on that refusal's
// path (a load, ~0.4 s); a checkpoint that does not load says nothing here.
bool checkpoint_trained_with(const RunFiles& files, const TrainConfig& cfg) {
  if (!fs::exists(files.checkpoint)) return false;
  try {
    return trained_config_differences(load_agent(files.checkpoint.string()).config, cfg).empty();
  } catch (const std::exception&) {
    return false;
  }
}

}  // namespace

RunDirTakeover plan_takeover(const std::string& run_dir, const TrainConfig& cfg, bool force,
                             bool extend) {
  const fs::path run = run_dir;
  const bool finished = fs::exists(RunFiles(run).done);
  RunDirTakeover plan;
  if (const std::string foreign = run_output_without_run(run); !foreign.empty()) {
    throw std::runtime_error(run_dir + " holds " + foreign +
                             " but no run (no config.yaml, checkpoint.pt or done.json): not a run "
                             "directory, and --force replaces only a run; use another --run-dir");
  }
  if (force) {
    plan.remove_outputs = true;
    return plan;
  }
  const StoredConfig stored = compare_stored_config(run_dir, cfg);
  if (stored.config_missing) {
    // Resumed, its weights would train on under this config whatever it was trained with (a walk,
    // 2026-11-29: another lr went on without a word; extended, it said it was done).
    throw std::runtime_error(run_dir + " holds a run (" + stored.differences +
                             "): what it was trained with is unknown; put its config.yaml back, "
                             "or use another --run-dir or --force");
  }
  const std::string from = std::to_string(stored.max_steps);
  if (stored.max_steps_grows && !extend) {
    // Only a finished run has results of its budget to keep.
    const std::string kept =
        finished ? " (what it reported at step " + from + " is kept as *-step" + from + " files)"
                 : "";
    throw std::runtime_error(run_dir + (finished ? " was trained" : " was started") +
                             " with max_steps " + from + "; to go on from its checkpoint to " +
                             std::to_string(cfg.max_steps) + " steps pass --extend" + kept +
                             ", or use another --run-dir or --force");
  }
  if (stored.max_steps_grows) {
    plan.extended_from = stored.max_steps;
    plan.keep_results = finished;
    return plan;
  }
  if (finished && stored.differences.empty() && extend) {
    plan.finished = true;
    return plan;
  }
  // A finished run asked again as it is, without --extend: the way on is a larger budget. Asked
  // with another key (or a smaller budget), the keys say what stands in the way, finished or not.
  if (finished && stored.differences.empty()) {
    throw std::runtime_error(run_dir +
                             " holds a finished run; pass --force to retrain it, or raise "
                             "max_steps and pass --extend to train it further");
  }
  if (!stored.differences.empty()) {
    // Walk 47: a hand-edited config.yaml was answered with --force, which throws the training away.
    const std::string edited =
        checkpoint_trained_with(RunFiles(run), cfg)
            ? " but its checkpoint.pt was trained with this config: config.yaml was edited? Put "
              "back its values and the run resumes;"
            : "";
    throw std::runtime_error(run_dir + "/config.yaml differs from this config (" +
                             stored.differences + ");" + edited + " " +
                             (finished ? "it holds a finished run; " : "") +
                             (extend ? "--extend goes on only when max_steps alone grows; " : "") +
                             "use another --run-dir or --force");
  }
  return plan;
}

void apply_takeover(const std::string& run_dir, const RunDirTakeover& plan,
                    const TrainConfig& config) {
  if (plan.remove_outputs) remove_run_outputs(run_dir);
  if (plan.keep_results) keep_finished_results(run_dir, plan.extended_from, config);
}

}  // namespace minrnn::rl
