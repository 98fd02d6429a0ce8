// rl::StackedPack (rl/stacked_pack.h): P runs trained as one stacked model against the same runs
// trained alone (rl::TrainStep each), on the CPU: after every step each run's weights, AdamW
// moments and count are the lone run's to the bit — runs that stand at different steps, with
// their own batches, learning rates, dropout seeds and return scales, and a run whose
// step is not finite stopping alone. What cannot be stacked is refused by name.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ops/fused_adamw.h"
#include "rl/stacked_pack.h"
#include "rl/train_step.h"
#include "tests/rl/step_fixtures.h"
#include "tests/scoped_env.h"

namespace minrnn::rl {
namespace {

using testing::adamw_options;
using testing::batch_at;
using testing::make_agent;
using testing::warmup_lr;

constexpr int64_t kPackRuns = 3;

// A run as it trains alone, or as a pack's member.
struct Run {
  Agent agent;
  std::unique_ptr<core::FusedAdamW> optimizer;
  std::unique_ptr<TrainStep> step;  // alone only
};

// Run r's own config and weights; run 2 trained alone for two steps first (its checkpoint).
std::vector<Run> make_runs(const std::string& backbone) {
  std::vector<Run> runs(kPackRuns);
  for (int64_t r = 0; r < kPackRuns; ++r) {
    Run& run = runs[r];
    run.agent = make_agent(backbone, torch::kCPU, 40 + r);
    run.agent.config.return_scale = 100.0 * (r + 1);
    run.optimizer =
        std::make_unique<core::FusedAdamW>(run.agent.model->parameters(), adamw_options(run.agent));
    if (r == 2) {
      TrainStep ahead(run.agent, *run.optimizer, torch::kCPU, StepMode::kEager);
      for (int64_t s = 0; s < 2; ++s) ahead.run(batch_at(s, 9), 5e-4, 300 + s);
    }
  }
  return runs;
}

data::SequenceBatch member_batch(int64_t run, int64_t step, int64_t nan_run, int64_t nan_step) {
  data::SequenceBatch b = batch_at(step, run);
  if (run == nan_run && step == nan_step) b.states[7] = std::nanf("");
  return b;
}

uint64_t base_of(int64_t run, int64_t step) {
  return 1000 * run + step;
}

void expect_same_state(Run& alone, Run& packed, const std::string& what) {
  SCOPED_TRACE(what);
  EXPECT_EQ(alone.agent.step, packed.agent.step);
  EXPECT_EQ(alone.optimizer->steps(), packed.optimizer->steps());
  const auto a = alone.agent.model->named_parameters(), p = packed.agent.model->named_parameters();
  for (const auto& named : a) {
    const torch::Tensor& mine = p[named.key()];
    EXPECT_TRUE(torch::equal(mine, named.value())) << named.key();
    EXPECT_TRUE(
        torch::equal(packed.optimizer->exp_avg(mine), alone.optimizer->exp_avg(named.value())))
        << named.key();
    EXPECT_TRUE(torch::equal(packed.optimizer->exp_avg_sq(mine),
                             alone.optimizer->exp_avg_sq(named.value())))
        << named.key();
  }
}

// Five steps of the three runs alone and as one stacked pack; run `nan_run`'s batch at step
// `nan_step` holds a NaN (-1: none).
void expect_pack_trains_each_run_as_alone(const std::string& backbone, int64_t nan_run = -1,
                                          int64_t nan_step = -1) {
  SCOPED_TRACE(backbone);
  std::vector<Run> alone = make_runs(backbone), packed = make_runs(backbone);
  std::vector<Agent*> agents;
  std::vector<core::FusedAdamW*> optimizers;
  for (Run& run : packed) {
    agents.push_back(&run.agent);
    optimizers.push_back(run.optimizer.get());
  }
  StackedPack pack(agents, optimizers, torch::kCPU, StepMode::kGraph);
  for (Run& run : alone) {
    run.step =
        std::make_unique<TrainStep>(run.agent, *run.optimizer, torch::kCPU, StepMode::kEager);
  }
  for (int64_t s = 0; s < 5; ++s) {
    std::vector<data::SequenceBatch> batches;
    std::vector<const data::SequenceBatch*> pointers;
    std::vector<double> lrs;
    std::vector<uint64_t> bases;
    for (int64_t r = 0; r < kPackRuns; ++r) {
      batches.push_back(member_batch(r, s, nan_run, nan_step));
      lrs.push_back(warmup_lr(alone[r].agent, alone[r].agent.step));
      bases.push_back(base_of(r, s));
      alone[r].step->run(batches.back(), lrs.back(), bases.back());
    }
    for (const auto& b : batches) pointers.push_back(&b);
    pack.run(pointers, lrs, bases);
    for (int64_t r = 0; r < kPackRuns; ++r) {
      pack.write_back(r);
      const std::string what = "run " + std::to_string(r) + " after step " + std::to_string(s);
      expect_same_state(alone[r], packed[r], what);
      EXPECT_EQ(pack.failure(r), alone[r].step->failure()) << what;
      const StepStats ours = pack.last_stats(r), theirs = alone[r].step->last_stats();
      const auto same = [](double x, double y) {
        return x == y || (std::isnan(x) && std::isnan(y));
      };
      EXPECT_TRUE(same(ours.loss, theirs.loss)) << what << ": " << ours.loss << " " << theirs.loss;
      EXPECT_TRUE(same(ours.grad_norm, theirs.grad_norm)) << what;
      EXPECT_EQ(ours.lr, theirs.lr) << what;
    }
  }
  if (nan_run >= 0) {
    EXPECT_EQ(pack.failure(nan_run),
              "step " + std::to_string(packed[nan_run].agent.step - 5 + nan_step + 1) +
                  ": loss is not finite");
    for (int64_t r = 0; r < kPackRuns; ++r) {
      if (r == nan_run) continue;
      EXPECT_EQ(pack.failure(r), "") << r;
    }
  }
}

TEST(StackedPack, EachRunTrainsAsItDoesAlone) {
  expect_pack_trains_each_run_as_alone("mingru");
  expect_pack_trains_each_run_as_alone("transformer");
}

TEST(StackedPack, ARunWhoseStepIsNotFiniteStopsAlone) {
  expect_pack_trains_each_run_as_alone("minlstm", 1, 2);
}

TEST(StackedPack, WhatCannotBeStackedIsRefusedByName) {
  Agent a = make_agent("mingru", torch::kCPU), b = make_agent("mingru", torch::kCPU);
  Agent hgrn = make_agent("hgrn", torch::kCPU), other = make_agent("hgrn", torch::kCPU);
  EXPECT_EQ(why_not_stacked({&a, &b}), "");
  EXPECT_EQ(why_not_stacked({&a}), "a stacked pack takes two runs or more");
  EXPECT_NE(why_not_stacked({&hgrn, &other}).find("backbone hgrn"), std::string::npos);
  b.config.batch_size = 7;
  EXPECT_EQ(why_not_stacked({&a, &b}), "run 1 differs from run 0 in its batch_size or context_len");
  core::FusedAdamW oa(a.model->parameters(), adamw_options(a));
  core::FusedAdamW ob(b.model->parameters(), adamw_options(b));
  EXPECT_THROW(StackedPack({&a, &b}, {&oa, &ob}, torch::kCPU, StepMode::kEager),
               std::invalid_argument);
}

// One stacked step for all the runs: its weight gradients go beside its backward as a lone run's do
// (on an H200, 2026-11-30, +1.5 % at P 32), unless MINRNN_SIDE_WORK=0.
TEST(StackedPack, QueuesItsWeightGradientsBesideItsBackwardUnlessAsked) {
  for (const bool off : {false, true}) {
    const testing::ScopedEnv side_work("MINRNN_SIDE_WORK",
                                       off ? std::optional<std::string>("0") : std::nullopt);
    Agent a = make_agent("mingru", torch::kCPU), b = make_agent("mingru", torch::kCPU);
    core::FusedAdamW oa(a.model->parameters(), adamw_options(a));
    core::FusedAdamW ob(b.model->parameters(), adamw_options(b));
    const StackedPack pack({&a, &b}, {&oa, &ob}, torch::kCPU, StepMode::kEager);
    EXPECT_EQ(pack.side_work(), !off);
  }
}

}  // namespace
}  // namespace minrnn::rl
