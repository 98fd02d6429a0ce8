#include <gtest/gtest.h>
#include <hdf5.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <thread>

#include "datasets/d4rl.h"
#include "datasets/env_table.h"
#include "datasets/episodes.h"
#include "tests/datasets/fixtures.h"

namespace minrnn::data {
namespace {

using testing::make_data;
using testing::TempDir;

Transitions make_full_data() {
  Transitions d = make_data(11, 3, {5, 7, 4}, 3);
  int64_t n = d.num_steps();
  FloatArray qpos{{n, 6}, std::vector<float>(n * 6)};
  for (size_t i = 0; i < qpos.values.size(); ++i) qpos.values[i] = 0.5f * i;
  d.infos["qpos"] = qpos;
  d.infos["action_log_probs"] = FloatArray{{n}, std::vector<float>(n, -1.25f)};
  d.metadata.strings["algorithm"] = "SAC";
  d.metadata.strings["policy/nonlinearity"] = "relu";
  d.metadata.ints["iteration"] = 12345;
  d.metadata.arrays["policy/fc0/weight"] = FloatArray{{2, 3}, {1, 2, 3, 4, 5, 6}};
  d.metadata.arrays["policy/fc0/bias"] = FloatArray{{2}, {0.5f, -0.5f}};
  return d;
}

void expect_equal(const FloatArray& a, const FloatArray& b) {
  EXPECT_EQ(a.shape, b.shape);
  EXPECT_EQ(a.values, b.values);
}

TEST(D4rlTest, WriteReadRoundTripIsExact) {
  TempDir dir;
  Transitions d = make_full_data();
  std::string path = dir.file("hopper_synthetic-v2.hdf5");
  write_d4rl(path, d);
  Transitions r = read_d4rl(path);
  EXPECT_EQ(r.obs_dim, 11);
  EXPECT_EQ(r.act_dim, 3);
  EXPECT_EQ(r.observations, d.observations);
  EXPECT_EQ(r.next_observations, d.next_observations);
  EXPECT_EQ(r.actions, d.actions);
  EXPECT_EQ(r.rewards, d.rewards);
  EXPECT_EQ(r.terminals, d.terminals);
  EXPECT_EQ(r.timeouts, d.timeouts);
  ASSERT_EQ(r.infos.size(), 2u);
  expect_equal(r.infos.at("qpos"), d.infos.at("qpos"));
  expect_equal(r.infos.at("action_log_probs"), d.infos.at("action_log_probs"));
  EXPECT_EQ(r.metadata.strings, d.metadata.strings);
  EXPECT_EQ(r.metadata.ints, d.metadata.ints);
  ASSERT_EQ(r.metadata.arrays.size(), 2u);
  expect_equal(r.metadata.arrays.at("policy/fc0/weight"),
               d.metadata.arrays.at("policy/fc0/weight"));
  EXPECT_TRUE(r.metadata.unread.empty());
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
}

TEST(D4rlTest, WriterUsesD4rlDtypesAndGzip) {
  TempDir dir;
  std::string path = dir.file("x.hdf5");
  write_d4rl(path, make_full_data());
  hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  ASSERT_GE(f, 0);
  auto type_of = [&](const char* key) {
    hid_t d = H5Dopen2(f, key, H5P_DEFAULT);
    hid_t t = H5Dget_type(d);
    H5Dclose(d);
    return t;
  };
  hid_t t = type_of("observations");
  EXPECT_EQ(H5Tget_class(t), H5T_FLOAT);
  EXPECT_EQ(H5Tget_size(t), 4u);
  H5Tclose(t);
  t = type_of("terminals");  // h5py's bool: enum of int8 {FALSE=0, TRUE=1}
  ASSERT_EQ(H5Tget_class(t), H5T_ENUM);
  EXPECT_EQ(H5Tget_size(t), 1u);
  char name[16];
  int8_t one = 1;
  ASSERT_GE(H5Tenum_nameof(t, &one, name, sizeof name), 0);
  EXPECT_STREQ(name, "TRUE");
  H5Tclose(t);
  t = type_of("metadata/iteration");
  EXPECT_EQ(H5Tget_class(t), H5T_INTEGER);
  EXPECT_EQ(H5Tget_size(t), 4u);
  H5Tclose(t);
  t = type_of("metadata/algorithm");
  EXPECT_EQ(H5Tget_class(t), H5T_STRING);
  H5Tclose(t);
  hid_t d = H5Dopen2(f, "rewards", H5P_DEFAULT);
  hid_t dcpl = H5Dget_create_plist(d);
  EXPECT_EQ(H5Pget_layout(dcpl), H5D_CHUNKED);
  EXPECT_EQ(H5Pget_nfilters(dcpl), 1);
  unsigned flags = 0;
  size_t n_values = 0;
  EXPECT_EQ(H5Pget_filter2(dcpl, 0, &flags, &n_values, nullptr, 0, nullptr, nullptr),
            H5Z_FILTER_DEFLATE);
  H5Pclose(dcpl);
  H5Dclose(d);
  H5Fclose(f);
}

// HDF5 would stamp each object with the second it was created in; the writer turns that off, so
// the checksum of a dataset file names its contents (docs/results.md compares one across machines).
TEST(D4rlTest, TheSameDataWrittenTwiceGivesTheSameBytes) {
  TempDir dir;
  const Transitions d = make_full_data();
  write_d4rl(dir.file("a.hdf5"), d);
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));  // past the stamps' 1 s resolution
  write_d4rl(dir.file("b.hdf5"), d);
  auto bytes = [](const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  const std::string a = bytes(dir.file("a.hdf5"));
  EXPECT_GT(a.size(), 1000u);
  EXPECT_TRUE(a == bytes(dir.file("b.hdf5")));
}

TEST(D4rlTest, RefusesToOverwriteUnlessAsked) {
  TempDir dir;
  std::string path = dir.file("x.hdf5");
  Transitions d = make_data(3, 2, {4});
  write_d4rl(path, d);
  Transitions other = make_data(3, 2, {6});
  EXPECT_THROW(write_d4rl(path, other), std::runtime_error);
  EXPECT_EQ(read_d4rl(path).num_steps(), 4);
  write_d4rl(path, other, {/*overwrite=*/true});
  EXPECT_EQ(read_d4rl(path).num_steps(), 6);
}

TEST(D4rlTest, InvalidDataIsNotWritten) {
  TempDir dir;
  std::string path = dir.file("x.hdf5");
  Transitions d = make_data(3, 2, {4});
  d.rewards[2] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_THROW(write_d4rl(path, d), std::invalid_argument);
  EXPECT_FALSE(std::filesystem::exists(path));
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
}

TEST(D4rlTest, ReadOptionsSkipLargeOptionalGroups) {
  TempDir dir;
  std::string path = dir.file("x.hdf5");
  write_d4rl(path, make_full_data());
  ReadOptions options;
  options.read_infos = false;
  options.read_next_observations = false;
  options.read_metadata = false;
  Transitions r = read_d4rl(path, options);
  EXPECT_TRUE(r.infos.empty());
  EXPECT_TRUE(r.next_observations.empty());
  EXPECT_TRUE(r.metadata.empty());
  EXPECT_EQ(r.num_steps(), make_full_data().num_steps());
}

TEST(D4rlTest, FileNameRule) {
  EXPECT_EQ(d4rl_file_name("hopper-medium-v2"), "hopper_medium-v2.hdf5");
  EXPECT_EQ(d4rl_file_name("hopper-medium-replay-v2"), "hopper_medium_replay-v2.hdf5");
  EXPECT_EQ(d4rl_file_name("halfcheetah-medium-expert-v2"), "halfcheetah_medium_expert-v2.hdf5");
}

TEST(D4rlTest, ResolvesIdsThroughDatasetDir) {
  TempDir dir;
  setenv("D4RL_DATASET_DIR", dir.path.c_str(), 1);
  try {
    resolve_d4rl_path("walker2d-medium-v2");
    FAIL() << "expected an error for an absent file";
  } catch (const std::runtime_error& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find(dir.file("walker2d_medium-v2.hdf5")), std::string::npos) << msg;
    EXPECT_NE(msg.find("minrnn data download walker2d-medium-v2"), std::string::npos) << msg;
  }
  write_d4rl(dir.file("walker2d_medium-v2.hdf5"), make_data(17, 6, {3}));
  EXPECT_EQ(resolve_d4rl_path("walker2d-medium-v2"), dir.file("walker2d_medium-v2.hdf5"));
  unsetenv("D4RL_DATASET_DIR");
}

TEST(D4rlTest, EnvTable) {
  ASSERT_NE(find_env("Hopper-v2"), nullptr);
  EXPECT_EQ(find_env("hopper-medium-v2")->obs_dim, 11);
  EXPECT_EQ(find_env("ant"), nullptr);
  EXPECT_STREQ(guess_env_from_name("/d/walker2d_medium_replay-v2.hdf5")->name, "walker2d");
  EXPECT_EQ(guess_env_from_dims(17, 6), nullptr);  // halfcheetah or walker2d
  EXPECT_STREQ(guess_env_from_dims(11, 3)->name, "hopper");
  const EnvInfo& hopper = *find_env("hopper");
  EXPECT_LT(hopper.ref_min_return, hopper.ref_max_return);  // D4RL's REF_MIN / REF_MAX
  EXPECT_EQ(hopper.max_episode_steps, 1000);
}

TEST(D4rlTest, CountsEpisodesLongerThanTheTimeLimit) {
  TempDir dir;
  // 600 + 700 steps with no flag between them, as when a collection that ended mid-episode is
  // concatenated with another: one 1 300-step "episode" for a 1 000-step env.
  Transitions d = make_data(11, 3, {5, 600, 700});
  d.terminals[5 + 599] = 0;
  d.timeouts[5 + 599] = 0;
  write_d4rl(dir.file("hopper_joined-v2.hdf5"), d);
  const Dataset joined = load_dataset(dir.file("hopper_joined-v2.hdf5"));
  EXPECT_EQ(joined.max_episode_steps, 1000);
  EXPECT_EQ(joined.episodes_over_time_limit, 1);
  EXPECT_EQ(joined.index.stats.max_length, 1300);
  write_d4rl(dir.file("hopper_split-v2.hdf5"), make_data(11, 3, {5, 600, 700}));
  EXPECT_EQ(load_dataset(dir.file("hopper_split-v2.hdf5")).episodes_over_time_limit, 0);
}

// The data minrnn made says so as training reads it (metadata skipped): `minrnn collect`'s by its
// metadata/env_spec, `minrnn data synth`'s by its metadata/algorithm (walk 47: random data trained
// under a D4RL label stood beside the papers' numbers unmarked); D4RL's own say neither.
TEST(D4rlTest, DataMinrnnMadeIsKnownAsTrainingReadsIt) {
  TempDir dir;
  const ReadOptions lean = ReadOptions{}.only_what_training_reads();
  Transitions d = make_full_data();  // D4RL's metadata: algorithm SAC
  write_d4rl(dir.file("hopper_theirs-v2.hdf5"), d);
  EXPECT_EQ(made_by_minrnn(load_dataset(dir.file("hopper_theirs-v2.hdf5"), lean)), "");
  d.metadata.strings["algorithm"] = kSyntheticAlgorithm;
  write_d4rl(dir.file("hopper_synth-v2.hdf5"), d);
  EXPECT_EQ(made_by_minrnn(load_dataset(dir.file("hopper_synth-v2.hdf5"), lean)),
            "minrnn data synth");
  d.metadata.strings["algorithm"] = "SAC";
  d.metadata.strings["env_spec"] = R"({"id": "Hopper-v4", "max_episode_steps": 1000})";
  write_d4rl(dir.file("hopper_collected-v2.hdf5"), d);
  EXPECT_EQ(made_by_minrnn(load_dataset(dir.file("hopper_collected-v2.hdf5"), lean)),
            "minrnn collect");
  Transitions odd = make_full_data();  // an algorithm that is no single string
  odd.metadata.strings.erase("algorithm");
  odd.metadata.ints["algorithm"] = 3;
  write_d4rl(dir.file("hopper_odd-v2.hdf5"), odd);
  EXPECT_EQ(made_by_minrnn(load_dataset(dir.file("hopper_odd-v2.hdf5"), lean)), "");
}

}  // namespace
}  // namespace minrnn::data
