// rl::train_pack: several runs in one process, each trained exactly as alone — the same weights,
// curves and evaluations on the CPU — through kills, and with one run's failure its own. Each test
// runs twice: the runs stepped in turn, and (StackedPackTraining) as one stacked model
// (MINRNN_STACKED_PACK=1, rl/stacked_pack.h; CUDA's default, the CPU's where asked).
#include <gtest/gtest.h>

#include <cstdlib>

#include "rl/trainer.h"
#include "tests/rl/fixtures.h"
#include "tests/scoped_env.h"
#include "tests/text_file.h"

namespace minrnn {
namespace {

namespace fs = std::filesystem;

// MINRNN_STACKED_PACK as asked, for the scope's life.
class StackedPacks {
 public:
  explicit StackedPacks(bool on) : env_("MINRNN_STACKED_PACK", on ? "1" : "0") {}

 private:
  testing::ScopedEnv env_;
};

// Packs stack on CUDA unless MINRNN_STACKED_PACK=0, on the CPU only where =1 asks; another value
// is refused naming the variable.
TEST(PackStacking, IsCudasDefaultAndTheCpusWhereAsked) {
  {
    const testing::ScopedEnv unset("MINRNN_STACKED_PACK", std::nullopt);
    EXPECT_TRUE(rl::packs_stack(true));
    EXPECT_FALSE(rl::packs_stack(false));
  }
  {
    const StackedPacks off(false);
    EXPECT_FALSE(rl::packs_stack(true));
  }
  {
    const StackedPacks on(true);
    EXPECT_TRUE(rl::packs_stack(false));
  }
  const testing::ScopedEnv bad("MINRNN_STACKED_PACK", "yes");
  try {
    rl::packs_stack(true);
    FAIL() << "MINRNN_STACKED_PACK=yes was taken";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("MINRNN_STACKED_PACK=yes"), std::string::npos) << e.what();
  }
}

// One model's step (a run alone, a stacked pack) queues its weight gradients beside its backward
// unless MINRNN_SIDE_WORK=0; a pack of streams' runs only where =1 asks; another value is refused
// naming the variable.
TEST(SideWork, IsOneModelsDefaultAndAPackOfStreamsWhereAsked) {
  {
    const testing::ScopedEnv unset("MINRNN_SIDE_WORK", std::nullopt);
    EXPECT_TRUE(rl::side_work_for(true));
    EXPECT_FALSE(rl::side_work_for(false));
  }
  {
    const testing::ScopedEnv off("MINRNN_SIDE_WORK", "0");
    EXPECT_FALSE(rl::side_work_for(true));
  }
  {
    const testing::ScopedEnv on("MINRNN_SIDE_WORK", "1");
    EXPECT_TRUE(rl::side_work_for(false));
  }
  const testing::ScopedEnv bad("MINRNN_SIDE_WORK", "on");
  EXPECT_THROW(rl::side_work_for(true), std::invalid_argument);
}

rl::PackMember member(const std::string& data, const fs::path& run, int64_t seed,
                      std::vector<std::string> sets = {}) {
  sets.push_back("seed=" + std::to_string(seed));
  sets.push_back("eval_every=10");
  rl::PackMember m{testing::tiny_config(data, "mingru", sets), {}};
  m.options.run_dir = run.string();
  m.options.quiet = true;
  m.options.evaluate = testing::weight_sum_evaluation(run.string());
  return m;
}

// Run `seed` trained alone into `alone`; `packed` ends with its weights.
void expect_weights_as_alone(const std::string& data, const fs::path& packed, const fs::path& alone,
                             int64_t seed) {
  const rl::PackMember m = member(data, alone, seed);
  EXPECT_TRUE(rl::train(m.config, m.options).finished);
  testing::expect_same_weights(packed, alone);
}

// LibTorch holds CUDA's matmul precision for a whole process: a run asking for another one than
// the pack's first fails alone, before it touches its run dir, and the others train.
TEST(Pack, ARunOfAnotherMatmulPrecisionFailsAlone) {
  testing::TempDir tmp;
  const std::string data = testing::write_hopper_dataset(tmp.path, 300);
  const std::vector<rl::PackMember> pack = {
      member(data, tmp.path / "a", 0),
      member(data, tmp.path / "tf32", 1, {"matmul_precision=tf32"}),
      member(data, tmp.path / "b", 2)};
  const auto results = rl::train_pack(pack);
  EXPECT_TRUE(results[0].finished) << results[0].error;
  EXPECT_FALSE(results[1].finished);
  EXPECT_NE(results[1].error.find("matmul_precision tf32 differs"), std::string::npos)
      << results[1].error;
  EXPECT_FALSE(fs::exists(tmp.path / "tf32"));
  EXPECT_TRUE(results[2].finished) << results[2].error;
}

// Each run of a pack ends as the same run trained alone: weights, evals.csv, metrics.csv rows.
void each_run_ends_as_it_would_alone(bool stacked) {
  const StackedPacks mode(stacked);
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
    const fs::path packed = tmp.path / "pack" / std::to_string(seed);
    expect_weights_as_alone(data, packed, alone, seed);
    EXPECT_EQ(testing::read_text(packed / "evals.csv"), testing::read_text(alone / "evals.csv"));
    EXPECT_EQ(testing::metrics_without_timing(packed), testing::metrics_without_timing(alone));
    EXPECT_TRUE(fs::exists(packed / "done.json"));
  }
  // Different seeds: different runs.
  EXPECT_NE(testing::read_text(tmp.path / "pack/0/evals.csv"),
            testing::read_text(tmp.path / "pack/1/evals.csv"));
}
TEST(Pack, EachRunEndsAsItWouldAlone) {
  each_run_ends_as_it_would_alone(false);
}
TEST(StackedPackTraining, EachRunEndsAsItWouldAlone) {
  each_run_ends_as_it_would_alone(true);
}

// A run of a pack killed after its checkpoint at step 20 (stop_after: as if killed there, before
// anything else) while the others went on: the same pack command resumes it, and it ends with the
// weights of an uninterrupted run; the finished ones are left as they are.
void a_kill_inside_a_pack_resumes_to_the_same_weights(bool stacked) {
  const StackedPacks mode(stacked);
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

  expect_weights_as_alone(data, tmp.path / "a", tmp.path / "alone", 0);
  EXPECT_EQ(testing::read_text(tmp.path / "a/evals.csv"),
            testing::read_text(tmp.path / "alone/evals.csv"));
  // And the run that trained on past the kill, in the pack and then alone in it.
  expect_weights_as_alone(data, tmp.path / "b", tmp.path / "b-alone", 1);
}
TEST(Pack, AKillInsideAPackResumesToTheSameWeights) {
  a_kill_inside_a_pack_resumes_to_the_same_weights(false);
}
TEST(StackedPackTraining, AKillInsideAPackResumesToTheSameWeights) {
  a_kill_inside_a_pack_resumes_to_the_same_weights(true);
}

// A pack whose first run is already finished with this config (a sweep's pack re-run after one
// of its runs finished): that run is done, untouched, and the others train.
TEST(Pack, AFinishedFirstRunIsDoneAndTheOthersTrain) {
  testing::TempDir tmp;
  const std::string data = testing::write_hopper_dataset(tmp.path, 300);
  const rl::PackMember finished = member(data, tmp.path / "a", 0);
  ASSERT_TRUE(rl::train(finished.config, finished.options).finished);
  const std::string checkpoint = testing::read_text(tmp.path / "a/checkpoint.pt");

  const auto results = rl::train_pack({finished, member(data, tmp.path / "b", 1)});
  EXPECT_EQ(results[0].error, "");
  EXPECT_TRUE(results[0].finished);
  EXPECT_EQ(testing::read_text(tmp.path / "a/checkpoint.pt"), checkpoint);
  EXPECT_EQ(results[1].error, "");
  EXPECT_TRUE(results[1].finished);
  EXPECT_TRUE(fs::exists(tmp.path / "b/done.json"));
}

// One run's loss is not finite (the data's returns-to-go divided by a return_scale of 1e-38 are
// past float's range; its target, 1e-3, is not): it fails alone, with its reason, its last good
// checkpoint kept; the others train on to the end and end with the weights they get alone.
void a_run_that_diverges_fails_alone(bool stacked) {
  const StackedPacks mode(stacked);
  testing::TempDir tmp;
  const std::string data = testing::write_hopper_dataset(tmp.path, 300);
  std::vector<rl::PackMember> pack = {
      member(data, tmp.path / "ok", 0),
      member(data, tmp.path / "nan", 1, {"return_scale=1e-38", "target_return=1e-3"}),
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

  expect_weights_as_alone(data, tmp.path / "ok", tmp.path / "alone", 0);
}
TEST(Pack, ARunThatDivergesFailsAlone) {
  a_run_that_diverges_fails_alone(false);
}
TEST(StackedPackTraining, ARunThatDivergesFailsAlone) {
  a_run_that_diverges_fails_alone(true);
}

// On CUDA each run of a pack steps on a stream of its own, so the runs overlap on the GPU (or, as
// one stacked model, in batched passes): each still ends with the weights it gets alone, within
// float rounding (CUDA's products and sums are not bitwise those of another shape).
void each_run_ends_with_its_weights_on_cuda(bool stacked) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA GPU visible";
  const StackedPacks mode(stacked);
  testing::TempDir tmp;
  const std::string data = testing::write_hopper_dataset(tmp.path, 300);
  std::vector<rl::PackMember> pack;
  for (int64_t seed : {0, 1, 2, 3}) {
    pack.push_back(member(data, tmp.path / "pack" / std::to_string(seed), seed, {"device=cuda"}));
  }
  for (const auto& r : rl::train_pack(pack)) EXPECT_TRUE(r.finished) << r.error;
  for (int64_t seed : {0, 3}) {
    const rl::PackMember m = member(data, tmp.path / "alone", seed, {"device=cuda"});
    EXPECT_TRUE(rl::train(m.config, m.options).finished);
    const rl::Agent packed = rl::load_agent((tmp.path / "pack" / std::to_string(seed)).string());
    const rl::Agent alone = rl::load_agent((tmp.path / "alone").string());
    auto pa = alone.model->named_parameters();
    for (const auto& p : packed.model->named_parameters()) {
      EXPECT_TRUE(torch::allclose(p.value(), pa[p.key()], 1e-4, 1e-5)) << seed << " " << p.key();
    }
    fs::remove_all(tmp.path / "alone");
  }
}
TEST(PackCuda, EachRunEndsWithTheWeightsItGetsAlone) {
  each_run_ends_with_its_weights_on_cuda(false);
}
TEST(StackedPackTrainingCuda, EachRunEndsWithTheWeightsItGetsAlone) {
  each_run_ends_with_its_weights_on_cuda(true);
}
// The stacked step's weight gradients in line with its backward (MINRNN_SIDE_WORK=0; the test above
// has them on a side stream, a stacked pack's default).
TEST(StackedPackTrainingCuda, WithoutSideWorkEachRunEndsWithTheWeightsItGetsAlone) {
  const testing::ScopedEnv side_work("MINRNN_SIDE_WORK", "0");
  each_run_ends_with_its_weights_on_cuda(true);
}

}  // namespace
}  // namespace minrnn
