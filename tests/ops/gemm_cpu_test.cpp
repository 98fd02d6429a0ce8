// The training path's CPU products (ops/gemm_cpu.h) and the Linear op over them (ops/affine.h),
// against float64 references: every row tail of the 6-row tiles, depths across the 256-deep
// pieces, with and without a bias; and the shapes the kernel leaves to LibTorch. On a GPU, the op
// with its column-sum bias gradient.
#include "ops/gemm_cpu.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <string>

#include "ops/affine.h"

namespace minrnn::core {
namespace {

// |got − want| within float32 rounding of a depth-long sum of O(1) terms.
void expect_near(const torch::Tensor& got, const torch::Tensor& want, int64_t depth) {
  ASSERT_EQ(got.sizes(), want.sizes());
  const double tol = 4e-7 * depth + 1e-5;
  const double err = (got.to(torch::kDouble) - want).abs().max().item<double>();
  EXPECT_LE(err, tol * (1.0 + want.abs().max().item<double>()));
}

// The kernel on every machine that can run it, AVX-512 ones included (which by default leave these
// products to the BLAS): choose_gemm_cpu(kOn) for the test.
struct KernelOn {
  KernelOn() { choose_gemm_cpu(GemmCpuChoice::kOn); }
  ~KernelOn() { choose_gemm_cpu(GemmCpuChoice::kDefault); }
};

TEST(GemmCpu, LinearAndInputGradMatchFloat64AtEveryTileTailAndDepth) {
  if (!gemm_cpu_supported()) GTEST_SKIP() << "the kernel needs an x86-64 CPU with AVX2 and FMA";
  const KernelOn on;
  torch::manual_seed(11);
  for (int64_t rows : {1, 5, 6, 7, 13, 96, 97, 200}) {
    for (int64_t n : {16, 48, 272}) {  // 272: dx's depth crosses a 256-deep piece
      for (int64_t k : {16, 32, 300, 528}) {
        const auto x = torch::randn({rows, k}), w = torch::randn({n, k}), b = torch::randn({n});
        const auto xd = x.to(torch::kDouble), wd = w.to(torch::kDouble);
        const auto bd = b.to(torch::kDouble);
        SCOPED_TRACE("rows " + std::to_string(rows) + " n " + std::to_string(n) + " k " +
                     std::to_string(k));
        const torch::Tensor y = gemm_cpu_linear(x, w, b);
        ASSERT_TRUE(y.defined());
        expect_near(y, torch::addmm(bd, xd, wd.t()), k);
        expect_near(gemm_cpu_linear(x, w, {}), xd.mm(wd.t()), k);
        // dy (rows, n) · w (n, k): here the reduction is over n and the output width is k.
        const auto dy = torch::randn({rows, n});
        const torch::Tensor dx = gemm_cpu_input_grad(dy, w);
        ASSERT_EQ(dx.defined(), k % 16 == 0);  // its output width is k
        if (dx.defined()) expect_near(dx, dy.to(torch::kDouble).mm(wd), n);
      }
    }
  }
}

TEST(GemmCpu, ShapesAndTypesItDoesNotTakeAreLeftToLibTorch) {
  const KernelOn on;
  const auto x = torch::randn({10, 32}), w = torch::randn({24, 32});  // 24 outputs: not 16·n
  EXPECT_FALSE(gemm_cpu_linear(x, w, {}).defined());
  EXPECT_FALSE(gemm_cpu_input_grad(torch::randn({10, 16}), torch::randn({16, 24})).defined());
  EXPECT_FALSE(
      gemm_cpu_linear(x.to(torch::kDouble), torch::randn({16, 32}, torch::kDouble), {}).defined());
  EXPECT_FALSE(gemm_cpu_linear(torch::randn({32, 10}).t(), torch::randn({16, 32}), {}).defined());
  // linear_rows still gives the product, by LibTorch.
  expect_near(linear_rows(x, w, {}), x.to(torch::kDouble).mm(w.to(torch::kDouble).t()), 32);
}

// Whatever this machine's choice (the kernel, or LibTorch on AVX-512 CPUs), the products the
// training path takes match float64.
TEST(GemmCpu, ThePathThisMachineTakesMatchesFloat64) {
  torch::manual_seed(13);
  const auto x = torch::randn({97, 64}), w = torch::randn({48, 64}), b = torch::randn({48});
  const auto xd = x.to(torch::kDouble), wd = w.to(torch::kDouble);
  expect_near(linear_rows(x, w, b), torch::addmm(b.to(torch::kDouble), xd, wd.t()), 64);
  const auto dy = torch::randn({97, 48});
  expect_near(input_grad_rows(dy, w), dy.to(torch::kDouble).mm(wd), 48);
  EXPECT_EQ(gemm_cpu_linear(x, w, b).defined(), gemm_cpu_enabled());
}

// The Linear op's gradients (input by the kernel, weight and bias by LibTorch) against
// torch::linear's autograd in float64, on a 3-D input as the blocks pass it.
TEST(GemmCpu, LinearOpGradientsMatchAutogradInFloat64) {
  const KernelOn on;  // the op's own backward where the kernel runs; torch::linear elsewhere
  torch::manual_seed(12);
  const auto x0 = torch::randn({4, 37, 64}), w0 = torch::randn({96, 64}) * 0.1,
             b0 = torch::randn({96}), g = torch::randn({4, 37, 96});
  auto x = x0.clone().requires_grad_(true), w = w0.clone().requires_grad_(true),
       b = b0.clone().requires_grad_(true);
  const torch::Tensor y = affine(x, w, b);
  (y * g).sum().backward();
  auto xd = x0.to(torch::kDouble).requires_grad_(true),
       wd = w0.to(torch::kDouble).requires_grad_(true),
       bd = b0.to(torch::kDouble).requires_grad_(true);
  const torch::Tensor yd = torch::linear(xd, wd, bd);
  (yd * g.to(torch::kDouble)).sum().backward();
  expect_near(y.detach(), yd.detach(), 64);
  expect_near(x.grad(), xd.grad(), 96);
  expect_near(w.grad(), wd.grad(), 4 * 37);
  expect_near(b.grad(), bd.grad(), 4 * 37);
  // Without a bias, and with an input that needs no gradient.
  auto w2 = w0.clone().requires_grad_(true);
  (affine(x0, w2, torch::Tensor()) * g).sum().backward();
  expect_near(w2.grad(), wd.grad(), 4 * 37);
}

// On CUDA the op's bias gradient is the column-sum kernel (kernels/cuda/pointwise_programs.h,
// emulated in tests/kernels/column_sums_emulated_test.cpp): 4 × 300 rows take two passes of it.
// Outputs of 96 a row, and of 3 (DT's action head), whose gradient the backward's products read
// laid out by columns. Float32 and float64 against torch::linear's autograd in float64 on the
// CPU. Skips without a GPU.
TEST(AffineCuda, GradientsMatchTorchLinearInFloat64) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA GPU visible";
  for (const int64_t width : {96, 3}) {
    torch::manual_seed(13);
    const auto x0 = torch::randn({4, 300, 64}, torch::kDouble),
               w0 = torch::randn({width, 64}, torch::kDouble) * 0.1,
               b0 = torch::randn({width}, torch::kDouble),
               g = torch::randn({4, 300, width}, torch::kDouble);
    auto xd = x0.clone().requires_grad_(true), wd = w0.clone().requires_grad_(true),
         bd = b0.clone().requires_grad_(true);
    const torch::Tensor yd = torch::linear(xd, wd, bd);
    (yd * g).sum().backward();
    for (auto dtype : {torch::kFloat, torch::kDouble}) {
      SCOPED_TRACE(std::string(dtype == torch::kFloat ? "float32" : "float64") + ", " +
                   std::to_string(width) + " outputs");
      const auto on = torch::TensorOptions().device(torch::kCUDA).dtype(dtype);
      auto x = x0.to(on).requires_grad_(true), w = w0.to(on).requires_grad_(true),
           b = b0.to(on).requires_grad_(true);
      const torch::Tensor y = affine(x, w, b);
      (y * g.to(on)).sum().backward();
      const int64_t rows = 4 * 300;
      expect_near(y.detach().cpu(), yd.detach(), 64);
      expect_near(x.grad().cpu(), xd.grad(), width);
      expect_near(w.grad().cpu(), wd.grad(), rows);
      expect_near(b.grad().cpu(), bd.grad(), rows);
    }
  }
}

}  // namespace
}  // namespace minrnn::core
