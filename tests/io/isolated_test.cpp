// A probe in a forked child (io/isolated.h): its outcome comes back, and one that never ends is
// stopped at its time limit, where the caller waited forever (a lock another thread held at the
// fork, 2026-11-29).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <stdexcept>
#include <thread>

#include "io/isolated.h"

namespace minrnn {
namespace {

TEST(Isolated, AProbesOutcomeComesBack) {
  const io::ProbeResult fine = io::probe_in_child([] {}, 0);
  EXPECT_TRUE(fine.ok);
  const io::ProbeResult threw = io::probe_in_child([] { throw std::runtime_error("no"); }, 0);
  EXPECT_FALSE(threw.ok);
  EXPECT_FALSE(threw.died);
  EXPECT_EQ(threw.message, "no");
}

TEST(Isolated, AProbePastItsTimeLimitIsStopped) {
  const auto start = std::chrono::steady_clock::now();
  const io::ProbeResult stuck = io::probe_in_child(
      [] { std::this_thread::sleep_for(std::chrono::seconds(30)); }, 0, /*seconds=*/0.3);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
  EXPECT_FALSE(stuck.ok);
  EXPECT_TRUE(stuck.died);
  EXPECT_EQ(stuck.message, "did not finish within 0.3 s (stopped)");
}

// The child's pipe carries what its body writes; a body that throws exits with status 1; a child
// the parent leaves without waiting for is killed and reaped, not left running.
TEST(Isolated, AForkedChildAnswersThroughItsPipeAndIsAlwaysReaped) {
  {
    io::ForkedChild child([](int fd) {
      if (::write(fd, "hi", 2) != 2) throw std::runtime_error("no pipe");
    });
    char got[3] = {};
    EXPECT_EQ(::read(child.read_fd(), got, 2), 2);
    EXPECT_STREQ(got, "hi");
    const int status = child.wait();
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  }
  {
    io::ForkedChild child([](int) { throw std::runtime_error("body failed"); });
    const int status = child.wait();
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 1) << status;
  }
  const auto start = std::chrono::steady_clock::now();
  pid_t pid = -1;
  {
    const io::ForkedChild child([](int) { std::this_thread::sleep_for(std::chrono::seconds(30)); });
    pid = child.pid();
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
  EXPECT_EQ(::waitpid(pid, nullptr, WNOHANG), -1);  // reaped: no longer this process's child
  EXPECT_EQ(errno, ECHILD);
}

// One wording and one number for how a child ended, wherever a child is waited for (a probe, the
// HDF5 reader's child, a sweep's runs, a command): five places said it three ways.
TEST(Isolated, AWaitStatusIsSaidOneWay) {
  const pid_t exits = ::fork();
  if (exits == 0) ::_exit(3);
  const int exited = io::wait_for_child(exits);
  EXPECT_EQ(io::exit_code_of(exited), 3);
  EXPECT_EQ(io::wait_status_text(exited), "exited with status 3");

  // SIGTERM, not SIGSEGV: the sanitizer build's handler turns a SEGV into a report and exit 1.
  const pid_t stopped = ::fork();
  if (stopped == 0) {
    ::kill(::getpid(), SIGTERM);
    ::_exit(0);
  }
  const int killed = io::wait_for_child(stopped);
  EXPECT_EQ(io::exit_code_of(killed), 128 + SIGTERM);
  EXPECT_EQ(io::wait_status_text(killed), "was killed by signal 15 (Terminated)");

  const io::ProbeResult probe = io::probe_in_child([] { ::kill(::getpid(), SIGKILL); }, 0);
  EXPECT_TRUE(probe.died);
  EXPECT_EQ(probe.message, "was killed by signal 9 (Killed)");
}

}  // namespace
}  // namespace minrnn
