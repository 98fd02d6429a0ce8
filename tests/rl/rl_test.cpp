#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <new>
#include <stdexcept>

#include "rl/decision_model.h"
#include "rl/run_start.h"
#include "rl/trainer.h"
#include "tests/rl/fixtures.h"

namespace minrnn {
namespace {

namespace fs = std::filesystem;
using testing::error_of;
using testing::TempDir;

rl::DecisionBatch random_batch(int64_t B, int64_t K, int64_t obs, int64_t act) {
  return {torch::randn({B, K, 1}), torch::randn({B, K, obs}), torch::rand({B, K, act}) * 2 - 1,
          torch::arange(K).repeat({B, 1}) + 3};
}

TEST(DecisionModel, OutputShapes) {
  torch::manual_seed(0);
  for (const char* backbone : {"mingru", "minlstm", "hgrn", "transformer"}) {
    rl::DecisionModelOptions o{11, 3, backbone, 2, 16};
    rl::DecisionModel m(o);
    auto out = m->forward(random_batch(4, 7, 11, 3));
    EXPECT_EQ(out.sizes(), (std::vector<int64_t>{4, 7, 3})) << backbone;
    EXPECT_LE(out.abs().max().item<float>(), 1.0f);
    EXPECT_EQ(m->streaming(), std::string(backbone) != "transformer");
  }
  EXPECT_THROW(rl::DecisionModel(rl::DecisionModelOptions{11, 3, "gru"}), std::invalid_argument);
  rl::DecisionModelOptions conv_transformer{11, 3, "transformer", 2, 16};
  conv_transformer.conv = true;
  EXPECT_THROW(rl::DecisionModel{conv_transformer}, std::invalid_argument);
}

// The Transformer baseline starts from CORL's Decision Transformer's init (the peer's): Linear and
// Embedding weights N(0, 0.02), biases 0, the attention's input projection Xavier uniform; the
// minRNN backbones from PyTorch's default, as the minRNN paper trains them.
TEST(DecisionModel, TheTransformerStartsFromCorlsInitAndTheMinRnnsFromPyTorchs) {
  torch::manual_seed(3);
  const rl::DecisionModel dt(rl::DecisionModelOptions{11, 3, "transformer", 2, 128});
  const rl::DecisionModel gru(rl::DecisionModelOptions{11, 3, "mingru", 2, 128});
  bool saw_qkv = false;
  for (const auto& p : dt->named_parameters()) {
    const std::string& name = p.key();
    const torch::Tensor& w = p.value();
    if (name.find("norm") != std::string::npos) continue;  // LayerNorms: 1 and 0, as ever
    if (name.size() > 5 && name.compare(name.size() - 5, 5, ".bias") == 0) {
      EXPECT_EQ(w.abs().max().item<float>(), 0.0f) << name;
    } else if (name.find("attn.qkv") != std::string::npos) {
      saw_qkv = true;  // Xavier uniform over (128 + 384): bound √(6/512)
      EXPECT_LE(w.abs().max().item<float>(), std::sqrt(6.0f / 512.0f)) << name;
      EXPECT_NEAR(w.std().item<float>(), std::sqrt(6.0f / 512.0f) / std::sqrt(3.0f), 0.005) << name;
    } else {
      EXPECT_NEAR(w.std().item<float>(), 0.02, 0.004) << name;
    }
  }
  EXPECT_TRUE(saw_qkv);
  // PyTorch's Linear default: U(−1/√fan_in, 1/√fan_in), std 1/√(3·11) for the state embedding.
  EXPECT_NEAR(gru->embed_state->weight.std().item<float>(), 1.0f / std::sqrt(33.0f), 0.03);
}

TEST(DecisionModel, StreamingActMatchesParallelForward) {
  torch::manual_seed(1);
  // The minRNN block variants too: a conv before the recurrence, plain (not log-space) candidates.
  rl::DecisionModelOptions conv_plain{11, 3, "mingru", 2, 16};
  conv_plain.conv = true;
  conv_plain.log_space = false;
  rl::DecisionModelOptions lstm_conv = conv_plain;
  lstm_conv.backbone = "minlstm";
  lstm_conv.log_space = true;
  for (const rl::DecisionModelOptions& o : {rl::DecisionModelOptions{11, 3, "mingru", 3, 16},
                                            {11, 3, "minlstm", 3, 16},
                                            {11, 3, "hgrn", 3, 16},
                                            conv_plain,
                                            lstm_conv}) {
    const std::string backbone =
        o.backbone + (o.conv ? "+conv" : "") + (o.log_space ? "" : "+plain");
    rl::DecisionModel m(o);
    bool has_conv = false;
    for (const auto& p : m->named_parameters())
      has_conv |= p.key().find("conv") != std::string::npos;
    EXPECT_EQ(has_conv, o.conv) << backbone;
    m->eval();
    torch::NoGradGuard no_grad;
    auto b = random_batch(2, 6, 11, 3);
    auto parallel = m->forward(b);
    auto state = m->initial_state();
    for (int64_t t = 0; t < 6; ++t) {
      auto a = m->act(b.returns_to_go.select(1, t), b.states.select(1, t), b.timesteps.select(1, t),
                      state);
      EXPECT_TRUE(torch::allclose(a, parallel.select(1, t), 1e-4, 1e-5)) << backbone << " t=" << t;
      m->observe_action(b.actions.select(1, t), b.timesteps.select(1, t), state);
    }
  }
  // The causal Transformer: the prediction at t ignores later tokens.
  rl::DecisionModel tf(rl::DecisionModelOptions{11, 3, "transformer", 2, 16});
  tf->eval();
  auto b = random_batch(2, 6, 11, 3);
  auto full = tf->forward(b);
  auto b2 = b;
  b2.states = b.states.clone();
  b2.states.select(1, 5).normal_();
  auto changed = tf->forward(b2);
  EXPECT_TRUE(torch::allclose(full.narrow(1, 0, 5), changed.narrow(1, 0, 5), 1e-5, 1e-6));
  EXPECT_FALSE(torch::allclose(full.select(1, 5), changed.select(1, 5)));
}

std::vector<double> losses(const fs::path& metrics) {
  std::ifstream in(metrics);
  std::string line;
  std::getline(in, line);
  std::vector<double> out;
  while (std::getline(in, line)) out.push_back(std::stod(line.substr(line.find(',') + 1)));
  return out;
}

TEST(Trainer, LossDecreasesAndRunIsProtected) {
  TempDir tmp;
  const auto data = testing::write_hopper_dataset(tmp.path);
  auto cfg = testing::tiny_config(data, "mingru", {"max_steps=60", "dropout=0"});
  rl::TrainOptions opt;
  opt.run_dir = (tmp.path / "run").string();
  opt.quiet = true;
  auto r = rl::train(cfg, opt);
  EXPECT_TRUE(r.finished);
  EXPECT_EQ(r.step, 60);
  auto l = losses(tmp.path / "run" / "metrics.csv");
  ASSERT_EQ(l.size(), 60u);
  double first = 0, last = 0;
  for (int i = 0; i < 10; ++i) first += l[i], last += l[50 + i];
  EXPECT_LT(last, 0.7 * first) << "first " << first / 10 << " last " << last / 10;
  EXPECT_TRUE(fs::exists(tmp.path / "run" / "done.json"));
  // A finished run is not replaced without force; another config in the same dir is refused.
  auto e = error_of([&] { rl::train(cfg, opt); });
  EXPECT_NE(e.find("--force"), std::string::npos) << e;
  fs::remove(tmp.path / "run" / "done.json");
  auto other = testing::tiny_config(data, "minlstm");
  e = error_of([&] { rl::train(other, opt); });
  EXPECT_NE(e.find("differs"), std::string::npos) << e;

  auto agent = rl::load_agent(opt.run_dir);
  EXPECT_EQ(agent.step, 60);
  EXPECT_EQ(agent.env, "hopper");
  EXPECT_EQ(agent.config.backbone, "mingru");
}

TEST(Trainer, KillAndResumeGivesTheSameWeights) {
  TempDir tmp;
  const auto data = testing::write_hopper_dataset(tmp.path, 600);
  for (const char* backbone : {"minlstm", "transformer"}) {
    auto cfg = testing::tiny_config(data, backbone, {"max_steps=12", "checkpoint_every=3"});
    rl::TrainOptions full, part;
    full.quiet = part.quiet = true;
    full.run_dir = (tmp.path / (std::string(backbone) + "-full")).string();
    part.run_dir = (tmp.path / (std::string(backbone) + "-part")).string();
    rl::train(cfg, full);
    part.stop_after = 6;
    auto first = rl::train(cfg, part);
    EXPECT_FALSE(first.finished);
    EXPECT_EQ(first.step, 6);
    part.stop_after = -1;
    auto second = rl::train(cfg, part);
    EXPECT_EQ(second.resumed_from, 6);
    EXPECT_TRUE(second.finished);
    auto a = rl::load_agent(full.run_dir), b = rl::load_agent(part.run_dir);
    auto pb = b.model->named_parameters();
    for (const auto& p : a.model->named_parameters()) {
      EXPECT_TRUE(torch::equal(p.value(), pb[p.key()])) << backbone << " " << p.key();
    }
    EXPECT_EQ(losses(fs::path(full.run_dir) / "metrics.csv"),
              losses(fs::path(part.run_dir) / "metrics.csv"));
  }
}

TEST(Trainer, NonFiniteLossStopsWithAClearMessage) {
  TempDir tmp;
  const auto data = testing::write_hopper_dataset(tmp.path, 300);
  // The data's returns-to-go divided by a tiny scale overflow float32 (the target, tiny too, does
  // not): the loss becomes NaN at once.
  auto cfg = testing::tiny_config(data, "mingru", {"return_scale=1e-38", "target_return=1e-3"});
  rl::TrainOptions opt;
  opt.quiet = true;
  opt.run_dir = (tmp.path / "run").string();
  auto e = error_of([&] { rl::train(cfg, opt); });
  EXPECT_NE(e.find("loss is"), std::string::npos) << e;
  // The run dir it made is gone: its config.yaml would refuse the corrected command.
  EXPECT_FALSE(fs::exists(tmp.path / "run"));
}

// A config whose training cannot fit in memory is refused naming its keys before the model is
// built (it once grew until the OOM killer came), and leaves no run dir.
TEST(Trainer, AModelLargerThanTheMachineIsRefusedByItsKeys) {
  TempDir tmp;
  const auto data = testing::write_hopper_dataset(tmp.path, 300);
  rl::TrainOptions opt;
  opt.quiet = true;
  opt.run_dir = (tmp.path / "run").string();
  for (const std::string set : {"n_layers=2147483647", "embed_dim=1048576"}) {
    const auto e = error_of([&] { rl::train(testing::tiny_config(data, "mingru", {set}), opt); });
    EXPECT_NE(e.find(set.substr(0, set.find('=')) + " " + set.substr(set.find('=') + 1)),
              std::string::npos)
        << e;
    EXPECT_NE(e.find("more than this machine's"), std::string::npos) << e;
    EXPECT_FALSE(fs::exists(tmp.path / "run"));
  }
}

// An allocation that failed is told from other errors by its type or by LibTorch's words (its
// allocators' messages name only bytes): a run's step and a stacked pack say then what to lower.
TEST(Trainer, AFailedAllocationIsToldFromOtherErrors) {
  EXPECT_TRUE(rl::is_out_of_memory(std::bad_alloc()));
  EXPECT_TRUE(rl::is_out_of_memory(std::runtime_error(
      "CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 15.77 GiB")));
  EXPECT_TRUE(rl::is_out_of_memory(std::runtime_error(
      "DefaultCPUAllocator: not enough memory: you tried to allocate 4503599627370496 bytes.")));
  EXPECT_FALSE(rl::is_out_of_memory(std::runtime_error("loss is nan at step 12")));
  EXPECT_FALSE(rl::is_out_of_memory(std::invalid_argument("embed_dim: expected a whole number")));
}

}  // namespace
}  // namespace minrnn
