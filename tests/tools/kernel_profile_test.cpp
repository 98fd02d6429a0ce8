// The kernel table of `bench train --profile` on CUDA, from activity records made up here (the
// trace itself needs a GPU; gpu-check.sh runs it there).
#include "tools/bench/kernel_profile.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <string>
#include <vector>

namespace minrnn::cli {
namespace {

TEST(KernelProfile, BusyTimeCountsOverlapsOnce) {
  // [0,10) and [5,20) overlap by 5; [30,35) stands alone; [31,33) lies inside it.
  const std::vector<DeviceActivity> activity{
      {"a", 0, 10}, {"b", 30, 35}, {"c", 5, 20}, {"d", 31, 33}};
  EXPECT_EQ(busy_ns(activity), 25u);
  EXPECT_EQ(busy_ns({}), 0u);
}

TEST(KernelProfile, TableSumsKernelsPerStepUnderShortNames) {
  const std::string gemm = "void ampere_sgemm_128x64_nn(int, float const*, float*)";
  const std::string add =
      "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, "
      "at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, "
      "at::detail::Array<char*, 3>)";
  // Two steps: each a 30 µs GEMM and two 2 µs adds, back to back, in a 50 µs step.
  std::vector<DeviceActivity> activity;
  for (uint64_t step : {0u, 1u}) {
    const uint64_t t = step * 50'000;
    activity.push_back({gemm, t, t + 30'000});
    activity.push_back({add, t + 30'000, t + 32'000});
    activity.push_back({add, t + 32'000, t + 34'000});
  }
  const std::string md = kernel_table(activity, 2, 0.05, 1);
  // The GEMM first (most time), its parameter list and "void " gone; the adds summed into the
  // rest row; per step: 3 launches, 34 µs of GPU time, busy 68% of the 50 µs step.
  EXPECT_NE(md.find("| `ampere_sgemm_128x64_nn` | 1 | 30.0 | 88.2% |"), std::string::npos) << md;
  EXPECT_NE(md.find("| 1 other kernels | 2 | 4.0 | 11.8% |"), std::string::npos) << md;
  EXPECT_NE(md.find("| **all: 3 launches** | | **34.0** | busy 34.0 µs of a 50.0 µs step (68%) |"),
            std::string::npos)
      << md;
  // With room for both: the add's template arguments stay, cut to fit a cell.
  const std::string both = kernel_table(activity, 2, 0.05, 5);
  EXPECT_NE(
      both.find("| `at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add"),
      std::string::npos)
      << both;
  EXPECT_EQ(both.find("(int, "), std::string::npos) << both;
}

// What --profile prints where no trace can be taken (this machine without a GPU): why, in one
// line, and the work still run as many times as asked.
TEST(KernelProfile, WithoutAGpuTheProfileSaysWhyAndTheWorkRunsAsAsked) {
  if (torch::cuda::is_available()) GTEST_SKIP() << "a GPU is here: the trace is taken";
  int runs = 0;
  const std::string text = kernel_profile_of([&] { ++runs; }, 5, 1.0, 10);
  EXPECT_EQ(text, "(no kernel trace: no CUDA device to trace)\n");
  EXPECT_EQ(runs, 0);  // refused before it ran anything
}

}  // namespace
}  // namespace minrnn::cli
