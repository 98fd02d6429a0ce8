// A sweep's folder layout of record, SWEEP_DIR/<dataset>/<backbone>/seed<S>/: where the sweep's
// plan puts each run (sweep/plan.cpp), where --status, the local pool and `minrnn eval` find them
// (sweep/status.cpp, sweep/local_pool.cpp, tools/cmd_eval.cpp), and what `minrnn report` and
// `minrnn compare` read back, with each run's result (eval.json) as they all take it.
#pragma once
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace minrnn::eval {

struct RunDir {
  std::string dataset, backbone;
  int64_t seed = 0;
  std::filesystem::path dir;
};

// Where the sweep in `out` trains a run: <out>/<dataset>/<backbone>/seed<S>.
std::filesystem::path run_dir_of(const std::filesystem::path& out, const std::string& dataset,
                                 const std::string& backbone, int64_t seed);

// Every one, in (dataset, backbone, seed) order (plots/ and other folders are no run); throws
// std::invalid_argument where `sweep_dir` is not a directory.
std::vector<RunDir> list_run_dirs(const std::string& sweep_dir);

// Why `run` is not the run its folders name ("" when it is, or where its config.yaml does not
// read: the report's † says so): its config.yaml's backbone is another than its backbone folder;
// the environment it is evaluated in (env.json's, else config.yaml's env or dataset) is another
// than the one its dataset folder's name mentions ("hopper-tiny"); its dataset is a D4RL or Minari
// id of another dataset than its folder, where that is a D4RL dataset's name ("hopper-medium").
// The report and compare list it instead of scoring it in a cell (a walk, 2026-11-30: a copy of
// minlstm/ named gru/ became a column of its own).
std::string why_misplaced(const RunDir& run);

// A run's result, RUN_DIR/eval.json, as the report and the sweep take it: its score, the episodes
// it rolled out and the step it scored (-1 / 0 where it records none), or why it is no result
// ("" when it is one; the file not named): unreadable, a null score, fewer than one episode, or
// another step than the one done.json says the run finished at.
struct FinalEvaluation {
  double score = 0;
  int64_t episodes = -1;
  int64_t train_step = 0;
  int64_t seed = 0;  // its episodes' first env seed (0 where it records none)
  std::string unreadable;
};
// The episodes' seed of a run's result: `minrnn eval`'s default --seed, the one a sweep evaluates
// with (a result of another is no result of the sweep's: tuning on the scored episodes).
inline constexpr int64_t kFinalEvaluationSeed = 0;
FinalEvaluation read_final_evaluation(const std::filesystem::path& run_dir);
// What the report, `--status` and the sweep's refusal say to do with an eval.json that is no
// result of the sweep's: the sweep evaluates a run without one again.
inline constexpr const char* kResultAwayAdvice =
    "move it away and the sweep evaluates the run again";

}  // namespace minrnn::eval
