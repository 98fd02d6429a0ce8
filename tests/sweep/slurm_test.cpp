// `--backend slurm` without a cluster: the `slurm:` section's validation, the batch script, and
// submission against stand-in sbatch/squeue programs (a refusal, a second submission while the
// first array is queued). tests/slurm runs the same against a real Slurm. Also `--status` from run
// directories.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "io/dir_lock.h"
#include "rl/config.h"
#include "sweep/slurm.h"
#include "sweep/sweep.h"
#include "tests/rl/fixtures.h"
#include "tests/sweep/slurm_fixtures.h"
#include "tests/sweep/sweep_fixtures.h"
#include "tests/text_file.h"

namespace minrnn {
namespace {

namespace fs = std::filesystem;

using testing::kRuns;
using testing::PathOnly;
using testing::read_text;
using testing::spec_in;
using testing::write_exe;

TEST(SweepSlurmSpec, ParsesEveryKey) {
  const auto s = sweep::parse_sweep(
      kRuns +
          "slurm:\n  partition: gpu,gpu-long\n  time: \"1-02:00:00\"\n  cpus_per_task: 4\n"
          "  mem: 16G\n  gpus: 1\n  account: proj\n  qos: normal\n  array_throttle: 20\n"
          "  signal_before: 300\n  setup: [\"module load cuda\"]\n"
          "  sbatch_args: [--constraint=a100, --exclusive]\n",
      "s.yaml");
  EXPECT_EQ(s.slurm.partition, "gpu,gpu-long");
  EXPECT_EQ(s.slurm.time, "1-02:00:00");
  EXPECT_EQ(s.slurm.cpus_per_task, 4);
  EXPECT_EQ(s.slurm.mem, "16G");
  EXPECT_EQ(s.slurm.gpus, 1);
  EXPECT_EQ(s.slurm.account, "proj");
  EXPECT_EQ(s.slurm.qos, "normal");
  EXPECT_EQ(s.slurm.array_throttle, 20);
  EXPECT_EQ(s.slurm.signal_before, 300);
  EXPECT_EQ(s.slurm.setup, (std::vector<std::string>{"module load cuda"}));
  EXPECT_EQ(s.slurm.sbatch_args, (std::vector<std::string>{"--constraint=a100", "--exclusive"}));
  for (const char* t : {"30", "10:00", "4:00:00", "2-0", "2-12:30", "UNLIMITED"})
    EXPECT_EQ(testing::sweep_error_of(kRuns + "slurm: {time: \"" + t + "\"}\n"), "") << t;
}

// Refused while parsing, so before anything is planned or submitted.
TEST(SweepSlurmSpec, BadKeysAndValuesAreRefusedByName) {
  auto expect = [](const std::string& slurm, const std::string& key) {
    const std::string err = testing::sweep_error_of(kRuns + "slurm: " + slurm + "\n");
    EXPECT_NE(err.find("my_sweep.yaml"), std::string::npos) << slurm << ": " << err;
    EXPECT_NE(err.find("'slurm." + key + "'"), std::string::npos) << slurm << ": " << err;
  };
  expect("{partion: gpu}", "partion");
  EXPECT_NE(testing::sweep_error_of(kRuns + "slurm: {partion: gpu}\n")
                .find("(did you mean 'partition'?)"),
            std::string::npos);
  expect("{time: two hours}", "time");
  expect("{time: \"1:2:3:4\"}", "time");
  expect("{time: \"99999999999999999999\"}", "time");  // past int64: named, not stoll's error
  expect("{mem: lots}", "mem");
  expect("{cpus_per_task: 0}", "cpus_per_task");
  expect("{cpus_per_task: four}", "cpus_per_task");
  expect("{gpus: -1}", "gpus");
  expect("{gres: \"gpu 1\"}", "gres");
  expect("{partition: \"a;rm -rf\"}", "partition");
  expect("{array_throttle: 0}", "array_throttle");
  expect("{sbatch_args: [exclusive]}", "sbatch_args");
  expect("{sbatch_args: [\"--array=1-3\"]}", "sbatch_args");
  expect("{sbatch_args: [-o, x]}", "sbatch_args");
  expect("{setup: \"module load cuda\"}", "setup");
  expect("{gpus: 1, gres: \"gpu:1\"}", "gpus");
  EXPECT_NE(testing::sweep_error_of(kRuns + "slurm: [gpu]\n").find("'slurm'"), std::string::npos);
}

TEST(SweepSlurmScript, OneArrayTaskPerUnfinishedRun) {
  testing::TempDir tmp;
  const sweep::SweepSpec s =
      spec_in(tmp.path,
              "slurm: {partition: debug, time: \"10:00\", array_throttle: 3, mem: 1G, gpus: 1}\n");
  const auto runs = sweep::plan_sweep(s);
  ASSERT_EQ(runs.size(), 4u);
  EXPECT_EQ(sweep::slurm_array_spec({0, 2, 3}, 3), "0,2-3%3");
  EXPECT_EQ(sweep::slurm_array_spec({1}, 0), "1");
  const std::string script = sweep::slurm_batch_script(s, runs, {{0}, {2}, {3}}, "/opt/minrnn");
  for (const char* line :
       {"#SBATCH --array=0,2-3%3\n", "#SBATCH --requeue\n", "#SBATCH --signal=B:USR1@120\n",
        "#SBATCH --partition=debug\n", "#SBATCH --time=10:00\n", "#SBATCH --mem=1G\n",
        "#SBATCH --gres=gpu:1\n", "#SBATCH --open-mode=append\n", "MINRNN='/opt/minrnn'\n",
        "scontrol requeue", "--replace"}) {
    EXPECT_NE(script.find(line), std::string::npos) << line << " in\n" << script;
  }
  EXPECT_NE(script.find("  2) RUN_DIRS=("), std::string::npos) << script;
  EXPECT_EQ(script.find("  1) RUN_DIRS=("), std::string::npos) << script;
  EXPECT_NE(script.find("--quiet --set max_steps=5)\n     STEPS=(5) ;;"), std::string::npos)
      << script;
  // Valid bash.
  const fs::path file = tmp.path / "x.sbatch";
  std::ofstream(file) << script;
  EXPECT_EQ(std::system(("bash -n '" + file.string() + "'").c_str()), 0) << script;
}

TEST(SweepSlurmSubmit, WithoutSbatchOnPathSaysSoAndSubmitsNothing) {
  testing::TempDir tmp;
  fs::create_directories(tmp.path / "bin");
  const PathOnly path(tmp.path / "bin");
  try {
    sweep::submit_slurm_sweep(spec_in(tmp.path), {});
    FAIL() << "submitted without sbatch";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("no `sbatch` on PATH"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(tmp.path / "out/slurm/job.json"));
}

// Runs whose dataset is missing would each fail on the cluster: refused before anything is
// written or submitted, naming the download command.
TEST(SweepSlurmSubmit, AMissingDatasetIsRefusedBeforeAnythingIsWritten) {
  testing::TempDir tmp;
  auto s = spec_in(tmp.path);
  s.sets.push_back("dataset=hopper-expert-v2");  // not in this test's D4RL_DATASET_DIR
  try {
    sweep::submit_slurm_sweep(s, {});
    FAIL() << "submitted runs without their data";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("minrnn data download hopper-expert-v2"),
              std::string::npos)
        << e.what();
  }
  EXPECT_FALSE(fs::exists(tmp.path / "out"));
}

// Submissions of the four runs against stand-in sbatch and squeue (slurm: {partition: nope}).
class SlurmSubmitOfFourRuns : public ::testing::Test {
 protected:
  testing::TempDir tmp;
  const fs::path bin = tmp.path / "bin";
  const PathOnly path{bin};
  const testing::TinySweep s = spec_in(tmp.path, "slurm: {partition: nope}\n");
  const std::string tag = "minrnn:" + fs::absolute(s.out).string();  // the job's --comment

  // One run done already (not submitted); sbatch answers job 4242 (its arguments in sbatch.args)
  // and squeue lists two of the sweep's tasks, queued and running.
  void make_sbatch_accept_and_squeue_queue() {
    const fs::path done = tmp.path / "out/d/mingru/seed0";
    fs::create_directories(done);
    testing::write_run_config(done, {"backbone=mingru", "max_steps=5", "seed=0"});
    std::ofstream(done / "done.json") << "{}\n";
    testing::write_eval_json(done);
    write_exe(bin / "sbatch",
              "echo \"$@\" > " + (tmp.path / "sbatch.args").string() + "\necho 4242\n");
    write_exe(bin / "squeue",
              "echo '1|PENDING|0:00||" + tag + "'\necho '2|RUNNING|0:01|n|" + tag + "'\n");
  }
};

// sbatch refuses: its message is quoted, the sweep dir says so, and a later call submits anew.
TEST_F(SlurmSubmitOfFourRuns, ARefusalIsQuotedAndTheNextCallSubmitsAnew) {
  write_exe(bin / "sbatch",
            "echo 'sbatch: error: invalid partition specified: nope' >&2\nexit 1\n");
  try {
    testing::submit_quietly(s);
    FAIL() << "a refusal was taken for a submission";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("invalid partition specified: nope"), std::string::npos)
        << e.what();
  }
  EXPECT_TRUE(fs::exists(tmp.path / "out/slurm/submit_error.txt"));
  EXPECT_FALSE(fs::exists(tmp.path / "out/slurm/job.json"));
  make_sbatch_accept_and_squeue_queue();
  EXPECT_EQ(testing::submit_quietly(s), 0);
  EXPECT_FALSE(fs::exists(tmp.path / "out/slurm/submit_error.txt"));
}

// A submission records its job and prints its header once; while the array is queued a second
// submission (and a local sweep) is refused naming the job, printing nothing before its error.
TEST_F(SlurmSubmitOfFourRuns, AQueuedArrayIsSubmittedOnce) {
  make_sbatch_accept_and_squeue_queue();
  sweep::SweepSpec with_options = s;  // as `minrnn sweep` records its command line's
  with_options.command_options = " --set 'seed=1 2' --out " + s.out;
  ::testing::internal::CaptureStdout();
  EXPECT_EQ(sweep::submit_slurm_sweep(with_options, {}), 0);
  const std::string submitted = ::testing::internal::GetCapturedStdout();
  // The hint to watch it repeats the command line's options: a bare `--status` looked in the
  // file's `out` (a docs walk, 2026-11-29).
  EXPECT_NE(submitted.find("watch: minrnn sweep " + s.file + " --set 'seed=1 2' --out " + s.out +
                           " --status"),
            std::string::npos)
      << submitted;
  const auto job = nlohmann::json::parse(read_text(tmp.path / "out/slurm/job.json"));
  EXPECT_EQ(job["job_id"], "4242");
  EXPECT_EQ(job["array"], "1-3");
  EXPECT_NE(read_text(tmp.path / "sbatch.args").find("--parsable"), std::string::npos);
  EXPECT_NE(read_text(tmp.path / "out/slurm/sweep.sbatch").find("#SBATCH --array=1-3\n"),
            std::string::npos);

  // The header came once, for the submission; a refusal prints nothing before its error, not
  // even a run a process holds (a walk, 2026-11-30: "running in pid N here, not submitted" came
  // first and read as if the others were).
  const std::string header = "→ Slurm job array of 3 task(s)";
  EXPECT_EQ(submitted.find(header), submitted.rfind(header)) << submitted;
  EXPECT_NE(submitted.find(header), std::string::npos) << submitted;
  const io::DirLock held((tmp.path / "out/d/minlstm/seed0").string(), "a test");
  ::testing::internal::CaptureStdout();
  for (int attempt = 0; attempt < 2; ++attempt) {
    try {
      if (attempt == 0)
        sweep::submit_slurm_sweep(s, {});
      else
        sweep::run_sweep(s, {});
      ADD_FAILURE() << "a second sweep of a queued array";
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find("4242"), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(::testing::internal::GetCapturedStdout(), "");
}

// Once squeue no longer knows the job (nor lists another of the sweep's tag), the unfinished runs
// are submitted again.
TEST_F(SlurmSubmitOfFourRuns, AnArraySqueueNoLongerKnowsIsSubmittedAgain) {
  make_sbatch_accept_and_squeue_queue();
  ASSERT_EQ(testing::submit_quietly(s), 0);
  write_exe(bin / "squeue",
            "case \"$*\" in *--jobs=*) echo 'slurm_load_jobs error: Invalid job id specified' >&2; "
            "exit 1 ;; esac\n");
  write_exe(bin / "sbatch", "echo 4243\n");
  EXPECT_EQ(testing::submit_quietly(s), 0);
  EXPECT_EQ(nlohmann::json::parse(read_text(tmp.path / "out/slurm/job.json"))["job_id"], "4243");
}

// A trained run whose evaluation failed (done.json and failed.json, no eval.json) is failed, as
// the sweep said, not "trained, not evaluated" with an exit status of 0.
TEST(SweepStatus, ARunWhoseEvaluationFailedIsFailed) {
  testing::TempDir tmp;
  const auto s = spec_in(tmp.path);
  const fs::path run = fs::path(s.out) / "d/mingru/seed0";
  fs::create_directories(run);
  testing::write_run_config(run, {"backbone=mingru", "max_steps=5", "seed=0"});
  std::ofstream(run / "done.json") << "{}\n";
  EXPECT_EQ(sweep::sweep_status(s, nullptr)[0].state, "trained");
  std::ofstream(run / "failed.json") << "{\"phase\": \"eval\", \"exit_code\": 1}\n";
  const sweep::RunStatus status = sweep::sweep_status(s, nullptr)[0];
  EXPECT_EQ(status.state, "failed");
  EXPECT_EQ(status.failure, "eval exit 1");
  // A hand-edited failed.json of other types is read as unknown, not a crash of --status (a code
  // review, 2026-11-29: nlohmann's value() threw type_error.302).
  std::ofstream(run / "failed.json") << "{\"phase\": 3, \"exit_code\": \"one\"}\n";
  EXPECT_EQ(sweep::sweep_status(s, nullptr)[0].failure, "? exit ?");
}

// --status reads the run directories: done with its score, failed with its log, checkpointed but
// not running, held by a live process, untouched; and a queued task's state from squeue. The four
// runs, in the sweep's order (seed by seed): done, failed, stopped, held (by this process).
class SweepStatusOfFourRuns : public ::testing::Test {
 protected:
  testing::TempDir tmp;
  const fs::path bin = tmp.path / "bin";
  const PathOnly path{bin};
  const testing::TinySweep s = spec_in(tmp.path);
  const fs::path out = s.out;
  const fs::path done = out / "d/mingru/seed0", failed = out / "d/minlstm/seed0",
                 stopped = out / "d/mingru/seed1", held = out / "d/minlstm/seed1";
  std::optional<io::DirLock> lock;

  void SetUp() override {
    for (const auto& d : {done, failed, stopped, held}) fs::create_directories(d);
    testing::write_run_config(done, {"backbone=mingru", "max_steps=5", "seed=0"});
    std::ofstream(done / "done.json") << "{}\n";
    std::ofstream(done / "eval.json") << "{\"mean_normalized\": 12.5}\n";
    std::ofstream(failed / "failed.json") << "{\"phase\": \"train\", \"exit_code\": 1}\n";
    std::ofstream(stopped / "metrics.csv") << "step,loss\n1,0.5\n3,0.4\n";
    testing::write_run_config(stopped, {"backbone=mingru", "max_steps=5", "seed=1"});
    testing::write_stand_in_checkpoint(stopped);
    lock.emplace(held.string(), "this test");
    std::ofstream(held / "metrics.csv") << "step,loss\n2,0.5\n";
  }

  // A Slurm submission, job 77: squeue says task 1 is pending and task 2 running on node7; sacct
  // is off.
  void submit_to_slurm() {
    fs::create_directories(out / "slurm");
    std::ofstream(out / "slurm/job.json") << "{\"job_id\": \"77\"}\n";
    write_exe(bin / "squeue", "echo '1|PENDING|0:00|(Priority)'\necho '2|RUNNING|1:05|node7'\n");
    write_exe(bin / "sacct", "echo 'Slurm accounting storage is disabled' >&2\nexit 1\n");
  }
};

TEST_F(SweepStatusOfFourRuns, EveryStateFromTheRunDirectories) {
  std::vector<std::string> notes;
  const auto statuses = sweep::sweep_status(s, &notes);
  ASSERT_EQ(statuses.size(), 4u);
  EXPECT_EQ(statuses[0].state, "done");
  EXPECT_DOUBLE_EQ(statuses[0].score, 12.5);
  EXPECT_EQ(statuses[1].state, "failed");
  EXPECT_EQ(statuses[1].failure, "train exit 1");
  EXPECT_EQ(statuses[1].log, (failed / "train.log").string());
  EXPECT_EQ(statuses[2].state, "stopped");
  EXPECT_EQ(statuses[2].step, 3);
  EXPECT_TRUE(statuses[2].checkpointed);
  EXPECT_EQ(statuses[3].state, "training");
  EXPECT_FALSE(statuses[3].checkpointed);
  EXPECT_EQ(statuses[3].pid, ::getpid());
  EXPECT_EQ(statuses[3].step, 2);
  EXPECT_TRUE(notes.empty());
}

// A Slurm submission: squeue's view of each task joins the run's own.
TEST_F(SweepStatusOfFourRuns, SqueuesViewOfEachTaskJoinsTheRunsOwn) {
  submit_to_slurm();
  std::vector<std::string> notes;
  const auto statuses = sweep::sweep_status(s, &notes);
  EXPECT_EQ(statuses[1].slurm, "PENDING (Priority)");
  EXPECT_EQ(statuses[2].slurm, "RUNNING 1:05 on node7");
  EXPECT_EQ(statuses[2].state, "training");
  ASSERT_FALSE(notes.empty());
  EXPECT_NE(notes[0].find("Slurm job 77: 2 task(s)"), std::string::npos) << notes[0];
  EXPECT_NE(notes.back().find("no Slurm accounting here"), std::string::npos);

  ::testing::internal::CaptureStdout();
  EXPECT_EQ(sweep::print_sweep_status(s, true), 1);
  const auto j = nlohmann::json::parse(::testing::internal::GetCapturedStdout());
  EXPECT_EQ(j["total"], 4);
  EXPECT_EQ(j["counts"]["failed"], 1);
  EXPECT_EQ(j["runs"][0]["score"], 12.5);
  EXPECT_EQ(j["runs"][1]["log"], (failed / "train.log").string());
  EXPECT_EQ(j["runs"][2]["slurm"], "RUNNING 1:05 on node7");
}

// job.json records which run each task trains; the sweep file may list them in another order now
// (here task 0 trains the run that is third today): a task's state goes to its own run.
TEST_F(SweepStatusOfFourRuns, ATasksStateGoesToTheRunJobJsonSaysItTrains) {
  submit_to_slurm();
  std::ofstream(out / "slurm/job.json") << nlohmann::json{
      {"job_id", "77"},
      {"tasks",
       {{{"task", 0}, {"run_dir", stopped.string()}},
        {{"task", 1},
         {"run_dir", failed.string()}}}}}.dump();
  write_exe(bin / "squeue", "echo '0|RUNNING|2:00|node1'\necho '1|PENDING|0:00|(Priority)'\n");
  std::vector<std::string> notes;
  const auto statuses = sweep::sweep_status(s, &notes);
  EXPECT_EQ(statuses[0].slurm, "");
  EXPECT_EQ(statuses[1].slurm, "PENDING (Priority)");
  EXPECT_EQ(statuses[2].slurm, "RUNNING 2:00 on node1");
  EXPECT_EQ(statuses[3].slurm, "");
}

// The stopped run's task requeued, waiting to start again: it resumes the run itself (a new
// submission is refused meanwhile; a walk, 2026-11-30: "the sweep run again resumes it").
TEST_F(SweepStatusOfFourRuns, AStoppedRunsRequeuedTaskResumesIt) {
  submit_to_slurm();
  write_exe(bin / "squeue", "echo '2|PENDING|0:00|(BeginTime)'\n");
  ::testing::internal::CaptureStdout();
  sweep::print_sweep_status(s, false);
  const std::string text = ::testing::internal::GetCapturedStdout();
  EXPECT_NE(text.find("stopped at step 3 of 5 (its queued Slurm task resumes it from its last "
                      "checkpoint)  | slurm: PENDING (BeginTime)"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("the sweep run again"), std::string::npos) << text;
}

}  // namespace
}  // namespace minrnn
