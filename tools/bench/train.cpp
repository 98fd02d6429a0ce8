// `minrnn bench train`: optimizer steps/s of the decision model's training step (forward, masked
// MSE, backward, grad clipping, AdamW) per backbone, on a synthetic batch of the trainer's shapes
// (hopper dims, B=64, K=20, embed 128, 3 layers by default). CPU always, CUDA when available.
// Per backbone it also times the step's phases, records the peak memory of one step and, with
// --profile, the ATen ops the trainer's step spends its time in where it runs eagerly and, on
// CUDA, the kernels the GPU runs for it. --peer runs another implementation (CORL's dt.py: `--peer
// ../shared/peer/run.sh`) before and after ours in the same run, so the ratio is taken under the
// same load; --rounds N alternates the two N times (peer, ours, peer, …, peer)
// and reports the median ratio with its range, because one round on a shared machine can be off
// by a third. Prints a markdown table and files it under "## Training (minrnn bench train)", the
// numbers as CSV in runs/bench/train.csv.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <sstream>
#include <stdexcept>

#include "ops/device.h"
#include "ops/fused_adamw.h"
#include "ops/side_work.h"
#include "rl/decision_model.h"
#include "rl/train_step.h"
#include "tools/bench/kernel_profile.h"
#include "tools/bench/memory_probe.h"
#include "tools/bench/op_profile.h"
#include "tools/bench/peer.h"
#include "tools/bench/report.h"
#include "tools/bench/train_report.h"
#include "tools/bench/train_setup.h"
#include "tools/commands.h"

namespace minrnn::cli::bench_train {
namespace {

using Clock = std::chrono::steady_clock;
constexpr const char* kSection = "## Training (minrnn bench train)";
constexpr const char* kDefaultCsv = "runs/bench/train.csv";

void sync(const torch::Device& device) {
  if (device.is_cuda()) torch::cuda::synchronize();
}

// The step's phases, one at a time with a sync after each (eager: a graph has no phases), summed
// into `sum`; the same operations as rl::TrainStep's.
void lapped_step(rl::DecisionModel& model, core::FusedAdamW& opt, const rl::DecisionBatch& b,
                 const torch::Tensor& mask, const torch::Device& dev, Phases& sum) {
  auto lap = [&](Clock::time_point& t, double& into) {
    sync(dev);
    const auto now = Clock::now();
    into += std::chrono::duration<double, std::milli>(now - t).count();
    t = now;
  };
  auto t = Clock::now();
  auto loss = rl::masked_action_loss(model->forward(b), b.actions, mask);
  lap(t, sum.forward);
  opt.zero_grad();
  loss.backward();
  lap(t, sum.backward);
  torch::nn::utils::clip_grad_norm_(model->parameters(), 0.25);
  lap(t, sum.clip);
  opt.step();
  lap(t, sum.optimizer);
}

// The trainer's step (rl/train_step.h) counted over ~o.seconds: its rate, and its kernels with
// --profile on CUDA. `step` runs one step; the five before the count warm up and capture.
void time_trainer_step(const TrainBenchOptions& o, const torch::Device& dev,
                       rl::TrainStep& train_step, const std::function<void()>& step, Row& row) {
  for (int i = 0; i < 5; ++i) step();  // warm-up, and the capture after the third
  train_step.last_stats();             // waits for the device
  const auto t0 = Clock::now();
  double elapsed = 0;
  while (elapsed < o.seconds || row.steps < 5) {
    step();
    ++row.steps;
    if (row.steps % 64 == 0 || elapsed + 0.05 > o.seconds) train_step.last_stats();
    elapsed = std::chrono::duration<double>(Clock::now() - t0).count();
  }
  train_step.last_stats();
  elapsed = std::chrono::duration<double>(Clock::now() - t0).count();
  row.steps_per_s = row.steps / elapsed;
  row.graph_launches = train_step.graph_nodes().total();
  if (o.profile && dev.is_cuda()) {
    row.kernel_profile = kernel_profile_of(step, kProfiled, 1000.0 / row.steps_per_s, o.top_ops);
  }
}

// Where an eager step's time goes, over a tenth of the timed steps, and the peak of one step above
// what lives between steps (weights, Adam state, the batch): gradients are set to none by
// zero_grad, so the step allocates them as in training.
void time_eager_phases(const TrainBenchOptions& o, const torch::Device& dev, BenchTrainer& trainer,
                       Row& row) {
  const auto f = torch::TensorOptions().device(dev);
  const int64_t B = o.shape.batch, K = o.shape.context;
  rl::DecisionBatch b{torch::randn({B, K, 1}, f), torch::randn({B, K, o.shape.obs_dim}, f),
                      torch::rand({B, K, o.shape.act_dim}, f) * 2 - 1,
                      torch::randint(0, 1000, {B, K}, f.dtype(torch::kInt64))};
  const torch::Tensor mask = torch::ones({B, K}, f);
  rl::DecisionModel& model = trainer.agent.model;
  core::FusedAdamW& opt = trainer.optimizer;
  Phases sum;
  const int64_t lapped = std::max<int64_t>(5, row.steps / 10);
  for (int64_t i = 0; i < lapped; ++i) lapped_step(model, opt, b, mask, dev, sum);
  const double n = static_cast<double>(lapped);
  row.phases = {sum.forward / n, sum.backward / n, sum.clip / n, sum.optimizer / n};

  opt.zero_grad();
  sync(dev);
  MemoryProbe probe{dev};
  probe.start();
  lapped_step(model, opt, b, mask, dev, sum);
  sync(dev);
  row.peak_mib = static_cast<double>(probe.peak() - probe.resident) / 1048576.0;
}

Row measure(const TrainBenchOptions& o, const std::string& backbone, const torch::Device& dev,
            rl::StepMode mode) {
  // The trainer's step (rl/train_step.h), timed: a CUDA graph replayed, or eager.
  BenchTrainer trainer(o.shape, backbone, dev, 0, mode);
  rl::Agent& agent = trainer.agent;
  rl::TrainStep& train_step = trainer.step;
  const data::SequenceBatch batch = synthetic_batch(o.shape);
  auto step = [&] { train_step.run(batch, 1e-4, static_cast<uint64_t>(agent.step)); };
  Row row;
  row.backbone = backbone;
  row.device = dev.str();
  for (const auto& p : agent.model->parameters()) row.params += p.numel();
  time_trainer_step(o, dev, train_step, step, row);
  row.mode = train_step.description();  // after the warm-up: whether the capture took
  time_eager_phases(o, dev, trainer, row);

  // The trainer's step op by op where it runs eagerly; a replayed graph dispatches no op (its
  // kernels are in row.kernel_profile).
  if (o.profile && row.graph_launches == 0) {
    OpProfile profile;
    profile.start();
    for (int i = 0; i < kProfiled; ++i) step();
    train_step.last_stats();
    profile.stop();
    row.profile = profile.table(kProfiled, o.top_ops);
  }
  return row;
}

}  // namespace

void add(CLI::App& bench) {
  auto o = std::make_shared<TrainBenchOptions>();
  auto* sub = bench.add_subcommand("train", "Training steps/s per backbone (synthetic batch)");
  sub->add_option("--backbones", o->backbones, "mingru,minlstm,hgrn,transformer")
      ->delimiter(',')
      ->check(backbone_name());
  sub->add_option("--devices", o->devices, "cpu,cuda (default: cpu + cuda if available)")
      ->delimiter(',')
      ->check(device_name());
  add_shape_options(sub, o->shape);
  sub->add_option("--seconds", o->seconds, "timed seconds per cell")->check(positive());
  sub->add_flag("--quick", o->quick, "1 s per cell, for a smoke run");
  sub->add_flag("--profile", o->profile,
                "also time 5 of the trainer's steps op by op where they run eagerly (self time "
                "per ATen op) and, on CUDA, kernel by kernel");
  sub->add_option("--top-ops", o->top_ops, "ops listed per profile")->check(positive_count());
  sub->add_option("--peer", o->peer,
                  "a peer's benchmark, run as 'PEER train SECONDS' before and after ours "
                  "(e.g. ../shared/peer/run.sh)");
  sub->add_flag("--eager-too", o->eager_too,
                "on CUDA, time the eager step beside the CUDA graph the trainer replays");
  sub->add_flag("--side-work-too", o->side_work_too,
                "on CUDA, time the graph step again with the weight gradients queued beside the "
                "backward on a side stream (ops/side_work.h; `minrnn train` does so for a run "
                "alone unless MINRNN_SIDE_WORK=0)");
  sub->add_option("--rounds", o->rounds,
                  "measure ours this many times, alternating with the peer's runs; the table "
                  "adds the median × peer and its range")
      ->check(positive_count());
  add_filing_options(sub, o->filing, kDefaultCsv, [o] { return results_csv(*o, {}, {}); });
  sub->callback([o, sub] {
    if (o->quick) quick_default(sub, "--seconds", o->seconds, 1.0);
    if (o->devices.empty()) {
      o->devices = {"cpu"};
      if (core::cuda_unavailable_reason().empty()) o->devices.push_back("cuda");
    }
    std::vector<torch::Device> devices;  // every one checked before the first cell is measured
    for (const auto& d : o->devices) {
      devices.push_back(bench_device(d, "--devices"));
      check_shape_fits(o->shape, o->backbones, 1, !devices.back().is_cuda());
    }
    install_cpu_memory_counter();  // before any tensor, so the peak sees every byte
    PeerRuns peer;
    if (!o->peer.empty()) peer.steps_per_s.push_back(run_peer(o->peer, o->seconds));
    std::vector<Row> rows;
    for (int round = 0; round < o->rounds; ++round) {
      for (const torch::Device& device : devices) {
        for (const auto& b : o->backbones) {
          std::fprintf(stderr, "bench train: round %d/%d, %s on %s ...\n", round + 1, o->rounds,
                       b.c_str(), device.str().c_str());
          std::vector<rl::StepMode> modes = {rl::StepMode::kGraph};
          if (device.is_cuda() && o->eager_too) modes.push_back(rl::StepMode::kEager);
          for (const rl::StepMode mode : modes) {
            rows.push_back(measure(*o, b, device, mode));
            rows.back().round = round;
          }
          if (device.is_cuda() && o->side_work_too && !core::side_work_on()) {
            core::set_side_work(true);
            rows.push_back(measure(*o, b, device, rl::StepMode::kGraph));
            rows.back().round = round;
            rows.back().mode += " + side work";
            core::set_side_work(false);
          }
        }
      }
      if (!o->peer.empty()) peer.steps_per_s.push_back(run_peer(o->peer, o->seconds));
    }
    file_result(o->filing, kSection, format_table(*o, rows, peer), results_csv(*o, rows, peer),
                kDefaultCsv);
  });
}

}  // namespace minrnn::cli::bench_train
