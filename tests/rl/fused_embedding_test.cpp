// DecisionModel::forward embeds a step's three tokens with one block-diagonal product over the
// concatenated inputs (rl/decision_model.cpp). It must equal the per-token form it replaced —
// three Linears, the timestep embedding added to each, stacked and flattened, all 3K tokens through
// the backbone — in value and in every parameter's gradient, float64, for every backbone. (The
// fused forward also leaves out the last token, a_K, which no read output depends on.)
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "rl/decision_model.h"

namespace minrnn::rl {
namespace {

torch::Tensor unfused_forward(DecisionModel& m, const DecisionBatch& b) {
  const int64_t B = b.states.size(0), K = b.states.size(1), D = m->options().embed_dim;
  auto time = m->embed_timestep(b.timesteps.clamp(0, m->options().max_ep_len));
  auto r = m->embed_return(b.returns_to_go) + time;
  auto s = m->embed_state(b.states) + time;
  auto a = m->embed_action(b.actions) + time;
  auto tokens = torch::stack({r, s, a}, 2).reshape({B, 3 * K, D});
  auto out = m->backbone->forward(m->embed_norm(tokens));
  return torch::tanh(m->predict_action(out.reshape({B, K, 3, D}).select(2, 1)));
}

class FusedEmbedding : public ::testing::TestWithParam<std::string> {};

TEST_P(FusedEmbedding, EqualsThePerTokenEmbeddingsWithGradientsInFloat64) {
  torch::manual_seed(3);
  DecisionModelOptions o;
  o.obs_dim = 5;
  o.act_dim = 2;
  o.backbone = GetParam();
  o.n_layers = 2;
  o.embed_dim = 16;
  o.max_ep_len = 50;
  DecisionModel model(o);
  model->to(torch::kDouble);
  model->eval();  // dropout off: both forms must then be the same function
  const int64_t B = 3, K = 4;
  const auto f64 = torch::TensorOptions().dtype(torch::kDouble);
  DecisionBatch b{torch::randn({B, K, 1}, f64), torch::randn({B, K, o.obs_dim}, f64),
                  torch::randn({B, K, o.act_dim}, f64),
                  torch::randint(0, 60, {B, K}, torch::kInt64)};  // some past max_ep_len
  auto w = torch::randn({B, K, o.act_dim}, f64);
  auto params = model->parameters();
  auto fused_out = model->forward(b);
  auto fused = torch::autograd::grad({(fused_out * w).sum()}, params, {}, false, false, true);
  auto ref_out = unfused_forward(model, b);
  auto ref = torch::autograd::grad({(ref_out * w).sum()}, params, {}, false, false, true);
  EXPECT_TRUE(torch::allclose(fused_out, ref_out, 1e-12, 1e-12));
  auto named = model->named_parameters();
  for (size_t i = 0; i < params.size(); ++i) {
    ASSERT_EQ(fused[i].defined(), ref[i].defined()) << named[i].key();
    if (!ref[i].defined()) continue;
    EXPECT_TRUE(torch::allclose(fused[i], ref[i], 1e-10, 1e-12)) << named[i].key();
  }
}

INSTANTIATE_TEST_SUITE_P(Backbones, FusedEmbedding,
                         ::testing::Values("mingru", "minlstm", "hgrn", "transformer"));

}  // namespace
}  // namespace minrnn::rl
