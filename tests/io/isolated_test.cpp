// A probe in a forked child (io/isolated.h): its outcome comes back, and one that never ends is
// stopped at its time limit, where the caller waited forever (a lock another thread held at the
// fork, 2026-11-29).
#include <gtest/gtest.h>
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

}  // namespace
}  // namespace minrnn
