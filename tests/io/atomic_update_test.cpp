// io::update_file_atomically and io::AppendFile for real: updaters of one file in several
// processes take turns and lose no change, a wait for the lock outlasts signals, a line that does
// not fit under a file size limit (a child under RLIMIT_FSIZE, as atomic_file_test.cpp's writers)
// is taken back and named.
#include "io/atomic_file.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <sstream>
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