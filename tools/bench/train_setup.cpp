#include "tools/bench/train_setup.h"

#include <chrono>
#include <cstdio>
#include <vector>

#include "io/csv.h"
#include "ops/device.h"
#include "rl/run_start.h"
#include "sweep/estimate.h"
#include "tools/commands.h"

namespace minrnn::cli {

void add_shape_options(CLI::App* sub, TrainShape& shape) {
  sub->add_option("--batch", shape.batch, "B")->check(positive_count());
  sub->add_option("--context", shape.context, "K")->check(positive_count());
  sub->add_option("--embed", shape.embed, "embedding width")->check(positive_count());
  sub->add_option("--layers", shape.layers, "layers")->check(positive_count());
  sub->add_option("--expansion", shape.expansion,
                  "minRNN/HGRN hidden width / embed (default 1; not used by the Transformer)")
      ->check(positive());
  sub->add_option("--matmul-precision", shape.matmul_precision,
                  "on CUDA: fp32 (default) or tf32 (tensor cores, as a config's matmul_precision)")
      ->check(CLI::IsMember({"fp32", "tf32"}));
}

std::string matmul_precision_on(const TrainShape& shape, const std::string& device) {
  return core::names_cuda(device) ? shape.matmul_precision : "fp32";
}

std::string arithmetic(const TrainShape& shape) {
  return shape.matmul_precision == "tf32" ? "float32, CUDA matmuls in TF32" : "float32";
}

data::SequenceBatch synthetic_batch(const TrainShape& o) {
  const int64_t B = o.batch, K = o.context;
  data::SequenceBatch b;
  b.batch_size = static_cast<int>(B);
  b.context_len = static_cast<int>(K);
  b.obs_dim = static_cast<int>(o.obs_dim);
  b.act_dim = static_cast<int>(o.act_dim);
  auto values = [](const torch::Tensor& t) {
    return std::vector<float>(t.data_ptr<float>(), t.data_ptr<float>() + t.numel());
  };
  b.states = values(torch::randn({B, K, o.obs_dim}));
  b.actions = values(torch::rand({B, K, o.act_dim}) * 2 - 1);
  b.returns_to_go = values(torch::randn({B, K, 1}));
  const torch::Tensor t = torch::randint(0, 1000, {B, K}, torch::kInt64);
  b.timesteps.assign(t.data_ptr<int64_t>(), t.data_ptr<int64_t>() + t.numel());
  b.mask.assign(static_cast<size_t>(B * K), 1.0f);
  return b;
}

namespace {

// The training config a bench's run of `backbone` has.
rl::TrainConfig shape_config(const TrainShape& o, const std::string& backbone) {
  rl::TrainConfig c;
  c.backbone = backbone;
  c.batch_size = o.batch;
  c.context_len = o.context;
  c.n_layers = o.layers;
  c.embed_dim = o.embed;
  c.expansion = o.expansion;
  c.grad_clip = 0.25;
  c.return_scale = 1;
  c.matmul_precision = o.matmul_precision;  // set by the trainer's step on CUDA
  return c;
}

rl::Agent training_agent(const TrainShape& o, const std::string& backbone,
                         const torch::Device& device, uint64_t seed) {
  torch::manual_seed(seed);
  rl::Agent agent;
  agent.config = shape_config(o, backbone);
  agent.model = rl::DecisionModel(rl::model_options(agent.config, o.obs_dim, o.act_dim));
  agent.model->to(device);
  agent.model->train();
  return agent;
}

}  // namespace

void check_shape_fits(const TrainShape& shape, const std::vector<std::string>& backbones, int runs,
                      bool on_cpu) {
  for (const std::string& backbone : backbones) {
    const std::string shortfall =
        rl::memory_shortfall(runs * rl::min_training_bytes(shape_config(shape, backbone),
                                                           shape.obs_dim, shape.act_dim, on_cpu));
    if (shortfall.empty()) continue;
    throw std::invalid_argument("--layers " + std::to_string(shape.layers) + ", --embed " +
                                std::to_string(shape.embed) + ", --batch " +
                                std::to_string(shape.batch) + ", --context " +
                                std::to_string(shape.context) + ": " + std::to_string(runs) + " " +
                                backbone + " run(s) need " + shortfall);
  }
}

BenchTrainer::BenchTrainer(const TrainShape& shape, const std::string& backbone,
                           const torch::Device& device, uint64_t seed, rl::StepMode mode)
    : agent(training_agent(shape, backbone, device, seed)),
      optimizer(agent.model->parameters(), torch::optim::AdamWOptions(1e-4).weight_decay(1e-4)),
      step(agent, optimizer, device, mode) {}

std::vector<StepMatmul> training_step_matmuls(const rl::Agent& agent, const TrainShape& o) {
  std::vector<StepMatmul> matmuls;
  for (const auto& item : agent.model->named_modules("", /*include_self=*/false)) {
    const auto* linear = item.value()->as<torch::nn::Linear>();
    if (!linear) continue;
    const bool one_kind = item.key().rfind("embed_", 0) == 0 || item.key() == "predict_action";
    matmuls.push_back(
        {o.batch * o.context * (one_kind ? 1 : 3), linear->weight.size(1), linear->weight.size(0)});
  }
  return matmuls;
}

double matmul_flops(const std::vector<StepMatmul>& matmuls) {
  double flops = 0;
  for (const StepMatmul& m : matmuls) {
    flops += 6.0 * static_cast<double>(m.rows) * static_cast<double>(m.in * m.out);
  }
  return flops;
}

double training_step_flops(const rl::Agent& agent, const TrainShape& o) {
  double flops = matmul_flops(training_step_matmuls(agent, o));
  if (agent.config.backbone == "transformer") {
    const double B = static_cast<double>(o.batch), T = 3.0 * static_cast<double>(o.context);
    flops += 12 * B * T * T * static_cast<double>(o.embed) * static_cast<double>(o.layers);
  }
  return flops;
}

std::string rate_table_header(const std::vector<std::string>& leading, double peak_tflops,
                              const std::vector<std::string>& trailing) {
  std::vector<std::string> columns = leading;
  columns.insert(columns.end(), {"GFLOP/step", "TFLOP/s"});
  if (peak_tflops > 0) columns.push_back("% of peak");
  columns.insert(columns.end(), trailing.begin(), trailing.end());
  std::string header = "|", separator = "|";
  for (const std::string& c : columns) {
    header += " " + c + " |";
    separator += "---|";
  }
  return header + "\n" + separator + "\n";
}

std::string flop_cells(double run_steps_per_s, double step_gflop, double peak_tflops) {
  const double tflops = run_steps_per_s * step_gflop / 1e3;
  char buf[96];
  int n = std::snprintf(buf, sizeof buf, " %.2f | %.2f |", step_gflop, tflops);
  if (peak_tflops > 0) {
    std::snprintf(buf + n, sizeof buf - n, " %.1f |", 100.0 * tflops / peak_tflops);
  }
  return buf;
}

TimedRounds time_rounds(double seconds, const std::function<void()>& round,
                        const std::function<void()>& finish) {
  using Clock = std::chrono::steady_clock;
  TimedRounds timed;
  const auto t0 = Clock::now();
  double elapsed = 0;
  while (elapsed < seconds || timed.rounds < 5) {
    round();
    ++timed.rounds;
    elapsed = std::chrono::duration<double>(Clock::now() - t0).count();
  }
  finish();
  elapsed = std::chrono::duration<double>(Clock::now() - t0).count();
  timed.per_second = static_cast<double>(timed.rounds) / elapsed;
  return timed;
}

BenchCsv rate_csv(std::vector<std::string> leading) {
  leading.insert(leading.end(),
                 {sweep::pack_csv::kRunStepsPerS, "ms_per_run_step", "step_gflop", "tflops"});
  return BenchCsv(std::move(leading));
}

void add_rate_row(BenchCsv& csv, std::vector<std::string> leading, double run_steps_per_s,
                  double step_gflop) {
  leading.insert(leading.end(),
                 {io::csv_number(run_steps_per_s), io::csv_number(1000.0 / run_steps_per_s),
                  io::csv_number(step_gflop), io::csv_number(run_steps_per_s * step_gflop / 1e3)});
  csv.add_row(leading);
}

}  // namespace minrnn::cli
