// CUDA scan correctness against the float64 CPU reference (label `cuda`; skipped without a GPU).
// Method (tool library device/METHOD.md): fresh random inputs per check, outputs poisoned before
// each run and checked fully written, relative error ‖out − ref‖ / ‖ref‖, gradients checked too.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "kernels/cuda/scan_programs.h"  // grid::ScanKernel: plain C++, in every build
#include "models/minrnn.h"
#include "ops/scan.h"
#if defined(MINRNN_WITH_CUDA)
#include "ops/scan_cuda.h"
#include "tests/tensor_compare.h"
#endif

using namespace minrnn::core;

namespace {

#define SKIP_WITHOUT_GPU()                                        \
  if (!cuda_scan_available())                                     \
  GTEST_SKIP() << "no CUDA GPU visible (or built without CUDA): " \
                  "run `make test-cuda` on a GPU machine"

using minrnn::testing::rel_err;

struct CudaCase {
  int64_t B, T, D;
};

}  // namespace

TEST(ScanCuda, ForwardAndBackwardMatchFloat64Reference) {
  SKIP_WITHOUT_GPU();
  const torch::Device gpu(torch::kCUDA);
  // T = 1, sizes that are not multiples of warp or block sizes, long sequences.
  for (CudaCase c : {CudaCase{1, 1, 1}, CudaCase{3, 1, 33}, CudaCase{5, 17, 31},
                     CudaCase{64, 512, 512}, CudaCase{2, 16384, 70}, CudaCase{7, 4097, 129}}) {
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

TEST(ScanCuda, GatedScanMatchesFloat64Reference) {
  SKIP_WITHOUT_GPU();
  const torch::Device gpu(torch::kCUDA);
  for (CudaCase c :
       {CudaCase{1, 1, 1}, CudaCase{5, 17, 31}, CudaCase{64, 512, 512}, CudaCase{2, 16384, 70}}) {
    for (bool positive : {true, false}) {
      for (torch::Dtype dtype : {torch::kFloat, torch::kBFloat16}) {
        torch::manual_seed(c.B * 7 + c.T + c.D);
        // Extreme logits included: ±30 saturates σ in float32.
        torch::Tensor u = (torch::rand({c.B, c.T, c.D}, torch::kDouble) * 60 - 30).to(dtype);
        torch::Tensor cand = torch::randn({c.B, c.T, c.D}, torch::kDouble).to(dtype);
        torch::Tensor h0 = torch::randn({c.B, c.D}, torch::kDouble).to(dtype);
        torch::Tensor w = torch::randn({c.B, c.T, c.D}, torch::kDouble);
        auto ud = u.to(torch::kDouble).requires_grad_(),
             cd = cand.to(torch::kDouble).requires_grad_(),
             hd = h0.to(torch::kDouble).requires_grad_();
        ScanResult ref = gated_scan(ud, cd, hd, positive);
        ((ref.h * w).sum() + ref.h_last.sum()).backward();
        {
          torch::Tensor poison =
              torch::full({c.B, c.T, c.D}, NAN, torch::TensorOptions().device(gpu));
        }
        auto ug = u.to(gpu).requires_grad_(), cg = cand.to(gpu).requires_grad_(),
             hg = h0.to(gpu).requires_grad_();
        ScanResult out = gated_scan(ug, cg, hg, positive);
        ASSERT_TRUE(torch::isfinite(out.h).all().item<bool>()) << "unwritten or non-finite output";
        ((out.h * w.to(dtype).to(gpu)).sum() + out.h_last.sum()).backward();
        const double tol = dtype == torch::kFloat ? 1e-5 : 2e-2;
        EXPECT_LT(rel_err(out.h, ref.h.detach()), tol) << c.B << "x" << c.T << "x" << c.D;
        EXPECT_LT(rel_err(out.h_last, ref.h_last.detach()), tol);
        EXPECT_LT(rel_err(ug.grad(), ud.grad()), tol * 10);
        EXPECT_LT(rel_err(cg.grad(), cd.grad()), tol * 10);
        EXPECT_LT(rel_err(hg.grad(), hd.grad()), tol * 10);
      }
    }
  }
}

TEST(ScanCuda, ComplexScanMatchesFloat64Reference) {
  SKIP_WITHOUT_GPU();
  const torch::Device gpu(torch::kCUDA);
  for (CudaCase c : {CudaCase{1, 1, 1}, CudaCase{3, 300, 33}, CudaCase{2, 4097, 129}}) {
    torch::manual_seed(c.B + c.T + c.D);
    // |a| < 1 as in HGRN (λ ≤ 1 times a unit phase).
    torch::Tensor mag = torch::rand({c.B, c.T, c.D}, torch::kDouble);
    torch::Tensor phase = torch::rand({c.B, c.T, c.D}, torch::kDouble) * 6.28;
    std::vector<torch::Tensor> in = {mag * torch::cos(phase),
                                     mag * torch::sin(phase),
                                     torch::randn({c.B, c.T, c.D}, torch::kDouble),
                                     torch::randn({c.B, c.T, c.D}, torch::kDouble),
                                     torch::randn({c.B, c.D}, torch::kDouble),
                                     torch::randn({c.B, c.D}, torch::kDouble)};
    std::vector<torch::Tensor> ref_in, gpu_in;
    for (auto& t : in) {
      ref_in.push_back(t.clone().requires_grad_());
      gpu_in.push_back(t.to(torch::kFloat).to(gpu).requires_grad_());
    }
    auto loss = [](const ComplexScanResult& r) {
      return r.h_re.sum() + 2 * r.h_im.sum() + r.h_last_re.sum() - r.h_last_im.sum();
    };
    ComplexScanResult ref =
        linear_scan_complex(ref_in[0], ref_in[1], ref_in[2], ref_in[3], ref_in[4], ref_in[5]);
    loss(ref).backward();
    ComplexScanResult out =
        linear_scan_complex(gpu_in[0], gpu_in[1], gpu_in[2], gpu_in[3], gpu_in[4], gpu_in[5]);
    loss(out).backward();
    EXPECT_LT(rel_err(out.h_re, ref.h_re.detach()), 1e-5);
    EXPECT_LT(rel_err(out.h_im, ref.h_im.detach()), 1e-5);
    EXPECT_LT(rel_err(out.h_last_re, ref.h_last_re.detach()), 1e-5);
    for (size_t i = 0; i < in.size(); ++i) {
      EXPECT_LT(rel_err(gpu_in[i].grad(), ref_in[i].grad()), 1e-4) << "input " << i;
    }
  }
}

// Compiled in every build, CPU-only ones too: ScanGpuCheck runs the GPU harness's own code on the
// CPU, so a bug in it shows in `make test` on any machine, not first on a lent GPU.
namespace {

// Picks the CUDA kernel the next scans run. A build without CUDA has none to pick; there only
// ScanGpuCheck runs this harness, on the CPU, where the choice changes nothing.
void use_kernel(grid::ScanKernel kernel) {
#if defined(MINRNN_WITH_CUDA)
  set_cuda_scan_kernel(kernel);
#else
  (void)kernel;
#endif
}

// One scan (direct or gated) of one dtype on the GPU against float64 on the CPU, forward and
// gradients, outputs poisoned first. The same shapes and sources as the emulated tests
// (tests/kernels/scan_emulated_test.cpp), so a GPU-only failure points at what the emulator does
// not model. The float64 reference is computed once and every kernel is checked against it: the
// reference (autograd on the CPU) is what takes the time. `gpu` is the CPU only where the harness
// itself is tested (ScanGpuCheck below): the kernel choice then changes nothing.
void check_every_kernel(CoefficientForm source, CudaCase c, torch::Dtype dtype,
                        torch::Device gpu = torch::kCUDA) {
  torch::manual_seed(c.B * 31 + c.T + c.D);
  const bool direct = source == CoefficientForm::kDirect;
  torch::Tensor first = direct ? torch::rand({c.B, c.T, c.D}, torch::kDouble)
                               : torch::rand({c.B, c.T, c.D}, torch::kDouble) * 60 - 30;
  torch::Tensor second = torch::randn({c.B, c.T, c.D}, torch::kDouble);
  torch::Tensor h0 = torch::randn({c.B, c.D}, torch::kDouble);
  torch::Tensor w = torch::randn({c.B, c.T, c.D}, torch::kDouble).to(dtype).to(torch::kDouble);
  auto scan = [&](const torch::Tensor& f, const torch::Tensor& s, const torch::Tensor& h) {
    return direct ? linear_scan(f, s, h)
                  : gated_scan(f, s, h, source == CoefficientForm::kGatedPositive);
  };
  // Fresh leaves: for float64, .to(dtype) returns t itself, and a leaf shared with the reference
  // would make the GPU input a non-leaf copy without a .grad.
  std::vector<torch::Tensor> rounded, ref_in;
  for (const torch::Tensor& t : {first, second, h0}) {
    rounded.push_back(t.to(dtype).detach());
    ref_in.push_back(rounded.back().to(torch::kDouble).clone().requires_grad_());
  }
  ScanResult ref = scan(ref_in[0], ref_in[1], ref_in[2]);
  ((ref.h * w).sum() + ref.h_last.sum()).backward();
  const double tol = dtype == torch::kDouble  ? 1e-12
                     : dtype == torch::kFloat ? 1e-5
                     : dtype == torch::kHalf  ? 5e-3
                                              : 2e-2;
  // float16 keeps only absolute precision below its normal range (6.1e-5): the error is measured
  // against a floor of 16 of its smallest normals per element (as in
  // tests/kernels/scan_emulated_test.cpp).
  auto err = [&](const torch::Tensor& got, const torch::Tensor& want) {
    const double floor = dtype == torch::kHalf ? std::sqrt(double(want.numel())) * 16 * 6.1e-5 : 0;
    return (got.to(torch::kCPU).to(torch::kDouble) - want).norm().item<double>() /
           std::max({want.norm().item<double>(), floor, 1e-30});
  };
  for (grid::ScanKernel kernel : {grid::ScanKernel::kSimple, grid::ScanKernel::kTiled8,
                                  grid::ScanKernel::kTiled32, grid::ScanKernel::kAuto}) {
    SCOPED_TRACE(grid::kernel_name(kernel));
    use_kernel(kernel);
    std::vector<torch::Tensor> gpu_in;
    for (const torch::Tensor& t : rounded) {  // a copy even where `gpu` is the CPU
      gpu_in.push_back(
          t.to(gpu, t.scalar_type(), /*non_blocking=*/false, /*copy=*/true).requires_grad_());
    }
    { torch::Tensor poison = torch::full({3, c.B, c.T, c.D}, NAN, gpu); }
    ScanResult out = scan(gpu_in[0], gpu_in[1], gpu_in[2]);
    ((out.h * w.to(dtype).to(gpu)).sum() + out.h_last.sum()).backward();
    EXPECT_LT(err(out.h, ref.h.detach()), tol);
    EXPECT_LT(err(out.h_last, ref.h_last.detach()), tol);
    for (int i = 0; i < 3; ++i) {
      EXPECT_LT(err(gpu_in[i].grad(), ref_in[i].grad()), tol * 10) << "gradient " << i;
    }
  }
}

}  // namespace

namespace {

// The minRNN projection scan (minGRU: gates 2, minLSTM: gates 3; log-space cell or vanilla) on
// `device` in float32, forward and every gradient, against its float64 reference on the CPU.
void check_projection_scan(const torch::Device& device) {
  for (int64_t gates : {2, 3}) {
    for (bool positive : {true, false}) {
      for (CudaCase c : {CudaCase{3, 17, 31}, CudaCase{2, 600, 70}, CudaCase{64, 59, 128}}) {
        SCOPED_TRACE("gates " + std::to_string(gates) + (positive ? " log-space " : " vanilla ") +
                     std::to_string(c.B) + "x" + std::to_string(c.T) + "x" + std::to_string(c.D));
        torch::manual_seed(c.B + c.T + gates);
        const torch::Tensor pre = torch::randn({c.B, c.T, gates * c.D}, torch::kDouble) * 3;
        const torch::Tensor h0 = torch::randn({c.B, c.D}, torch::kDouble);
        const torch::Tensor w = torch::randn({c.B, c.T, c.D}, torch::kDouble);
        auto pre_r = pre.clone().requires_grad_(), h0_r = h0.clone().requires_grad_();
        const ScanResult ref = gated_projection_scan_reference(pre_r, gates, h0_r, positive);
        ((ref.h * w).sum() + ref.h_last.sum()).backward();
        auto pre_d = pre.to(torch::kFloat).to(device).requires_grad_();
        auto h0_d = h0.to(torch::kFloat).to(device).requires_grad_();
        const ScanResult out = gated_projection_scan(pre_d, gates, h0_d, positive);
        ((out.h * w.to(torch::kFloat).to(device)).sum() + out.h_last.sum()).backward();
        EXPECT_LT(rel_err(out.h, ref.h.detach()), 1e-5);
        EXPECT_LT(rel_err(out.h_last, ref.h_last.detach()), 1e-5);
        EXPECT_LT(rel_err(pre_d.grad(), pre_r.grad()), 1e-4) << "gradient of the projection";
        EXPECT_LT(rel_err(h0_d.grad(), h0_r.grad()), 1e-4) << "gradient of h0";
      }
    }
  }
}

}  // namespace

// minLSTM's (and minGRU's) fused scan backward on the GPU: the gradient training takes.
TEST(ScanCuda, ProjectionScanGradientsMatchFloat64Reference) {
  SKIP_WITHOUT_GPU();
  check_projection_scan(torch::kCUDA);
}

// The same check on the CPU, so the harness above is proved in `make test` before a GPU runs it.
TEST(ScanGpuCheck, TheProjectionScanHarnessRunsOnTheCpu) {
  check_projection_scan(torch::kCPU);
}

TEST(ScanCuda, EveryKernelEveryDtypeMatchesFloat64Reference) {
  SKIP_WITHOUT_GPU();
  struct Restore {
    ~Restore() { use_kernel(grid::ScanKernel::kAuto); }
  } restore;
  for (CudaCase c : {CudaCase{1, 1, 1}, CudaCase{5, 17, 31}, CudaCase{4, 130, 70},
                     CudaCase{2, 4097, 33}, CudaCase{1, 16385, 3}, CudaCase{64, 2048, 256}}) {
    for (torch::Dtype dtype : {torch::kFloat, torch::kDouble, torch::kBFloat16, torch::kHalf}) {
      for (CoefficientForm source :
           {CoefficientForm::kDirect, CoefficientForm::kGated, CoefficientForm::kGatedPositive}) {
        SCOPED_TRACE(std::to_string(c.B) + "x" + std::to_string(c.T) + "x" + std::to_string(c.D) +
                     " " + c10::toString(dtype) + " source " +
                     std::to_string(static_cast<int>(source)));
        check_every_kernel(source, c, dtype);
      }
    }
  }
}

// The harness above ran on a GPU for the first time on 2026-11-26 and threw in itself (a non-leaf
// input without .grad); run its own code on the CPU here so such a bug shows in `make test`.
TEST(ScanGpuCheck, TheHarnessRunsOnTheCpu) {
  for (torch::Dtype dtype : {torch::kFloat, torch::kDouble}) {
    for (CoefficientForm source :
         {CoefficientForm::kDirect, CoefficientForm::kGated, CoefficientForm::kGatedPositive}) {
      SCOPED_TRACE(std::string(c10::toString(dtype)) + " source " +
                   std::to_string(static_cast<int>(source)));
      check_every_kernel(source, CudaCase{5, 17, 31}, dtype, torch::kCPU);
    }
  }
}
