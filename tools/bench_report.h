// Shared by every `minrnn bench ...`: the machine's name, a timestamp, and filing a result under
// its section of docs/benchmarks.md (atomically, never losing what was there).
#pragma once
#include <torch/torch.h>

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace minrnn::cli {

std::string machine_name();  // CPU model
std::string gpu_name();      // from nvidia-smi; "unknown GPU" when it cannot tell
std::string timestamp();     // "YYYY-MM-DD HH:MM"
// Appends `entry` at the end of the section headed `section` ("## ..."), creating file and section.
void append_benchmark(const std::string& path, const std::string& section,
                      const std::string& entry);

// Where a bench files its result: --markdown FILE (default docs/benchmarks.md) and --no-append.
struct BenchFiling {
  std::string markdown = "docs/benchmarks.md";
  bool append = true;
};
void add_filing_options(CLI::App* sub, BenchFiling& filing);
// Prints `entry` and, unless --no-append, appends it under `section` and says where.
void file_result(const BenchFiling& filing, const std::string& section, const std::string& entry);

// Validates the options the benches share: every --lengths entry ≥ 1, and a device named cpu or
// cuda, cuda only with a GPU visible; returns the device. Throws naming the option.
torch::Device bench_device(const std::string& device, const std::vector<int64_t>& lengths = {},
                           const std::string& option = "--device");

}  // namespace minrnn::cli
