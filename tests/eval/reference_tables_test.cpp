// envs/ and datasets/ stand alone, so each keeps the D4RL facts it needs (dimensions, REF_MIN,
// REF_MAX). This is where the two copies are held to each other: a change to one without the
// other fails here.
#include <gtest/gtest.h>

#include "datasets/env_table.h"
#include "envs/registry.h"

using namespace minrnn;

TEST(ReferenceTables, EnvsAndDatasetsAgreeOnD4rlFacts) {
  for (const std::string& name : envs::env_names()) {
    SCOPED_TRACE(name);
    const envs::EnvSpec spec = envs::env_spec(name);
    const data::EnvInfo* info = data::find_env(name);
    ASSERT_NE(info, nullptr);
    EXPECT_EQ(spec.obs_dim, info->obs_dim);
    EXPECT_EQ(spec.act_dim, info->act_dim);
    EXPECT_EQ(spec.ref_min_score, info->ref_min_return);
    EXPECT_EQ(spec.ref_max_score, info->ref_max_return);
    for (double ret : {-100.0, 0.0, 1234.5, 5000.0}) {
      EXPECT_DOUBLE_EQ(envs::normalized_score(name, ret), data::normalized_score(*info, ret));
    }
  }
}
