#include "rl/run_dir.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "io/atomic_file.h"

namespace minrnn::rl {
namespace {

namespace fs = std::filesystem;

std::string read_text(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool starts_with(const std::string& s, const std::string& prefix) {
  return s.rfind(prefix, 0) == 0;
}

// The complete lines of a CSV file: a torn last line (no newline, the writer was killed) is not.
std::vector<std::string> complete_lines(const fs::path& path) {
  const std::string text = read_text(path);
  std::vector<std::string> lines;
  for (size_t at = 0, end; (end = text.find('\n', at)) != std::string::npos; at = end + 1)
    lines.push_back(text.substr(at, end - at));
  return lines;
}

// The step in a row's first column; -1 when it holds none.
int64_t row_step(const std::string& line) {
  char* end = nullptr;
  const long long step = std::strtoll(line.c_str(), &end, 10);
  return end != line.c_str() && *end == ',' ? step : -1;
}

void remove_run_outputs(const fs::path& run) {
  if (!fs::is_directory(run)) return;
  for (const auto& name : run_outputs()) fs::remove(run / name);
  for (const auto& entry : fs::directory_iterator(run)) {
    if (!entry.is_regular_file()) continue;
    const std::string name = entry.path().filename().string();
    const std::string ext = entry.path().extension().string();
    if ((starts_with(name, "eval-") && ext == ".json") ||
        (starts_with(name, "done-step") && ext == ".json") ||
        ((starts_with(name, "metrics-step") || starts_with(name, "evals-step")) && ext == ".csv") ||
        (starts_with(name, "checkpoint-step") && ext == ".pt"))
      fs::remove(entry.path());
  }
}

// Keeps what a finished run reported under its step before training goes on. Without a
// checkpoint training starts again from step 0 and would rewrite the curves, so they are kept too.
// Safe to repeat after a kill part-way: done.json, which marks the run finished, moves last.
void keep_finished_results(const fs::path& run, int64_t step) {
  const std::string at = "-step" + std::to_string(step);
  const fs::path ckpt = run / "checkpoint.pt";
  if (fs::exists(ckpt)) {
    const std::string kept_ckpt = (run / ("checkpoint" + at + ".pt")).string();
    io::replace_file_atomically(kept_ckpt, [&](const std::string& tmp) {
      fs::copy_file(ckpt, tmp, fs::copy_options::overwrite_existing);
    });
  } else {
    for (const char* curve : {"metrics", "evals"}) {
      const fs::path file = run / (std::string(curve) + ".csv");
      if (fs::exists(file)) fs::rename(file, run / (curve + at + ".csv"));
    }
  }
  if (fs::exists(run / "eval.json")) fs::rename(run / "eval.json", run / ("eval" + at + ".json"));
  fs::rename(run / "done.json", run / ("done" + at + ".json"));
}

}  // namespace

void truncate_rows(const std::string& path, int64_t step, bool header) {
  const auto lines = complete_lines(path);
  std::string kept;
  for (size_t i = 0; i < lines.size(); ++i) {
    const int64_t s = row_step(lines[i]);
    if ((header && i == 0) || (s >= 0 && s <= step)) kept += lines[i] + "\n";
  }
  io::write_file_atomically(path, kept);
}

bool has_row(const std::string& path, int64_t step) {
  for (const auto& line : complete_lines(path))
    if (row_step(line) == step) return true;
  return false;
}

double last_logged_loss(const std::string& metrics) {
  const auto lines = complete_lines(metrics);
  if (lines.size() < 2) return 0;
  const std::string& last = lines.back();
  const size_t comma = last.find(',');
  return comma == std::string::npos ? 0 : std::strtod(last.c_str() + comma + 1, nullptr);
}

const std::vector<std::string>& run_outputs() {
  static const std::vector<std::string> names = {"checkpoint.pt", "metrics.csv", "evals.csv",
                                                 "done.json",     "eval.json",   "env.json"};
  return names;
}

StoredConfig compare_stored_config(const std::string& run_dir, const TrainConfig& wanted) {
  const fs::path file = fs::path(run_dir) / "config.yaml";
  if (!fs::exists(file)) return {};
  try {
    const TrainConfig stored = parse_config(read_text(file), file.string());
    TrainConfig with_new_budget = stored;
    with_new_budget.max_steps = wanted.max_steps;
    const bool grows =
        wanted.max_steps > stored.max_steps && config_differences(with_new_budget, wanted).empty();
    return {config_differences(stored, wanted), grows, stored.max_steps};
  } catch (const std::invalid_argument& e) {
    return {e.what(), false, 0};
  }
}

RunDirTakeover take_over_run_dir(const std::string& run_dir, const TrainConfig& cfg, bool force,
                                 bool extend) {
  const fs::path run = run_dir;
  const bool finished = fs::exists(run / "done.json");
  if (force) {
    remove_run_outputs(run);
    return {};
  }
  const StoredConfig stored = compare_stored_config(run_dir, cfg);
  const std::string from = std::to_string(stored.max_steps);
  if (stored.max_steps_grows && !extend) {
    throw std::runtime_error(
        run_dir + " was trained with max_steps " + from + "; to go on from its checkpoint to " +
        std::to_string(cfg.max_steps) + " steps pass --extend (what it reported at step " + from +
        " is kept as *-step" + from + " files), or use another --run-dir or --force");
  }
  if (stored.max_steps_grows) {
    if (finished) keep_finished_results(run, stored.max_steps);
    return {stored.max_steps, false};
  }
  if (finished && stored.differences.empty() && extend) return {0, true};
  if (finished) {
    throw std::runtime_error(run_dir +
                             " holds a finished run; pass --force to retrain it, or raise "
                             "max_steps and pass --extend to train it further");
  }
  if (!stored.differences.empty()) {
    throw std::runtime_error(run_dir + "/config.yaml differs from this config (" +
                             stored.differences + "); " +
                             (extend ? "--extend goes on only when max_steps alone grows; " : "") +
                             "use another --run-dir or --force");
  }
  return {};
}

}  // namespace minrnn::rl
