#include <gtest/gtest.h>

#include "envs/mjcf.h"
#include "envs/registry.h"

namespace minrnn::envs {
namespace {

TEST(Registry, NamesAndD4rlIdsMapToTheirEnvironment) {
  EXPECT_EQ(env_name_from_dataset_id("hopper"), "hopper");
  EXPECT_EQ(env_name_from_dataset_id("hopper-medium-v2"), "hopper");
  EXPECT_EQ(env_name_from_dataset_id("halfcheetah-medium-replay-v2"), "halfcheetah");
  EXPECT_EQ(env_name_from_dataset_id("walker2d-medium-expert-v2"), "walker2d");
  EXPECT_EQ(d4rl_dataset_ids().size(), 18u);  // 3 envs × 6 qualities, full-replay among them
  for (const auto& id : d4rl_dataset_ids()) {
    const auto env = make_env(id);
    EXPECT_EQ(env->spec().name, env_name_from_dataset_id(id));
    EXPECT_EQ(static_cast<int>(env->reset(0).size()), env->spec().obs_dim);
  }
  EXPECT_EQ(env_spec("walker2d-random-v2").obs_dim, 17);
  EXPECT_EQ(env_spec("hopper-expert-v2").act_dim, 3);
}

TEST(Registry, UnknownNameIsAnErrorListingTheKnownOnes) {
  for (const std::string bad :
       {"ant", "hopper-medium-v0", "Hopper-v6", "hopper-v1", "ant-v5", "", "hopper-medium"}) {
    try {
      make_env(bad);
      FAIL() << "accepted '" << bad << "'";
    } catch (const std::invalid_argument& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("'" + bad + "'"), std::string::npos) << what;
      EXPECT_NE(what.find("halfcheetah, hopper, walker2d"), std::string::npos) << what;
      // D4RL's ids by their pattern (a walk, 2026-11-30: all 18 listed, ~900 characters).
      EXPECT_NE(what.find("D4RL ids: <env>-<quality>-v2, quality one of random, medium, "
                          "medium-replay, medium-expert, expert, full-replay"),
                std::string::npos)
          << what;
    }
  }
  EXPECT_THROW(normalized_score("cartpole", 1.0), std::invalid_argument);
  EXPECT_THROW(embedded_mjcf("ant"), std::invalid_argument);
}

TEST(Registry, NormalizedScoreUsesD4rlReferenceReturns) {
  EXPECT_NEAR(normalized_score("hopper", -20.272305), 0.0, 1e-12);
  EXPECT_NEAR(normalized_score("hopper-medium-v2", 3234.3), 100.0, 1e-12);
  EXPECT_NEAR(normalized_score("halfcheetah-expert-v2", 12135.0), 100.0, 1e-12);
  EXPECT_NEAR(normalized_score("walker2d", 1.629008), 0.0, 1e-12);
  const double mid = (-280.178953 + 12135.0) / 2;
  EXPECT_NEAR(normalized_score("halfcheetah-medium-v2", mid), 50.0, 1e-9);
  EXPECT_NEAR(normalized_score("walker2d-medium-v2", 3000.0),
              100.0 * (3000.0 - 1.629008) / (4592.3 - 1.629008), 1e-12);
}

TEST(Registry, BrokenMjcfIsAClearError) {
  try {
    compile_mjcf("broken.xml", "<mujoco><worldbody><body><geom type='capsule'/></mujoco>");
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("broken.xml"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace minrnn::envs
