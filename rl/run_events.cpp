#include "rl/run_events.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <optional>
#include <stdexcept>
#include <vector>

#include "io/text.h"
#include "rl/run_dir.h"
#include "rl/run_files.h"

namespace minrnn::rl {
namespace {

namespace fs = std::filesystem;

// The TensorBoard tag of each column of metrics.csv (metrics_columns()) or evals.csv
// (evals_columns()); "" for one not shown: step, the axis, and elapsed_s, TensorBoard's own
// "relative" time axis.
const std::vector<std::string>& tags_of(bool eval) {
  static const std::vector<std::string> metrics = [] {
    std::vector<std::string> tags;
    for (const std::string& column : metrics_columns())
      tags.push_back(column == kStepColumn || column == "elapsed_s" ? "" : "train/" + column);
    return tags;
  }();
  static const std::vector<std::string> evals = {"", "eval/return_mean", "eval/return_std",
                                                 "eval/normalized_return_mean",
                                                 "eval/normalized_return_std"};
  return eval ? evals : metrics;
}

// The scalars of a row of either file; false where a shown column holds no number (a row cut short
// by hand), which TensorBoard then leaves out.
bool scalars_of(const RunRow& row, bool eval, std::vector<io::TensorBoardScalar>* scalars) {
  const std::vector<std::string>& tags = tags_of(eval);
  for (size_t i = 0; i < tags.size(); ++i) {
    if (tags[i].empty()) continue;
    if (i >= row.values.size() || !row.values[i]) return false;
    scalars->push_back({tags[i], *row.values[i]});
  }
  return true;
}

// A metrics.csv row's elapsed_s; nullopt where the row has none.
std::optional<double> elapsed_of(const RunRow& row) {
  static const size_t at = static_cast<size_t>(
      std::find(metrics_columns().begin(), metrics_columns().end(), "elapsed_s") -
      metrics_columns().begin());
  return at < row.values.size() ? row.values[at] : std::nullopt;
}

// The rows of `csv` (of `columns`) whose step passes `keep`.
template <typename Keep>
std::vector<RunRow> rows_where(const fs::path& csv, const std::vector<std::string>& columns,
                               Keep keep) {
  std::vector<RunRow> rows;
  for (RunRow& row : run_rows(csv.string(), columns))
    if (keep(row.step)) rows.push_back(std::move(row));
  return rows;
}

// The step of the last row of `csv`; `otherwise` when it has none.
int64_t last_step(const fs::path& csv, int64_t otherwise) {
  // Only the step is read: any of the run's files has it first.
  const std::vector<RunRow> rows = run_rows(csv.string(), {kStepColumn});
  return rows.empty() ? otherwise : rows.back().step;
}

}  // namespace

std::vector<io::HParam> hparams_of(const TrainConfig& config, std::string* group) {
  // TensorBoard keeps the first record a run writes of a tag, so a value `--extend` changes
  // (max_steps) would stay the old one there: the metrics' own steps say how far a run went.
  static const std::vector<std::string> not_learning = {
      "device", "eval_every", "eval_episodes", "checkpoint_every", "log_every", "max_steps"};
  std::vector<io::HParam> hparams;
  group->clear();
  for (const auto& [key, text] : config_entries(config)) {
    if (std::find(not_learning.begin(), not_learning.end(), key) != not_learning.end()) continue;
    const std::optional<double> number = io::number_in(text);
    hparams.push_back({key, number ? io::HParam::Value(*number) : io::HParam::Value(text)});
    if (key != "seed") *group += (group->empty() ? "" : " ") + key + "=" + text;
  }
  return hparams;
}

// See the header: a START where both readers drop what a resume redoes, then the rows kept there.
RunEvents::RunEvents(const std::string& run_dir, int64_t start_step, const TrainConfig& config)
    : run_dir_(run_dir) {
  const RunFiles files(run_dir);
  const fs::path &metrics = files.metrics, &evals = files.evals;
  const int64_t from =
      std::min({start_step, last_step(metrics, start_step), last_step(evals, start_step)});
  try {
    writer_.emplace(run_dir);
    writer_->add_session_start(from, io::wall_time_now());
    std::string group;
    const std::vector<io::HParam> hparams = hparams_of(config, &group);
    writer_->add_hparams_start(hparams, group, io::wall_time_now());
  } catch (const std::exception& e) {
    fail(e.what());
  }
  // The rows written again keep their own times: each as far before now as its elapsed_s is
  // before the last row's (stamped now, they would all sit at the resume's instant on
  // TensorBoard's time axes). An evaluation takes its step's row's time.
  const auto redone = [from](int64_t step) { return step >= from; };
  const std::vector<RunRow> metric_rows = rows_where(metrics, metrics_columns(), redone);
  const double now = io::wall_time_now();
  const double last = metric_rows.empty() ? 0 : elapsed_of(metric_rows.back()).value_or(0);
  std::map<int64_t, double> time_at;
  for (const auto& row : metric_rows) {
    const double time = now - std::max(0.0, last - elapsed_of(row).value_or(last));
    time_at[row.step] = time;
    write_row(row, /*eval=*/false, time);
  }
  for (const auto& row : rows_where(evals, evals_columns(), redone)) {
    const auto at = time_at.find(row.step);
    write_row(row, /*eval=*/true, at == time_at.end() ? now : at->second);
  }
}

void RunEvents::metrics_row(const std::string& line) {
  // Read back from the text, so TensorBoard shows what the file holds (to float32 rounding).
  if (const std::optional<RunRow> row = row_in_line(line, metrics_columns()))
    write_row(*row, /*eval=*/false);
}

void RunEvents::eval_at(int64_t step) {
  if (!writer_) return;
  const auto of_step = [step](int64_t row) { return row == step; };
  for (const auto& row : rows_where(RunFiles(run_dir_).evals, evals_columns(), of_step))
    write_row(row, /*eval=*/true);
}

void RunEvents::finished() {
  end_session(/*success=*/true);
}

void RunEvents::failed() {
  end_session(/*success=*/false);
}

void RunEvents::end_session(bool success) {
  if (!writer_) return;
  try {
    writer_->add_hparams_end(success, io::wall_time_now());
  } catch (const std::exception& e) {
    fail(e.what());
  }
}

void RunEvents::write_row(const RunRow& row, bool eval, std::optional<double> wall_time) {
  std::vector<io::TensorBoardScalar> scalars;
  if (!writer_ || !scalars_of(row, eval, &scalars)) return;
  try {
    writer_->add_scalars(row.step, scalars, wall_time.value_or(io::wall_time_now()));
  } catch (const std::exception& e) {
    fail(e.what());
  }
}

void RunEvents::fail(const std::string& why) {
  writer_.reset();
  std::fprintf(stderr,
               "\nwarning: %s; TensorBoard shows this run only up to here (training goes on: "
               "metrics.csv and evals.csv hold every row)\n",
               why.c_str());
}

}  // namespace minrnn::rl
