// Policy::load: what it names when it cannot load, and several threads loading at once, as
// infer/policy.h allows (six threads of 15 loads each hung: a forked reader waited on LibTorch's
// random-number lock, held at the fork by a thread building its model; an audit of the installed
// package, 2026-11-29).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <thread>
#include <vector>

#include "infer/policy.h"
#include "ops/device.h"
#include "tests/rl/fixtures.h"

namespace minrnn {
namespace {

namespace fs = std::filesystem;

TEST(Policy, LoadNamesWhatIsMissing) {
  testing::TempDir tmp;
  try {
    rl::Policy::load(tmp.path.string());
    FAIL() << "a directory without a checkpoint loaded";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("checkpoint"), std::string::npos) << e.what();
  }
  const auto junk = tmp.path / "junk.pt";
  std::ofstream(junk) << "not a checkpoint";
  try {
    rl::Policy::load(junk.string());
    FAIL() << "junk loaded";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("junk.pt"), std::string::npos) << e.what();
  }
  // PolicyOptions::device is a name (policy.h holds no torch type): a wrong one is named.
  rl::PolicyOptions on_gpu;
  on_gpu.device = "gpu0";
  try {
    rl::Policy::load(junk.string(), on_gpu);
    FAIL() << "device 'gpu0' accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("PolicyOptions::device: expected auto, cpu, cuda or "
                                         "cuda:N, got 'gpu0'"),
              std::string::npos)
        << e.what();
  }
  // A CUDA device where there is none is named as such, before the file is read (not blamed on it).
  if (!core::cuda_unavailable_reason().empty()) {
    on_gpu.device = "cuda:0";
    try {
      rl::Policy::load(junk.string(), on_gpu);
      FAIL() << "device cuda:0 accepted without a GPU";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("PolicyOptions::device cuda:0 was asked for"),
                std::string::npos)
          << e.what();
      EXPECT_NE(std::string(e.what()).find("set PolicyOptions::device = \"cpu\" (or \"auto\")"),
                std::string::npos)
          << e.what();
    }
  }
  // Through an unreadable folder: a runtime_error naming the path, not filesystem_error.
  const fs::path locked = tmp.path / "locked";
  fs::create_directories(locked / "run");
  fs::permissions(locked, fs::perms::none);
  if (::access((locked / "run").c_str(), F_OK) != 0) {  // root reads it anyway
    try {
      rl::Policy::load((locked / "run").string());
      FAIL() << "a run behind an unreadable folder loaded";
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find("locked/run: cannot look here"), std::string::npos)
          << e.what();
    }
  }
  fs::permissions(locked, fs::perms::owner_all);
}

TEST(PolicyLoad, ManyThreadsLoadAtOnceAndAgree) {
#ifdef __SANITIZE_ADDRESS__
  // ASan's allocator is not fork-safe (glibc's malloc takes its locks around a fork): a fork while
  // another thread allocates left the reader's child waiting on ASan's lock (make test-sanitize,
  // 2026-11-29).
  GTEST_SKIP() << "a fork beside allocating threads is not safe under AddressSanitizer";
#endif
  testing::TempDir tmp;
  const auto data = testing::write_hopper_dataset(tmp.path, 300);
  rl::TrainOptions opt;
  opt.quiet = true;
  opt.run_dir = (tmp.path / "run").string();
  rl::train(testing::tiny_config(data, "mingru", {"max_steps=2", "checkpoint_every=2"}), opt);

  const std::vector<double> obs(11, 0.1);
  const std::vector<double> expected = rl::Policy::load(opt.run_dir).act(obs);
  constexpr int kThreads = 4, kLoads = 6;
  std::vector<std::vector<double>> actions(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kLoads; ++i) actions[t] = rl::Policy::load(opt.run_dir).act(obs);
    });
  }
  for (auto& thread : threads) thread.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(actions[t], expected) << "thread " << t;
}

}  // namespace
}  // namespace minrnn
