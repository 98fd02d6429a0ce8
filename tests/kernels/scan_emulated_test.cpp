// Every CUDA scan kernel — simple and tiled, forward and backward, direct and gated (from two
// tensors or in place in a minGRU/minLSTM gate projection), real and complex, every storage dtype —
// run on the CPU by the grid emulator (grid_emulator.h) against the float64 reference, on shapes
// chosen to break index arithmetic: B·D not a multiple of a block or a warp, blocks spanning two
// batch rows, T = 1, T not a multiple of a tile, very long T, gates saturated at logits of ±30. The
// emulator also fails the test on any element written twice or never written and on any
// shared-memory race. The same kernels on a GPU: tests/ops/scan_cuda_test.cpp.
#include <gtest/gtest.h>

#include "kernels/cuda/scan_programs.h"
#include "ops/scan.h"
#include "tests/kernels/grid_emulator.h"
#include "tests/tensor_compare.h"

using namespace minrnn::core;
using grid::ScanKernel;
namespace emu = minrnn::testing::emu;
using minrnn::testing::values_of;

namespace {

struct KernelCase {
  int64_t B, T, D;
};
// T = 1; B·D = 1; B·D odd and below one block; blocks spanning batch rows (D = 70); T one past
// the tiles (64 and 256) and below/above them; long sequences over few channels (the tiled
// kernels' shape), with a tail.
const std::vector<KernelCase> kCases = {{1, 1, 1},   {3, 1, 33},   {5, 17, 31},  {4, 130, 70},
                                        {2, 257, 9}, {1, 4097, 5}, {1, 16385, 2}};

const std::vector<ScanKernel> kKernels = {ScanKernel::kSimple, ScanKernel::kTiled8,
                                          ScanKernel::kTiled32};

template <typename T>
torch::Tensor tensor(const std::vector<T>& v, at::IntArrayRef sizes) {
  std::vector<double> d(v.begin(), v.end());
  return torch::tensor(d, torch::kDouble).reshape(sizes);
}

// ‖got − ref‖ / ‖ref‖. Below 16 of T's smallest normal numbers an element keeps only absolute
// precision (float16's subnormals start at 6e-5: a σ(−30)-sized gradient is one of them), so the
// norm is floored there.
template <typename T>
double rel_err(const torch::Tensor& got, const torch::Tensor& ref) {
  const double floor = std::sqrt(double(ref.numel())) * 16 * double(std::numeric_limits<T>::min());
  return (got - ref).norm().item<double>() / std::max(ref.norm().item<double>(), floor);
}

template <typename T>
struct Tol {
  double forward, backward;
};
template <typename T>
Tol<T> tolerance() {
  if constexpr (std::is_same_v<T, double>) return {1e-12, 1e-11};
  if constexpr (std::is_same_v<T, float>) return {1e-5, 1e-4};
  if constexpr (std::is_same_v<T, c10::Half>) return {5e-3, 2e-2};
  return {2e-2, 5e-2};  // bfloat16
}

// The inputs of one case, rounded to the storage dtype, and the float64 reference of the scan
// and of the gradients of sum(h · w) + sum(h_last · w_last). With `blocks` > 0 the inputs are one
// gate projection (B,T,blocks·D) as MinRnn hands it to gated_projection_scan (first = it, second
// undefined; d_first its gradient); with 0, two (B,T,D) tensors.
struct Reference {
  torch::Tensor first, second, h0, w, w_last;  // rounded, float64
  torch::Tensor h, h_last, d_first, d_second, dh0;
};
Reference reference(CoefficientForm source, KernelCase c, int64_t blocks, torch::Dtype storage) {
  torch::manual_seed(c.B * 1000 + c.T + c.D + static_cast<int>(source) + 7 * blocks);
  auto round = [&](torch::Tensor t) { return t.to(storage).to(torch::kDouble); };
  Reference r;
  const auto shape = std::vector<int64_t>{c.B, c.T, c.D};
  if (blocks > 0) {
    r.first = round(torch::rand({c.B, c.T, blocks * c.D}, torch::kDouble) * 60 - 30);
  } else if (source == CoefficientForm::kDirect) {
    r.first = round(torch::rand(shape, torch::kDouble));  // a ∈ (0, 1)
  } else {
    r.first = round(torch::rand(shape, torch::kDouble) * 60 - 30);  // logits up to saturation
  }
  if (blocks == 0) r.second = round(torch::randn(shape, torch::kDouble));
  r.h0 = round(torch::randn({c.B, c.D}, torch::kDouble));
  r.w = round(torch::randn(shape, torch::kDouble));
  r.w_last = round(torch::randn({c.B, c.D}, torch::kDouble));
  auto f = r.first.clone().requires_grad_(), h0 = r.h0.clone().requires_grad_();
  auto s = blocks > 0 ? torch::Tensor() : r.second.clone().requires_grad_();
  const bool positive =
      source == CoefficientForm::kGatedPositive || source == CoefficientForm::kMinLstmPositive;
  ScanResult out = blocks > 0 ? gated_projection_scan_reference(f, blocks, h0, positive)
                   : source == CoefficientForm::kDirect ? linear_scan(f, s, h0)
                                                        : gated_scan(f, s, h0, positive);
  ((out.h * r.w).sum() + (out.h_last * r.w_last).sum()).backward();
  r.h = out.h.detach();
  r.h_last = out.h_last.detach();
  r.d_first = f.grad();
  if (blocks == 0) r.d_second = s.grad();
  r.dh0 = h0.grad();
  return r;
}

// Forward, then backward from the emulated forward's h, of one kernel under the emulator.
template <typename T, typename A>
void check_real(CoefficientForm source, ScanKernel kind, KernelCase c, const Reference& ref) {
  const int64_t blocks = ref.second.defined() ? 0 : ref.first.size(2) / c.D;
  SCOPED_TRACE(std::string(grid::kernel_name(kind)) + " " + std::to_string(c.B) + "x" +
               std::to_string(c.T) + "x" + std::to_string(c.D) + " source " +
               std::to_string(static_cast<int>(source)) + " blocks " + std::to_string(blocks));
  const size_t n = c.B * c.T * c.D, m = c.B * c.D;
  // A projection's second operand is its last block, `last` columns into the one buffer.
  const int64_t stride = blocks > 0 ? blocks * c.D : c.D, last = (blocks - 1) * c.D;
  emu::Log log;
  emu::Buffer<T> first("first", values_of<T>(ref.first)),
      second("second", blocks > 0 ? std::vector<T>{} : values_of<T>(ref.second)),
      h0("h0", values_of<T>(ref.h0)), h("h", n), h_last("h_last", m);
  const emu::In<T> second_in = blocks > 0 ? first.in(last) : second.in();
  scan_math::with_coefficients<T, A, emu::In<T>>(
      source, first.in(), second_in, stride, c.D, [&](auto coef) {
        grid::with_forward_kernel<T, A, emu::Memory>(kind, c.B, c.T, c.D, coef, h0.in(), h.out(),
                                                     h_last.out(),
                                                     [&](const auto& k) { emu::run(k, log); });
      });
  h.check_written(log);
  h_last.check_written(log);
  ASSERT_TRUE(log.ok()) << "forward: " << log.summary();
  const Tol<T> tol = tolerance<T>();
  EXPECT_LT(rel_err<T>(tensor(h.data(), {c.B, c.T, c.D}), ref.h), tol.forward);
  EXPECT_LT(rel_err<T>(tensor(h_last.data(), {c.B, c.D}), ref.h_last), tol.forward);

  // The direct backward reads a only: scan.cpp passes a again as the second input. A projection's
  // gradient is one buffer, every block written once.
  emu::Buffer<T> grad_h("grad_h", values_of<T>(ref.w)),
      grad_last("grad_last", values_of<T>(ref.w_last)),
      d_first("d_first", n * std::max<int64_t>(blocks, 1)), d_second("d_second", blocks ? 0 : n),
      dh0("dh0", m);
  const emu::In<T> second_back = source == CoefficientForm::kDirect ? first.in() : second_in;
  const emu::Out<T> d_second_out = blocks > 0 ? d_first.out(last) : d_second.out();
  scan_math::with_coefficients<T, A, emu::In<T>>(
      source, first.in(), second_back, stride, c.D, [&](auto coef) {
        grid::with_backward_kernel<T, A, emu::Memory>(
            kind, c.B, c.T, c.D, coef, h.in(), h0.in(), grad_h.in(), grad_last.in(), d_first.out(),
            d_second_out, dh0.out(), [&](const auto& k) { emu::run(k, log); });
      });
  d_first.check_written(log);
  d_second.check_written(log);
  dh0.check_written(log);
  ASSERT_TRUE(log.ok()) << "backward: " << log.summary();
  EXPECT_LT(rel_err<T>(tensor(d_first.data(), {c.B, c.T, stride}), ref.d_first), tol.backward);
  if (blocks == 0) {
    EXPECT_LT(rel_err<T>(tensor(d_second.data(), {c.B, c.T, c.D}), ref.d_second), tol.backward);
  }
  EXPECT_LT(rel_err<T>(tensor(dh0.data(), {c.B, c.D}), ref.dh0), tol.backward);
}

template <typename T, typename A>
void check_every_real_kernel() {
  const torch::Dtype storage = c10::CppTypeToScalarType<T>::value;
  // (source, blocks): two tensors, and the gate projections of minGRU (2) and minLSTM (3).
  const std::vector<std::pair<CoefficientForm, int64_t>> layouts = {
      {CoefficientForm::kDirect, 0},         {CoefficientForm::kGated, 0},
      {CoefficientForm::kGatedPositive, 0},  {CoefficientForm::kGated, 2},
      {CoefficientForm::kGatedPositive, 2},  {CoefficientForm::kMinLstm, 3},
      {CoefficientForm::kMinLstmPositive, 3}};
  for (const auto& [source, blocks] : layouts) {
    for (const KernelCase& c : kCases) {
      const Reference ref = reference(source, c, blocks, storage);
      for (ScanKernel kind : kKernels) check_real<T, A>(source, kind, c, ref);
    }
  }
}

// HGRN's complex scan (simple kernel only) on (re, im) planes, forward and backward.
template <typename T, typename A>
void check_complex(KernelCase c) {
  SCOPED_TRACE(std::to_string(c.B) + "x" + std::to_string(c.T) + "x" + std::to_string(c.D));
  const torch::Dtype storage = c10::CppTypeToScalarType<T>::value;
  torch::manual_seed(c.B + c.T + c.D);
  auto round = [&](torch::Tensor t) { return t.to(storage).to(torch::kDouble); };
  const std::vector<int64_t> shape = {c.B, c.T, c.D}, state = {c.B, c.D};
  // |a| < 1 as in HGRN (λ ≤ 1 times a unit phase).
  torch::Tensor mag = torch::rand(shape, torch::kDouble), phase = torch::rand(shape) * 6.28;
  // a, b, h0 (re, im), then the loss weights of h and h_last (re, im).
  std::vector<torch::Tensor> x = {round(mag * torch::cos(phase)),
                                  round(mag * torch::sin(phase)),
                                  round(torch::randn(shape, torch::kDouble)),
                                  round(torch::randn(shape, torch::kDouble)),
                                  round(torch::randn(state, torch::kDouble)),
                                  round(torch::randn(state, torch::kDouble)),
                                  round(torch::randn(shape, torch::kDouble)),
                                  round(torch::randn(shape, torch::kDouble)),
                                  round(torch::randn(state, torch::kDouble)),
                                  round(torch::randn(state, torch::kDouble))};
  std::vector<torch::Tensor> leaf;
  for (int i = 0; i < 6; ++i) leaf.push_back(x[i].clone().requires_grad_());
  ComplexScanResult ref = linear_scan_complex(leaf[0], leaf[1], leaf[2], leaf[3], leaf[4], leaf[5]);
  ((ref.h_re * x[6]).sum() + (ref.h_im * x[7]).sum() + (ref.h_last_re * x[8]).sum() +
   (ref.h_last_im * x[9]).sum())
      .backward();

  std::vector<std::unique_ptr<emu::Buffer<T>>> in;
  for (int i = 0; i < 10; ++i) {
    in.push_back(
        std::make_unique<emu::Buffer<T>>("input " + std::to_string(i), values_of<T>(x[i])));
  }
  auto pin = [&](int i) { return grid::Planes<emu::In<T>>{in[i]->in(), in[i + 1]->in()}; };
  const size_t n = c.B * c.T * c.D, m = c.B * c.D;
  emu::Buffer<T> h_re("h_re", n), h_im("h_im", n), last_re("h_last_re", m), last_im("h_last_im", m);
  emu::Log log;
  emu::run(grid::ComplexForward<T, A, emu::Memory>{{c.B, c.T, c.D},
                                                   pin(0),
                                                   pin(2),
                                                   pin(4),
                                                   {h_re.out(), h_im.out()},
                                                   {last_re.out(), last_im.out()}},
           log);
  for (auto* b : {&h_re, &h_im, &last_re, &last_im}) b->check_written(log);
  ASSERT_TRUE(log.ok()) << "forward: " << log.summary();
  const Tol<T> tol = tolerance<T>();
  EXPECT_LT(rel_err<T>(tensor(h_re.data(), shape), ref.h_re.detach()), tol.forward);
  EXPECT_LT(rel_err<T>(tensor(h_im.data(), shape), ref.h_im.detach()), tol.forward);
  EXPECT_LT(rel_err<T>(tensor(last_re.data(), state), ref.h_last_re.detach()), tol.forward);
  EXPECT_LT(rel_err<T>(tensor(last_im.data(), state), ref.h_last_im.detach()), tol.forward);

  std::vector<std::unique_ptr<emu::Buffer<T>>> grads;
  for (int i = 0; i < 6; ++i) {
    grads.push_back(std::make_unique<emu::Buffer<T>>("grad " + std::to_string(i), i < 4 ? n : m));
  }
  auto pout = [&](int i) {
    return grid::Planes<emu::Out<T>>{grads[i]->out(), grads[i + 1]->out()};
  };
  emu::run(grid::ComplexBackward<T, A, emu::Memory>{{c.B, c.T, c.D},
                                                    pin(0),
                                                    {h_re.in(), h_im.in()},
                                                    pin(4),
                                                    pin(6),
                                                    pin(8),
                                                    pout(0),
                                                    pout(2),
                                                    pout(4)},
           log);
  for (auto& g : grads) g->check_written(log);
  ASSERT_TRUE(log.ok()) << "backward: " << log.summary();
  for (int i = 0; i < 6; ++i) {
    const auto sizes = i < 4 ? shape : state;
    EXPECT_LT(rel_err<T>(tensor(grads[i]->data(), sizes), leaf[i].grad()), tol.backward)
        << "gradient of input " << i;
  }
}

template <typename T, typename A>
void check_every_complex_case() {
  for (const KernelCase& c : kCases) check_complex<T, A>(c);
}

}  // namespace

TEST(ScanEmulated, ComplexKernelEveryDtype) {
  check_every_complex_case<float, float>();
  check_every_complex_case<double, double>();
  check_every_complex_case<c10::BFloat16, float>();
  check_every_complex_case<c10::Half, float>();
}

TEST(ScanEmulated, EveryRealKernelFloat32) {
  check_every_real_kernel<float, float>();
}
TEST(ScanEmulated, EveryRealKernelFloat64) {
  check_every_real_kernel<double, double>();
}
TEST(ScanEmulated, EveryRealKernelBFloat16) {
  check_every_real_kernel<c10::BFloat16, float>();
}
TEST(ScanEmulated, EveryRealKernelFloat16) {
  check_every_real_kernel<c10::Half, float>();
}

// The kernel choice at the shapes measured on an H200 (132 SMs × 2048 threads; docs/core.md,
// "Which kernel"): each shape gets the kernel that was fastest there, or either where they tied.
TEST(ScanKernelChoice, FollowsTheH200Measurements) {
  using grid::choose_scan_kernel;
  const int64_t h200 = 132 * 2048;
  EXPECT_EQ(choose_scan_kernel(64, 60, 256, h200), ScanKernel::kSimple);      // the agents' context
  EXPECT_EQ(choose_scan_kernel(512, 4096, 1024, h200), ScanKernel::kSimple);  // B·D fills the GPU
  EXPECT_EQ(choose_scan_kernel(8, 4096, 64, h200), ScanKernel::kTiled8);      // B·D 512
  EXPECT_EQ(choose_scan_kernel(8, 4096, 256, h200), ScanKernel::kTiled8);     // 2 k
  EXPECT_EQ(choose_scan_kernel(8, 512, 1024, h200), ScanKernel::kTiled32);    // 8 k
  EXPECT_EQ(choose_scan_kernel(64, 16384, 256, h200), ScanKernel::kTiled32);  // 16 k
  EXPECT_EQ(choose_scan_kernel(64, 4096, 1024, h200), ScanKernel::kTiled32);  // 64 k
}

// MINRNN_SCAN_KERNEL's values (ops/scan_cuda.cpp): each kernel by the name kernel_name gives it,
// and nothing else — not a prefix, not a longer name.
TEST(ScanKernelChoice, KernelsAreNamedAsKernelNameWritesThem) {
  for (ScanKernel k :
       {ScanKernel::kAuto, ScanKernel::kSimple, ScanKernel::kTiled8, ScanKernel::kTiled32}) {
    ScanKernel got = k == ScanKernel::kAuto ? ScanKernel::kSimple : ScanKernel::kAuto;
    EXPECT_TRUE(grid::scan_kernel_named(grid::kernel_name(k), &got)) << grid::kernel_name(k);
    EXPECT_EQ(got, k);
  }
  ScanKernel untouched = ScanKernel::kTiled8;
  for (const char* bad : {"", "tiled", "tiled322", "Simple", "tiled8 "}) {
    EXPECT_FALSE(grid::scan_kernel_named(bad, &untouched)) << '"' << bad << '"';
  }
  EXPECT_EQ(untouched, ScanKernel::kTiled8);
}
