#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "eval/rollout.h"
#include "rl/trainer.h"
#include "tests/rl/fixtures.h"

namespace minrnn {
namespace {

namespace fs = std::filesystem;

TEST(Rollout, FiniteNormalizedScoresForEveryBackbone) {
  testing::TempDir tmp;
  const auto data = testing::write_hopper_dataset(tmp.path, 600);
  for (const char* backbone : {"mingru", "transformer"}) {
    auto cfg = testing::tiny_config(data, backbone, {"max_steps=5", "checkpoint_every=5"});
    rl::TrainOptions opt;
    opt.quiet = true;
    opt.run_dir = (tmp.path / backbone).string();
    int evaluations = 0;
    opt.evaluate = [&](int64_t, rl::Agent&) { ++evaluations; };
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
    // Same seed → same episodes.
    auto again = eval::rollout(agent, ro);
    EXPECT_EQ(again.returns, r.returns);

    const auto path = (fs::path(opt.run_dir) / "eval.json").string();
    eval::write_eval_json(path, agent, ro, r);
    auto j = nlohmann::json::parse(std::ifstream(path));
    EXPECT_EQ(j["normalized_scores"].size(), 3u);
    EXPECT_EQ(j["backbone"], backbone);
    EXPECT_DOUBLE_EQ(j["mean_normalized"].get<double>(), r.mean_normalized);
  }
}

}  // namespace
}  // namespace minrnn
