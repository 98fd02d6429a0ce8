// A pack's runs stacked as one model (ops/run_axis.h): P decision models of one shape, each from
// its own seed, stacked into one whose parameters have a leading axis of P, against the P models
// themselves: the stacked forward in training (every dropout on, each run's seeds its own) gives
// each run's actions, and its backward each run's gradients — to the bit where the ops take the
// runs one at a time (the CPU), to rounding in their batched passes (CUDA, and the CPU when a
// test asks: batched_runs); a run's parameters copy back out as they went in; what cannot be
// stacked is refused by name.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "ops/affine.h"
#include "ops/dropout.h"
#include "ops/run_axis.h"
#include "rl/decision_model.h"
#include "tests/scoped_env.h"
#include "tests/tensor_compare.h"

namespace minrnn::rl {
namespace {

constexpr int64_t kRuns = 3, kBatch = 4, kContext = 5;

DecisionModelOptions options_of(const std::string& backbone, double expansion = 1.0) {
  DecisionModelOptions o;
  o.obs_dim = 11;
  o.act_dim = 3;
  o.backbone = backbone;
  o.n_layers = 2;
  o.embed_dim = 16;
  o.n_heads = backbone == "transformer" ? 2 : 1;
  o.expansion = expansion;
  o.dropout = 0.3;
  o.max_ep_len = 50;
  return o;
}

DecisionBatch batch_of(const DecisionModelOptions& o, int64_t rows) {
  return {torch::randn({rows, kContext, 1}), torch::randn({rows, kContext, o.obs_dim}),
          torch::randn({rows, kContext, o.act_dim}),
          torch::randint(0, o.max_ep_len + 5, {rows, kContext}, torch::kLong)};
}

DecisionBatch run_rows_of(const DecisionBatch& b, int64_t run) {
  return {core::run_rows(b.returns_to_go, kRuns, run), core::run_rows(b.states, kRuns, run),
          core::run_rows(b.actions, kRuns, run), core::run_rows(b.timesteps, kRuns, run)};
}

// The runs' dropout bases: what each run's trainer's step would hand its scope.
torch::Tensor dropout_bases() {
  return torch::tensor({int64_t{11}, int64_t{2026}, int64_t{987654321}}, torch::kLong);
}

// Batched passes on the CPU for the scope's life (ops/run_axis.h).
class BatchedOnCpu {
 public:
  BatchedOnCpu() { core::set_batched_runs_on_cpu(true); }
  ~BatchedOnCpu() { core::set_batched_runs_on_cpu(false); }
  BatchedOnCpu(const BatchedOnCpu&) = delete;
  BatchedOnCpu& operator=(const BatchedOnCpu&) = delete;
};

// Equal to the bit, or within `tolerance` (relative to the largest magnitude) where > 0.
bool same(const torch::Tensor& got, const torch::Tensor& want, double tolerance) {
  if (tolerance == 0) return torch::equal(got, want);
  return testing::rel_err(got, want.to(torch::kCPU, torch::kDouble)) < tolerance;
}

DecisionBatch on(const DecisionBatch& b, const torch::Device& device) {
  return {b.returns_to_go.to(device), b.states.to(device), b.actions.to(device),
          b.timesteps.to(device)};
}

void expect_pack_is_its_runs(const DecisionModelOptions& o,
                             const torch::Device& device = torch::kCPU, double tolerance = 0) {
  SCOPED_TRACE(o.backbone + ", expansion " + std::to_string(o.expansion) + " on " + device.str());
  std::vector<DecisionModel> runs;
  std::vector<const torch::nn::Module*> views;
  for (int64_t r = 0; r < kRuns; ++r) {
    torch::manual_seed(100 + r);
    runs.emplace_back(o);
    runs.back()->to(device);
    runs.back()->train();
    views.push_back(runs.back().get());
  }
  DecisionModel pack(o);
  pack->to(device);
  core::stack_runs(*pack, views);
  pack->train();
  torch::manual_seed(7);
  const DecisionBatch batch = on(batch_of(o, kRuns * kBatch), device);
  const torch::Tensor bases = dropout_bases().to(device);

  torch::Tensor packed;
  {
    const core::DropoutSeeds seeds(bases);
    packed = pack->forward(batch);
  }
  (packed * packed).sum().backward();
  for (int64_t r = 0; r < kRuns; ++r) {
    SCOPED_TRACE("run " + std::to_string(r));
    torch::Tensor alone;
    {
      const core::DropoutSeeds seeds(bases.narrow(0, r, 1));
      alone = runs[r]->forward(run_rows_of(batch, r));
    }
    (alone * alone).sum().backward();
    EXPECT_TRUE(same(core::run_rows(packed, kRuns, r), alone, tolerance));
    for (const auto& named : runs[r]->named_parameters()) {
      const torch::Tensor stacked_grad = pack->named_parameters()[named.key()].grad();
      ASSERT_TRUE(named.value().grad().defined()) << named.key();
      EXPECT_TRUE(same(stacked_grad[r], named.value().grad(), tolerance)) << named.key();
    }
  }
  // Dropout was on: the same batch under other seeds gives other actions.
  {
    const core::DropoutSeeds seeds(bases + 1);
    EXPECT_FALSE(torch::equal(pack->forward(batch), packed));
  }
  DecisionModel out(o);
  out->to(device);
  core::copy_run(*pack, 1, *out);
  for (const auto& named : runs[1]->named_parameters()) {
    EXPECT_TRUE(torch::equal(out->named_parameters()[named.key()], named.value())) << named.key();
  }
}

TEST(StackedRuns, EachRunOfThePackIsThatRunAlone) {
  expect_pack_is_its_runs(options_of("mingru"));
  expect_pack_is_its_runs(options_of("minlstm", 2.0));  // with the down projection
  expect_pack_is_its_runs(options_of("transformer"));
}

// The batched passes (one product for all runs, each run's bias and gradient sums its own), run
// on the CPU: each run's actions and gradients to float32 rounding.
TEST(StackedRuns, BatchedPassesGiveEachRunItsOwn) {
  const BatchedOnCpu batched;
  expect_pack_is_its_runs(options_of("mingru"), torch::kCPU, 1e-5);
  expect_pack_is_its_runs(options_of("minlstm", 2.0), torch::kCPU, 1e-5);
  expect_pack_is_its_runs(options_of("transformer"), torch::kCPU, 1e-5);
}

TEST(StackedRunsCuda, BatchedPassesGiveEachRunItsOwn) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA GPU visible";
  expect_pack_is_its_runs(options_of("mingru"), torch::kCUDA, 1e-4);
  expect_pack_is_its_runs(options_of("minlstm", 2.0), torch::kCUDA, 1e-4);
  expect_pack_is_its_runs(options_of("transformer"), torch::kCUDA, 1e-4);
}

// MINRNN_STACKED_BIAS (ops/affine.h): the stacked products' biases added after them (add, the
// default) or copied in first (gemm): each run's actions and gradients its own either way; a
// value of another name is refused naming the variable.
TEST(StackedRuns, BiasesAddedEitherWayGiveEachRunItsOwn) {
  const BatchedOnCpu batched;
  EXPECT_TRUE(core::stacked_bias_after_product());
  for (const bool after : {false, true}) {
    const testing::ScopedEnv bias("MINRNN_STACKED_BIAS", after ? "add" : "gemm");
    EXPECT_EQ(core::stacked_bias_after_product(), after);
    expect_pack_is_its_runs(options_of("mingru"), torch::kCPU, 1e-5);
    expect_pack_is_its_runs(options_of("transformer"), torch::kCPU, 1e-5);
  }
  const testing::ScopedEnv wrong("MINRNN_STACKED_BIAS", "later");
  try {
    core::stacked_bias_after_product();
    ADD_FAILURE() << "MINRNN_STACKED_BIAS=later was taken";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("MINRNN_STACKED_BIAS=later"), std::string::npos)
        << e.what();
  }
}

// The stacked products LibTorch's (MINRNN_STACKED_GEMM=cublas, where the default is cuBLASLt's
// tuned ones), their biases added after them or copied in first: each run's still its own.
TEST(StackedRunsCuda, LibTorchsProductsGiveEachRunItsOwn) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA GPU visible";
  const testing::ScopedEnv libtorch("MINRNN_STACKED_GEMM", "cublas");
  for (const char* bias : {"add", "gemm"}) {
    const testing::ScopedEnv added("MINRNN_STACKED_BIAS", bias);
    expect_pack_is_its_runs(options_of("mingru"), torch::kCUDA, 1e-4);
    expect_pack_is_its_runs(options_of("transformer"), torch::kCUDA, 1e-4);
  }
}

TEST(StackedRuns, WhatCannotBeStackedIsRefused) {
  const DecisionModelOptions o = options_of("mingru");
  torch::manual_seed(0);
  DecisionModel a(o), pack(o);
  DecisionModel wider(options_of("mingru", 2.0));
  EXPECT_THROW(core::stack_runs(*pack, {a.get(), wider.get()}), std::invalid_argument);
  EXPECT_THROW(core::stack_runs(*pack, {}), std::invalid_argument);
  core::stack_runs(*pack, {a.get(), a.get()});
  DecisionModel out(o);
  EXPECT_THROW(core::copy_run(*pack, 2, *out), std::invalid_argument);
  // A pack's dropout scope of another number of runs than the model's, and a dropout under the
  // pack's scope itself.
  pack->train();
  {
    const core::DropoutSeeds seeds(dropout_bases());
    EXPECT_THROW(pack->forward(batch_of(o, 2 * kBatch)), std::invalid_argument);
    EXPECT_THROW(core::fused_dropout(torch::ones({4}), 0.5, true), std::logic_error);
  }
  EXPECT_THROW(core::stacked_runs(torch::zeros({2, 3, 4, 5}), 2, "w"), std::invalid_argument);
  EXPECT_THROW(core::run_rows(torch::zeros({5, 2}), 2, 0), std::invalid_argument);
}

}  // namespace
}  // namespace minrnn::rl
