#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <nlohmann/json.hpp>
#include <numeric>

#include "eval/eval_result.h"
#include "eval/rollout.h"
#include "rl/stop_request.h"
#include "rl/trainer.h"
#include "tests/eval/rollout_fixtures.h"
#include "tests/rl/fixtures.h"
#include "tests/text_file.h"

namespace minrnn {
namespace {

namespace fs = std::filesystem;
using testing::short_rollout;
using testing::tiny_agent;

TEST(Rollout, FiniteNormalizedScoresForEveryBackbone) {
  testing::TempDir tmp;
  const auto data = testing::write_hopper_dataset(tmp.path, 600);
  for (const char* backbone : {"mingru", "transformer"}) {
    auto cfg = testing::tiny_config(data, backbone, {"max_steps=5", "checkpoint_every=5"});
    rl::TrainOptions opt;
    opt.quiet = true;
    opt.run_dir = (tmp.path / backbone).string();
    int evaluations = 0;
    opt.evaluate = [&](int64_t, rl::Agent&, rl::EvaluationProgress&) { ++evaluations; };
    rl::train(cfg, opt);
    EXPECT_EQ(evaluations, 1);  // after the last step

    auto agent = rl::load_agent(opt.run_dir);
    eval::RolloutOptions ro;
    ro.episodes = 3;
    ro.target_return = 1000;
    ro.max_steps = 40;
    auto r = eval::rollout(agent, ro);
    ASSERT_EQ(r.returns.size(), 3u);
    for (size_t i = 0; i < 3; ++i) {
      EXPECT_TRUE(std::isfinite(r.normalized[i])) << backbone;
      EXPECT_GE(r.lengths[i], 1);
      EXPECT_LE(r.lengths[i], 40);
      EXPECT_NEAR(r.normalized[i], envs::normalized_score("hopper", r.returns[i]), 1e-9);
    }
    EXPECT_TRUE(std::isfinite(r.mean_normalized));
    // Same seed → same episodes; the progress callback sees every step of its two shards
    // (episode 0; episodes 1 and 2), counting the env steps of the episodes still running, out
    // of the most left, and the episodes end.
    ASSERT_EQ(eval::rollout_shards(3), 2);
    std::vector<std::array<int64_t, 3>> progress;  // (env steps, most, episodes ended)
    ro.on_step = [&](int64_t steps, int64_t most, int ended) {
      progress.push_back({steps, most, ended});
    };
    auto again = eval::rollout(agent, ro);
    EXPECT_EQ(again.returns, r.returns);
    ASSERT_EQ(progress.size(), size_t(r.lengths[0] + std::max(r.lengths[1], r.lengths[2])));
    for (size_t t = 0; t < progress.size(); ++t) {
      EXPECT_LE(progress[t][0], progress[t][1]);
      EXPECT_LE(progress[t][1], 3 * 40);
      if (t > 0) {
        EXPECT_GT(progress[t][0], progress[t - 1][0]);
        EXPECT_GE(progress[t][2], progress[t - 1][2]);
      }
    }
    EXPECT_EQ(progress.back()[0], r.lengths[0] + r.lengths[1] + r.lengths[2]) << "every env step";
    EXPECT_EQ(progress.back()[0], progress.back()[1]) << "every episode ended";
    // Every episode shorter than the cap ended; one may end right at it.
    EXPECT_GE(progress.back()[2],
              std::count_if(r.lengths.begin(), r.lengths.end(), [](int n) { return n < 40; }));
    ro.on_step = nullptr;

    const auto path = (fs::path(opt.run_dir) / "eval.json").string();
    eval::write_eval_json(path, agent, ro, r);
    auto j = nlohmann::json::parse(std::ifstream(path));
    EXPECT_EQ(j["normalized_scores"].size(), 3u);
    EXPECT_EQ(j["mujoco_warnings"], std::vector<int>(3, 0));  // a stable simulation
    EXPECT_EQ(j["backbone"], backbone);
    EXPECT_DOUBLE_EQ(j["mean_normalized"].get<double>(), r.mean_normalized);
    EXPECT_EQ(j["mode_requested"], "auto");
    EXPECT_EQ(j["mode"], eval::eval_mode_name(r.mode));
  }
}

TEST(Rollout, EvalModeNamesAndDefaults) {
  for (auto m : {eval::EvalMode::kAuto, eval::EvalMode::kStreaming, eval::EvalMode::kWindow}) {
    EXPECT_EQ(eval::parse_eval_mode(eval::eval_mode_name(m)), m);
  }
  EXPECT_THROW(eval::parse_eval_mode("stream"), std::invalid_argument);
  EXPECT_NE(eval::kRecurrentDefault, eval::EvalMode::kAuto);
}

// Before step K the window holds steps 0..t unpadded, and a causal model's outputs on a prefix do
// not depend on what follows, so window == streaming exactly in exact arithmetic; in float they
// differ by the rounding of the parallel scan vs the step recurrence (~1e-7).
TEST(Rollout, WindowModeMatchesStreamingWithinContext) {
  testing::TempDir tmp;
  const auto data = testing::write_hopper_dataset(tmp.path, 600);
  const int K = 8;
  for (const char* backbone : {"mingru", "minlstm"}) {
    auto agent = tiny_agent(tmp.path, data, backbone, K);
    auto ro = short_rollout(3, K, eval::EvalMode::kStreaming);
    const auto streaming = eval::rollout(agent, ro);
    ro.mode = eval::EvalMode::kWindow;
    const auto window = eval::rollout(agent, ro);
    EXPECT_EQ(streaming.mode, eval::EvalMode::kStreaming);
    EXPECT_EQ(window.mode, eval::EvalMode::kWindow);
    ASSERT_EQ(window.returns.size(), 3u);
    EXPECT_EQ(window.lengths, streaming.lengths) << backbone;
    for (size_t i = 0; i < 3; ++i) {
      EXPECT_NEAR(window.returns[i], streaming.returns[i],
                  1e-5 * std::max(1.0, std::abs(streaming.returns[i])))
          << backbone << " episode " << i;
    }

    // The same at the model level, action by action, over K steps of arbitrary inputs.
    torch::NoGradGuard no_grad;
    auto& model = agent.model;
    model->eval();
    torch::manual_seed(3);
    const int64_t B = 2, obs_dim = agent.state_mean.size(0), act_dim = model->options().act_dim;
    rl::DecisionBatch b{torch::randn({B, K, 1}), torch::randn({B, K, obs_dim}),
                        torch::rand({B, K, act_dim}) * 2 - 1,
                        torch::arange(K).unsqueeze(0).repeat({B, 1})};
    const auto full = model->forward(b);  // (B,K,act)
    auto state = model->initial_state();
    for (int64_t t = 0; t < K; ++t) {
      auto step = model->act(b.returns_to_go.select(1, t), b.states.select(1, t),
                             b.timesteps.select(1, t), state);
      EXPECT_TRUE(torch::allclose(step, full.select(1, t), 1e-5, 1e-5)) << backbone << " t=" << t;
      model->observe_action(b.actions.select(1, t), b.timesteps.select(1, t), state);
    }
    // What is NOT the same: the training sampler's left padding. Its zero slots still become
    // tokens (Linear biases + the timestep-0 embedding) that the recurrence absorbs; the loss mask
    // only hides their outputs. So a rollout window must not be padded to K.
    auto pad = [](const torch::Tensor& x) {
      auto z = torch::zeros_like(x.narrow(1, 0, 2));
      return torch::cat({z, x.narrow(1, 0, x.size(1) - 2)}, 1);
    };
    rl::DecisionBatch padded{pad(b.returns_to_go), pad(b.states), pad(b.actions), pad(b.timesteps)};
    EXPECT_FALSE(
        torch::allclose(model->forward(padded).select(1, -1), full.select(1, K - 3), 1e-5, 1e-5))
        << backbone;
  }
}

TEST(Rollout, BothModesAreDeterministicUnderASeed) {
  testing::TempDir tmp;
  const auto data = testing::write_hopper_dataset(tmp.path, 600);
  auto agent = tiny_agent(tmp.path, data, "mingru", 5);
  auto ro = short_rollout(2, 30, eval::EvalMode::kWindow);
  ro.seed = 11;
  const auto a = eval::rollout(agent, ro);
  const auto b = eval::rollout(agent, ro);
  EXPECT_EQ(a.returns, b.returns);
  EXPECT_EQ(a.lengths, b.lengths);
  ro.mode = eval::EvalMode::kStreaming;
  const auto s = eval::rollout(agent, ro);
  EXPECT_EQ(eval::rollout(agent, ro).returns, s.returns);

  const auto path = (tmp.path / "eval.json").string();
  eval::write_eval_json(path, agent, ro, s);
  auto j = nlohmann::json::parse(std::ifstream(path));
  EXPECT_EQ(j["mode"], "streaming");
  EXPECT_EQ(j["mode_requested"], "streaming");
  EXPECT_EQ(j["context_len"], 5);
}

// Episodes in one batch do not see each other, and an episode that has ended adds nothing: each
// of six batched episodes (three shards of two) returns what it returns alone (seed s + i),
// though they end at different steps. The packed engine's products give a row the same bits in
// any company (kernels/cpu/float_loops.h), so its returns are equal to the bit; LibTorch's
// products round a 1-row and a many-row product differently, and hopper's contacts amplify that
// (~5e-6 relative here), so the torch engine's are equal to 1e-4: mixing episodes moves returns by
// O(1).
TEST(Rollout, BatchedEpisodesReturnWhatEachReturnsAlone) {
  testing::TempDir tmp;
  const auto data = testing::write_hopper_dataset(tmp.path, 600);
  for (const char* backbone : {"mingru", "transformer"}) {
    auto agent = tiny_agent(tmp.path, data, backbone, 5);
    {  // Weights moved well off the 5-step training, so the episodes of nearby seeds part ways.
      torch::NoGradGuard no_grad;
      torch::manual_seed(3);
      for (auto& p : agent.model->parameters()) p.add_(torch::randn_like(p) * 2.0);
    }
    for (auto engine : {rl::PolicyEngine::kPacked, rl::PolicyEngine::kTorch}) {
      auto ro = short_rollout(6, 200, eval::EvalMode::kAuto);
      ro.engine = engine;
      ro.seed = 40;
      const auto batched = eval::rollout(agent, ro);
      ASSERT_EQ(batched.lengths.size(), 6u);
      ro.episodes = 1;
      for (int i = 0; i < 6; ++i) {
        ro.seed = 40 + i;
        const auto alone = eval::rollout(agent, ro);
        const std::string what = std::string(backbone) + ", " + rl::policy_engine_name(engine) +
                                 ", episode " + std::to_string(i);
        EXPECT_EQ(alone.lengths[0], batched.lengths[i]) << what;
        if (engine == rl::PolicyEngine::kPacked) {
          EXPECT_EQ(alone.returns[0], batched.returns[i]) << what;
        } else {
          EXPECT_NEAR(alone.returns[0], batched.returns[i], 1e-4 * (1 + std::abs(alone.returns[0])))
              << what;
        }
      }
      // "Ended episodes add nothing" is tested only if the episodes end at different steps: so
      // they do for minGRU here (the Transformer's fall at the same step).
      if (std::string(backbone) == "mingru") {
        EXPECT_NE(*std::min_element(batched.lengths.begin(), batched.lengths.end()),
                  *std::max_element(batched.lengths.begin(), batched.lengths.end()));
      }
    }
  }
}

// The episodes' split into shards follows from their count alone: any thread count steps the same
// shards and returns the same numbers, bit for bit (a sweep's --parallel, a resume under another
// OMP_NUM_THREADS, a 16-core machine score a run as a 2-core one does). Found by an audit,
// 2026-11-29: the split followed the threads, and HalfCheetah's returns moved by 20 %.
TEST(Rollout, TheThreadCountNeverChangesTheNumbers) {
  testing::TempDir tmp;
  const auto data = testing::write_hopper_dataset(tmp.path, 600);
  auto agent = tiny_agent(tmp.path, data, "mingru", 5);
  {
    torch::NoGradGuard no_grad;
    torch::manual_seed(4);
    for (auto& p : agent.model->parameters()) p.add_(torch::randn_like(p) * 2.0);
  }
  auto ro = short_rollout(20, 200, eval::EvalMode::kStreaming);
  ro.engine = rl::PolicyEngine::kPacked;
  ro.seed = 7;
  ro.threads = 1;
  const auto one = eval::rollout(agent, ro);
  for (int threads : {2, 3, 5}) {
    ro.threads = threads;
    int64_t last_steps = 0, last_most = 0;
    int last_ended = 0;
    ro.on_step = [&](int64_t steps, int64_t most, int ended) {
      EXPECT_GT(steps, last_steps);
      EXPECT_LE(steps, most);
      last_steps = steps, last_most = most, last_ended = ended;
    };
    const auto split = eval::rollout(agent, ro);
    EXPECT_EQ(split.returns, one.returns) << threads << " threads";
    EXPECT_EQ(split.lengths, one.lengths) << threads << " threads";
    EXPECT_EQ(split.threads, threads);
    EXPECT_EQ(last_ended, 20) << threads << " threads";
    EXPECT_EQ(last_steps, last_most) << threads << " threads: every shard ended";
    ro.on_step = nullptr;
  }
  EXPECT_EQ(eval::rollout_shards(1), 1);
  EXPECT_EQ(eval::rollout_shards(2), 2);
  EXPECT_EQ(eval::rollout_shards(10), 4);
  EXPECT_EQ(eval::rollout_shards(20), 5);
  EXPECT_EQ(eval::rollout_shards(100), 10);
  EXPECT_EQ(eval::rollout_shards(eval::kEpisodesAtOnce), 16);
}

// More episodes than fit at once run in waves, each the rollout of its episodes alone, so a
// thousand-episode evaluation holds one wave's MuJoCo models, not a thousand.
TEST(Rollout, ManyEpisodesRunInWavesOfTheirOwn) {
  testing::TempDir tmp;
  const auto data = testing::write_hopper_dataset(tmp.path, 600);
  auto agent = tiny_agent(tmp.path, data, "mingru", 5);
  auto ro = short_rollout(eval::kEpisodesAtOnce + 3, 200, eval::EvalMode::kStreaming);
  ro.seed = 11;
  ro.threads = 1;
  int last_ended = 0;
  int64_t last_step = 0;
  ro.on_step = [&](int64_t step, int64_t max_steps, int ended) {
    EXPECT_GE(ended, last_ended);
    EXPECT_GT(step, last_step);  // on from wave to wave: a progress line's rate holds
    EXPECT_LE(step, max_steps);
    last_ended = ended;
    last_step = step;
  };
  const auto all = eval::rollout(agent, ro);
  ASSERT_EQ(all.returns.size(), size_t(eval::kEpisodesAtOnce + 3));
  ASSERT_LT(*std::max_element(all.lengths.begin(), all.lengths.end()), 200);  // all fell
  EXPECT_EQ(last_ended, eval::kEpisodesAtOnce + 3);
  EXPECT_EQ(last_step, std::accumulate(all.lengths.begin(), all.lengths.end(), int64_t{0}));
  ro.on_step = nullptr;
  ro.episodes = 3;
  ro.seed = 11 + eval::kEpisodesAtOnce;
  const auto last_wave = eval::rollout(agent, ro);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(all.returns[eval::kEpisodesAtOnce + i], last_wave.returns[i]) << i;
    EXPECT_EQ(all.lengths[eval::kEpisodesAtOnce + i], last_wave.lengths[i]) << i;
  }
  ro.episodes = eval::kEpisodesAtOnce;
  ro.seed = 11;
  EXPECT_EQ(eval::rollout(agent, ro).returns,
            std::vector<double>(all.returns.begin(), all.returns.end() - 3));
}

// A stop request cuts a rollout short (a training's evaluation on SIGTERM, which Slurm's grace
// period gives seconds): should_stop is polled every step, on every thread's shard.
TEST(Rollout, AStopRequestCutsItShort) {
  testing::TempDir tmp;
  const auto data = testing::write_hopper_dataset(tmp.path, 600);
  auto agent = tiny_agent(tmp.path, data, "mingru", 5);
  for (int threads : {1, 2}) {
    auto ro = short_rollout(4, 1000, eval::EvalMode::kStreaming);
    ro.threads = threads;
    std::atomic<int> polls{0};
    ro.should_stop = [&] { return ++polls > 6; };
    EXPECT_THROW(eval::rollout(agent, ro), rl::StopRequested) << threads << " threads";
    EXPECT_LT(polls.load(), 20) << "the rollout ran on after the stop";
  }
}

TEST(Rollout, TransformerIsWindowOnly) {
  testing::TempDir tmp;
  const auto data = testing::write_hopper_dataset(tmp.path, 600);
  auto agent = tiny_agent(tmp.path, data, "transformer", 5);
  auto ro = short_rollout(2, 10, eval::EvalMode::kStreaming);
  try {
    eval::rollout(agent, ro);
    ADD_FAILURE() << "streaming on a transformer did not throw";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("streaming"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("transformer"), std::string::npos) << e.what();
  }
  EXPECT_EQ(eval::resolve_eval_mode(eval::EvalMode::kAuto, agent), eval::EvalMode::kWindow);
  ro.mode = eval::EvalMode::kAuto;
  const auto automatic = eval::rollout(agent, ro);
  ro.mode = eval::EvalMode::kWindow;
  EXPECT_EQ(eval::rollout(agent, ro).returns, automatic.returns);
}

}  // namespace
}  // namespace minrnn
