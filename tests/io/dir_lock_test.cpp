// DirLock: one holder at a time, and no stale lock after the holder is killed.
#include "io/dir_lock.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <stdexcept>
#include <string>

#include "tests/temp_dir.h"

namespace minrnn::io {
namespace {

TEST(DirLock, SecondHolderIsRefusedWithTheDirAndPid) {
  testing::TempDir tmp;
  const std::string dir = (tmp.path / "run").string();
  {
    DirLock first(dir, "minrnn train");
    try {
      DirLock second(dir, "minrnn train");
      FAIL() << "a second lock on the same dir was granted";
    } catch (const DirBusy& e) {  // what tools/main.cpp turns into exit status kExitDirBusy
      const std::string msg = e.what();
      EXPECT_NE(msg.find(dir), std::string::npos) << msg;
      EXPECT_NE(msg.find("pid " + std::to_string(::getpid())), std::string::npos) << msg;
      EXPECT_NE(msg.find("minrnn train"), std::string::npos) << msg;
    }
  }
  EXPECT_NO_THROW(DirLock again(dir, "minrnn train"));  // released with its holder
}

// A folder that cannot be one says why: a file on its path, not the lock file's ENOTDIR.
// try_lock tells another holder from an error: a second open of a locked file is busy, and its
// lock is free to take once the first is closed; a descriptor that is none fails with its errno.
TEST(DirLock, TryLockTellsABusyFileFromAFailure) {
  testing::TempDir tmp;
  const std::string path = (tmp.path / "f").string();
  const int first = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  const int second = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  ASSERT_GE(first, 0);
  ASSERT_GE(second, 0);
  int err = 0;
  EXPECT_EQ(try_lock(first, &err), LockOutcome::kHeld);
  EXPECT_EQ(try_lock(second, &err), LockOutcome::kBusy);
  EXPECT_EQ(err, EWOULDBLOCK);
  ::close(first);
  EXPECT_EQ(try_lock(second), LockOutcome::kHeld);
  ::close(second);
  EXPECT_EQ(try_lock(-1, &err), LockOutcome::kFailed);
  EXPECT_EQ(err, EBADF);
}

TEST(DirLock, AFolderThatCannotBeMadeSaysWhy) {
  testing::TempDir tmp;
  std::ofstream(tmp.path / "afile") << "mine\n";
  try {
    DirLock lock(tmp.file("afile/run"), "test");
    FAIL() << "locked a folder under a file";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()), tmp.file("afile/run") + ": cannot write in it: " +
                                         tmp.file("afile") + " is a file, not a folder");
  }
}

TEST(DirLock, KilledHolderLeavesNoStaleLock) {
  testing::TempDir tmp;
  const std::string dir = (tmp.path / "work").string();
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    DirLock held(dir, "child");
    const char c = 'x';
    if (::write(ready[1], &c, 1) != 1) ::_exit(1);
    ::pause();  // until SIGKILL: no destructor runs
    ::_exit(0);
  }
  char c = 0;
  ASSERT_EQ(::read(ready[0], &c, 1), 1);
  EXPECT_THROW(DirLock(dir, "parent"), std::runtime_error);
  ::kill(child, SIGKILL);
  int status = 0;
  ::waitpid(child, &status, 0);
  EXPECT_NO_THROW(DirLock(dir, "parent"));
  ::close(ready[0]);
  ::close(ready[1]);
}

}  // namespace
}  // namespace minrnn::io
