// What `bench train` and `bench pack` both train: the decision model at a given shape (hopper dims,
// B 64, K 20, embed 128, 3 layers by default) on a synthetic batch of the trainer's shapes, and
// the matmul FLOPs one of its training steps does.
#pragma once
#include <torch/torch.h>

#include <CLI/CLI.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "datasets/sampler.h"
#include "ops/fused_adamw.h"
#include "rl/agent.h"
#include "rl/train_step.h"
#include "tools/bench/report.h"

namespace minrnn::cli {

struct TrainShape {
  int64_t batch = 64, context = 20, embed = 128, layers = 3, obs_dim = 11, act_dim = 3;
  double expansion = 1.0;  // minRNN/HGRN hidden width / embed (the Transformer has none)
  std::string matmul_precision = "fp32";  // on CUDA, fp32 or tf32 (core::set_cuda_matmul_precision)
};

// --batch, --context, --embed, --layers, --expansion, --matmul-precision.
void add_shape_options(CLI::App* sub, TrainShape& shape);

// "float32", or "float32, CUDA matmuls in TF32": how the benches' entries name the arithmetic.
std::string arithmetic(const TrainShape& shape);
// The precision a row measured on `device` ran in: the shape's on CUDA, fp32 elsewhere (a CPU's
// products ignore tf32), so a CSV row never claims tensor cores it did not use.
std::string matmul_precision_on(const TrainShape& shape, const std::string& device);

// A batch of `shape` with random values (torch's generator), as the sampler hands it to the step.
data::SequenceBatch synthetic_batch(const TrainShape& shape);

// Throws std::invalid_argument naming the shape's options where `runs` runs of any of
// `backbones` need more memory than the machine has (rl::min_training_bytes): before anything is
// built, which would grow until the OOM killer ends it.
void check_shape_fits(const TrainShape& shape, const std::vector<std::string>& backbones, int runs,
                      bool on_cpu);

// What the benches train: an untrained agent of `shape` with `backbone` (its model on `device`,
// its weights drawn from `seed`, grad clip 0.25, return scale 1), its AdamW (lr and weight decay
// 1e-4) and the trainer's step in `mode`, with CUDA's matmuls in `shape.matmul_precision`. Built
// in place: the step refers to the other two.
struct BenchTrainer {
  BenchTrainer(const TrainShape& shape, const std::string& backbone, const torch::Device& device,
               uint64_t seed, rl::StepMode mode);
  rl::Agent agent;
  core::FusedAdamW optimizer;
  rl::TrainStep step;
};

// One Linear's products in a training step: `rows` tokens through in → out, forward x · Wᵀ and
// backward dy · W and dyᵀ · x, 6 · rows · in · out FLOPs. Each token embedding sees one kind of
// token and the action head the state tokens (B·K rows each); the backbone's see all three (B·3K).
struct StepMatmul {
  int64_t rows, in, out;
};
std::vector<StepMatmul> training_step_matmuls(const rl::Agent& agent, const TrainShape& shape);
// Their FLOPs: Σ 6 · rows · in · out.
double matmul_flops(const std::vector<StepMatmul>& matmuls);

// The useful arithmetic of one training step: its Linears' (training_step_matmuls), plus the
// Transformer's attention (QKᵀ and AV over 3K tokens, 12 · B · (3K)² · embed a layer, the causal
// half that is masked included). Layer norms, the scan, activations and AdamW are left out
// (elementwise: bandwidth, not arithmetic).
double training_step_flops(const rl::Agent& agent, const TrainShape& shape);

// `round` repeated for at least `seconds` and 5 rounds, `finish` (every queued round done: a sync)
// before the clock stops; the rounds and the rounds a second. The caller warms up first and
// starts it with nothing queued.
struct TimedRounds {
  int64_t rounds = 0;
  double per_second = 0;
};
TimedRounds time_rounds(double seconds, const std::function<void()>& round,
                        const std::function<void()>& finish);

// The two pack benches' tables (bench pack, bench pack-limits) end each row with the same
// arithmetic: GFLOP a run-step, TFLOP/s and, with a peak (> 0), its share. The header and
// separator lines for `leading` columns, those, then `trailing` ones (after the rate's, so
// scripts that read a table's rate cells by position read older tables' alike); a row's rate
// cells after its leading ones (" 11.34 | 22.44 | 33.5 |"); a CSV of `leading` columns then the
// rate's (run_steps_per_s, ms_per_run_step, step_gflop, tflops), and a row of it.
std::string rate_table_header(const std::vector<std::string>& leading, double peak_tflops,
                              const std::vector<std::string>& trailing = {});
std::string flop_cells(double run_steps_per_s, double step_gflop, double peak_tflops);
BenchCsv rate_csv(std::vector<std::string> leading);
void add_rate_row(BenchCsv& csv, std::vector<std::string> leading, double run_steps_per_s,
                  double step_gflop);

}  // namespace minrnn::cli
