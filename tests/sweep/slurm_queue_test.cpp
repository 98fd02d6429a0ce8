// What `--status` and a new submission learn from stand-in squeue/sacct programs (an audit of the
// Slurm backend, 2026-11-28): an id reused by another job, a queue that cannot answer or hangs,
// run dirs recorded from another working directory, sacct asked only when it matters.
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>

#include "sweep/slurm.h"
#include "sweep/sweep.h"
#include "tests/sweep/slurm_fixtures.h"
#include "tests/temp_dir.h"

namespace minrnn {
namespace {

namespace fs = std::filesystem;
using testing::PathOnly;
using testing::read_text;
using testing::spec_in;
using testing::write_exe;

std::string notes_of(const sweep::SweepSpec& s, std::vector<sweep::RunStatus>* statuses = nullptr) {
  std::vector<std::string> notes;
  const auto st = sweep::sweep_status(s, &notes);
  if (statuses) *statuses = st;
  std::string all;
  for (const auto& n : notes) all += n + "\n";
  return all;
}

// job.json of job 77 with the sweep's tag: task 0 trains the first run, task 1 the second.
void record_job_77(const sweep::SweepSpec& s) {
  const auto runs = sweep::plan_sweep(s);
  fs::create_directories(fs::path(s.out) / "slurm");
  std::ofstream(fs::path(s.out) / "slurm/job.json")
      << nlohmann::json{{"job_id", "77"},
                        {"tag", "minrnn:" + fs::absolute(s.out).string()},
                        {"tasks",
                         {{{"task", 0}, {"run_dir", fs::absolute(runs[0].run_dir).string()}},
                          {{"task", 1}, {"run_dir", fs::absolute(runs[1].run_dir).string()}}}}}
             .dump();
}

// After a cluster restart the recorded id is someone else's job: not this sweep's (no state, not
// live, so a submission goes ahead); --status and a submission count the same lines.
TEST(SweepStatus, ARecordedIdThatIsAnotherJobNowIsNotThisSweeps) {
  testing::TempDir tmp;
  const fs::path bin = tmp.path / "bin";
  const PathOnly path(bin);
  const auto s = spec_in(tmp.path);
  record_job_77(s);
  write_exe(bin / "squeue", "echo '0|RUNNING|1:00|node1|someone else'\n");
  std::vector<sweep::RunStatus> statuses;
  const std::string notes = notes_of(s, &statuses);
  EXPECT_EQ(statuses[0].slurm, "");
  EXPECT_EQ(statuses[0].state, "pending");
  EXPECT_NE(notes.find("Slurm job 77: 0 task(s)"), std::string::npos) << notes;
  EXPECT_NE(notes.find("another job's now"), std::string::npos) << notes;
  EXPECT_EQ(sweep::live_slurm_job(s.out, true), "");

  const std::string tag = "minrnn:" + fs::absolute(s.out).string();
  write_exe(bin / "squeue",
            "echo '0|RUNNING|1:00|node1|" + tag + "'\necho 'N/A|PENDING|0:00||" + tag + "'\n");
  int listed = 0;
  EXPECT_EQ(sweep::live_slurm_job(s.out, true, &listed), "77");
  EXPECT_EQ(listed, 1);
  EXPECT_NE(notes_of(s, &statuses).find("Slurm job 77: 1 task(s)"), std::string::npos);
  EXPECT_EQ(statuses[0].slurm, "RUNNING 1:00 on node1");
}

// A dry run while the sweep's job still has tasks queued says so: the same command without
// --dry-run would be refused (a review: the plan said nothing of it).
TEST(SweepSlurmSubmit, ADryRunSaysTheSweepsJobIsStillQueued) {
  testing::TempDir tmp;
  const fs::path bin = tmp.path / "bin";
  const PathOnly path(bin);
  auto s = spec_in(tmp.path);
  record_job_77(s);
  const std::string tag = "minrnn:" + fs::absolute(s.out).string();
  write_exe(bin / "squeue", "echo '1|PENDING|0:00||" + tag + "'\n");
  sweep::SweepOptions dry;
  dry.dry_run = true;
  dry.check_devices = false;
  ::testing::internal::CaptureStdout();
  EXPECT_EQ(sweep::submit_slurm_sweep(s, dry), 0);
  EXPECT_EQ(sweep::run_sweep(s, dry), 0);
  const std::string plans = ::testing::internal::GetCapturedStdout();
  const std::string queued =
      "note: Slurm job 77 of this sweep has 1 task(s) pending or running: "
      "the plan is as of this moment, and ";
  EXPECT_NE(plans.find(queued + "a submission now would be refused until they end"),
            std::string::npos)
      << plans;
  EXPECT_NE(plans.find(queued + "the sweep run here now would be refused"), std::string::npos)
      << plans;
  // Its tasks gone from the queue: nothing said.
  write_exe(bin / "squeue", "true\n");
  ::testing::internal::CaptureStdout();
  sweep::submit_slurm_sweep(s, dry);
  const std::string plan = ::testing::internal::GetCapturedStdout();
  EXPECT_EQ(plan.find("note: Slurm job"), std::string::npos) << plan;
}

// The recorded job gone and its script submitted again by hand (`sbatch <out>/slurm/sweep.sbatch`,
// as the docs offer): the job found by the sweep's tag is live (a submission is refused) and
// --status shows its tasks, saying whose they are (a walk, 2026-11-30: a second job was submitted
// for the same runs and --status showed none).
TEST(SweepStatus, AJobSubmittedAgainByHandIsFoundByItsTag) {
  testing::TempDir tmp;
  const fs::path bin = tmp.path / "bin";
  const PathOnly path(bin);
  const auto s = spec_in(tmp.path);
  record_job_77(s);
  const std::string tag = "minrnn:" + fs::absolute(s.out).string();
  write_exe(bin / "squeue",
            "case \"$*\" in\n"
            "  *--jobs=80*) echo '0|RUNNING|0:30|node2|" +
                tag +
                "' ;;\n"
                "  *--jobs=*) ;;\n"
                "  *) echo '80|" +
                tag +
                "'; echo '99|minrnn:/elsewhere' ;;\n"
                "esac\n");
  int listed = 0;
  EXPECT_EQ(sweep::live_slurm_job(s.out, true, &listed), "80");
  EXPECT_EQ(listed, 1);
  std::vector<sweep::RunStatus> statuses;
  const std::string notes = notes_of(s, &statuses);
  EXPECT_NE(notes.find("Slurm job 80: 1 task(s)"), std::string::npos) << notes;
  EXPECT_NE(notes.find("submitted again, by hand; job.json records job 77"), std::string::npos)
      << notes;
  EXPECT_EQ(statuses[0].slurm, "RUNNING 0:30 on node2");
  // Left the queue too: nothing is live, and --status says nothing of it.
  write_exe(bin / "squeue",
            "case \"$*\" in *--jobs=*) ;; *) echo '99|minrnn:/elsewhere' ;; esac\n");
  EXPECT_EQ(sweep::live_slurm_job(s.out, true), "");
  EXPECT_EQ(notes_of(s).find("by hand"), std::string::npos);
}

// squeue failing, missing or hanging: the queue's state is unknown, not "0 task(s)", and a hung
// squeue is stopped after the timeout (here 200 ms, 60 s unless a test says otherwise).
TEST(SweepStatus, AQueueThatCannotAnswerIsUnknownNotEmpty) {
  testing::TempDir tmp;
  const fs::path bin = tmp.path / "bin";
  const PathOnly path(bin);
  const auto s = spec_in(tmp.path);
  record_job_77(s);
  std::string notes = notes_of(s);
  EXPECT_NE(notes.find("Slurm job 77: queue state unknown (no `squeue` on PATH)"),
            std::string::npos)
      << notes;
  // A local sweep there goes on (a folder back from the cluster), saying what it cannot tell (a
  // folder the cluster shares would have both train the same runs; an audit, 2026-11-29).
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(sweep::live_slurm_job(s.out, false), "");
  const std::string said = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(said.find("job.json records Slurm job 77, and no `squeue` here"), std::string::npos)
      << said;
  write_exe(bin / "squeue",
            "echo 'slurm_load_jobs error: Unable to contact slurm controller' >&2"
            "\nexit 1\n");
  notes = notes_of(s);
  EXPECT_NE(notes.find("queue state unknown (squeue says: slurm_load_jobs error: Unable"),
            std::string::npos)
      << notes;
  EXPECT_EQ(notes.find("0 task(s)"), std::string::npos) << notes;

  // A child of the stand-in holds its output open: the whole process group is stopped.
  write_exe(bin / "squeue", "/bin/sleep 30\n");
  sweep::set_slurm_command_timeout(std::chrono::milliseconds(200));
  const auto start = std::chrono::steady_clock::now();
  notes = notes_of(s);
  EXPECT_NE(notes.find("squeue did not answer within 200 ms"), std::string::npos) << notes;
  try {
    sweep::live_slurm_job(s.out, true);
    FAIL() << "a hung squeue was taken for an empty queue";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("did not answer"), std::string::npos) << e.what();
  }
  sweep::set_slurm_command_timeout(std::chrono::seconds(60));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
}

// Submitted from one directory with a relative `out`, watched from another: job.json holds the run
// dirs absolute. An older job.json holding them relative is read against its script's --chdir.
TEST(SweepStatus, RunDirsAreFoundFromAnotherWorkingDirectory) {
  testing::TempDir tmp;
  const fs::path bin = tmp.path / "bin", cwd = fs::current_path();
  fs::create_directories(tmp.path / "elsewhere");
  const PathOnly path(bin);
  auto s = spec_in(tmp.path);
  s.out = "out";
  write_exe(bin / "sbatch", "echo 4242\n");
  fs::current_path(tmp.path);
  testing::submit_quietly(s);
  const std::string tag = "minrnn:" + (tmp.path / "out").string();
  write_exe(bin / "squeue", "echo '2|RUNNING|0:05|node2|" + tag + "'\n");
  fs::current_path(tmp.path / "elsewhere");
  s.out = (tmp.path / "out").string();
  std::vector<sweep::RunStatus> statuses;
  notes_of(s, &statuses);
  EXPECT_EQ(statuses[2].slurm, "RUNNING 0:05 on node2");

  // As an older minrnn wrote it: run dirs as given, no tag, the script's --chdir unquoted.
  std::ofstream(tmp.path / "out/slurm/old.sbatch")
      << "#!/bin/bash\n#SBATCH --chdir=" << tmp.path.string() << "\nset -u\n";
  std::ofstream(tmp.path / "out/slurm/job.json")
      << nlohmann::json{{"job_id", "77"},
                        {"script", (tmp.path / "out/slurm/old.sbatch").string()},
                        {"tasks", {{{"task", 2}, {"run_dir", "out/d/mingru/seed1"}}}}}
             .dump();
  notes_of(s, &statuses);
  fs::current_path(cwd);
  EXPECT_EQ(statuses[2].slurm, "RUNNING 0:05 on node2");
}

// sacct is asked only for tasks that have left the queue; accounting being off is said once,
// briefly.
TEST(SweepStatus, SacctOnlyWhenATaskHasLeftTheQueue) {
  testing::TempDir tmp;
  const fs::path bin = tmp.path / "bin";
  const PathOnly path(bin);
  const auto s = spec_in(tmp.path);
  record_job_77(s);
  const std::string tag = "minrnn:" + fs::absolute(s.out).string();
  write_exe(bin / "sacct",
            "echo 'sacct: error: Slurm accounting storage is disabled' >&2\nexit 1\n");
  write_exe(bin / "squeue", "echo '0|RUNNING|1:00|node1|" + tag + "'\necho '1|PENDING|0:00|" +
                                "(Priority)|" + tag + "'\n");
  EXPECT_EQ(notes_of(s).find("accounting"), std::string::npos) << notes_of(s);
  write_exe(bin / "squeue", "echo '0|RUNNING|1:00|node1|" + tag + "'\n");
  const std::string notes = notes_of(s);
  EXPECT_NE(notes.find("no Slurm accounting here (sacct): tasks that have left the queue show no "
                       "Slurm state"),
            std::string::npos)
      << notes;
  EXPECT_EQ(notes.find("accounting storage is disabled"), std::string::npos) << notes;
}

}  // namespace
}  // namespace minrnn
