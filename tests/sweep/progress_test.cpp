// What a local sweep says of its progress (sweep/progress.h): a training run's line and the
// sweep's ETA.
#include "sweep/progress.h"

#include <gtest/gtest.h>

#include <fstream>

#include "rl/progress_log.h"
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
  // Nothing trained here yet (a resumed sweep evaluates its trained runs first: it said "ETA ?"
  // at each of them): the steps left at the rate the runs went at before.
  EXPECT_DOUBLE_EQ(sweep::eta_seconds({100, 0, 3, 2, 60, 16, 2, 50}), 100 / 50.0 + 8 * 3 / 2.0);
}

// That rate: each run's training pace in its metrics.csv (rl::training_pace), the mean of those
// with a row, times the runs the first `parallel` packs train at once.
TEST(SweepEta, BeforeAnyTrainingHereTheRunsEarlierPaceCounts) {
  testing::TempDir tmp;
  std::vector<sweep::SweepRun> runs(3);
  for (size_t i = 0; i < runs.size(); ++i) {
    runs[i].run_dir = (tmp.path / std::to_string(i)).string();
    fs::create_directories(runs[i].run_dir);
  }
  const std::deque<std::vector<int>> packs = {{0, 1}, {2}};
  EXPECT_EQ(sweep::earlier_run_steps_per_s(runs, packs, 1), 0);  // no rows: unknown
  // Each run's pace after its first row (whose window holds the start-up, 2 steps/s), as its own
  // line's ETA takes it: 10 and 20 steps/s, not the wall's 4 and 6.
  const std::string header = "step,loss,lr,grad_norm,steps_per_s,elapsed_s\n";
  std::ofstream(tmp.path / "0/metrics.csv")
      << header << "100,0.9,0.001,1,2,60\n400,0.5,0.001,1,10,100\n";
  std::ofstream(tmp.path / "2/metrics.csv")
      << header << "100,0.9,0.001,1,2,60\n600,0.5,0.001,1,20,100\n";
  EXPECT_DOUBLE_EQ(sweep::earlier_run_steps_per_s(runs, packs, 1), 15 * 2);
  EXPECT_DOUBLE_EQ(sweep::earlier_run_steps_per_s(runs, packs, 2), 15 * 3);
}

// Seed 0 of hop/mingru in `dir`, to train to `max_steps`, evaluated every `eval_every`.
sweep::SweepRun hop_mingru_run(const fs::path& dir, int64_t max_steps, int64_t eval_every) {
  sweep::SweepRun run;
  run.dataset = "hop";
  run.backbone = "mingru";
  run.run_dir = dir.string();
  run.max_steps = max_steps;
  run.eval_every = eval_every;
  return run;
}

// A training run's line: its training rate, and the ETA its own progress line would say: the steps
// left at its training rate, then the evaluations still due at the mean time its rows show they
// took (a walk, 2026-11-30: "ETA 1s" from the training rate, 41 s before the run ended).
TEST(SweepProgress, ARunsEtaCountsTheEvaluationsStillDue) {
  testing::TempDir tmp;
  const sweep::SweepRun run = hop_mingru_run(tmp.path, 2000, 100);
  EXPECT_EQ(sweep::training_progress(run), "hop/mingru/seed0 starting");
  // 400 steps in 80 s of wall time, training alone at 10 a second: its evaluations at 100, 200
  // and 300 took the other 40 s, and 17 are still due (400, ..., 1900 and 2000's).
  std::ofstream(tmp.path / "metrics.csv") << "step,loss,lr,grad_norm,steps_per_s,elapsed_s\n"
                                             "400,0.5,0.001,1,10,80\n";
  EXPECT_EQ(rl::training_eta_seconds(rl::metrics_rows((tmp.path / "metrics.csv").string()),
                                     run.max_steps, run.eval_every),
            rl::training_eta_seconds(400, 2000, 100, 10, 40 / 3.0));
  EXPECT_EQ(sweep::training_progress(run), "hop/mingru/seed0 400/2000 (10.0 steps/s, ETA 6m26s)");
}

// The first row's window holds the run's start-up (CUDA graph capture, GEMM tuning: tens of
// seconds on a GPU): a line after it is at the training pace since, not inflated by it (a review:
// the pace since step 0 said 1m51s here, where 95 s are left).
TEST(SweepProgress, AnEarlyLineLeavesTheStartUpOut) {
  testing::TempDir tmp;
  const sweep::SweepRun run = hop_mingru_run(tmp.path, 10000, 1000);
  // 30 s of start-up, then 100 steps a second.
  std::ofstream(tmp.path / "metrics.csv") << "step,loss,lr,grad_norm,steps_per_s,elapsed_s\n"
                                             "100,1,0.001,1,3.2258064516,31\n"
                                             "200,1,0.001,1,100,32\n"
                                             "300,1,0.001,1,100,33\n"
                                             "400,1,0.001,1,100,34\n"
                                             "500,1,0.001,1,100,35\n";
  EXPECT_EQ(sweep::training_progress(run), "hop/mingru/seed0 500/10000 (100.0 steps/s, ETA 1m35s)");
  // Rows of an older minrnn without steps_per_s: the wall pace since step 0.
  std::ofstream(tmp.path / "metrics.csv") << "step,loss,lr,grad_norm,elapsed_s\n"
                                             "500,1,0.001,1,50\n";
  EXPECT_EQ(sweep::training_progress(run), "hop/mingru/seed0 500/10000 (0.0 steps/s, ETA 15m50s)");
}

}  // namespace
}  // namespace minrnn
