// The optimizer's kernels (kernels/cuda/pointwise_programs.h, step_end_programs.h) run by the host
// emulator (tests/kernels/grid_emulator.h): AdamW's step of several tensors in one launch against
// each alone and against float64, its values read from memory as a replayed graph reads them; the
// gradients' global norm summed in blocks; and a training step's end (the clip's scale, the apply
// flag, the first bad step).
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <array>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "kernels/cuda/pointwise_programs.h"
#include "kernels/cuda/step_end_programs.h"
#include "kernels/math/adamw_math.h"
#include "tests/kernels/grid_emulator.h"
#include "tests/tensor_compare.h"

namespace minrnn::core {
namespace {

namespace emu = minrnn::testing::emu;
using minrnn::testing::values_of;

struct AdamWOutputs {
  torch::Tensor p, m, v;
  bool ok;
  std::string log;
};

// The kernel's step over p, g, m, v into fresh outputs (poisoned); expect_written: every element.
AdamWOutputs run_adamw(const torch::Tensor& p, const torch::Tensor& g, const torch::Tensor& m,
                       const torch::Tensor& v, const AdamWUpdate& u,
                       const AdamWStepScalars* scalars, bool expect_written = true) {
  const int64_t n = p.numel();
  emu::Log log;
  emu::Buffer<float> p_in("p", values_of<float>(p)), g_in("g", values_of<float>(g)),
      m_in("m", values_of<float>(m)), v_in("v", values_of<float>(v)), p_out("p'", n),
      m_out("m'", n), v_out("v'", n);
  grid::AdamWStep<emu::Memory> k{u, scalars};
  k.add(n, p_in.in(), g_in.in(), m_in.in(), v_in.in(), p_out.out(), m_out.out(), v_out.out());
  emu::run(k, log);
  if (expect_written) {
    p_out.check_written(log);
    m_out.check_written(log);
    v_out.check_written(log);
  }
  auto as_tensor = [&](const emu::Buffer<float>& b) {
    return torch::from_blob(const_cast<float*>(b.data().data()), {n}, torch::kFloat).clone();
  };
  return {as_tensor(p_out), as_tensor(m_out), as_tensor(v_out), log.ok(), log.summary()};
}

// Several tensors in one launch, sized around the block boundaries (and one empty): each ends as
// it does alone, every element of each written once and nothing outside them touched.
TEST(AdamWEmulated, AdamWStepOfSeveralTensorsIsEachAlone) {
  torch::manual_seed(10);
  const AdamWUpdate u{0.9999f, 0.9f, 0.999f, 0.1f, 0.001f, 1.3f, 1e-8f, 2e-3f};
  const std::vector<int64_t> sizes = {1, 255, 256, 0, 257, 1000, 3};
  std::vector<std::vector<emu::Buffer<float>>> buffers;  // per tensor: p, g, m, v, p', m', v'
  grid::AdamWStep<emu::Memory> k{u, nullptr};
  std::vector<std::array<torch::Tensor, 4>> inputs;
  for (int64_t n : sizes) {
    const torch::Tensor p = torch::randn({n}), g = torch::randn({n}), m = torch::randn({n}) * 0.1,
                        v = torch::rand({n}) * 0.01;
    inputs.push_back({p, g, m, v});
    auto& b = buffers.emplace_back();
    b.reserve(7);  // the program keeps pointers to them
    b.emplace_back("p", values_of<float>(p));
    b.emplace_back("g", values_of<float>(g));
    b.emplace_back("m", values_of<float>(m));
    b.emplace_back("v", values_of<float>(v));
    b.emplace_back("p'", n);
    b.emplace_back("m'", n);
    b.emplace_back("v'", n);
  }
  for (size_t t = 0; t < sizes.size(); ++t) {
    auto& b = buffers[t];
    k.add(sizes[t], b[0].in(), b[1].in(), b[2].in(), b[3].in(), b[4].out(), b[5].out(), b[6].out());
  }
  emu::Log log;
  emu::run(k, log);
  for (size_t t = 0; t < sizes.size(); ++t) {
    for (int j = 4; j < 7; ++j) buffers[t][j].check_written(log);
  }
  ASSERT_TRUE(log.ok()) << log.summary();
  for (size_t t = 0; t < sizes.size(); ++t) {
    SCOPED_TRACE("tensor " + std::to_string(t) + " of " + std::to_string(sizes[t]));
    const auto& [p, g, m, v] = inputs[t];
    const AdamWOutputs alone = run_adamw(p, g, m, v, u, nullptr);
    ASSERT_TRUE(alone.ok) << alone.log;
    const int64_t n = sizes[t];
    auto got = [&](int j) {
      return torch::from_blob(const_cast<float*>(buffers[t][j].data().data()), {n}, torch::kFloat);
    };
    EXPECT_TRUE(torch::equal(got(4), alone.p));
    EXPECT_TRUE(torch::equal(got(5), alone.m));
    EXPECT_TRUE(torch::equal(got(6), alone.v));
  }
}

// One AdamW step of the kernel against the update written out in float64.
TEST(AdamWEmulated, AdamWStepMatchesFloat64) {
  torch::manual_seed(8);
  const int64_t n = 1000;
  const torch::Tensor p = torch::randn({n}), g = torch::randn({n}), m = torch::randn({n}) * 0.1,
                      v = torch::rand({n}) * 0.01;
  const double lr = 1e-3, wd = 0.1, b1 = 0.9, b2 = 0.99, eps = 1e-8, step = 3;
  const double bc1 = 1 - std::pow(b1, step), bc2 = 1 - std::pow(b2, step);
  const AdamWUpdate u{float(1 - lr * wd), float(b1),      float(b2),
                      float(1 - b1),      float(1 - b2),  float(1 / std::sqrt(bc2)),
                      float(eps),         float(lr / bc1)};
  const AdamWOutputs out = run_adamw(p, g, m, v, u, nullptr);
  ASSERT_TRUE(out.ok) << out.log;
  const torch::Tensor pd = p.to(torch::kDouble), gd = g.to(torch::kDouble);
  const torch::Tensor md = m.to(torch::kDouble) * b1 + (1 - b1) * gd;
  const torch::Tensor vd = v.to(torch::kDouble) * b2 + (1 - b2) * gd * gd;
  const torch::Tensor want =
      pd * (1 - lr * wd) - (lr / bc1) * md / (vd.sqrt() / std::sqrt(bc2) + eps);
  EXPECT_LT((out.m.to(torch::kDouble) - md).abs().max().item<double>(), 1e-6);
  EXPECT_LT((out.v.to(torch::kDouble) - vd).abs().max().item<double>(), 1e-7);
  EXPECT_LT((out.p.to(torch::kDouble) - want).abs().max().item<double>(), 1e-5);
  // and it moved every parameter: a test that would pass on p' = p is no test
  EXPECT_GT((out.p.to(torch::kDouble) - pd).abs().min().item<double>(), 0.0);
}

// The step as a replayed graph runs it: its values read from memory, the gradient scaled by the
// clip's factor there (the same bits as a step on the scaled gradient), and nothing written at all
// once `apply` is 0.
TEST(AdamWEmulated, AdamWStepReadsItsValuesFromMemory) {
  torch::manual_seed(9);
  const int64_t n = 777;
  const torch::Tensor p = torch::randn({n}), g = torch::randn({n}), m = torch::randn({n}) * 0.1,
                      v = torch::rand({n}) * 0.01;
  const AdamWUpdate u{0.9999f, 0.9f, 0.999f, 0.1f, 0.001f, 1.3f, 1e-8f, 2e-3f};
  const AdamWUpdate unused{1, 0, 0, 0, 0, 0, 0, 0};
  const AdamWStepScalars scaled{u, 0.25f, 1.0f};
  const AdamWOutputs want = run_adamw(p, g * 0.25f, m, v, u, nullptr);
  const AdamWOutputs got = run_adamw(p, g, m, v, unused, &scaled);
  ASSERT_TRUE(want.ok && got.ok) << want.log << got.log;
  EXPECT_TRUE(torch::equal(got.p, want.p));
  EXPECT_TRUE(torch::equal(got.m, want.m));
  EXPECT_TRUE(torch::equal(got.v, want.v));
  EXPECT_FALSE(torch::equal(got.p, p));

  const AdamWStepScalars skipped{u, 1.0f, 0.0f};
  const AdamWOutputs none = run_adamw(p, g, m, v, unused, &skipped, /*expect_written=*/false);
  EXPECT_TRUE(none.ok) << none.log;
  // the outputs still hold the emulator's poison (NaN): not one element written
  EXPECT_TRUE(torch::isnan(none.p).all().item<bool>());
  EXPECT_TRUE(torch::isnan(none.m).all().item<bool>() && torch::isnan(none.v).all().item<bool>());
}

// The gradients' squares summed a block at a time (SquareSums, two launches as the host splits
// more than kTensors tensors), then one block's EndStep: the global norm against float64, with
// tensors of one element, of a block and one more, of several blocks, and one of more blocks than
// EndStep has threads (a minRNN agent's ~330 partials: each thread sums several).
TEST(AdamWEmulated, TheGlobalGradientNormIsTheSquaresSummedInBlocks) {
  using Sums = grid::SquareSums<emu::Memory>;
  torch::manual_seed(10);
  std::vector<int64_t> sizes = {1, Sums::kPerBlock, Sums::kPerBlock + 1, 3 * Sums::kPerBlock + 77,
                                300 * Sums::kPerBlock + 5};
  while (sizes.size() < Sums::kTensors + 3) sizes.push_back(static_cast<int64_t>(sizes.size()) * 5);
  std::vector<emu::Buffer<float>> grads;
  double want = 0;
  for (const int64_t n : sizes) {
    const torch::Tensor g = torch::randn({n});
    want += g.to(torch::kDouble).pow(2).sum().item<double>();
    grads.emplace_back("grad", values_of<float>(g));
  }
  std::vector<Sums> launches(2);
  for (size_t t = 0; t < sizes.size(); ++t) {
    Sums& k = launches[t < Sums::kTensors ? 0 : 1];
    k.add(sizes[t], grads[t].in());
  }
  launches[1].first_partial = launches[0].blocks();
  const int64_t partial_count = launches[0].blocks() + launches[1].blocks();
  emu::Buffer<float> partials("partials", static_cast<size_t>(partial_count));
  emu::Log log;
  for (Sums& k : launches) {
    k.partials = partials.out();
    emu::run(k, log);
  }
  partials.check_written(log);
  ASSERT_TRUE(log.ok()) << log.summary();

  std::vector<float> scalars(kAdamWStepScalarCount, 0.0f);
  scalars[kApplyScalar] = 1;
  emu::Buffer<float> loss("loss", std::vector<float>{0.5f}), in("scalars", scalars),
      out("scalars'", scalars), loss_kept("loss'", 1), norm_kept("norm'", 1);
  emu::Buffer<int64_t> step("step", std::vector<int64_t>{7}),
      verdict("verdict", std::vector<int64_t>{0, 0}), verdict_out("verdict'", 2);
  emu::Buffer<float> summed("partials", partials.data());
  const grid::EndStep<emu::Memory> end{
      0.25f,        partial_count, loss.in(),       summed.in(),     in.in(),          step.in(),
      verdict.in(), out.out(),     loss_kept.out(), norm_kept.out(), verdict_out.out()};
  emu::Log end_log;
  emu::run(end, end_log);
  norm_kept.check_written(end_log);
  ASSERT_TRUE(end_log.ok()) << end_log.summary();
  const double norm = std::sqrt(want);
  EXPECT_NEAR(norm_kept.data()[0], norm, 1e-5 * norm);
  EXPECT_FLOAT_EQ(out.data()[kGradScaleScalar], 0.25f / (norm_kept.data()[0] + 1e-6f));
}

// The end of a training step (EndStep, kernels/math/adamw_math.h): the clip's scale, the apply
// flag and the first bad step from the norm's square, each case's values written out by hand.
TEST(AdamWEmulated, EndStepScalesClipsAndRecordsTheFirstBadStep) {
  struct Case {
    const char* what;
    float loss, norm, clip, apply;
    float grad_scale, apply_after;
    int64_t first_bad, bad_what;  // the verdict after, from {0, 0} before
  };
  const float inf = INFINITY, nan = NAN;
  const Case cases[] = {
      {"a small norm is not scaled", 0.5f, 0.125f, 0.25f, 1, 1.0f, 1, 0, 0},
      {"a large one is", 0.5f, 2.0f, 0.25f, 1, 0.25f / (2.0f + 1e-6f), 1, 0, 0},
      {"no clip", 0.5f, 0.0f, 0.0f, 1, 1.0f, 1, 0, 0},
      {"a NaN loss", nan, 2.0f, 0.25f, 1, 0.25f / (2.0f + 1e-6f), 0, 7, kBadLoss},
      {"an infinite norm", 0.5f, inf, 0.25f, 1, 0.0f, 0, 7, kBadGradNorm},
      {"after a bad step, nothing more is recorded", nan, nan, 0.25f, 0, nan, 0, 0, 0},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    std::vector<float> scalars(kAdamWStepScalarCount, 3.0f);
    scalars[kApplyScalar] = c.apply;
    using Floats = std::vector<float>;
    using Ints = std::vector<int64_t>;
    // The norm's square as two partial sums (0 and its square); none where nothing clips.
    const int64_t partial_count = c.clip > 0 ? 2 : 0;
    emu::Buffer<float> loss("loss", Floats{c.loss}),
        partials("partials", Floats{0, c.norm * c.norm});
    emu::Buffer<float> in("scalars", scalars);
    emu::Buffer<int64_t> step("step", Ints{7}), verdict("verdict", Ints{0, 0});
    emu::Buffer<float> out("scalars'", scalars), loss_kept("loss'", 1), norm_kept("norm'", 1);
    emu::Buffer<int64_t> verdict_out("verdict'", 2);
    const grid::EndStep<emu::Memory> k{
        c.clip,       partial_count, loss.in(),       partials.in(),   in.in(),          step.in(),
        verdict.in(), out.out(),     loss_kept.out(), norm_kept.out(), verdict_out.out()};
    emu::Log log;
    emu::run(k, log);
    for (const auto* b : {&loss_kept, &norm_kept}) b->check_written(log);
    verdict_out.check_written(log);
    ASSERT_TRUE(log.ok()) << log.summary();
    const float scale = out.data()[kGradScaleScalar];
    EXPECT_TRUE(std::isnan(c.grad_scale) ? std::isnan(scale) : scale == c.grad_scale) << scale;
    EXPECT_EQ(out.data()[kApplyScalar], c.apply_after);
    EXPECT_EQ(out.data()[0], 3.0f);  // the host's update is left alone
    EXPECT_EQ(verdict_out.data(), (std::vector<int64_t>{c.first_bad, c.bad_what}));
    EXPECT_TRUE(std::isnan(c.loss) ? std::isnan(loss_kept.data()[0])
                                   : loss_kept.data()[0] == c.loss);
    EXPECT_TRUE(std::isnan(c.norm) ? std::isnan(norm_kept.data()[0])
                                   : norm_kept.data()[0] == c.norm);
  }
}

}  // namespace
}  // namespace minrnn::core
