// A forward that returns only some tokens (TokenSelection: the decision agent reads its state
// tokens) must equal the full forward at those tokens — value, every parameter's gradient, and the
// recurrent state it hands on — for every backbone, in float64.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "models/hgrn.h"
#include "models/minrnn_stack.h"
#include "models/transformer.h"

namespace minrnn::core {
namespace {

std::shared_ptr<SequenceModel> make_sequence_model(const std::string& kind) {
  if (kind == "hgrn") return std::make_shared<HgrnStack>(12, 3, 0.1, 1.0);
  if (kind == "transformer") {
    TransformerOptions o;
    o.d_model = 12;
    o.n_heads = 2;
    return std::make_shared<TransformerStack>(o, 3);
  }
  BlockOptions o;
  o.cell = parse_cell(kind.substr(0, kind.find('_')));
  o.d_model = 12;
  o.expansion = kind.find("_wide") != std::string::npos ? 2.0 : 1.0;
  o.conv = kind.find("_conv") != std::string::npos;
  return std::make_shared<MinRnnStack>(o, 3);
}

std::vector<torch::Tensor> gradients(SequenceModel& m) {
  std::vector<torch::Tensor> g;
  for (auto& p : m.parameters()) {
    g.push_back(p.grad().defined() ? p.grad().clone() : torch::zeros_like(p));
    p.mutable_grad() = torch::Tensor();
  }
  return g;
}

class TokenSelectionTest : public ::testing::TestWithParam<std::string> {};

TEST_P(TokenSelectionTest, EqualsTheFullForwardAtTheSelectedTokens) {
  torch::manual_seed(5);
  auto model = make_sequence_model(GetParam());
  model->to(torch::kDouble);
  model->eval();  // dropout off: both must be the same function
  const torch::Tensor x = torch::randn({2, 13, 12}, torch::kDouble);
  const torch::Tensor weight = torch::randn({2, 5, 12}, torch::kDouble);  // a loss on the outputs
  for (const TokenSelection read :
       {TokenSelection{1, 3}, TokenSelection{0, 3}, TokenSelection{2, 4}}) {
    SCOPED_TRACE("first " + std::to_string(read.first) + ", stride " + std::to_string(read.stride));
    const bool stateful = model->streaming();
    SequenceState full_state = model->initial_state(), read_state = model->initial_state();
    torch::Tensor full = read.apply(model->forward(x, stateful ? &full_state : nullptr));
    const int64_t n = full.size(1);
    (full * weight.slice(1, 0, n)).sum().backward();
    const auto full_grads = gradients(*model);

    torch::Tensor selected = model->forward(x, stateful ? &read_state : nullptr, read);
    ASSERT_EQ(selected.sizes(), full.sizes());
    EXPECT_TRUE(torch::allclose(selected, full, 1e-12, 1e-12));
    (selected * weight.slice(1, 0, n)).sum().backward();
    const auto read_grads = gradients(*model);
    for (size_t i = 0; i < full_grads.size(); ++i) {
      EXPECT_TRUE(torch::allclose(read_grads[i], full_grads[i], 1e-10, 1e-12)) << "parameter " << i;
    }
    for (size_t l = 0; l < full_state.size(); ++l) {  // every token still advances the state
      ASSERT_TRUE(read_state[l].h.defined());
      EXPECT_TRUE(torch::allclose(read_state[l].h, full_state[l].h, 1e-12, 1e-12)) << "layer " << l;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Backbones, TokenSelectionTest,
                         ::testing::Values("mingru", "minlstm", "mingru_conv_wide", "minlstm_wide",
                                           "hgrn", "transformer"));

}  // namespace
}  // namespace minrnn::core
