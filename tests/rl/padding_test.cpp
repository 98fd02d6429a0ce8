// The sampler pads a window that runs past its episode's end. Evaluation never pads, so training
// must show the model exactly what an unpadded window would: the predictions for a window's real
// steps may not depend on whether, or with what, it was padded.
#include <gtest/gtest.h>

#include <random>

#include "datasets/episodes.h"
#include "datasets/sampler.h"
#include "rl/decision_model.h"

namespace minrnn {
namespace {

// Random episodes of the given lengths, each ended by a timeout.
data::Transitions episodes(int obs_dim, int act_dim, const std::vector<int>& lengths) {
  data::Transitions d;
  d.obs_dim = obs_dim;
  d.act_dim = act_dim;
  std::mt19937_64 rng(5);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> obs(obs_dim), next(obs_dim), act(act_dim);
  for (int len : lengths) {
    for (int t = 0; t < len; ++t) {
      for (auto& x : obs) x = normal(rng);
      for (auto& x : next) x = normal(rng);
      for (auto& x : act) x = std::tanh(normal(rng));
      d.append_step(obs.data(), act.data(), 1.0f + normal(rng), next.data(), false, t == len - 1);
    }
  }
  return d;
}

rl::DecisionBatch tensors(const data::SequenceBatch& b) {
  const int64_t B = b.batch_size, K = b.context_len;
  auto f = [](const std::vector<float>& v, std::vector<int64_t> shape) {
    return torch::tensor(v).reshape(shape);
  };
  return {f(b.returns_to_go, {B, K, 1}) / 10, f(b.states, {B, K, b.obs_dim}),
          f(b.actions, {B, K, b.act_dim}), torch::tensor(b.timesteps).reshape({B, K})};
}

rl::DecisionBatch rows(const rl::DecisionBatch& b, int64_t window, const torch::Tensor& slots) {
  auto pick = [&](const torch::Tensor& x) { return x[window].index_select(0, slots).unsqueeze(0); };
  return {pick(b.returns_to_go), pick(b.states), pick(b.actions), pick(b.timesteps)};
}

TEST(Padding, RealStepsPredictTheSameWithOrWithoutPadding) {
  const int K = 8;
  // Episodes shorter than K: many windows are padded, some are padded to a single real step.
  const data::Transitions d = episodes(5, 2, {2, 3, 5, 7, 30});
  const data::EpisodeIndex index = data::split_episodes(d, "padding-test");
  data::SamplerOptions so;
  so.batch_size = 24;
  so.context_len = K;
  so.seed = 3;
  const data::SequenceBatch sampled = data::TrajectorySampler(d, index, so).sample();
  const rl::DecisionBatch batch = tensors(sampled);
  const torch::Tensor mask = torch::tensor(sampled.mask).reshape({so.batch_size, K});

  // The same windows with noise where the padding is: a causal model must not care.
  const torch::Tensor pad = (mask == 0).unsqueeze(-1);
  torch::manual_seed(11);
  rl::DecisionBatch noisy = batch;
  noisy.returns_to_go =
      torch::where(pad, torch::randn_like(batch.returns_to_go), batch.returns_to_go);
  noisy.states = torch::where(pad, torch::randn_like(batch.states), batch.states);
  noisy.actions = torch::where(pad, torch::rand_like(batch.actions), batch.actions);
  noisy.timesteps = torch::where(mask == 0, torch::full_like(batch.timesteps, 99), batch.timesteps);

  for (const char* backbone : {"mingru", "minlstm", "hgrn", "transformer"}) {
    torch::manual_seed(0);
    rl::DecisionModel model(rl::DecisionModelOptions{5, 2, backbone, 2, 16});
    model->eval();
    torch::NoGradGuard no_grad;
    const torch::Tensor full = model->forward(batch), with_noise = model->forward(noisy);
    int padded = 0;
    for (int64_t w = 0; w < so.batch_size; ++w) {
      const torch::Tensor slots = mask[w].nonzero().flatten();
      ASSERT_GT(slots.numel(), 0);
      padded += slots.numel() < K;
      // What evaluation would compute from these steps alone, unpadded.
      const torch::Tensor alone = model->forward(rows(batch, w, slots))[0];
      EXPECT_TRUE(torch::allclose(full[w].index_select(0, slots), alone, 1e-5, 1e-6))
          << backbone << " window " << w << ": " << slots.numel() << " real steps of " << K;
      EXPECT_TRUE(torch::allclose(with_noise[w].index_select(0, slots), alone, 1e-5, 1e-6))
          << backbone << " window " << w << ": the padding's contents reached a real step";
    }
    EXPECT_GT(padded, 4) << "the data should give padded windows";
  }
}

}  // namespace
}  // namespace minrnn
