#include "tools/bench_report.h"

#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "io/atomic_file.h"

namespace minrnn::cli {

std::string machine_name() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line, cpu = "unknown CPU";
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) cpu = line.substr(line.find_first_not_of(" \t", colon + 1));
      break;
    }
  }
  return cpu;
}

std::string gpu_name() {
  std::string name;
  if (FILE* pipe = popen("nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null", "r")) {
    char buf[256];
    while (fgets(buf, sizeof(buf), pipe)) name += buf;
    pclose(pipe);
  }
  while (!name.empty() && (name.back() == '\n' || name.back() == ' ')) name.pop_back();
  const auto newline = name.find('\n');  // first GPU only
  if (newline != std::string::npos) name = name.substr(0, newline);
  return name.empty() ? "unknown GPU" : name;
}

std::string timestamp() {
  const std::time_t now = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M", std::localtime(&now));
  return buf;
}

void append_benchmark(const std::string& path, const std::string& section,
                      const std::string& entry) {
  std::string text = "# minrnn benchmarks\n";
  if (std::filesystem::exists(path)) {
    std::ifstream in(path);
    if (!in) throw std::runtime_error("cannot read " + path);
    std::ostringstream ss;
    ss << in.rdbuf();
    text = ss.str();
  }
  if (!text.empty() && text.back() != '\n') text += '\n';
  const auto at_section = text.find(section + "\n");
  if (at_section == std::string::npos) {
    text += "\n" + section + "\n\n" + entry;
  } else {
    const auto next = text.find("\n## ", at_section + 1);
    const size_t at = next == std::string::npos ? text.size() : next + 1;
    text.insert(at, entry + (next == std::string::npos ? "" : "\n"));
  }
  io::write_file_atomically(path, text);
}

void add_filing_options(CLI::App* sub, BenchFiling& filing) {
  sub->add_option("--markdown", filing.markdown, "Benchmark log to append to");
  sub->add_flag("!--no-append", filing.append, "Print only; do not touch the markdown file");
}

void file_result(const BenchFiling& filing, const std::string& section, const std::string& entry) {
  std::printf("%s", entry.c_str());
  if (!filing.append) return;
  append_benchmark(filing.markdown, section, entry + "\n");
  std::printf("\nappended to %s\n", filing.markdown.c_str());
}

torch::Device bench_device(const std::string& device, const std::vector<int64_t>& lengths,
                           const std::string& option) {
  for (int64_t T : lengths) {
    if (T < 1) throw std::invalid_argument("--lengths: every T must be >= 1");
  }
  if (device != "cpu" && device != "cuda") {
    throw std::invalid_argument(option + ": expected cpu or cuda, got '" + device + "'");
  }
  if (device == "cuda" && !torch::cuda::is_available()) {
    throw std::runtime_error(option + " cuda: no CUDA GPU is visible to torch on this machine");
  }
  return device == "cuda" ? torch::Device("cuda:0") : torch::Device(torch::kCPU);
}

}  // namespace minrnn::cli
