// OpProfile's watched ops (tools/bench/op_profile.h): the copies a piece of work makes, counted
// by the ops that called them and their tensors' sizes and strides — what `bench pack --profile
// --eager` prints to find a stacked step's copies.
#include "tools/bench/op_profile.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <string>

namespace minrnn::cli {
namespace {

TEST(OpProfile, WatchedCopiesNameTheirCallersAndShapes) {
  const torch::Tensor x = torch::randn({3, 4}), bias = torch::randn({4});
  OpProfile ops;
  ops.watch({"aten::copy_"});
  ops.start();
  for (int i = 0; i < 2; ++i) {
    (void)x.t().contiguous();                                      // a transposed read copied
    (void)torch::baddbmm(bias.view({1, 1, 4}), x.view({1, 3, 4}),  // the bias expanded, copied
                         torch::eye(4).view({1, 4, 4}));
  }
  ops.stop();
  const std::string table = ops.watched_table(2);
  EXPECT_NE(table.find("| aten::copy_ | aten::clone < aten::contiguous | [4, 3]/[3, 1] ← "
                       "[4, 3]/[1, 4] | 1.0 |"),
            std::string::npos)
      << table;
  // baddbmm's output filled with the bias first: a stride of 0 along the rows it repeats over.
  EXPECT_NE(table.find("| aten::copy_ | aten::baddbmm | [1, 3, 4]/[12, 4, 1] ← [1, 3, 4]/[4, 0, 1] "
                       "| 1.0 |"),
            std::string::npos)
      << table;
  OpProfile unwatched;
  unwatched.start();
  (void)x.t().contiguous();
  unwatched.stop();
  EXPECT_EQ(unwatched.watched_table(1), "");
}

}  // namespace
}  // namespace minrnn::cli
