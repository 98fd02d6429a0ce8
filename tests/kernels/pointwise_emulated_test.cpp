// The CUDA element-wise kernels' phase programs (kernels/cuda/pointwise_programs.h) run by the host
// emulator (tests/kernels/grid_emulator.h), every element written once, in the last partial block
// too: the dropout-add bit for bit the CPU pass; the MLP's bias + GELU against float64 (its
// backward: column_sums_emulated_test.cpp); DT's masked MSE against the CPU op. (AdamW and the
// step's end: adamw_emulated_test.cpp.)
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "kernels/cuda/pointwise_programs.h"
#include "ops/dropout.h"
#include "ops/masked_mse.h"
#include "tests/kernels/grid_emulator.h"
#include "tests/tensor_compare.h"

namespace minrnn::core {
namespace {

namespace emu = minrnn::testing::emu;
using minrnn::testing::values_of;

// torch::tensor would make a vector of doubles float32 (the default dtype): keep T.
template <typename T>
torch::Tensor tensor_of(const std::vector<T>& v, int64_t rows, int64_t width) {
  const auto dtype = sizeof(T) == 4 ? torch::kFloat : torch::kDouble;
  return torch::from_blob(const_cast<T*>(v.data()), {rows, width}, dtype).clone();
}

// seed_base: the kernel's seed is *seed_base + (seed − *seed_base), as a replayed graph passes it.
template <typename T>
void check(int64_t n, double p, bool residual, const uint64_t* seed_base = nullptr) {
  SCOPED_TRACE("n " + std::to_string(n) + " p " + std::to_string(p) +
               (residual ? " with x" : " without x") + (seed_base ? " seed from memory" : ""));
  const auto dtype = sizeof(T) == 4 ? torch::kFloat : torch::kDouble;
  const torch::Tensor x = torch::randn({n}, dtype), y = torch::randn({n}, dtype);
  const uint64_t seed = 0x0123456789ABCDEFull + static_cast<uint64_t>(n);
  const torch::Tensor want = add_dropout_seeded(residual ? x : torch::Tensor(), y, p, seed);
  emu::Log log;
  emu::Buffer<T> xb("x", values_of<T>(x)), yb("y", values_of<T>(y)),
      out("out", static_cast<size_t>(n));
  const grid::DropoutAdd<T, emu::Memory> k{{n},
                                           seed_base ? seed - *seed_base : seed,
                                           seed_base,
                                           std::llround(p * 4294967296.0),
                                           static_cast<T>(1.0 / (1.0 - p)),
                                           residual,
                                           xb.in(),
                                           yb.in(),
                                           out.out()};
  emu::run(k, log);
  out.check_written(log);
  ASSERT_TRUE(log.ok()) << log.summary();
  const std::vector<T> w = values_of<T>(want);
  int64_t differ = 0;
  for (int64_t i = 0; i < n; ++i) differ += out.data()[i] != w[i];
  EXPECT_EQ(differ, 0);
}

TEST(PointwiseEmulated, DropoutAddEqualsTheCpuPassBitForBit) {
  torch::manual_seed(5);
  for (int64_t n : {1, 255, 256, 257, 4099}) {
    for (double p : {0.1, 0.5}) {
      for (bool residual : {true, false}) {
        check<float>(n, p, residual);
        check<double>(n, p, residual);
      }
    }
  }
  const uint64_t base = 0xFEDCBA9876543210ull;  // wraps: the sum is taken modulo 2⁶⁴
  check<float>(4099, 0.1, true, &base);
  check<double>(257, 0.5, false, &base);
}

// runs > 1: a pack's runs stacked (ops/run_axis.h), rows / runs rows each with its own bias row.
// prepared: the pass's rows and runs found by Dividers (as launched), else by division.
template <typename T>
torch::Tensor run_bias_gelu(const torch::Tensor& pre, const torch::Tensor& bias, int64_t runs,
                            bool prepared) {
  const int64_t rows = pre.size(0), width = pre.size(1), n = rows * width;
  emu::Log log;
  emu::Buffer<T> pre_b("pre", values_of<T>(pre)), bias_b("bias", values_of<T>(bias)),
      act_b("activated", static_cast<size_t>(n));
  grid::BiasGelu<T, emu::Memory> k{};
  k.n = n, k.width = width, k.rows_per_run = runs > 1 ? rows / runs : 0;
  k.pre = pre_b.in(), k.bias = bias_b.in(), k.activated = act_b.out();
  EXPECT_FALSE(k.divide_fast);
  EXPECT_EQ(k.prepared().divide_fast, true);
  emu::run(prepared ? k.prepared() : k, log);
  act_b.check_written(log);
  EXPECT_TRUE(log.ok()) << log.summary();
  return tensor_of(act_b.data(), rows, width).to(torch::kDouble);
}

template <typename T>
void check_gelu(int64_t rows, int64_t width, int64_t runs = 1) {
  SCOPED_TRACE(std::to_string(rows) + " x " + std::to_string(width) + ", " + std::to_string(runs) +
               " runs");
  const auto dtype = sizeof(T) == 4 ? torch::kFloat : torch::kDouble;
  const torch::Tensor pre = torch::randn({rows, width}, dtype) * 3,
                      bias = runs > 1 ? torch::randn({runs, width}, dtype)
                                      : torch::randn({width}, dtype);
  const torch::Tensor act = run_bias_gelu<T>(pre, bias, runs, true);
  EXPECT_TRUE(torch::equal(act, run_bias_gelu<T>(pre, bias, runs, false)));
  // float64 reference: GELU by torch, its derivative (gelu_at's slope, which the backward's
  // pass recomputes) by autograd.
  const torch::Tensor biased =
      runs > 1 ? (pre.view({runs, -1, width}) + bias.unsqueeze(1)).view({rows, width}) : pre + bias;
  const torch::Tensor v = biased.to(torch::kDouble).requires_grad_(true);
  const torch::Tensor gelu = torch::gelu(v);
  gelu.sum().backward();
  std::vector<T> slopes;
  for (T x : values_of<T>(biased)) slopes.push_back(grid::gelu_at(x).slope);
  const double tol = sizeof(T) == 4 ? 2e-6 : 1e-13;
  const torch::Tensor slope = tensor_of(slopes, rows, width).to(torch::kDouble);
  EXPECT_LE((act - gelu.detach()).abs().max().item<double>(), tol * 4);
  EXPECT_LE((slope - v.grad()).abs().max().item<double>(), tol * 4);
}

TEST(PointwiseEmulated, BiasGeluMatchesFloat64) {
  torch::manual_seed(6);
  for (auto [rows, width] : {std::pair<int64_t, int64_t>{1, 16}, {7, 48}, {37, 512}}) {
    check_gelu<float>(rows, width);
    check_gelu<double>(rows, width);
  }
  check_gelu<float>(3 * 7, 48, 3);
  check_gelu<double>(2 * 37, 40, 2);
  check_gelu<float>(5 * 3, 7, 5);
}

// DT's masked MSE as the CUDA kernels compute it, under the emulator (its block reduction's
// barriers checked), against the CPU op (ops/masked_mse.h): fewer rows than threads, and more.
TEST(PointwiseEmulated, MaskedMseIsTheCpuOpsLossAndGradient) {
  for (const int64_t rows : {7, 300}) {
    SCOPED_TRACE(std::to_string(rows) + " rows");
    torch::manual_seed(rows);
    const int64_t width = 3;
    const torch::Tensor p = torch::randn({rows, width}), t = torch::randn({rows, width});
    const torch::Tensor m = (torch::rand({rows}) > 0.3).to(torch::kFloat);
    emu::Buffer<float> pb("p", values_of<float>(p)), tb("t", values_of<float>(t)),
        mb("mask", values_of<float>(m)), loss("loss", 1), denom("denominator", 1);
    const grid::MaskedMseForward<emu::Memory> forward{rows,    width,      pb.in(),    tb.in(),
                                                      mb.in(), loss.out(), denom.out()};
    emu::Log log;
    emu::run(forward, log);
    loss.check_written(log);
    denom.check_written(log);
    ASSERT_TRUE(log.ok()) << log.summary();

    const torch::Tensor pg = p.clone().requires_grad_(true);
    const torch::Tensor want = masked_mse(pg, t, m);
    want.backward(torch::full({}, 2.0f));
    EXPECT_NEAR(loss.data()[0], want.item<float>(), 1e-6 * want.item<float>());
    EXPECT_EQ(denom.data()[0], std::max(m.sum().item<float>(), 1.0f));

    emu::Buffer<float> g("grad_loss", std::vector<float>{2.0f}), grad("grad", rows * width);
    const grid::MaskedMseBackward<emu::Memory> backward{
        {rows * width}, width, pb.in(), tb.in(), mb.in(), g.in(), denom.in(), grad.out()};
    emu::Log back_log;
    emu::run(backward, back_log);
    grad.check_written(back_log);
    ASSERT_TRUE(back_log.ok()) << back_log.summary();
    const torch::Tensor got = torch::tensor(grad.data()).view({rows, width});
    EXPECT_TRUE(torch::equal(got, pg.grad()));  // the same formula, element by element
  }
}

}  // namespace
}  // namespace minrnn::core
