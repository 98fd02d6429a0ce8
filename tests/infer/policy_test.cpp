// Policy (infer/policy.h): the packed engine gives the torch engine's actions over whole episodes,
// for every backbone and mode, batch 1 and 3, random and trained weights, on any threads; it
// conditions on the return to go (what it refuses: policy_refusals_test.cpp).
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "envs/registry.h"
#include "infer/policy_engine.h"
#include "rl/checkpoint.h"
#include "rl/trainer.h"
#include "tests/infer/policy_fixtures.h"
#include "tests/rl/fixtures.h"

namespace minrnn {
namespace {

using testing::random_agent;

// Drives `batch` hopper episodes of up to `steps` steps with the torch engine and feeds the fast
// engine the same observations and rewards; every action must agree. Episodes end at different
// steps (hopper terminates), after which they are fed frozen observations, as rollouts do.
void expect_engines_agree(const rl::Agent& agent, rl::EvalMode mode, int64_t batch, int steps,
                          const std::string& what) {
  rl::Policy reference(agent, {mode, rl::PolicyEngine::kTorch});
  rl::Policy fast(agent, {mode, rl::PolicyEngine::kPacked});
  EXPECT_EQ(fast.engine(), rl::PolicyEngine::kPacked);
  reference.reset(batch, 1500);
  fast.reset(batch, 1500);
  std::vector<std::unique_ptr<envs::Env>> envs;
  const int64_t od = reference.obs_dim(), ad = reference.act_dim();
  std::vector<double> obs(batch * od), rewards(batch);
  for (int64_t i = 0; i < batch; ++i) {
    envs.push_back(envs::make_env("hopper", 100 + i));
    auto o = envs.back()->reset(100 + i);
    std::copy(o.begin(), o.end(), obs.begin() + i * od);
  }
  std::vector<bool> done(batch, false);
  double worst = 0;
  for (int t = 0; t < steps; ++t) {
    auto want = reference.act(obs);
    auto got = fast.act(obs);
    for (size_t k = 0; k < want.size(); ++k) worst = std::max(worst, std::abs(got[k] - want[k]));
    for (int64_t i = 0; i < batch; ++i) {
      rewards[i] = 0;
      if (done[i]) continue;
      auto r =
          envs[i]->step(std::vector<double>(want.begin() + i * ad, want.begin() + (i + 1) * ad));
      rewards[i] = r.reward;
      std::copy(r.obs.begin(), r.obs.end(), obs.begin() + i * od);
      done[i] = r.terminated || r.truncated;
    }
    reference.observe_reward(rewards);
    fast.observe_reward(rewards);
  }
  EXPECT_LT(worst, 1e-5) << what;
  EXPECT_EQ(fast.timestep(), steps);
  EXPECT_DOUBLE_EQ(fast.return_to_go(0), reference.return_to_go(0));
}

// Past max_ep_len the timestep embedding stays at its last row in both engines (DT clamps it):
// episodes longer than the data's, here 50 steps with max_ep_len 16.
TEST(Policy, PackedEngineMatchesTorchPastMaxEpLen) {
  for (const std::string backbone : {"mingru", "minlstm", "transformer"}) {
    const auto agent = random_agent(backbone, 4, 23, /*max_ep_len=*/16);
    for (auto mode : {rl::EvalMode::kWindow, rl::EvalMode::kStreaming}) {
      if (backbone == "transformer" && mode == rl::EvalMode::kStreaming) continue;
      expect_engines_agree(agent, mode, 2, 50, backbone + " " + rl::eval_mode_name(mode));
    }
  }
}

// Auto is what rl::default_eval_mode says of the backbone's name (which --estimate's rates read),
// and a model that cannot stream never gets streaming from it.
TEST(Policy, AutoModeIsTheBackbonesDefaultAndOneItsModelRuns) {
  for (const std::string& backbone : rl::backbone_names()) {
    const auto agent = random_agent(backbone, 4, 26);
    const rl::EvalMode chosen = rl::resolve_eval_mode(rl::EvalMode::kAuto, agent);
    EXPECT_EQ(chosen, rl::default_eval_mode(backbone)) << backbone;
    EXPECT_TRUE(chosen == rl::EvalMode::kWindow || agent.model->streaming()) << backbone;
  }
}

TEST(Policy, PackedEngineMatchesTorchForEveryBackboneAndMode) {
  for (const std::string backbone :
       {"mingru", "minlstm", "hgrn", "transformer", "mingru+conv+plain", "minlstm+conv"}) {
    const auto agent = random_agent(backbone, 4, 21);
    std::vector<rl::EvalMode> modes = {rl::EvalMode::kWindow};
    if (backbone != "transformer") modes.push_back(rl::EvalMode::kStreaming);
    for (auto mode : modes) {
      for (int64_t batch : {1, 3}) {
        expect_engines_agree(
            agent, mode, batch, 60,
            backbone + " " + rl::eval_mode_name(mode) + " batch " + std::to_string(batch));
      }
    }
  }
}

TEST(Policy, PackedEngineMatchesTorchOnATrainedRun) {
  testing::TempDir tmp;
  const auto data = testing::write_hopper_dataset(tmp.path, 600);
  for (const char* backbone : {"mingru", "transformer"}) {
    auto cfg = testing::tiny_config(data, backbone, {"max_steps=20", "checkpoint_every=20"});
    rl::TrainOptions opt;
    opt.quiet = true;
    opt.run_dir = (tmp.path / backbone).string();
    rl::train(cfg, opt);
    auto policy = rl::Policy::load(opt.run_dir);
    EXPECT_EQ(policy.engine(), rl::PolicyEngine::kPacked);  // the default on CPU
    expect_engines_agree(policy.agent(), rl::EvalMode::kAuto, 2, 120, backbone);
    // What a loop without rl/agent.h reads of the run: its environment, normalized scores and
    // facts.
    EXPECT_EQ(policy.env(), policy.agent().env);
    EXPECT_EQ(policy.env(), "hopper");
    EXPECT_DOUBLE_EQ(policy.normalized(1234.5), policy.agent().normalized(1234.5));
    EXPECT_EQ(policy.backbone(), backbone);
    EXPECT_EQ(policy.context_len(), cfg.context_len);
    EXPECT_EQ(policy.train_step(), 20);
    EXPECT_DOUBLE_EQ(policy.target_return(), cfg.target_return);
  }
}

// What the policy feeds the model, computed by hand: returns-to-go (target − rewards so far) over
// the return scale, states (obs − mean) / std from the run, its own earlier actions, timesteps
// 0..t. Its action at step t is the model's forward on that window, last position (t < K, so the
// window is the whole episode); both engines.
TEST(Policy, ConditionsOnTheReturnToGoAndNormalizedStates) {
  for (const std::string backbone : {"mingru", "transformer"}) {
    auto agent = random_agent(backbone, 8, 31);
    agent.config.return_scale = 1000;
    const double target = 2500;
    for (auto engine : {rl::PolicyEngine::kPacked, rl::PolicyEngine::kTorch}) {
      rl::Policy policy(agent, {rl::EvalMode::kAuto, engine});
      policy.reset(1, target);
      const int64_t od = policy.obs_dim(), ad = policy.act_dim();
      std::vector<torch::Tensor> rtg, states, actions, times;
      double rewards = 0;
      std::mt19937 rng(5);
      std::normal_distribution<double> normal;
      for (int t = 0; t < 5; ++t) {
        std::vector<double> obs(od);
        for (auto& o : obs) o = normal(rng);
        const auto action = policy.act(obs);
        auto o = torch::tensor(std::vector<float>(obs.begin(), obs.end()));
        rtg.push_back(torch::full({1}, float(target / 1000) - float(rewards / 1000)));
        states.push_back((o - agent.state_mean) / agent.state_std);
        actions.push_back(torch::zeros({ad}));
        times.push_back(torch::full({}, int64_t(t)));
        torch::NoGradGuard no_grad;
        auto stack = [](const std::vector<torch::Tensor>& v) {
          return torch::stack(v).unsqueeze(0);
        };
        rl::DecisionBatch b{stack(rtg), stack(states), stack(actions), stack(times)};
        auto want = agent.model->forward(b).select(1, -1).squeeze(0);
        for (int64_t k = 0; k < ad; ++k) {
          EXPECT_NEAR(action[k], want[k].item<float>(), 1e-5)
              << backbone << " " << rl::policy_engine_name(engine) << " t=" << t;
        }
        actions.back() = torch::tensor(std::vector<float>(action.begin(), action.end()));
        const double reward = 0.5 + t;
        policy.observe_reward(reward);
        rewards += reward;
        EXPECT_NEAR(policy.return_to_go(), target - rewards, 1e-3);
      }
    }
  }
}

// PolicyOptions::threads sets LibTorch's threads for the process once the policy is made; 0, or a
// policy refused, leaves them.
TEST(Policy, ThreadsOptionSetsTheTorchEnginesProcessThreads) {
  const auto agent = random_agent("mingru", 4, 24);
  const int before = torch::get_num_threads();
  torch::set_num_threads(2);
  rl::Policy untouched(agent);
  EXPECT_EQ(torch::get_num_threads(), 2);
  rl::PolicyOptions packed_three;
  packed_three.threads = 3;  // the packed engine's own threads: the process's stay as they are
  rl::Policy packed(agent, packed_three);
  EXPECT_EQ(packed.engine(), rl::PolicyEngine::kPacked);
  EXPECT_EQ(torch::get_num_threads(), 2);
  rl::PolicyOptions one;
  one.engine = rl::PolicyEngine::kTorch;
  one.threads = 1;
  rl::PolicyOptions refused = one;
  refused.mode = rl::EvalMode::kStreaming;  // the Transformer has no step mode
  EXPECT_THROW(rl::Policy(random_agent("transformer", 4, 1), refused), std::invalid_argument);
  EXPECT_EQ(torch::get_num_threads(), 2);  // a refused policy changed nothing
  rl::Policy single(agent, one);
  EXPECT_EQ(torch::get_num_threads(), 1);
  torch::set_num_threads(before);
}

// The packed engine's threads split a window's products (PolicyOptions::threads): every action
// the same bits as on one thread, over episodes that end apart (hopper terminates).
TEST(Policy, PackedEngineGivesTheSameActionsOnAnyThreads) {
  const auto agent = random_agent("transformer", 20, 25, 1000, /*embed_dim=*/128);
  std::vector<rl::Policy> policies;
  for (int threads : {1, 2, 3}) {
    rl::PolicyOptions options{rl::EvalMode::kWindow, rl::PolicyEngine::kPacked};
    options.threads = threads;
    policies.emplace_back(agent, options);
    policies.back().reset(2, 1500);
  }
  std::vector<std::unique_ptr<envs::Env>> envs;
  std::vector<double> obs;
  for (int64_t i = 0; i < 2; ++i) {
    envs.push_back(envs::make_env("hopper", 7 + i));
    const auto o = envs.back()->reset(7 + i);
    obs.insert(obs.end(), o.begin(), o.end());
  }
  const int64_t od = policies[0].obs_dim(), ad = policies[0].act_dim();
  std::vector<bool> done(2, false);
  for (int t = 0; t < 40; ++t) {
    const std::vector<double> want = policies[0].act(obs);
    for (size_t p = 1; p < policies.size(); ++p)
      ASSERT_EQ(policies[p].act(obs), want) << "step " << t << ", threads " << p + 1;
    std::vector<double> rewards(2, 0.0);
    for (int64_t i = 0; i < 2; ++i) {
      if (done[i]) continue;  // frozen, as a rollout feeds an ended episode
      const auto r =
          envs[i]->step(std::vector<double>(want.begin() + i * ad, want.begin() + (i + 1) * ad));
      rewards[i] = r.reward;
      std::copy(r.obs.begin(), r.obs.end(), obs.begin() + i * od);
      done[i] = r.terminated || r.truncated;
    }
    for (rl::Policy& p : policies) p.observe_reward(rewards);
  }
}

TEST(Policy, ResetStartsOverAndConditionsOnTheTarget) {
  const auto agent = random_agent("minlstm", 4, 23);
  rl::Policy policy(agent);
  std::vector<double> obs(policy.obs_dim(), 0.2);
  const auto first = policy.act(obs);
  policy.observe_reward(3.0);
  EXPECT_NEAR(policy.return_to_go(), agent.config.target_return - 3.0, 1e-3);
  policy.act(obs);
  policy.reset();
  EXPECT_EQ(policy.timestep(), 0);
  EXPECT_EQ(policy.act(obs), first);  // the state was cleared
  policy.reset(1, 100.0);
  EXPECT_NE(policy.act(obs), first);  // another target, another action
}

}  // namespace
}  // namespace minrnn
