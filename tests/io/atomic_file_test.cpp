// Write failures for real: each writer runs in a child process under a small file size limit
// (RLIMIT_FSIZE, as `ulimit -f` sets; SIGXFSZ ignored as minrnn does, so write() fails with EFBIG),
// and the tests check the error names the file and the OS reason, the previous file is intact and
// no temp file is left.
#include "io/atomic_file.h"
#include "io/writable.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "tests/temp_dir.h"
#include "tests/text_file.h"

namespace minrnn::io {
namespace {

namespace fs = std::filesystem;

using minrnn::testing::read_text;

// Runs `body` in a child whose files may not grow past `limit` bytes. Returns the message of the
// exception it threw ("" when none); a child killed by a signal fails the test.
std::string run_limited(rlim_t limit, const std::function<void()>& body) {
  int pipe_fd[2];
  if (::pipe(pipe_fd) != 0) return "pipe failed";
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(pipe_fd[0]);
    ::signal(SIGXFSZ, SIG_IGN);
    const rlimit rl{limit, limit};
    ::setrlimit(RLIMIT_FSIZE, &rl);
    std::string message;
    try {
      body();
    } catch (const std::exception& e) {
      message = e.what();
      if (message.empty()) message = "(empty message)";
    }
    if (::write(pipe_fd[1], message.data(), message.size()) < 0) ::_exit(3);
    ::_exit(0);
  }
  ::close(pipe_fd[1]);
  std::string message;
  char buf[512];
  for (ssize_t n; (n = ::read(pipe_fd[0], buf, sizeof buf)) > 0;) message.append(buf, n);
  ::close(pipe_fd[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
      << "child ended with status " << status << " (a signal: " << WIFSIGNALED(status) << ")";
  return message;
}

void expect_names(const std::string& message, const std::vector<std::string>& parts) {
  EXPECT_FALSE(message.empty()) << "no error";
  for (const auto& part : parts)
    EXPECT_NE(message.find(part), std::string::npos) << "no '" << part << "' in: " << message;
}

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

// The temps in a folder: what a write leaves behind when it should not.
std::vector<std::string> temps_in(const std::string& folder) {
  std::vector<std::string> found;
  for (const auto& e : fs::directory_iterator(folder))
    if (e.path().filename().string().find(".tmp") != std::string::npos)
      found.push_back(e.path().filename().string());
  return found;
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

// Four processes each add a line to one file 25 times: read, change, rename, with no lock the
// later rename drops the earlier's line (three `bench --record`s lost entries).
TEST(AtomicFile, UpdatersOfOneFileTakeTurnsAndLoseNoChange) {
  testing::TempDir tmp;
  const std::string path = tmp.file("log.md");
  std::vector<pid_t> children;
  for (int p = 0; p < 4; ++p) {
    const pid_t pid = ::fork();
    if (pid == 0) {
      try {
        for (int i = 0; i < 25; ++i) {
          update_file_atomically(path, [&](const std::string* current) {
            const std::string text = current != nullptr ? *current : "";
            ::usleep(200);  // a bench's read-insert-write takes its time: let another reach it
            return text + std::to_string(p) + "." + std::to_string(i) + "\n";
          });
        }
      } catch (...) {
        ::_exit(1);
      }
      ::_exit(0);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  std::istringstream lines(read_text(path));
  int count = 0;
  for (std::string line; std::getline(lines, line);) ++count;
  EXPECT_EQ(count, 100);
  EXPECT_EQ(temps_in(tmp.path.string()), std::vector<std::string>{});
}

// An update's lock is a hidden file of its own beside the file (the file itself is replaced by
// every update); a failed update of a missing file leaves no file, only that lock.
TEST(AtomicFile, AnUpdateLocksAFileOfItsOwnAndAFailedOneLeavesNoFile) {
  testing::TempDir tmp;
  const std::string path = tmp.file("benchmarks.md");
  EXPECT_THROW(update_file_atomically(path,
                                      [](const std::string*) -> std::string {
                                        throw std::runtime_error("the measurement failed");
                                      }),
               std::runtime_error);
  EXPECT_FALSE(fs::exists(path));
  const std::string message = run_limited(4096, [&] {
    update_file_atomically(path, [](const std::string*) { return std::string(10000, 'x'); });
  });
  expect_names(message, {path, "File too large"});
  EXPECT_FALSE(fs::exists(path));
  update_file_atomically(path, [](const std::string* current) {
    EXPECT_EQ(current, nullptr);
    return std::string("# log\n");
  });
  update_file_atomically(path, [](const std::string* current) {
    EXPECT_NE(current, nullptr);
    return (current != nullptr ? *current : "") + "entry\n";
  });
  EXPECT_EQ(read_text(path), "# log\nentry\n");
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(tmp.path)) names.push_back(e.path().filename());
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{".benchmarks.md.lock", "benchmarks.md"}));
}

// A dangling symlink as the log: the update ends (it spun while the lock was taken on the file
// itself, created beside the link) and the new file takes the name, as every atomic write
// replaces the name it is given.
TEST(AtomicFile, AnUpdateOfADanglingSymlinkEnds) {
  testing::TempDir tmp;
  const std::string path = tmp.file("log.md");
  fs::create_symlink("missing.md", path);
  update_file_atomically(path, [](const std::string* current) {
    EXPECT_EQ(current, nullptr);
    return std::string("new\n");
  });
  EXPECT_EQ(read_text(path), "new\n");
}

volatile sig_atomic_t alarms = 0;
void note_alarm(int) {
  alarms = alarms + 1;
}

// Signals (whose handler does not restart calls) while an update waits for another's lock: the
// wait goes on, and the update is made (an interrupted wait once failed it).
TEST(AtomicFile, AnUpdateWaitingForTheLockOutlastsSignals) {
  testing::TempDir tmp;
  const std::string path = tmp.file("log.md");
  update_file_atomically(path, [](const std::string*) { return std::string("a\n"); });
  int held[2];
  ASSERT_EQ(::pipe(held), 0);
  const pid_t holder = ::fork();
  if (holder == 0) {  // holds the lock for 300 ms, inside an update of its own
    try {
      update_file_atomically(path, [&](const std::string* current) {
        if (::write(held[1], "x", 1) != 1) ::_exit(2);
        ::usleep(300000);
        return *current + "b\n";
      });
    } catch (...) {
      ::_exit(3);
    }
    ::_exit(0);
  }
  char byte;
  ASSERT_EQ(::read(held[0], &byte, 1), 1);
  struct sigaction alarm_action {
  }, previous{};
  alarm_action.sa_handler = note_alarm;  // no SA_RESTART: flock returns EINTR
  ::sigaction(SIGALRM, &alarm_action, &previous);
  alarms = 0;
  ::ualarm(50000, 50000);  // every 50 ms while the holder keeps the lock
  EXPECT_NO_THROW(
      update_file_atomically(path, [](const std::string* current) { return *current + "c\n"; }));
  ::ualarm(0, 0);
  ::sigaction(SIGALRM, &previous, nullptr);
  EXPECT_GT(alarms, 0) << "no signal reached the wait";
  int status = 0;
  ::waitpid(holder, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_EQ(read_text(path), "a\nb\nc\n");
  for (int fd : held) ::close(fd);
}

// What cannot be updated is said before a lock is made: a folder, a name with no file, a missing
// folder.
TEST(AtomicFile, AnUpdateOfAFolderOrOfNoFileIsRefusedByName) {
  testing::TempDir tmp;
  fs::create_directories(tmp.path / "d");
  const auto refused = [](const std::string& path, const std::string& why) {
    try {
      update_file_atomically(path, [](const std::string*) { return std::string("x"); });
      ADD_FAILURE() << path << " was updated";
    } catch (const WriteError& e) {
      expect_names(e.what(), {"cannot write " + path + ": " + why});
    }
  };
  refused(tmp.file("d"), "it is a folder");
  refused(tmp.file("d") + "/", "it names no file");
  refused(tmp.file("missing/x.md"), "its folder " + tmp.file("missing") + " does not exist");
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(tmp.path)) names.push_back(e.path().filename());
  EXPECT_EQ(names, std::vector<std::string>{"d"}) << "no lock left";
  EXPECT_TRUE(fs::is_empty(tmp.path / "d"));
}

TEST(AppendFile, AppendsWholeLines) {
  testing::TempDir tmp;
  const std::string path = tmp.file("metrics.csv");
  AppendFile log(path);
  log.append("step,loss\n");
  log.append("1,0.5\n");
  append_to_file(path, "2,0.4\n");
  EXPECT_EQ(read_text(path), "step,loss\n1,0.5\n2,0.4\n");
}

TEST(AppendFile, ALineThatDoesNotFitIsTakenBackAndReported) {
  testing::TempDir tmp;
  const std::string path = tmp.file("evals.csv");
  append_to_file(path, std::string(90, 'a') + "\n");
  const std::string message = run_limited(128, [&] {
    AppendFile log(path);
    log.append("1,2,3\n");                    // fits: 97 bytes
    log.append(std::string(60, 'b') + "\n");  // would reach 158: refused, cut back
  });
  expect_names(message, {path, "File too large"});
  EXPECT_EQ(read_text(path), std::string(90, 'a') + "\n1,2,3\n");
}

}  // namespace
}  // namespace minrnn::io
