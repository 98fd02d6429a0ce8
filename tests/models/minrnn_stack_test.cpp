#include <gtest/gtest.h>

#include "models/minrnn_stack.h"
#include "tests/tensor_compare.h"

using namespace minrnn::core;

namespace {

std::shared_ptr<MinRnnStack> make_stack(CellKind cell, bool conv) {
  BlockOptions o;
  o.cell = cell;
  o.d_model = 12;
  o.expansion = 2.0;
  o.conv = conv;
  o.dropout = 0.1;
  auto stack = std::make_shared<MinRnnStack>(o, 3);
  stack->eval();  // dropout off
  return stack;
}

using minrnn::testing::max_err;

}  // namespace

class MinRnnStackModes : public ::testing::TestWithParam<std::tuple<CellKind, bool>> {};

TEST_P(MinRnnStackModes, StepByStepEqualsParallel) {
  torch::manual_seed(20);
  auto [cell, conv] = GetParam();
  auto stack = make_stack(cell, conv);
  torch::NoGradGuard g;
  torch::Tensor x = torch::randn({2, 25, 12});
  torch::Tensor y = stack->forward(x);
  SequenceState state = stack->initial_state();
  for (int64_t t = 0; t < 25; ++t) {
    EXPECT_LT(max_err(stack->step(x.select(1, t), state), y.select(1, t)), 1e-5) << "t = " << t;
  }
}

TEST_P(MinRnnStackModes, ChunkedParallelCarriesStateExactly) {
  torch::manual_seed(21);
  auto [cell, conv] = GetParam();
  auto stack = make_stack(cell, conv);
  torch::NoGradGuard g;
  torch::Tensor x = torch::randn({2, 30, 12});
  torch::Tensor full = stack->forward(x);
  SequenceState state = stack->initial_state();
  torch::Tensor first = stack->forward(x.slice(1, 0, 11), &state);
  torch::Tensor second = stack->forward(x.slice(1, 11), &state);
  EXPECT_LT(max_err(torch::cat({first, second}, 1), full), 1e-5);
}

INSTANTIATE_TEST_SUITE_P(
    All, MinRnnStackModes,
    ::testing::Combine(::testing::Values(CellKind::kMinGRU, CellKind::kMinLSTM), ::testing::Bool()),
    [](const auto& info) {
      return std::string(cell_name(std::get<0>(info.param))) +
             (std::get<1>(info.param) ? "_conv" : "_noconv");
    });

TEST(MinRnnStack, DropoutIsActiveInTrainingOnly) {
  torch::manual_seed(22);
  auto stack = make_stack(CellKind::kMinGRU, false);
  torch::Tensor x = torch::randn({2, 8, 12});
  torch::Tensor eval_a = stack->forward(x), eval_b = stack->forward(x);
  EXPECT_EQ(max_err(eval_a, eval_b), 0.0);
  stack->train();
  EXPECT_GT(max_err(stack->forward(x), stack->forward(x)), 0.0);
}

TEST(MinRnnStack, GradientsReachEveryParameter) {
  torch::manual_seed(23);
  auto stack = make_stack(CellKind::kMinLSTM, true);
  stack->train();
  stack->forward(torch::randn({2, 10, 12})).pow(2).mean().backward();
  for (auto& p : stack->named_parameters()) {
    ASSERT_TRUE(p.value().grad().defined()) << p.key();
    EXPECT_GT(p.value().grad().abs().sum().item<double>(), 0.0) << p.key();
  }
}
