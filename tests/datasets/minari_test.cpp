#include <gtest/gtest.h>

#include <sys/stat.h>
#include <cmath>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "datasets/d4rl.h"
#include "datasets/episodes.h"
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

// What Python's minari 0.5.4 writes (a DataCollector on Hopper-v5), spaces and specs as strings
// holding Python json, with -Infinity/Infinity bounds.
const char* kHopperV5Metadata = R"({"total_episodes": 2, "total_steps": 7, "data_format": "hdf5",
  "jpeg_encoding": true,
  "observation_space": "{\"type\": \"Box\", \"dtype\": \"float64\", \"shape\": [11], \"low\": [-Infinity, -Infinity, -Infinity, -Infinity, -Infinity, -Infinity, -Infinity, -Infinity, -Infinity, -Infinity, -Infinity], \"high\": [Infinity, Infinity, Infinity, Infinity, Infinity, Infinity, Infinity, Infinity, Infinity, Infinity, Infinity]}",
  "action_space": "{\"type\": \"Box\", \"dtype\": \"float32\", \"shape\": [3], \"low\": [-1.0, -1.0, -1.0], \"high\": [1.0, 1.0, 1.0]}",
  "env_spec": "{\"id\": \"Hopper-v5\", \"entry_point\": \"gymnasium.envs.mujoco.hopper_v5:HopperEnv\", \"reward_threshold\": 3800.0, \"nondeterministic\": false, \"max_episode_steps\": 1000, \"order_enforce\": true, \"disable_env_checker\": false, \"kwargs\": {}, \"additional_wrappers\": [], \"vector_entry_point\": null}",
  "dataset_size": 0.1, "dataset_id": "test/hopper/random-v0", "minari_version": "0.5.4",
  "eval_env_spec": "{\"id\": \"Hopper-v5\", \"entry_point\": \"gymnasium.envs.mujoco.hopper_v5:HopperEnv\", \"reward_threshold\": 3800.0, \"nondeterministic\": false, \"max_episode_steps\": 500, \"order_enforce\": true, \"disable_env_checker\": false, \"kwargs\": {\"reset_noise_scale\": 0.01}, \"additional_wrappers\": [], \"vector_entry_point\": null}",
  "ref_max_score": 3000.0, "ref_min_score": -20.0, "num_episodes_average_score": 100})";

TEST(MinariTest, ReadsEpisodesIntoContiguousBuffers) {
  TempDir dir;
  // More than 10 episodes: episode_10 must come after episode_9, not after episode_1.
  std::vector<int> lengths{3, 4, 2, 5, 1, 2, 3, 4, 2, 3, 6, 2};
  std::vector<bool> terminated(lengths.size(), false);
  terminated[1] = terminated[10] = true;
  write_minari(dir.path / "hopper-test", lengths, terminated);
  MinariInfo info;
  Transitions d = read_minari((dir.path / "hopper-test").string(), &info);
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
    EXPECT_NE(std::string(e.what()).find("minrnn data download mujoco/hopper/absent-v0"),
              std::string::npos);
  }
  // A typo of a local dataset is offered that dataset, by its id (a walk, 2026-11-30: its path),
  // before a download.
  try {
    resolve_minari_dir("mujoco/hopper/tset-v0");
    FAIL();
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("did you mean 'mujoco/hopper/test-v0'"), std::string::npos)
        << e.what();
  }
  unsetenv("MINARI_DATASETS_PATH");
}

// main_data.hdf5 named by a path relative to the working folder, from inside data/ or beside it,
// is its dataset's; one outside a data/ folder is refused, naming the folder it is in.
TEST(MinariTest, AMainDataFileNamesItsDataset) {
  TempDir dir;
  write_minari(dir.path / "set", {3, 4}, {true, false});
  const std::filesystem::path before = std::filesystem::current_path();
  std::filesystem::current_path(dir.path / "set" / "data");
  EXPECT_EQ(resolve_minari_dir("main_data.hdf5"), (dir.path / "set").string());
  std::filesystem::current_path(dir.path / "set");
  EXPECT_EQ(resolve_minari_dir("data/main_data.hdf5"), (dir.path / "set").string());
  EXPECT_EQ(load_dataset("data/main_data.hdf5").index.stats.num_episodes, 2);
  std::filesystem::current_path(dir.path);
  EXPECT_EQ(resolve_minari_dir("set/data/main_data.hdf5"), "set");
  std::filesystem::create_directories("loose");
  std::filesystem::copy_file("set/data/main_data.hdf5", "loose/main_data.hdf5");
  try {
    resolve_minari_dir("loose/main_data.hdf5");
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(
        std::string(e.what()),
        "loose/main_data.hdf5: a Minari main_data.hdf5 sits in <dataset>/data/, this one in " +
            (dir.path / "loose").string() + " (move it there, or give a D4RL file another name)");
  }
  std::filesystem::current_path(before);

  // Copied out under another name, it is read as a D4RL file: the error says what it is.
  std::filesystem::copy_file(dir.path / "set" / "data" / "main_data.hdf5", dir.path / "copy.hdf5");
  try {
    read_d4rl((dir.path / "copy.hdf5").string());
    FAIL() << "read a Minari file as a D4RL one";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("key is missing (the file holds episode_* groups: a "
                                         "Minari dataset's data/main_data.hdf5"),
              std::string::npos)
        << e.what();
  }
}

// metadata.json is read only from a regular file: a FIFO there would block the reader.
TEST(MinariTest, AMetadataJsonThatIsNoFileIsAnError) {
  TempDir dir;
  write_minari(dir.path / "set", {3}, {true});
  const std::filesystem::path meta = dir.path / "set" / "data" / "metadata.json";
  std::filesystem::remove(meta);
  ASSERT_EQ(::mkfifo(meta.c_str(), 0600), 0);
  EXPECT_EQ(read_error(dir.path / "set"),
            meta.string() + ": not a regular file (a Minari metadata.json is read from one)");
}

// Without metadata.json a Minari dataset names no environment: refused, not guessed from its id.
TEST(MinariTest, ADatasetWithoutMetadataJsonIsRefused) {
  TempDir dir;
  write_minari(dir.path / "set", {3}, {true});
  const std::filesystem::path meta = dir.path / "set" / "data" / "metadata.json";
  std::filesystem::remove(meta);
  const std::string what = read_error(dir.path / "set");
  EXPECT_EQ(what.rfind(meta.string() + ": missing (", 0), 0u) << what;
}

TEST(MinariTest, ReadsWhatPythonsMinariWrites) {
  TempDir dir;
  write_minari(dir.path / "d", {3, 4}, {true, false});
  write_metadata(dir.path / "d", kHopperV5Metadata);
  MinariInfo info;
  read_minari((dir.path / "d").string(), &info);
  EXPECT_EQ(info.metadata_path, (dir.path / "d" / "data" / "metadata.json").string());
  EXPECT_EQ(info.dataset_id, "test/hopper/random-v0");
  EXPECT_EQ(info.minari_version, "0.5.4");
  EXPECT_FALSE(info.collected_by_minrnn);  // Python's minari made it
  EXPECT_EQ(info.env_id, "Hopper-v5");
  EXPECT_EQ(info.eval_env_id, "Hopper-v5");
  EXPECT_NE(info.eval_env_spec.find("reset_noise_scale"), std::string::npos);
  EXPECT_EQ(info.max_episode_steps, 500);  // the eval spec's
  EXPECT_EQ(info.observation_space.type, "Box");
  EXPECT_EQ(info.observation_space.dtype, "float64");
  EXPECT_EQ(info.observation_space.shape, std::vector<int64_t>{11});
  ASSERT_EQ(info.observation_space.low.size(), 11u);
  EXPECT_EQ(info.observation_space.low[0], -INFINITY);
  EXPECT_EQ(info.observation_space.high[10], INFINITY);
  EXPECT_EQ(info.action_space.low, std::vector<double>(3, -1.0));
  EXPECT_EQ(info.action_space.dtype, "float32");
  EXPECT_TRUE(info.has_ref_scores);
  EXPECT_EQ(info.ref_min_score, -20.0);
  // The dataset to train from names the environment to evaluate in: eval_env_spec wins.
  Dataset ds = load_dataset((dir.path / "d").string());
  EXPECT_EQ(ds.env_spec_field, "eval_env_spec");
  EXPECT_EQ(ds.env_spec, info.eval_env_spec);
  EXPECT_EQ(ds.env, "hopper");
  EXPECT_EQ(ds.max_episode_steps, 500);
  EXPECT_EQ(ds.ref_source, "metadata.json ref_min_score/ref_max_score");
  // An older layout with metadata.json beside data/ is read too.
  std::filesystem::rename(dir.path / "d" / "data" / "metadata.json",
                          dir.path / "d" / "metadata.json");
  read_minari((dir.path / "d").string(), &info);
  EXPECT_EQ(info.metadata_path, (dir.path / "d" / "metadata.json").string());
  EXPECT_EQ(info.env_id, "Hopper-v5");
}

TEST(MinariTest, BadSpacesAreErrorsNamingTheField) {
  TempDir dir;
  write_minari(dir.path / "d", {3, 4}, {true, false});
  write_metadata(
      dir.path / "d",
      R"({"observation_space": "{\"type\": \"Dict\", \"subspaces\": {\"achieved_goal\": {\"type\": \"Box\"}}}"})");
  std::string msg = read_error(dir.path / "d");
  EXPECT_NE(msg.find("metadata.json: observation_space = {\"type\": \"Dict\""), std::string::npos)
      << msg;
  EXPECT_NE(msg.find("Box observation and action spaces only"), std::string::npos) << msg;
  write_metadata(
      dir.path / "d",
      R"({"observation_space": "{\"type\": \"Box\", \"dtype\": \"float64\", \"shape\": [12], \"low\": -Infinity, \"high\": Infinity}"})");
  msg = read_error(dir.path / "d");
  EXPECT_NE(msg.find("observation_space.shape = [12] but the episodes' observations have 11"),
            std::string::npos)
      << msg;
  write_metadata(dir.path / "d",
                 R"({"action_space": "{\"type\": \"Discrete\", \"n\": 3, \"start\": 0}"})");
  msg = read_error(dir.path / "d");
  EXPECT_NE(msg.find("action_space = "), std::string::npos) << msg;
  EXPECT_NE(msg.find("a Discrete space"), std::string::npos) << msg;
  write_metadata(dir.path / "d", R"({"ref_min_score": 5.0, "ref_max_score": 1.0})");
  msg = read_error(dir.path / "d");
  EXPECT_NE(msg.find("ref_max_score > ref_min_score"), std::string::npos) << msg;
  write_metadata(dir.path / "d", R"({"ref_min_score": 5.0})");
  EXPECT_NE(read_error(dir.path / "d").find("ref_min_score without ref_max_score"),
            std::string::npos);
  write_metadata(dir.path / "d", R"({"env_spec": "{\"kwargs\": {}}"})");
  EXPECT_NE(read_error(dir.path / "d").find("env_spec"), std::string::npos);
  write_metadata(dir.path / "d", R"({"dataset_id": )");
  EXPECT_NE(read_error(dir.path / "d").find("not valid JSON"), std::string::npos);
}

// What writing an 11-dim-observation, 3-dim-action Hopper-v5 dataset takes.
MinariWriteOptions hopper_v5_options() {
  MinariWriteOptions o;
  o.dataset_id = "minrnn/hopper/test-v0";
  o.env_spec = R"({"id": "Hopper-v5", "max_episode_steps": 1000, "kwargs": {}})";
  o.observation_space = box_space(11, -INFINITY, INFINITY, "float64");
  o.action_space = box_space(3, -1.0, 1.0, "float32");
  return o;
}

TEST(MinariTest, WriteThenReadIsExact) {
  TempDir dir;
  Transitions d = testing::make_data(11, 3, {4, 6, 3}, /*tail=*/2);
  MinariWriteOptions o = hopper_v5_options();
  o.eval_env_spec = o.env_spec;
  o.has_ref_scores = true;
  o.ref_min_score = -20.5;
  o.ref_max_score = 3000.25;
  o.algorithm_name = "random";
  const std::string out = (dir.path / "minrnn" / "hopper" / "test-v0").string();
  const MinariWriteResult r = write_minari(out, d, o);
  EXPECT_EQ(r.episodes, 3);
  EXPECT_EQ(r.steps, 13);
  EXPECT_EQ(r.dropped_tail_steps, 2);
  EXPECT_FALSE(std::filesystem::exists(out + ".tmp"));
  MinariInfo info;
  const Transitions back = read_minari(out, &info);
  EXPECT_EQ(info.dataset_id, "minrnn/hopper/test-v0");
  EXPECT_EQ(info.env_id, "Hopper-v5");
  EXPECT_EQ(info.ref_min_score, -20.5);
  EXPECT_EQ(info.ref_max_score, 3000.25);
  EXPECT_EQ(info.observation_space.low, std::vector<double>(11, -INFINITY));
  EXPECT_EQ(info.action_space.high, std::vector<double>(3, 1.0));
  EXPECT_EQ(info.episodes_without_end_flag, 0);
  ASSERT_EQ(back.num_steps(), 13);
  const auto n = [](const std::vector<float>& v, int64_t rows, int dim) {
    return std::vector<float>(v.begin(), v.begin() + rows * dim);
  };
  EXPECT_EQ(back.observations, n(d.observations, 13, 11));
  // A Minari episode stores T+1 observations: inside an episode the next observation is the next
  // row's observation; at an episode's end it is the data's last next_observation.
  for (int64_t t = 0; t < 13; ++t) {
    const bool last = d.terminals[t] || d.timeouts[t];
    const float* want = last ? &d.next_observations[t * 11] : &d.observations[(t + 1) * 11];
    EXPECT_EQ(std::vector<float>(back.next_observations.begin() + t * 11,
                                 back.next_observations.begin() + (t + 1) * 11),
              std::vector<float>(want, want + 11))
        << t;
  }
  EXPECT_EQ(back.actions, n(d.actions, 13, 3));
  EXPECT_EQ(back.rewards, n(d.rewards, 13, 1));
  EXPECT_EQ(back.terminals, std::vector<uint8_t>(d.terminals.begin(), d.terminals.begin() + 13));
  EXPECT_EQ(back.timeouts, std::vector<uint8_t>(d.timeouts.begin(), d.timeouts.begin() + 13));
  // Replacing needs overwrite; a bad id and data without next_observations are refused.
  EXPECT_THROW(write_minari(out, d, o), std::runtime_error);
  o.overwrite = true;
  EXPECT_NO_THROW(write_minari(out, d, o));
  o.dataset_id = "no version";
  EXPECT_THROW(write_minari(out, d, o), std::invalid_argument);
  o.dataset_id = "minrnn/hopper/test-v0";
  Transitions no_next = d;
  no_next.next_observations.clear();
  EXPECT_THROW(write_minari(out, no_next, o), std::invalid_argument);
  o.observation_space = box_space(12, -INFINITY, INFINITY, "float64");
  EXPECT_THROW(write_minari(out, d, o), std::invalid_argument);
  EXPECT_EQ(read_minari(out).num_steps(), 13);  // the refused writes left the dataset intact
}

// A dataset directory given with a trailing slash is written, and replaced, like one without.
TEST(MinariTest, ADirectoryWithATrailingSlashIsWrittenAndReplaced) {
  TempDir dir;
  Transitions d = testing::make_data(11, 3, {4, 6, 3}, /*tail=*/0);
  MinariWriteOptions o = hopper_v5_options();
  const std::string out = (dir.path / "set").string() + "/";
  EXPECT_EQ(write_minari(out, d, o).steps, 13);
  o.overwrite = true;
  EXPECT_EQ(write_minari(out, d, o).steps, 13);
  EXPECT_EQ(read_minari(out).num_steps(), 13);
  EXPECT_FALSE(std::filesystem::exists(dir.path / "set.tmp"));
  EXPECT_FALSE(std::filesystem::exists(dir.path / "set.old"));
  EXPECT_FALSE(std::filesystem::exists(dir.path / "set" / ".tmp"));
}

// overwrite replaces a dataset's own files only: a folder with a user's files beside them is
// refused, naming them, and left as it was (a walk, 2026-12-01: NOTES.md and plots/ were deleted).
// Hidden files (a Finder's .DS_Store, an editor's swap file) were refused too (a review,
// 2026-11-30): they are not named, and the new dataset keeps them.
TEST(MinariTest, OverwriteRefusesADatasetFolderHoldingOtherFiles) {
  TempDir dir;
  Transitions d = testing::make_data(11, 3, {4, 6, 3}, /*tail=*/0);
  MinariWriteOptions o = hopper_v5_options();
  const std::filesystem::path set = dir.path / "set";
  write_minari(set.string(), d, o);
  std::ofstream(set / ".DS_Store") << "finder\n";
  std::filesystem::create_directories(set / ".git");
  std::ofstream(set / ".git" / "HEAD") << "ref\n";
  std::ofstream(set / "data" / ".metadata.json.swp") << "swap\n";
  std::ofstream(set / "NOTES.md") << "mine\n";
  std::ofstream(set / "data" / "extra.csv") << "1\n";
  o.overwrite = true;
  try {
    write_minari(set.string(), d, o);
    ADD_FAILURE() << "a folder with a user's files was replaced";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("other files in it (NOTES.md, data/extra.csv)"),
              std::string::npos)
        << e.what();
  }
  EXPECT_TRUE(std::filesystem::exists(set / "NOTES.md"));
  EXPECT_TRUE(std::filesystem::exists(set / "data" / "extra.csv"));
  EXPECT_EQ(read_minari(set.string()).num_steps(), 13);
  std::filesystem::remove(set / "NOTES.md");
  std::filesystem::remove(set / "data" / "extra.csv");
  d = testing::make_data(11, 3, {5, 6, 3}, /*tail=*/0);
  EXPECT_EQ(write_minari(set.string(), d, o).steps, 14);  // its own files alone: replaced
  EXPECT_EQ(read_minari(set.string()).num_steps(), 14);
  const auto text = [](const std::filesystem::path& file) {
    std::ifstream in(file);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  EXPECT_EQ(text(set / ".DS_Store"), "finder\n");
  EXPECT_EQ(text(set / ".git" / "HEAD"), "ref\n");
  EXPECT_EQ(text(set / "data" / ".metadata.json.swp"), "swap\n");
}

TEST(MinariTest, DimsMustMatchTheEnvSpec) {
  TempDir dir;
  write_minari(dir.path / "d", {3}, {true}, /*obs_dim=*/17, /*act_dim=*/6);  // spec says Hopper-v5
  EXPECT_THROW(read_minari((dir.path / "d").string()), std::invalid_argument);
  ReadOptions none;
  none.env = "none";
  EXPECT_EQ(read_minari((dir.path / "d").string(), nullptr, none).obs_dim, 17);
  // The environment asked for is the one named (a docs walk, 2026-11-29: Hopper-v5, the file's),
  // and one that is not known is refused, not skipped.
  write_minari(dir.path / "h", {3}, {true});  // hopper's 11/3
  ReadOptions walker;
  walker.env = "walker2d";
  try {
    read_minari((dir.path / "h").string(), nullptr, walker);
    ADD_FAILURE() << "hopper's dims read as walker2d's";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("have dims 11/3 but walker2d has 17/6"), std::string::npos)
        << e.what();
  }
  ReadOptions unknown;
  unknown.env = "walker3d";
  EXPECT_THROW(read_minari((dir.path / "h").string(), nullptr, unknown), std::invalid_argument);
}

}  // namespace
}  // namespace minrnn::data
