// D4RL's recipe per quality (collect/d4rl_recipe.h) on a toy budget: the expert continues the
// medium run, medium-expert is the two samples end to end, medium-replay is the medium run's
// buffer.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <csignal>
#include <cstddef>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "collect/d4rl_recipe.h"
#include "collect/sac.h"
#include "rl/stop_request.h"
#include "tests/temp_dir.h"

namespace minrnn::rl {
namespace {

namespace fs = std::filesystem;

// A medium run that stops at its first evaluation (any score beats the target), which the expert
// continues to the full, larger budget.
D4rlRecipe toy_recipe(const testing::TempDir& dir, const std::string& quality) {
  D4rlRecipe r;
  r.env = "hopper";
  r.quality = quality;
  r.work_dir = dir.file("work");
  r.seed = 3;
  r.steps = 40;
  r.train_steps = 240;
  r.start_steps = 100;
  r.eval_every = 120;
  r.target = -1e9;
  return r;
}

TEST(D4rlRecipe, TheExpertContinuesTheMediumRunAndMediumExpertJoinsTheirSamples) {
  testing::TempDir dir;
  const data::Transitions medium = collect_d4rl_quality(toy_recipe(dir, "medium"), torch::kCPU);
  ASSERT_EQ(medium.num_steps(), 40);
  EXPECT_EQ(medium.metadata.ints.at("iteration"), 120);  // stopped at its first evaluation
  EXPECT_TRUE(fs::exists(dir.path / "work" / "medium" / "done.txt"));

  const data::Transitions replay =
      collect_d4rl_quality(toy_recipe(dir, "medium-replay"), torch::kCPU);
  EXPECT_EQ(replay.num_steps(), 120);  // every transition the medium run trained on

  ::testing::internal::CaptureStdout();
  const data::Transitions expert = collect_d4rl_quality(toy_recipe(dir, "expert"), torch::kCPU);
  const std::string said = ::testing::internal::GetCapturedStdout();
  ASSERT_EQ(expert.num_steps(), 40);
  EXPECT_EQ(expert.metadata.ints.at("iteration"), 240);
  // The expert has no target to reach or miss (it said it missed the medium one).
  EXPECT_EQ(said.find("medium target"), std::string::npos) << said;

  const data::Transitions both =
      collect_d4rl_quality(toy_recipe(dir, "medium-expert"), torch::kCPU);
  ASSERT_EQ(both.num_steps(), 80);
  const size_t half = medium.observations.size();
  ASSERT_EQ(both.observations.size(), 2 * half);
  EXPECT_TRUE(std::equal(medium.observations.begin(), medium.observations.end(),
                         both.observations.begin()));
  EXPECT_TRUE(std::equal(expert.observations.begin(), expert.observations.end(),
                         both.observations.begin() + static_cast<std::ptrdiff_t>(half)));
  EXPECT_EQ(both.metadata.ints.at("iteration"), 240);
}

// A medium run that used the whole budget is the expert: continuing it would only have replayed its
// unfinished last episode (the expert "resumed" and trained past the budget, 2026-11-29).
TEST(D4rlRecipe, AMediumRunThatUsedTheWholeBudgetIsTheExpert) {
  testing::TempDir dir;
  D4rlRecipe r = toy_recipe(dir, "expert");
  r.target = 1e9;  // never reached
  const data::Transitions expert = collect_d4rl_quality(r, torch::kCPU);
  EXPECT_EQ(expert.metadata.ints.at("iteration"), 240);
  EXPECT_FALSE(fs::exists(dir.path / "work" / "expert"));
  r.quality = "medium";
  const data::Transitions medium = collect_d4rl_quality(r, torch::kCPU);
  EXPECT_EQ(medium.metadata.arrays.at("policy/fc0/weight").values,
            expert.metadata.arrays.at("policy/fc0/weight").values);
  // Both halves as their own files have them, though one agent samples both.
  r.quality = "medium-expert";
  const data::Transitions both = collect_d4rl_quality(r, torch::kCPU);
  std::vector<float> joined = medium.actions;
  joined.insert(joined.end(), expert.actions.begin(), expert.actions.end());
  EXPECT_EQ(both.actions, joined);
  // ... each half from noise of its own: the first step's draws ε = (atanh(a) − mean) / std under
  // the one policy (they were the same draws: the agent's stream as its checkpoint left it).
  Sac policy(11, 3, SacConfig{});
  policy.load_policy_metadata(expert.metadata);
  const auto first_draws = [&](const data::Transitions& d) {
    torch::NoGradGuard no_grad;
    const auto [mean, log_std] = policy.policy->forward(
        torch::tensor(std::vector<float>(d.observations.begin(), d.observations.begin() + 11))
            .view({1, 11}));
    const torch::Tensor a =
        torch::tensor(std::vector<float>(d.actions.begin(), d.actions.begin() + 3)).view({1, 3});
    return ((torch::atanh(a.clamp(-0.999F, 0.999F)) - mean) / log_std.exp()).flatten();
  };
  EXPECT_GT((first_draws(medium) - first_draws(expert)).abs().max().item<float>(), 1e-2F)
      << first_draws(medium) << first_draws(expert);
}

TEST(D4rlRecipe, AnUnknownQualityIsRefusedBeforeAnythingIsMade) {
  testing::TempDir dir;
  try {
    collect_d4rl_quality(toy_recipe(dir, "mediun"), torch::kCPU);
    FAIL() << "an unknown quality was collected";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("unknown quality 'mediun' (did you mean 'medium'?)"),
              std::string::npos)
        << e.what();
  }
  EXPECT_FALSE(fs::exists(dir.path / "work"));
}

// D4RL's one quality the recipe does not make is said with its reason, not as unknown; the rest of
// envs' list is what it makes.
TEST(D4rlRecipe, FullReplayIsRefusedWithItsReason) {
  testing::TempDir dir;
  try {
    collect_d4rl_quality(toy_recipe(dir, "full-replay"), torch::kCPU);
    FAIL() << "full-replay was collected";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()),
              "quality 'full-replay': " + why_not_collectable("full-replay"));
  }
  EXPECT_FALSE(fs::exists(dir.path / "work"));
  EXPECT_EQ(collectable_qualities(), (std::vector<std::string>{"random", "medium", "medium-replay",
                                                               "medium-expert", "expert"}));
}

// What `minrnn collect`'s options refuse, a C++ caller meets here: a NaN target would have trained
// the "medium" policy to the full budget.
TEST(D4rlRecipe, ValuesTheCommandsOptionsRefuseAreRefusedHereToo) {
  testing::TempDir dir;
  const auto refused = [&](D4rlRecipe r, const std::string& expected) {
    try {
      collect_d4rl_quality(r, torch::kCPU);
      ADD_FAILURE() << "collected with " << expected;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
    }
  };
  D4rlRecipe r = toy_recipe(dir, "medium");
  r.target = NAN;
  refused(r, "--target: expected a finite normalized score");
  r = toy_recipe(dir, "medium");
  r.eval_every = 0;
  refused(r, "--eval-every: expected an integer from 1, got 0");
  r = toy_recipe(dir, "medium");
  r.start_steps = 500;
  refused(r, "--start-steps (500) must not exceed --train-steps (240)");
  r = toy_recipe(dir, "medium");
  r.work_dir = dir.file("a-file");
  std::ofstream(r.work_dir) << "not a folder";
  refused(r, "--work-dir " + r.work_dir + " is a file: expected a folder");
  EXPECT_FALSE(fs::exists(dir.path / "work"));
}

// "Hopper-v4" and "hopper" are one env: one work dir's run.txt takes both.
TEST(D4rlRecipe, AnEnvsOtherNamesShareItsWorkDir) {
  testing::TempDir dir;
  D4rlRecipe r = toy_recipe(dir, "medium-replay");
  r.env = "Hopper-v4";
  EXPECT_EQ(collect_d4rl_quality(r, torch::kCPU).num_steps(), 120);
  EXPECT_EQ(collect_d4rl_quality(toy_recipe(dir, "medium-replay"), torch::kCPU).num_steps(), 120);
}

// Clears a recorded stop however the test leaves.
struct StopForTest {
  const ScopedStopHandlers handlers;
  explicit StopForTest(int signal) { request_stop_for_testing(signal); }
  ~StopForTest() { request_stop_for_testing(0); }
};

TEST(D4rlRecipe, AStopDuringTrainingSaysWhereItsCheckpointIs) {
  testing::TempDir dir;
  try {
    const StopForTest stop(SIGTERM);
    collect_d4rl_quality(toy_recipe(dir, "medium"), torch::kCPU);
    FAIL() << "a stopped collection returned data";
  } catch (const io::StopRequested& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("stopped by SIGTERM at SAC step"), std::string::npos) << what;
    EXPECT_NE(what.find(dir.file("work/medium/sac.pt")), std::string::npos) << what;
  }
  EXPECT_TRUE(fs::exists(dir.path / "work" / "medium" / "sac.pt"));
  EXPECT_FALSE(fs::exists(dir.path / "work" / "medium" / "done.txt"));
}

}  // namespace
}  // namespace minrnn::rl
