#include "tools/runtime_env.h"

#include "io/cpus.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <thread>

namespace minrnn::cli {
namespace {

// Threads running now besides this one: the kernel's count of runnable tasks (/proc/loadavg's
// fourth field, "running/total"), the least of a few looks so a passing blip does not count. The
// one-minute load average would still count a job that ended seconds ago. In a container the
// count is the host's: a busy host gives PASSIVE, the choice that cannot go badly wrong.
int others_running() {
  int least = -1;
  for (int i = 0; i < 5; ++i) {
    if (i > 0) std::this_thread::sleep_for(std::chrono::milliseconds(2));
    std::ifstream in("/proc/loadavg");
    double a, b, c;
    int running = 0;
    char slash;
    if (!(in >> a >> b >> c >> running >> slash)) return 0;  // no /proc: assume an idle machine
    least = least < 0 ? running : std::min(least, running);
  }
  return std::max(0, least - 1);  // the count includes this process
}

int requested_threads(int cpus) {
  if (const char* v = std::getenv("OMP_NUM_THREADS")) {
    const int n = std::atoi(v);  // "4" or "4,2" (nesting): the outer level is what runs here
    if (n > 0) return n;
  }
  return cpus;
}

}  // namespace

std::optional<std::pair<std::string, std::string>> openmp_wait_setting(const char* user_policy,
                                                                       const char* user_spincount,
                                                                       int cpus, int threads,
                                                                       int others) {
  if (user_policy != nullptr || user_spincount != nullptr) return std::nullopt;
  if (threads <= 1) return std::nullopt;  // no idle pool threads to wait
  if (others + threads <= cpus) return std::make_pair("GOMP_SPINCOUNT", "300000");
  return std::make_pair("OMP_WAIT_POLICY", "PASSIVE");
}

std::vector<std::pair<std::string, std::string>> runtime_settings() {
  std::vector<std::pair<std::string, std::string>> out;
  const int cpus = io::usable_cpu_count();
  const char* policy = std::getenv("OMP_WAIT_POLICY");
  const char* spincount = std::getenv("GOMP_SPINCOUNT");
  const int threads = requested_threads(cpus);
  // Only when the answer can depend on it: reading the run queue costs ~10 ms.
  const int others = policy || spincount || threads <= 1 ? 0 : others_running();
  if (auto s = openmp_wait_setting(policy, spincount, cpus, threads, others)) out.push_back(*s);
  // By default glibc returns every large freed tensor to the kernel and faults its pages in again
  // on the next step; keeping them cut `bench scan --lengths 512` from 50 s to 31 s (system time
  // 31 s → 2 s) and a minGRU layer's training step by ~30% on the 2-core machine.
  const std::pair<const char*, const char*> malloc_settings[] = {
      {"MALLOC_MMAP_THRESHOLD_", "4294967296"},
      {"MALLOC_TRIM_THRESHOLD_", "68719476736"},
      {"MALLOC_TOP_PAD_", "1073741824"}};
  for (const auto& [name, value] : malloc_settings) {
    if (std::getenv(name) == nullptr) out.emplace_back(name, value);
  }
  // A pack trains each run on a stream of its own (ops/cuda_graph.h), but CUDA feeds the streams
  // of a process to the GPU through 8 hardware queues unless told otherwise: from the ninth run
  // on, runs share a queue and one run's kernels wait behind another's. 32 is CUDA's most.
  if (std::getenv("CUDA_DEVICE_MAX_CONNECTIONS") == nullptr) {
    out.emplace_back("CUDA_DEVICE_MAX_CONNECTIONS", "32");
  }
  return out;
}

}  // namespace minrnn::cli
