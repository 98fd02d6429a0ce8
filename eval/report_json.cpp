// table3.json: what table3.md says, for a script — each cell with its seeds' own scores, the
// averages, the runs in progress, the failed ones, the unreadable curve files (eval/report.h).
#include <cmath>
#include <nlohmann/json.hpp>

#include "eval/report.h"

namespace minrnn::eval {
namespace {

// NaN (no evaluation yet) as null: JSON has no NaN.
nlohmann::json number_or_null(double v) {
  return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr);
}

}  // namespace

std::string report_json(const Table& t, const std::vector<RunScore>& runs,
                        const std::vector<RunProgress>& unfinished,
                        const std::vector<RunFailure>& failed,
                        const std::vector<std::string>& unreadable_curves) {
  nlohmann::ordered_json j;
  j["convention"] =
      "D4RL normalized score of each run's last checkpoint (mean over its eval episodes); a "
      "cell's mean and std (population, ddof 0) are over its seeds";
  j["cells"] = nlohmann::json::array();
  for (const auto& d : t.datasets) {
    for (const auto& b : t.backbones) {
      const auto it = t.cells.find({d, b});
      if (it == t.cells.end()) continue;
      const Cell& c = it->second;
      nlohmann::ordered_json cell = {{"dataset", d},
                                     {"backbone", b},
                                     {"mean", c.mean},
                                     {"std", c.n > 1 ? nlohmann::json(c.std) : nullptr},
                                     {"seeds", c.n},
                                     {"steps", c.steps},
                                     {"settings_apart", c.apart},
                                     {"d4rl_scored", c.d4rl_scored},
                                     {"d4rl_data", c.d4rl_data}};
      cell["runs"] = nlohmann::json::array();
      for (const RunScore& r : runs) {
        if (r.dataset != d || r.backbone != b) continue;
        cell["runs"].push_back({{"seed", r.seed},
                                {"score", r.normalized},
                                {"step", r.train_step},
                                {"run_dir", r.run_dir}});
      }
      j["cells"].push_back(cell);
    }
  }
  j["average"] = nlohmann::json::array();
  for (const auto& b : t.backbones) {
    const Cell& a = t.average.at(b);
    j["average"].push_back({{"backbone", b},
                            {"mean", a.n > 0 ? nlohmann::json(a.mean) : nlohmann::json()},
                            {"datasets", a.n}});
  }
  j["in_progress"] = nlohmann::json::array();
  for (const RunProgress& r : unfinished) {
    j["in_progress"].push_back({{"dataset", r.dataset},
                                {"backbone", r.backbone},
                                {"seed", r.seed},
                                {"step", r.step},
                                {"last_eval", number_or_null(r.last_eval)},
                                {"last_eval_step", r.last_eval_step},
                                {"finished_shorter", r.finished_shorter},
                                {"run_dir", r.run_dir}});
  }
  j["failed"] = nlohmann::json::array();
  for (const RunFailure& r : failed) {
    j["failed"].push_back(
        {{"dataset", r.dataset},
         {"backbone", r.backbone},
         {"seed", r.seed},
         {"phase", r.phase},
         // null where none is recorded (a result that cannot be read, a damaged failed.json)
         {"exit_code", r.exit_code >= 0 ? nlohmann::json(r.exit_code) : nlohmann::json(nullptr)},
         {"unreadable", r.unreadable},
         {"run_dir", r.run_dir}});
  }
  j["unreadable_curves"] = unreadable_curves;
  return j.dump(2) + "\n";
}

}  // namespace minrnn::eval
