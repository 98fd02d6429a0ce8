#include "sweep/progress.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "io/atomic_file.h"
#include "io/progress_line.h"
#include "rl/progress_log.h"
#include "rl/run_dir.h"
#include "rl/run_files.h"

namespace minrnn::sweep {

std::string training_progress(const SweepRun& r) {
  const std::vector<rl::MetricsRow> rows = rl::metrics_rows(rl::RunFiles(r.run_dir).metrics);
  if (rows.empty()) return run_name(r) + " starting";
  // As the run's own progress line says it, from its rows (a walk, 2026-11-30: "ETA 1s" 41 s
  // before the end from the training rate alone; a review: the pace since step 0 counted the
  // start-up as training).
  const double eta = rl::training_eta_seconds(rows, r.max_steps, r.eval_every);
  char buf[96];
  std::snprintf(buf, sizeof buf, " %lld/%lld (%.1f steps/s, ETA %s)",
                static_cast<long long>(rows.back().step), static_cast<long long>(r.max_steps),
                rows.back().steps_per_s, eta >= 0 ? io::duration_text(eta).c_str() : "?");
  return run_name(r) + buf;
}

double eta_seconds(const SweepPace& p) {
  // This sweep's pace once it has one, else the pace of the runs it found trained.
  const double rate = p.steps_trained_here > 0 && p.elapsed_s > 0
                          ? p.steps_trained_here / p.elapsed_s
                          : p.earlier_rate;
  double seconds = io::eta_seconds(0, p.steps_left, rate);
  if (seconds < 0) return -1;
  if (p.evaluations_left > 0) {
    if (p.evaluations_here <= 0) return -1;
    seconds += p.evaluation_s / p.evaluations_here * p.evaluations_left / std::max(p.parallel, 1);
  }
  return seconds;
}

double earlier_run_steps_per_s(const std::vector<SweepRun>& runs,
                               const std::deque<std::vector<int>>& packs, int parallel) {
  double pace_sum = 0;  // of the runs with a row: steps/s each
  int paced = 0, at_once = 0;
  for (size_t k = 0; k < packs.size(); ++k) {
    if (int(k) < parallel) at_once += int(packs[k].size());
    for (int i : packs[k]) {
      // The pace its rows show after start-up, as its own line's ETA takes it.
      const double pace =
          rl::training_pace(rl::metrics_rows(rl::RunFiles(runs[size_t(i)].run_dir).metrics));
      if (pace <= 0) continue;
      pace_sum += pace;
      ++paced;
    }
  }
  return paced > 0 ? pace_sum / paced * at_once : 0;
}

void write_sweep_status(const SweepSpec& spec, const std::vector<SweepRun>& runs,
                        const std::vector<std::string>& statuses,
                        const std::vector<double>& seconds, int done, int failed,
                        double elapsed_s) {
  nlohmann::json j;
  j["sweep_file"] = spec.file;
  j["pid"] = ::getpid();
  j["total"] = runs.size();
  j["done"] = done;
  j["failed"] = failed;
  j["elapsed_s"] = elapsed_s;
  j["runs"] = nlohmann::json::array();
  for (size_t i = 0; i < runs.size(); ++i) {
    j["runs"].push_back({{"dataset", runs[i].dataset},
                         {"backbone", runs[i].backbone},
                         {"seed", runs[i].seed},
                         {"run_dir", runs[i].run_dir},
                         {"config", runs[i].config},
                         {"status", statuses[i]},
                         {"seconds", seconds[i]}});
  }
  io::write_file_atomically((std::filesystem::path(spec.out) / "sweep_status.json").string(),
                            j.dump(2) + "\n");
}

}  // namespace minrnn::sweep
