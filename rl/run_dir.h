// What a run directory holds besides the training loop's own rows, and how a new `train()` call
// may take over a directory that already holds a run: resume it, extend it, or replace it.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "rl/config.h"

namespace minrnn::rl {

// Whether a file of this name in a run directory is one its training or evaluation writes (what
// --force removes): checkpoint.pt, metrics.csv, evals.csv, done.json, eval.json, env.json, and by
// pattern eval-*.json (ad-hoc `minrnn eval` results), the *-step<N> files an extension keeps and
// the TensorBoard event files (events.out.tfevents.*).
bool is_run_output(const std::string& file_name);

// metrics.csv and evals.csv, CSV (io/csv.h) whose rows start with their step. A torn last line
// (the writer was killed) is not a row.
// The step in a run-file row's first column (metrics.csv, evals.csv); -1 for a header or a line
// that is not a row.
int64_t row_step(const std::string& line);
// Keeps the rows of steps <= `step` (a resumed run redoes the rest), and with `header` a first
// line that is no row (the header; a file from before it had one keeps its rows alone).
void truncate_rows(const std::string& csv, int64_t step, bool header);
// Whether `csv` holds a row of `step`.
bool has_row(const std::string& csv, int64_t step);

// The columns a reader outside rl/ picks by name (the report's curves), as the lists below hold
// them.
inline constexpr const char* kStepColumn = "step";
inline constexpr const char* kLossColumn = "loss";
inline constexpr const char* kMeanNormalizedColumn = "mean_normalized";
// metrics.csv's columns, in the order its header names them and ProgressLog writes a row: step,
// loss, lr, grad_norm, steps_per_s, elapsed_s (the seconds trained, on across resumes).
const std::vector<std::string>& metrics_columns();
// evals.csv's columns, in the order its header names them and append_eval_row writes a row: step,
// mean_return, std_return, mean_normalized, std_normalized. A file of a run from before the
// header has the rows alone, in this order.
const std::vector<std::string>& evals_columns();
// The header line of a run's CSV of `columns` ("step,loss,...\n").
std::string header_line(const std::vector<std::string>& columns);

// A row of metrics.csv or evals.csv: its step and a value for each of the file's `columns`
// (metrics_columns() or evals_columns(), step first), none where the row lacks the column or holds
// no number there.
struct RunRow {
  int64_t step = 0;
  std::vector<std::optional<double>> values;
};
// `row` as its file's line (io::csv_line): the step, then each value after it as printf's
// `format` writes it ("%g" metrics.csv's, "%.3f" evals.csv's), an empty cell for none.
std::string row_line(const RunRow& row, const char* format);
// The rows of `csv` (io::read_csv_rows: whole lines), each column found by the header's name or,
// in a file from before the header, by its place in `columns`; a line whose step is no whole
// number is left out. The one reader of both files: what a resume, TensorBoard's replay, a
// sweep's progress and --status read of a run.
std::vector<RunRow> run_rows(const std::string& csv, const std::vector<std::string>& columns);
// A line row_line wrote, its values by their place in `columns`, as run_rows reads them back (the
// values the text holds, rounded as it is); nullopt where it starts with no step.
std::optional<RunRow> row_in_line(const std::string& line, const std::vector<std::string>& columns);

// metrics.csv's last row (a file written before a column was added, or a cell that is no number,
// reads 0 there); nullopt where the file has no row (or is not there).
struct MetricsRow {
  int64_t step = 0;
  double loss = 0, lr = 0, grad_norm = 0, steps_per_s = 0, elapsed_s = 0;
};
std::optional<MetricsRow> last_metrics_row(const std::string& metrics_csv);
// Every row of metrics.csv, read as last_metrics_row reads the last: what a sweep's progress line
// takes a run's pace from.
std::vector<MetricsRow> metrics_rows(const std::string& metrics_csv);

// How <run_dir>/config.yaml compares with `wanted`, by value (a config.yaml written before a key
// existed still matches its default): the keys that differ as config_differences writes them
// ("" when it agrees or there is none yet; an unreadable file's error otherwise), and whether the
// one difference is a larger max_steps — the change that lets a run go on (`extend`). A run dir
// whose checkpoint.pt or done.json has no config.yaml beside it (deleted by hand) differs from
// every config: what it holds was trained with a config nobody can tell (`config_missing`).
struct StoredConfig {
  std::string differences;
  bool config_missing = false;
  bool max_steps_grows = false;
  int64_t max_steps = 0;  // the stored max_steps (0: no readable config.yaml)
};
StoredConfig compare_stored_config(const std::string& run_dir, const TrainConfig& wanted);

struct RunDirTakeover {
  int64_t extended_from = 0;    // > 0: a run trained to this max_steps goes on (`extend`)
  bool finished = false;        // `extend` asked of a run already finished at this max_steps
  bool remove_outputs = false;  // `force`: every output of the old run goes (is_run_output)
  bool keep_results = false;    // extending a finished run: its results stay under their step
};

// A folder that holds no run (no config.yaml, checkpoint.pt or done.json) but files of a run's
// names (a user's eval.json, evaluations of a bare checkpoint) is refused, --force or not: they
// are not a run's to replace, nor to mix a new run's rows into.
// Decides what `config` may do with `run_dir`, touching nothing (apply_takeover does, once the
// new run's data and model are known to load, so a typo cannot cost the old run). Without
// `force`, a finished run
// is never replaced and a run trained with another config is never continued: both throw
// std::runtime_error naming the directory and the keys that differ. The one exception is
// `extend` with a config that differs only by a larger max_steps: training goes on from the
// checkpoint, exactly as if the run had been started with the larger budget (its learning-rate
// schedule does not depend on max_steps). What the finished run reported stays beside it under its
// step: checkpoint.pt is copied to checkpoint-step<N>.pt, done.json and eval.json become
// done-step<N>.json and eval-step<N>.json (an ad-hoc eval-X.json eval-step<N>-X.json). A finished
// run without its checkpoint (one restored from a snapshot of another machine's sweep) trains again
// from step 0 — by the same argument the run that was asked for — and its curves are kept too, as
// metrics-step<N>.csv and evals-step<N>.csv. `extend` on a run already finished with this very
// config is `finished`, not an error, so that asking again (a requeued job) is harmless.
RunDirTakeover plan_takeover(const std::string& run_dir, const TrainConfig& config, bool force,
                             bool extend);
// Prepares `run_dir` as `plan` says: removes the old outputs (force) or keeps the finished
// results under their step (extend; the rows the old run wrote at its last step off `config`'s
// log and eval cadence go, so the curves match a run given the larger budget from the start).
void apply_takeover(const std::string& run_dir, const RunDirTakeover& plan,
                    const TrainConfig& config);

}  // namespace minrnn::rl
