// `minrnn bench train`'s options and its rows (one a measured backbone and device), and how they
// are reported: the markdown table filed in docs/benchmarks.md and runs/bench/train.csv.
#pragma once
#include <cmath>
#include <string>
#include <vector>

#include "rl/decision_model.h"
#include "tools/bench/peer.h"
#include "tools/bench/report.h"
#include "tools/bench/train_setup.h"

namespace minrnn::cli::bench_train {

struct TrainBenchOptions {
  std::vector<std::string> backbones = rl::backbone_names();
  std::vector<std::string> devices;  // default: cpu, plus cuda when available
  TrainShape shape;
  double seconds = 10;  // timed seconds per cell (after warm-up)
  bool quick = false;
  bool profile = false;
  int top_ops = 15;
  int rounds = 1;              // ours measured this many times, each between two peer runs
  bool eager_too = false;      // on CUDA, also time the eager step beside the graph
  bool side_work_too = false;  // on CUDA, also time the graph with side work (ops/side_work.h)
  std::string peer;            // command; "CMD train SECONDS" must print "= X steps/s"
  BenchFiling filing;
};

// Phases of one step, summed over the timed steps.
struct Phases {
  double forward = 0, backward = 0, clip = 0, optimizer = 0;
};

struct Row {
  int round = 0;
  std::string backbone, device, mode;  // mode: how the trainer's step ran (rl/train_step.h)
  int64_t params = 0, steps = 0;
  double steps_per_s = 0;
  Phases phases;  // ms per step
  double peak_mib = NAN;
  int64_t graph_launches = 0;  // kernels, copies and fills one replay launches (0: eager)
  std::string profile;         // markdown, with --profile: the eager step's ATen ops
  std::string kernel_profile;  // markdown, with --profile on CUDA: the trainer's step's kernels
};

constexpr int kProfiled = 5;  // steps per --profile

// The markdown section: what was measured and how, the peer's runs, a row each, the ratio to the
// peer over rounds, and the profiles --profile took.
std::string format_table(const TrainBenchOptions& o, const std::vector<Row>& rows,
                         const PeerRuns& peer);

// The same rows as CSV, one column a field.
BenchCsv results_csv(const TrainBenchOptions& o, const std::vector<Row>& rows,
                     const PeerRuns& peer);

}  // namespace minrnn::cli::bench_train
