// A pack's runs stacked as one model (ops/run_axis.h): P decision models of one shape, each from
// its own seed, stacked into one whose parameters have a leading axis of P, against the P models
// themselves: the stacked forward in training (every dropout on, each run's seeds its own) gives
// each run's actions, and its backward each run's gradients, to the bit; a run's parameters copy
// back out as they went in; what cannot be stacked is refused by name.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <string>
#include <vector>

#include "ops/dropout.h"
#include "ops/run_axis.h"
#include "rl/decision_model.h"

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

void expect_pack_is_its_runs(const DecisionModelOptions& o) {
  SCOPED_TRACE(o.backbone + ", expansion " + std::to_string(o.expansion));
  std::vector<DecisionModel> runs;
  std::vector<const torch::nn::Module*> views;
  for (int64_t r = 0; r < kRuns; ++r) {
    torch::manual_seed(100 + r);
    runs.emplace_back(o);
    runs.back()->train();
    views.push_back(runs.back().get());
  }
  DecisionModel pack(o);
  core::stack_runs(*pack, views);
  pack->train();
  torch::manual_seed(7);
  const DecisionBatch batch = batch_of(o, kRuns * kBatch);
  const torch::Tensor bases = dropout_bases();

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
    EXPECT_TRUE(torch::equal(core::run_rows(packed, kRuns, r), alone));
    for (const auto& named : runs[r]->named_parameters()) {
      const torch::Tensor stacked_grad = pack->named_parameters()[named.key()].grad();
      ASSERT_TRUE(named.value().grad().defined()) << named.key();
      EXPECT_TRUE(torch::equal(stacked_grad[r], named.value().grad())) << named.key();
    }
  }
  // Dropout was on: the same batch under other seeds gives other actions.
  {
    const core::DropoutSeeds seeds(bases + 1);
    EXPECT_FALSE(torch::equal(pack->forward(batch), packed));
  }
  DecisionModel out(o);
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
