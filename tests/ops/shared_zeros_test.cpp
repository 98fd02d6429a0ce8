// The shared read-only zeros (ops/shared_zeros.h): one buffer per device and dtype, grown as
// needed; and the ops that read them (a real or complex scan with no start state, whose last
// state's gradient nobody sends) give what explicit zeros give and leave the buffer zero. An
// output nothing reads costs no zeros of its own: no fill runs for it in the backward (on CUDA,
// a launch in every replayed step).
#include "ops/shared_zeros.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <vector>

#include "ops/residual_norm.h"
#include "ops/scan.h"
#include "ops/scan_complex.h"
#include "tests/aten_calls.h"

namespace minrnn::core {
namespace {

using testing::fills_in;

TEST(SharedZeros, AreOneBufferPerDtypeGrownAsNeeded) {
  const torch::Tensor f = torch::ones({2}), d = torch::ones({2}, torch::kDouble);
  const torch::Tensor a = zeros_to_read({3, 4}, f), b = zeros_to_read({2, 5}, f);
  EXPECT_EQ(a.sizes(), (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(a.data_ptr(), b.data_ptr());
  EXPECT_EQ(a.scalar_type(), torch::kFloat);
  const torch::Tensor c = zeros_to_read({3, 4}, d);
  EXPECT_EQ(c.scalar_type(), torch::kDouble);
  EXPECT_NE(c.data_ptr(), a.data_ptr());
  const torch::Tensor big = zeros_to_read({1000, 7}, f);  // grows; the old views stay valid
  for (const torch::Tensor& t : {a, b, c, big}) EXPECT_EQ(t.count_nonzero().item<int64_t>(), 0);
}

TEST(SharedZeros, AScanWithoutAStartStateIsTheScanFromZerosAndWritesNone) {
  torch::manual_seed(3);
  const torch::Tensor pre0 = torch::randn({4, 9, 2 * 16});
  auto pre = pre0.clone().requires_grad_(true), pre_ref = pre0.clone().requires_grad_(true);
  const ScanResult r = gated_projection_scan(pre, 2, torch::Tensor(), false);
  const ScanResult ref = gated_projection_scan(pre_ref, 2, torch::zeros({4, 16}), false);
  EXPECT_TRUE(torch::equal(r.h, ref.h));
  r.h.sum().backward();  // h_last unused: its gradient is the shared zeros
  ref.h.sum().backward();
  EXPECT_TRUE(torch::equal(pre.grad(), pre_ref.grad()));
  EXPECT_EQ(zeros_to_read({4 * 16 * 9}, pre0).count_nonzero().item<int64_t>(), 0);
}

TEST(SharedZeros, AComplexScanWithoutAStartStateIsTheScanFromZeros) {
  torch::manual_seed(4);
  std::vector<torch::Tensor> in, in_ref;
  for (int i = 0; i < 4; ++i) {
    const torch::Tensor x = torch::randn({3, 7, 8}) * 0.5;
    in.push_back(x.clone().requires_grad_(true));
    in_ref.push_back(x.clone().requires_grad_(true));
  }
  const torch::Tensor zeros = torch::zeros({3, 8});
  const ComplexScanResult r = linear_scan_complex(in[0], in[1], in[2], in[3], {}, {});
  const ComplexScanResult ref =
      linear_scan_complex(in_ref[0], in_ref[1], in_ref[2], in_ref[3], zeros, zeros.clone());
  EXPECT_TRUE(torch::equal(r.h_re, ref.h_re));
  EXPECT_TRUE(torch::equal(r.h_im, ref.h_im));
  (r.h_re.sum() + r.h_im.sum()).backward();  // the last states unused: their gradients unsent
  (ref.h_re.sum() + ref.h_im.sum()).backward();
  for (int i = 0; i < 4; ++i) EXPECT_TRUE(torch::equal(in[i].grad(), in_ref[i].grad())) << i;
  EXPECT_EQ(zeros_to_read({3 * 7 * 8}, zeros).count_nonzero().item<int64_t>(), 0);
}

// An op whose output nothing reads runs no more fills than with every output's gradient sent
// (LibTorch fills zeros for each unsent one unless the op asks it not to).
TEST(SharedZeros, AnOutputNothingReadsCostsNoFill) {
  torch::manual_seed(5);
  const torch::Tensor pre = torch::randn({4, 9, 2 * 16}).requires_grad_(true),
                      g = torch::randn({4, 9, 16}), g_last = torch::randn({4, 16});
  const auto scan = [&] { return gated_projection_scan(pre, 2, torch::Tensor(), false); };
  scan().h.backward(g);  // the shared zeros made, once
  const int64_t scan_sent = fills_in([&] {
    const ScanResult r = scan();
    torch::autograd::backward({r.h, r.h_last}, {g, g_last});
  });
  EXPECT_EQ(fills_in([&] { scan().h.backward(g); }), scan_sent);  // h_last unread

  const torch::Tensor x = torch::randn({6, 16}).requires_grad_(true),
                      y = torch::randn({6, 16}).requires_grad_(true), gamma = torch::ones({16}),
                      beta = torch::zeros({16}), ds = torch::randn({6, 16}),
                      dn = torch::randn({6, 16});
  const auto join = [&] { return add_dropout_norm(x, y, 0.0, false, gamma, beta, 1e-5); };
  join().normed.backward(dn);
  const int64_t join_sent = fills_in([&] {
    const ResidualNorm r = join();
    torch::autograd::backward({r.sum, r.normed}, {ds, dn});
  });
  EXPECT_EQ(fills_in([&] { join().normed.backward(dn); }), join_sent);  // the sum unread
}

}  // namespace
}  // namespace minrnn::core
