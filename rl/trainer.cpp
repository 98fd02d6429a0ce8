#include "rl/trainer.h"

#include <cstdio>
#include <filesystem>
#include <map>
#include <stdexcept>

#include "datasets/episodes.h"
#include "io/atomic_file.h"
#include "rl/training_run.h"

namespace minrnn::rl {

namespace fs = std::filesystem;

std::string env_json_path(const std::string& run_dir) {
  return (fs::path(run_dir) / "env.json").string();
}

void append_eval_row(const std::string& run_dir, const EvalRow& r) {
  const fs::path path = fs::path(run_dir) / "evals.csv";
  char line[160];
  std::snprintf(line, sizeof line, "%lld,%.3f,%.3f,%.3f,%.3f\n", static_cast<long long>(r.step),
                r.mean_return, r.std_return, r.mean_normalized, r.std_normalized);
  // Whole lines only: a kill can tear at most this one, which readers and resume skip; a failed
  // write (disk full) is taken back and reported naming the file.
  io::append_to_file(path.string(), line);
}

std::string default_run_dir(const std::string& config_path, int64_t seed) {
  return (fs::path("runs") / (fs::path(config_path).stem().string() + "-s" + std::to_string(seed)))
      .string();
}

TrainResult train(const TrainConfig& config, const TrainOptions& options) {
  TrainingRun run(config, options);
  while (!run.stepped_out()) run.step();
  return run.finish();
}

std::vector<TrainResult> train_pack(const std::vector<PackMember>& members) {
  std::vector<TrainResult> results(members.size());
  std::vector<std::unique_ptr<TrainingRun>> runs(members.size());
  auto fail = [&](size_t i, const std::exception& e) {
    results[i].error = e.what();
    runs[i].reset();  // its lock goes; its last checkpoint stays what it was
    std::fprintf(stderr, "minrnn train: %s failed: %s (the pack's other runs go on)\n",
                 members[i].options.run_dir.c_str(), e.what());
  };
  std::map<std::string, std::shared_ptr<const data::Dataset>> loaded;  // by dataset id or path
  for (size_t i = 0; i < members.size(); ++i) {
    try {
      // LibTorch holds the matmul precision for the whole process
      // (core::set_cuda_matmul_precision).
      const std::string& precision = members[0].config.matmul_precision;
      if (members[i].config.matmul_precision != precision) {
        throw std::invalid_argument("matmul_precision " + members[i].config.matmul_precision +
                                    " differs from the pack's first run's (" + precision +
                                    "): one process computes in one precision");
      }
      auto& data = loaded[members[i].config.dataset];
      if (!data) data = load_training_data(members[i].config.dataset);
      TrainOptions options = members[i].options;
      options.finished_is_done = true;
      runs[i] = std::make_unique<TrainingRun>(members[i].config, options, data);
    } catch (const std::exception& e) {
      fail(i, e);
    }
  }
  for (bool stepped = true; stepped;) {
    stepped = false;
    for (size_t i = 0; i < runs.size(); ++i) {
      if (!runs[i] || runs[i]->stepped_out()) continue;
      try {
        runs[i]->step();
        stepped = true;
      } catch (const std::exception& e) {
        fail(i, e);
      }
    }
  }
  for (size_t i = 0; i < runs.size(); ++i) {
    if (!runs[i]) continue;
    try {
      results[i] = runs[i]->finish();
    } catch (const std::exception& e) {
      fail(i, e);
    }
  }
  return results;
}

}  // namespace minrnn::rl
