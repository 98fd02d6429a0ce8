// Shared by every `minrnn bench ...`: the machine's name, a timestamp, and filing a result under
// its section of docs/benchmarks.md (atomically, never losing what was there).
#pragma once
#include <torch/torch.h>

#include <string>
#include <vector>

namespace minrnn::cli {

std::string machine_name();  // CPU model
std::string gpu_name();      // from nvidia-smi; "unknown GPU" when it cannot tell
std::string timestamp();     // "YYYY-MM-DD HH:MM"
// Appends `entry` at the end of the section headed `section` ("## ..."), creating file and section.
void append_benchmark(const std::string& path, const std::string& section,
                      const std::string& entry);

// Validates the options the kernel benches share: every --lengths entry ≥ 1, and --device cpu or
// cuda with a GPU visible; returns the device. Throws naming the option.
torch::Device bench_device(const std::string& device, const std::vector<int64_t>& lengths);

}  // namespace minrnn::cli
