// Training configs: defaults, overrides, and every value a run cannot use refused by its key and
// where it was set.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "rl/config.h"
#include "tests/rl/fixtures.h"

namespace minrnn {
namespace {

namespace fs = std::filesystem;
using testing::error_of;
using testing::TempDir;

void write(const fs::path& p, const std::string& text) {
  std::ofstream(p) << text;
}

TEST(Config, DefaultsMergeAndOverrides) {
  TempDir tmp;
  write(tmp.path / "defaults.yaml", "lr: 0.001\nembed_dim: 64\nbackbone: minlstm\n");
  write(tmp.path / "run.yaml",
        "defaults: defaults.yaml\ndataset: hopper-medium-v2\nembed_dim: 256\n");
  auto c = rl::load_config((tmp.path / "run.yaml").string(), {"seed=3", "dropout=0"});
  EXPECT_EQ(c.dataset, "hopper-medium-v2");
  EXPECT_EQ(c.embed_dim, 256);  // the file wins over its defaults
  EXPECT_DOUBLE_EQ(c.lr, 0.001);
  EXPECT_EQ(c.backbone, "minlstm");
  EXPECT_EQ(c.seed, 3);
  EXPECT_EQ(c.dropout, 0.0);
  // The resolved YAML reads back to the same config.
  EXPECT_EQ(rl::to_yaml(rl::parse_config(rl::to_yaml(c), "x")), rl::to_yaml(c));
}

// config.yaml holds each number as a person wrote it (the shortest decimal that reads back to the
// same double, not yaml-cpp's 17 digits), and reads back exactly.
TEST(Config, NumbersAreWrittenShortAndReadBackExactly) {
  rl::TrainConfig c;
  c.dataset = "hopper-medium-v2";
  c.dropout = 0.1;
  c.lr = 3e-4;
  c.weight_decay = 1e-5;
  c.top_fraction = 1.0 / 3.0;
  c.target_return = 3600;
  const std::string yaml = rl::to_yaml(c);
  for (const char* line : {"dropout: 0.1\n", "lr: 0.0003\n", "weight_decay: 1.0e-05\n",
                           "top_fraction: 0.3333333333333333\n", "target_return: 3600\n",
                           "return_scale: 1000\n", "grad_clip: 0.25\n"}) {
    EXPECT_NE(yaml.find(line), std::string::npos) << line << " in\n" << yaml;
  }
  const rl::TrainConfig back = rl::parse_config(yaml, "x");
  EXPECT_EQ(back.dropout, c.dropout);
  EXPECT_EQ(back.lr, c.lr);
  EXPECT_EQ(back.weight_decay, c.weight_decay);
  EXPECT_EQ(back.top_fraction, c.top_fraction);
  EXPECT_EQ(back.target_return, c.target_return);
}

TEST(Config, ErrorsNameKeyAndFile) {
  TempDir tmp;
  const auto f = (tmp.path / "bad.yaml").string();
  write(f, "dataset: d\nlearning_rate: 0.1\n");
  auto e = error_of([&] { rl::load_config(f); });
  EXPECT_NE(e.find(f), std::string::npos) << e;
  EXPECT_NE(e.find("learning_rate"), std::string::npos) << e;
  EXPECT_NE(e.find("'learning_rate': unknown key (CORL's dt.py name: here it is 'lr')"),
            std::string::npos)
      << e;

  write(f, "dataset: d\nlr:\n");  // no value: said so, not "a list or map" (walk 46)
  e = error_of([&] { rl::load_config(f); });
  EXPECT_NE(e.find("key 'lr': expected a number, got nothing (an empty value)"), std::string::npos)
      << e;

  write(f, "dataset: d\nembd_dim: 64\n");  // a typo of a key is offered the key
  e = error_of([&] { rl::load_config(f); });
  EXPECT_NE(e.find("'embd_dim': unknown key (did you mean 'embed_dim'?)"), std::string::npos) << e;

  write(f, "dataset: d\nn_layers: three\n");
  e = error_of([&] { rl::load_config(f); });
  EXPECT_NE(e.find("n_layers"), std::string::npos) << e;
  EXPECT_NE(e.find("integer"), std::string::npos) << e;
  EXPECT_NE(e.find(f), std::string::npos) << e;

  write(f, "dataset: d\ndropout: 1.5\n");
  e = error_of([&] { rl::load_config(f); });
  EXPECT_NE(e.find("dropout"), std::string::npos) << e;
  EXPECT_NE(e.find(f), std::string::npos) << e;

  write(f, "dataset: d\nmatmul_precision: bf16\n");
  e = error_of([&] { rl::load_config(f); });
  EXPECT_NE(e.find("matmul_precision"), std::string::npos) << e;
  EXPECT_NE(e.find("fp32 or tf32"), std::string::npos) << e;
  EXPECT_NE(e.find(f), std::string::npos) << e;

  // A key given twice: yaml-cpp keeps both entries, and the last silently won.
  write(f, "dataset: d\nlr: 0.001\nmax_steps: 5\nlr: 0.0005\n");
  e = error_of([&] { rl::load_config(f); });
  EXPECT_NE(e.find(f + ": key 'lr' is given twice (lines 2 and 4)"), std::string::npos) << e;

  write(f, "defaults: missing.yaml\ndataset: d\n");
  e = error_of([&] { rl::load_config(f); });
  EXPECT_NE(e.find("defaults"), std::string::npos) << e;
  EXPECT_NE(e.find("missing.yaml"), std::string::npos) << e;

  // A defaults: that is no regular file (a FIFO would block the reader forever) is refused.
  ASSERT_EQ(::mkfifo((tmp.path / "pipe.yaml").c_str(), 0600), 0);
  write(f, "defaults: pipe.yaml\ndataset: d\n");
  e = error_of([&] { rl::load_config(f); });
  EXPECT_NE(e.find(f + ": key 'defaults'"), std::string::npos) << e;
  EXPECT_NE(e.find("pipe.yaml: not a regular file"), std::string::npos) << e;

  // A key out of range in the defaults file is blamed on that file.
  write(tmp.path / "d.yaml", "batch_size: 0\n");
  write(f, "defaults: d.yaml\ndataset: d\n");
  e = error_of([&] { rl::load_config(f); });
  EXPECT_NE(e.find("d.yaml"), std::string::npos) << e;
  EXPECT_NE(e.find("batch_size"), std::string::npos) << e;

  write(f, "dataset: d\n");
  e = error_of([&] { rl::load_config(f, {"backbone=lstm"}); });
  EXPECT_NE(e.find("--set: key 'backbone'"), std::string::npos) << e;
  e = error_of([&] { rl::load_config(f, {"nonsense"}); });
  EXPECT_NE(e.find("key=value"), std::string::npos) << e;

  // The minimal RNNs' block options are refused where they would be ignored.
  write(f, "dataset: d\nbackbone: transformer\nconv: true\n");
  e = error_of([&] { rl::load_config(f); });
  EXPECT_NE(e.find("conv"), std::string::npos) << e;
  EXPECT_NE(e.find("transformer"), std::string::npos) << e;
  e = error_of([&] { rl::load_config(f, {"conv=false", "log_space=false"}); });
  EXPECT_NE(e.find("--set: key 'log_space'"), std::string::npos) << e;
  e = error_of([&] { rl::load_config(f, {"conv=maybe"}); });
  EXPECT_NE(e.find("true or false"), std::string::npos) << e;
  auto c = rl::load_config(f, {"backbone=minlstm", "log_space=false"});
  EXPECT_TRUE(c.conv);
  EXPECT_FALSE(c.log_space);
}

// Values a run could not use, or could not write down and read back, are refused by key before
// it trains: non-finite floats (config.yaml held `inf`, which it could not read again, and a NaN
// target failed only at the final evaluation), counts past int (the sampler cut 2^32 + 1 to 1), an
// expansion clamped to width 1, options another backbone ignores, `cuda` followed by anything.
TEST(Config, ValuesARunCannotUseAreRefusedByKey) {
  TempDir tmp;
  const auto f = (tmp.path / "c.yaml").string();
  write(f, "dataset: d\n");
  for (const auto& [set, key] : std::vector<std::pair<std::string, std::string>>{
           {"grad_clip=.inf", "grad_clip"},
           {"expansion=.inf", "expansion"},
           {"expansion=1e30", "expansion"},
           {"expansion=1e-9", "expansion"},
           {"return_scale=.inf", "return_scale"},
           {"target_return=.nan", "target_return"},
           {"target_return=-.inf", "target_return"},
           {"target_return=1e300", "target_return"},
           {"weight_decay=.inf", "weight_decay"},
           {"weight_decay=1e30", "weight_decay"},
           {"eval_episodes=4294967297", "eval_episodes"},
           {"eval_episodes=1000001", "eval_episodes"},
           {"batch_size=2147483648", "batch_size"},
           {"context_len=1099511627776", "context_len"},
           {"n_heads=4", "n_heads"},
           {"device=cudagarbage", "device"},
           {"device=cuda:-1", "device"},
       }) {
    try {
      rl::load_config(f, {set});
      ADD_FAILURE() << set << " was taken";
    } catch (const rl::RefusedOverride& e) {  // the override's value, not the file's
      EXPECT_EQ(e.key, key) << set;
      EXPECT_NE(std::string(e.what()).find("--set: key '" + key + "'"), std::string::npos)
          << set << ": " << e.what();
    }
  }
  const std::string e = error_of([&] {
    rl::load_config(f, {"backbone=transformer", "expansion=2"});
  });
  EXPECT_NE(e.find("1 with backbone transformer"), std::string::npos) << e;
  EXPECT_NO_THROW(rl::load_config(f, {"backbone=transformer", "n_heads=4"}));
  EXPECT_NO_THROW(rl::load_config(f, {"expansion=0.02", "embed_dim=32", "device=cuda:1"}));
  EXPECT_NO_THROW(rl::load_config(f, {"target_return=-500"}));
  // A pair made wrong by an override is the override's error (a usage error on a command line),
  // the file's key beside it (a review, 2026-11-30: the file's n_heads was blamed, exit 1).
  write(f, "dataset: d\nbackbone: transformer\nembed_dim: 128\nn_heads: 8\n");
  for (const auto& [set, said] : std::vector<std::pair<std::string, std::string>>{
           {"embed_dim=100", "--set: key 'embed_dim': 100 leaves n_heads wrong (" + f +
                                 ": expected a divisor of embed_dim, got 8 with embed_dim 100)"},
           {"backbone=mingru", "--set: key 'backbone': mingru leaves n_heads wrong (" + f +
                                   ": expected 1 unless backbone is transformer, got 8 with "
                                   "backbone mingru)"},
       }) {
    try {
      rl::load_config(f, {set});
      ADD_FAILURE() << set << " was taken";
    } catch (const rl::RefusedOverride& e) {
      EXPECT_EQ(e.key, rl::override_key(set));
      EXPECT_EQ(std::string(e.what()), said);
    }
  }
  // Both set on the command line, or the pair wrong in the file: the key's own error as before.
  EXPECT_THROW(rl::load_config(f, {"embed_dim=100", "n_heads=3"}), rl::RefusedOverride);
  write(f, "dataset: d\nbackbone: transformer\nembed_dim: 100\nn_heads: 8\n");
  const std::string in_file = error_of([&] { rl::load_config(f); });
  EXPECT_NE(in_file.find(f + ": key 'n_heads': expected a divisor of embed_dim"), std::string::npos)
      << in_file;
}

}  // namespace
}  // namespace minrnn
