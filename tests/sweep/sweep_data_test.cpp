// A sweep's data as it starts: a dataset there that does not load is named before any run starts,
// as a missing one is, with the file and the reader's error; --status reads no dataset.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <fstream>

#include "datasets/d4rl.h"
#include "sweep/sweep.h"
#include "tests/datasets/fixtures.h"
#include "tests/sweep/sweep_fixtures.h"
#include "tests/temp_dir.h"
#include "tests/text_file.h"

namespace minrnn {
namespace {

namespace fs = std::filesystem;

// A sweep of one run on `data` that goes on from its checkpoint and env.json (so the plan reads
// the data as the sweep starts), in <dir>/out/d/mingru/seed3.
sweep::SweepSpec sweep_going_on_from(const fs::path& dir, const fs::path& data) {
  auto s = testing::one_run_sweep(dir / "out");
  s.sets.push_back("dataset=" + data.string());
  const fs::path run = dir / "out/d/mingru/seed3";
  testing::write_run_config(
      run, {"backbone=mingru", "max_steps=5", "seed=3", "dataset=" + data.string()});
  std::ofstream(run / "env.json") << R"({"dataset_file": ")" << data.string()
                                  << R"(", "dataset_fingerprint": "0123456789abcdef"})"
                                  << "\n";
  testing::write_stand_in_checkpoint(run);
  std::ofstream(run / "metrics.csv")
      << "step,loss,lr,grad_norm,steps_per_s,elapsed_s\n2,1,1,1,1,2\n";
  return s;
}

// A review: the plan read the dataset of a run going on from its env.json and, where it did not
// load, said nothing; every run on it then failed at its start.
TEST(SweepPlan, ADamagedDatasetIsNamedBeforeAnyRunStarts) {
  testing::TempDir tmp;
  const fs::path data = tmp.path / "data.hdf5";
  data::write_d4rl(data.string(), data::testing::make_data(11, 3, {30, 40}), {});
  fs::resize_file(data, fs::file_size(data) / 2);  // a copy stopped half-way
  const sweep::SweepSpec s = sweep_going_on_from(tmp.path, data);
  const fs::path run = tmp.path / "out/d/mingru/seed3";

  const std::vector<sweep::SweepRun> runs = sweep::plan_sweep(s);
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_NE(runs[0].data_unreadable.find(data.string()), std::string::npos)
      << runs[0].data_unreadable;
  // The sweep refuses, naming the dataset, its file and the reader's reason, and what to do.
  try {
    sweep::refuse_missing_datasets(s, runs);
    FAIL() << "a sweep on a damaged dataset was not refused";
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("1 dataset of runs still to train unreadable; nothing was started:\n  " +
                        data.string() + ": "),
              std::string::npos)
        << what;
    // Said once, with the reader's advice (a file cut short: move it away, fetch it again).
    EXPECT_NE(what.find(runs[0].data_unreadable), std::string::npos) << what;
    EXPECT_EQ(what.find(data.string() + ": " + data.string()), std::string::npos) << what;
    EXPECT_NE(what.find("Move it away"), std::string::npos) << what;
    EXPECT_TRUE(runs[0].data_damaged);
  }
  // A file that is no HDF5 at all: the reader gives no advice, the refusal does.
  const std::string good = testing::read_text(data);
  std::ofstream(data) << "garbage, not HDF5\n";
  try {
    sweep::refuse_missing_datasets(s, sweep::plan_sweep(s));
    FAIL() << "a sweep on a file that is no dataset was not refused";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("; move it away and make it again"), std::string::npos)
        << e.what();
  }
  std::ofstream(data, std::ios::binary) << good;  // cut short again
  sweep::SweepOptions opt;
  opt.exe = "/bin/false";  // never started
  opt.check_devices = false;
  ::testing::internal::CaptureStdout();
  EXPECT_THROW(sweep::run_sweep(s, opt), std::runtime_error);
  ::testing::internal::GetCapturedStdout();
  EXPECT_FALSE(fs::exists(run / "failed.json"));
  // Its dry run marks the run.
  opt.dry_run = true;
  ::testing::internal::CaptureStdout();
  EXPECT_EQ(sweep::run_sweep(s, opt), 0);
  const std::string plan = ::testing::internal::GetCapturedStdout();
  EXPECT_NE(plan.find("data unreadable: " + runs[0].data_unreadable), std::string::npos) << plan;
  // --status reads no dataset: the run is where its run dir says.
  const sweep::RunStatus status = sweep::sweep_status(s, nullptr)[0];
  EXPECT_EQ(status.state, "stopped");
  EXPECT_EQ(status.run.data_unreadable, "");
}

// Review 52: every reader error was told "move it away and fetch it again", one of the system's
// too. A file another process holds for writing (HDF5's writer locks it; on NFS a lock refused) is
// a good dataset: its error is named, no advice to throw it away.
TEST(SweepPlan, ADatasetLockedForWritingIsNotCalledDamaged) {
  testing::TempDir tmp;
  const fs::path data = tmp.path / "data.hdf5";
  data::write_d4rl(data.string(), data::testing::make_data(11, 3, {30, 40}), {});
  const sweep::SweepSpec s = sweep_going_on_from(tmp.path, data);
  const int fd = ::open(data.c_str(), O_RDWR);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::flock(fd, LOCK_EX), 0);  // as HDF5 locks a file it opens for writing
  const std::vector<sweep::SweepRun> runs = sweep::plan_sweep(s);
  ::close(fd);
  ASSERT_EQ(runs.size(), 1u);
  if (runs[0].data_unreadable.empty()) GTEST_SKIP() << "HDF5 file locking is off here";
  EXPECT_FALSE(runs[0].data_damaged) << runs[0].data_unreadable;
  EXPECT_NE(runs[0].data_unreadable.find("cannot read: Resource temporarily unavailable"),
            std::string::npos)
      << runs[0].data_unreadable;
  try {
    sweep::refuse_missing_datasets(s, runs);
    FAIL() << "a sweep on a dataset it cannot read was not refused";
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.find("move it away"), std::string::npos) << what;
    EXPECT_NE(what.find("Resource temporarily unavailable (not the file's contents: once that is "
                        "fixed, start the sweep again)"),
              std::string::npos)
        << what;
  }
}

}  // namespace
}  // namespace minrnn
