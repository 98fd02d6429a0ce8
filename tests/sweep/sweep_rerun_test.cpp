// A sweep rerun never takes a run directory for one of its own unless it holds the sweep's config,
// and both phases of a run go to the config's device. A run dir another live process holds is
// reported as running there, not failed; a killed sweep takes its children with it.
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

namespace minrnn {
namespace {

namespace fs = std::filesystem;

sweep::SweepSpec one_run_sweep(const fs::path& out) {
  testing::provide_tiny_config_dataset(out.parent_path());
  sweep::SweepSpec s =
      sweep::parse_sweep("datasets: [d]\nbackbones: [mingru]\nseeds: [3]\n", "s.yaml");
  s.config_template = testing::kTinyConfig;
  s.sets = {"max_steps=5"};
  s.out = out.string();
  return s;
}

// A finished run dir as `minrnn train` + `minrnn eval` leave it, trained with these overrides.
fs::path finished_run(const fs::path& out, const std::vector<std::string>& sets) {
  const fs::path run = out / "d/mingru/seed3";
  fs::create_directories(run);
  std::ofstream(run / "config.yaml") << rl::to_yaml(rl::load_config(testing::kTinyConfig, sets));
  std::ofstream(run / "done.json") << "{}\n";
  testing::write_eval_json(run);
  return run;
}

TEST(SweepPlan, AFinishedRunWithTheSweepsConfigIsSkipped) {
  testing::TempDir tmp;
  finished_run(tmp.path / "out", {"backbone=mingru", "max_steps=5", "seed=3"});
  const auto runs = sweep::plan_sweep(one_run_sweep(tmp.path / "out"));
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].state, sweep::RunState::kDone);
}

// --status of a sweep whose --extend trains its finished runs on names the command that does it:
// the same command line, --extend and all (a walk through the docs, 2026-11-29: it said to run
// the sweep again, which without --extend refuses those runs).
TEST(SweepStatus, ARunToExtendNamesTheCommandThatExtendsIt) {
  testing::TempDir tmp;
  const fs::path run = finished_run(tmp.path / "out", {"backbone=mingru", "max_steps=5", "seed=3"});
  std::ofstream(run / "metrics.csv") << "step,loss\n5,0.5\n";
  sweep::SweepSpec s = one_run_sweep(tmp.path / "out");
  s.sets = {"max_steps=8"};
  s.extend = true;
  s.command_options = " --set max_steps=8 --extend";
  ::testing::internal::CaptureStdout();
  sweep::print_sweep_status(s, false);
  const std::string printed = ::testing::internal::GetCapturedStdout();
  EXPECT_NE(printed.find("trained to step 5; `minrnn sweep s.yaml --set max_steps=8 --extend` "
                         "trains it on to 8 (no checkpoint: from step 0)"),
            std::string::npos)
      << printed;
}

TEST(SweepPlan, ARunTrainedWithAnotherConfigIsNeitherSkippedNorResumed) {
  testing::TempDir tmp;
  // The sweep's `set` said max_steps=1000 when this run was trained; now it says 5.
  const fs::path run =
      finished_run(tmp.path / "out", {"backbone=mingru", "max_steps=1000", "seed=3"});
  try {
    sweep::plan_sweep(one_run_sweep(tmp.path / "out"));
    FAIL() << "a run of another config would be reported as the sweep's";
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(run.string()), std::string::npos) << what;
    EXPECT_NE(what.find("max_steps: 1000 -> 5"), std::string::npos) << what;
  }
  // --status shows it, beside the sweep's other runs, rather than refusing the whole sweep.
  const std::vector<sweep::RunStatus> status =
      sweep::sweep_status(one_run_sweep(tmp.path / "out"), nullptr);
  ASSERT_EQ(status.size(), 1u);
  EXPECT_EQ(status[0].state, "mismatched");
  EXPECT_EQ(status[0].failure, "max_steps: 1000 -> 5");
  ::testing::internal::CaptureStdout();  // counted among the runs that need the user (exit 1)
  EXPECT_EQ(sweep::print_sweep_status(one_run_sweep(tmp.path / "out"), false), 1);
  const std::string printed = ::testing::internal::GetCapturedStdout();
  EXPECT_NE(printed.find("1 mismatched"), std::string::npos);
  EXPECT_EQ(printed.find("--extend"), std::string::npos) << "a smaller max_steps cannot extend";
  // Every run another's: the likelier cause (a --set the sweep was started with) is said.
  EXPECT_NE(printed.find(
                "if the sweep was started with other --set or --out options, give the same here"),
            std::string::npos)
      << printed;
  // A run trained to fewer steps than the sweep now asks: --status says --extend trains it on.
  sweep::SweepSpec longer = one_run_sweep(tmp.path / "out");
  longer.sets = {"max_steps=2000"};
  ::testing::internal::CaptureStdout();
  sweep::print_sweep_status(longer, false);
  const std::string extends = ::testing::internal::GetCapturedStdout();
  EXPECT_NE(extends.find("max_steps: 1000 -> 2000): move it away, or run the sweep with --extend"),
            std::string::npos);
  EXPECT_EQ(extends.find("give the same here"), std::string::npos) << extends;
  ::testing::internal::CaptureStdout();
  sweep::print_sweep_status(longer, true);
  EXPECT_NE(::testing::internal::GetCapturedStdout().find("\"extends\": true"), std::string::npos);
  // The same for an unfinished run (its seed differs: trained by another sweep's seed list).
  fs::remove(run / "done.json");
  std::ofstream(run / "config.yaml") << rl::to_yaml(
      rl::load_config(testing::kTinyConfig, {"backbone=mingru", "max_steps=5", "seed=0"}));
  EXPECT_THROW(sweep::plan_sweep(one_run_sweep(tmp.path / "out")), std::invalid_argument);
}

// A finished run of the sweep's config whose eval.json is no result of the sweep's — over another
// number of episodes than its eval_episodes (edited between a crash and the resume), or unreadable
// — is named by the sweep and shown by its --status, not taken as done with that score (or 0).
TEST(SweepPlan, AnEvaluationThatIsNotTheSweepsIsNamed) {
  testing::TempDir tmp;
  sweep::SweepSpec s = one_run_sweep(tmp.path / "out");
  s.eval_episodes = 3;
  const fs::path run = finished_run(tmp.path / "out", {"backbone=mingru", "max_steps=5", "seed=3"});
  testing::write_eval_json(run, 40, 3);
  EXPECT_EQ(sweep::plan_sweep(s)[0].state, sweep::RunState::kDone);
  // `state`: mismatched for another sweep's evaluation, failed for one that is no result at all (as
  // the report lists it).
  auto named = [&](const std::string& why, const std::string& state) {
    try {
      sweep::plan_sweep(s);
      ADD_FAILURE() << "an evaluation that is not the sweep's was taken as done";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
    }
    const std::vector<sweep::RunStatus> status = sweep::sweep_status(s, nullptr);
    EXPECT_EQ(status[0].state, state);
    EXPECT_NE(status[0].failure.find(why.substr(why.find("eval.json"))), std::string::npos)
        << status[0].failure;
    // The run is the sweep's, its result is not: --status says which to move.
    ::testing::internal::CaptureStdout();
    EXPECT_EQ(sweep::print_sweep_status(s, false), 1);
    const std::string printed = ::testing::internal::GetCapturedStdout();
    EXPECT_NE(printed.find(state == "failed" ? "failed (eval.json: " : "its eval.json: "),
              std::string::npos)
        << printed;
    EXPECT_NE(printed.find("move it away and the sweep evaluates the run again"), std::string::npos)
        << printed;
  };
  testing::write_eval_json(run, 40, 1);
  named("seed3/eval.json: eval_episodes: 1 -> 3", "mismatched");
  // Evaluated on other episodes (`eval --seed 12345 --replace`; a walk, 2026-11-30: it went into
  // Table 3 unmarked).
  std::ofstream(run / "eval.json") << R"({"mean_normalized": 40, "episodes": 3, "seed": 12345})";
  named("seed3/eval.json: evaluation seed: 12345 -> 0", "mismatched");
  std::ofstream(run / "eval.json") << "{";
  named("seed3/eval.json: expected JSON with mean_normalized", "failed");
  std::ofstream(run / "eval.json") << R"({"mean_normalized": null, "episodes": 3})";
  named("seed3/eval.json: mean_normalized is null", "failed");
}

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
  finished_run(tmp.path / "out", {"backbone=mingru", "max_steps=2", "seed=3"});
  sweep::SweepSpec s = one_run_sweep(tmp.path / "out");
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
  sweep::SweepSpec s = one_run_sweep(tmp.path / "out");
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
  const fs::path run = finished_run(tmp.path / "out", {"backbone=mingru", "max_steps=5", "seed=3"});
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
  const int failed = sweep::run_sweep(one_run_sweep(tmp.path / "out"), opt, &summary);
  const std::string printed = ::testing::internal::GetCapturedStdout();
  EXPECT_EQ(failed, 0) << printed;
  EXPECT_EQ(summary.interrupted, 0) << printed;
  EXPECT_NE(printed.find("[1/1 done]"), std::string::npos) << printed;
  EXPECT_EQ(sweep::sweep_status(one_run_sweep(tmp.path / "out"), nullptr)[0].state, "done");
}

// --dry-run says of a run the sweep tries again that its last attempt failed (a walk through the
// commands, 2026-11-29: "to train" alone).
TEST(SweepRun, TheDryRunSaysWhichRunsFailedBefore) {
  testing::TempDir tmp;
  const fs::path run = finished_run(tmp.path / "out", {"backbone=mingru", "max_steps=5", "seed=3"});
  fs::remove(run / "done.json");
  fs::remove(run / "eval.json");
  std::ofstream(run / "failed.json") << R"({"phase": "train", "exit_code": 1})";
  sweep::SweepOptions opt;
  opt.dry_run = true;
  ::testing::internal::CaptureStdout();
  sweep::run_sweep(one_run_sweep(tmp.path / "out"), opt);
  const std::string printed = ::testing::internal::GetCapturedStdout();
  EXPECT_NE(printed.find("to train, its last attempt failed (train exit 1)"), std::string::npos)
      << printed;
  EXPECT_EQ(printed.find("holds"), std::string::npos) << printed;
  // A sweep holding the out dir now: the plan says a run now would wait for it (a walk,
  // 2026-11-30: a plain plan, where the sweep itself would exit 73).
  const io::DirLock held((tmp.path / "out").string(), "a test");
  ::testing::internal::CaptureStdout();
  sweep::run_sweep(one_run_sweep(tmp.path / "out"), opt);
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
  const fs::path run = finished_run(tmp.path / "out", {"backbone=mingru", "max_steps=5", "seed=3"});
  fs::remove(run / "done.json");
  std::ofstream(run / "checkpoint.pt") << "a checkpoint";  // only whether it is there is read
  auto said = [&](bool plan) {                             // --dry-run's words, else --status's
    sweep::SweepOptions opt;
    opt.dry_run = true;
    ::testing::internal::CaptureStdout();
    if (plan) {
      sweep::run_sweep(one_run_sweep(tmp.path / "out"), opt);
    } else {
      sweep::print_sweep_status(one_run_sweep(tmp.path / "out"), false);
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
  sweep::SweepSpec s = one_run_sweep(tmp.path / "out");
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
  sweep::SweepSpec s = one_run_sweep(tmp.path / "out");
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

}  // namespace
}  // namespace minrnn
