// Write failures for real: each writer runs in a child process under a small file size limit
// (RLIMIT_FSIZE, as `ulimit -f` sets; SIGXFSZ ignored as minrnn does, so write() fails with EFBIG),
// and the tests check the error names the file and the OS reason, the previous file is intact and
// no temp file is left.
#include "io/atomic_file.h"
#include "io/writable.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <climits>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tests/io/atomic_file_fixtures.h"
#include "tests/temp_dir.h"
#include "tests/text_file.h"

namespace minrnn::io {
namespace {

namespace fs = std::filesystem;

using minrnn::testing::expect_names;
using minrnn::testing::read_text;
using minrnn::testing::run_limited;
using minrnn::testing::temps_in;

TEST(AtomicFile, ReplacesTheFileWhole) {
  testing::TempDir tmp;
  const std::string path = tmp.file("a.txt");
  write_file_atomically(path, "first\n");
  write_file_atomically(path, "second\n");
  EXPECT_EQ(read_text(path), "second\n");
  EXPECT_FALSE(fs::exists(path + ".tmp"));
}

TEST(AtomicFile, OverTheSizeLimitKeepsThePreviousFileAndNoTemp) {
  testing::TempDir tmp;
  const std::string path = tmp.file("eval.json");
  write_file_atomically(path, "old contents\n");
  const std::string message =
      run_limited(4096, [&] { write_file_atomically(path, std::string(10000, 'x')); });
  expect_names(message, {path, "File too large", "unchanged"});
  EXPECT_EQ(read_text(path), "old contents\n");
  EXPECT_FALSE(fs::exists(path + ".tmp"));
}

TEST(AtomicFile, ALeftoverTempFromAKillIsOverwrittenAndRemoved) {
  testing::TempDir tmp;
  const std::string path = tmp.file("status.json");
  std::ofstream(path + ".tmp") << std::string(100000, 'j');  // as a kill -9 mid-write leaves it
  write_file_atomically(path, "{}\n");
  EXPECT_EQ(read_text(path), "{}\n");
  EXPECT_FALSE(fs::exists(path + ".tmp"));

  std::ofstream(path + ".tmp") << std::string(100000, 'j');
  const std::string message =
      run_limited(4096, [&] { write_file_atomically(path, std::string(5000, 'x')); });
  expect_names(message, {path, "File too large"});
  EXPECT_EQ(read_text(path), "{}\n");
  EXPECT_FALSE(fs::exists(path + ".tmp"));
}

TEST(AtomicFile, AMissingFolderIsNamedWithTheReason) {
  testing::TempDir tmp;
  const std::string path = tmp.file("no/such/dir/report.md");
  try {
    write_file_atomically(path, "x");
    FAIL() << "wrote into a missing folder";
  } catch (const WriteError& e) {
    expect_names(e.what(), {path, "its folder " + tmp.file("no/such/dir") + " does not exist"});
    EXPECT_EQ(std::string(e.what()).find(".tmp"), std::string::npos) << e.what();
  }
}

// The check a command makes before its work is the write itself: access() says yes to root in
// /proc, where no file can be made (an eval's --out there ran its episodes, then failed), and the
// file it makes to find out is gone again.
TEST(AtomicFile, AFolderNoFileCanBeMadeInIsNamedBeforeTheWrite) {
  // (Not root: access() refuses it first, "is not writable".)
  const std::string why = why_unwritable("/proc/eval.json", false);
  EXPECT_TRUE(why == "its folder /proc is not writable" ||
              why.rfind("its folder /proc cannot be written in: ", 0) == 0)
      << why;
  testing::TempDir tmp;
  EXPECT_EQ(why_unwritable(tmp.file("new/deeper/eval.json"), true), "");
  EXPECT_FALSE(fs::exists(tmp.file("new")));  // asked, not made
  {
    testing::TempDir made;
    EXPECT_EQ(make_folders_for(made.file("new/deeper/eval.json")), "");  // made
    EXPECT_TRUE(fs::is_directory(made.file("new/deeper")));
    write_file_atomically(made.file("in-the-way"), "a file\n");
    EXPECT_EQ(make_folders_for(made.file("in-the-way/x/eval.json")),
              "its folder " + made.file("in-the-way") + " is a file, not a folder");
  }
  // A name the file may have but its temp (<name>.tmp) may not.
  const std::string longest = std::string(NAME_MAX - 9, 'y') + ".json";  // 4 bytes to spare
  EXPECT_EQ(why_unwritable(tmp.file(longest), false), "");
  const std::string one_more = "y" + longest;
  EXPECT_EQ(why_unwritable(tmp.file(one_more), false),
            "its name is " + std::to_string(NAME_MAX - 3) +
                " bytes; with the .tmp of the file written beside it first, more than the " +
                std::to_string(NAME_MAX) + " a file name may have");
  write_file_atomically(tmp.file(longest), "{}\n");
  fs::remove(tmp.file(longest));
  EXPECT_EQ(why_folder_unwritable(tmp.path.string(), false), "");
  EXPECT_TRUE(fs::is_empty(tmp.path));
}

TEST(AtomicFile, TryWriteKeepsTheFirstFailureForCheck) {
  testing::TempDir tmp;
  const std::string path = tmp.file("checkpoint.pt");
  write_file_atomically(path, "old");
  const std::string message = run_limited(1000, [&] {
    // (Failed expectations in the child cannot reach the test: they are thrown as errors.)
    AtomicFile out(path);
    if (!out.try_write(std::string(600, 'a').data(), 600)) throw std::logic_error("600 bytes");
    if (out.try_write(std::string(600, 'b').data(), 600)) throw std::logic_error("past the limit");
    if (out.try_write("c", 1)) throw std::logic_error("a write after a failure");
    out.check();
  });
  expect_names(message, {path, "File too large"});
  EXPECT_EQ(read_text(path), "old");
  EXPECT_FALSE(fs::exists(path + ".tmp"));
}

TEST(AtomicFile, AnUncommittedFileLeavesNoTemp) {
  testing::TempDir tmp;
  const std::string path = tmp.file("plot.svg");
  {
    AtomicFile out(path);
    out.write("<svg/>");
  }  // an exception between write and commit
  EXPECT_FALSE(fs::exists(path));
  EXPECT_FALSE(fs::exists(path + ".tmp"));
}

TEST(AtomicFile, ReplaceFileAtomicallyKeepsTheOldFileWhenSaveThrows) {
  testing::TempDir tmp;
  const std::string path = tmp.file("d.hdf5");
  write_file_atomically(path, "old");
  EXPECT_THROW(replace_file_atomically(path,
                                       [](const std::string& t) {
                                         std::ofstream(t) << "half";
                                         throw std::runtime_error("disk full");
                                       }),
               std::runtime_error);
  EXPECT_EQ(read_text(path), "old");
  EXPECT_FALSE(fs::exists(path + ".tmp"));
  replace_file_atomically(path, [](const std::string& t) { std::ofstream(t) << "new"; });
  EXPECT_EQ(read_text(path), "new");
}

TEST(AtomicFile, TwoWritersOfOneFileAtOnceBothFinishWhole) {
  testing::TempDir tmp;
  const std::string path = tmp.file("eval.json");
  AtomicFile first(path), second(path);
  EXPECT_NE(first.tmp_path(), second.tmp_path());  // one temp each: neither empties the other's
  first.write(std::string(5000, 'a'));
  second.write("b");
  first.commit();
  EXPECT_EQ(read_text(path), std::string(5000, 'a'));
  second.commit();
  EXPECT_EQ(read_text(path), "b");
  EXPECT_EQ(temps_in(tmp.path.string()), std::vector<std::string>{});
}

// A writer in another process holds both temps of one file (its own second writer took the
// numbered one) while this process writes it; then it finishes both.
TEST(AtomicFile, AnotherProcesssTempsAreKeptAndAKilledWritersAreRemoved) {
  testing::TempDir tmp;
  const std::string path = tmp.file("done.json");
  const std::string leftover = path + ".tmp.999999999.0";  // as a kill -9 mid-write leaves it
  std::ofstream(leftover) << "half";
  int go[2], ready[2];
  ASSERT_EQ(::pipe(go), 0);
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t pid = ::fork();
  if (pid == 0) {
    char c = 0;
    try {
      AtomicFile a(path), b(path);
      a.write("child a");
      b.write("child b");
      if (::write(ready[1], "r", 1) != 1 || ::read(go[0], &c, 1) != 1) ::_exit(2);
      a.commit();
      b.commit();
    } catch (...) {
      ::_exit(1);
    }
    ::_exit(0);
  }
  char c = 0;
  ASSERT_EQ(::read(ready[0], &c, 1), 1);
  write_file_atomically(path, "parent");
  EXPECT_EQ(read_text(path), "parent");
  EXPECT_FALSE(fs::exists(leftover));
  EXPECT_EQ(temps_in(tmp.path.string()).size(), 2u);  // the child's two
  ASSERT_EQ(::write(go[1], "g", 1), 1);
  int status = 0;
  ::waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "child's commits failed";
  EXPECT_EQ(read_text(path), "child b");
  EXPECT_EQ(temps_in(tmp.path.string()), std::vector<std::string>{});
  for (int fd : {go[0], go[1], ready[0], ready[1]}) ::close(fd);
}

}  // namespace
}  // namespace minrnn::io
