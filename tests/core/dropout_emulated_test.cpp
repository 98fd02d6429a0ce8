// The CUDA dropout-add's phase program (core/dropout_program.h) run by the host emulator
// (tests/core/grid_emulator.h): bit for bit the CPU pass, every element written once, in the
// last partial block too.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <vector>

#include "core/dropout.h"
#include "core/dropout_program.h"
#include "tests/core/grid_emulator.h"

namespace minrnn::core {
namespace {

namespace emu = minrnn::testing::emu;

template <typename T>
std::vector<T> values(const torch::Tensor& t) {
  const torch::Tensor c = t.contiguous();
  return std::vector<T>(c.data_ptr<T>(), c.data_ptr<T>() + c.numel());
}

template <typename T>
void check(int64_t n, double p, bool residual) {
  SCOPED_TRACE("n " + std::to_string(n) + " p " + std::to_string(p) +
               (residual ? " with x" : " without x"));
  const auto dtype = sizeof(T) == 4 ? torch::kFloat : torch::kDouble;
  const torch::Tensor x = torch::randn({n}, dtype), y = torch::randn({n}, dtype);
  const uint64_t seed = 0x0123456789ABCDEFull + static_cast<uint64_t>(n);
  const torch::Tensor want = add_dropout_seeded(residual ? x : torch::Tensor(), y, p, seed);
  emu::Log log;
  emu::Buffer<T> xb("x", values<T>(x)), yb("y", values<T>(y)), out("out", static_cast<size_t>(n));
  const grid::DropoutAdd<T, emu::Memory> k{n,
                                           seed,
                                           std::llround(p * 4294967296.0),
                                           static_cast<T>(1.0 / (1.0 - p)),
                                           residual,
                                           xb.in(),
                                           yb.in(),
                                           out.out()};
  emu::run(k, log);
  out.check_written(log);
  ASSERT_TRUE(log.ok()) << log.summary();
  const std::vector<T> w = values<T>(want);
  int64_t differ = 0;
  for (int64_t i = 0; i < n; ++i) differ += out.data()[i] != w[i];
  EXPECT_EQ(differ, 0);
}

TEST(DropoutEmulated, KernelEqualsTheCpuPassBitForBit) {
  torch::manual_seed(5);
  for (int64_t n : {1, 255, 256, 257, 4099}) {
    for (double p : {0.1, 0.5}) {
      for (bool residual : {true, false}) {
        check<float>(n, p, residual);
        check<double>(n, p, residual);
      }
    }
  }
}

}  // namespace
}  // namespace minrnn::core
