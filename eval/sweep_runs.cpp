#include "eval/sweep_runs.h"

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <tuple>

#include "io/input_file.h"
#include "rl/run_files.h"

namespace minrnn::eval {

namespace fs = std::filesystem;

fs::path run_dir_of(const fs::path& out, const std::string& dataset, const std::string& backbone,
                    int64_t seed) {
  return out / dataset / backbone / ("seed" + std::to_string(seed));
}

std::vector<RunDir> list_run_dirs(const std::string& sweep_dir) {
  if (!fs::exists(sweep_dir))
    throw std::invalid_argument(io::no_such(sweep_dir, "sweep directory"));
  if (!fs::is_directory(sweep_dir)) throw std::invalid_argument(sweep_dir + " is not a directory");
  std::vector<RunDir> found;
  for (const auto& d : fs::directory_iterator(sweep_dir)) {
    if (!d.is_directory() || d.path().filename() == "plots") continue;
    for (const auto& b : fs::directory_iterator(d.path())) {
      if (!b.is_directory()) continue;
      for (const auto& s : fs::directory_iterator(b.path())) {
        const std::string name = s.path().filename().string();
        if (!s.is_directory() || name.size() < 5 || name.rfind("seed", 0) != 0 ||
            name.find_first_not_of("0123456789", 4) != std::string::npos) {
          continue;
        }
        found.push_back({d.path().filename().string(), b.path().filename().string(),
                         std::stoll(name.substr(4)), s.path()});
      }
    }
  }
  std::sort(found.begin(), found.end(), [](const RunDir& a, const RunDir& b) {
    return std::tie(a.dataset, a.backbone, a.seed) < std::tie(b.dataset, b.backbone, b.seed);
  });
  return found;
}

FinalEvaluation read_final_evaluation(const fs::path& run_dir) {
  FinalEvaluation e;
  try {
    std::ifstream in(rl::RunFiles(run_dir).result);
    const nlohmann::json j = nlohmann::json::parse(in);
    if (j.is_object() && j.contains("mean_normalized") && j["mean_normalized"].is_null()) {
      // What a NaN score is written as: JSON has no NaN.
      e.unreadable =
          "mean_normalized is null: the evaluation's returns were not finite (a "
          "diverged policy?)";
      return e;
    }
    e.score = j.at("mean_normalized").get<double>();
    e.episodes = j.value("episodes", int64_t{-1});
    e.train_step = j.value("train_step", int64_t{0});
    e.seed = j.value("seed", kFinalEvaluationSeed);
  } catch (const std::exception& error) {
    e.unreadable = std::string(
                       "expected JSON with mean_normalized (a number) and episodes and train_step "
                       "(integers, where present) (") +
                   error.what() + ")";
  }
  return e;
}

}  // namespace minrnn::eval
