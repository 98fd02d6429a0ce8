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
  const char* name = "";
};
thread_local std::vector<Frame> t_stack;

std::unique_ptr<at::ObserverContext> on_enter(const at::RecordFunction& fn) {
  t_stack.push_back({Clock::now(), 0.0, fn.name()});
  return nullptr;
}

// A tensor as "[sizes]/[strides]" (an expanded one shows its 0 strides).
std::string shape_of(const at::Tensor& t) {
  std::ostringstream out;
  out << t.sizes() << "/" << t.strides();
  return out.str();
}

// The ops this thread is inside, up to three, the nearest first: "aten::clone < aten::contiguous".
std::string callers() {
  if (t_stack.empty()) return "(the step)";
  std::string chain;
  for (size_t k = 0; k < 3 && k < t_stack.size(); ++k) {
    chain += (k ? " < " : "") + std::string(t_stack[t_stack.size() - 1 - k].name);
  }
  return chain;
}

// "op | callers | tensors" of a watched call.
std::string watched_key(const at::RecordFunction& fn, const std::string& caller) {
  std::ostringstream key;
  key << fn.name() << " | " << caller << " | ";
  bool first = true;
  for (const c10::IValue& v : fn.inputs()) {
    if (!v.isTensor()) continue;
    key << (first ? "" : " ← ") << shape_of(v.toTensor());
    first = false;
  }
  return key.str();
}

void on_exit(const at::RecordFunction& fn, at::ObserverContext*) {
  if (t_stack.empty()) return;  // entered before start()
  const Frame f = t_stack.back();
  t_stack.pop_back();
  const double total = std::chrono::duration<double, std::milli>(Clock::now() - f.start).count();
  if (!t_stack.empty()) t_stack.back().child_ms += total;
  OpProfile* p = g_active.load();
  if (!p) return;
  p->add(fn.name(), total - f.child_ms);
  if (p->watches(fn.name())) p->add_watched(watched_key(fn, callers()));
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
          .needsInputs(!watched_ops_.empty())
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

void OpProfile::watch(std::vector<std::string> ops) {
  std::lock_guard<std::mutex> lock(mutex_);
  watched_ops_ = std::move(ops);
}

bool OpProfile::watches(const std::string& op) const {
  return std::find(watched_ops_.begin(), watched_ops_.end(), op) != watched_ops_.end();
}

void OpProfile::add_watched(const std::string& key) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++watched_calls_[key];
}

std::string OpProfile::watched_table(int64_t repetitions) const {
  std::lock_guard<std::mutex> lock(mutex_);
  if (watched_calls_.empty()) return "";
  std::ostringstream md;
  md << "| op | called from | tensors ([sizes]/[strides]; the first is written) | calls/step |\n"
        "|---|---|---|---|\n";
  for (const auto& [key, calls] : watched_calls_) {
    char per_step[32];
    std::snprintf(
        per_step, sizeof per_step, "%.1f",
        static_cast<double>(calls) / static_cast<double>(std::max<int64_t>(1, repetitions)));
    md << "| " << key << " | " << per_step << " |\n";
  }
  return md.str();
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
