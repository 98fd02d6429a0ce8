#include "tools/bench/kernel_profile.h"

#include <torch/csrc/autograd/profiler_kineto.h>
#include <torch/torch.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>
#include <stdexcept>

#include "tools/bench/cost_table.h"

namespace minrnn::cli {
namespace {

namespace kineto = torch::autograd::profiler;
using torch::profiler::impl::ActivityType;
using torch::profiler::impl::ProfilerConfig;
using torch::profiler::impl::ProfilerState;

// CUDA's demangled names run to hundreds of characters of template arguments: the return type
// and the parameter list go, and what is left is cut to fit a table cell.
std::string short_name(std::string name) {
  constexpr size_t kWidth = 110;
  if (name.rfind("void ", 0) == 0) name.erase(0, 5);
  if (!name.empty() && name.back() == ')') {
    int depth = 0;
    for (size_t i = name.size(); i-- > 0;) {
      depth += name[i] == ')' ? 1 : name[i] == '(' ? -1 : 0;
      if (depth == 0) {
        if (i > 0) name.erase(i);
        break;
      }
    }
  }
  std::replace(name.begin(), name.end(), '|', '/');
  if (name.size() > kWidth) name = name.substr(0, kWidth - 3) + "...";
  return name;
}

}  // namespace

std::vector<DeviceActivity> trace_cuda_activity(const std::function<void()>& work) {
  if (!torch::cuda::is_available()) throw std::runtime_error("no CUDA device to trace");
  const ProfilerConfig config(ProfilerState::KINETO);
  const std::set<ActivityType> activities{ActivityType::CUDA};
  kineto::prepareProfiler(config, activities);
  kineto::enableProfiler(config, activities);
  try {
    work();
    torch::cuda::synchronize();
  } catch (...) {
    kineto::disableProfiler();
    throw;
  }
  const std::unique_ptr<kineto::ProfilerResult> result = kineto::disableProfiler();
  std::vector<DeviceActivity> activity;
  for (const kineto::KinetoEvent& e : result->events()) {
    if (e.deviceType() != c10::DeviceType::CUDA) continue;
    activity.push_back({e.name(), e.startNs(), e.endNs()});
  }
  if (activity.empty()) {
    throw std::runtime_error("the trace holds no GPU activity (is CUPTI usable here?)");
  }
  return activity;
}

uint64_t busy_ns(std::vector<DeviceActivity> activity) {
  std::sort(activity.begin(), activity.end(),
            [](const auto& a, const auto& b) { return a.start_ns < b.start_ns; });
  uint64_t busy = 0, covered_to = 0;
  for (const DeviceActivity& a : activity) {
    const uint64_t from = std::max(a.start_ns, covered_to);
    if (a.end_ns > from) busy += a.end_ns - from;
    covered_to = std::max(covered_to, a.end_ns);
  }
  return busy;
}

std::string kernel_table(const std::vector<DeviceActivity>& activity, int64_t repetitions,
                         double wall_ms, int top) {
  std::map<std::string, CostRow> by_name;
  double total_us = 0;
  for (const DeviceActivity& a : activity) {
    const double us = a.end_ns > a.start_ns ? (a.end_ns - a.start_ns) / 1e3 : 0.0;
    CostRow& r = by_name[short_name(a.name)];
    ++r.count;
    r.cost += us;
    total_us += us;
  }
  std::vector<CostRow> rows;
  for (auto& [name, r] : by_name) rows.push_back({name, r.count, r.cost});
  std::ostringstream md;
  md << "| kernel | launches/step | GPU µs/step | share |\n|---|---|---|---|\n"
     << ranked_rows(std::move(rows), repetitions, top, "kernels", "%.1f");
  const double n = static_cast<double>(std::max<int64_t>(1, repetitions));
  char buf[512];
  const double busy_us = busy_ns(activity) / 1e3 / n;
  std::snprintf(buf, sizeof buf,
                "| **all: %.0f launches** | | **%.1f** | busy %.1f µs of a %.1f µs step "
                "(%.0f%%) |\n",
                activity.size() / n, total_us / n, busy_us, wall_ms * 1e3,
                wall_ms > 0 ? 100.0 * busy_us / (wall_ms * 1e3) : 0.0);
  md << buf;
  return md.str();
}

std::string kernel_profile_of(const std::function<void()>& work, int64_t repetitions,
                              double wall_ms, int top) {
  try {
    return kernel_table(trace_cuda_activity([&] {
                          for (int64_t i = 0; i < repetitions; ++i) work();
                        }),
                        repetitions, wall_ms, top);
  } catch (const std::exception& e) {
    return std::string("(no kernel trace: ") + e.what() + ")\n";
  }
}

}  // namespace minrnn::cli
