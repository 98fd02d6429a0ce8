// SAC pieces checked against hand computations; the learning check is in SacSlow (label slow).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "collect/sac.h"
#include "datasets/d4rl.h"
#include "envs/registry.h"
#include "tests/as_if_from_cuda.h"
#include "tests/temp_dir.h"

namespace minrnn::rl {
namespace {

SacConfig small_config(uint64_t seed = 1) {
  SacConfig c;
  c.hidden = 32;
  c.batch_size = 16;
  c.seed = seed;
  return c;
}

ReplayBuffer toy_buffer(int64_t n) {
  ReplayBuffer b(2, 1, 1, 1);
  for (int64_t i = 0; i < n; ++i) {
    const double x = static_cast<double>(i);
    b.add({x, -x}, {0.5}, x * 0.1, {x + 1, -x - 1}, i % 7 == 6, i % 5 == 4, {x}, {-x}, -0.3);
  }
  return b;
}

TEST(Sac, PolyakUpdateIsTheConvexCombination) {
  torch::manual_seed(3);
  QNetwork target(3, 2, 8), source(3, 2, 8);
  std::vector<torch::Tensor> before;
  for (const auto& p : target->parameters()) before.push_back(p.detach().clone());
  polyak_update(*target, *source, 0.005);
  const auto t = target->parameters(), s = source->parameters();
  ASSERT_EQ(t.size(), before.size());
  for (size_t i = 0; i < t.size(); ++i) {
    const torch::Tensor expect = 0.005 * s[i].detach() + 0.995 * before[i];
    EXPECT_TRUE(torch::allclose(t[i], expect, 1e-6, 1e-7)) << "parameter " << i;
    EXPECT_FALSE(torch::allclose(t[i], before[i]));  // it moved
  }
  polyak_update(*target, *source, 1.0);  // tau = 1 copies
  for (size_t i = 0; i < t.size(); ++i) EXPECT_TRUE(torch::equal(t[i], s[i]));
}

TEST(Sac, TemperatureRisesWhenEntropyIsBelowTarget) {
  Sac sac(4, 3, small_config());  // target entropy −3
  ASSERT_DOUBLE_EQ(sac.target_entropy(), -3.0);
  // log π = 5 → entropy −5 < −3: α must grow. Adam's first step moves by lr · g/|g| = lr.
  const double loss = sac.update_temperature(torch::full({8}, 5.0));
  EXPECT_DOUBLE_EQ(loss, 0.0);  // log α starts at 0
  EXPECT_NEAR(sac.log_alpha_.item<double>(), 3e-4, 1e-7);
  Sac other(4, 3, small_config());
  // log π = −4 → entropy 4 > −3: α must shrink by lr.
  other.update_temperature(torch::full({8}, -4.0));
  EXPECT_NEAR(other.log_alpha_.item<double>(), -3e-4, 1e-7);
  // Its loss is −log α · mean(log π + target) = −(−3e-4)(−4 − 3) on the next call.
  EXPECT_NEAR(other.update_temperature(torch::full({8}, -4.0)), -2.1e-3, 1e-7);
}

TEST(Sac, TanhGaussianLogProbMatchesHandComputation) {
  const std::vector<double> u = {0.3, -1.2}, m = {0.1, -0.5}, ls = {-0.7, 0.4};
  double expect = 0;
  for (int i = 0; i < 2; ++i) {
    const double s = std::exp(ls[i]), z = (u[i] - m[i]) / s;
    expect += -0.5 * z * z - std::log(s) - 0.5 * std::log(2 * M_PI);
    expect -= std::log(1 - std::tanh(u[i]) * std::tanh(u[i]));
  }
  auto t = [](const std::vector<double>& v) { return torch::tensor(v, torch::kFloat64); };
  EXPECT_NEAR(tanh_gaussian_log_prob(t(u), t(m), t(ls)).item<double>(), expect, 1e-10);
  // Far in the tail tanh(u) rounds to 1 in float32; log(1 − tanh²u) → log 4 − 2|u| must hold.
  const torch::Tensor big = torch::tensor({30.0f}), zero = torch::zeros({1});
  const double lp = tanh_gaussian_log_prob(big, zero, zero).item<double>();
  EXPECT_TRUE(std::isfinite(lp));
  EXPECT_NEAR(lp, -0.5 * 900 - 0.5 * std::log(2 * M_PI) - (std::log(4.0) - 60), 1e-3);
}

TEST(Sac, ReplaySamplingIsDeterministicAndUniform) {
  EXPECT_EQ(sample_indices(42, 1000, 64), sample_indices(42, 1000, 64));
  EXPECT_NE(sample_indices(42, 1000, 64), sample_indices(43, 1000, 64));
  std::vector<int> counts(10, 0);
  for (int64_t i : sample_indices(7, 10, 100000)) {
    ASSERT_GE(i, 0);
    ASSERT_LT(i, 10);
    ++counts[i];
  }
  for (int c : counts) EXPECT_NEAR(c, 10000, 500);  // ~5 standard deviations
  EXPECT_THROW(sample_indices(1, 0, 4), std::invalid_argument);
}

TEST(Sac, BatchRowsAndDonesComeFromTheBuffer) {
  const ReplayBuffer b = toy_buffer(20);
  EXPECT_EQ(b.timeouts[6], 0);  // step 6 is terminal, so not a timeout
  const SacBatch batch = make_batch(b, {6, 4, 13}, torch::kCPU);
  EXPECT_FLOAT_EQ(batch.obs[0][0].item<float>(), 6.f);
  EXPECT_FLOAT_EQ(batch.next_obs[2][1].item<float>(), -14.f);
  EXPECT_FLOAT_EQ(batch.rewards[1].item<float>(), 0.4f);
  // A timeout (row 4) still bootstraps; only terminals (rows 6, 13) stop the return.
  EXPECT_TRUE(torch::equal(batch.dones, torch::tensor({1.f, 0.f, 1.f})));
  const data::Transitions d = b.to_d4rl(10);
  EXPECT_EQ(d.num_steps(), 10);
  EXPECT_EQ(d.infos.at("qpos").values[3], 3.f);
  EXPECT_NO_THROW(d.validate("replay"));
  const data::Transitions both = concat_d4rl(d, b.to_d4rl());
  EXPECT_EQ(both.num_steps(), 30);
  std::vector<uint8_t> timeouts = d.timeouts;
  timeouts.insert(timeouts.end(), b.timeouts.begin(), b.timeouts.end());
  EXPECT_EQ(both.timeouts, timeouts);  // d ended on its own: nothing to mark
  // The first 12 rows end mid-episode (row 11): there the seam is where the data was cut, a
  // timeout, and b's rows follow unchanged.
  const data::Transitions cut = b.to_d4rl(12);
  ASSERT_FALSE(cut.terminals[11] || cut.timeouts[11]);
  const data::Transitions seam = concat_d4rl(cut, b.to_d4rl());
  EXPECT_EQ(seam.timeouts[11], 1);
  EXPECT_EQ(seam.terminals[11], 0);
  EXPECT_EQ(std::vector<uint8_t>(seam.timeouts.begin(), seam.timeouts.begin() + 11),
            std::vector<uint8_t>(cut.timeouts.begin(), cut.timeouts.begin() + 11));
  EXPECT_EQ(std::vector<uint8_t>(seam.timeouts.begin() + 12, seam.timeouts.end()),
            b.to_d4rl().timeouts);
  EXPECT_EQ(both.infos.at("qvel").shape, (std::vector<int64_t>{30, 1}));
}

TEST(Sac, UpdateIsDeterministicAndMovesEveryNetwork) {
  const ReplayBuffer b = toy_buffer(64);
  const SacBatch batch = make_batch(b, sample_indices(5, b.size(), 16), torch::kCPU);
  Sac a(2, 1, small_config(9)), c(2, 1, small_config(9));
  const torch::Tensor p0 = a.policy->fc0->weight.detach().clone();
  const torch::Tensor t0 = a.q1_target->fc0->weight.detach().clone();
  const SacLosses la = a.update(batch), lc = c.update(batch);
  EXPECT_EQ(la.q_loss, lc.q_loss);
  EXPECT_EQ(la.policy_loss, lc.policy_loss);
  EXPECT_TRUE(torch::equal(a.q1->fc0->weight, c.q1->fc0->weight));
  EXPECT_FALSE(torch::equal(a.policy->fc0->weight, p0));
  EXPECT_FALSE(torch::equal(a.q1_target->fc0->weight, t0));
  EXPECT_TRUE(std::isfinite(la.q_loss) && std::isfinite(la.alpha_loss));
}

TEST(Sac, QNetworksStayTrainableAfterThePolicyStep) {
  // The policy step backpropagates into the policy only; the Q weights must stay trainable.
  const ReplayBuffer b = toy_buffer(64);
  const SacBatch batch = make_batch(b, sample_indices(3, b.size(), 16), torch::kCPU);
  Sac sac(2, 1, small_config(4));
  sac.update(batch);
  for (QNetwork q : {sac.q1, sac.q2}) {
    for (const torch::Tensor& p : q->parameters()) EXPECT_TRUE(p.requires_grad());
  }
  const torch::Tensor q1_after_one = sac.q1->fc1->weight.detach().clone();
  const torch::Tensor q2_after_one = sac.q2->last_fc->bias.detach().clone();
  sac.update(batch);
  EXPECT_FALSE(torch::equal(sac.q1->fc1->weight, q1_after_one));
  EXPECT_FALSE(torch::equal(sac.q2->last_fc->bias, q2_after_one));
}

TEST(Sac, StochasticEvaluationLeavesTheTrainingStreamAlone) {
  // Evaluations (every --eval-every steps) must not change what training samples next.
  const envs::EnvSpec spec = envs::env_spec("hopper");
  Sac evaluated(spec.obs_dim, spec.act_dim, small_config(6));
  Sac untouched(spec.obs_dim, spec.act_dim, small_config(6));
  evaluate_policy("hopper", evaluated, 2, 77, /*deterministic=*/false);
  const std::vector<double> obs(spec.obs_dim, 0.1);
  EXPECT_EQ(evaluated.act(obs, false), untouched.act(obs, false));
}

TEST(Sac, PolicyMetadataRoundTripsThroughD4rlFile) {
  const envs::EnvSpec spec = envs::env_spec("hopper");
  Sac sac(spec.obs_dim, spec.act_dim, small_config(2));
  ReplayBuffer b(spec.obs_dim, spec.act_dim, spec.nq, spec.nv);
  b.add(std::vector<double>(spec.obs_dim, 0.1), std::vector<double>(spec.act_dim, 0.2), 1.0,
        std::vector<double>(spec.obs_dim, 0.3), false, true, std::vector<double>(spec.nq, 0),
        std::vector<double>(spec.nv, 0), -1.0);
  data::Transitions d = b.to_d4rl();
  sac.write_policy_metadata(d.metadata, 1234);
  const std::string path = ::testing::TempDir() + "/sac_metadata_test.hdf5";
  std::filesystem::remove(path);
  data::write_d4rl(path, d);
  const data::Transitions r = data::read_d4rl(path);
  std::filesystem::remove(path);
  EXPECT_EQ(r.metadata.strings.at("algorithm"), "SAC");
  EXPECT_EQ(r.metadata.strings.at("policy/nonlinearity"), "relu");
  EXPECT_EQ(r.metadata.strings.at("policy/output_distribution"), "tanh_gaussian");
  EXPECT_EQ(r.metadata.ints.at("iteration"), 1234);
  EXPECT_EQ(r.metadata.arrays.at("policy/fc0/weight").shape,
            (std::vector<int64_t>{32, spec.obs_dim}));
  EXPECT_EQ(r.metadata.arrays.at("policy/last_fc_log_std/bias").shape,
            (std::vector<int64_t>{spec.act_dim}));
  Sac loaded(spec.obs_dim, spec.act_dim, small_config(77));
  const std::vector<double> obs(spec.obs_dim, 0.5);
  EXPECT_NE(loaded.act(obs, true), sac.act(obs, true));
  loaded.load_policy_metadata(r.metadata);
  EXPECT_EQ(loaded.act(obs, true), sac.act(obs, true));
  data::D4rlMetadata missing = r.metadata;
  missing.arrays.erase("policy/fc1/bias");
  EXPECT_THROW(loaded.load_policy_metadata(missing), std::invalid_argument);
}

TEST(Sac, CheckpointRestoresAgentBufferAndSampler) {
  Sac sac(2, 1, small_config(4));
  const ReplayBuffer b = toy_buffer(30);
  sac.update(make_batch(b, sample_indices(1, b.size(), 16), torch::kCPU));
  const std::string path = ::testing::TempDir() + "/sac_ckpt_test.pt";
  save_sac_checkpoint(path, sac, b, 12);
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
  Sac restored(2, 1, small_config(99));
  ReplayBuffer rb;
  int64_t episodes = 0;
  ASSERT_TRUE(load_sac_checkpoint(path, restored, rb, &episodes));
  std::filesystem::remove(path);
  EXPECT_EQ(episodes, 12);
  EXPECT_EQ(rb.obs, b.obs);
  EXPECT_EQ(rb.timeouts, b.timeouts);
  EXPECT_DOUBLE_EQ(restored.alpha(), sac.alpha());
  // Same weights and the same generator state: the same stochastic action next.
  EXPECT_EQ(restored.act({0.2, 0.1}, false), sac.act({0.2, 0.1}, false));
  EXPECT_FALSE(load_sac_checkpoint(path, restored, rb, &episodes));

  // A truncated one (a copy cut short) is an error naming it, without LibTorch's C++ backtrace.
  save_sac_checkpoint(path, sac, b, 12);
  std::filesystem::resize_file(path, 300);
  try {
    load_sac_checkpoint(path, restored, rb, &episodes);
    FAIL();
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.rfind(path + ": not a readable SAC checkpoint (", 0), 0u) << what;
    EXPECT_EQ(what.find("Exception raised from"), std::string::npos) << what;
    EXPECT_EQ(what.find("frame #"), std::string::npos) << what;
  }
  // Damaged bytes inside a weight load (no CRC is checked): refused, naming the state, where the
  // resumed SAC trained and sampled NaN actions.
  {
    torch::NoGradGuard no_grad;
    sac.q1->parameters()[0].view(-1)[3] = NAN;
  }
  save_sac_checkpoint(path, sac, b, 12);
  try {
    load_sac_checkpoint(path, restored, rb, &episodes);
    FAIL() << "loaded a NaN weight";
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.rfind(path + ": not a readable SAC checkpoint: state '", 0), 0u) << what;
    EXPECT_NE(what.find("holds values that are not finite"), std::string::npos) << what;
  }
  std::filesystem::remove(path);
}

// A collect resumed on another machine: the SAC checkpoint loads onto the agent's device, its
// optimizers' state with it, whichever device wrote it.
TEST(Sac, ACudaWrittenCheckpointLoadsAndTrainsOnCpu) {
  testing::TempDir tmp;
  Sac sac(2, 1, small_config(4));
  const ReplayBuffer b = toy_buffer(30);
  sac.update(make_batch(b, sample_indices(1, b.size(), 16), torch::kCPU));  // Adam state exists
  save_sac_checkpoint((tmp.path / "cpu.pt").string(), sac, b, 12);
  ASSERT_GE(testing::write_as_if_from_cuda(tmp.path / "cpu.pt", tmp.path / "cuda.pt"), 1);
  const std::string path = (tmp.path / "cuda.pt").string();
  if (!torch::cuda::is_available()) {  // the copy really is a GPU checkpoint: naive loading fails
    torch::serialize::InputArchive naive;
    EXPECT_ANY_THROW(naive.load_from(path));
  }
  Sac restored(2, 1, small_config(99));
  ReplayBuffer rb;
  int64_t episodes = 0;
  ASSERT_TRUE(load_sac_checkpoint(path, restored, rb, &episodes));
  EXPECT_EQ(rb.obs, b.obs);
  for (const auto& p : restored.policy->parameters()) EXPECT_TRUE(p.device().is_cpu());
  // Training goes on as it would have: the same losses from the same batch.
  const SacBatch batch = make_batch(b, sample_indices(2, b.size(), 16), torch::kCPU);
  const SacLosses want = sac.update(batch), got = restored.update(batch);
  EXPECT_DOUBLE_EQ(got.q_loss, want.q_loss);
  EXPECT_DOUBLE_EQ(got.policy_loss, want.policy_loss);
  EXPECT_EQ(restored.act({0.2, 0.1}, false), sac.act({0.2, 0.1}, false));
}

// The GPU machine's case (`minrnn collect` on cuda, resuming a SAC trained on a CPU): before the
// fix, the weights stayed on the CPU and the first action failed with a device mismatch.
TEST(SacCuda, ACpuWrittenCheckpointLoadsAndTrainsOnCuda) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  testing::TempDir tmp;
  Sac sac(2, 1, small_config(4));
  const ReplayBuffer b = toy_buffer(30);
  sac.update(make_batch(b, sample_indices(1, b.size(), 16), torch::kCPU));
  const std::string path = (tmp.path / "sac.pt").string();
  save_sac_checkpoint(path, sac, b, 12);
  SacConfig on_cuda = small_config(99);
  on_cuda.device = torch::Device(torch::kCUDA, 0);
  Sac restored(2, 1, on_cuda);
  ReplayBuffer rb;
  ASSERT_TRUE(load_sac_checkpoint(path, restored, rb, nullptr));
  for (const auto& p : restored.policy->parameters()) EXPECT_TRUE(p.device().is_cuda());
  const std::vector<double> want = sac.act({0.2, 0.1}, false),
                            got = restored.act({0.2, 0.1}, false);
  ASSERT_EQ(got.size(), want.size());
  EXPECT_NEAR(got[0], want[0], 1e-5);  // the same noise (a CPU generator) through the same weights
  const SacLosses cpu = sac.update(make_batch(b, sample_indices(2, b.size(), 16), torch::kCPU));
  const SacLosses gpu =
      restored.update(make_batch(b, sample_indices(2, b.size(), 16), on_cuda.device));
  EXPECT_NEAR(gpu.q_loss, cpu.q_loss, 1e-4 * (1 + std::abs(cpu.q_loss)));
}

// 120 quiet steps on hopper, learning from step 40, one-episode evaluations.
SacTrainResult train_toy(int64_t eval_every, double target) {
  Sac sac(11, 3, small_config(2));
  ReplayBuffer buffer;
  SacTrainOptions opt;
  opt.total_steps = 120;
  opt.start_steps = 40;
  opt.eval_every = eval_every;
  opt.eval_episodes = 1;
  opt.progress_every = 0;
  opt.stop_at_normalized = target;
  return train_sac("hopper", sac, buffer, opt);
}

// The medium target is a normalized score, and normalized scores go below 0 (a random
// halfcheetah's): a negative target stops the run at the first evaluation past it; NaN never.
TEST(Sac, ATargetStopsTrainingEvenBelowZero) {
  for (const double target : {-1000.0, double(NAN)}) {
    const SacTrainResult r = train_toy(40, target);
    EXPECT_EQ(r.reached_target, !std::isnan(target)) << target;
    EXPECT_EQ(r.steps, std::isnan(target) ? 120 : 40) << target;
  }
}

// An evaluation of the untrained policy could meet a low target: evaluations wait for learning
// (here the one at step 20 does not run; the first is at 40, where learning began).
TEST(Sac, EvaluationsWaitUntilLearningHasBegun) {
  const SacTrainResult r = train_toy(20, -1e9);
  EXPECT_TRUE(r.reached_target);
  EXPECT_EQ(r.steps, 40);
  EXPECT_EQ(r.eval_step, 40);
}

// Learning check: a short SAC run on hopper must beat the random policy clearly.
TEST(SacSlow, HopperReturnRisesAboveRandom) {
  SacConfig config;
  config.seed = 0;
  Sac sac(11, 3, config);
  const double before = evaluate_policy("hopper", sac, 5, 123, false);
  ReplayBuffer buffer;
  SacTrainOptions opt;
  opt.total_steps = 6000;
  opt.start_steps = 1000;
  opt.eval_every = 0;
  opt.progress_every = 1000;
  train_sac("hopper", sac, buffer, opt);
  const double after = evaluate_policy("hopper", sac, 5, 123, true);
  std::printf("hopper return: untrained %.1f, after 6k SAC steps %.1f\n", before, after);
  // Random play scores ~20 per episode; docs/collect.md measured ~235 at 5k steps.
  EXPECT_GT(after, before + 100);
}

}  // namespace
}  // namespace minrnn::rl
