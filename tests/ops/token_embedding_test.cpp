// A window's token embedding as one op (ops/token_embedding.h) against the same embedding in
// float64 LibTorch ops (the op's own fallback, run on float64 copies): tokens and every gradient,
// with the window's last token kept and left out, and timesteps past either end of the table; the
// same bits twice; the inputs it leaves to LibTorch; and misshapen inputs refused. On CUDA, the
// same against the CPU op. The kernels' bodies run under the grid emulator in
// tests/kernels/token_embedding_emulated_test.cpp.
#include "ops/token_embedding.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <string>
#include <vector>

#include "tests/tensor_compare.h"

namespace minrnn::core {
namespace {

using testing::rel_err;

struct Inputs {
  std::vector<TokenGroup> groups;
  torch::Tensor timesteps, table;
};

// DT's three groups (return, state, action) at B 4, K 5, D 6, a table of 9 rows; the parameters
// as leaves of `dtype` on `device`, with gradients.
Inputs make_inputs(torch::Dtype dtype = torch::kFloat, torch::Device device = torch::kCPU) {
  torch::manual_seed(3);
  const auto on = torch::TensorOptions().dtype(dtype).device(device);
  const auto leaf = [&](torch::Tensor t) { return t.to(on).requires_grad_(true); };
  Inputs in;
  for (const int64_t n : {1, 4, 2}) {
    in.groups.push_back(
        {torch::randn({4, 5, n}).to(on), leaf(torch::randn({6, n})), leaf(torch::randn({6}))});
  }
  in.timesteps = torch::tensor({-3, 0, 1, 2, 8, 9, 30, 4, 4, 4}, torch::kLong).view({2, 5});
  in.timesteps = torch::cat({in.timesteps, in.timesteps.flip(1)}).to(device);
  in.table = leaf(torch::randn({9, 6}));
  return in;
}

Inputs copy_as(const Inputs& in, torch::Dtype dtype, torch::Device device) {
  const auto on = torch::TensorOptions().dtype(dtype).device(device);
  const auto leaf = [&](const torch::Tensor& t) { return t.detach().to(on).requires_grad_(true); };
  Inputs out{{}, in.timesteps.to(device), leaf(in.table)};
  for (const TokenGroup& g : in.groups) {
    out.groups.push_back({g.input.to(on), leaf(g.weight), leaf(g.bias)});
  }
  return out;
}

torch::Tensor embed(const Inputs& in, int64_t tokens) {
  return embed_tokens(in.groups, in.timesteps, in.table, tokens);
}

// Runs `got` and `want` forward and backward with one upstream gradient; the tokens and every
// parameter's gradient of `got` within `tolerance` of `want`'s (relative, in float64).
void expect_close(const Inputs& got, const Inputs& want, int64_t tokens, double tolerance) {
  const torch::Tensor a = embed(got, tokens), b = embed(want, tokens);
  ASSERT_EQ(a.sizes(), b.sizes());
  EXPECT_LT(rel_err(a, b.detach().cpu().to(torch::kDouble)), tolerance);
  const torch::Tensor upstream = torch::randn(a.sizes(), torch::kDouble);
  a.backward(upstream.to(a.options()));
  b.backward(upstream.to(b.options()));
  const auto expect_grad = [&](const torch::Tensor& x, const torch::Tensor& y, const char* what) {
    ASSERT_TRUE(x.grad().defined()) << what;
    EXPECT_LT(rel_err(x.grad(), y.grad().cpu().to(torch::kDouble)), tolerance) << what;
  };
  for (size_t j = 0; j < got.groups.size(); ++j) {
    expect_grad(got.groups[j].weight, want.groups[j].weight, "weight");
    expect_grad(got.groups[j].bias, want.groups[j].bias, "bias");
  }
  expect_grad(got.table, want.table, "time table");
}

TEST(TokenEmbedding, MatchesLibTorchsOpsInFloat64) {
  const Inputs in = make_inputs();
  for (const int64_t tokens : {15, 14, 0}) {
    SCOPED_TRACE(std::to_string(tokens) + " tokens");
    expect_close(copy_as(in, torch::kFloat, torch::kCPU), copy_as(in, torch::kDouble, torch::kCPU),
                 tokens, 1e-6);
  }
}

TEST(TokenEmbedding, GivesTheSameBitsTwice) {
  const Inputs a = make_inputs(), b = make_inputs();
  const torch::Tensor ta = embed(a, 14), tb = embed(b, 14);
  EXPECT_TRUE(torch::equal(ta, tb));
  const torch::Tensor upstream = torch::randn(ta.sizes());
  ta.backward(upstream);
  tb.backward(upstream);
  EXPECT_TRUE(torch::equal(a.table.grad(), b.table.grad()));
  EXPECT_TRUE(torch::equal(a.groups[1].weight.grad(), b.groups[1].weight.grad()));
}

TEST(TokenEmbedding, OtherInputsRunLibTorchsOps) {
  // An input that wants its gradient, and a strided weight: the same tokens, the input's gradient.
  Inputs in = make_inputs();
  const Inputs ref = copy_as(in, torch::kDouble, torch::kCPU);
  in.groups[1].input.requires_grad_(true);
  in.groups[2].weight = in.groups[2].weight.detach().t().contiguous().t().requires_grad_(true);
  const torch::Tensor tokens = embed(in, 15);
  EXPECT_LT(rel_err(tokens, embed(ref, 15).detach()), 1e-6);
  tokens.sum().backward();
  ASSERT_TRUE(in.groups[1].input.grad().defined());
  EXPECT_TRUE(in.groups[2].weight.grad().defined());
}

TEST(TokenEmbedding, RefusesMisshapenInputs) {
  Inputs in = make_inputs();
  const auto refused = [&](int64_t tokens, const std::string& says) {
    try {
      embed(in, tokens);
      ADD_FAILURE() << "accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
    }
  };
  refused(16, "16 tokens asked of windows of 15");
  in.groups[0].weight = torch::randn({5, 1});
  refused(15, "weight (D, n)");
}

TEST(TokenEmbeddingCuda, IsTheCpuOpsTokensAndGradients) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA GPU visible";
  const Inputs in = make_inputs();
  for (const int64_t tokens : {15, 14}) {
    SCOPED_TRACE(std::to_string(tokens) + " tokens");
    const Inputs cuda = copy_as(in, torch::kFloat, torch::kCUDA);
    const Inputs cpu = copy_as(in, torch::kFloat, torch::kCPU);
    EXPECT_TRUE(torch::equal(embed(cuda, tokens).cpu(), embed(cpu, tokens)));  // no FMA either side
    expect_close(cuda, cpu, tokens, 1e-6);
  }
}

}  // namespace
}  // namespace minrnn::core
