// A sweep's run made by hand for the report's tests: its eval.json, done.json and curves.
#pragma once
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

namespace minrnn::testing {

// A finished run (done.json at `step`) with its result (eval.json); `finished` false leaves
// done.json out, as for a run still training that someone evaluated.
inline void make_run(const std::filesystem::path& sweep, const std::string& dataset,
                     const std::string& backbone, int seed, double score, bool curves = false,
                     bool finished = true, int64_t step = 500) {
  const std::filesystem::path run = sweep / dataset / backbone / ("seed" + std::to_string(seed));
  std::filesystem::create_directories(run);
  std::ofstream(run / "eval.json") << nlohmann::json{{"mean_normalized", score}}.dump();
  if (finished) std::ofstream(run / "done.json") << nlohmann::json{{"step", step}}.dump();
  if (curves) {
    std::ofstream m(run / "metrics.csv");
    m << "step,loss,lr,grad_norm,steps_per_s,elapsed_s\n";
    for (int s = 1; s <= 5; ++s) m << s * 100 << "," << 1.0 / s << ",0.001,0.1,10,1\n";
    std::ofstream(run / "evals.csv") << "250,100,1,20,1\n500,200,1,40.5,2\n";
  }
}

}  // namespace minrnn::testing
