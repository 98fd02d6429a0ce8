#include <gtest/gtest.h>

#include "models/minrnn.h"
#include "tests/ops/gradcheck.h"
#include "tests/tensor_compare.h"

using namespace minrnn::core;

namespace {

MinRnn make_rnn(CellKind cell, int64_t d_x, double expansion, ScanMode scan, bool log_space = true,
                torch::Dtype dtype = torch::kFloat) {
  MinRnnOptions o;
  o.cell = cell;
  o.input_size = d_x;
  o.expansion = expansion;
  o.scan = scan;
  o.log_space = log_space;
  MinRnn m(o);
  m->to(dtype);
  return m;
}

// Copies the parameters of `from` into `to` (same architecture, different scan mode).
void copy_params(MinRnn& from, MinRnn& to) {
  torch::NoGradGuard g;
  auto src = from->named_parameters();
  for (auto& p : to->named_parameters()) p.value().copy_(src[p.key()]);
}

using minrnn::testing::max_err;

torch::Tensor run_steps(MinRnn& m, const torch::Tensor& x, torch::Tensor h) {
  std::vector<torch::Tensor> ys;
  for (int64_t t = 0; t < x.size(1); ++t) ys.push_back(m->step(x.select(1, t), h));
  return torch::stack(ys, 1);
}

class MinRnnCells : public ::testing::TestWithParam<CellKind> {};

}  // namespace

TEST_P(MinRnnCells, ParallelEqualsSequentialEqualsStepByStep) {
  torch::manual_seed(10);
  for (double expansion : {1.0, 2.0}) {
    MinRnn fused = make_rnn(GetParam(), 16, expansion, ScanMode::kFused);
    MinRnn logp = make_rnn(GetParam(), 16, expansion, ScanMode::kLogParallel);
    MinRnn seq = make_rnn(GetParam(), 16, expansion, ScanMode::kSequential);
    copy_params(fused, logp);
    copy_params(fused, seq);
    torch::NoGradGuard g;
    torch::Tensor x = torch::randn({3, 40, 16});
    torch::Tensor h0 = torch::rand({3, fused->hidden_size()});
    torch::Tensor last_fused, last_log;
    torch::Tensor y_fused = fused(x, h0, &last_fused);
    torch::Tensor y_log = logp(x, h0, &last_log);
    torch::Tensor y_seq = seq(x, h0);
    torch::Tensor y_step = run_steps(fused, x, h0);
    EXPECT_LT(max_err(y_fused, y_seq), 1e-5);
    EXPECT_LT(max_err(y_log, y_seq), 1e-5);
    EXPECT_LT(max_err(y_step, y_seq), 1e-5);
    EXPECT_LT(max_err(last_fused, last_log), 1e-5);
    EXPECT_EQ(y_fused.size(2), 16);  // the down-projection maps d_h back to d_model
  }
}

TEST_P(MinRnnCells, LongSequencesWithSaturatedGatesStayFinite) {
  torch::manual_seed(11);
  MinRnn fused = make_rnn(GetParam(), 8, 1.0, ScanMode::kFused);
  MinRnn logp = make_rnn(GetParam(), 8, 1.0, ScanMode::kLogParallel);
  copy_params(fused, logp);
  torch::NoGradGuard g;
  // Pre-activations of ±30 in every gate: weights zero, biases ±30.
  for (auto* m : {&fused, &logp}) {
    (*m)->gates->weight.zero_();
    (*m)->gates->bias.copy_(torch::where(torch::rand({(*m)->gates->bias.size(0)}) > 0.5,
                                         torch::full({1}, 30.0), torch::full({1}, -30.0)));
  }
  copy_params(fused, logp);
  torch::Tensor x = torch::randn({2, 4096, 8});
  torch::Tensor y_fused = fused(x), y_log = logp(x);
  torch::Tensor y_step = run_steps(fused, x, torch::zeros({2, 8}));
  EXPECT_TRUE(torch::isfinite(y_fused).all().item<bool>());
  EXPECT_TRUE(torch::isfinite(y_log).all().item<bool>());
  EXPECT_LT(max_err(y_step, y_fused), 1e-5);
  // The paper's log-space scan is finite but loses float32 precision when Σ log a reaches ~1e5
  // (gates saturated at −30 for 4096 steps); in float64 it agrees.
  EXPECT_LT(max_err(y_fused, y_log), 0.5);
  logp->to(torch::kDouble);
  EXPECT_LT(max_err(y_fused, logp(x.to(torch::kDouble)).to(torch::kFloat)), 1e-5);
}

TEST_P(MinRnnCells, LogSpaceEqualsTheVanillaRecurrenceWrittenOut) {
  torch::manual_seed(12);
  MinRnn logp = make_rnn(GetParam(), 5, 1.0, ScanMode::kLogParallel, true, torch::kDouble);
  torch::NoGradGuard g;
  torch::Tensor x = torch::randn({2, 9, 5}, torch::kDouble);
  torch::Tensor y = logp(x);
  // The paper's vanilla sequential algorithm (Algorithms 5 and 7), written out with σ and division.
  auto pre = logp->gates(x).chunk(GetParam() == CellKind::kMinGRU ? 2 : 3, -1);
  torch::Tensor h = torch::zeros({2, 5}, torch::kDouble);
  for (int64_t t = 0; t < 9; ++t) {
    torch::Tensor cand = g_positive(pre.back().select(1, t));
    if (GetParam() == CellKind::kMinGRU) {
      torch::Tensor z = torch::sigmoid(pre[0].select(1, t));
      h = (1 - z) * h + z * cand;
    } else {
      torch::Tensor f = torch::sigmoid(pre[0].select(1, t)),
                    i = torch::sigmoid(pre[1].select(1, t));
      h = f / (f + i) * h + i / (f + i) * cand;
    }
    EXPECT_LT(max_err(y.select(1, t), h), 1e-10) << "t = " << t;
  }
}

TEST_P(MinRnnCells, VanillaVariantAllowsNegativeCandidates) {
  torch::manual_seed(13);
  MinRnn fused = make_rnn(GetParam(), 6, 1.0, ScanMode::kFused, false);
  MinRnn seq = make_rnn(GetParam(), 6, 1.0, ScanMode::kSequential, false);
  copy_params(fused, seq);
  torch::NoGradGuard g;
  torch::Tensor x = torch::randn({2, 12, 6});
  torch::Tensor y = fused(x);
  EXPECT_LT(max_err(y, seq(x)), 1e-5);
  EXPECT_LT(max_err(run_steps(fused, x, torch::zeros({2, 6})), y), 1e-5);
  EXPECT_THROW(make_rnn(GetParam(), 6, 1.0, ScanMode::kLogParallel, false), std::invalid_argument);
}

TEST_P(MinRnnCells, ParameterCountsMatchThePaper) {
  const int64_t d_x = 24, gates = GetParam() == CellKind::kMinGRU ? 2 : 3;
  MinRnn plain = make_rnn(GetParam(), d_x, 1.0, ScanMode::kFused);
  int64_t n = 0;
  for (auto& p : plain->parameters()) n += p.numel();
  EXPECT_EQ(n,
            gates * d_x * d_x + gates * d_x);  // 2·d_h·d_x (minGRU), 3·d_h·d_x (minLSTM) + biases
  MinRnn wide = make_rnn(GetParam(), d_x, 2.0, ScanMode::kFused);
  const int64_t d_h = 2 * d_x;
  n = 0;
  for (auto& p : wide->parameters()) n += p.numel();
  EXPECT_EQ(n, gates * d_h * d_x + gates * d_h + d_h * d_x + d_x);  // + the down-projection
}

TEST_P(MinRnnCells, GradientsMatchFiniteDifferences) {
  torch::manual_seed(14);
  for (ScanMode mode : {ScanMode::kFused, ScanMode::kLogParallel}) {
    MinRnn m = make_rnn(GetParam(), 3, 2.0, mode, true, torch::kDouble);
    minrnn::testing::expect_gradients_match(
        [&](const std::vector<torch::Tensor>& in) {
          return std::vector<torch::Tensor>{m(in[0], in[1])};
        },
        {torch::randn({2, 4, 3}, torch::kDouble), torch::rand({2, 6}, torch::kDouble) + 0.1});
  }
}

INSTANTIATE_TEST_SUITE_P(Cells, MinRnnCells,
                         ::testing::Values(CellKind::kMinGRU, CellKind::kMinLSTM),
                         [](const auto& info) { return std::string(cell_name(info.param)); });
