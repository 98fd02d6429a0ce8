// A run's events name its hyper-parameters for TensorBoard's HParams dashboard (rl/run_events.h):
// the session_start_info record holds the config's learning keys (numbers as numbers), grouped
// with the config's other seeds, and a finished run ends its session. The bytes are decoded here
// by the plugin's proto layout (plugin_data.proto); tests/python/tensorboard_events.py asks
// TensorBoard's own HParams plugin for the same.
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <variant>

#include "rl/run_events.h"
#include "rl/trainer.h"
#include "tests/io/event_files.h"
#include "tests/rl/fixtures.h"

namespace minrnn {
namespace {

namespace fs = std::filesystem;

struct SessionStart {
  std::map<std::string, io::HParam::Value> hparams;
  std::string group;
};

// HParamsPluginData { session_start_info = 3 { map<string, Value> hparams = 1; group_name = 4 } }
SessionStart decode_session_start(const std::string& content) {
  SessionStart start;
  for (testing::ProtoFields data(content); data.next();) {
    if (data.field != 3) continue;
    for (testing::ProtoFields info(data.bytes); info.next();) {
      if (info.field == 4) start.group = std::string(info.bytes);
      if (info.field != 1) continue;
      std::string key;
      io::HParam::Value value;
      for (testing::ProtoFields entry(info.bytes); entry.next();) {
        if (entry.field == 1) key = std::string(entry.bytes);
        if (entry.field != 2) continue;
        for (testing::ProtoFields v(entry.bytes); v.next();) {  // google.protobuf.Value
          if (v.field == 3) value = std::string(v.bytes);
          if (v.field != 2) continue;
          double number;
          std::memcpy(&number, &v.number, sizeof number);
          value = number;
        }
      }
      start.hparams[key] = value;
    }
  }
  return start;
}

// The records of `plugin` in the run's event files, in order.
std::vector<testing::PluginRecord> plugin_records(const fs::path& run, const std::string& plugin) {
  std::vector<testing::PluginRecord> records;
  for (const auto& file : testing::event_files(run))
    for (const auto& event : testing::read_event_file(file))
      for (const auto& record : event.plugin_records)
        if (record.plugin == plugin) records.push_back(record);
  return records;
}

TEST(RunHParams, ATrainedRunIsASessionOfItsConfigsGroup) {
  testing::TrainFixture f;
  const auto cfg = testing::tiny_config(f.data, "mingru", {"max_steps=2", "seed=3", "lr=0.0003"});
  rl::train(cfg, f.options());
  const auto records = plugin_records(f.run, "hparams");
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0].tag, "_hparams_/session_start_info");
  const SessionStart start = decode_session_start(records[0].content);
  EXPECT_EQ(std::get<std::string>(start.hparams.at("backbone")), "mingru");
  EXPECT_EQ(std::get<double>(start.hparams.at("seed")), 3.0);
  EXPECT_EQ(std::get<double>(start.hparams.at("lr")), 0.0003);
  EXPECT_EQ(std::get<double>(start.hparams.at("embed_dim")), double(cfg.embed_dim));
  EXPECT_EQ(std::get<std::string>(start.hparams.at("matmul_precision")), "fp32");
  for (const char* not_learning :
       {"device", "eval_every", "log_every", "checkpoint_every", "max_steps"})
    EXPECT_EQ(start.hparams.count(not_learning), 0u) << not_learning;
  std::string group;
  rl::hparams_of(cfg, &group);
  EXPECT_EQ(start.group, group);

  // The run finished: its session ended, a success (HParamsPluginData.session_end_info = 4).
  EXPECT_EQ(records[1].tag, "_hparams_/session_end_info");
  testing::ProtoFields data(records[1].content);
  ASSERT_TRUE(data.next());
  EXPECT_EQ(data.field, 4);
  testing::ProtoFields end(data.bytes);
  ASSERT_TRUE(end.next());
  EXPECT_EQ(end.field, 1);
  EXPECT_EQ(end.number, 1u);  // STATUS_SUCCESS
}

// A run that fails ends its session a failure (STATUS_FAILURE), where it was left "running" (an
// audit, 2026-11-29).
TEST(RunHParams, AFailedRunsSessionEndsAFailure) {
  testing::TrainFixture f;
  const auto cfg = testing::tiny_config(f.data, "mingru", {"max_steps=6", "eval_every=4"});
  rl::TrainOptions o = f.options();
  o.evaluate = [](int64_t, rl::Agent&, rl::EvaluationProgress&) {
    throw std::runtime_error("the evaluation failed");
  };
  EXPECT_THROW(rl::train(cfg, o), std::exception);
  const auto records = plugin_records(f.run, "hparams");
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[1].tag, "_hparams_/session_end_info");
  testing::ProtoFields data(records[1].content);
  ASSERT_TRUE(data.next());
  testing::ProtoFields end(data.bytes);
  ASSERT_TRUE(end.next());
  EXPECT_EQ(end.field, 1);
  EXPECT_EQ(end.number, 2u);  // STATUS_FAILURE
}

// A configuration's seeds share a group (the dashboard's one row of them); any other key that
// changes what is learnt makes another.
TEST(RunHParams, SeedsShareAGroupAndOtherKeysSplitIt) {
  rl::TrainConfig a, b, c;
  b.seed = a.seed + 1;
  c.lr = a.lr * 2;
  std::string ga, gb, gc;
  rl::hparams_of(a, &ga);
  rl::hparams_of(b, &gb);
  rl::hparams_of(c, &gc);
  EXPECT_EQ(ga, gb);
  EXPECT_NE(ga, gc);
  EXPECT_EQ(ga.find("seed="), std::string::npos) << ga;
  EXPECT_NE(ga.find("backbone=mingru"), std::string::npos) << ga;
  rl::TrainConfig on_gpu = a;
  on_gpu.device = "cuda";
  std::string gd;
  EXPECT_EQ(rl::hparams_of(on_gpu, &gd).size(), rl::hparams_of(a, &ga).size());
  EXPECT_EQ(gd, ga);  // where a run computes is not what it learns
  // TensorBoard keeps a run's first record: a run --extend lengthened stays in its seeds' group.
  rl::TrainConfig extended = a;
  extended.max_steps = a.max_steps * 2;
  std::string ge;
  rl::hparams_of(extended, &ge);
  EXPECT_EQ(ge, ga);
}

}  // namespace
}  // namespace minrnn
