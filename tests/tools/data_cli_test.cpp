// `minrnn data inspect`: what it explains of a file, and how it refuses one, naming the file, the
// key and the row.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/datasets/fixtures.h"
#include "tests/run_command.h"
#include "tests/temp_dir.h"
#include "tests/tools/cli_fixtures.h"

namespace minrnn {
namespace {

using testing::expect_failure_naming;
using testing::run_minrnn;
using testing::TempDir;
using CliResult = testing::CommandResult;

TEST(DataCli, InspectExplainsASynthesizedFile) {
  TempDir dir;
  ASSERT_EQ(
      run_minrnn(dir, "data synth d.hdf5 --env hopper --steps 300 --episode-len 100").exit_code, 0);
  const CliResult r = run_minrnn(dir, "data inspect d.hdf5 --json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto j = nlohmann::json::parse(r.output);
  EXPECT_EQ(j["steps"], 300);
  EXPECT_EQ(j["fingerprint"].get<std::string>().size(), 16u);
  EXPECT_EQ(j["episodes"], 3);
  EXPECT_EQ(j["terminal_and_timeout"], 0);
  EXPECT_EQ(j["env"], "hopper");
  EXPECT_EQ(j["env_source"], "its widths (obs 11, act 3)");  // "d.hdf5" names no env
  // Replaced with --force, as train and collect say it.
  const std::string synth = "data synth d.hdf5 --env hopper --steps 300 --episode-len 100";
  EXPECT_NE(run_minrnn(dir, synth).exit_code, 0);
  EXPECT_EQ(run_minrnn(dir, synth + " --force").exit_code, 0);
  // Its folders are made, as collect's --out's (a walk, 2026-11-30); a file on the way is said.
  const CliResult deeper =
      run_minrnn(dir, "data synth data/new/d.hdf5 --env hopper --steps 100 --episode-len 50");
  EXPECT_EQ(deeper.exit_code, 0) << deeper.output;
  EXPECT_TRUE(std::filesystem::is_regular_file(dir.path / "data/new/d.hdf5"));
  expect_failure_naming(
      run_minrnn(dir, "data synth d.hdf5/x.hdf5 --env hopper --steps 100 --episode-len 50"),
      {"cannot write d.hdf5/x.hdf5", "d.hdf5 is a file, not a folder"});
}

// A file under D4RL's name that `minrnn collect` or `minrnn data synth` made is a note saying so;
// another of the wrong size a warning asking whether it was edited (a walk, 2026-11-29: every
// collected file named as the docs advise was "collected here, or edited?").
TEST(DataCli, InspectSaysACollectedFileUnderD4rlsNameWasMadeHere) {
  TempDir dir;
  ASSERT_EQ(
      run_minrnn(dir, "collect hopper random --steps 100 --out hopper_random-v2.hdf5").exit_code,
      0);
  const CliResult collected = run_minrnn(dir, "data inspect hopper_random-v2.hdf5");
  ASSERT_EQ(collected.exit_code, 0) << collected.output;
  EXPECT_NE(collected.output.find("note               hopper_random-v2.hdf5 holds"),
            std::string::npos)
      << collected.output;
  EXPECT_NE(collected.output.find("made by `minrnn collect`, not the published file; its scores "
                                  "are not the paper's data's"),
            std::string::npos)
      << collected.output;
  ASSERT_EQ(run_minrnn(dir,
                       "data synth hopper_medium-v2.hdf5 --env hopper --steps 300 "
                       "--episode-len 100")
                .exit_code,
            0);
  const CliResult other = run_minrnn(dir, "data inspect hopper_medium-v2.hdf5 --json");
  ASSERT_EQ(other.exit_code, 0) << other.output;
  const auto j = nlohmann::json::parse(other.output);
  // data synth's random data is said to be so too (walk 47: it was "collected here, or edited?",
  // and trained beside the papers' numbers unmarked); a file of no word is asked (Catalog tests).
  EXPECT_EQ(j["collected_here"], true);
  EXPECT_EQ(j["made_by"], "minrnn data synth");
  EXPECT_NE(j["not_the_published_file"].get<std::string>().find(
                "made by `minrnn data synth`, not the published file"),
            std::string::npos)
      << other.output;
}

TEST(DataCli, InspectNamesTheFileAndTheMissingKey) {
  TempDir dir;
  data::testing::write_raw_d4rl(dir.file("broken.hdf5"), 6, 3, 2, {"rewards"});
  expect_failure_naming(run_minrnn(dir, "data inspect broken.hdf5"), {"broken.hdf5", "rewards"});
}

// Actions past the envs' [-1, 1] are warned of (a walk, 2026-11-30: a 7.0 passed without a word):
// the policy's tanh head cannot output them.
TEST(DataCli, InspectWarnsOfActionsOutsideTheActionSpace) {
  TempDir dir;
  const std::string path = dir.file("d.hdf5");
  data::testing::write_raw_d4rl(path, 6, 11, 3);
  std::vector<float> actions(6 * 3, 0.5f);
  actions[5] = 7.0f;
  actions[9] = -1.5f;
  data::testing::put_dataset(path, "actions", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, {6, 3},
                             actions.data());
  const CliResult text = run_minrnn(dir, "data inspect d.hdf5");
  ASSERT_EQ(text.exit_code, 0) << text.output;
  EXPECT_NE(text.output.find("warning            2 action values outside [-1, 1]"),
            std::string::npos)
      << text.output;
  const CliResult json = run_minrnn(dir, "data inspect d.hdf5 --json");
  EXPECT_EQ(nlohmann::json::parse(json.output)["actions_outside_unit_box"], 2) << json.output;
}

// Rewards of another scale (a walk, 2026-11-30: one reward of 3e38 passed without a word): the
// returns are far past the env's reference scores.
TEST(DataCli, InspectWarnsOfReturnsFarPastTheReferenceScores) {
  TempDir dir;
  const std::string path = dir.file("hopper_medium-v2.hdf5");
  data::testing::write_raw_d4rl(path, 6, 11, 3);
  const auto warned = [&] {
    const CliResult text = run_minrnn(dir, "data inspect hopper_medium-v2.hdf5");
    EXPECT_EQ(text.exit_code, 0) << text.output;
    const CliResult json = run_minrnn(dir, "data inspect hopper_medium-v2.hdf5 --json");
    const bool said =
        text.output.find("returns more than ten times the expert's") != std::string::npos;
    EXPECT_EQ(nlohmann::json::parse(json.output)["returns_past_reference"], said) << json.output;
    return said;
  };
  EXPECT_FALSE(warned());
  std::vector<float> rewards(6, 1.0f);
  rewards[2] = 3e38f;
  data::testing::put_dataset(path, "rewards", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, {6},
                             rewards.data());
  EXPECT_TRUE(warned());
}

// A NaN in next_observations, which training does not read: refused by inspect, which reads them,
// with the word that training takes the file and how to see what it reads.
TEST(DataCli, InspectSaysTrainingTakesAFileWhoseFaultIsInNextObservations) {
  TempDir dir;
  const std::string path = dir.file("d.hdf5");
  data::testing::write_raw_d4rl(path, 6, 11, 3);
  std::vector<float> next(6 * 11, 0.5f);
  next[4 * 11 + 2] = std::nanf("");
  data::testing::put_dataset(path, "next_observations", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, {6, 11},
                             next.data());
  expect_failure_naming(
      run_minrnn(dir, "data inspect d.hdf5"),
      {"d.hdf5", "'next_observations' has a non-finite value", "row 4",
       "training reads this dataset all the same", "`minrnn data inspect --minimal d.hdf5`"});
  const CliResult lean = run_minrnn(dir, "data inspect d.hdf5 --minimal --json");
  ASSERT_EQ(lean.exit_code, 0) << lean.output;
  EXPECT_EQ(nlohmann::json::parse(lean.output)["steps"], 6);
  // A fault training reads too gets no such word.
  std::vector<float> rewards(6, 1.0f);
  rewards[3] = std::nanf("");
  data::testing::put_dataset(path, "rewards", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, {6},
                             rewards.data());
  const CliResult both = run_minrnn(dir, "data inspect d.hdf5");
  EXPECT_NE(both.exit_code, 0);
  EXPECT_EQ(both.output.find("all the same"), std::string::npos) << both.output;
  // Nor a file training refuses for its widths: a "hopper" file of 17-wide states, inspected
  // with --env none (which checks no widths; training guesses hopper from the name).
  const std::string wide = dir.file("hopper_wide.hdf5");
  data::testing::write_raw_d4rl(wide, 6, 17, 3);
  std::vector<float> wide_next(6 * 17, 0.5f);
  wide_next[7] = std::nanf("");
  data::testing::put_dataset(wide, "next_observations", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, {6, 17},
                             wide_next.data());
  const CliResult refused = run_minrnn(dir, "data inspect hopper_wide.hdf5 --env none");
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_NE(refused.output.find("next_observations"), std::string::npos) << refused.output;
  EXPECT_EQ(refused.output.find("all the same"), std::string::npos) << refused.output;
}

// A chunk of next_observations that cannot be read (its compressed bytes damaged) is a read
// failure, not a bad value: refused by inspect all the same, with the word that training, which
// does not read it, takes the file.
TEST(DataCli, InspectSaysTrainingTakesAFileWhoseUnreadableChunkIsInNextObservations) {
  TempDir dir;
  const std::string path = dir.file("d.hdf5");
  data::testing::write_raw_d4rl(path, 64, 11, 3);
  haddr_t chunk_at = 0;
  hsize_t chunk_bytes = 0;
  {
    const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
    const hsize_t dims[2] = {64, 11};
    const hid_t space = H5Screate_simple(2, dims, nullptr);
    const hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_chunk(dcpl, 2, dims);
    H5Pset_deflate(dcpl, 6);
    const hid_t dset = H5Dcreate2(file, "next_observations", H5T_IEEE_F32LE, space, H5P_DEFAULT,
                                  dcpl, H5P_DEFAULT);
    std::vector<float> next(64 * 11);
    for (size_t i = 0; i < next.size(); ++i) next[i] = std::sin(0.37f * static_cast<float>(i));
    H5Dwrite(dset, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, next.data());
    H5Dflush(dset);
    const hsize_t origin[2] = {0, 0};
    unsigned mask = 0;
    ASSERT_GE(H5Dget_chunk_info_by_coord(dset, origin, &mask, &chunk_at, &chunk_bytes), 0);
    H5Dclose(dset);
    H5Pclose(dcpl);
    H5Sclose(space);
    H5Fclose(file);
  }
  ASSERT_GT(chunk_bytes, 16u);
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(chunk_at + 2));  // past the zlib header: the deflate data
    const std::string garbage(static_cast<size_t>(chunk_bytes - 4), '\xff');
    f.write(garbage.data(), static_cast<std::streamsize>(garbage.size()));
  }
  expect_failure_naming(
      run_minrnn(dir, "data inspect d.hdf5"),
      {"d.hdf5", "next_observations", "read failed", "training reads this dataset all the same"});
  EXPECT_EQ(run_minrnn(dir, "data inspect d.hdf5 --minimal").exit_code, 0);
}

}  // namespace
}  // namespace minrnn
