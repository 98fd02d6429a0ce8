// A sweep rerun: both phases of a run go to the config's device, --extend trains finished runs
// further, an evaluation a signal ended after its result was written is done, the dry run and
// --status say where each run is; a run dir another live process holds is reported as running
// there, not failed; a killed sweep takes its children with it.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <fstream>
#include <functional>
#include <sstream>
#include <utility>

#include "io/dir_lock.h"
#include "rl/config.h"
#include "sweep/sweep.h"
#include "tests/rl/fixtures.h"
#include "tests/sweep/sweep_fixtures.h"
#include "tests/text_file.h"

namespace minrnn {
namespace {

namespace fs = std::filesystem;

// A stand-in for the minrnn binary that records each command line and succeeds.
fs::path recording_exe(const fs::path& dir) {
  const fs::path exe = dir / "fake-minrnn";
  std::ofstream(exe) << "#!/bin/sh\necho \"$@\" >> " << (dir / "calls.txt").string() << "\n";
  fs::permissions(exe, fs::perms::owner_all);
  return exe;
}

// Runs the sweep with recording_exe in `dir`; the command lines of its two phases, in order.
std::pair<std::string, std::string> recorded_phases(const sweep::SweepSpec& s,
                                                    const fs::path& dir) {
  sweep::SweepOptions opt;
  opt.exe = recording_exe(dir).string();
  opt.check_devices = false;  // the stand-in trains on no device (a run may ask for cuda here)
  ::testing::internal::CaptureStdout();
  const int failed = sweep::run_sweep(s, opt);
  ::testing::internal::GetCapturedStdout();
  EXPECT_EQ(failed, 0);
  std::ifstream in(dir / "calls.txt");
  std::string train, evaluate;
  std::getline(in, train);
  std::getline(in, evaluate);
  return {train, evaluate};
}

// The sweep's budget raised from 2 to 5 steps: refused with a pointer to --extend, and with it the
// finished run trains further (its child gets --extend) and is evaluated again.
TEST(SweepRun, ALargerMaxStepsTrainsFinishedRunsFurtherOnlyWithExtend) {
  testing::TempDir tmp;
  testing::finished_run(tmp.path / "out", {"backbone=mingru", "max_steps=2", "seed=3"});
  auto s = testing::one_run_sweep(tmp.path / "out");
  try {
    sweep::plan_sweep(s);
    FAIL() << "a larger budget was taken without --extend";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("--extend"), std::string::npos) << e.what();
  }
  s.extend = true;
  const auto runs = sweep::plan_sweep(s);
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].state, sweep::RunState::kPending);
  EXPECT_TRUE(runs[0].extend);
  std::vector<sweep::RunStatus> status = sweep::sweep_status(s, nullptr);
  EXPECT_EQ(status[0].state, "pending") << "the done.json of 2 steps does not finish a 5-step run";

  const auto [train, evaluate] = recorded_phases(s, tmp.path);
  EXPECT_EQ(train.rfind("train ", 0), 0u) << train;
  EXPECT_NE(train.find("--extend"), std::string::npos) << train;
  EXPECT_EQ(evaluate.rfind("eval ", 0), 0u) << evaluate;

  // A lower budget is not an extension, --extend or not.
  s.sets = {"max_steps=1"};
  EXPECT_THROW(sweep::plan_sweep(s), std::invalid_argument);
}

// A run trained on the GPU is evaluated on the CPU (sweep::kEvaluationDevice), into its eval.json.
TEST(SweepRun, EvaluationRunsOnTheCpuWhereverTheRunTrainedAndWritesTheRunsResult) {
  testing::TempDir tmp;
  auto s = testing::one_run_sweep(tmp.path / "out");
  s.sets.push_back("device=cuda");
  const auto [train, evaluate] = recorded_phases(s, tmp.path);
  EXPECT_NE(train.find("--set device=cuda"), std::string::npos) << train;
  EXPECT_EQ(evaluate.rfind("eval ", 0), 0u) << evaluate;
  EXPECT_NE(evaluate.find("--device cpu"), std::string::npos) << evaluate;
  EXPECT_NE(evaluate.find("--replace"), std::string::npos) << evaluate;
}

// An evaluation that a stop's SIGTERM ended after its eval.json was in place (minrnn eval has no
// handler: the signal ends it wherever it is) finished: done, not "trained, not evaluated" (a
// walk through the commands, 2026-11-29: the sweep's last line and its status file said so of a
// run whose eval.json --status read as done).
TEST(SweepRun, AnEvaluationEndedByASignalAfterItsResultWasWrittenIsDone) {
  testing::TempDir tmp;
  const fs::path run =
      testing::finished_run(tmp.path / "out", {"backbone=mingru", "max_steps=5", "seed=3"});
  fs::remove(run / "eval.json");
  std::ofstream(tmp.path / "result.json")
      << R"({"mean_normalized": 50, "episodes": 10, "train_step": 5})";
  const fs::path exe = tmp.path / "fake-minrnn";
  std::ofstream(exe) << "#!/bin/sh\nif [ \"$1\" = eval ]; then cp '"
                     << (tmp.path / "result.json").string()
                     << "' \"$2/eval.json\"; kill -TERM $$; fi\n";
  fs::permissions(exe, fs::perms::owner_all);
  sweep::SweepOptions opt;
  opt.exe = exe.string();
  sweep::SweepSummary summary;
  ::testing::internal::CaptureStdout();
  const int failed = sweep::run_sweep(testing::one_run_sweep(tmp.path / "out"), opt, &summary);
  const std::string printed = ::testing::internal::GetCapturedStdout();
  EXPECT_EQ(failed, 0) << printed;
  EXPECT_EQ(summary.interrupted, 0) << printed;
  EXPECT_NE(printed.find("[1/1 done]"), std::string::npos) << printed;
  EXPECT_EQ(sweep::sweep_status(testing::one_run_sweep(tmp.path / "out"), nullptr)[0].state,
            "done");
}

// --dry-run says of a run the sweep tries again that its last attempt failed (a walk through the
// commands, 2026-11-29: "to train" alone).
TEST(SweepRun, TheDryRunSaysWhichRunsFailedBefore) {
  testing::TempDir tmp;
  const fs::path run =
      testing::finished_run(tmp.path / "out", {"backbone=mingru", "max_steps=5", "seed=3"});
  fs::remove(run / "done.json");
  fs::remove(run / "eval.json");
  std::ofstream(run / "failed.json") << R"({"phase": "train", "exit_code": 1})";
  sweep::SweepOptions opt;
  opt.dry_run = true;
  ::testing::internal::CaptureStdout();
  sweep::run_sweep(testing::one_run_sweep(tmp.path / "out"), opt);
  const std::string printed = ::testing::internal::GetCapturedStdout();
  EXPECT_NE(printed.find("to train, its last attempt failed (train exit 1)"), std::string::npos)
      << printed;
  EXPECT_EQ(printed.find("holds"), std::string::npos) << printed;
  // A sweep holding the out dir now: the plan says a run now would wait for it (a walk,
  // 2026-11-30: a plain plan, where the sweep itself would exit 73).
  const io::DirLock held((tmp.path / "out").string(), "a test");
  ::testing::internal::CaptureStdout();
  sweep::run_sweep(testing::one_run_sweep(tmp.path / "out"), opt);
  const std::string busy = ::testing::internal::GetCapturedStdout();
  EXPECT_NE(busy.find("note: a sweep (pid " + std::to_string(::getpid()) + ") holds "),
            std::string::npos)
      << busy;
}

// A run with a checkpoint is resumed, not trained: --dry-run and --status say so, and of one
// trained through whose done.json was lost, that the sweep finishes and evaluates it (a walk,
// 2026-11-30: the report said in progress, --status "stopped at step 60 of 60", --dry-run "to
// train").
TEST(SweepRun, TheDryRunAndStatusSayARunIsResumedOrFinished) {
  testing::TempDir tmp;
  const fs::path run =
      testing::finished_run(tmp.path / "out", {"backbone=mingru", "max_steps=5", "seed=3"});
  fs::remove(run / "done.json");
  testing::write_stand_in_checkpoint(run);
  auto said = [&](bool plan) {  // --dry-run's words, else --status's
    sweep::SweepOptions opt;
    opt.dry_run = true;
    ::testing::internal::CaptureStdout();
    if (plan) {
      sweep::run_sweep(testing::one_run_sweep(tmp.path / "out"), opt);
    } else {
      sweep::print_sweep_status(testing::one_run_sweep(tmp.path / "out"), false);
    }
    return ::testing::internal::GetCapturedStdout();
  };
  std::ofstream(run / "metrics.csv") << "step,loss\n3,0.5\n";
  EXPECT_NE(said(true).find("to resume from its last checkpoint (stopped at step 3)"),
            std::string::npos)
      << said(true);
  EXPECT_NE(said(false).find("stopped at step 3 of 5"), std::string::npos) << said(false);
  std::ofstream(run / "metrics.csv") << "step,loss\n3,0.5\n5,0.4\n";
  EXPECT_NE(said(true).find("to finish (trained to step 5, no done.json) and evaluate"),
            std::string::npos)
      << said(true);
  EXPECT_NE(said(false).find("trained to step 5 of 5, not marked finished (no done.json)"),
            std::string::npos)
      << said(false);
}

// A run dir held by another live process makes its child exit (train refuses it): the sweep names
// the holder's pid instead of reporting a failure, and does not count it.
TEST(SweepRun, ARunHeldByAnotherProcessIsReportedRunningNotFailed) {
  testing::TempDir tmp;
  auto s = testing::one_run_sweep(tmp.path / "out");
  const fs::path exe = tmp.path / "refusing-minrnn";
  std::ofstream(exe) << "#!/bin/sh\necho 'in use by another process' >&2\nexit 1\n";
  fs::permissions(exe, fs::perms::owner_all);
  sweep::SweepOptions opt;
  opt.exe = exe.string();
  const fs::path run = tmp.path / "out/d/mingru/seed3";
  {
    io::DirLock held(run.string(), "this test");  // this process stands in for the other one
    sweep::SweepOptions dry = opt;
    dry.dry_run = true;  // the plan says so too, not "to train"
    ::testing::internal::CaptureStdout();
    sweep::run_sweep(s, dry);
    const std::string plan = ::testing::internal::GetCapturedStdout();
    EXPECT_NE(plan.find("running in pid " + std::to_string(::getpid()) + " (not started here)"),
              std::string::npos)
        << plan;
    ::testing::internal::CaptureStdout();
    const int failed = sweep::run_sweep(s, opt);
    const std::string out = ::testing::internal::GetCapturedStdout();
    EXPECT_EQ(failed, 0) << out;
    EXPECT_NE(out.find("running in pid " + std::to_string(::getpid())), std::string::npos) << out;
    std::ifstream status(tmp.path / "out/sweep_status.json");
    std::stringstream text;
    text << status.rdbuf();
    EXPECT_NE(text.str().find("running in pid"), std::string::npos) << text.str();
  }
  // Released: the same refusal is now a failure.
  ::testing::internal::CaptureStdout();
  EXPECT_EQ(sweep::run_sweep(s, opt), 1);
  ::testing::internal::GetCapturedStdout();

  // But a child that says a lock refused it (its holder ending before the sweep looks) is not.
  std::ofstream(exe) << "#!/bin/sh\necho 'in use by another process' >&2\nexit " << io::kExitDirBusy
                     << "\n";
  sweep::SweepSummary summary;
  ::testing::internal::CaptureStdout();
  EXPECT_EQ(sweep::run_sweep(s, opt, &summary), 0);
  const std::string out = ::testing::internal::GetCapturedStdout();
  EXPECT_EQ(summary.busy, 1);
  EXPECT_NE(out.find("not started: a run dir of its training was held by another process (exit "
                     "73); the next sweep resumes it"),
            std::string::npos)
      << out;
}

// kill -9 of the sweep takes its children with it: a child that would run for a minute is gone
// within seconds of its sweep's death (no orphan keeps the run dir locked).
TEST(SweepRun, ChildrenDieWithTheSweep) {
  testing::TempDir tmp;
  auto s = testing::one_run_sweep(tmp.path / "out");
  const fs::path exe = tmp.path / "slow-minrnn";
  const fs::path pid_file = tmp.path / "child.pid";
  std::ofstream(exe) << "#!/bin/sh\necho $$ > " << pid_file.string() << ".tmp\nmv "
                     << pid_file.string() << ".tmp " << pid_file.string() << "\nexec sleep 60\n";
  fs::permissions(exe, fs::perms::owner_all);
  sweep::SweepOptions opt;
  opt.exe = exe.string();
  const pid_t sweep = ::fork();
  ASSERT_GE(sweep, 0);
  if (sweep == 0) {
    std::freopen("/dev/null", "w", stdout);
    sweep::run_sweep(s, opt);
    ::_exit(0);
  }
  auto wait_for = [](const std::function<bool()>& done) {
    for (int i = 0; i < 100 && !done(); ++i) ::usleep(50000);  // up to 5 s
    return done();
  };
  ASSERT_TRUE(wait_for([&] { return fs::exists(pid_file); }));
  long child = 0;
  std::ifstream(pid_file) >> child;
  ASSERT_GT(child, 0);
  auto alive = [child] {
    std::ifstream stat("/proc/" + std::to_string(child) + "/stat");
    std::string pid, name, state;
    return bool(stat >> pid >> name >> state) && state != "Z";  // a zombie has ended
  };
  EXPECT_TRUE(alive());
  ::kill(sweep, SIGKILL);
  ::waitpid(sweep, nullptr, 0);
  EXPECT_TRUE(wait_for([&] { return !alive(); })) << "child " << child << " outlived its sweep";
  if (alive()) ::kill(child, SIGKILL);
}

// Where runs train on CUDA, a trained run's evaluation (CPU only) runs beside the next run's
// training, `parallel` of each; on the CPU, whose cores both share, the training waits for it.
// Each phase of the stand-in takes a second; the order of the starts and ends says which.
TEST(SweepRun, OnCudaTheNextTrainingGoesOnBesideAnEvaluation) {
  for (const std::string device : {"cuda", "cpu"}) {
    SCOPED_TRACE(device);
    testing::TempDir tmp;
    sweep::SweepSpec spec =
        sweep::parse_sweep("datasets: [d]\nbackbones: [mingru]\nseeds: [3, 4]\n", "s.yaml");
    spec.config_template = testing::kTinyConfig;
    spec.sets = {"max_steps=5", "device=" + device};
    spec.out = (tmp.path / "out").string();
    spec.pack = 1;  // a process a run: the second run's training is a child of its own
    const testing::TinySweep s(std::move(spec), tmp.path);
    const fs::path calls = tmp.path / "calls.txt", exe = tmp.path / "timed-minrnn";
    std::ofstream(exe) << "#!/bin/sh\necho \"start $*\" >> " << calls.string()
                       << "\nsleep 1\necho \"end $*\" >> " << calls.string() << "\n";
    fs::permissions(exe, fs::perms::owner_all);
    sweep::SweepOptions opt;
    opt.exe = exe.string();
    opt.check_devices = false;  // the stand-in trains on no device
    ::testing::internal::CaptureStdout();
    const int failed = sweep::run_sweep(s, opt);
    const std::string printed = ::testing::internal::GetCapturedStdout();
    EXPECT_EQ(failed, 0) << printed;
    const std::string order = testing::read_text(calls);
    const size_t first_training = order.find("start train");
    const size_t first_evaluation_end = order.find("end eval");
    ASSERT_NE(first_evaluation_end, std::string::npos) << order;
    const size_t next_training = order.find("start train", first_training + 1);
    ASSERT_NE(next_training, std::string::npos) << order;
    if (device == "cuda") {
      EXPECT_LT(next_training, first_evaluation_end) << order;
    } else {
      EXPECT_GT(next_training, first_evaluation_end) << order;
    }
  }
}

}  // namespace
}  // namespace minrnn
