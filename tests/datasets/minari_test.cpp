#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "datasets/episodes.h"
#include "datasets/minari.h"
#include "tests/datasets/fixtures.h"

namespace minrnn::data {
namespace {

using testing::RawFile;
using testing::TempDir;

// A Minari-layout dataset of hopper-sized episodes written with the HDF5 C API: observations
// float64 (T+1 rows), actions float32, rewards float64, terminations/truncations h5py bool.
// Observation column 0 of episode e, row t holds 100 * e + t.
void write_minari(const std::filesystem::path& dir, const std::vector<int>& lengths,
                  const std::vector<bool>& terminated, int obs_dim = 11, int act_dim = 3) {
  std::filesystem::create_directories(dir / "data");
  RawFile f((dir / "data" / "main_data.hdf5").string());
  for (size_t e = 0; e < lengths.size(); ++e) {
    const hsize_t T = lengths[e];
    const std::string g = "episode_" + std::to_string(e) + "/";
    std::vector<double> obs((T + 1) * obs_dim, 0.25);
    for (hsize_t t = 0; t <= T; ++t) obs[t * obs_dim] = 100.0 * e + t;
    f.doubles(g + "observations", {T + 1, hsize_t(obs_dim)}, obs);
    f.floats(g + "actions", {T, hsize_t(act_dim)}, std::vector<float>(T * act_dim, 0.5f));
    f.doubles(g + "rewards", {T}, std::vector<double>(T, 2.0));
    std::vector<uint8_t> term(T, 0), trunc(T, 0);
    (terminated[e] ? term : trunc)[T - 1] = 1;
    f.bools(g + "terminations", term);
    f.bools(g + "truncations", trunc);
  }
  std::ofstream(dir / "metadata.json")
      << R"({"dataset_id": "mujoco/hopper/test-v0", "total_episodes": )" << lengths.size()
      << R"(, "env_spec": "{\"id\": \"Hopper-v5\", \"max_episode_steps\": 1000}",)"
      << R"( "ref_min_score": -20.0, "ref_max_score": 3000.0})";
}

TEST(MinariTest, ReadsEpisodesIntoContiguousBuffers) {
  TempDir dir;
  // More than 10 episodes: episode_10 must come after episode_9, not after episode_1.
  std::vector<int> lengths{3, 4, 2, 5, 1, 2, 3, 4, 2, 3, 6, 2};
  std::vector<bool> terminated(lengths.size(), false);
  terminated[1] = terminated[10] = true;
  write_minari(dir.path / "hopper-test", lengths, terminated);
  MinariInfo info;
  D4rlData d = read_minari((dir.path / "hopper-test").string(), &info);
  EXPECT_EQ(info.dataset_id, "mujoco/hopper/test-v0");
  EXPECT_EQ(info.env_id, "Hopper-v5");
  EXPECT_EQ(info.total_episodes, 12);
  EXPECT_EQ(info.total_steps, 37);
  EXPECT_TRUE(info.has_ref_scores);
  EXPECT_EQ(info.ref_max_score, 3000.0);
  ASSERT_EQ(d.num_steps(), 37);
  EXPECT_EQ(d.obs_dim, 11);
  int64_t row = 0;
  for (size_t e = 0; e < lengths.size(); ++e) {
    for (int t = 0; t < lengths[e]; ++t, ++row) {
      EXPECT_EQ(d.observations[row * 11], 100.0f * e + t);
      EXPECT_EQ(d.next_observations[row * 11], 100.0f * e + t + 1);  // observations[1:]
      bool last = t == lengths[e] - 1;
      EXPECT_EQ(d.terminals[row], last && terminated[e]);
      EXPECT_EQ(d.timeouts[row], last && !terminated[e]);
    }
  }
  EpisodeIndex idx = split_episodes(d, "minari");
  EXPECT_EQ(idx.stats.num_episodes, 12);
  EXPECT_EQ(idx.stats.dropped_tail_steps, 0);
  EXPECT_NEAR(idx.stats.max_return, 12.0, 1e-9);
}

TEST(MinariTest, ResolvesIdsUnderTheDatasetsPath) {
  TempDir dir;
  write_minari(dir.path / "mujoco" / "hopper" / "test-v0", {3, 4}, {true, false});
  setenv("MINARI_DATASETS_PATH", dir.path.c_str(), 1);
  EXPECT_TRUE(is_minari_reference("mujoco/hopper/test-v0"));
  EXPECT_FALSE(is_minari_reference("hopper-medium-v2"));
  EXPECT_EQ(resolve_minari_dir("mujoco/hopper/test-v0"),
            (dir.path / "mujoco/hopper/test-v0").string());
  Dataset ds = load_dataset("mujoco/hopper/test-v0");
  EXPECT_EQ(ds.format, "minari");
  EXPECT_EQ(ds.env, "hopper");
  EXPECT_EQ(ds.ref_max_return, 3000.0);  // the dataset's own reference scores win
  EXPECT_EQ(ds.index.stats.num_episodes, 2);
  try {
    resolve_minari_dir("mujoco/hopper/absent-v0");
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("minari download mujoco/hopper/absent-v0"),
              std::string::npos);
  }
  unsetenv("MINARI_DATASETS_PATH");
}

TEST(MinariTest, ObservationsNeedOneRowMoreThanActions) {
  TempDir dir;
  std::filesystem::create_directories(dir.path / "bad" / "data");
  std::string path = (dir.path / "bad" / "data" / "main_data.hdf5").string();
  {
    RawFile f(path);
    f.doubles("episode_0/observations", {3, 11}, std::vector<double>(33, 0.0));
    f.floats("episode_0/actions", {3, 3}, std::vector<float>(9, 0.0f));
    f.doubles("episode_0/rewards", {3}, std::vector<double>(3, 0.0));
    f.bools("episode_0/terminations", {0, 0, 1});
    f.bools("episode_0/truncations", {0, 0, 0});
  }
  try {
    read_minari((dir.path / "bad").string());
    FAIL();
  } catch (const std::invalid_argument& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find(path), std::string::npos) << msg;
    EXPECT_NE(msg.find("'episode_0/observations' has 3 rows, expected T+1 = 4"), std::string::npos)
        << msg;
  }
}

TEST(MinariTest, DimsMustMatchTheEnvSpec) {
  TempDir dir;
  write_minari(dir.path / "d", {3}, {true}, /*obs_dim=*/17, /*act_dim=*/6);  // spec says Hopper-v5
  EXPECT_THROW(read_minari((dir.path / "d").string()), std::invalid_argument);
  D4rlReadOptions none;
  none.env = "none";
  EXPECT_EQ(read_minari((dir.path / "d").string(), nullptr, none).obs_dim, 17);
}

}  // namespace
}  // namespace minrnn::data
