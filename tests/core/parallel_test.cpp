// Our CPU passes run on torch's threads: at::parallel_for compiled in our translation units (it is
// a header template) must split its range across them — built without -fopenmp it silently ran
// every range on one thread. And the passes give the same bits on one thread as on two, so a seeded
// run does not depend on how its work was split.
#include <ATen/Parallel.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <mutex>
#include <set>

#include "core/dropout.h"
#include "core/gemm_cpu.h"
#include "core/scan.h"

namespace minrnn::core {
namespace {

// Sets torch's thread count for one scope.
class ThreadCount {
 public:
  explicit ThreadCount(int n) : saved_(at::get_num_threads()) { at::set_num_threads(n); }
  ~ThreadCount() { at::set_num_threads(saved_); }

 private:
  int saved_;
};

TEST(Parallel, ParallelForInOurCodeUsesTorchsThreads) {
  ThreadCount two(2);
  std::mutex lock;
  std::set<int> threads;
  int chunks = 0;
  at::parallel_for(0, 64, 1, [&](int64_t, int64_t) {
    std::lock_guard<std::mutex> guard(lock);
    threads.insert(at::get_thread_num());
    ++chunks;
  });
  EXPECT_EQ(chunks, 2) << "a range of 64 on two threads must be split in two";
  EXPECT_EQ(threads, (std::set<int>{0, 1}));
}

// Forward and backward of the minLSTM projection scan, a dropout-add and the CPU products, at
// `threads` threads.
std::vector<torch::Tensor> scan_and_dropout(int threads) {
  ThreadCount scope(threads);
  torch::manual_seed(3);
  auto pre = torch::randn({8, 33, 3 * 96}).requires_grad_(true);
  auto h0 = torch::randn({8, 96}).requires_grad_(true);
  auto grad = torch::randn({8, 33, 96});
  ScanResult r = gated_projection_scan(pre, 3, h0, /*positive_candidate=*/true);
  r.h.backward(grad);
  auto x = torch::randn({8, 33, 96}), y = torch::randn({8, 33, 96});
  // The CPU products (core/gemm_cpu.h) split by row blocks: 8·33 rows, depth 300 in two pieces.
  auto rows = torch::randn({8 * 33, 300}), w = torch::randn({96, 300}), b = torch::randn({96});
  return {r.h.detach(),
          pre.grad(),
          h0.grad(),
          add_dropout_seeded(x, y, 0.1, 0x5EEDull),
          linear_rows(rows, w, b),
          input_grad_rows(rows.narrow(1, 0, 96).contiguous(), w)};
}

TEST(Parallel, PassesGiveTheSameBitsOnOneThreadAndOnTwo) {
  const auto one = scan_and_dropout(1), two = scan_and_dropout(2);
  ASSERT_EQ(one.size(), two.size());
  for (size_t i = 0; i < one.size(); ++i)
    EXPECT_TRUE(torch::equal(one[i], two[i])) << "output " << i;
}

}  // namespace
}  // namespace minrnn::core
