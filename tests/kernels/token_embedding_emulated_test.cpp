// The token embedding's CUDA kernels (kernels/cuda/token_embedding_programs.h) run by the host
// emulator (tests/kernels/grid_emulator.h), every element written once and every barrier checked,
// against the CPU op (ops/token_embedding.h): the tokens bit for bit, the gradients to rounding
// (their sums run in another fixed order). Shapes with partial blocks everywhere: channels that
// fill no warp and more than one block of them, gradient entries across group boundaries, table
// rows past the last whole block, steps over more than one round, timesteps to clamp.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "kernels/cuda/token_embedding_programs.h"
#include "ops/token_embedding.h"
#include "tests/kernels/grid_emulator.h"
#include "tests/tensor_compare.h"

namespace minrnn::core {
namespace {

namespace emu = minrnn::testing::emu;
using minrnn::testing::rel_err;
using minrnn::testing::tensor_from;
using minrnn::testing::values_of;

struct Case {
  int64_t batch, steps, width, rows;
  std::vector<int64_t> inputs;
  bool drop_last;  // DT's training window: its last token left out
};

struct Problem {
  std::vector<TokenGroup> groups;
  torch::Tensor timesteps, table;
  int64_t tokens;
  TokenLayout shape;
};

Problem make(const Case& c) {
  Problem p;
  for (const int64_t n : c.inputs) {
    p.groups.push_back({torch::randn({c.batch, c.steps, n}),
                        torch::randn({c.width, n}).requires_grad_(true),
                        torch::randn({c.width}).requires_grad_(true)});
  }
  // Some past either end of the table, which clamp to its first and last rows.
  p.timesteps = torch::randint(-2, c.rows + 3, {c.batch, c.steps}, torch::kLong);
  p.table = torch::randn({c.rows, c.width}).requires_grad_(true);
  const int G = static_cast<int>(c.inputs.size());
  p.tokens = G * c.steps - (c.drop_last ? 1 : 0);
  p.shape = {c.batch, c.steps, p.tokens, c.width, c.rows, G, {}};
  for (int j = 0; j < G; ++j) p.shape.inputs[j] = c.inputs[j];
  return p;
}

// The problem's arrays as emulator buffers, wired into a kernel's group arrays.
struct Buffers {
  std::vector<std::unique_ptr<emu::Buffer<float>>> input, weight, bias;
  emu::Buffer<int64_t> timesteps;
  emu::Buffer<float> table;
  explicit Buffers(const Problem& p)
      : timesteps("timesteps", values_of<int64_t>(p.timesteps)),
        table("table", values_of<float>(p.table.detach())) {
    for (const TokenGroup& g : p.groups) {
      input.push_back(std::make_unique<emu::Buffer<float>>("input", values_of<float>(g.input)));
      weight.push_back(
          std::make_unique<emu::Buffer<float>>("weight", values_of<float>(g.weight.detach())));
      bias.push_back(
          std::make_unique<emu::Buffer<float>>("bias", values_of<float>(g.bias.detach())));
    }
  }
  template <typename K>
  void wire(K& k) const {
    for (size_t j = 0; j < input.size(); ++j) {
      k.input[j] = input[j]->in();
      k.weight[j] = weight[j]->in();
      k.bias[j] = bias[j]->in();
    }
  }
};

void check(const Case& c) {
  SCOPED_TRACE("B " + std::to_string(c.batch) + " K " + std::to_string(c.steps) + " D " +
               std::to_string(c.width) + " rows " + std::to_string(c.rows));
  torch::manual_seed(c.batch * 100 + c.width);
  const Problem p = make(c);
  const Buffers in(p);
  const int64_t D = c.width;

  const torch::Tensor want = embed_tokens(p.groups, p.timesteps, p.table, p.tokens);
  emu::Buffer<float> tokens("tokens", static_cast<size_t>(want.numel()));
  grid::TokenEmbedding<emu::Memory> forward{};
  in.wire(forward);
  forward.shape = p.shape;
  forward.timesteps = in.timesteps.in();
  forward.table = in.table.in();
  forward.out = tokens.out();
  emu::Log log;
  emu::run(forward, log);
  tokens.check_written(log);
  ASSERT_TRUE(log.ok()) << log.summary();
  EXPECT_TRUE(torch::equal(tensor_from(tokens.data(), want.sizes()), want.detach()));

  const torch::Tensor tokens_grad = torch::randn(want.sizes());
  want.backward(tokens_grad);
  emu::Buffer<float> g("tokens_grad", values_of<float>(tokens_grad));
  std::vector<std::unique_ptr<emu::Buffer<float>>> weight_grad, bias_grad;
  grid::TokenParameterGrads<emu::Memory> parameters{};
  in.wire(parameters);
  parameters.shape = p.shape;
  parameters.grad = g.in();
  for (size_t j = 0; j < p.groups.size(); ++j) {
    weight_grad.push_back(std::make_unique<emu::Buffer<float>>(
        "weight_grad", static_cast<size_t>(p.groups[j].weight.numel())));
    bias_grad.push_back(std::make_unique<emu::Buffer<float>>("bias_grad", static_cast<size_t>(D)));
    parameters.weight_grad[j] = weight_grad[j]->out();
    parameters.bias_grad[j] = bias_grad[j]->out();
  }
  emu::Buffer<float> table_grad("table_grad", static_cast<size_t>(p.table.numel()));
  const grid::TimeTableGrad<emu::Memory> table{p.shape, in.timesteps.in(), g.in(),
                                               table_grad.out()};
  emu::Log back_log;
  emu::run(parameters, back_log);
  emu::run(table, back_log);
  for (size_t j = 0; j < p.groups.size(); ++j) {
    weight_grad[j]->check_written(back_log);
    bias_grad[j]->check_written(back_log);
  }
  table_grad.check_written(back_log);
  ASSERT_TRUE(back_log.ok()) << back_log.summary();
  // Float sums of B·K steps in another order than the CPU's: their difference grows as √(B·K)
  // roundings.
  const double tol = 1e-6 * std::max(1.0, std::sqrt(double(c.batch * c.steps) / 300.0));
  for (size_t j = 0; j < p.groups.size(); ++j) {
    const TokenGroup& group = p.groups[j];
    EXPECT_LT(rel_err(tensor_from(weight_grad[j]->data(), group.weight.sizes()),
                      group.weight.grad().to(torch::kDouble)),
              tol);
    EXPECT_LT(rel_err(tensor_from(bias_grad[j]->data(), {D}), group.bias.grad().to(torch::kDouble)),
              tol);
  }
  EXPECT_LT(
      rel_err(tensor_from(table_grad.data(), p.table.sizes()), p.table.grad().to(torch::kDouble)),
      tol);
}

TEST(TokenEmbeddingEmulated, KernelsAreTheCpuOpsTokensAndGradients) {
  // DT's three groups (return, state, action).
  check({20, 15, 40, 21, {1, 5, 2}, true});
  // More steps than one round of the time table's gradient reads (2 250 > 2 048).
  check({150, 15, 8, 21, {1, 2, 1}, true});
  // Two channel blocks of the table's gradient (130 > 128), every token kept, one group.
  check({3, 4, 130, 9, {3}, false});
  // Four groups, channels under a warp.
  check({2, 3, 7, 30, {2, 1, 4, 3}, true});
}

}  // namespace
}  // namespace minrnn::core
