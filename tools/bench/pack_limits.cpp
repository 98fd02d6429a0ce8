// `minrnn bench pack-limits`: what holds a pack of P runs back on one GPU (issue 41's pack
// targets). Each probe is one side of a training step alone, run the way `bench pack` runs its
// runs (P streams, each replaying a CUDA graph, stepped in turn from one host thread):
// - launches: a graph of as many kernels as the backbone's step launches, each adding 1 to one
//   float: the run-steps/s the launches alone allow (the host's replays, the GPU's scheduling);
// - matmuls: a graph of the step's Linear products (tools/bench/train_setup.h), each the shapes
//   of one run, as cuBLAS picks its kernels for them: the run-steps/s the matmuls alone allow;
// - batched matmuls: the same products of all P runs as one batched product each (the weights of
//   the runs stacked), on one stream: what a pack built that way could reach;
// - one model over P runs' rows: the whole real step (graph, our kernels, LibTorch's products) at
//   batch P·B, P run-steps a step. Every launch of a weights-stacked pack (docs/core.md, "A pack
//   as one model") would cover all P runs this way; its products would be batched over the runs
//   where these are P times taller, and its per-run γ/β, seeds and norms cost an index a row. So
//   this is the rate that design can hope for, whole, before anyone builds it.
// Beside `bench pack` for the same P, the nearest ceiling is what bounds the pack. Prints a
// markdown table, files it under "## Pack limits (minrnn bench pack-limits)", the numbers as CSV
// in runs/bench/pack_limits.csv. CUDA only.
#include <torch/cuda.h>

#include <cstdio>
#include <functional>
#include <memory>
#include <sstream>
#include <stdexcept>

#include "io/csv.h"
#include "ops/cuda_graph.h"
#include "ops/device.h"
#include "tools/bench/report.h"
#include "tools/bench/train_setup.h"
#include "tools/commands.h"

namespace minrnn::cli::bench_pack_limits {
namespace {

constexpr const char* kLimitsSection = "## Pack limits (minrnn bench pack-limits)";
constexpr const char* kLimitsCsv = "runs/bench/pack_limits.csv";

struct LimitsOptions {
  std::string backbone = "mingru";
  std::vector<int> packs = {1, 4, 16, 32};
  std::string device = "cuda";
  TrainShape shape;
  double seconds = 2;      // timed seconds per cell (after warm-up)
  double peak_tflops = 0;  // the device's fp32 peak, for the share column; 0: not shown
  BenchFiling filing;
};

struct ProbeRow {
  std::string probe;
  int pack = 0;
  int64_t replays = 0;
  double run_steps_per_s = 0, step_gflop = 0;
};

// `streams` streams, each replaying the graph `queue(s)` captured on it (queued once eagerly
// first, so cuBLAS's handles and workspaces exist before the capture), in turn from this thread
// for `seconds`; a replay is `runs_per_replay` run-steps.
ProbeRow replay_rate(const LimitsOptions& o, int streams, int runs_per_replay,
                     const std::function<void(int)>& queue) {
  torch::cuda::synchronize();  // the operands were filled on the default stream
  std::vector<std::unique_ptr<core::WorkStream>> on(static_cast<size_t>(streams));
  std::vector<std::unique_ptr<core::CudaGraph>> graphs(on.size());
  for (int s = 0; s < streams; ++s) {
    on[s] = std::make_unique<core::WorkStream>(true);
    const core::WorkStream::Scope scope(*on[s]);
    queue(s);
    graphs[s] = std::make_unique<core::CudaGraph>([&] { queue(s); });
  }
  auto round = [&] {
    for (int s = 0; s < streams; ++s) {
      const core::WorkStream::Scope scope(*on[s]);
      graphs[s]->replay();
    }
  };
  for (int i = 0; i < 3; ++i) round();
  torch::cuda::synchronize();
  const TimedRounds timed = time_rounds(o.seconds, round, [] { torch::cuda::synchronize(); });
  ProbeRow row;
  row.replays = timed.rounds * streams;
  row.run_steps_per_s = timed.per_second * streams * runs_per_replay;
  return row;
}

// A step's Linear products for `runs` runs stacked (one run: plain 2-D products), their operands
// and outputs allocated once: forward y = x · Wᵀ, backward dx = dy · W and dW = dyᵀ · x.
struct StepProducts {
  std::vector<torch::Tensor> x, w, dy, y, dx, dw;
  StepProducts(const std::vector<StepMatmul>& matmuls, int runs, const torch::Device& device) {
    const auto opts = torch::TensorOptions().device(device);
    auto shaped = [&](int64_t a, int64_t b) {
      return runs == 1 ? torch::randn({a, b}, opts) : torch::randn({runs, a, b}, opts);
    };
    for (const StepMatmul& m : matmuls) {
      x.push_back(shaped(m.rows, m.in));
      w.push_back(shaped(m.out, m.in));
      dy.push_back(shaped(m.rows, m.out));
      y.push_back(shaped(m.rows, m.out));
      dx.push_back(shaped(m.rows, m.in));
      dw.push_back(shaped(m.out, m.in));
    }
  }
  void queue() {
    for (size_t i = 0; i < x.size(); ++i) {
      if (x[i].dim() == 2) {
        at::mm_out(y[i], x[i], w[i].t());
        at::mm_out(dx[i], dy[i], w[i]);
        at::mm_out(dw[i], dy[i].t(), x[i]);
      } else {
        at::bmm_out(y[i], x[i], w[i].transpose(1, 2));
        at::bmm_out(dx[i], dy[i], w[i]);
        at::bmm_out(dw[i], dy[i].transpose(1, 2), x[i]);
      }
    }
  }
};

// What the probes copy from the backbone's real step: its graph's launches and its matmuls.
struct StepOutline {
  int64_t launches = 0;
  std::vector<StepMatmul> matmuls;
  double gflop = 0;        // the matmuls'
  double whole_gflop = 0;  // the step's useful arithmetic (the Transformer's attention too)
};

StepOutline outline_of_step(const LimitsOptions& o, const torch::Device& device) {
  core::set_cuda_matmul_precision(o.shape.matmul_precision);
  BenchTrainer trainer(o.shape, o.backbone, device, 0, rl::StepMode::kGraph);
  const data::SequenceBatch batch = synthetic_batch(o.shape);
  for (int i = 0; i < 5; ++i) trainer.step.run(batch, 1e-4, static_cast<uint64_t>(i));
  StepOutline step{trainer.step.graph_nodes().total(),
                   training_step_matmuls(trainer.agent, o.shape)};
  step.gflop = matmul_flops(step.matmuls) / 1e9;
  step.whole_gflop = training_step_flops(trainer.agent, o.shape) / 1e9;
  return step;
}

// The real step at batch pack · B, timed as bench train times one run; a step is `pack` run-steps.
ProbeRow one_model_rate(const LimitsOptions& o, const torch::Device& device, int pack) {
  TrainShape wide = o.shape;
  wide.batch = o.shape.batch * pack;
  BenchTrainer trainer(wide, o.backbone, device, 0, rl::StepMode::kGraph);
  const data::SequenceBatch batch = synthetic_batch(wide);
  auto step = [&] { trainer.step.run(batch, 1e-4, static_cast<uint64_t>(trainer.agent.step)); };
  for (int i = 0; i < 5; ++i) step();  // warm-up, and the capture after the third
  trainer.step.last_stats();
  const TimedRounds timed = time_rounds(o.seconds, step, [&] { trainer.step.last_stats(); });
  ProbeRow row;
  row.replays = timed.rounds;
  row.run_steps_per_s = timed.per_second * pack;
  row.probe = "one model over P runs' rows (" + trainer.step.description() + ", B " +
              std::to_string(wide.batch) + ")";
  return row;
}

std::vector<ProbeRow> measure(const LimitsOptions& o, const StepOutline& step,
                              const torch::Device& device, int pack) {
  const int64_t launches = step.launches;
  const std::vector<StepMatmul>& matmuls = step.matmuls;
  std::vector<ProbeRow> rows;
  std::vector<torch::Tensor> counters;
  for (int s = 0; s < pack; ++s) counters.push_back(torch::zeros({1}, device));
  rows.push_back(replay_rate(o, pack, 1, [&](int s) {
    for (int64_t k = 0; k < launches; ++k) counters[s].add_(1);
  }));
  rows.back().probe = "launches (" + std::to_string(launches) + " a step)";  // no arithmetic
  {
    std::vector<std::unique_ptr<StepProducts>> per_run;
    for (int s = 0; s < pack; ++s) {
      per_run.push_back(std::make_unique<StepProducts>(matmuls, 1, device));
    }
    rows.push_back(replay_rate(o, pack, 1, [&](int s) { per_run[s]->queue(); }));
    rows.back().probe = "matmuls, a stream a run";
    rows.back().step_gflop = step.gflop;
  }
  if (pack > 1) {
    StepProducts stacked(matmuls, pack, device);
    rows.push_back(replay_rate(o, 1, pack, [&](int) { stacked.queue(); }));
    rows.back().probe = "matmuls, batched over the runs";
    rows.back().step_gflop = step.gflop;
    rows.push_back(one_model_rate(o, device, pack));
    rows.back().step_gflop = step.whole_gflop;
  }
  for (ProbeRow& r : rows) r.pack = pack;
  return rows;
}

std::string format_table(const LimitsOptions& o, const std::vector<ProbeRow>& rows,
                         const torch::Device& device) {
  std::ostringstream md;
  const TrainShape& s = o.shape;
  md << entry_heading(hardware_name(device)) << " (~" << o.seconds
     << " s a measurement). One side of a " << o.backbone << " training step (B=" << s.batch
     << ", K=" << s.context << ", embed " << s.embed << ", " << s.layers << " layers, hopper dims, "
     << arithmetic(s) << ") alone, for P runs as `bench pack` runs them (a stream and a CUDA graph "
     << "each, replayed in turn from one thread): its launches (kernels adding 1 to one float), "
     << "its Linear products a run at a time, and those of all P runs batched on one stream; "
     << "and the whole step as one model over the P runs' rows (batch P·B), the ceiling of a "
     << "weights-stacked pack. "
     << "Beside `bench pack`'s rate at the same P, the nearest ceiling is what holds the pack back "
     << "(tools/bench/pack_limits.cpp).\n\n"
     << rate_table_header({"probe", "P", "run-steps/s", "ms per run-step"}, o.peak_tflops);
  char buf[256];
  for (const ProbeRow& r : rows) {
    std::snprintf(buf, sizeof buf, "| %s | %d | %.1f | %.3f |", r.probe.c_str(), r.pack,
                  r.run_steps_per_s, 1000.0 / r.run_steps_per_s);
    md << buf << flop_cells(r.run_steps_per_s, r.step_gflop, o.peak_tflops) << "\n";
  }
  return md.str();
}

BenchCsv limits_csv(const LimitsOptions& o, const std::vector<ProbeRow>& rows,
                    const torch::Device& device) {
  BenchCsv csv = rate_csv({"device", "machine", "backbone", "probe", "pack", "batch", "context",
                           "embed", "layers", "expansion", "matmul_precision", "replays"});
  for (const ProbeRow& r : rows) {
    add_rate_row(
        csv,
        {device.str(), hardware_name(device), o.backbone, r.probe, std::to_string(r.pack),
         std::to_string(o.shape.batch), std::to_string(o.shape.context),
         std::to_string(o.shape.embed), std::to_string(o.shape.layers),
         io::csv_number(o.shape.expansion), o.shape.matmul_precision, std::to_string(r.replays)},
        r.run_steps_per_s, r.step_gflop);
  }
  return csv;
}

}  // namespace

void add(CLI::App& bench) {
  auto o = std::make_shared<LimitsOptions>();
  auto* sub = bench.add_subcommand(
      "pack-limits",
      "What bounds a pack on one GPU: a step's launches alone, its matmuls alone (a stream a run, "
      "or batched over the runs)");
  sub->add_option("--backbone", o->backbone, "mingru, minlstm, hgrn or transformer")
      ->check(backbone_name());
  sub->add_option("--packs", o->packs, "pack sizes P (default 1,4,16,32)")
      ->delimiter(',')
      ->check(positive_count());
  sub->add_option("--device", o->device, "cuda[:N] (the probes are CUDA graphs)")
      ->check(device_name());
  add_shape_options(sub, o->shape);
  sub->add_option("--seconds", o->seconds, "timed seconds per probe")->check(positive());
  sub->add_option("--peak-tflops", o->peak_tflops,
                  "the device's fp32 peak in TFLOP/s, for a % of peak column")
      ->check(positive());
  add_filing_options(sub, o->filing, kLimitsCsv, [o] { return limits_csv(*o, {}, torch::kCPU); });
  sub->callback([o] {
    // Said before bench_device's own refusal, whose way out (--device cpu) does not exist here.
    if (const std::string reason = core::cuda_unavailable_reason(); !reason.empty()) {
      throw std::invalid_argument("bench pack-limits measures a GPU (--device " + o->device +
                                  "; its probes are CUDA graphs on CUDA streams), but " + reason);
    }
    const torch::Device device = bench_device(o->device);
    if (!device.is_cuda()) {
      throw std::invalid_argument("bench pack-limits: --device " + o->device + " resolves to " +
                                  device.str() +
                                  "; its probes are CUDA graphs on CUDA streams (a GPU only)");
    }
    const StepOutline step = outline_of_step(*o, device);
    std::vector<ProbeRow> rows;
    for (const int pack : o->packs) {
      std::fprintf(stderr, "bench pack-limits: %s, P=%d on %s ...\n", o->backbone.c_str(), pack,
                   device.str().c_str());
      for (ProbeRow& r : measure(*o, step, device, pack)) rows.push_back(std::move(r));
    }
    file_result(o->filing, kLimitsSection, format_table(*o, rows, device),
                limits_csv(*o, rows, device), kLimitsCsv);
  });
}

}  // namespace minrnn::cli::bench_pack_limits
