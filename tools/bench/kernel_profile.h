// Where a CUDA step's GPU time goes, kernel by kernel: `minrnn bench train --profile` on CUDA.
// A replayed graph dispatches no ATen op, so OpProfile (op_profile.h) sees nothing of it; this
// reads the GPU's own activity records (Kineto over CUPTI, what LibTorch's profiler uses), which
// list every kernel a graph launches, with its start and end on the device.
//
//   const auto activity = trace_cuda_activity([&] { for (…) step(); });
//   std::string md = kernel_table(activity, steps, wall_ms_per_step, 15);
//
// The table says, per step: each kernel's launches and GPU time, and how much of the step's wall
// time the GPU was busy at all (kernels overlapping in time counted once): a step that is bound by
// its launches shows a busy share far below 100% whatever its kernels cost.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace minrnn::cli {

// One piece of work the GPU ran: a kernel, a copy or a fill, as the activity records name it.
struct DeviceActivity {
  std::string name;
  uint64_t start_ns = 0, end_ns = 0;
};

// The GPU activity while `work` runs (the device synced before the trace ends). Throws
// std::runtime_error with the reason where no trace can be taken (no CUDA, no CUPTI).
std::vector<DeviceActivity> trace_cuda_activity(const std::function<void()>& work);

// Nanoseconds in which at least one activity ran (overlaps counted once).
uint64_t busy_ns(std::vector<DeviceActivity> activity);

// Markdown: per kernel name, launches and µs per repetition and share of the GPU time, the
// `top` costliest, then the rest in one row; then the launches, GPU time and busy time per
// repetition against `wall_ms` (one repetition's wall time).
std::string kernel_table(const std::vector<DeviceActivity>& activity, int64_t repetitions,
                         double wall_ms, int top);

// The kernel table of `repetitions` runs of `work` traced (each run taking `wall_ms` untraced),
// or, where no trace can be taken, a line saying why: what `--profile` prints on CUDA.
std::string kernel_profile_of(const std::function<void()>& work, int64_t repetitions,
                              double wall_ms, int top);

}  // namespace minrnn::cli
