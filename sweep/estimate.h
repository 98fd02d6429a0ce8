// `minrnn sweep SWEEP.yaml --estimate`: how long the runs a sweep still has to train and evaluate
// take on a machine, projected from what the benchmarks measured there — `minrnn bench pack`
// (run-steps/s of P runs side by side: what a sweep's pack does) for training and `minrnn bench
// eval` (env steps/s of batched rollouts) for the evaluations. Nothing is started.
//
// The arithmetic, each assumption said where it is printed:
// - a pack of n runs costs each run-step 1 / rate(P), the rate bench pack measured for that run's
//   shape at P runs, P the largest measured ≤ n (more runs side by side only go faster, so this
//   errs long); a pack smaller than every measured P borrows the smallest and is marked;
// - packs take turns on the device: processes on one GPU (without MPS) do, and on the CPU each
//   process's threads share the same cores, so `parallel` does not shorten the device's time;
// - every evaluation episode runs its full max_ep_len steps (an upper bound: episodes end early
//   when the agent falls), at the batched rate bench eval measured for the backbone's policy.
#pragma once
#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "sweep/sweep.h"

namespace minrnn::sweep {

// What a training step's cost depends on, as bench pack records it.
struct StepShape {
  std::string backbone;
  int64_t batch = 0, context = 0, embed = 0, layers = 0;
  double expansion = 1;  // not the Transformer's
  std::string matmul_precision = "fp32";
  bool operator==(const StepShape& o) const;
  std::string describe() const;  // "mingru embed 256, 3 layers, B 64, K 20, fp32"
};

// Where `minrnn bench pack` and `bench eval` write their CSVs by default, and so where an
// estimate given no --rates looks (relative to the folder minrnn runs in).
inline constexpr const char* kPackRatesCsv = "runs/bench/pack.csv";
inline constexpr const char* kEvalRatesCsv = "runs/bench/eval.csv";

// The columns of bench pack's CSV (kPackRatesCsv) that read_measured_rates reads back, as
// tools/bench/pack.cpp writes them: where and what a row measured, then its rate. A file from
// before `expansion` or `matmul_precision` was written reads 1 and fp32 there.
namespace pack_csv {
inline constexpr const char *kDevice = "device", *kMachine = "machine", *kBackbone = "backbone",
                            *kStep = "step", *kPack = "pack", *kBatch = "batch",
                            *kContext = "context", *kEmbed = "embed", *kLayers = "layers",
                            *kExpansion = "expansion", *kMatmulPrecision = "matmul_precision",
                            *kRunStepsPerS = "run_steps_per_s";
}  // namespace pack_csv

// One row of bench pack's CSV (kPackRatesCsv).
struct PackRate {
  std::string device_kind, machine, step;  // device_kind: "cpu" or "cuda"; step: "cuda graph"
  StepShape shape;
  int pack = 0;
  double run_steps_per_s = 0;
};
// One row of bench eval's CSV (kEvalRatesCsv).
struct EvalRate {
  std::string machine, policy, batching;
  std::string env;  // the environment's family ("hopper"); halfcheetah in a file without the column
  int64_t embed = 0, layers = 0, context = 0;
  double env_steps_per_s = 0;
};
struct MeasuredRates {
  std::vector<std::string> files;
  std::vector<PackRate> packs;
  std::vector<EvalRate> evals;
};
// Reads bench pack and bench eval CSVs (which is which by their columns). Throws
// std::runtime_error naming the file, line and column of anything it cannot read.
MeasuredRates read_measured_rates(const std::vector<std::string>& csv_files);

// The training of runs of one shape in packs that borrow one measured pack size.
struct TrainingLine {
  StepShape shape;
  int runs = 0;
  int pack = 0;                 // the largest pack these runs train in
  int measured_pack = 0;        // the P whose rate is used (0: none measured for the shape)
  bool below_measured = false;  // the packs are smaller than every P measured (errs short)
  bool stacked = false;         // its runs train as one stacked model (bench pack --stacked)
  int64_t run_steps = 0;        // still to train, over these runs
  double run_steps_per_s = 0;   // rate(measured_pack)
  double seconds = 0;           // run_steps / rate; NaN where nothing was measured
};
// The evaluations of runs of one backbone and size.
struct EvaluationLine {
  std::string backbone, policy;  // policy: the bench eval row used ("" where none matches)
  // The runs' environment family, "" where neither the config nor the dataset's name says; then a
  // row of any environment is used, and rates_env names which.
  std::string env, rates_env;
  int64_t embed = 0, layers = 0, context = 0;
  int64_t episodes = 0, env_steps = 0;      // env_steps: episodes × the env's time limit
  double env_steps_per_s = 0, seconds = 0;  // NaN where nothing was measured
};

struct SweepEstimate {
  std::string device_kind, train_machine, eval_machine;
  int runs = 0, runs_left = 0, packs = 0;
  std::vector<TrainingLine> training;
  std::vector<EvaluationLine> evaluation;
  // Σ of the lines with a measured rate; the lines without one are counted, not guessed.
  double train_seconds = 0, eval_seconds = 0;
  int train_unmeasured = 0, eval_unmeasured = 0;
  std::vector<std::string> files;
};

// The sweep's runs still to train (from the steps each run's metrics.csv logged) and evaluate,
// grouped into packs as the sweep would (group_packs), against `rates`. Throws
// std::invalid_argument where the runs' devices differ or the rates of the device kind come from
// several machines.
SweepEstimate estimate_sweep(const SweepSpec& spec, const std::vector<SweepRun>& runs,
                             const MeasuredRates& rates);

std::string format_estimate(const SweepSpec& spec, const SweepEstimate& e);  // markdown
nlohmann::json estimate_json(const SweepEstimate& e);

}  // namespace minrnn::sweep
