// Causal self-attention on projected tokens (ops/causal_attention.h) against the LibTorch ops it
// replaces — views of each head, q kᵀ, the scale, the causal mask, the softmax, fused_dropout with
// the same seed, the product with v — in value and in the gradients of the projection (and of the
// queries apart, as the Transformer's top layer gives them), for one head and for several, every
// query and the state tokens' alone; misshapen inputs refused by name; and on CUDA, the same
// against the CPU op.
#include "ops/causal_attention.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "ops/dropout.h"
#include "tests/tensor_compare.h"

namespace minrnn::core {
namespace {

using testing::rel_err;

constexpr int64_t kBatch = 3, kTokens = 23, kWidth = 16;
constexpr double kDropout = 0.25;
constexpr uint64_t kSeed = 0xA7Dull;

// The op's inputs: the projection of every token, and the selected tokens' queries when apart.
struct Inputs {
  torch::Tensor projected, queries;
};
Inputs inputs_of(bool apart, const TokenSelection& read, torch::Device device = torch::kCPU,
                 torch::Dtype dtype = torch::kFloat) {
  torch::manual_seed(apart * 10 + read.stride);
  const int64_t selected = read.apply(torch::zeros({1, kTokens})).size(1);
  Inputs in{torch::randn({kBatch, kTokens, (apart ? 2 : 3) * kWidth}), torch::Tensor()};
  if (apart) in.queries = torch::randn({kBatch, selected, kWidth});
  const auto leaf = [&](const torch::Tensor& t) {
    return t.defined() ? t.to(device, dtype).requires_grad_(true) : t;
  };
  return {leaf(in.projected), leaf(in.queries)};
}

// The same attention in LibTorch ops, from the test's own views of the heads.
torch::Tensor reference(const Inputs& in, int64_t heads, const TokenSelection& read) {
  const int64_t B = in.projected.size(0), T = in.projected.size(1), D = kWidth;
  const auto split = [&](const torch::Tensor& t) {  // (B, rows, D) → (B, heads, rows, D / heads)
    return t.reshape({B, t.size(1), heads, D / heads}).transpose(1, 2);
  };
  const bool apart = in.queries.defined();
  const torch::Tensor q = apart ? in.queries : read.apply(in.projected.narrow(2, 0, D));
  const torch::Tensor k = in.projected.narrow(2, apart ? 0 : D, D);
  const torch::Tensor v = in.projected.narrow(2, apart ? D : 2 * D, D);
  const auto key_pos = torch::arange(T, torch::kLong);
  const auto future =
      key_pos.unsqueeze(0) > read.apply(key_pos.unsqueeze(0)).squeeze(0).unsqueeze(1);
  const torch::Tensor scores = torch::matmul(split(q), split(k).transpose(-2, -1)) /
                               std::sqrt(static_cast<double>(D / heads));
  const torch::Tensor probs = fused_dropout(
      torch::softmax(scores.masked_fill(future, -std::numeric_limits<double>::infinity()), -1),
      kDropout, true);
  return torch::matmul(probs, split(v)).transpose(1, 2).reshape({B, q.size(1), D});
}

// The op and the reference from the same seed, their values and every input's gradient.
void expect_same_attention(const Inputs& ours, const Inputs& theirs, int64_t heads,
                           const TokenSelection& read, double tolerance) {
  torch::Tensor got, want;
  {
    const DropoutSeeds seeds(kSeed);
    got = causal_attention(ours.projected, ours.queries, heads, read, kDropout, true);
  }
  {
    const DropoutSeeds seeds(kSeed);
    want = theirs.projected.scalar_type() == torch::kDouble
               ? reference(theirs, heads, read)
               : causal_attention(theirs.projected, theirs.queries, heads, read, kDropout, true);
  }
  const torch::Tensor want_double = want.detach().cpu().to(torch::kDouble);
  EXPECT_LT(rel_err(got, want_double), tolerance);
  const torch::Tensor w = torch::randn(got.sizes(), torch::kDouble);
  (got * w.to(got.device(), got.scalar_type())).sum().backward();
  (want * w.to(want.device(), want.scalar_type())).sum().backward();
  const auto cpu_double = [](const torch::Tensor& t) { return t.cpu().to(torch::kDouble); };
  EXPECT_LT(rel_err(ours.projected.grad(), cpu_double(theirs.projected.grad())), tolerance);
  if (ours.queries.defined()) {
    EXPECT_LT(rel_err(ours.queries.grad(), cpu_double(theirs.queries.grad())), tolerance);
  }
}

// Float32 inputs and a float64 twin of them.
Inputs double_twin(const Inputs& in) {
  const auto twin = [](const torch::Tensor& t) {
    return t.defined() ? t.detach().to(torch::kDouble).requires_grad_(true) : t;
  };
  return {twin(in.projected), twin(in.queries)};
}

TEST(CausalAttention, IsEachHeadsMaskedSoftmaxDroppedOutTimesItsValues) {
  for (const bool apart : {false, true}) {
    for (const TokenSelection read : {TokenSelection{}, TokenSelection{1, 3}}) {
      if (apart && read.all()) continue;  // the Transformer's lower layers: all in one projection
      for (const int64_t heads : {1, 2}) {
        SCOPED_TRACE(std::string(apart ? "queries apart" : "one projection") + ", queries from " +
                     std::to_string(read.first) + " every " + std::to_string(read.stride) + ", " +
                     std::to_string(heads) + " heads");
        const Inputs ours = inputs_of(apart, read);
        expect_same_attention(ours, double_twin(ours), heads, read, 1e-5);
      }
    }
  }
}

TEST(CausalAttention, Float64RunsTheLibTorchOpsAndMisshapenInputsAreRefusedByName) {
  const Inputs in = inputs_of(false, {}, torch::kCPU, torch::kDouble);
  expect_same_attention(in, double_twin(in), 2, {}, 1e-12);
  const auto message_of = [](const torch::Tensor& projected, const torch::Tensor& queries,
                             int64_t heads) {
    try {
      causal_attention(projected, queries, heads, {1, 3}, 0.0, false);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const torch::Tensor kv = torch::zeros({2, 9, 2 * kWidth});
  EXPECT_NE(message_of(kv, torch::zeros({2, 4, kWidth}), 1).find("queries must be (B, 3, D)"),
            std::string::npos);
  EXPECT_NE(message_of(kv, {}, 1).find("[q | k | v]"), std::string::npos);
  EXPECT_NE(message_of(kv, torch::zeros({2, 3, kWidth}), 3).find("multiple of heads 3"),
            std::string::npos);
  EXPECT_NE(message_of(torch::zeros({9, 3 * kWidth}), {}, 1).find("projected must be"),
            std::string::npos);
}

// project_selected_queries against two Linears on narrowed weights and a view of x, in float64:
// both outputs, and x's, w's and b's gradients, with both outputs used and with one alone.
TEST(CausalAttention, SelectedQueriesAreTheProjectionsRowsAtThoseTokens) {
  const TokenSelection read{1, 3};
  torch::manual_seed(7);
  const auto leaf = [](const torch::Tensor& t) {
    return t.to(torch::kDouble).requires_grad_(true);
  };
  const torch::Tensor x = leaf(torch::randn({kBatch, kTokens, 12}));
  const torch::Tensor w = leaf(torch::randn({3 * kWidth, 12})),
                      b = leaf(torch::randn({3 * kWidth}));
  const torch::Tensor weights_q = torch::randn({kBatch, 8, kWidth}, torch::kDouble);
  const torch::Tensor weights_kv = torch::randn({kBatch, kTokens, 2 * kWidth}, torch::kDouble);
  for (const bool queries_used : {true, false}) {
    SCOPED_TRACE(queries_used ? "both outputs used" : "keys and values alone");
    const std::vector<torch::Tensor> theirs_in{leaf(x.detach()), leaf(w.detach()),
                                               leaf(b.detach())};
    const torch::Tensor &x2 = theirs_in[0], &w2 = theirs_in[1], &b2 = theirs_in[2];
    const SelectedQueries got = project_selected_queries(x, w, b, read);
    const torch::Tensor want_q =
        torch::linear(read.apply(x2), w2.narrow(0, 0, kWidth), b2.narrow(0, 0, kWidth));
    const torch::Tensor want_kv =
        torch::linear(x2, w2.narrow(0, kWidth, 2 * kWidth), b2.narrow(0, kWidth, 2 * kWidth));
    EXPECT_LT(rel_err(got.queries, want_q.detach()), 1e-12);
    EXPECT_LT(rel_err(got.keys_values, want_kv.detach()), 1e-12);
    const auto loss = [&](const torch::Tensor& q, const torch::Tensor& kv) {
      return (queries_used ? (q * weights_q).sum() : torch::zeros({}, torch::kDouble)) +
             (kv * weights_kv).sum();
    };
    for (const torch::Tensor& t : {x, w, b}) t.mutable_grad() = torch::Tensor();
    if (queries_used) {
      loss(got.queries, got.keys_values).backward();
    } else {
      (got.keys_values * weights_kv).sum().backward();  // the queries' gradient never arrives
    }
    loss(want_q, want_kv).backward();
    EXPECT_LT(rel_err(x.grad(), x2.grad()), 1e-12);
    EXPECT_LT(rel_err(w.grad(), w2.grad()), 1e-12);
    EXPECT_LT(rel_err(b.grad(), b2.grad()), 1e-12);
  }
  EXPECT_THROW(project_selected_queries(x, w.narrow(0, 0, 2 * kWidth + 1), b, read),
               std::invalid_argument);
}

TEST(CausalAttentionCuda, IsTheCpuOp) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA GPU visible";
  for (const bool apart : {false, true}) {
    const TokenSelection read = apart ? TokenSelection{1, 3} : TokenSelection{};
    const Inputs cpu = inputs_of(apart, read);
    const auto to_cuda = [](const torch::Tensor& t) {
      return t.defined() ? t.detach().to(torch::kCUDA).requires_grad_(true) : t;
    };
    expect_same_attention({to_cuda(cpu.projected), to_cuda(cpu.queries)}, cpu, 2, read, 1e-5);
  }
}

}  // namespace
}  // namespace minrnn::core
