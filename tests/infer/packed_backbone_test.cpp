// The inference path (infer/packed_backbone.h, kernels/cpu/float_loops.h) against the LibTorch
// modules it packs: every backbone and option, token chunks of any size carried across calls,
// last_only.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <stdexcept>

#include "infer/pack.h"
#include "infer/packed_backbone.h"
#include "kernels/cpu/workers.h"
#include "models/hgrn.h"
#include "models/minrnn_stack.h"
#include "models/transformer.h"

namespace minrnn::core {
namespace {

// |a − b| ≤ atol + rtol·|b| element-wise, reporting the worst element.
void expect_close_each(const torch::Tensor& got, const torch::Tensor& want, double tol,
                       const std::string& what) {
  ASSERT_EQ(got.sizes(), want.sizes()) << what;
  auto excess = (got - want).abs() - (tol + tol * want.abs());
  EXPECT_LE(excess.max().item<double>(), 0.0)
      << what << ": max |diff| " << (got - want).abs().max().item<double>();
}

// Moves every parameter off its initial value (LayerNorm weights off 1, biases off 0, HGRN bounds
// off uniform) so no packed weight can be silently wrong and still match.
void perturb(torch::nn::Module& m, uint64_t seed) {
  torch::manual_seed(seed);
  torch::NoGradGuard no_grad;
  for (auto& p : m.parameters()) p.add_(torch::randn_like(p) * 0.2);
}

// Runs x (B, T, D) through `fast` in chunks of the given sizes (cycled), returning (B, T, D).
torch::Tensor run_chunks(PackedBackbone& fast, const torch::Tensor& x,
                         std::vector<int64_t> chunks) {
  const int64_t B = x.size(0), T = x.size(1), D = x.size(2);
  fast.reset(B);
  auto out = torch::empty_like(x);
  int64_t t = 0;
  for (size_t c = 0; t < T; ++c) {
    const int64_t n = std::min(chunks[c % chunks.size()], T - t);
    auto in = x.slice(1, t, t + n).contiguous().clone();
    auto y = torch::empty({B, n, D});
    fast.run(in.data_ptr<float>(), n, y.data_ptr<float>(), false);
    out.slice(1, t, t + n).copy_(y);
    t += n;
  }
  return out;
}

void check_backbone(SequenceModel& model, const std::string& what, bool carries_state) {
  model.eval();
  torch::NoGradGuard no_grad;
  torch::manual_seed(3);
  const int64_t B = 3, T = 11, D = 16;
  auto x = torch::randn({B, T, D});
  auto want = model.forward(x);
  auto fast = pack_backbone(model);
  EXPECT_EQ(fast->d_model(), D);
  EXPECT_EQ(fast->streaming(), carries_state) << what;
  // The whole sequence as one chunk.
  expect_close_each(run_chunks(*fast, x, {T}), want, 1e-5, what + ", one chunk");
  if (carries_state) {  // state carried across chunks of 1, 3 and 2 tokens, as a rollout feeds it
    expect_close_each(run_chunks(*fast, x, {1, 3, 2}), want, 1e-5, what + ", chunks 1/3/2");
  }
  // last_only: each sequence's last token, also after a first chunk.
  fast->reset(B);
  auto in = x.clone();
  auto last = torch::empty({B, D});
  fast->run(in.data_ptr<float>(), T, last.data_ptr<float>(), true);
  expect_close_each(last, want.select(1, T - 1), 1e-5, what + ", last_only");
  // Reset really forgets: a second run from reset gives the same.
  fast->reset(B);
  in = x.clone();
  auto again = torch::empty({B, D});
  fast->run(in.data_ptr<float>(), T, again.data_ptr<float>(), true);
  EXPECT_TRUE(torch::equal(again, last)) << what;
}

// A · B with B (k, n) row-major, strided and accumulating, against a double loop: blocks of 32
// columns and the tail, every row count of a block and several blocks.
TEST(CpuFloatLoops, GemmAbMatchesTheLoopForFewAndManyRows) {
  std::mt19937 rng(2);
  std::normal_distribution<float> normal;
  for (int64_t m = 1; m <= 9; ++m) {
    for (auto [n, k] : std::vector<std::array<int64_t, 2>>{{1, 1}, {17, 5}, {83, 33}, {130, 128}}) {
      const int64_t lda = k + 2, ldb = n + 1, ldc = n + 3;
      std::vector<float> a(m * lda), b(k * ldb), c(m * ldc);
      for (auto* v : {&a, &b, &c})
        for (auto& e : *v) e = normal(rng);
      for (float beta : {0.0f, 1.0f}) {
        auto got = c;
        cpu::gemm_ab(m, n, k, a.data(), lda, b.data(), ldb, beta, got.data(), ldc);
        for (int64_t i = 0; i < m; ++i) {
          for (int64_t j = 0; j < n; ++j) {
            double want = beta * c[i * ldc + j];
            for (int64_t p = 0; p < k; ++p) want += double(a[i * lda + p]) * b[p * ldb + j];
            EXPECT_NEAR(got[i * ldc + j], want, 1e-4) << m << "x" << n << "x" << k;
          }
          for (int64_t j = n; j < ldc; ++j) EXPECT_EQ(got[i * ldc + j], c[i * ldc + j]);
        }
      }
    }
  }
  EXPECT_THROW(cpu::gemm_rows_ab(5, 1, 1, nullptr, 1, nullptr, 1, 0, nullptr, 1),
               std::invalid_argument);
}

// A row's product is the same bits alone and among any number of other rows (a policy's episodes
// batched or not: an MKL sgemm took other bits at other row counts, and HalfCheetah's returns moved
// by hundreds with the company an episode kept).
TEST(CpuFloatLoops, ARowsProductIsTheSameBitsAmongAnyRows) {
  std::mt19937 rng(3);
  std::normal_distribution<float> normal;
  const int64_t n = 390, k = 128;  // a minGRU layer's gates at embed 128, and a tail of 6 columns
  std::vector<float> a(64 * k), b(k * n), alone(n), among(64 * n);
  for (auto* v : {&a, &b})
    for (auto& e : *v) e = normal(rng);
  for (int64_t m : {2, 3, 5, 7, 9, 64}) {
    cpu::gemm_ab(m, n, k, a.data(), k, b.data(), n, 0.0f, among.data(), n);
    for (int64_t i = 0; i < m; ++i) {
      cpu::gemm_ab(1, n, k, a.data() + i * k, k, b.data(), n, 0.0f, alone.data(), n);
      ASSERT_EQ(std::vector<float>(among.begin() + i * n, among.begin() + (i + 1) * n), alone)
          << "row " << i << " of " << m;
    }
  }
}

// A product split over threads (its column strips; one episode's window) gives the bits it gives on
// one: with a tail of columns past the last strip and past the last 32-column block.
TEST(CpuFloatLoops, AProductSplitOverWorkersIsTheSameBits) {
  std::mt19937 rng(4);
  std::normal_distribution<float> normal;
  const int64_t m = 59, k = 256;
  for (int64_t n : {1024, 390, 200}) {
    std::vector<float> a(m * k), b(k * n), alone(m * n, 1.0f), split(m * n, 1.0f);
    for (auto* v : {&a, &b})
      for (auto& e : *v) e = normal(rng);
    cpu::gemm_ab(m, n, k, a.data(), k, b.data(), n, 1.0f, alone.data(), n);
    io::Workers workers(3);
    {
      const cpu::WorkersScope scope(&workers);
      ASSERT_EQ(cpu::current_workers(), &workers);
      cpu::gemm_ab(m, n, k, a.data(), k, b.data(), n, 1.0f, split.data(), n);
    }
    EXPECT_EQ(cpu::current_workers(), nullptr);
    EXPECT_EQ(split, alone) << "n " << n;
  }
}

TEST(CpuFloatLoops, TransposeSwapsRowsAndColumnsOfAStridedMatrix) {
  const int64_t rows = 3, cols = 5, ld = 7;
  std::vector<float> x(rows * ld), y(cols * rows);
  for (size_t i = 0; i < x.size(); ++i) x[i] = float(i);
  cpu::transpose(rows, cols, x.data(), ld, y.data());
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) EXPECT_EQ(y[c * rows + r], x[r * ld + c]);
}

TEST(CpuFloatLoops, ElementwiseMatchTorch) {
  auto x = torch::linspace(-9, 9, 20001);
  std::vector<float> v = cpu::to_vector(x);
  double worst = 0;
  for (float e : v) worst = std::max(worst, std::abs(double(cpu::erf_approx(e)) - std::erf(e)));
  EXPECT_LT(worst, 5e-7);
  cpu::gelu(v.data(), int64_t(v.size()));
  // 2e-6: at -O1 (the sanitizer build, no vectorised FMA chain) erf_approx differs from torch's
  // erf by up to 1.4e-6 absolute; at -O3 by under 1e-6.
  expect_close_each(torch::from_blob(v.data(), {int64_t(v.size())}), torch::gelu(x), 2e-6, "gelu");
  v = cpu::to_vector(x);
  cpu::silu(v.data(), int64_t(v.size()));
  expect_close_each(torch::from_blob(v.data(), {int64_t(v.size())}), torch::silu(x), 1e-6, "silu");
  v = cpu::to_vector(x);
  cpu::tanh_inplace(v.data(), int64_t(v.size()));
  expect_close_each(torch::from_blob(v.data(), {int64_t(v.size())}), torch::tanh(x), 2e-7, "tanh");
}

// The vectorizable exp, sigmoid and minLSTM gates against double-precision libm: error a few
// float ulps over the whole range the cells feed them, saturation included.
TEST(CpuFloatLoops, ExpSigmoidAndLstmGatesAreAccurateEverywhere) {
  double exp_rel = 0, sigmoid_abs = 0;
  for (int i = -200000; i <= 200000; ++i) {
    const float x = float(i) * 4.4e-4f;  // [−88, 88]
    const double e = std::exp(double(x));
    if (e > 1.2e-38 && e < 3e38) exp_rel = std::max(exp_rel, std::abs(cpu::cpu_expf(x) / e - 1));
    sigmoid_abs = std::max(sigmoid_abs, std::abs(cpu::sigmoid(x) - 1 / (1 + std::exp(-double(x)))));
  }
  EXPECT_LT(exp_rel, 4e-7);
  EXPECT_LT(sigmoid_abs, 2e-7);
  EXPECT_EQ(cpu::cpu_expf(-1000.0f), 0.0f);
  EXPECT_TRUE(std::isfinite(cpu::cpu_expf(1000.0f)));

  // a = f/(f+i), f = σ(p), i = σ(k), in log space in double: exact where σ underflows in double
  // too (p, k down to −200); the two gates sum to 1.
  double gate_abs = 0, sum_abs = 0;
  auto log_sigmoid = [](double x) { return std::min(x, 0.0) - std::log1p(std::exp(-std::abs(x))); };
  for (int ip = -100; ip <= 100; ++ip) {
    for (int ik = -100; ik <= 100; ++ik) {
      const float p = float(ip) * 2.0f, k = float(ik) * 2.0f + 0.37f;
      const double u = log_sigmoid(k) - log_sigmoid(p);  // log i − log f
      const double a = 1 / (1 + std::exp(u));
      const auto g = scan_math::lstm_gates(p, k);
      gate_abs = std::max(gate_abs, std::abs(g.forget() - a));
      sum_abs = std::max(sum_abs, std::abs(g.forget() + g.input() - 1.0));
      ASSERT_TRUE(std::isfinite(g.forget()) && std::isfinite(g.input())) << p << " " << k;
    }
  }
  EXPECT_LT(gate_abs, 3e-7);
  EXPECT_LT(sum_abs, 3e-7);
}

TEST(CpuFloatLoops, LayerNormMatchesTorch) {
  torch::nn::LayerNorm ln(torch::nn::LayerNormOptions({24}));
  perturb(*ln, 5);
  auto rows = torch::randn({4, 24}) * 3 + 1;
  auto packed = cpu::pack_norm(*ln);
  auto y = torch::empty_like(rows);
  cpu::layer_norm(packed, rows.data_ptr<float>(), 4, y.data_ptr<float>());
  expect_close_each(y, ln(rows).detach(), 1e-5, "layer_norm");
}

TEST(PackedBackbone, MinRnnStacksMatchForEveryOption) {
  for (CellKind cell : {CellKind::kMinGRU, CellKind::kMinLSTM}) {
    for (bool conv : {false, true}) {
      for (double expansion : {1.0, 1.5}) {
        for (bool log_space : {true, false}) {
          BlockOptions o;
          o.cell = cell;
          o.d_model = 16;
          o.conv = conv;
          o.expansion = expansion;
          o.log_space = log_space;
          o.dropout = 0.3;  // inference ignores it, as eval() does
          MinRnnStack stack(o, 2);
          perturb(stack, 11);
          check_backbone(stack,
                         std::string(cell_name(cell)) + (conv ? " conv" : "") + " expansion " +
                             std::to_string(expansion) + (log_space ? " log-space" : " plain"),
                         true);
        }
      }
    }
  }
}

TEST(PackedBackbone, HgrnMatches) {
  for (double expansion : {1.0, 1.5}) {
    HgrnStack stack(16, 3, 0.2, expansion);
    perturb(stack, 12);
    check_backbone(stack, "hgrn expansion " + std::to_string(expansion), true);
  }
}

TEST(PackedBackbone, TransformerMatches) {
  for (int64_t heads : {1, 4}) {
    TransformerOptions o;
    o.d_model = 16;
    o.n_heads = heads;
    TransformerStack stack(o, 3);
    perturb(stack, 13);
    check_backbone(stack, "transformer heads " + std::to_string(heads), false);
  }
}

TEST(PackedBackbone, RefusesAnUnknownModel) {
  struct Other : SequenceModel {
    torch::Tensor forward(const torch::Tensor& x, SequenceState*, const TokenSelection&,
                          const InputDropout&) override {
      return x;
    }
    torch::Tensor step(const torch::Tensor& x, SequenceState&, const InputDropout&) override {
      return x;
    }
    SequenceState initial_state() const override { return {}; }
    bool streaming() const override { return true; }
  } other;
  EXPECT_THROW(pack_backbone(other), std::invalid_argument);
}

}  // namespace
}  // namespace minrnn::core
