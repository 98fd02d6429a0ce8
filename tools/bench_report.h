// Shared by every `minrnn bench ...`: the machine's name, a timestamp, and filing a result under
// its section of docs/benchmarks.md (atomically, never losing what was there).
#pragma once
#include <string>

namespace minrnn::cli {

std::string machine_name();  // CPU model
std::string gpu_name();      // from nvidia-smi; "unknown GPU" when it cannot tell
std::string timestamp();     // "YYYY-MM-DD HH:MM"
// Appends `entry` at the end of the section headed `section` ("## ..."), creating file and section.
void append_benchmark(const std::string& path, const std::string& section,
                      const std::string& entry);

}  // namespace minrnn::cli
