// The token embedding's CUDA kernels (kernels/cuda/token_embedding_programs.h and
// token_embedding_grad_programs.h) run by the host
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

#include "kernels/cuda/token_embedding_grad_programs.h"
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

// What the three kernels give for a problem and its tokens' gradient, emulated, every output
// element written once and every barrier checked.
struct Emulated {
  std::vector<float> tokens, table_grad;
  std::vector<std::vector<float>> weight_grad, bias_grad;
};

Emulated emulate(const Problem& p, const torch::Tensor& tokens_grad) {
  const Buffers in(p);
  Emulated out;
  emu::Buffer<float> tokens("tokens", static_cast<size_t>(tokens_grad.numel()));
  grid::TokenEmbedding<emu::Memory> forward{};
  in.wire(forward);
  forward.shape = p.shape;
  forward.timesteps = in.timesteps.in();
  forward.table = in.table.in();
  forward.out = tokens.out();
  emu::Log log;
  emu::run(forward.prepared(), log);
  tokens.check_written(log);
  // Found by division instead of Dividers (where indices pass 2³¹): the same tokens.
  emu::Buffer<float> divided("tokens by division", static_cast<size_t>(tokens_grad.numel()));
  forward.out = divided.out();
  emu::run(forward, log);
  EXPECT_EQ(divided.data(), tokens.data());

  emu::Buffer<float> g("tokens_grad", values_of<float>(tokens_grad));
  std::vector<std::unique_ptr<emu::Buffer<float>>> weight_grad, bias_grad;
  grid::TokenParameterGrads<emu::Memory> parameters{};
  in.wire(parameters);
  parameters.shape = p.shape;
  parameters.grad = g.in();
  for (size_t j = 0; j < p.groups.size(); ++j) {
    weight_grad.push_back(std::make_unique<emu::Buffer<float>>(
        "weight_grad", static_cast<size_t>(p.groups[j].weight.numel())));
    bias_grad.push_back(std::make_unique<emu::Buffer<float>>(
        "bias_grad", static_cast<size_t>(p.groups[j].bias.numel())));
    parameters.weight_grad[j] = weight_grad[j]->out();
    parameters.bias_grad[j] = bias_grad[j]->out();
  }
  emu::Buffer<float> table_grad("table_grad", static_cast<size_t>(p.table.numel()));
  const grid::TimeTableGrad<emu::Memory> table{p.shape, in.timesteps.in(), g.in(),
                                               table_grad.out()};
  emu::run(parameters, log);
  emu::run(table, log);
  for (size_t j = 0; j < p.groups.size(); ++j) {
    weight_grad[j]->check_written(log);
    bias_grad[j]->check_written(log);
    out.weight_grad.push_back(weight_grad[j]->data());
    out.bias_grad.push_back(bias_grad[j]->data());
  }
  table_grad.check_written(log);
  EXPECT_TRUE(log.ok()) << log.summary();
  out.tokens = tokens.data();
  out.table_grad = table_grad.data();
  return out;
}

void check(const Case& c) {
  SCOPED_TRACE("B " + std::to_string(c.batch) + " K " + std::to_string(c.steps) + " D " +
               std::to_string(c.width) + " rows " + std::to_string(c.rows));
  torch::manual_seed(c.batch * 100 + c.width);
  const Problem p = make(c);
  const int64_t D = c.width;
  const torch::Tensor want = embed_tokens(p.groups, p.timesteps, p.table, p.tokens);
  const torch::Tensor tokens_grad = torch::randn(want.sizes());
  const Emulated got = emulate(p, tokens_grad);
  EXPECT_TRUE(torch::equal(tensor_from(got.tokens, want.sizes()), want.detach()));
  want.backward(tokens_grad);
  // Float sums of B·K steps in another order than the CPU's: their difference grows as √(B·K)
  // roundings.
  const double tol = 1e-6 * std::max(1.0, std::sqrt(double(c.batch * c.steps) / 300.0));
  for (size_t j = 0; j < p.groups.size(); ++j) {
    const TokenGroup& group = p.groups[j];
    EXPECT_LT(rel_err(tensor_from(got.weight_grad[j], group.weight.sizes()),
                      group.weight.grad().to(torch::kDouble)),
              tol);
    EXPECT_LT(rel_err(tensor_from(got.bias_grad[j], {D}), group.bias.grad().to(torch::kDouble)),
              tol);
  }
  // The time table's rows sum their steps in ascending order, as the CPU loop does: its bits.
  EXPECT_TRUE(torch::equal(tensor_from(got.table_grad, p.table.sizes()), p.table.grad()));
}

// A pack's runs stacked (TokenLayout::runs): each run's windows read its own weights and table,
// and its gradients are summed from its own windows — every output bit for bit the run's alone.
void check_runs(const Case& c, int64_t runs) {
  SCOPED_TRACE(std::to_string(runs) + " runs of B " + std::to_string(c.batch));
  torch::manual_seed(runs * 1000 + c.width);
  std::vector<Problem> each;
  for (int64_t r = 0; r < runs; ++r) each.push_back(make(c));
  Problem pack = each[0];
  const auto gather = [&](auto part, bool stack) {
    std::vector<torch::Tensor> parts;
    for (const Problem& p : each) parts.push_back(part(p).detach());
    return stack ? torch::stack(parts) : torch::cat(parts);
  };
  for (size_t j = 0; j < pack.groups.size(); ++j) {
    pack.groups[j] = {gather([&](const Problem& p) { return p.groups[j].input; }, false),
                      gather([&](const Problem& p) { return p.groups[j].weight; }, true),
                      gather([&](const Problem& p) { return p.groups[j].bias; }, true)};
  }
  pack.timesteps = gather([](const Problem& p) { return p.timesteps; }, false);
  pack.table = gather([](const Problem& p) { return p.table; }, true);
  pack.shape.batch = runs * c.batch;
  pack.shape.runs = runs;
  const torch::Tensor grads = torch::randn({runs * c.batch, pack.tokens, c.width});
  const Emulated packed = emulate(pack, grads);
  const auto part = [&](const std::vector<float>& v, int64_t r) {
    return testing::run_part(v, r, v.size() / static_cast<size_t>(runs));
  };
  for (int64_t r = 0; r < runs; ++r) {
    SCOPED_TRACE("run " + std::to_string(r));
    const Emulated alone = emulate(each[r], grads.narrow(0, r * c.batch, c.batch));
    EXPECT_EQ(part(packed.tokens, r), alone.tokens);
    EXPECT_EQ(part(packed.table_grad, r), alone.table_grad);
    for (size_t j = 0; j < pack.groups.size(); ++j) {
      EXPECT_EQ(part(packed.weight_grad[j], r), alone.weight_grad[j]);
      EXPECT_EQ(part(packed.bias_grad[j], r), alone.bias_grad[j]);
    }
  }
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
  // Hopper's widths at DT's 128 channels: 11 state inputs and a bias in three blocks of inputs
  // (the weights staged in shared memory: a width of whole warps).
  check({3, 20, 128, 12, {1, 11, 3}, true});
  // Whole warps, and a group of more inputs than a warp stages (read where they lie).
  check({2, 6, 64, 9, {1, 30, 24}, true});
}

TEST(TokenEmbeddingEmulated, EachRunOfAPackIsEmbeddedAsItIsAlone) {
  check_runs({5, 6, 40, 21, {1, 5, 2}, true}, 3);
  // A run's steps over more than one round of the time table's reads (2 100 > 2 048).
  check_runs({140, 15, 8, 9, {1, 2, 1}, true}, 2);
  // Staged weights: each warp's from its own run's.
  check_runs({4, 5, 64, 21, {1, 11, 3}, true}, 3);
}

}  // namespace
}  // namespace minrnn::core
