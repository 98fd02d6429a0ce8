// A training step's end over a pack's stacked runs (ops/run_axis.h), as the CUDA kernels compute
// it under the host emulator: DT's masked MSE a loss a run (MaskedMseForward / Backward), the
// gradients' squares a run's partials of their own (SquareSums, over two launches as the host
// splits more than kTensors tensors) and a block a run for its norm, clip scale, apply flag and
// verdict (EndStep), and AdamW with each run's row of scalars (AdamWStep) — every output bit for
// bit what the same kernels give each run alone.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <string>
#include <vector>

#include "kernels/cuda/step_end_programs.h"
#include "tests/kernels/grid_emulator.h"
#include "tests/tensor_compare.h"

namespace minrnn::core {
namespace {

namespace emu = minrnn::testing::emu;
using minrnn::testing::values_of;

constexpr int64_t kRuns = 3;

// A run's part of a buffer that holds the kRuns runs' equal parts one after the other.
std::vector<float> part(const std::vector<float>& all, int64_t run) {
  return testing::run_part(all, run, all.size() / static_cast<size_t>(kRuns));
}

struct Mse {
  std::vector<float> loss, denominator, grad;
};

Mse run_mse(const torch::Tensor& p, const torch::Tensor& t, const torch::Tensor& m,
            const torch::Tensor& grad_loss, int64_t runs) {
  const int64_t rows = p.size(0), width = p.size(1);
  emu::Buffer<float> pb("p", values_of<float>(p)), tb("t", values_of<float>(t)),
      mb("mask", values_of<float>(m)), loss("loss", runs), denom("denominator", runs),
      gb("grad_loss", values_of<float>(grad_loss)), grad("grad", rows * width);
  const grid::MaskedMseForward<emu::Memory> forward{rows,    width,      pb.in(),     tb.in(),
                                                    mb.in(), loss.out(), denom.out(), runs};
  const grid::MaskedMseBackward<emu::Memory> backward{
      {rows * width}, width,      pb.in(),
      tb.in(),        mb.in(),    gb.in(),
      denom.in(),     grad.out(), runs > 1 ? rows / runs : 0};
  emu::Log log;
  emu::run(forward, log);
  emu::run(backward, log);
  for (const auto* b : {&loss, &denom, &grad}) b->check_written(log);
  EXPECT_TRUE(log.ok()) << log.summary();
  return {loss.data(), denom.data(), grad.data()};
}

// A block's tensor (TensorBlocks::of, by halving the range) is the one a walk from the first finds,
// for every block of tensors of many sizes, empty ones among them (their first block is their
// successor's), one run or several.
TEST(StepEndRunsEmulated, EachBlockFindsItsTensor) {
  constexpr int64_t kPerBlock = 8;
  for (const int64_t runs : {1, 3}) {
    grid::TensorBlocks<48, kPerBlock> blocks;
    blocks.runs = runs;
    for (const int64_t n : {5, 0, 8, 9, 0, 0, 1, 64, 17, 0, 3, 40, 0}) blocks.add(n);
    const auto walked = [&](int64_t block) {
      int t = 0;
      while (t + 1 < blocks.count && block >= blocks.first_block[t + 1]) ++t;
      return t;
    };
    for (int64_t block = 0; block < blocks.blocks(); ++block) {
      EXPECT_EQ(blocks.of(block), walked(block)) << "block " << block << ", " << runs << " runs";
      EXPECT_GT(blocks.size[blocks.of(block)], 0) << "block " << block;  // never an empty one
    }
  }
}

TEST(StepEndRunsEmulated, EachRunsLossIsItsOwn) {
  torch::manual_seed(41);
  const int64_t rows = 300, width = 3;  // a run's rows: more than the block's threads
  const torch::Tensor p = torch::randn({kRuns * rows, width}),
                      t = torch::randn({kRuns * rows, width});
  const torch::Tensor m = (torch::rand({kRuns * rows}) > 0.3).to(torch::kFloat);
  const torch::Tensor grad_loss = torch::tensor({1.0f, 2.0f, 0.5f});
  const Mse pack = run_mse(p, t, m, grad_loss, kRuns);
  for (int64_t r = 0; r < kRuns; ++r) {
    SCOPED_TRACE("run " + std::to_string(r));
    const Mse alone = run_mse(p.narrow(0, r * rows, rows), t.narrow(0, r * rows, rows),
                              m.narrow(0, r * rows, rows), grad_loss.narrow(0, r, 1), 1);
    EXPECT_EQ(pack.loss[r], alone.loss[0]);
    EXPECT_EQ(pack.denominator[r], alone.denominator[0]);
    EXPECT_EQ(part(pack.grad, r), alone.grad);
  }
}

struct End {
  std::vector<float> scalars, loss, norm;
  std::vector<int64_t> verdict;
};

// The gradients (`runs` runs of sizes[i] elements each) summed and the step ended, as
// kernels/cuda/pointwise.cu chains the launches.
End run_end(const std::vector<torch::Tensor>& grads, const std::vector<int64_t>& sizes,
            const std::vector<float>& losses, const std::vector<float>& scalars,
            const std::vector<int64_t>& verdicts, int64_t runs, int64_t first_step) {
  using Sums = grid::SquareSums<emu::Memory>;
  std::vector<emu::Buffer<float>> buffers;
  buffers.reserve(grads.size());
  for (const torch::Tensor& g : grads) buffers.emplace_back("grad", values_of<float>(g));
  std::vector<Sums> launches(2);
  for (Sums& k : launches) k.tensors.runs = runs;
  int64_t run_partials = 0;
  for (size_t t = 0; t < sizes.size(); ++t) {
    launches[t < Sums::kTensors ? 0 : 1].add(sizes[t], buffers[t].in());
    run_partials += decltype(Sums::tensors)::blocks_of(sizes[t]);
  }
  launches[1].first_partial = launches[0].blocks() / runs;
  emu::Buffer<float> partials("partials", static_cast<size_t>(runs * run_partials));
  emu::Log log;
  for (Sums& k : launches) {
    k.partials = partials.out();
    k.run_partials = run_partials;
    emu::run(k, log);
  }
  partials.check_written(log);
  emu::Buffer<float> summed("partials", partials.data()), loss("loss", losses),
      in("scalars", scalars), out("scalars'", scalars), loss_kept("loss'", runs),
      norm_kept("norm'", runs);
  std::vector<int64_t> steps;
  for (int64_t r = 0; r < runs; ++r) steps.push_back(first_step + r);  // run r's step number
  emu::Buffer<int64_t> step("step", steps), verdict("verdict", verdicts),
      verdict_out("verdict'", verdicts.size());
  const grid::EndStep<emu::Memory> end{
      0.25f,        run_partials, loss.in(),       summed.in(),     in.in(),           step.in(),
      verdict.in(), out.out(),    loss_kept.out(), norm_kept.out(), verdict_out.out(), runs};
  emu::run(end, log);
  for (const auto* b : {&loss_kept, &norm_kept}) b->check_written(log);
  verdict_out.check_written(log);
  EXPECT_TRUE(log.ok()) << log.summary();
  return {out.data(), loss_kept.data(), norm_kept.data(), verdict_out.data()};
}

TEST(StepEndRunsEmulated, EachRunsNormClipAndVerdictAreItsOwn) {
  using Sums = grid::SquareSums<emu::Memory>;
  torch::manual_seed(42);
  std::vector<int64_t> sizes = {1, Sums::kPerBlock, Sums::kPerBlock + 1, 3 * Sums::kPerBlock + 77};
  while (sizes.size() < Sums::kTensors + 3) sizes.push_back(static_cast<int64_t>(sizes.size()) * 5);
  std::vector<torch::Tensor> grads;
  for (const int64_t n : sizes) grads.push_back(torch::randn({kRuns * n}) * 0.1);
  // Run 1's loss is not finite: its step is recorded bad and not applied, the others are.
  const std::vector<float> losses = {0.5f, NAN, 2.0f};
  std::vector<float> scalars(kRuns * kAdamWStepScalarCount, 3.0f);
  for (int64_t r = 0; r < kRuns; ++r) scalars[r * kAdamWStepScalarCount + kApplyScalar] = 1.0f;
  const std::vector<int64_t> verdicts(kRuns * kStepVerdictCount, 0);
  const End pack = run_end(grads, sizes, losses, scalars, verdicts, kRuns, 100);
  for (int64_t r = 0; r < kRuns; ++r) {
    SCOPED_TRACE("run " + std::to_string(r));
    std::vector<torch::Tensor> own;
    for (size_t t = 0; t < sizes.size(); ++t)
      own.push_back(grads[t].narrow(0, r * sizes[t], sizes[t]));
    const auto at = [&](const auto& v, int64_t n) {
      return std::vector<typename std::decay_t<decltype(v)>::value_type>(v.begin() + r * n,
                                                                         v.begin() + (r + 1) * n);
    };
    const End alone = run_end(own, sizes, {losses[r]}, at(scalars, kAdamWStepScalarCount),
                              at(verdicts, kStepVerdictCount), 1, 100 + r);
    EXPECT_EQ(at(pack.scalars, kAdamWStepScalarCount), alone.scalars);
    EXPECT_EQ(at(pack.verdict, kStepVerdictCount), alone.verdict);
    EXPECT_EQ(pack.norm[r], alone.norm[0]);
  }
  EXPECT_EQ(pack.verdict[kStepVerdictCount + kFirstBadStep], 101);
  EXPECT_EQ(pack.scalars[kAdamWStepScalarCount + kApplyScalar], 0.0f);
  EXPECT_EQ(pack.scalars[kApplyScalar], 1.0f);
}

// AdamW over tensors of a pack's runs, each run's slices stepped with its own scalars (run 2's
// step not applied): each as that run's slices alone.
TEST(StepEndRunsEmulated, EachRunsAdamWStepIsItsOwn) {
  torch::manual_seed(43);
  const std::vector<int64_t> sizes = {1, 255, 257, 1000};
  std::vector<AdamWStepScalars> scalars;
  for (int64_t r = 0; r < kRuns; ++r) {
    const float f = 1.0f + 0.1f * static_cast<float>(r);
    scalars.push_back({{0.9999f, 0.9f, 0.999f, 0.1f, 0.001f, 1.3f * f, 1e-8f, 2e-3f * f},
                       0.5f * f,
                       r == 2 ? 0.0f : 1.0f});
  }
  // Per tensor: p, g, m, v in, p', m', v' out (poisoned: run 2's must stay so).
  const auto step = [&](const std::vector<std::vector<torch::Tensor>>& in, int64_t runs,
                        const AdamWStepScalars* s) {
    std::vector<std::vector<emu::Buffer<float>>> b(in.size());
    grid::AdamWStep<emu::Memory> k{AdamWUpdate{}, s};
    k.tensors.runs = runs;
    for (size_t t = 0; t < in.size(); ++t) {
      b[t].reserve(7);
      for (const torch::Tensor& x : in[t]) b[t].emplace_back("in", values_of<float>(x));
      for (int j = 0; j < 3; ++j) b[t].emplace_back("out", static_cast<size_t>(in[t][0].numel()));
      k.add(in[t][0].numel() / runs, b[t][0].in(), b[t][1].in(), b[t][2].in(), b[t][3].in(),
            b[t][4].out(), b[t][5].out(), b[t][6].out());
    }
    emu::Log log;
    emu::run(k, log);
    EXPECT_TRUE(log.ok()) << log.summary();
    std::vector<std::vector<std::vector<float>>> out(in.size());
    for (size_t t = 0; t < in.size(); ++t) {
      for (int j = 4; j < 7; ++j) out[t].push_back(b[t][j].data());
    }
    return out;
  };
  std::vector<std::vector<torch::Tensor>> tensors;
  for (const int64_t n : sizes) {
    tensors.push_back({torch::randn({kRuns * n}), torch::randn({kRuns * n}),
                       torch::randn({kRuns * n}) * 0.1, torch::rand({kRuns * n}) * 0.01});
  }
  const auto pack = step(tensors, kRuns, scalars.data());
  for (int64_t r = 0; r < kRuns; ++r) {
    SCOPED_TRACE("run " + std::to_string(r));
    std::vector<std::vector<torch::Tensor>> own;
    for (size_t t = 0; t < sizes.size(); ++t) {
      own.emplace_back();
      for (const torch::Tensor& x : tensors[t])
        own.back().push_back(x.narrow(0, r * sizes[t], sizes[t]));
    }
    const auto alone = step(own, 1, &scalars[r]);
    for (size_t t = 0; t < sizes.size(); ++t) {
      for (int j = 0; j < 3; ++j) {
        const std::vector<float> mine = part(pack[t][j], r), theirs = alone[t][j];
        // Where the step is not applied both stay poisoned (NaN, which == cannot compare).
        EXPECT_EQ(
            torch::equal(torch::tensor(mine).nan_to_num(7), torch::tensor(theirs).nan_to_num(7)),
            true)
            << "tensor " << t << " output " << j;
      }
    }
  }
}

}  // namespace
}  // namespace minrnn::core
