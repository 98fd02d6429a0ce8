// CUDA scan correctness against the float64 CPU reference (label `cuda`; skipped without a GPU).
// Method (tool library device/METHOD.md): fresh random inputs per check, outputs poisoned before
// each run and checked fully written, relative error ‖out − ref‖ / ‖ref‖, gradients checked too.
#include <gtest/gtest.h>

#include "core/minrnn.h"
#include "core/scan.h"

using namespace minrnn::core;

namespace {

#define SKIP_WITHOUT_GPU()                                        \
  if (!cuda_scan_available())                                     \
  GTEST_SKIP() << "no CUDA GPU visible (or built without CUDA): " \
                  "run `make test-cuda` on a GPU machine"

double rel_err(const torch::Tensor& got, const torch::Tensor& ref) {
  return (got.to(torch::kCPU).to(torch::kDouble) - ref).norm().item<double>() /
         std::max(ref.norm().item<double>(), 1e-30);
}

struct Case {
  int64_t B, T, D;
};

}  // namespace

TEST(ScanCuda, ForwardAndBackwardMatchFloat64Reference) {
  SKIP_WITHOUT_GPU();
  const torch::Device gpu(torch::kCUDA);
  // T = 1, sizes that are not multiples of warp or block sizes, long sequences.
  for (Case c : {Case{1, 1, 1}, Case{3, 1, 33}, Case{5, 17, 31}, Case{64, 512, 512},
                 Case{2, 16384, 70}, Case{7, 4097, 129}}) {
    for (torch::Dtype dtype : {torch::kFloat, torch::kBFloat16}) {
      torch::manual_seed(c.B * 1000 + c.T + c.D);
      torch::Tensor a = torch::rand({c.B, c.T, c.D}, torch::kDouble);
      torch::Tensor b = torch::randn({c.B, c.T, c.D}, torch::kDouble);
      torch::Tensor h0 = torch::randn({c.B, c.D}, torch::kDouble);
      torch::Tensor w = torch::randn({c.B, c.T, c.D}, torch::kDouble);
      // Reference in float64 on the CPU, from the same (rounded) inputs the GPU sees.
      auto ad = a.to(dtype).to(torch::kDouble).requires_grad_(),
           bd = b.to(dtype).to(torch::kDouble).requires_grad_(),
           hd = h0.to(dtype).to(torch::kDouble).requires_grad_();
      ScanResult ref = linear_scan(ad, bd, hd);
      ((ref.h * w).sum() + ref.h_last.sum()).backward();

      auto ag = a.to(dtype).to(gpu).requires_grad_(), bg = b.to(dtype).to(gpu).requires_grad_(),
           hg = h0.to(dtype).to(gpu).requires_grad_();
      ScanResult out = linear_scan(ag, bg, hg);
      ASSERT_TRUE(torch::isfinite(out.h).all().item<bool>()) << "unwritten or non-finite output";
      ((out.h * w.to(dtype).to(gpu)).sum() + out.h_last.sum()).backward();
      const double tol = dtype == torch::kFloat ? 1e-5 : 2e-2;
      EXPECT_LT(rel_err(out.h, ref.h.detach()), tol) << c.B << "x" << c.T << "x" << c.D;
      EXPECT_LT(rel_err(out.h_last, ref.h_last.detach()), tol);
      EXPECT_LT(rel_err(ag.grad(), ad.grad()), tol * 10);
      EXPECT_LT(rel_err(bg.grad(), bd.grad()), tol * 10);
      EXPECT_LT(rel_err(hg.grad(), hd.grad()), tol * 10);
    }
  }
}

TEST(ScanCuda, EveryOutputIsWritten) {
  SKIP_WITHOUT_GPU();
  torch::manual_seed(7);
  const torch::Device gpu(torch::kCUDA);
  for (int trial = 0; trial < 3; ++trial) {
    // Poison the caching allocator's next blocks with NaN so an unwritten element cannot pass.
    { torch::Tensor poison = torch::full({4, 1000, 77}, NAN, torch::TensorOptions().device(gpu)); }
    torch::Tensor a = torch::rand({4, 1000, 77}, gpu), b = torch::randn({4, 1000, 77}, gpu);
    ScanResult out = linear_scan(a, b);
    EXPECT_TRUE(torch::isfinite(out.h).all().item<bool>());
    EXPECT_LT(rel_err(out.h, linear_scan(a.cpu().to(torch::kDouble), b.cpu().to(torch::kDouble)).h),
              1e-5);
  }
}

TEST(ScanCuda, MinRnnLayersWithSaturatedGatesMatchCpu) {
  SKIP_WITHOUT_GPU();
  const torch::Device gpu(torch::kCUDA);
  for (CellKind cell : {CellKind::kMinGRU, CellKind::kMinLSTM}) {
    torch::manual_seed(8);
    MinRnnOptions o;
    o.cell = cell;
    o.input_size = 48;
    o.expansion = 2.0;
    MinRnn cpu_layer(o), gpu_layer(o);
    {
      torch::NoGradGuard g;
      cpu_layer->gates->bias.uniform_(-30, 30);
      auto src = cpu_layer->named_parameters();
      for (auto& p : gpu_layer->named_parameters()) p.value().copy_(src[p.key()]);
    }
    gpu_layer->to(gpu);
    torch::Tensor x = torch::randn({3, 4096, 48});
    torch::NoGradGuard g;
    EXPECT_LT(rel_err(gpu_layer(x.to(gpu)), cpu_layer(x).to(torch::kDouble)), 1e-5);
  }
}
