// What `bench train` and the pack benches count and print: a training step's matmuls (each Linear
// at the tokens it sees) and their FLOPs, derived here by hand for the default minGRU agent; and
// the arithmetic cells both pack tables end a row with.
#include "tools/bench/train_setup.h"

#include <gtest/gtest.h>

#include <string>

namespace minrnn::cli {
namespace {

TEST(TrainSetup, AStepsMatmulsAreItsLinearsAtTheTokensEachSees) {
  const TrainShape shape;  // B 64, K 20, embed 128, 3 layers, hopper dims (obs 11, act 3)
  BenchTrainer trainer(shape, "mingru", torch::kCPU, 0, rl::StepMode::kEager);
  const int64_t one_kind = 64 * 20, all = 3 * one_kind;  // B·K, B·3K tokens
  int64_t embeddings = 0, blocks = 0, head = 0;
  double flops = 0;
  for (const StepMatmul& m : training_step_matmuls(trainer.agent, shape)) {
    flops += 6.0 * static_cast<double>(m.rows * m.in * m.out);
    if (m.out == 128 && m.in <= 11) {  // return (1), state (11), action (3) → 128
      EXPECT_EQ(m.rows, one_kind);
      ++embeddings;
    } else if (m.out == 3) {
      EXPECT_EQ(m.rows, one_kind);
      EXPECT_EQ(m.in, 128);
      ++head;
    } else {  // a block's gates 128 → 256, MLP 128 → 512 → 128
      EXPECT_EQ(m.rows, all);
      ++blocks;
    }
  }
  EXPECT_EQ(embeddings, 3);
  EXPECT_EQ(head, 1);
  EXPECT_EQ(blocks, 3 * 3);
  // 6 · [B·K · (1 + 11 + 3 + 3) · 128 + 3 layers · B·3K · (128·256 + 2 · 128·512)]
  const double want = 6.0 * (1280.0 * 18 * 128 + 3 * 3840.0 * (128 * 256 + 2 * 128 * 512));
  EXPECT_DOUBLE_EQ(flops, want);
  EXPECT_DOUBLE_EQ(training_step_flops(trainer.agent, shape), want);
}

TEST(TrainSetup, PackTablesEndARowWithItsArithmetic) {
  EXPECT_EQ(flop_cells(2000.0, 11.5, 0), " 11.50 | 23.00 |");
  EXPECT_EQ(flop_cells(2000.0, 11.5, 46.0), " 11.50 | 23.00 | 50.0 |");
  EXPECT_EQ(rate_table_header({"probe", "P"}, 46.0),
            "| probe | P | GFLOP/step | TFLOP/s | % of peak |\n|---|---|---|---|---|\n");
  BenchCsv csv = rate_csv({"probe"});
  add_rate_row(csv, {"matmuls"}, 2000.0, 11.5);
  EXPECT_EQ(csv.text(),
            "probe,run_steps_per_s,ms_per_run_step,step_gflop,tflops\nmatmuls,2000,0.5,11.5,23\n");
}

}  // namespace
}  // namespace minrnn::cli
