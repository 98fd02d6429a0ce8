// Side work (ops/side_work.h): off CUDA, or on a stream no step marked, the work runs where it is
// called, once, and its tensors come back as it made them; a scope off CUDA is inert; the switch
// is process-wide. On CUDA, a training step with side work against the one-stream step:
// tests/rl/train_step_test.cpp (TrainStepCuda.SideWorkGivesTheOneStreamStepsWeights).
#include "ops/side_work.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <vector>

namespace minrnn::core {
namespace {

TEST(SideWork, OffCudaTheWorkRunsWhereItIsCalledOnce) {
  const bool was_on = side_work_on();
  set_side_work(true);
  EXPECT_TRUE(side_work_on());
  {
    SideWorkScope scope(true, torch::kCPU);
    const torch::Tensor a = torch::randn({4, 3}), b = torch::randn({3, 2});
    int calls = 0;
    const std::vector<torch::Tensor> made = beside({a, b}, [&] {
      ++calls;
      return std::vector<torch::Tensor>{a.mm(b), torch::Tensor()};
    });
    scope.join();
    EXPECT_EQ(calls, 1);
    ASSERT_EQ(made.size(), 2u);
    EXPECT_TRUE(torch::equal(made[0], a.mm(b)));
    EXPECT_FALSE(made[1].defined());
  }
  set_side_work(false);
  EXPECT_FALSE(side_work_on());
  set_side_work(was_on);
}

TEST(SideWork, WithNoReadsTheWorkRunsHere) {
  int calls = 0;
  const std::vector<torch::Tensor> made = beside({}, [&] {
    ++calls;
    return std::vector<torch::Tensor>{torch::ones({2})};
  });
  EXPECT_EQ(calls, 1);
  EXPECT_TRUE(torch::equal(made[0], torch::ones({2})));
}

}  // namespace
}  // namespace minrnn::core
