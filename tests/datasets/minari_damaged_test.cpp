// A damaged Minari file is refused naming where the damage is: an episode group given twice or
// out of order, a non-finite value, a flag inside an episode, totals other than the file's, an
// observation row short.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "datasets/minari.h"
#include "tests/datasets/fixtures.h"
#include "tests/datasets/minari_fixtures.h"

namespace minrnn::data {
namespace {

using testing::RawFile;
using testing::read_error;
using testing::TempDir;
using testing::write_metadata;
using testing::write_minari;

// Episodes are read in the order of their numbers; two groups of one number (episode_3 and
// episode_03) leave that order ambiguous, and a number past 64 bits is no episode of Minari's.
TEST(MinariTest, EpisodeGroupsAreNumberedOnceEach) {
  TempDir dir;
  write_minari(dir.path / "dup", {3, 4}, {true, true}, 11, 3, {"episode_3", "episode_03"});
  const std::string path = (dir.path / "dup" / "data" / "main_data.hdf5").string();
  EXPECT_EQ(read_error(dir.path / "dup"),
            path + ": groups 'episode_03' and 'episode_3' are both episode 3");
  write_minari(dir.path / "big", {3}, {true}, 11, 3, {"episode_99999999999999999999"});
  EXPECT_EQ(read_error(dir.path / "big"),
            (dir.path / "big" / "data" / "main_data.hdf5").string() +
                ": group 'episode_99999999999999999999': an episode number past 2^64 "
                "(expected episode_{i})");
  write_minari(dir.path / "gaps", {3, 4}, {true, true}, 11, 3, {"episode_0", "episode_2"});
  EXPECT_EQ(read_error(dir.path / "gaps"),
            (dir.path / "gaps" / "data" / "main_data.hdf5").string() +
                ": no group 'episode_1' (after 'episode_0' comes 'episode_2'): an episode is "
                "missing from the file");
  write_minari(dir.path / "late", {3}, {true}, 11, 3, {"episode_7"});
  EXPECT_NE(read_error(dir.path / "late").find("no group 'episode_0' (the first is 'episode_7')"),
            std::string::npos);
}

// A NaN is named where the user's file holds it: the episode's group, its key and its own row
// (the last observation of an episode is what the joined buffer called 'next_observations').
TEST(MinariTest, ANonFiniteValueIsNamedByItsEpisodeAndRow) {
  TempDir dir;
  write_minari(dir.path / "set", {3, 4}, {true, false});
  const std::string path = (dir.path / "set" / "data" / "main_data.hdf5").string();
  {
    RawFile f(path + ".new");
    for (int e = 0; e < 2; ++e) {
      const hsize_t T = e == 0 ? 3 : 4;
      const std::string g = "episode_" + std::to_string(e) + "/";
      std::vector<double> obs((T + 1) * 11, 0.25), rewards(T, 2.0);
      if (e == 1) rewards[1] = std::nan("");
      if (e == 0) obs[T * 11 + 2] = INFINITY;  // the episode's last observation
      f.doubles(g + "observations", {T + 1, 11}, obs);
      f.floats(g + "actions", {T, 3}, std::vector<float>(T * 3, 0.5f));
      f.doubles(g + "rewards", {T}, rewards);
      std::vector<uint8_t> term(T, 0), trunc(T, 0);
      term[T - 1] = 1;
      f.bools(g + "terminations", term);
      f.bools(g + "truncations", trunc);
    }
  }
  std::filesystem::rename(path + ".new", path);
  EXPECT_EQ(read_error(dir.path / "set"),
            path + ": 'episode_0/observations' has a non-finite value (inf) at row 3");
}

// A flag before an episode's last step is named: which of the two, and where (a walk, 2026-11-30:
// "'episode_0/terminations/truncations' set at step 1").
TEST(MinariTest, AFlagInsideAnEpisodeIsNamed) {
  TempDir dir;
  write_minari(dir.path / "mid", {4}, {true});
  const std::string path = (dir.path / "mid" / "data" / "main_data.hdf5").string();
  for (const char* flag : {"terminations", "truncations"}) {
    {
      RawFile f(path + ".new");
      f.doubles("episode_0/observations", {5, 11}, std::vector<double>(5 * 11, 0.25));
      f.floats("episode_0/actions", {4, 3}, std::vector<float>(4 * 3, 0.5f));
      f.doubles("episode_0/rewards", {4}, std::vector<double>(4, 2.0));
      std::vector<uint8_t> set(4, 0), clear(4, 0);
      set[1] = 1;
      set[3] = 1;
      const bool terminations = std::string(flag) == "terminations";
      f.bools("episode_0/terminations", terminations ? set : clear);
      f.bools("episode_0/truncations", terminations ? clear : set);
    }
    std::filesystem::rename(path + ".new", path);
    EXPECT_EQ(read_error(dir.path / "mid"),
              path + ": 'episode_0/" + flag +
                  "' set at step 1, before the episode's last step 3 (Minari flags only an "
                  "episode's last step)");
  }
}

// metadata.json's totals are what the file must hold: Python's minari fails on a dataset that
// holds fewer episodes; an altered or cut file is refused naming both numbers.
TEST(MinariTest, TotalsOtherThanTheFilesAreRefused) {
  TempDir dir;
  write_minari(dir.path / "set", {3, 4}, {true, false});
  EXPECT_EQ(read_minari((dir.path / "set").string()).num_steps(), 7);
  const std::string metadata = (dir.path / "set" / "data" / "metadata.json").string();
  write_metadata(dir.path / "set", R"({"total_episodes": 2, "total_steps": 9})");
  EXPECT_EQ(read_error(dir.path / "set"),
            metadata + ": total_steps = 9 but " +
                (dir.path / "set" / "data" / "main_data.hdf5").string() +
                " holds 7 (an incomplete or altered dataset)");
  write_metadata(dir.path / "set", R"({"total_episodes": 3})");
  EXPECT_NE(read_error(dir.path / "set").find("total_episodes = 3 but "), std::string::npos);
  write_metadata(dir.path / "set", R"({"total_episodes": "two"})");
  EXPECT_EQ(read_error(dir.path / "set"),
            metadata + ": total_episodes = \"two\": expected a count");
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
  write_metadata(dir.path / "bad", R"({"env_spec": "{\"id\": \"Hopper-v5\"}"})");
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

}  // namespace
}  // namespace minrnn::data
