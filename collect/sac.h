// Soft Actor-Critic (Haarnoja et al. 2018, with automatic entropy tuning), as D4RL used it to make
// its behaviour policies: twin Q-networks with Polyak-averaged targets, a tanh-Gaussian policy
// whose layers carry D4RL's names (fc0, fc1, last_fc, last_fc_log_std), entropy target −act_dim.
//
//   rl::Sac sac(obs_dim, act_dim, rl::SacConfig{});
//   rl::SacLosses l = sac.update(batch);          // one gradient step on every network
//   rl::SacTrainResult r = rl::train_sac("hopper", options);   // the online loop, resumable
#pragma once
#include <torch/torch.h>
#include <cmath>

#include <cstdint>
#include <functional>
#include <string>

#include "collect/collect.h"
#include "collect/replay_buffer.h"
#include "datasets/d4rl.h"

namespace minrnn::rl {

struct SacConfig {
  int hidden = 256;
  double gamma = 0.99;
  double tau = 0.005;  // Polyak factor of the target Q-networks
  double lr = 3e-4;    // policy, Q and temperature (Adam)
  int64_t batch_size = 256;
  uint64_t seed = 0;
  torch::Device device = torch::kCPU;
};

// D4RL's policy: obs -> relu(fc0) -> relu(fc1) -> last_fc (mean), last_fc_log_std (clamped).
struct TanhGaussianPolicyImpl : torch::nn::Module {
  TanhGaussianPolicyImpl(int obs_dim, int act_dim, int hidden);
  // (mean, log_std) of the pre-tanh Gaussian; log_std clamped to [−20, 2].
  std::pair<torch::Tensor, torch::Tensor> forward(const torch::Tensor& obs);
  torch::nn::Linear fc0{nullptr}, fc1{nullptr}, last_fc{nullptr}, last_fc_log_std{nullptr};
};
TORCH_MODULE(TanhGaussianPolicy);

// log π(tanh(u)) for a pre-tanh sample u ~ N(mean, exp(log_std)): the Gaussian log-density summed
// over the last dimension minus Σ log(1 − tanh(u)²), the latter as 2(log 2 − u − softplus(−2u)),
// which stays finite where tanh(u) rounds to ±1.
torch::Tensor tanh_gaussian_log_prob(const torch::Tensor& u, const torch::Tensor& mean,
                                     const torch::Tensor& log_std);

// Q(s, a): MLP over the concatenation, hidden-hidden relu, scalar output.
struct QNetworkImpl : torch::nn::Module {
  QNetworkImpl(int obs_dim, int act_dim, int hidden);
  torch::Tensor forward(const torch::Tensor& obs, const torch::Tensor& act);
  torch::nn::Linear fc0{nullptr}, fc1{nullptr}, last_fc{nullptr};
};
TORCH_MODULE(QNetwork);

// target <- tau * source + (1 − tau) * target, parameter by parameter (no gradient).
void polyak_update(torch::nn::Module& target, const torch::nn::Module& source, double tau);

struct SacBatch {
  torch::Tensor obs, actions, rewards, next_obs, dones;  // dones: 1 on a terminal (not a timeout)
};
// Rows `indices` of the buffer as tensors on `device`.
SacBatch make_batch(const ReplayBuffer& buffer, const std::vector<int64_t>& indices,
                    torch::Device device);

struct SacLosses {
  double q_loss = 0, policy_loss = 0, alpha_loss = 0, alpha = 0, entropy = 0;
};

class Sac {
 public:
  Sac(int obs_dim, int act_dim, const SacConfig& config);

  // One gradient step of Q, policy and temperature, then the Polyak update of the targets.
  SacLosses update(const SacBatch& batch);
  // One Adam step on log α with loss −log α · mean(log π + target_entropy), given detached
  // log-probs of fresh policy samples. Returns the loss.
  double update_temperature(const torch::Tensor& log_probs);

  // Samples a ~ π(·|obs) (deterministic = tanh(mean)) for one observation, with the agent's own
  // generator or `generator` when given (evaluation: it must not move the training's stream);
  // *log_prob gets log π(a|obs) (of the stochastic sample).
  std::vector<double> act(const std::vector<double>& obs, bool deterministic,
                          double* log_prob = nullptr, at::Generator* generator = nullptr);

  // metadata/policy/<layer>/{weight,bias}, nonlinearity, output_distribution, algorithm,
  // iteration, as D4RL's files carry them.
  void write_policy_metadata(data::D4rlMetadata& metadata, int64_t iteration) const;
  // Loads policy weights from metadata written by write_policy_metadata (or by D4RL); throws
  // std::invalid_argument naming the missing or misshapen entry.
  void load_policy_metadata(const data::D4rlMetadata& metadata);

  void save(torch::serialize::OutputArchive& archive) const;
  void load(torch::serialize::InputArchive& archive);

  const SacConfig& config() const { return config_; }
  int obs_dim() const { return obs_dim_; }
  int act_dim() const { return act_dim_; }
  double alpha() const { return log_alpha_.exp().item<double>(); }
  double target_entropy() const { return -static_cast<double>(act_dim_); }

  TanhGaussianPolicy policy{nullptr};
  QNetwork q1{nullptr}, q2{nullptr}, q1_target{nullptr}, q2_target{nullptr};
  torch::Tensor log_alpha_;

 private:
  // From `generator` (gen_ when null), on the config's device.
  torch::Tensor randn(at::IntArrayRef shape, at::Generator* generator = nullptr);

  SacConfig config_;
  int obs_dim_, act_dim_;
  at::Generator gen_;
  std::unique_ptr<torch::optim::Adam> policy_opt_, q_opt_, alpha_opt_;
};

// A stochastic (as D4RL sampled) or deterministic behaviour policy backed by the agent; its noise
// from `generator` where given (a CPU generator the caller keeps alive), else the agent's own.
BehaviourPolicy sac_behaviour_policy(Sac& sac, bool deterministic,
                                     at::Generator* generator = nullptr);

// ---- The online loop ----

struct SacTrainOptions {
  int64_t total_steps = 1000000;  // environment steps (one gradient step each after start_steps)
  int64_t start_steps = 5000;     // uniform random actions before this step, and no updates
  // Evaluations measure the stochastic policy, the one collection samples data from: tanh(mean)
  // scores far higher early in training (hopper at 35k steps: 44.9 vs 17.4), and a stop judged on
  // it made "medium" data at 23 normalized instead of 33.
  int64_t eval_every = 5000;  // evaluate every N steps, once learning has begun (an evaluation
                              // of the untrained policy could meet a low target)
  int eval_episodes = 10;
  // Stop as soon as an evaluation reaches this normalized score (medium; it may be negative);
  // NaN: never.
  double stop_at_normalized = NAN;
  std::string work_dir;  // checkpoint <work_dir>/sac.pt (policy, Q, optimizers, buffer)
  int64_t checkpoint_every = 10000;
  int64_t progress_every =
      1000;  // progress looked at every N steps, shown once a period (0: quiet)
};

struct SacTrainResult {
  int64_t steps = 0;            // env steps in the buffer
  int64_t eval_step = -1;       // step of the last evaluation in this call (-1: none ran)
  double eval_return = 0;       // last evaluation's mean return
  double eval_normalized = 0;   // and its D4RL normalized score
  bool reached_target = false;  // stopped on stop_at_normalized
  bool resumed = false;         // continued from <work_dir>/sac.pt
  std::string checkpoint;       // where the final state is (empty without work_dir)
  // Stopped on a stop signal (rl/stop_request.h) after the step in progress; the checkpoint is
  // written, and a rerun resumes from it as from any checkpoint.
  bool interrupted = false;
};

// Trains (or resumes, when <work_dir>/sac.pt exists) until total_steps, the target, or a stop
// request (rl/stop_request.h), and checkpoints at the end. `sac` and `buffer` are filled/updated in
// place.
SacTrainResult train_sac(const std::string& env_name, Sac& sac, ReplayBuffer& buffer,
                         const SacTrainOptions& options);

// Mean undiscounted return of the policy over `episodes` episodes seeded seed, seed+1, ...
double evaluate_policy(const std::string& env_name, Sac& sac, int episodes, uint64_t seed,
                       bool deterministic = true);

// Checkpoint of agent + buffer + step counter, written to path.tmp and renamed.
void save_sac_checkpoint(const std::string& path, const Sac& sac, const ReplayBuffer& buffer,
                         int64_t episodes);
// Returns false when `path` does not exist; throws when it is unreadable or of other dimensions.
bool load_sac_checkpoint(const std::string& path, Sac& sac, ReplayBuffer& buffer,
                         int64_t* episodes);

}  // namespace minrnn::rl
