#include "collect/sac.h"

#include <ATen/CPUGeneratorImpl.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace minrnn::rl {
namespace {

constexpr double kLogStdMin = -20, kLogStdMax = 2;  // rlkit's clamp, which D4RL's policies used

torch::Tensor vector_to_tensor(const std::vector<float>& v, std::vector<int64_t> shape) {
  return torch::from_blob(const_cast<float*>(v.data()), shape, torch::kFloat32).clone();
}

}  // namespace

TanhGaussianPolicyImpl::TanhGaussianPolicyImpl(int obs_dim, int act_dim, int hidden)
    : fc0(register_module("fc0", torch::nn::Linear(obs_dim, hidden))),
      fc1(register_module("fc1", torch::nn::Linear(hidden, hidden))),
      last_fc(register_module("last_fc", torch::nn::Linear(hidden, act_dim))),
      last_fc_log_std(register_module("last_fc_log_std", torch::nn::Linear(hidden, act_dim))) {}

std::pair<torch::Tensor, torch::Tensor> TanhGaussianPolicyImpl::forward(const torch::Tensor& obs) {
  torch::Tensor h = torch::relu(fc1(torch::relu(fc0(obs))));
  return {last_fc(h), last_fc_log_std(h).clamp(kLogStdMin, kLogStdMax)};
}

torch::Tensor tanh_gaussian_log_prob(const torch::Tensor& u, const torch::Tensor& mean,
                                     const torch::Tensor& log_std) {
  const torch::Tensor z = (u - mean) * torch::exp(-log_std);
  const torch::Tensor gauss = -0.5 * z.pow(2) - log_std - 0.5 * std::log(2 * M_PI);
  // log(1 − tanh(u)²) = 2 (log 2 − u − softplus(−2u)); the naive form is −inf for |u| ≳ 9.
  const torch::Tensor log_det = 2.0 * (std::log(2.0) - u - torch::softplus(-2.0 * u));
  return (gauss - log_det).sum(-1);
}

QNetworkImpl::QNetworkImpl(int obs_dim, int act_dim, int hidden)
    : fc0(register_module("fc0", torch::nn::Linear(obs_dim + act_dim, hidden))),
      fc1(register_module("fc1", torch::nn::Linear(hidden, hidden))),
      last_fc(register_module("last_fc", torch::nn::Linear(hidden, 1))) {}

torch::Tensor QNetworkImpl::forward(const torch::Tensor& obs, const torch::Tensor& act) {
  torch::Tensor h = torch::relu(fc1(torch::relu(fc0(torch::cat({obs, act}, -1)))));
  return last_fc(h).squeeze(-1);
}

void polyak_update(torch::nn::Module& target, const torch::nn::Module& source, double tau) {
  torch::NoGradGuard no_grad;
  auto t = target.parameters();
  auto s = source.parameters();
  if (t.size() != s.size()) throw std::invalid_argument("polyak_update: different modules");
  for (size_t i = 0; i < t.size(); ++i) t[i].mul_(1.0 - tau).add_(s[i], tau);
}

SacBatch make_batch(const ReplayBuffer& b, const std::vector<int64_t>& indices,
                    torch::Device device) {
  const int64_t n = static_cast<int64_t>(indices.size());
  std::vector<float> obs(n * b.obs_dim), act(n * b.act_dim), rew(n), next(n * b.obs_dim), done(n);
  for (int64_t k = 0; k < n; ++k) {
    const int64_t i = indices[k];
    std::copy_n(&b.obs[i * b.obs_dim], b.obs_dim, &obs[k * b.obs_dim]);
    std::copy_n(&b.next_obs[i * b.obs_dim], b.obs_dim, &next[k * b.obs_dim]);
    std::copy_n(&b.actions[i * b.act_dim], b.act_dim, &act[k * b.act_dim]);
    rew[k] = b.rewards[i];
    // Only a fall ends the return; at a timeout the value of the next state still counts.
    done[k] = b.terminals[i] ? 1.f : 0.f;
  }
  return {vector_to_tensor(obs, {n, b.obs_dim}).to(device),
          vector_to_tensor(act, {n, b.act_dim}).to(device), vector_to_tensor(rew, {n}).to(device),
          vector_to_tensor(next, {n, b.obs_dim}).to(device),
          vector_to_tensor(done, {n}).to(device)};
}

Sac::Sac(int obs_dim, int act_dim, const SacConfig& config)
    : config_(config),
      obs_dim_(obs_dim),
      act_dim_(act_dim),
      gen_(at::detail::createCPUGenerator(config.seed)) {
  // Initial weights come from torch's global generator: seed it so a run is reproducible.
  torch::manual_seed(config.seed);
  policy = TanhGaussianPolicy(obs_dim, act_dim, config.hidden);
  q1 = QNetwork(obs_dim, act_dim, config.hidden);
  q2 = QNetwork(obs_dim, act_dim, config.hidden);
  q1_target = QNetwork(obs_dim, act_dim, config.hidden);
  q2_target = QNetwork(obs_dim, act_dim, config.hidden);
  policy->to(config.device);
  q1->to(config.device);
  q2->to(config.device);
  q1_target->to(config.device);
  q2_target->to(config.device);
  polyak_update(*q1_target, *q1, 1.0);
  polyak_update(*q2_target, *q2, 1.0);
  log_alpha_ = torch::zeros({1}, torch::TensorOptions().device(config.device).requires_grad(true));
  const auto adam = torch::optim::AdamOptions(config.lr);
  policy_opt_ = std::make_unique<torch::optim::Adam>(policy->parameters(), adam);
  std::vector<torch::Tensor> q_params = q1->parameters();
  for (const auto& p : q2->parameters()) q_params.push_back(p);
  q_opt_ = std::make_unique<torch::optim::Adam>(q_params, adam);
  alpha_opt_ = std::make_unique<torch::optim::Adam>(std::vector<torch::Tensor>{log_alpha_}, adam);
}

torch::Tensor Sac::randn(at::IntArrayRef shape, at::Generator* generator) {
  return torch::randn(shape, generator ? *generator : gen_, torch::kFloat32).to(config_.device);
}

SacLosses Sac::update(const SacBatch& batch) {
  SacLosses out;
  const int64_t n = batch.obs.size(0);
  const torch::Tensor alpha = log_alpha_.exp().detach();
  out.alpha = alpha.item<double>();

  torch::Tensor target;
  {
    torch::NoGradGuard no_grad;
    auto [mean, log_std] = policy(batch.next_obs);
    const torch::Tensor u = mean + log_std.exp() * randn({n, act_dim_});
    const torch::Tensor a = torch::tanh(u);
    const torch::Tensor next_v =
        torch::min(q1_target(batch.next_obs, a), q2_target(batch.next_obs, a)) -
        alpha * tanh_gaussian_log_prob(u, mean, log_std);
    target = batch.rewards + (1.0 - batch.dones) * config_.gamma * next_v;
  }
  const torch::Tensor q_loss = torch::mse_loss(q1(batch.obs, batch.actions), target) +
                               torch::mse_loss(q2(batch.obs, batch.actions), target);
  q_opt_->zero_grad();
  q_loss.backward();
  q_opt_->step();
  out.q_loss = q_loss.item<double>();

  auto [mean, log_std] = policy(batch.obs);
  const torch::Tensor u = mean + log_std.exp() * randn({n, act_dim_});  // reparameterized
  const torch::Tensor a = torch::tanh(u);
  const torch::Tensor log_prob = tanh_gaussian_log_prob(u, mean, log_std);
  const torch::Tensor policy_loss =
      (alpha * log_prob - torch::min(q1(batch.obs, a), q2(batch.obs, a))).mean();
  policy_opt_->zero_grad();
  // The loss flows through the Q-networks to the action only. Naming the policy's weights as the
  // inputs makes autograd skip the Q weight gradients (about a tenth of the step's arithmetic),
  // which the Q step would zero before use anyway.
  policy_loss.backward({}, std::nullopt, false, policy->parameters());
  policy_opt_->step();
  out.policy_loss = policy_loss.item<double>();
  out.entropy = -log_prob.mean().item<double>();

  out.alpha_loss = update_temperature(log_prob.detach());
  polyak_update(*q1_target, *q1, config_.tau);
  polyak_update(*q2_target, *q2, config_.tau);
  return out;
}

double Sac::update_temperature(const torch::Tensor& log_probs) {
  // d loss / d log α = −mean(log π + target): α grows while the entropy is below the target.
  const torch::Tensor loss = -(log_alpha_ * (log_probs + target_entropy())).mean();
  alpha_opt_->zero_grad();
  loss.backward();
  alpha_opt_->step();
  return loss.item<double>();
}

std::vector<double> Sac::act(const std::vector<double>& obs, bool deterministic, double* log_prob,
                             at::Generator* generator) {
  torch::NoGradGuard no_grad;
  torch::Tensor o = torch::tensor(obs, torch::kFloat64).to(torch::kFloat32).unsqueeze(0);
  auto [mean, log_std] = policy(o.to(config_.device));
  torch::Tensor u = deterministic ? mean : mean + log_std.exp() * randn({1, act_dim_}, generator);
  if (log_prob) *log_prob = tanh_gaussian_log_prob(u, mean, log_std).item<double>();
  torch::Tensor a = torch::tanh(u).squeeze(0).to(torch::kCPU, torch::kFloat64).contiguous();
  return {a.data_ptr<double>(), a.data_ptr<double>() + act_dim_};
}

BehaviourPolicy sac_behaviour_policy(Sac& sac, bool deterministic, at::Generator* generator) {
  return [&sac, deterministic, generator](const std::vector<double>& obs, double* log_prob) {
    return sac.act(obs, deterministic, log_prob, generator);
  };
}

void Sac::write_policy_metadata(data::D4rlMetadata& md, int64_t iteration) const {
  for (const auto& item : policy->named_parameters()) {
    const torch::Tensor& param = item.value();
    // "fc0.weight" -> "policy/fc0/weight"
    std::string key = "policy/" + item.key();
    key[key.find('.')] = '/';
    torch::Tensor t = param.detach().to(torch::kCPU).contiguous();
    md.arrays[key] = {t.sizes().vec(), {t.data_ptr<float>(), t.data_ptr<float>() + t.numel()}};
  }
  md.strings["algorithm"] = "SAC";
  md.strings["policy/nonlinearity"] = "relu";
  md.strings["policy/output_distribution"] = "tanh_gaussian";
  md.ints["iteration"] = iteration;
}

void Sac::load_policy_metadata(const data::D4rlMetadata& md) {
  torch::NoGradGuard no_grad;
  for (auto& item : policy->named_parameters()) {
    torch::Tensor& param = item.value();
    std::string key = "policy/" + item.key();
    key[key.find('.')] = '/';
    auto it = md.arrays.find(key);
    if (it == md.arrays.end()) throw std::invalid_argument("metadata/" + key + " is missing");
    if (it->second.shape != param.sizes().vec()) {
      throw std::invalid_argument("metadata/" + key + " has shape other than the policy's " +
                                  c10::str(param.sizes()));
    }
    param.copy_(vector_to_tensor(it->second.values, it->second.shape));
  }
}

void Sac::save(torch::serialize::OutputArchive& archive) const {
  auto put = [&archive](const std::string& key, const auto& saveable) {
    torch::serialize::OutputArchive sub;
    saveable.save(sub);
    archive.write(key, sub);
  };
  put("policy", *policy);
  put("q1", *q1);
  put("q2", *q2);
  put("q1_target", *q1_target);
  put("q2_target", *q2_target);
  put("policy_opt", *policy_opt_);
  put("q_opt", *q_opt_);
  put("alpha_opt", *alpha_opt_);
  archive.write("log_alpha", log_alpha_.detach());
  archive.write("generator", const_cast<at::Generator&>(gen_).get_state());
  archive.write("dims", torch::tensor({obs_dim_, act_dim_}, torch::kInt64));
}

void Sac::load(torch::serialize::InputArchive& archive) {
  torch::Tensor dims;
  archive.read("dims", dims);
  if (dims[0].item<int64_t>() != obs_dim_ || dims[1].item<int64_t>() != act_dim_) {
    throw std::invalid_argument("SAC checkpoint of other dimensions");
  }
  auto get = [&archive](const std::string& key, auto& loadable) {
    torch::serialize::InputArchive sub;
    archive.read(key, sub);
    loadable.load(sub);
  };
  get("policy", *policy);
  get("q1", *q1);
  get("q2", *q2);
  get("q1_target", *q1_target);
  get("q2_target", *q2_target);
  get("policy_opt", *policy_opt_);
  get("q_opt", *q_opt_);
  get("alpha_opt", *alpha_opt_);
  torch::Tensor la, state;
  archive.read("log_alpha", la);
  {
    torch::NoGradGuard no_grad;
    log_alpha_.copy_(la);
  }
  archive.read("generator", state);
  gen_.set_state(state.to(torch::kCPU));  // a CPU generator, wherever the archive was mapped
}

}  // namespace minrnn::rl
