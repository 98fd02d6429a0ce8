// What a local sweep says of its progress (sweep/progress.h): a training run's line and the
// sweep's ETA.
#include "sweep/progress.h"

#include <gtest/gtest.h>

#include <fstream>

#include "tests/temp_dir.h"

namespace minrnn {
namespace {

namespace fs = std::filesystem;

TEST(SweepEta, IsTheStepsLeftAtTheRateHereThenTheEvaluationsLeft) {
  // {steps left, steps trained here, evaluations left, evaluations here, elapsed s, evaluations' s,
  // parallel}
  // The fifteenth session's TF32 sweep at its first finish: one pack of 15 trained its 300 000
  // run-steps in 273 s, one evaluation took 10 s, 14 are left, 4 at once. (The ETA by runs' mean
  // wall time said 15m57s; 14 s were left.)
  EXPECT_DOUBLE_EQ(sweep::eta_seconds({0, 300000, 14, 1, 283, 10, 4}), 14 * 10 / 4.0);
  // A third of the steps left, trained here at 300 in 60 s; two evaluations took 16 s, two at once.
  EXPECT_DOUBLE_EQ(sweep::eta_seconds({100, 300, 3, 2, 60, 16, 2}), 100 * 60 / 300.0 + 8 * 3 / 2.0);
  // Nothing trained here while steps are left, or nothing evaluated while evaluations are: unknown.
  EXPECT_LT(sweep::eta_seconds({100, 0, 3, 2, 60, 16, 2}), 0);
  EXPECT_LT(sweep::eta_seconds({100, 300, 3, 0, 60, 0, 2}), 0);
  // Nothing left: no time.
  EXPECT_EQ(sweep::eta_seconds(sweep::SweepPace{}), 0);
}

// A training run's line: its training rate, and the ETA at its wall pace, evaluations included
// (a walk, 2026-11-30: "ETA 1s" from the training rate, 41 s before the run ended).
TEST(SweepProgress, ARunsEtaIsAtItsWallPaceEvaluationsIncluded) {
  testing::TempDir tmp;
  sweep::SweepRun run;
  run.dataset = "hop";
  run.backbone = "mingru";
  run.run_dir = tmp.path.string();
  run.max_steps = 2000;
  EXPECT_EQ(sweep::training_progress(run), "hop/mingru/seed0 starting");
  // 400 steps in 80 s of wall time (5 a second), training alone at 10 a second.
  std::ofstream(tmp.path / "metrics.csv") << "step,loss,lr,grad_norm,steps_per_s,elapsed_s\n"
                                             "400,0.5,0.001,1,10,80\n";
  EXPECT_EQ(sweep::training_progress(run), "hop/mingru/seed0 400/2000 (10.0 steps/s, ETA 5m20s)");
}

}  // namespace
}  // namespace minrnn
