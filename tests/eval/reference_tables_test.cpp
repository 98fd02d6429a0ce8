// envs/ and datasets/ stand alone, so each keeps the D4RL facts it needs (dimensions, REF_MIN,
// REF_MAX). This is where the two copies are held to each other: a change to one without the
// other fails here.
#include <gtest/gtest.h>

#include <algorithm>

#include "datasets/catalog.h"
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
  }
}

// The D4RL ids an env name may be (envs) are the ones published (datasets): hopper-full-replay-v2
// was downloadable but no environment name.
TEST(ReferenceTables, EnvsAndDatasetsKnowTheSameD4rlIds) {
  std::vector<std::string> as_envs = envs::d4rl_dataset_ids();
  std::vector<std::string> published = data::d4rl_published_ids();
  std::sort(as_envs.begin(), as_envs.end());
  std::sort(published.begin(), published.end());
  EXPECT_EQ(as_envs, published);
  EXPECT_EQ(envs::env_spec("hopper-full-replay-v2").obs_dim, 11);
}
