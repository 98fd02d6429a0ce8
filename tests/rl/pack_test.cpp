// rl::train_pack: several runs in one process, each trained exactly as alone — the same weights,
// curves and evaluations on the CPU — through kills, and with one run's failure its own.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "rl/trainer.h"
#include "tests/rl/fixtures.h"
#include "tests/text_file.h"

namespace minrnn {
namespace {

namespace fs = std::filesystem;

// metrics.csv without its timing columns (steps_per_s, elapsed_s differ run to run).
std::string metrics_without_timing(const fs::path& run) {
  std::stringstream in(testing::read_text(run / "metrics.csv")), out;
  for (std::string line; std::getline(in, line);) {
    size_t cut = line.size();
    for (int commas = 0; commas < 2 && cut != std::string::npos; ++commas)
      cut = line.rfind(',', cut - 1);
    out << line.substr(0, cut) << '\n';
  }
  return out.str();
}

rl::PackMember member(const std::string& data, const fs::path& run, int64_t seed,
                      std::vector<std::string> sets = {}) {
  sets.push_back("seed=" + std::to_string(seed));
  sets.push_back("eval_every=10");
  rl::PackMember m{testing::tiny_config(data, "mingru", sets), {}};
  m.options.run_dir = run.string();
  m.options.quiet = true;
  m.options.evaluate = [dir = run.string()](int64_t step, rl::Agent& agent) {
    // A deterministic stand-in for a rollout: a function of the weights, so a run's evals.csv
    // tells its weights apart at every evaluation.
    double sum = 0;
    for (const auto& p : agent.model->parameters()) sum += p.sum().item<double>();
    rl::append_eval_row(dir, {step, sum, 0, sum / 10, 0});
  };
  return m;
}

void expect_same_weights(const fs::path& a, const fs::path& b) {
  const rl::Agent x = rl::load_agent(a.string()), y = rl::load_agent(b.string());
  EXPECT_EQ(x.step, y.step);
  auto py = y.model->named_parameters();
  for (const auto& p : x.model->named_parameters())
    EXPECT_TRUE(torch::equal(p.value(), py[p.key()])) << a << " " << p.key();
}

// Each run of a pack ends as the same run trained alone: weights, evals.csv, metrics.csv rows.
TEST(Pack, EachRunEndsAsItWouldAlone) {
  testing::TempDir tmp;
  const std::string data = testing::write_hopper_dataset(tmp.path, 300);
  std::vector<rl::PackMember> pack;
  for (int64_t seed : {0, 1, 2})
    pack.push_back(member(data, tmp.path / "pack" / std::to_string(seed), seed));
  const auto results = rl::train_pack(pack);
  ASSERT_EQ(results.size(), 3u);
  for (int64_t seed : {0, 1, 2}) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    const auto& r = results[size_t(seed)];
    EXPECT_TRUE(r.finished);
    EXPECT_EQ(r.error, "");
    const fs::path alone = tmp.path / "alone" / std::to_string(seed);
    const rl::PackMember m = member(data, alone, seed);
    EXPECT_TRUE(rl::train(m.config, m.options).finished);
    const fs::path packed = tmp.path / "pack" / std::to_string(seed);
    expect_same_weights(packed, alone);
    EXPECT_EQ(testing::read_text(packed / "evals.csv"), testing::read_text(alone / "evals.csv"));
    EXPECT_EQ(metrics_without_timing(packed), metrics_without_timing(alone));
    EXPECT_TRUE(fs::exists(packed / "done.json"));
  }
  // Different seeds: different runs.
  EXPECT_NE(testing::read_text(tmp.path / "pack/0/evals.csv"),
            testing::read_text(tmp.path / "pack/1/evals.csv"));
}

// A run of a pack killed after its checkpoint at step 20 (stop_after: as if killed there, before
// anything else) while the others went on: the same pack command resumes it, and it ends with the
// weights of an uninterrupted run; the finished ones are left as they are.
TEST(Pack, AKillInsideAPackResumesToTheSameWeights) {
  testing::TempDir tmp;
  const std::string data = testing::write_hopper_dataset(tmp.path, 300);
  std::vector<rl::PackMember> pack = {member(data, tmp.path / "a", 0),
                                      member(data, tmp.path / "b", 1)};
  pack[0].options.stop_after = 20;
  auto results = rl::train_pack(pack);
  EXPECT_FALSE(results[0].finished);
  EXPECT_EQ(results[0].step, 20);
  EXPECT_TRUE(results[1].finished);
  const std::string b_checkpoint = testing::read_text(tmp.path / "b/checkpoint.pt");

  pack[0].options.stop_after = -1;
  results = rl::train_pack(pack);
  EXPECT_TRUE(results[0].finished);
  EXPECT_EQ(results[0].resumed_from, 20);
  EXPECT_EQ(results[1].error, "");  // finished with this config: done, not refused, untouched
  EXPECT_TRUE(results[1].finished);
  EXPECT_EQ(testing::read_text(tmp.path / "b/checkpoint.pt"), b_checkpoint);

  const rl::PackMember alone = member(data, tmp.path / "alone", 0);
  rl::train(alone.config, alone.options);
  expect_same_weights(tmp.path / "a", tmp.path / "alone");
  EXPECT_EQ(testing::read_text(tmp.path / "a/evals.csv"),
            testing::read_text(tmp.path / "alone/evals.csv"));
}

// One run's loss is not finite (its returns-to-go divided by a return_scale of 1e-300, zero in
// float: inf):
// it fails alone, with its reason, its last good checkpoint kept; the others train on to the end
// and end with the weights they get alone.
TEST(Pack, ARunThatDivergesFailsAlone) {
  testing::TempDir tmp;
  const std::string data = testing::write_hopper_dataset(tmp.path, 300);
  std::vector<rl::PackMember> pack = {
      member(data, tmp.path / "ok", 0), member(data, tmp.path / "nan", 1, {"return_scale=1e-300"}),
      member(data, tmp.path / "missing", 2, {"dataset=nowhere.hdf5"})};
  const auto results = rl::train_pack(pack);
  EXPECT_TRUE(results[0].finished);
  EXPECT_EQ(results[0].error, "");
  EXPECT_FALSE(results[1].finished);
  EXPECT_TRUE(results[1].error.find("loss is") != std::string::npos ||
              results[1].error.find("not finite") != std::string::npos)
      << results[1].error;
  EXPECT_FALSE(fs::exists(tmp.path / "nan/done.json"));
  EXPECT_NE(results[2].error.find("nowhere.hdf5"), std::string::npos) << results[2].error;
  EXPECT_FALSE(fs::exists(tmp.path / "missing"));

  const rl::PackMember alone = member(data, tmp.path / "alone", 0);
  rl::train(alone.config, alone.options);
  expect_same_weights(tmp.path / "ok", tmp.path / "alone");
}

}  // namespace
}  // namespace minrnn
