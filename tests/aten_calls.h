// How many ATen calls of a kind some work dispatches on this thread (RecordFunction, the hooks
// LibTorch's profiler uses): for tests that an op runs no kernel it has no need of — a fill, on
// CUDA a launch in every replayed training step.
#pragma once
#include <ATen/record_function.h>

#include <atomic>
#include <functional>
#include <string>

namespace minrnn::testing {

// Calls named "aten::fill_" or "aten::zero_" (what torch::zeros, ones_like and LibTorch's own
// zero or one tensors run) whose value (0 for zero_) `value` accepts.
inline int64_t fills_in(
    const std::function<void()>& work,
    const std::function<bool(double)>& value = [](double) { return true; }) {
  static std::atomic<int64_t> count{0};
  static std::function<bool(double)> accepts;
  count = 0;
  accepts = value;
  const at::CallbackHandle handle = at::addThreadLocalCallback(
      at::RecordFunctionCallback(
          [](const at::RecordFunction& fn) -> std::unique_ptr<at::ObserverContext> {
            const std::string name = fn.name();
            double filled = 0;
            if (name == "aten::fill_") {
              const auto inputs = fn.inputs();
              if (inputs.size() < 2 || !inputs[1].isScalar()) return nullptr;
              filled = inputs[1].toScalar().toDouble();
            } else if (name != "aten::zero_") {
              return nullptr;
            }
            if (accepts(filled)) ++count;
            return nullptr;
          })
          .needsInputs(true)
          .scopes({at::RecordScope::FUNCTION}));
  work();
  at::removeCallback(handle);
  return count.load();
}

}  // namespace minrnn::testing
