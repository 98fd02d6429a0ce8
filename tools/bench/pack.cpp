// `minrnn bench pack`: how fast P runs train side by side in one process, as a sweep's pack does
// (rl::train_pack): each run its own agent, optimizer and trainer's step (rl/train_step.h, a CUDA
// graph replayed on CUDA) on a CUDA stream of its own (core::WorkStream), stepped in turn from one
// host thread. Per backbone and pack size: the pack's run-steps/s (every run's steps summed), ms
// per run-step, and the useful arithmetic rate (tools/bench/train_setup.h counts a step's FLOPs),
// with --peak-tflops also as a share of the device's peak. The batch is synthetic and reused, so
// the host's per-step sampling (a real run's) is left out. Prints a markdown table and files it
// under "## Packs (minrnn bench pack)", the numbers as CSV in runs/bench/pack.csv.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <sstream>

#include "io/csv.h"
#include "ops/affine.h"
#include "ops/cuda_graph.h"
#include "ops/device.h"
#ifdef MINRNN_WITH_CUDA
#include "ops/tuned_gemm_cuda.h"
#endif
#include "rl/stacked_pack.h"
#include "sweep/estimate.h"
#include "tools/bench/kernel_profile.h"
#include "tools/bench/memory_probe.h"
#include "tools/bench/op_profile.h"
#include "tools/bench/report.h"
#include "tools/bench/train_setup.h"
#include "tools/commands.h"

namespace minrnn::cli::bench_pack {
namespace {

constexpr const char* kPackSection = "## Packs (minrnn bench pack)";
constexpr const char* kPackCsv = sweep::kPackRatesCsv;  // what `sweep --estimate` reads

struct PackBenchOptions {
  std::vector<std::string> backbones = {"mingru", "minlstm", "transformer"};
  std::vector<int> packs = {1, 2, 4, 8, 16};
  std::string device = "auto";
  TrainShape shape;
  double seconds = 3;      // timed seconds per cell (after warm-up)
  double peak_tflops = 0;  // the device's fp32 peak, for the share column; 0: not shown
  bool eager = false;      // eager steps instead of CUDA graphs
  bool stacked = false;    // P > 1: the runs as one stacked model (rl/stacked_pack.h)
  bool profile = false;    // on CUDA, each cell's kernels over a few rounds; eager, its copies
  bool quick = false;      // a smoke run: packs 1 and 2, 1 s a cell
  BenchFiling filing;
};

// One run of the pack, built on its own stream.
struct PackedRun {
  std::unique_ptr<core::WorkStream> stream;
  std::unique_ptr<BenchTrainer> trainer;
};

struct PackRow {
  std::string backbone, device, mode;
  int pack = 0;
  int64_t rounds = 0;
  double run_steps_per_s = 0, step_gflop = 0;
  // The most bytes torch's allocator held live for the cell (its runs built, warmed up, captured
  // and timed) beyond what lived before it, and on CUDA the most it held from the GPU: what a
  // sweep's pack of P needs of a GPU's memory (2026-11-30: 64 runs, 16.5 GiB by nvidia-smi).
  double peak_mib = 0, held_mib = -1;
  std::string kernel_profile;  // markdown, with --profile on CUDA
  std::string copies;          // markdown, with --profile --eager: the copies a round makes
};

constexpr int kProfiledRounds = 5;  // rounds of every run's step per --profile

// The copies `round` makes (eager steps dispatch their ops each round; a replayed graph none), by
// the ops they were called from, their tensors' sizes and strides: which of a pack's kernels are
// LibTorch's copies, and why.
std::string copies_of(const std::function<void()>& round, const std::function<void()>& wait) {
  OpProfile ops;
  ops.watch({"aten::copy_"});
  ops.start();
  for (int i = 0; i < kProfiledRounds; ++i) round();
  wait();
  ops.stop();
  return ops.watched_table(kProfiledRounds);
}

PackRow measure_pack(const PackBenchOptions& o, const std::string& backbone,
                     const torch::Device& device, int pack) {
  MemoryProbe memory{device};
  memory.start();
  std::vector<PackedRun> runs(static_cast<size_t>(pack));
  for (size_t i = 0; i < runs.size(); ++i) {
    PackedRun& r = runs[i];
    r.stream = std::make_unique<core::WorkStream>(device.is_cuda());
    const core::WorkStream::Scope on_stream(*r.stream);
    r.trainer = std::make_unique<BenchTrainer>(
        o.shape, backbone, device, i, o.eager ? rl::StepMode::kEager : rl::StepMode::kGraph);
  }
  const data::SequenceBatch batch = synthetic_batch(o.shape);
  std::unique_ptr<rl::StackedPack> stacked;
  std::function<void()> round, wait;
  if (o.stacked && pack > 1) {  // one model of the runs' stacked weights, one step for all
    std::vector<rl::Agent*> agents;
    std::vector<core::FusedAdamW*> optimizers;
    for (PackedRun& r : runs) {
      agents.push_back(&r.trainer->agent);
      optimizers.push_back(&r.trainer->optimizer);
    }
    stacked = std::make_unique<rl::StackedPack>(
        agents, optimizers, device, o.eager ? rl::StepMode::kEager : rl::StepMode::kGraph);
    const std::vector<const data::SequenceBatch*> batches(runs.size(), &batch);
    const std::vector<double> lrs(runs.size(), 1e-4);
    round = [&, batches, lrs] {
      std::vector<uint64_t> bases;
      for (PackedRun& r : runs) bases.push_back(static_cast<uint64_t>(r.trainer->agent.step));
      stacked->run(batches, lrs, bases);
    };
    wait = [&] { stacked->last_stats(0); };
  } else {
    round = [&] {  // one step of every run, each queued on its own stream
      for (PackedRun& r : runs) {
        const core::WorkStream::Scope on_stream(*r.stream);
        r.trainer->step.run(batch, 1e-4, static_cast<uint64_t>(r.trainer->agent.step));
      }
    };
    wait = [&] {
      for (PackedRun& r : runs) {
        const core::WorkStream::Scope on_stream(*r.stream);
        r.trainer->step.last_stats();
      }
    };
  }
  for (int i = 0; i < 5; ++i) round();  // warm-up, and each run's capture after its third
  wait();
  const TimedRounds timed = time_rounds(o.seconds, round, wait);
  PackRow row;
  row.pack = pack;
  row.rounds = timed.rounds;
  row.run_steps_per_s = timed.per_second * pack;
  row.backbone = backbone;
  row.device = device.str();
  row.mode = stacked ? "stacked " + stacked->description() : runs[0].trainer->step.description();
  row.step_gflop = training_step_flops(runs[0].trainer->agent, o.shape) / 1e9;
  constexpr double kMiB = 1024.0 * 1024.0;
  row.peak_mib = static_cast<double>(memory.peak() - memory.resident) / kMiB;
  if (memory.peak_held() >= 0) row.held_mib = static_cast<double>(memory.peak_held()) / kMiB;
  if (o.profile && device.is_cuda()) {
    row.kernel_profile = kernel_profile_of(round, kProfiledRounds, 1000.0 / timed.per_second, 40);
  }
  if (o.profile && o.eager) row.copies = copies_of(round, wait);
  return row;
}

// CUDA_DEVICE_MAX_CONNECTIONS as this process runs with it (tools/runtime_env.cpp raises it).
std::string cuda_queues() {
  const char* queues = std::getenv("CUDA_DEVICE_MAX_CONNECTIONS");
  return queues ? queues : "8 (CUDA's default)";
}

std::string format_pack_table(const PackBenchOptions& o, const std::vector<PackRow>& rows,
                              const torch::Device& device) {
  std::ostringstream md;
  const TrainShape& s = o.shape;
  md << entry_heading(hardware_name(device) + ", torch threads " +
                      std::to_string(torch::get_num_threads()))
     << " (on " << device.str() << ", ~" << o.seconds
     << " s a measurement). P runs of the decision model (B=" << s.batch << ", K=" << s.context
     << ", embed " << s.embed << ", " << s.layers << " layers, hopper dims, " << arithmetic(s)
     << ") in one process, each with its own weights and AdamW, "
     << (o.stacked ? "the runs of a pack of two or more as one stacked model (rl/stacked_pack.h: "
                     "one training step for all of them)"
                   : "each with a trainer's step on a stream of its own, stepped in turn from "
                     "one thread")
     << ", on one reused synthetic batch (no sampling)"
     << (device.is_cuda() ? ", through " + cuda_queues() + " hardware queues" : std::string())
     << ". run-steps/s = all runs' steps per second; GFLOP = the matmul FLOPs of one run's step "
     << "(tools/bench/train_setup.h).\n\n"
     << "peak MiB: the most bytes torch's allocator held live for the cell beyond what lived "
     << "before it"
     << (device.is_cuda() ? "; held: the most it held from the GPU, cache included" : "") << ".\n\n"
     << rate_table_header({"backbone", "step", "P", "run-steps/s", "ms per run-step", "× P=1"},
                          o.peak_tflops, {device.is_cuda() ? "peak MiB (held)" : "peak MiB"});
  char buf[256];
  double single = NAN;  // this backbone's P = 1
  for (size_t i = 0; i < rows.size(); ++i) {
    const PackRow& r = rows[i];
    if (i > 0 && rows[i - 1].backbone != r.backbone) single = NAN;
    if (r.pack == 1) single = r.run_steps_per_s;
    char ratio[32] = "–";  // no P = 1 row of this backbone to compare with
    if (!std::isnan(single)) std::snprintf(ratio, sizeof ratio, "%.2f", r.run_steps_per_s / single);
    char memory[48];
    if (r.held_mib >= 0) {
      std::snprintf(memory, sizeof memory, "%.0f (%.0f)", r.peak_mib, r.held_mib);
    } else {
      std::snprintf(memory, sizeof memory, "%.1f", r.peak_mib);
    }
    std::snprintf(buf, sizeof buf, "| %s | %s | %d | %.1f | %.3f | %s |", r.backbone.c_str(),
                  r.mode.c_str(), r.pack, r.run_steps_per_s, 1000.0 / r.run_steps_per_s, ratio);
    md << buf << flop_cells(r.run_steps_per_s, r.step_gflop, o.peak_tflops) << " " << memory
       << " |\n";
  }
  for (const PackRow& r : rows) {
    if (!r.kernel_profile.empty()) {
      md << "\nKernels of " << kProfiledRounds << " rounds of a pack of " << r.pack << " "
         << r.backbone << " runs (" << r.mode << ", a round: one step of every run) on " << r.device
         << ", as the GPU ran them (CUPTI through LibTorch's Kineto; the wall time is "
         << "the untraced round's):\n\n"
         << r.kernel_profile;
    }
    if (!r.copies.empty()) {
      md << "\nThe copies (`aten::copy_`) of a round of a pack of " << r.pack << " " << r.backbone
         << " runs (" << r.mode << "), by the ops they were called from:\n\n"
         << r.copies;
    }
  }
#ifdef MINRNN_WITH_CUDA
  if (o.stacked && device.is_cuda() && core::stacked_products_tuned()) {
    md << "\ncuBLASLt's algorithms for the stacked products (MINRNN_STACKED_GEMM=tuned), each "
       << "shape's fastest candidate on its first call (P × (m × n × k), cuBLAS's ops):\n\n";
    for (const std::string& line : core::tuned_gemm_choices()) md << "- " << line << "\n";
  }
#endif
  return md.str();
}

BenchCsv pack_csv(const PackBenchOptions& o, const std::vector<PackRow>& rows) {
  // `minrnn sweep --estimate` reads these columns back by the same names (sweep/estimate.h).
  using namespace sweep::pack_csv;
  BenchCsv csv =
      rate_csv({kDevice, kMachine, kBackbone, kStep, kPack, kBatch, kContext, kEmbed, kLayers,
                kExpansion, kMatmulPrecision, "rounds", "peak_mib", "held_mib"});
  for (const auto& r : rows) {
    add_rate_row(
        csv,
        {r.device, hardware_name(torch::Device(r.device)), r.backbone, r.mode,
         std::to_string(r.pack), std::to_string(o.shape.batch), std::to_string(o.shape.context),
         std::to_string(o.shape.embed), std::to_string(o.shape.layers),
         io::csv_number(o.shape.expansion), matmul_precision_on(o.shape, r.device),
         std::to_string(r.rounds), io::csv_number(r.peak_mib),
         r.held_mib >= 0 ? io::csv_number(r.held_mib) : std::string()},
        r.run_steps_per_s, r.step_gflop);
  }
  return csv;
}

}  // namespace

void add(CLI::App& bench) {
  auto o = std::make_shared<PackBenchOptions>();
  auto* sub = bench.add_subcommand(
      "pack", "Run-steps/s of P runs training side by side in one process (a sweep's pack)");
  sub->add_option("--backbones", o->backbones, "mingru,minlstm,hgrn,transformer")
      ->delimiter(',')
      ->check(backbone_name());
  sub->add_option("--packs", o->packs, "pack sizes P (default 1,2,4,8,16)")
      ->delimiter(',')
      ->check(positive_count());
  sub->add_option("--device", o->device, "auto, cpu or cuda[:N]")->check(device_name());
  add_shape_options(sub, o->shape);
  sub->add_option("--seconds", o->seconds, "timed seconds per cell")->check(positive());
  sub->add_option("--peak-tflops", o->peak_tflops,
                  "the device's fp32 peak in TFLOP/s, for a % of peak column (e.g. 67 for an "
                  "H100 or H200 SXM)")
      ->check(positive());
  sub->add_flag("--eager", o->eager, "step eagerly instead of replaying CUDA graphs");
  sub->add_flag("--stacked", o->stacked,
                "train each pack of two runs or more as one stacked model, one step for all "
                "(rl/stacked_pack.h; a sweep's packs on CUDA unless MINRNN_STACKED_PACK=0)");
  sub->add_flag("--profile", o->profile,
                "on CUDA, also each cell's kernels over 5 rounds, as the GPU ran them (where a "
                "pack's GPU time goes); with --eager, also the copies its ops make, by caller");
  sub->add_flag("--quick", o->quick, "packs 1 and 2, 1 s per cell: a smoke run");
  add_filing_options(sub, o->filing, kPackCsv, [o] { return pack_csv(*o, {}); });
  sub->callback([o, sub] {
    if (o->quick) {
      if (sub->count("--packs") == 0) o->packs = {1, 2};
      quick_default(sub, "--seconds", o->seconds, 1.0);
    }
    const torch::Device device = bench_device(o->device);
    for (const auto& backbone : o->backbones) {  // before the first cell is measured
      rl::DecisionModelOptions model;
      model.backbone = backbone;
      if (const std::string why = rl::stack_refusal(model); o->stacked && !why.empty())
        throw std::invalid_argument("--stacked: " + why);
    }
    const int most = o->packs.empty() ? 1 : *std::max_element(o->packs.begin(), o->packs.end());
    check_shape_fits(o->shape, o->backbones, most, !device.is_cuda());
    std::vector<PackRow> rows;
    for (const auto& backbone : o->backbones) {
      for (const int pack : o->packs) {
        std::fprintf(stderr, "bench pack: %s, P=%d on %s ...\n", backbone.c_str(), pack,
                     device.str().c_str());
        rows.push_back(measure_pack(*o, backbone, device, pack));
      }
    }
    file_result(o->filing, kPackSection, format_pack_table(*o, rows, device), pack_csv(*o, rows),
                kPackCsv);
  });
}

}  // namespace minrnn::cli::bench_pack
