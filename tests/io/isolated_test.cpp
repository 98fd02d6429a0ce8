// A probe in a forked child (io/isolated.h): its outcome comes back, and one that never ends is
// stopped at its time limit, where the caller waited forever (a lock another thread held at the
// fork, 2026-11-29).
#include <gtest/gtest.h>

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

}  // namespace
}  // namespace minrnn
