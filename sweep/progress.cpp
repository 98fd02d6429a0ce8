#include "sweep/progress.h"

#include "io/progress_line.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "eval/csv.h"

namespace minrnn::sweep {

std::string training_progress(const SweepRun& r) {
  eval::Series rate;
  if (!eval::read_csv_columns(std::filesystem::path(r.run_dir) / "metrics.csv", true, "step",
                              "steps_per_s", -1, -1, &rate)) {
    return run_name(r) + " starting";
  }
  const double step = rate.x.back(), per_s = rate.y.back();
  char buf[96];
  std::snprintf(buf, sizeof buf, " %.0f/%lld (%.1f steps/s, ETA %s)", step,
                static_cast<long long>(r.max_steps), per_s,
                per_s > 0 ? io::duration_text((r.max_steps - step) / per_s).c_str() : "?");
  return run_name(r) + buf;
}

double eta_seconds(const SweepPace& p) {
  double seconds = 0;
  if (p.steps_left > 0) {
    if (p.steps_trained_here <= 0 || p.elapsed_s <= 0) return -1;
    seconds += p.steps_left * p.elapsed_s / p.steps_trained_here;
  }
  if (p.evaluations_left > 0) {
    if (p.evaluations_here <= 0) return -1;
    seconds += p.evaluation_s / p.evaluations_here * p.evaluations_left / std::max(p.parallel, 1);
  }
  return seconds;
}

}  // namespace minrnn::sweep
