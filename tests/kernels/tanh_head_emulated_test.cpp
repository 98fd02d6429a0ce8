// A tanh head's kernels (kernels/cuda/tanh_head_programs.h) run by the host emulator, every
// element written once and every barrier checked: y = tanh(x · wᵀ + b), x's gradient and the
// backward blocks' partial rows (their sums, taken here in float64, are the weight's and bias's
// gradients; ColumnSums, which sums them on the GPU, has its own tests) against LibTorch's
// autograd in float64. DT's head (1 280 rows of 128, 3 outputs), a last block partly past the
// rows with lanes past a row's end, the widest rows and most outputs the kernels take (6 for
// halfcheetah and walker2d), each also in the form the launcher takes for its rows, to the general
// form's bits; and a pack's runs stacked, each bit for bit as it is alone.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <string>
#include <vector>

#include "kernels/cuda/tanh_head_programs.h"
#include "tests/kernels/grid_emulator.h"
#include "tests/tensor_compare.h"

namespace minrnn::core {
namespace {

namespace emu = minrnn::testing::emu;
using minrnn::testing::rel_err;
using minrnn::testing::run_part;
using minrnn::testing::tensor_from;
using minrnn::testing::values_of;

struct HeadOutputs {
  std::vector<float> y, x_grad, partial;
};

// Both kernels over x (rows, width) with w (runs, outputs, width), b (runs, outputs) and y's
// gradient dy (rows, outputs); rows_per_run 0 for one run. PerLane, FullRows: the programs' form
// (the general one by default).
template <int PerLane = 8, bool FullRows = false>
HeadOutputs run_head(const torch::Tensor& x, const torch::Tensor& w, const torch::Tensor& b,
                     const torch::Tensor& dy, int64_t rows_per_run) {
  const int64_t rows = x.size(0), width = x.size(1), outputs = w.size(-2);
  emu::Buffer<float> xb("x", values_of<float>(x)), wb("w", values_of<float>(w)),
      bb("b", values_of<float>(b)), dyb("dy", values_of<float>(dy)),
      y("y", static_cast<size_t>(rows * outputs)), x_grad("x_grad", static_cast<size_t>(x.numel()));
  const grid::TanhHeadForward<emu::Memory, PerLane, FullRows> forward{
      {rows, width}, outputs, xb.in(), wb.in(), bb.in(), y.out(), {rows_per_run}};
  grid::TanhHeadBackward<emu::Memory, PerLane, FullRows> backward{
      {rows, width}, outputs, xb.in(), wb.in(), y.in(), dyb.in(), x_grad.out(), {}, {rows_per_run}};
  emu::Buffer<float> partial("partial",
                             static_cast<size_t>(backward.blocks() * backward.partial_width()));
  backward.partial = partial.out();
  emu::Log log;
  emu::run(forward, log);
  emu::run(backward, log);
  for (const auto* out : {&y, &x_grad, &partial}) out->check_written(log);
  EXPECT_TRUE(log.ok()) << log.summary();
  return {y.data(), x_grad.data(), partial.data()};
}

// run_head in the form kernels/cuda/tanh_head.cu launches for rows of x's width.
HeadOutputs launched_head(const torch::Tensor& x, const torch::Tensor& w, const torch::Tensor& b,
                          const torch::Tensor& dy, int64_t rows_per_run) {
  return grid::with_row_form<4>(x.size(1), [&](auto lanes, auto full) {
    return run_head<decltype(lanes)::value, decltype(full)::value>(x, w, b, dy, rows_per_run);
  });
}

void expect_same_bits(const HeadOutputs& a, const HeadOutputs& b) {
  EXPECT_EQ(a.y, b.y);
  EXPECT_EQ(a.x_grad, b.x_grad);
  EXPECT_EQ(a.partial, b.partial);
}

void check_head(int64_t rows, int64_t width, int64_t outputs) {
  SCOPED_TRACE(std::to_string(rows) + " rows of " + std::to_string(width) + ", " +
               std::to_string(outputs) + " outputs");
  torch::manual_seed(rows + width + outputs);
  const torch::Tensor x = torch::randn({rows, width}), w = torch::randn({outputs, width}) * 0.2,
                      b = torch::randn({outputs}) * 0.5, dy = torch::randn({rows, outputs});
  const HeadOutputs got = run_head(x, w, b, dy, 0);

  auto xd = x.to(torch::kDouble).requires_grad_(true),
       wd = w.to(torch::kDouble).requires_grad_(true),
       bd = b.to(torch::kDouble).requires_grad_(true);
  const torch::Tensor yd = torch::tanh(torch::linear(xd, wd, bd));
  yd.backward(dy.to(torch::kDouble));
  EXPECT_LT(rel_err(tensor_from(got.y, {rows, outputs}), yd.detach()), 1e-6);
  EXPECT_LT(rel_err(tensor_from(got.x_grad, {rows, width}), xd.grad()), 1e-5);
  const int64_t partial_width = outputs * width + outputs;
  const torch::Tensor sums =
      tensor_from(got.partial, {-1, partial_width}).to(torch::kDouble).sum(0);
  EXPECT_LT(rel_err(sums.narrow(0, 0, outputs * width).view({outputs, width}), wd.grad()), 1e-5);
  EXPECT_LT(rel_err(sums.narrow(0, outputs * width, outputs), bd.grad()), 1e-5);
  // The form the launcher takes for these rows (4 channels a lane up to 128, the full form at
  // exactly 128 or 256): the general form's bits.
  expect_same_bits(launched_head(x, w, b, dy, 0), got);
}

TEST(TanhHeadEmulated, IsTheLinearsTanhAndItsGradients) {
  check_head(64 * 20, 128, 3);  // DT's action head: B 64, K 20, embed 128, hopper's 3 actions
  check_head(37, 40, 1);        // the last block partly past the rows; lanes past the row's end
  check_head(16, 256, 4);       // the widest rows, with the most outputs they take (4 × 256 terms)
  check_head(64 * 4, 128, 6);   // halfcheetah's and walker2d's 6 actions
  check_head(45, 128, 8);       // the most outputs the kernels take (8 × 128 terms)
  check_head(21, 100, 7);       // rows narrower than a lane's channels at 7 outputs
}

// A pack's runs stacked (kernels/math/run_rows.h): each run's rows read its own weights and bias,
// each backward block's rows one run's — every output bit for bit the run's alone.
TEST(TanhHeadEmulated, EachRunOfAPackIsItsOwnHead) {
  torch::manual_seed(43);
  constexpr int64_t kRuns = 3, kRunRows = 24, kOutputs = 6;
  for (const int64_t width : {48, 128}) {  // lanes past the row's end; DT's rows, the full form
    SCOPED_TRACE(std::to_string(width) + " wide");
    const torch::Tensor x = torch::randn({kRuns * kRunRows, width}),
                        w = torch::randn({kRuns, kOutputs, width}) * 0.2,
                        b = torch::randn({kRuns, kOutputs}) * 0.5,
                        dy = torch::randn({kRuns * kRunRows, kOutputs});
    const HeadOutputs pack = launched_head(x, w, b, dy, kRunRows);
    for (int64_t r = 0; r < kRuns; ++r) {
      SCOPED_TRACE("run " + std::to_string(r));
      const HeadOutputs alone = run_head(x.narrow(0, r * kRunRows, kRunRows), w[r], b[r],
                                         dy.narrow(0, r * kRunRows, kRunRows), 0);
      expect_same_bits(
          {run_part(pack.y, r, alone.y.size()), run_part(pack.x_grad, r, alone.x_grad.size()),
           run_part(pack.partial, r, alone.partial.size())},
          alone);
    }
  }
}

}  // namespace
}  // namespace minrnn::core
