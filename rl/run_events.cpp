#include "rl/run_events.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <stdexcept>
#include <vector>

#include "io/atomic_file.h"
#include "io/text.h"
#include "rl/run_dir.h"
#include "rl/run_files.h"

namespace minrnn::rl {
namespace {

namespace fs = std::filesystem;

// The tags of the columns after `step`, in the order metrics.csv and evals.csv hold them
// (elapsed_s, metrics.csv's last column, is TensorBoard's own "relative" time axis).
const std::vector<std::string>& tags_of(bool eval) {
  static const std::vector<std::string> metrics = [] {
    std::vector<std::string> tags;
    for (const std::string& column : metrics_columns())
      if (column != "step" && column != "elapsed_s") tags.push_back("train/" + column);
    return tags;
  }();
  static const std::vector<std::string> evals = {"eval/return_mean", "eval/return_std",
                                                 "eval/normalized_return_mean",
                                                 "eval/normalized_return_std"};
  return eval ? evals : metrics;
}

// A CSV row's step and the values of `tags`, one per column after it; false for a header or a
// row with fewer numbers.
bool parse_row(const std::string& row, const std::vector<std::string>& tags, int64_t* step,
               std::vector<io::TensorBoardScalar>* scalars) {
  char* end = nullptr;
  *step = std::strtoll(row.c_str(), &end, 10);
  if (end == row.c_str()) return false;
  for (const auto& tag : tags) {
    if (*end != ',') return false;
    const char* field = end + 1;
    const double value = std::strtod(field, &end);
    if (end == field) return false;
    scalars->push_back({tag, value});
  }
  return true;
}

// A metrics.csv row's elapsed_s, its last column; nullopt where the row has none.
std::optional<double> elapsed_of(const std::string& row) {
  static const std::vector<std::string> columns(metrics_columns().begin() + 1,
                                                metrics_columns().end());
  int64_t step = 0;
  std::vector<io::TensorBoardScalar> values;
  if (!parse_row(row, columns, &step, &values)) return std::nullopt;
  return values.back().value;
}

// The rows of `csv` whose step passes `keep`.
template <typename Keep>
std::vector<std::string> rows_where(const fs::path& csv, Keep keep) {
  std::vector<std::string> rows;
  for (const auto& line : io::read_complete_lines(csv.string()))
    if (const int64_t step = row_step(line); step >= 0 && keep(step)) rows.push_back(line);
  return rows;
}

// The step of the last row of `csv`; `otherwise` when it has none.
int64_t last_step(const fs::path& csv, int64_t otherwise) {
  const auto lines = io::read_complete_lines(csv.string());
  const int64_t step = lines.empty() ? -1 : row_step(lines.back());
  return step >= 0 ? step : otherwise;
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
  const std::vector<std::string> metric_rows = rows_where(metrics, redone);
  const double now = io::wall_time_now();
  const double last = metric_rows.empty() ? 0 : elapsed_of(metric_rows.back()).value_or(0);
  std::map<int64_t, double> time_at;
  for (const auto& row : metric_rows) {
    const double time = now - std::max(0.0, last - elapsed_of(row).value_or(last));
    time_at[row_step(row)] = time;
    write_row(row, /*eval=*/false, time);
  }
  for (const auto& row : rows_where(evals, redone)) {
    const auto at = time_at.find(row_step(row));
    write_row(row, /*eval=*/true, at == time_at.end() ? now : at->second);
  }
}

void RunEvents::metrics_row(const std::string& row) {
  write_row(row, /*eval=*/false);
}

void RunEvents::eval_at(int64_t step) {
  if (!writer_) return;
  const auto of_step = [step](int64_t row) { return row == step; };
  for (const auto& row : rows_where(RunFiles(run_dir_).evals, of_step))
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

void RunEvents::write_row(const std::string& row, bool eval, std::optional<double> wall_time) {
  int64_t step = 0;
  std::vector<io::TensorBoardScalar> scalars;
  if (!writer_ || !parse_row(row, tags_of(eval), &step, &scalars)) return;
  try {
    writer_->add_scalars(step, scalars, wall_time.value_or(io::wall_time_now()));
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
