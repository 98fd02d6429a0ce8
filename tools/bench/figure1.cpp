// `minrnn bench figure1`: the paper's Figure 1 (Feng et al. 2024, §4.1) on this machine — time and
// peak memory of one training step (forward, MSE loss, backward) against T at B = 64, for minGRU
// and minLSTM (our fused scan and the paper's log-space scan), torch::nn::GRU / LSTM (cuDNN on
// CUDA) and a minGRU stepped token by token with autograd (BPTT). Printed, written as CSV, and
// filed under
// "## Figure 1 (minrnn bench figure1)" in docs/benchmarks.md next to the paper's ratios.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <memory>
#include <sstream>

#include "io/csv.h"
#include "models/minrnn.h"
#include "rl/run_start.h"
#include "tools/bench/memory_probe.h"
#include "tools/bench/report.h"
#include "tools/commands.h"

namespace minrnn::cli::bench_figure1 {
namespace {
namespace F = torch::nn::functional;
using Clock = std::chrono::steady_clock;

struct Figure1Options {
  std::string device = "auto";
  std::vector<int64_t> lengths = {64, 128, 256, 512, 1024, 2048, 4096};
  int64_t batch = 64, hidden = 128;
  int repeats = 5;
  double max_seconds = 120;  // per cell: warm-up + timed steps + the memory step
  bool quick = false;
  BenchFiling filing;
};

struct Model {
  std::string key, label;
  std::shared_ptr<torch::nn::Module> module;
  std::function<torch::Tensor(const torch::Tensor&)> forward;
};

std::vector<Model> make_models(const Figure1Options& o, const torch::Device& device) {
  std::vector<Model> models;
  auto minrnn = [&](const char* key, const char* label, core::CellKind cell, core::ScanMode mode) {
    core::MinRnnOptions mo;
    mo.cell = cell;
    mo.input_size = o.hidden;  // d_x = d_h = H, no down-projection
    mo.scan = mode;
    auto m = std::make_shared<core::MinRnnImpl>(mo);
    std::function<torch::Tensor(const torch::Tensor&)> fwd = [m](const torch::Tensor& x) {
      return m->forward(x);
    };
    if (mode == core::ScanMode::kSequential) {  // token by token through step(): BPTT
      fwd = [m](const torch::Tensor& x) {
        torch::Tensor h;
        std::vector<torch::Tensor> ys;
        ys.reserve(x.size(1));
        for (int64_t t = 0; t < x.size(1); ++t) ys.push_back(m->step(x.select(1, t), h));
        return torch::stack(ys, 1);
      };
    }
    models.push_back({key, label, m, fwd});
  };
  using core::CellKind;
  using core::ScanMode;
  minrnn("mingru", "minGRU", CellKind::kMinGRU, ScanMode::kFused);
  minrnn("minlstm", "minLSTM", CellKind::kMinLSTM, ScanMode::kFused);
  minrnn("mingru-log", "minGRU log-space", CellKind::kMinGRU, ScanMode::kLogParallel);
  minrnn("minlstm-log", "minLSTM log-space", CellKind::kMinLSTM, ScanMode::kLogParallel);
  auto gru = std::make_shared<torch::nn::GRUImpl>(
      torch::nn::GRUOptions(o.hidden, o.hidden).batch_first(true));
  models.push_back(
      {"gru", "GRU", gru, [gru](const torch::Tensor& x) { return std::get<0>(gru->forward(x)); }});
  auto lstm = std::make_shared<torch::nn::LSTMImpl>(
      torch::nn::LSTMOptions(o.hidden, o.hidden).batch_first(true));
  models.push_back({"lstm", "LSTM", lstm,
                    [lstm](const torch::Tensor& x) { return std::get<0>(lstm->forward(x)); }});
  minrnn("loop", "sequential loop", CellKind::kMinGRU, ScanMode::kSequential);
  for (auto& m : models) m.module->to(device);
  return models;
}

struct Cell {
  double ms = NAN;  // median ms per training step; NaN = skipped
  double peak_mib = NAN, resident_mib = NAN;
  double est_s = 0;  // the estimate that made it skip
};

void sync(const torch::Device& device) {
  if (device.is_cuda()) torch::cuda::synchronize();
}

Cell measure(const Model& m, const torch::Tensor& x, const torch::Tensor& target, int warmups,
             int repeats, const torch::Device& device) {
  auto step = [&] {
    m.module->zero_grad();  // grads set to none: the step allocates them, as in training
    F::mse_loss(m.forward(x), target).backward();
  };
  for (int w = 0; w < warmups; ++w) step();
  sync(device);
  std::vector<double> ms;
  for (int r = 0; r < repeats; ++r) {
    const auto start = Clock::now();
    step();
    sync(device);
    ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
  }
  Cell cell;
  cell.ms = median(ms);
  m.module->zero_grad();
  sync(device);
  MemoryProbe probe{device};
  probe.start();
  step();
  sync(device);
  cell.peak_mib = probe.peak() / 1048576.0;
  cell.resident_mib = probe.resident / 1048576.0;
  return cell;
}

using Grid = std::vector<std::vector<Cell>>;  // [length][model]

Grid run(const Figure1Options& o, const torch::Device& device, const std::vector<Model>& models) {
  const int warmups = device.is_cuda() ? 2 : 1;
  const int steps = warmups + o.repeats + 1;
  Grid grid(o.lengths.size(), std::vector<Cell>(models.size()));
  std::vector<std::pair<int64_t, double>> last(models.size(), {0, 0.0});  // (T, ms) measured
  const auto t0 = Clock::now();
  for (size_t i = 0; i < o.lengths.size(); ++i) {
    const int64_t T = o.lengths[i];
    // Made for the first cell measured: a length every model skips allocates nothing. On the CPU
    // a length whose step cannot fit (its input, target and a few activations of B·T·H floats)
    // is skipped whole, where it would end the bench and lose the cells measured.
    torch::Tensor x, target;
    const double row_bytes = 8.0 * 4 * o.batch * static_cast<double>(T) * o.hidden;
    const double memory = device.is_cuda() ? 0 : rl::machine_memory_bytes();
    if (memory > 0 && row_bytes > memory) {
      std::fprintf(stderr,
                   "[figure1] T=%lld skipped: a step needs over %.1f GiB, more than the "
                   "machine's %.1f GiB\n",
                   static_cast<long long>(T), row_bytes / (1 << 30), memory / (1 << 30));
      continue;
    }
    for (size_t j = 0; j < models.size(); ++j) {
      const double elapsed = std::chrono::duration<double>(Clock::now() - t0).count();
      std::fprintf(stderr, "[figure1 %6.0fs] T=%-5lld %-18s ", elapsed, static_cast<long long>(T),
                   models[j].label.c_str());
      Cell& cell = grid[i][j];
      if (last[j].first > 0) {  // extrapolate linearly in T from the last length measured
        cell.est_s = last[j].second * static_cast<double>(T) / last[j].first * steps / 1000.0;
        if (cell.est_s > o.max_seconds) {
          std::fprintf(stderr, "skipped (est. %.0fs > --max-seconds %.0f)\n", cell.est_s,
                       o.max_seconds);
          continue;
        }
      }
      if (!x.defined()) {
        torch::manual_seed(0);
        const auto opts = torch::TensorOptions().device(device);
        x = torch::randn({o.batch, T, o.hidden}, opts);
        target = torch::randn({o.batch, T, o.hidden}, opts);
      }
      cell = measure(models[j], x, target, warmups, o.repeats, device);
      last[j] = {T, cell.ms};
      std::fprintf(stderr, "%10.2f ms/step, peak %8.1f MiB\n", cell.ms, cell.peak_mib);
    }
  }
  return grid;
}

std::string fmt(const char* format, double v) {
  if (std::isnan(v)) return "skipped";
  char buf[64];
  std::snprintf(buf, sizeof(buf), format, v);
  return buf;
}

std::string speedup(const Cell& fast, const Cell& slow) {
  return fmt("%.1f×", slow.ms / fast.ms);
}

std::string more_memory(const Cell& ours, const Cell& theirs) {
  if (std::isnan(ours.peak_mib) || std::isnan(theirs.peak_mib)) return "skipped";
  const double total = 100.0 * (ours.peak_mib / theirs.peak_mib - 1.0);
  const double step =
      100.0 * ((ours.peak_mib - ours.resident_mib) / (theirs.peak_mib - theirs.resident_mib) - 1.0);
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%+.0f%% (%+.0f%%)", total, step);
  return buf;
}

// The grid's columns of one row that the speed-up and memory tables compare.
struct Compared {
  size_t gru, lstm, loop, mingru, minlstm, mingru_log, minlstm_log;
};

Compared compared_columns(const std::vector<Model>& models) {
  auto col = [&](const std::string& key) {
    for (size_t j = 0; j < models.size(); ++j) {
      if (models[j].key == key) return j;
    }
    throw std::logic_error("no model " + key);
  };
  return {col("gru"),     col("lstm"),       col("loop"),       col("mingru"),
          col("minlstm"), col("mingru-log"), col("minlstm-log")};
}

std::string times_table(const Figure1Options& o, const std::vector<Model>& models,
                        const Grid& grid) {
  std::ostringstream md;
  md << "| T |";
  for (const auto& m : models) md << " " << m.label << " ms |";
  md << "\n|---:|";
  for (size_t j = 0; j < models.size(); ++j) md << "---:|";
  md << "\n";
  for (size_t i = 0; i < grid.size(); ++i) {
    md << "| " << o.lengths[i] << " |";
    for (const Cell& c : grid[i]) md << " " << fmt(c.ms < 10 ? "%.3f" : "%.1f", c.ms) << " |";
    md << "\n";
  }
  return md.str();
}

std::string speedup_table(const Figure1Options& o, const Compared& cols, const Grid& grid) {
  std::ostringstream md;
  md << "\nSpeed-up per training step (time of the slower ÷ time of ours); the paper (T4 GPU, "
     << "its minGRU/minLSTM vs its GRU/LSTM) reports 175× / 235× at T = 512 and 1324× / 1361× "
     << "at T = 4096.\n\n"
     << "| T | minGRU vs GRU | minLSTM vs LSTM | minGRU log-space vs GRU | minLSTM log-space vs "
     << "LSTM | minGRU vs sequential loop | paper (minGRU / minLSTM) |\n"
     << "|---:|---:|---:|---:|---:|---:|---:|\n";
  for (size_t i = 0; i < grid.size(); ++i) {
    const auto& r = grid[i];
    const int64_t T = o.lengths[i];
    md << "| " << T << " | " << speedup(r[cols.mingru], r[cols.gru]) << " | "
       << speedup(r[cols.minlstm], r[cols.lstm]) << " | "
       << speedup(r[cols.mingru_log], r[cols.gru]) << " | "
       << speedup(r[cols.minlstm_log], r[cols.lstm]) << " | "
       << speedup(r[cols.mingru], r[cols.loop]) << " | "
       << (T == 512    ? "175× / 235×"
           : T == 4096 ? "1324× / 1361×"
                       : "")
       << " |\n";
  }
  return md.str();
}

std::string memory_table(const Figure1Options& o, const torch::Device& device,
                         const std::vector<Model>& models, const Compared& cols, const Grid& grid) {
  std::ostringstream md;
  md << "\nPeak memory of one training step in MiB ("
     << (device.is_cuda() ? "CUDA caching allocator, peak allocated bytes"
                          : "torch CPU allocator, counted by a wrapper around it")
     << "; includes parameters, input and target). Ratios: minRNN vs its traditional counterpart, "
     << "by total peak and (in brackets) by the part above what was resident before the step; "
     << "the paper reports ~+88%.\n\n| T |";
  for (const auto& m : models) md << " " << m.label << " |";
  md << " minGRU vs GRU | minLSTM vs LSTM | minGRU log-space vs GRU | minLSTM log-space vs LSTM "
     << "| paper |\n|---:|";
  for (size_t j = 0; j < models.size() + 5; ++j) md << "---:|";
  md << "\n";
  for (size_t i = 0; i < grid.size(); ++i) {
    const auto& r = grid[i];
    md << "| " << o.lengths[i] << " |";
    for (const Cell& c : r) md << " " << fmt("%.1f", c.peak_mib) << " |";
    md << " " << more_memory(r[cols.mingru], r[cols.gru]) << " | "
       << more_memory(r[cols.minlstm], r[cols.lstm]) << " | "
       << more_memory(r[cols.mingru_log], r[cols.gru]) << " | "
       << more_memory(r[cols.minlstm_log], r[cols.lstm]) << " | +88% |\n";
  }
  return md.str();
}

std::string format_report(const Figure1Options& o, const torch::Device& device,
                          const std::vector<Model>& models, const Grid& grid) {
  std::ostringstream md;
  md << entry_heading(machine_name() + (device.is_cuda() ? " + GPU " + gpu_name() : "") +
                      ", device " + device.str() + ", torch threads " +
                      std::to_string(torch::get_num_threads()))
     << ". One training step = zero grads, forward of one "
     << "layer (d_x = d_h = " << o.hidden << ", B = " << o.batch << ", float32), MSE loss against "
     << "a random target, backward; median of " << o.repeats << " steps after "
     << (device.is_cuda() ? 2 : 1) << " warm-up. minGRU/minLSTM: our fused scan; log-space: the "
     << "paper's cumsum + logcumsumexp scan; GRU/LSTM: torch::nn"
     << (device.is_cuda() ? " (cuDNN)" : " (ATen CPU kernels)")
     << "; sequential loop: minGRU stepped token by token with autograd (BPTT). Cells whose "
     << "estimated time exceeded --max-seconds are marked skipped.\n\n";
  const Compared cols = compared_columns(models);
  md << times_table(o, models, grid) << speedup_table(o, cols, grid)
     << memory_table(o, device, models, cols, grid);
  return md.str();
}

BenchCsv results_csv(const Figure1Options& o, const torch::Device& device,
                     const std::vector<Model>& models, const Grid& grid) {
  const std::string machine = hardware_name(device);
  BenchCsv csv({"device", "machine", "batch", "hidden", "T", "model", "status", "ms_per_step",
                "peak_mib", "resident_mib", "est_s"});
  for (size_t i = 0; i < grid.size(); ++i) {
    for (size_t j = 0; j < models.size(); ++j) {
      const Cell& c = grid[i][j];
      csv.add_row({device.str(), machine, std::to_string(o.batch), std::to_string(o.hidden),
                   std::to_string(o.lengths[i]), models[j].key, std::isnan(c.ms) ? "skipped" : "ok",
                   io::csv_number(c.ms), io::csv_number(c.peak_mib), io::csv_number(c.resident_mib),
                   io::csv_number(c.est_s)});
    }
  }
  return csv;
}

}  // namespace

void add(CLI::App& bench) {
  auto o = std::make_shared<Figure1Options>();
  auto* sub = bench.add_subcommand(
      "figure1", "Paper's Figure 1: training-step time and peak memory vs T, minRNN vs GRU/LSTM");
  sub->add_option("--device", o->device, "auto (default: CUDA when usable), cpu or cuda")
      ->check(device_name());
  sub->add_option("--lengths", o->lengths, "Sequence lengths T")
      ->delimiter(',')
      ->check(positive_count());
  sub->add_option("--batch", o->batch, "Batch size B")->check(positive_count());
  sub->add_option("--hidden", o->hidden, "d_x = d_h of every model")->check(positive_count());
  sub->add_option("--repeats", o->repeats, "Timed steps per cell")->check(positive_count());
  sub->add_option("--max-seconds", o->max_seconds,
                  "Skip a cell whose estimated time (from the previous T) exceeds this")
      ->check(positive());
  sub->add_flag("--quick", o->quick, "Smoke run: B=8, H=32, T=16,64, 1 repeat");
  add_filing_options(sub, o->filing, "runs/bench/figure1-<device>.csv",
                     [o] { return results_csv(*o, torch::kCPU, {}, {}); });
  sub->callback([o, sub] {
    if (o->quick) {
      quick_default(sub, "--batch", o->batch, 8);
      quick_default(sub, "--hidden", o->hidden, 32);
      quick_default(sub, "--lengths", o->lengths, {16, 64});
      quick_default(sub, "--repeats", o->repeats, 1);
    }
    const torch::Device device = bench_device(o->device);
#if !defined(MINRNN_WITH_CUDA)
    if (device.is_cuda()) {
      throw std::runtime_error("--device cuda: built without CUDA (peak memory needs MINRNN_CUDA)");
    }
#endif
    // Before any tensor exists, so every byte is counted.
    if (!device.is_cuda()) install_cpu_memory_counter();
    torch::manual_seed(0);
    const auto models = make_models(*o, device);
    const Grid grid = run(*o, device, models);
    file_result(o->filing, "## Figure 1 (minrnn bench figure1)",
                format_report(*o, device, models, grid), results_csv(*o, device, models, grid),
                "runs/bench/figure1-" + std::string(device.is_cuda() ? "cuda" : "cpu") + ".csv");
  });
}

}  // namespace minrnn::cli::bench_figure1
