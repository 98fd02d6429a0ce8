#include "tools/bench/op_profile.h"

#include <ATen/record_function.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "tools/bench/cost_table.h"

namespace minrnn::cli {
namespace {

using Clock = std::chrono::steady_clock;

// RecordFunction takes plain function pointers, so the profile being filled is a global.
std::atomic<OpProfile*> g_active{nullptr};

// Per thread: the ops entered and not yet left, each with the time its callees took.
struct Frame {
  Clock::time_point start;
  double child_ms = 0;
};
thread_local std::vector<Frame> t_stack;

std::unique_ptr<at::ObserverContext> on_enter(const at::RecordFunction&) {
  t_stack.push_back({Clock::now(), 0.0});
  return nullptr;
}

void on_exit(const at::RecordFunction& fn, at::ObserverContext*) {
  if (t_stack.empty()) return;  // entered before start()
  const Frame f = t_stack.back();
  t_stack.pop_back();
  const double total = std::chrono::duration<double, std::milli>(Clock::now() - f.start).count();
  if (!t_stack.empty()) t_stack.back().child_ms += total;
  if (OpProfile* p = g_active.load()) p->add(fn.name(), total - f.child_ms);
}

}  // namespace

OpProfile::~OpProfile() {
  if (active_) stop();
}

void OpProfile::start() {
  OpProfile* expected = nullptr;
  if (!g_active.compare_exchange_strong(expected, this)) {
    throw std::logic_error("OpProfile: another profile is running");
  }
  handle_ = at::addGlobalCallback(
      at::RecordFunctionCallback(&on_enter, &on_exit)
          .scopes({at::RecordScope::FUNCTION, at::RecordScope::BACKWARD_FUNCTION}));
  active_ = true;
}

void OpProfile::stop() {
  at::removeCallback(handle_);
  g_active.store(nullptr);
  active_ = false;
}

void OpProfile::add(const std::string& name, double self_ms) {
  std::lock_guard<std::mutex> lock(mutex_);
  Stat& s = stats_[name];
  ++s.calls;
  s.self_ms += self_ms;
}

double OpProfile::total_ms() const {
  std::lock_guard<std::mutex> lock(mutex_);
  double total = 0;
  for (const auto& [name, s] : stats_) total += s.self_ms;
  return total;
}

std::string OpProfile::table(int64_t repetitions, int top) const {
  std::vector<CostRow> rows;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const auto& [name, s] : stats_) rows.push_back({name, s.calls, s.self_ms});
  }
  char total[128];
  std::snprintf(total, sizeof total, "| **all ops** | | **%.2f** | |\n",
                total_ms() / std::max<int64_t>(1, repetitions));
  return "| op | calls/step | self ms/step | share |\n|---|---|---|---|\n" +
         ranked_rows(std::move(rows), repetitions, top, "ops", "%.2f") + total;
}

}  // namespace minrnn::cli
