// Which environment a run is evaluated in and whose reference scores normalize its returns
// (rl/dataset_env.h): the config's env over what the data suggests.
#include <gtest/gtest.h>

#include <filesystem>
#include <stdexcept>
#include <string>

#include "datasets/d4rl.h"
#include "datasets/episodes.h"
#include "rl/dataset_env.h"
#include "tests/rl/fixtures.h"
#include "tests/temp_dir.h"

namespace minrnn {
namespace {

// A D4RL-layout file of 17 observation and 6 action columns, named as HalfCheetah's: the loader
// guessed HalfCheetah and gave it HalfCheetah's table scores.
data::Dataset named_halfcheetah() {
  data::Dataset ds;
  ds.source = "walker2d-as-halfcheetah.hdf5";
  ds.format = "d4rl";
  ds.env = "halfcheetah";
  ds.env_source = "the file's name";
  ds.data.obs_dim = 17;
  ds.data.act_dim = 6;
  ds.ref_min_return = -280.178953;
  ds.ref_max_return = 12135.0;
  ds.has_ref_returns = ds.ref_from_table = true;
  ds.ref_source = "D4RL table (halfcheetah)";
  return ds;
}

// Walker2d data under a HalfCheetah-like name scored with HalfCheetah's constants (found by an
// audit, 2026-11-29: a normalized 2.3 where Walker2d's give 0.006).
TEST(DatasetEnv, TheConfigsEnvBringsItsOwnTableScores) {
  const rl::DatasetEnv walker = rl::resolve_dataset_env(named_halfcheetah(), "walker2d");
  EXPECT_EQ(walker.env, "walker2d");
  // The user's word against a file's name: trained and evaluated as the config says, with a word.
  EXPECT_EQ(walker.warning,
            "config key env: walker2d (Walker2d-v4) but walker2d-as-halfcheetah.hdf5 holds "
            "HalfCheetah-v4 data (from the file's name); evaluating in Walker2d-v4 as the config "
            "says");
  EXPECT_DOUBLE_EQ(walker.ref_min_score, 1.629008);
  EXPECT_DOUBLE_EQ(walker.ref_max_score, 4592.3);
  EXPECT_EQ(walker.ref_source, "D4RL table (walker2d)");

  const rl::DatasetEnv guessed = rl::resolve_dataset_env(named_halfcheetah(), "");
  EXPECT_DOUBLE_EQ(guessed.ref_min_score, -280.178953);
  EXPECT_EQ(guessed.ref_source, "D4RL table (halfcheetah)");
}

// A file that records its env (a Minari dataset's spec, a `minrnn collect` file's
// metadata/env_spec) is evaluated there: a config naming another is refused before any training
// (walker2d data evaluated in HalfCheetah, of the same widths, scored silently wrong; an audit,
// 2026-11-29). An env guessed from the widths alone is no word of the data's.
TEST(DatasetEnv, AConfigNamingAnotherEnvThanTheDataRecordsIsRefused) {
  data::Dataset ds = named_halfcheetah();
  ds.env = "walker2d";
  ds.env_spec = R"({"id": "Walker2d-v4", "max_episode_steps": 1000})";
  ds.env_spec_field = "metadata/env_spec";
  try {
    rl::resolve_dataset_env(ds, "halfcheetah");
    FAIL() << "evaluated Walker2d-v4 data in HalfCheetah-v4";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()),
              "config key env: halfcheetah (HalfCheetah-v4) but walker2d-as-halfcheetah.hdf5 "
              "holds Walker2d-v4 data (from the file's metadata/env_spec): remove env from the "
              "config to evaluate in the data's own environment");
  }
  EXPECT_EQ(rl::resolve_dataset_env(ds, "walker2d").env_id, "Walker2d-v4");
  EXPECT_EQ(rl::resolve_dataset_env(ds, "").env_source, "the file's metadata/env_spec");

  data::Dataset guessed = named_halfcheetah();
  guessed.env_from_widths = true;
  guessed.env_source = "its widths (obs 17, act 6)";
  EXPECT_EQ(rl::resolve_dataset_env(guessed, "").env_source, "its widths (obs 17, act 6)");
  EXPECT_EQ(rl::resolve_dataset_env(guessed, "walker2d").warning, "");
  guessed.env_spec = ds.env_spec;  // a recorded spec is the data's word, whatever the widths say
  guessed.env_spec_field = ds.env_spec_field;
  EXPECT_THROW(rl::resolve_dataset_env(guessed, "halfcheetah"), std::invalid_argument);
}

// A dataset's own reference scores (a Minari dataset's metadata.json) stay with it.
TEST(DatasetEnv, ADatasetsOwnScoresStay) {
  data::Dataset ds = named_halfcheetah();
  ds.ref_from_table = false;
  ds.ref_min_return = -1;
  ds.ref_max_return = 99;
  ds.ref_source = "metadata.json ref_min_score/ref_max_score";
  const rl::DatasetEnv walker = rl::resolve_dataset_env(ds, "walker2d");
  EXPECT_DOUBLE_EQ(walker.ref_min_score, -1);
  EXPECT_DOUBLE_EQ(walker.ref_max_score, 99);
  EXPECT_EQ(walker.ref_source, ds.ref_source);
}

// A D4RL file whose name says another env than its widths: the config's env, or the file's
// metadata/env_spec, decides; the name is refused only where nothing else names one (a walk,
// 2026-11-30: hopper data named walker2d_medium-v2.hdf5 was refused with `env: hopper` in the
// config, and by `data inspect --env hopper`'s training twin).
TEST(DatasetEnv, AFileNamedForAnotherEnvIsTakenAtTheConfigsWord) {
  testing::TempDir tmp;
  const std::filesystem::path named = tmp.path / "walker2d_medium-v2.hdf5";
  std::filesystem::rename(testing::write_hopper_dataset(tmp.path, 300), named);
  const data::Dataset ds =
      data::load_dataset(named.string(), data::ReadOptions{}.only_what_training_reads());
  EXPECT_EQ(ds.env, "");
  try {
    rl::resolve_dataset_env(ds, "");
    FAIL() << "hopper's widths evaluated with no env named";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(named.string() +
                                         ": 'observations'/'actions' have dims 11/3 but walker2d "
                                         "(the file's name) has 17/6 (give the environment"),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(rl::resolve_dataset_env(ds, "hopper").env_id, "Hopper-v4");
  data::Dataset recorded = ds;  // a `minrnn collect` file's own word
  recorded.env_spec = R"({"id": "Hopper-v4", "max_episode_steps": 1000})";
  recorded.env_spec_field = "metadata/env_spec";
  EXPECT_EQ(rl::resolve_dataset_env(recorded, "").env_id, "Hopper-v4");
}

// 17 observation and 6 action columns (HalfCheetah's and Walker2d's widths) under a name that
// names neither: 300 steps of episodes of 100.
std::string write_unnamed_17_by_6(const std::filesystem::path& dir) {
  data::Transitions d;
  d.obs_dim = 17;
  d.act_dim = 6;
  std::vector<float> obs(17), action(6);
  for (int i = 0; i < 300; ++i) {
    for (int j = 0; j < 17; ++j) obs[j] = 0.01f * float((i * 7 + j * 3) % 50);
    for (int k = 0; k < 6; ++k) action[k] = 0.1f * float((i + k) % 9) - 0.4f;
    d.append_step(obs.data(), action.data(), 1.0f, obs.data(), false, i % 100 == 99);
  }
  const std::string path = (dir / "my-robot-data.hdf5").string();
  data::write_d4rl(path, d);
  return path;
}

// A run on data whose env nothing names trained up to its first evaluation, which failed ("the
// run names no environment"), and again at once at every resume; `--set env=…` was then refused
// as another config, so only --force went on, the training thrown away (walk 47). A run that
// evaluates is refused before its folder is made, the file and the envs its widths fit named.
TEST(DatasetEnv, ARunThatEvaluatesIsRefusedBeforeTrainingWhereNoEnvIsNamed) {
  testing::TrainFixture f;
  const std::string data = write_unnamed_17_by_6(f.tmp.path);
  rl::TrainConfig cfg = testing::tiny_config(data, "mingru");
  cfg.env = "";
  const std::string error = testing::error_of([&] { rl::train(cfg, f.options()); });
  EXPECT_EQ(error,
            data +
                ": no environment to evaluate the run in: the config has no env and the data "
                "names none (no env spec, no environment in its name), and its widths (obs "
                "17, act 6) fit halfcheetah and walker2d; set config key env "
                "(--set env=halfcheetah, or env: in the config)");
  EXPECT_FALSE(std::filesystem::exists(f.run)) << "the refusal came after the run dir was made";
  EXPECT_TRUE(f.evaluated.empty());

  cfg.env = "walker2d";  // the user's word: trained and evaluated there
  rl::train(cfg, f.options());
  EXPECT_EQ(f.evaluated.back(), cfg.max_steps);

  // Training alone (a library caller with no evaluation) needs no env.
  testing::TrainFixture quiet;
  cfg.env = "";
  rl::TrainOptions no_evaluation = quiet.options();
  no_evaluation.evaluate = nullptr;
  EXPECT_TRUE(rl::train(cfg, no_evaluation).finished);
}

}  // namespace
}  // namespace minrnn
