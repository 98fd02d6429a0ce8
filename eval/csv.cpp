#include "eval/csv.h"

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "rl/run_dir.h"
#include "rl/run_files.h"

namespace minrnn::eval {

bool read_eval_curve(const std::filesystem::path& run_dir, Series* out) {
  const std::filesystem::path path = rl::RunFiles(run_dir).evals;
  if (!io::read_csv_columns(path, rl::kStepColumn, rl::kMeanNormalizedColumn, rl::evals_columns(),
                            &out->x, &out->y))
    return false;
  // An evaluation is a mean of episode returns, finite or never written (the rollout refuses
  // non-finite actions): a NaN here was put there by hand.
  for (size_t i = 0; i < out->y.size(); ++i) {
    if (!std::isfinite(out->y[i])) {
      throw std::runtime_error(path.string() + ": the evaluation at step " +
                               std::to_string(static_cast<int64_t>(out->x[i])) + " is " +
                               std::to_string(out->y[i]) + ", not a score");
    }
  }
  return true;
}

std::string markdown_cell(const std::string& text) {
  std::string cell;
  for (char c : text) cell += c == '|' ? std::string("\\|") : std::string(1, c);
  return cell;
}

}  // namespace minrnn::eval
