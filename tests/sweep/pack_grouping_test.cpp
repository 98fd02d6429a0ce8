// How a sweep groups its runs into packs by stack shape (sweep.h, group_packs; rl::stack_shape):
// a pack takes its config's seeds, then its stack shape's runs, then (packs of streams) any;
// where packs stack, one shape a pack, split evenly. And the shipped Table 3 sweep's shapes.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "sweep/sweep.h"
#include "tests/paths.h"
#include "tests/scoped_env.h"

namespace minrnn {
namespace {

namespace fs = std::filesystem;

// A run of `config` on CUDA, as plan_sweep would make it.
sweep::SweepRun run_of(const std::string& config, int64_t seed, const std::string& shape,
                       bool stacks = true) {
  sweep::SweepRun r;
  r.config = config;
  r.seed = seed;
  r.run_dir = "out/" + config + "/seed" + std::to_string(seed);
  r.device = "cuda";
  r.stack_shape = shape;
  r.stacks = stacks;
  return r;
}

// After its config's seeds a pack takes the runs of its stack shape (what one stacked model of them
// shares: their env's widths, model and step), then the others: a sweep's packs stack as far as
// they can (rl/trainer.h). A run whose shape is unknown ("") groups by its config alone.
TEST(SweepPlan, PacksTakeTheirStackShapesRunsBeforeOthers) {
  const auto run = [](const std::string& config, int64_t seed, const std::string& shape) {
    return run_of(config, seed, shape);
  };
  // Seed-major, as plan_sweep orders them: a and c share a shape, b has another, u and v none.
  const std::vector<sweep::SweepRun> runs = {
      run("a.yaml", 0, "S"), run("b.yaml", 0, "T"), run("c.yaml", 0, "S"), run("u.yaml", 0, ""),
      run("v.yaml", 0, ""),  run("a.yaml", 1, "S"), run("b.yaml", 1, "T"), run("c.yaml", 1, "S"),
      run("u.yaml", 1, ""),  run("v.yaml", 1, "")};
  sweep::SweepSpec spec;
  spec.pack = 4;
  const std::vector<int> all = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
  {
    const testing::ScopedEnv streams("MINRNN_STACKED_PACK", "0");
    EXPECT_EQ(sweep::group_packs(spec, runs, all),
              (std::vector<std::vector<int>>{{0, 5, 2, 7}, {1, 6, 3, 4}, {8, 9}}));
  }
  // Where packs stack (CUDA's default), one shape a pack, split evenly (S's four runs in packs of
  // up to 3: 2 + 2).
  const testing::ScopedEnv by_default("MINRNN_STACKED_PACK", std::nullopt);
  EXPECT_EQ(sweep::group_packs(spec, runs, all),
            (std::vector<std::vector<int>>{{0, 5, 2, 7}, {1, 6}, {3, 8}, {4, 9}}));
  spec.pack = 3;
  EXPECT_EQ(sweep::group_packs(spec, runs, all),
            (std::vector<std::vector<int>>{{0, 5}, {1, 6}, {2, 7}, {3, 8}, {4, 9}}));
}

// Under `pack: auto` on CUDA a stacked pack takes up to kAutoStackedPack runs of its shape, split
// evenly (45 as 23 + 22); packs of streams up to kAutoGpuPack (30 as 15 + 15 … here 16 + 14:
// streams fill, they do not split).
TEST(SweepPlan, AutoStackedPacksTakeUpTo32RunsOfAShape) {
  std::vector<sweep::SweepRun> runs;
  for (int64_t seed = 0; seed < 45; ++seed) runs.push_back(run_of("t.yaml", seed, "T"));
  for (int64_t seed = 0; seed < 30; ++seed) runs.push_back(run_of("g.yaml", seed, "G"));
  std::vector<int> all(runs.size());
  for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<int>(i);
  const auto sizes = [](const std::vector<std::vector<int>>& packs) {
    std::vector<size_t> n;
    for (const auto& p : packs) n.push_back(p.size());
    return n;
  };
  sweep::SweepSpec spec;  // pack: auto
  {
    const testing::ScopedEnv by_default("MINRNN_STACKED_PACK", std::nullopt);
    EXPECT_EQ(sizes(sweep::group_packs(spec, runs, all)), (std::vector<size_t>{23, 22, 30}));
    spec.pack = 16;  // a number is taken as it is
    EXPECT_EQ(sizes(sweep::group_packs(spec, runs, all)),
              (std::vector<size_t>{15, 15, 15, 15, 15}));
  }
  spec.pack = 0;
  const testing::ScopedEnv streams("MINRNN_STACKED_PACK", "0");
  EXPECT_EQ(sizes(sweep::group_packs(spec, runs, all)), (std::vector<size_t>{16, 16, 16, 16, 11}));
}

// A model without stacked ops (HGRN, conv: rl::stack_refusal) packs as streams do, topped up with
// other runs, and the estimate costs it at the pack's streams rate.
TEST(SweepPlan, RunsThatCannotStackPackAsStreams) {
  const testing::ScopedEnv by_default("MINRNN_STACKED_PACK", std::nullopt);
  const auto run = [](const std::string& config, int64_t seed, bool stacks) {
    return run_of(config, seed, config, stacks);
  };
  const std::vector<sweep::SweepRun> runs = {run("hgrn.yaml", 0, false), run("a.yaml", 0, true),
                                             run("hgrn.yaml", 1, false), run("a.yaml", 1, true)};
  sweep::SweepSpec spec;
  spec.pack = 4;
  EXPECT_EQ(sweep::group_packs(spec, runs, {0, 1, 2, 3}),
            (std::vector<std::vector<int>>{{0, 2, 1, 3}}));
  EXPECT_EQ(sweep::group_packs(spec, {runs[1], runs[0], runs[3], runs[2]}, {0, 1, 2, 3}),
            (std::vector<std::vector<int>>{{0, 2}, {1, 3}}));
}

// The shipped Table 3 sweep: a dataset's env and its config's model
// and step make a run's stack shape — hopper's three datasets share one for the Transformer, but
// not for minGRU, whose medium and medium-replay configs take embed 256 (App. C); halfcheetah's
// differs from hopper's.
TEST(SweepPlan, RunsOfOneEnvAndModelShareAStackShape) {
  const sweep::SweepSpec spec = sweep::load_sweep(
      (fs::path(minrnn::testing::source_dir()) / "configs/sweeps/paper-table3.yaml").string());
  const std::vector<sweep::SweepRun> runs = sweep::plan_sweep(spec);
  const auto shape = [&](const std::string& dataset, const std::string& backbone) {
    for (const auto& r : runs)
      if (r.dataset == dataset && r.backbone == backbone && r.seed == 0) return r.stack_shape;
    ADD_FAILURE() << dataset << " " << backbone << " not planned";
    return std::string();
  };
  EXPECT_FALSE(shape("hopper-medium", "transformer").empty());
  EXPECT_EQ(shape("hopper-medium", "transformer"), shape("hopper-medium-replay", "transformer"));
  EXPECT_EQ(shape("hopper-medium", "transformer"), shape("hopper-medium-expert", "transformer"));
  EXPECT_EQ(shape("hopper-medium", "mingru"), shape("hopper-medium-replay", "mingru"));
  EXPECT_NE(shape("hopper-medium", "mingru"), shape("hopper-medium-expert", "mingru"));
  EXPECT_NE(shape("hopper-medium", "transformer"), shape("halfcheetah-medium", "transformer"));
  EXPECT_NE(shape("hopper-medium", "transformer"), shape("hopper-medium", "minlstm"));
  for (const auto& r : runs) EXPECT_TRUE(r.stacks) << r.run_dir;
  for (const auto& r : runs) EXPECT_EQ(r.stack_shape, shape(r.dataset, r.backbone)) << r.run_dir;
}

}  // namespace
}  // namespace minrnn
