// Policy (infer/policy.h) refuses what it cannot run — bad input, a checkpoint whose tensors are
// not its config's, a reset past memory, a moved-from policy — and is left as it was.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "infer/policy_engine.h"
#include "io/isolated.h"
#include "rl/checkpoint.h"
#include "rl/trainer.h"
#include "tests/infer/policy_fixtures.h"
#include "tests/rl/fixtures.h"

namespace minrnn {
namespace {

using testing::random_agent;

TEST(Policy, RefusesBadInputAndKeepsItsState) {
  const auto agent = random_agent("mingru", 4, 22);
  rl::Policy policy(agent);
  rl::Policy twin(agent);
  std::vector<double> obs(policy.obs_dim(), 0.1);
  EXPECT_THROW(policy.act(std::vector<double>(policy.obs_dim() + 1, 0.0)), std::invalid_argument);
  auto bad = obs;
  bad[3] = std::nan("");
  try {
    policy.act(bad);
    FAIL() << "a NaN observation was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("index 3"), std::string::npos) << e.what();
  }
  bad[3] = INFINITY;
  EXPECT_THROW(policy.act(bad), std::invalid_argument);
  bad[3] = 1e39;  // finite, but no float: the model would see inf and answer NaN
  EXPECT_THROW(policy.act(bad), std::invalid_argument);
  // A float, but so far from the data that the arithmetic overflowed: NaN actions, and the
  // streaming state NaN for the rest of the episode (a walk, 2026-11-29).
  for (const double refused : {1e38, 3e15}) {  // the stds are 0.5 to 1.5: over 2e15 of them
    bad[3] = refused;
    try {
      policy.act(bad);
      FAIL() << "an observation " << refused << " was accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("standard deviations"), std::string::npos) << e.what();
    }
  }
  bad[3] = 4e14;  // far (under 8e14 of them), but within what the model's arithmetic takes
  for (const double action : rl::Policy(agent).act(bad)) EXPECT_TRUE(std::isfinite(action));
  EXPECT_THROW(policy.observe_reward(NAN), std::invalid_argument);
  EXPECT_THROW(policy.observe_reward(1e300), std::invalid_argument);
  {  // Rewards that take the return-to-go past float's range, one by one.
    rl::Policy far(agent);
    const double huge = 3e38 * agent.config.return_scale;
    far.observe_reward(huge);
    const double rtg = far.return_to_go();
    EXPECT_THROW(far.observe_reward(huge), std::invalid_argument);
    EXPECT_EQ(far.return_to_go(), rtg);
  }
  EXPECT_THROW(policy.observe_reward(std::vector<double>{1, 2}), std::invalid_argument);
  EXPECT_EQ(policy.timestep(), 0);
  // Nothing moved: the same actions as a policy that never saw the bad input.
  for (int t = 0; t < 5; ++t) {
    EXPECT_EQ(policy.act(obs), twin.act(obs));
    policy.observe_reward(1.0);
    twin.observe_reward(1.0);
  }
  EXPECT_THROW(policy.reset(0), std::invalid_argument);
  EXPECT_THROW(policy.reset(int64_t{1} << 40), std::invalid_argument);
  EXPECT_THROW(policy.reset(1, 1e300), std::invalid_argument);
  EXPECT_EQ(policy.timestep(), 5);
  EXPECT_EQ(policy.batch(), 1);
  EXPECT_EQ(policy.act(obs), twin.act(obs));
  EXPECT_THROW(rl::Policy(agent, {rl::EvalMode::kAuto, rl::PolicyEngine::kAuto}).reset(1, INFINITY),
               std::invalid_argument);
  EXPECT_THROW(rl::Policy(random_agent("transformer", 4, 1), {rl::EvalMode::kStreaming}),
               std::invalid_argument);
  EXPECT_THROW(rl::parse_policy_engine("gpu"), std::invalid_argument);
  rl::PolicyOptions negative;
  negative.threads = -1;
  EXPECT_THROW(rl::Policy(agent, negative), std::invalid_argument);
  rl::PolicyOptions too_many;
  too_many.threads = rl::PolicyOptions::kMaxThreads + 1;
  EXPECT_THROW(rl::Policy(agent, too_many), std::invalid_argument);
}

// A checkpoint's tensors are checked against the model its own config builds: LibTorch's reader
// takes any shape, and the packed engine read a timestep table cut short past its end (NaN
// actions, or the caller's memory). The state normalization is checked as the policy divides by it.
TEST(Policy, ACheckpointWhoseTensorsAreNotItsConfigsIsRefused) {
  testing::TempDir tmp;
  torch::optim::AdamW optimizer(std::vector<torch::Tensor>{torch::zeros({1})});
  auto refused = [&](rl::Agent agent, const std::string& why) {
    const std::string file = (tmp.path / "c.pt").string();
    agent.config.dataset = "hopper-medium-v2";  // a config must name one to be read back
    rl::save_checkpoint(file, agent, optimizer);
    try {
      rl::Policy::load(file);
      ADD_FAILURE() << "loaded: " << why;
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
      EXPECT_EQ(std::string(e.what()).find(file + ": not a readable minrnn checkpoint: " + file),
                std::string::npos)
          << "the file named twice: " << e.what();
    }
  };
  // The model's timestep table has 101 rows; its config says 51.
  rl::Agent short_table = random_agent("mingru", 4, 5, 100);
  short_table.config.max_ep_len = 50;
  refused(short_table,
          "tensor 'embed_timestep.weight' is float [101, 32], its config builds float "
          "[51, 32]");
  rl::Agent zero_std = random_agent("mingru", 4, 5);
  zero_std.state_std[2] = 0;
  refused(zero_std, "state_mean and state_std must be vectors of one length, finite, the stds > 0");
  rl::Agent nan_mean = random_agent("mingru", 4, 5);
  nan_mean.state_mean[0] = NAN;
  refused(nan_mean, "state_mean and state_std");
  // A weight not finite in the file, written so (its CRC-32 whole): every action was NaN (a walk,
  // 2026-11-29).
  rl::Agent nan_weight = random_agent("mingru", 4, 5);
  {
    torch::NoGradGuard no_grad;
    nan_weight.model->predict_action->weight.view(-1)[7] = NAN;
  }
  refused(nan_weight, "tensor 'predict_action.weight' holds values that are not finite");
}

// A reset whose batch cannot be allocated leaves the policy as it was (its state, its batch, its
// timestep); the packed engine once kept the new batch size with the old buffers, and act() then
// wrote past them. Run in a child whose address space may grow by 64 MB (none under ASan).
TEST(Policy, AResetThatRunsOutOfMemoryChangesNothing) {
  const auto agent = random_agent("mingru", 4, 9);
  const io::ProbeResult probe = io::probe_in_child(
      [&] {
        rl::Policy policy(agent), twin(agent);
        const std::vector<double> obs(policy.obs_dim(), 0.2);
        for (int t = 0; t < 3; ++t) {
          policy.act(obs);
          twin.act(obs);
          policy.observe_reward(1.0);
          twin.observe_reward(1.0);
        }
        try {
          policy.reset(rl::Policy::kMaxBatch);  // ~400 MB of recurrent state
#ifndef __SANITIZE_ADDRESS__
          throw std::runtime_error("a reset of 400 MB fit in 64 MB");
#else
          return;  // no address-space limit under ASan: nothing was refused
#endif
        } catch (const std::bad_alloc&) {
        }
        if (policy.batch() != 1 || policy.timestep() != 3 || policy.act(obs) != twin.act(obs))
          throw std::runtime_error("the refused reset changed the policy");
      },
      size_t{64} << 20);
  EXPECT_TRUE(probe.ok) << probe.message;
}

// A moved-from Policy says so on use, where it once read its moved engine (a segfault).
TEST(Policy, AMovedFromPolicySaysSo) {
  rl::Policy policy(random_agent("mingru", 4, 3));
  rl::Policy taken = std::move(policy);
  const std::vector<double> obs(taken.obs_dim(), 0.1);
  EXPECT_EQ(taken.act(obs).size(), size_t(taken.act_dim()));
  for (const auto& use : {std::function<void()>([&] { policy.act(obs); }),
                          std::function<void()>([&] { policy.reset(); }),
                          std::function<void()>([&] { policy.observe_reward(1.0); }),
                          std::function<void()>([&] { policy.env(); })}) {
    try {
      use();
      ADD_FAILURE() << "a moved-from Policy was used";
    } catch (const std::logic_error& e) {
      EXPECT_NE(std::string(e.what()).find("was moved from"), std::string::npos) << e.what();
    }
  }
  policy = std::move(taken);
  EXPECT_EQ(policy.act(obs).size(), size_t(policy.act_dim()));
  // Moved into itself, a policy stays as it was (its buffers were emptied: a segfault).
  rl::Policy& same = policy;
  const std::vector<double> before = rl::Policy(random_agent("mingru", 4, 3)).act(obs);
  policy.reset();
  policy = std::move(same);
  EXPECT_EQ(policy.act(obs), before);
}

}  // namespace
}  // namespace minrnn
