// What --status takes from <out>/sweep_status.json: a live local sweep's word for its runs, only
// where the file is that sweep's (its pid holds <out>/.lock); a stale file is said to be one.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <tuple>
#include <utility>

#include "io/dir_lock.h"
#include "sweep/sweep.h"
#include "tests/sweep/sweep_fixtures.h"
#include "tests/temp_dir.h"

namespace minrnn {
namespace {

namespace fs = std::filesystem;

// The run's state and --status's notes, sweep_status.json saying that sweep `pid` trains it (0:
// a file of an older minrnn, which wrote no pid).
std::pair<std::string, std::string> status_with_file_of(const sweep::SweepSpec& s, long pid) {
  const std::string run_dir = sweep::sweep_status(s, nullptr)[0].run.run_dir;
  std::ofstream(fs::path(s.out) / "sweep_status.json")
      << "{" << (pid == 0 ? "" : "\"pid\": " + std::to_string(pid) + ", ")
      << "\"runs\": [{\"run_dir\": \"" << run_dir << "\", \"status\": \"training\"}]}\n";
  std::vector<std::string> notes;
  const std::string state = sweep::sweep_status(s, &notes)[0].state;
  std::string text;
  for (const auto& n : notes) text += n + "\n";
  return {state, text};
}

// A review: a file an earlier, killed sweep left was read as the live sweep's word.
TEST(SweepStatus, AStatusFileNotOfTheSweepHoldingTheOutDirIsSaidToBeStale) {
  testing::TempDir tmp;
  const auto s = testing::one_run_sweep(tmp.path / "out");
  const fs::path run = tmp.path / "out/d/mingru/seed3";
  testing::write_run_config(run, {"backbone=mingru", "max_steps=5", "seed=3"});
  testing::write_stand_in_checkpoint(run);
  const long earlier = ::getpid() + 100000;  // no process of this test
  const std::string file = (tmp.path / "out/sweep_status.json").string();
  // No sweep holds the out dir: the run dirs say where the run is, and the note why the file's
  // "training" is not the run's state.
  std::string state, notes;
  std::tie(state, notes) = status_with_file_of(s, earlier);
  EXPECT_EQ(state, "stopped");
  EXPECT_NE(notes.find(file + " is the last word of sweep pid " + std::to_string(earlier) +
                       ", which ended without updating it (killed?)"),
            std::string::npos)
      << notes;
  // A sweep (this process) holds it now, the file an earlier one's: left out, and said so.
  const io::DirLock held((tmp.path / "out").string(), "this test");
  std::tie(state, notes) = status_with_file_of(s, earlier);
  EXPECT_EQ(state, "stopped");
  EXPECT_NE(notes.find(file + " is an earlier sweep's (pid " + std::to_string(earlier) +
                       "), not that of the sweep holding " + s.out + " now (pid " +
                       std::to_string(::getpid()) + ")"),
            std::string::npos)
      << notes;
  // The holder's own file is its word: the run trains in it, and nothing is said of the file.
  std::tie(state, notes) = status_with_file_of(s, ::getpid());
  EXPECT_EQ(state, "training");
  EXPECT_EQ(notes.find("sweep_status.json"), std::string::npos) << notes;
}

// A file of an older minrnn names no pid (review 52: untested). With no sweep holding the out dir
// it is the last word of a sweep that ended, its pid unknown; with one holding it, it is taken as
// the holder's (a new sweep that has not yet written its own is the one case read wrong, and
// accepted: the sweep writes its file as its first runs start).
TEST(SweepStatus, AStatusFileWithoutAPidIsTheHoldersOrAnEndedSweeps) {
  testing::TempDir tmp;
  const auto s = testing::one_run_sweep(tmp.path / "out");
  const fs::path run = tmp.path / "out/d/mingru/seed3";
  testing::write_run_config(run, {"backbone=mingru", "max_steps=5", "seed=3"});
  testing::write_stand_in_checkpoint(run);
  const std::string file = (tmp.path / "out/sweep_status.json").string();
  std::string state, notes;
  std::tie(state, notes) = status_with_file_of(s, 0);
  EXPECT_EQ(state, "stopped");
  EXPECT_NE(notes.find(file + " is the last word of sweep pid unknown, which ended without "
                              "updating it (killed?): the 1 run(s) it calls training"),
            std::string::npos)
      << notes;
  const io::DirLock held((tmp.path / "out").string(), "this test");
  std::tie(state, notes) = status_with_file_of(s, 0);
  EXPECT_EQ(state, "training");
  EXPECT_EQ(notes.find("sweep_status.json"), std::string::npos) << notes;
}

// A file edited or damaged by hand (a review: "run_dir": 5 threw json's type_error, naming no
// file) is no sweep's word: its entries of another shape are skipped, the run dirs read.
TEST(SweepStatus, AStatusFileOfAnotherShapeIsSkipped) {
  testing::TempDir tmp;
  const auto s = testing::one_run_sweep(tmp.path / "out");
  const io::DirLock held((tmp.path / "out").string(), "this test");
  for (const char* runs :
       {R"("runs": [{"run_dir": 5, "status": "training"}])", R"("runs": [7, "x"])",
        R"("runs": {"run_dir": "d"})", R"("runs": [{"run_dir": "d", "status": null}])"}) {
    std::ofstream(fs::path(s.out) / "sweep_status.json")
        << "{\"pid\": " << ::getpid() << ", " << runs << "}\n";
    std::vector<std::string> notes;
    std::vector<sweep::RunStatus> statuses;
    ASSERT_NO_THROW(statuses = sweep::sweep_status(s, &notes)) << runs;
    EXPECT_EQ(statuses[0].state, "pending") << runs;
  }
}

}  // namespace
}  // namespace minrnn
