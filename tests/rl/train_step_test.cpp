// rl::TrainStep (rl/train_step.h): the step that reads nothing back from the device. On the CPU,
// against the same step written the plain way (LibTorch's clip_grad_norm_, which reads the norm
// back, and FusedAdamW's host-side step, itself checked against LibTorch's AdamW in
// tests/ops/fused_adamw_test.cpp); a non-finite step changing nothing. On CUDA (label cuda; they
// skip without a GPU): the replayed graph against the eager step, the learning rate of the warm-up,
// the dropout masks changing between replays, and each step's batch its own while the host runs
// ahead.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <functional>
#include <vector>

#include "datasets/sampler.h"
#include "ops/dropout.h"
#include "ops/fused_adamw.h"
#include "ops/side_work.h"
#include "rl/stacked_pack.h"
#include "rl/train_step.h"
#include "tests/aten_calls.h"
#include "tests/rl/step_fixtures.h"

namespace minrnn::rl {
namespace {

using testing::adamw_options;
using testing::batch_at;
using testing::kAct;
using testing::kObs;
using testing::make_agent;
using testing::warmup_lr;

// The step as it was written before TrainStep: tensors from the batch, LibTorch's clip, the
// optimizer's host-side step.
double reference_step(Agent& agent, core::FusedAdamW& adamw, const data::SequenceBatch& b,
                      uint64_t dropout_base) {
  const int64_t B = b.batch_size, K = b.context_len;
  auto wrap = [](const std::vector<float>& v, std::vector<int64_t> shape) {
    return torch::from_blob(const_cast<float*>(v.data()), shape, torch::kFloat).clone();
  };
  DecisionBatch db;
  db.states = wrap(b.states, {B, K, kObs});
  db.actions = wrap(b.actions, {B, K, kAct});
  db.returns_to_go = wrap(b.returns_to_go, {B, K, 1}) / agent.config.return_scale;
  db.timesteps =
      torch::from_blob(const_cast<int64_t*>(b.timesteps.data()), {B, K}, torch::kInt64).clone();
  const torch::Tensor mask = wrap(b.mask, {B, K});
  for (auto& group : adamw.param_groups())
    static_cast<torch::optim::AdamWOptions&>(group.options()).lr(warmup_lr(agent, agent.step));
  core::DropoutSeeds seeds(dropout_base);
  agent.model->train();
  const auto loss = masked_action_loss(agent.model->forward(db), db.actions, mask);
  adamw.zero_grad();
  loss.backward();
  torch::nn::utils::clip_grad_norm_(agent.model->parameters(), agent.config.grad_clip);
  adamw.step();
  ++agent.step;
  return loss.item<double>();
}

double max_weight_difference(const Agent& a, const Agent& b) {
  double worst = 0;
  auto pb = b.model->named_parameters();
  for (const auto& p : a.model->named_parameters())
    worst = std::max(worst, (p.value().cpu() - pb[p.key()].cpu()).abs().max().item<double>());
  return worst;
}

TEST(TrainStep, IsThePlainStepThroughTheWarmUp) {
  for (const std::string backbone : {"mingru", "transformer"}) {
    SCOPED_TRACE(backbone);
    Agent ours = make_agent(backbone, torch::kCPU), theirs = make_agent(backbone, torch::kCPU);
    core::FusedAdamW fused(ours.model->parameters(), adamw_options(ours));
    core::FusedAdamW adamw(theirs.model->parameters(), adamw_options(theirs));
    TrainStep step(ours, fused, torch::kCPU, StepMode::kGraph);
    EXPECT_EQ(step.description(), "eager");  // no graph off CUDA
    for (int64_t s = 0; s < 14; ++s) {       // the learning rate grows for 10 of them
      const data::SequenceBatch b = batch_at(s);
      step.run(b, warmup_lr(ours, ours.step), 77 + s);
      const double want = reference_step(theirs, adamw, b, 77 + s);
      EXPECT_EQ(step.last_stats().loss, want) << "step " << s + 1;
    }
    EXPECT_EQ(ours.step, 14);
    EXPECT_EQ(step.failure(), "");
    // The clip folded into the update multiplies each gradient by the same float32 factor.
    EXPECT_EQ(max_weight_difference(ours, theirs), 0.0);
    // a test that passes with no training is no test
    const Agent untrained = make_agent(backbone, torch::kCPU);
    EXPECT_GT(max_weight_difference(ours, untrained), 1e-3);
  }
}

// The backward's seed, each run's loss's gradient of 1, is made once with the step: LibTorch's
// default seed is a ones_like, on CUDA a fill in every replayed step. A pack's too.
TEST(TrainStep, SeedsItsBackwardWithOnesMadeOnce) {
  const auto ones_filled = [](const std::function<void()>& work) {
    return testing::fills_in(work, [](double value) { return value == 1.0; });
  };
  Agent agent = make_agent("mingru", torch::kCPU);
  core::FusedAdamW optimizer(agent.model->parameters(), adamw_options(agent));
  TrainStep step(agent, optimizer, torch::kCPU, StepMode::kGraph);
  step.run(batch_at(0), 1e-4, 1);
  EXPECT_EQ(ones_filled([&] { step.run(batch_at(1), 1e-4, 2); }), 0);

  Agent first = make_agent("mingru", torch::kCPU, 3), second = make_agent("mingru", torch::kCPU, 4);
  core::FusedAdamW first_optimizer(first.model->parameters(), adamw_options(first)),
      second_optimizer(second.model->parameters(), adamw_options(second));
  rl::StackedPack pack({&first, &second}, {&first_optimizer, &second_optimizer}, torch::kCPU,
                       StepMode::kGraph);
  const data::SequenceBatch a = batch_at(0), b = batch_at(0, 1);
  pack.run({&a, &b}, {1e-4, 1e-4}, {1, 2});
  EXPECT_EQ(ones_filled([&] { pack.run({&a, &b}, {1e-4, 1e-4}, {3, 4}); }), 0);
}

// A batch whose returns-to-go overflow float32 makes the loss NaN at step 4: no weight changes then
// or at any later step, and failure() names step 4.
TEST(TrainStep, ANonFiniteStepChangesNothingFromThenOn) {
  Agent agent = make_agent("mingru", torch::kCPU);
  core::FusedAdamW fused(agent.model->parameters(), adamw_options(agent));
  TrainStep step(agent, fused, torch::kCPU, StepMode::kEager);
  for (int64_t s = 0; s < 3; ++s) step.run(batch_at(s), 1e-3, s);
  const Agent snapshot = make_agent("mingru", torch::kCPU);
  {
    torch::NoGradGuard no_grad;
    auto src = agent.model->named_parameters();
    for (auto& p : snapshot.model->named_parameters()) p.value().copy_(src[p.key()]);
  }
  data::SequenceBatch bad = batch_at(3);
  bad.returns_to_go[0] = INFINITY;
  step.run(bad, 1e-3, 3);
  EXPECT_EQ(step.failure(), "step 4: loss is not finite");
  EXPECT_EQ(max_weight_difference(agent, snapshot), 0.0);
  step.run(batch_at(4), 1e-3, 4);
  EXPECT_EQ(step.failure(), "step 4: loss is not finite");
  EXPECT_EQ(max_weight_difference(agent, snapshot), 0.0);
}

// The replayed graph against the same steps run eagerly on the GPU: 20 steps, the graph captured
// after 3 and replayed for the other 17, through a warm-up whose learning rate changes every step
// (LibTorch's AdamW would have frozen it into the graph).
TEST(TrainStepCuda, GraphReplayIsTheEagerStepThroughTheWarmUp) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA GPU visible";
  for (const std::string backbone : {"mingru", "minlstm", "transformer"}) {
    SCOPED_TRACE(backbone);
    Agent graphed = make_agent(backbone, torch::kCUDA), eager = make_agent(backbone, torch::kCUDA);
    graphed.config.warmup_steps = eager.config.warmup_steps = 20;
    core::FusedAdamW og(graphed.model->parameters(), adamw_options(graphed));
    core::FusedAdamW oe(eager.model->parameters(), adamw_options(eager));
    TrainStep sg(graphed, og, torch::kCUDA, StepMode::kGraph);
    TrainStep se(eager, oe, torch::kCUDA, StepMode::kEager);
    for (int64_t s = 0; s < 20; ++s) {
      const data::SequenceBatch b = batch_at(s);
      sg.run(b, warmup_lr(graphed, graphed.step), 500 + s);
      se.run(b, warmup_lr(eager, eager.step), 500 + s);
      EXPECT_NEAR(sg.last_stats().loss, se.last_stats().loss, 1e-5) << "step " << s + 1;
    }
    EXPECT_EQ(sg.description(), "cuda graph");
    // What a replay launches was counted at capture; the eager step has no graph.
    EXPECT_GT(sg.graph_nodes().kernels, 20);
    EXPECT_EQ(se.graph_nodes().total(), 0);
    EXPECT_EQ(sg.failure(), "");
    EXPECT_LT(max_weight_difference(graphed, eager), 1e-5);
  }
}

// Each step reads the batch it was given while the host queues steps ahead of the device: the GPU
// held by long products first, 12 steps queued with nothing read back between them (each batch
// landing beside the earlier steps' kernels, core::HostUpload, each landing block read before the
// next lands), against the same steps read back one at a time. Graphed and eager.
TEST(TrainStepCuda, EachStepReadsItsOwnBatchWhileTheHostRunsAhead) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA GPU visible";
  for (const StepMode mode : {StepMode::kGraph, StepMode::kEager}) {
    SCOPED_TRACE(mode == StepMode::kGraph ? "graph" : "eager");
    Agent ahead = make_agent("mingru", torch::kCUDA), in_turn = make_agent("mingru", torch::kCUDA);
    core::FusedAdamW oa(ahead.model->parameters(), adamw_options(ahead));
    core::FusedAdamW ot(in_turn.model->parameters(), adamw_options(in_turn));
    TrainStep sa(ahead, oa, torch::kCUDA, mode), st(in_turn, ot, torch::kCUDA, mode);
    const torch::Tensor busy = torch::randn({4096, 4096}, torch::kCUDA);
    for (int i = 0; i < 8; ++i) busy.mm(busy);  // ~20 ms of the device's while the host queues
    for (int64_t s = 0; s < 12; ++s) sa.run(batch_at(s), warmup_lr(ahead, ahead.step), 900 + s);
    for (int64_t s = 0; s < 12; ++s) {
      st.run(batch_at(s), warmup_lr(in_turn, in_turn.step), 900 + s);
      st.last_stats();  // read back: the host waits for the step
    }
    EXPECT_NEAR(sa.last_stats().loss, st.last_stats().loss, 1e-6);
    EXPECT_LT(max_weight_difference(ahead, in_turn), 1e-6);
    EXPECT_GT(max_weight_difference(ahead, make_agent("mingru", torch::kCUDA)), 1e-4);
  }
}

// The same batch replayed with the same dropout base gives the same loss, with another base
// another: the masks are drawn anew on every replay, not frozen at capture.
TEST(TrainStepCuda, DropoutMasksChangeBetweenReplays) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA GPU visible";
  Agent agent = make_agent("mingru", torch::kCUDA);
  core::FusedAdamW fused(agent.model->parameters(), adamw_options(agent));
  TrainStep step(agent, fused, torch::kCUDA, StepMode::kGraph);
  const data::SequenceBatch b = batch_at(0);
  for (int64_t s = 0; s < 4; ++s) step.run(b, 0.0, s);  // lr 0: the weights stay
  ASSERT_EQ(step.description(), "cuda graph");
  std::vector<double> losses;
  for (uint64_t base : {11u, 11u, 12u}) {
    step.run(b, 0.0, base);
    losses.push_back(step.last_stats().loss);
  }
  EXPECT_EQ(losses[0], losses[1]);
  EXPECT_NE(losses[0], losses[2]);
}

// The weight and bias gradients queued on a side stream beside the backward (ops/side_work.h)
// change where the kernels run, not what they compute: the same losses and weights as the step on
// one stream, replayed and eager.
TEST(TrainStepCuda, SideWorkGivesTheOneStreamStepsWeights) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA GPU visible";
  for (const StepMode mode : {StepMode::kGraph, StepMode::kEager}) {
    for (const std::string backbone : {"mingru", "transformer"}) {
      SCOPED_TRACE(backbone + (mode == StepMode::kGraph ? ", graph" : ", eager"));
      Agent beside = make_agent(backbone, torch::kCUDA), alone = make_agent(backbone, torch::kCUDA);
      core::FusedAdamW ob(beside.model->parameters(), adamw_options(beside));
      core::FusedAdamW oa(alone.model->parameters(), adamw_options(alone));
      TrainStep sb(beside, ob, torch::kCUDA, mode), sa(alone, oa, torch::kCUDA, mode);
      for (int64_t s = 0; s < 12; ++s) {
        const data::SequenceBatch b = batch_at(s);
        core::set_side_work(true);
        sb.run(b, 1e-3, 900 + s);
        core::set_side_work(false);
        sa.run(b, 1e-3, 900 + s);
        EXPECT_NEAR(sb.last_stats().loss, sa.last_stats().loss, 1e-6) << "step " << s + 1;
      }
      EXPECT_EQ(sb.description(), mode == StepMode::kGraph ? "cuda graph" : "eager");
      EXPECT_LT(max_weight_difference(beside, alone), 1e-6);
    }
  }
}

}  // namespace
}  // namespace minrnn::rl
