// `minrnn bench scan`: forward and forward+backward time of the linear scan (ours vs the paper's
// log-space cumsum/logcumsumexp form) and of one minGRU / minLSTM layer, B × T × D, per device.
// Prints a markdown table and files it under "## Scan (minrnn bench scan)" in docs/benchmarks.md,
// the numbers as CSV in runs/bench/scan-<device>.csv.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <memory>
#include <sstream>

#include "io/csv.h"
#include "models/minrnn.h"
#include "ops/scan.h"
#if defined(MINRNN_WITH_CUDA)
#include "ops/scan_cuda.h"
#endif
#include "tools/bench/report.h"
#include "tools/commands.h"

namespace minrnn::cli::bench_scan {
namespace {

struct ScanBenchOptions {
  int64_t batch = 64;
  int64_t dim = 256;
  std::vector<int64_t> lengths = {64, 512, 4096};
  std::string device = "auto";
  int repeats = 3;
  bool quick = false;
  BenchFiling filing;
};

// Median wall time in milliseconds of `fn` over `repeats` runs after one warm-up.
double time_ms(const torch::Device& device, int repeats, const std::function<void()>& fn) {
  auto sync = [&] {
    if (device.is_cuda()) torch::cuda::synchronize();
  };
  fn();
  sync();
  std::vector<double> ms;
  for (int r = 0; r < repeats; ++r) {
    const auto start = std::chrono::steady_clock::now();
    fn();
    sync();
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                     .count());
  }
  return median(ms);
}

struct Row {
  std::string what;
  int64_t length;
  double forward_ms, train_ms, bytes;  // bytes moved by the forward (0 = not a pure scan)
};

// Forward only and forward + backward of `fn(inputs)` with every input requiring grad.
Row measure(const std::string& what, int64_t length, const torch::Device& device, int repeats,
            std::vector<torch::Tensor> inputs,
            const std::function<torch::Tensor(const std::vector<torch::Tensor>&)>& fn,
            double bytes) {
  Row row{what, length, 0, 0, bytes};
  for (auto& x : inputs) x = x.detach();  // fresh leaves: the caller's tensors stay untouched
  {
    torch::NoGradGuard no_grad;
    row.forward_ms = time_ms(device, repeats, [&] { fn(inputs); });
  }
  for (auto& x : inputs) x.requires_grad_(true);
  row.train_ms = time_ms(device, repeats, [&] {
    for (auto& x : inputs) x.mutable_grad() = torch::Tensor();
    fn(inputs).sum().backward();
  });
  return row;
}

std::vector<Row> run(const ScanBenchOptions& o, const torch::Device& device) {
  std::vector<Row> rows;
  const auto opts = torch::TensorOptions().device(device);
  for (int64_t T : o.lengths) {
    std::fprintf(stderr, "bench scan: T = %lld ...\n", static_cast<long long>(T));
    torch::manual_seed(0);
    torch::Tensor a = torch::rand({o.batch, T, o.dim}, opts);
    torch::Tensor b = torch::rand({o.batch, T, o.dim}, opts) + 0.01;
    const double scan_bytes = 3.0 * a.numel() * sizeof(float);  // read a, b; write h
    rows.push_back(measure(
        "scan: ours (linear_scan)", T, device, o.repeats, {a, b},
        [](const auto& x) { return core::linear_scan(x[0], x[1]).h; }, scan_bytes));
    rows.push_back(measure(
        "scan: paper log-space (logcumsumexp)", T, device, o.repeats, {a.log(), b.log()},
        [](const auto& x) { return core::linear_scan_log_parallel(x[0], x[1]).h; }, scan_bytes));
#if defined(MINRNN_WITH_CUDA)
    if (device.is_cuda()) {
      // What the GPU's memory allows (a copy reads and writes each byte once), then each scan
      // kernel named instead of chosen by shape: its GB/s against the copy's is the fraction of
      // the bandwidth it reaches (docs/core.md gives the expected ones).
      rows.push_back(measure(
          "copy: clone of a (bandwidth ceiling)", T, device, o.repeats, {a},
          [](const auto& x) { return x[0].clone(); }, 2.0 * a.numel() * sizeof(float)));
      for (auto kernel : {core::grid::ScanKernel::kSimple, core::grid::ScanKernel::kTiled8,
                          core::grid::ScanKernel::kTiled32}) {
        core::set_cuda_scan_kernel(kernel);
        rows.push_back(measure(
            std::string("scan kernel: ") + core::grid::kernel_name(kernel), T, device, o.repeats,
            {a, b}, [](const auto& x) { return core::linear_scan(x[0], x[1]).h; }, scan_bytes));
      }
      core::set_cuda_scan_kernel(core::grid::ScanKernel::kAuto);
    }
#endif
    torch::Tensor x = torch::randn({o.batch, T, o.dim}, opts);
    for (core::CellKind cell : {core::CellKind::kMinGRU, core::CellKind::kMinLSTM}) {
      for (core::ScanMode mode : {core::ScanMode::kFused, core::ScanMode::kLogParallel}) {
        core::MinRnnOptions mo;
        mo.cell = cell;
        mo.input_size = o.dim;
        mo.scan = mode;
        auto layer = std::make_shared<core::MinRnnImpl>(mo);
        layer->to(device);
        const std::string name = std::string(core::cell_name(cell)) + " layer" +
                                 (mode == core::ScanMode::kFused ? "" : " (paper log-space scan)");
        rows.push_back(measure(
            name, T, device, o.repeats, {x}, [&](const auto& in) { return layer->forward(in[0]); },
            0));
      }
    }
  }
  return rows;
}

std::string format_table(const ScanBenchOptions& o, const torch::Device& device,
                         const std::vector<Row>& rows) {
  std::ostringstream md;
  char buf[256];
  md << entry_heading(machine_name() + (device.is_cuda() ? " + GPU " + gpu_name() : "") +
                      ", device " + device.str() + ", torch threads " +
                      std::to_string(torch::get_num_threads()))
     << " (B " << o.batch << ", D " << o.dim << "). float32, median of " << o.repeats
     << " runs after a warm-up. GB/s = bytes of a, b read "
     << "and h written by the forward / forward time.\n\n"
     << "| what | B | T | D | forward ms | fwd+bwd ms | forward GB/s |\n"
     << "|---|---:|---:|---:|---:|---:|---:|\n";
  for (const Row& r : rows) {
    std::snprintf(
        buf, sizeof(buf), "| %s | %lld | %lld | %lld | %.3f | %.3f | %s |\n", r.what.c_str(),
        static_cast<long long>(o.batch), static_cast<long long>(r.length),
        static_cast<long long>(o.dim), r.forward_ms, r.train_ms,
        r.bytes > 0 ? std::to_string(r.bytes / r.forward_ms / 1e6).substr(0, 6).c_str() : "");
    md << buf;
  }
  md << "\nSpeed-up of our scan over the paper's log-space scan (fwd+bwd):";
  for (size_t i = 0; i + 1 < rows.size(); ++i) {
    if (rows[i].what.rfind("scan: ours", 0) == 0) {
      std::snprintf(buf, sizeof(buf), " T=%lld %.1f×;", static_cast<long long>(rows[i].length),
                    rows[i + 1].train_ms / rows[i].train_ms);
      md << buf;
    }
  }
  md << "\n";
  return md.str();
}

BenchCsv results_csv(const ScanBenchOptions& o, const torch::Device& device,
                     const std::vector<Row>& rows) {
  const std::string machine = hardware_name(device);
  BenchCsv csv({"device", "machine", "what", "batch", "T", "dim", "forward_ms", "train_ms",
                "forward_gb_per_s"});
  for (const Row& r : rows) {
    csv.add_row({device.str(), machine, r.what, std::to_string(o.batch), std::to_string(r.length),
                 std::to_string(o.dim), io::csv_number(r.forward_ms), io::csv_number(r.train_ms),
                 r.bytes > 0 ? io::csv_number(r.bytes / r.forward_ms / 1e6) : ""});
  }
  return csv;
}

}  // namespace

void add(CLI::App& bench) {
  auto o = std::make_shared<ScanBenchOptions>();
  auto* sub =
      bench.add_subcommand("scan", "Linear scan and minGRU/minLSTM layer: forward, fwd+bwd");
  sub->add_option("--batch", o->batch, "Batch size B")->check(positive_count());
  sub->add_option("--dim", o->dim, "Channels D")->check(positive_count());
  sub->add_option("--lengths", o->lengths, "Sequence lengths T")
      ->delimiter(',')
      ->check(positive_count());
  sub->add_option("--device", o->device, "auto (default: CUDA when usable), cpu or cuda")
      ->check(device_name());
  sub->add_option("--repeats", o->repeats, "Timed runs per cell")->check(positive_count());
  sub->add_flag("--quick", o->quick, "Small sizes (B=8, D=64, T=64,512, 1 repeat) for a smoke run");
  add_filing_options(sub, o->filing, "runs/bench/scan-<device>.csv",
                     [o] { return results_csv(*o, torch::kCPU, {}); });
  sub->callback([o, sub] {
    if (o->quick) {
      quick_default(sub, "--batch", o->batch, 8);
      quick_default(sub, "--dim", o->dim, 64);
      quick_default(sub, "--lengths", o->lengths, {64, 512});
      quick_default(sub, "--repeats", o->repeats, 1);
    }
    const torch::Device device = bench_device(o->device);
    const std::vector<Row> rows = run(*o, device);
    file_result(o->filing, "## Scan (minrnn bench scan)", format_table(*o, device, rows),
                results_csv(*o, device, rows),
                "runs/bench/scan-" + std::string(device.is_cuda() ? "cuda" : "cpu") + ".csv");
  });
}

}  // namespace minrnn::cli::bench_scan
