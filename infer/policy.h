// A trained decision agent as a controller for your own loop: load a run once, then per env step
//
//   minrnn::rl::Policy policy = minrnn::rl::Policy::load("runs/hopper-medium-mingru-s0");
//   policy.reset();                                    // a new episode, the run's target return
//   while (!done) {
//     std::vector<double> action = policy.act(obs);    // raw observation in, action in [-1, 1]
//     ... step the env with `action`, get obs, reward, done ...
//     policy.observe_reward(reward);                   // lowers the return-to-go
//   }
//
// The policy carries everything Decision-Transformer conditioning needs: the return-to-go (the
// target, minus the rewards observed, over the return scale), the timestep, the state
// normalization of the training data, its own previous action, and the recurrent state (or the
// last K steps for a window). `reset(batch)` runs several episodes in lock step: act then takes
// batch × obs_dim values, row-major.
//
// Two engines compute the same function (tests/infer/policy_test.cpp holds them to 1e-5):
//   packed the packed CPU inference path (infer/packed_backbone.h): no autograd, no allocation per
//          step, one pass over the weights per env step. The default on CPU.
//   torch  the LibTorch modules' own step / forward: any device (the default off CPU), and the
//          reference the packed engine is tested against. `fast`, the packed engine's
//          name until 2026-11-27, is still read as `packed`.
#pragma once
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "rl/agent.h"

namespace minrnn::rl {

// How the history reaches the model.
enum class EvalMode {
  kAuto,       // the project default for the backbone: kRecurrentDefault, or window (Transformer)
  kStreaming,  // recurrent backbones only: O(1) per step, state carried from the episode start
  kWindow,     // re-encode the last K (= config context_len) steps from a zero state, as DT does
};
// What kAuto means for recurrent (streaming-capable) backbones. Chosen by measurement:
// docs/agent.md, "Streaming vs sliding-window evaluation".
inline constexpr EvalMode kRecurrentDefault = EvalMode::kStreaming;
const char* eval_mode_name(EvalMode mode);          // "auto" | "streaming" | "window"
EvalMode parse_eval_mode(const std::string& name);  // std::invalid_argument listing the names
// The concrete mode (never kAuto) for `agent`; std::invalid_argument for streaming on a backbone
// without a step mode.
EvalMode resolve_eval_mode(EvalMode requested, const Agent& agent);

enum class PolicyEngine { kAuto, kPacked, kTorch };
const char* policy_engine_name(PolicyEngine engine);        // "auto" | "packed" | "torch"
PolicyEngine parse_policy_engine(const std::string& name);  // std::invalid_argument otherwise

struct PolicyOptions {
  EvalMode mode = EvalMode::kAuto;
  PolicyEngine engine = PolicyEngine::kAuto;  // auto: fast when the model is on the CPU
  torch::Device device = torch::kCPU;         // where load() puts the model
};

// The engine interface (infer/policy.cpp: torch; infer/packed_policy.cpp: packed). Inputs are
// already conditioned: scaled returns-to-go (B), normalized observations (B, obs_dim); all B
// episodes are at timestep t. Writes actions (B, act_dim). The engine remembers its own actions as
// the next step's action tokens.
class PolicyEngineImpl {
 public:
  virtual ~PolicyEngineImpl() = default;
  virtual void reset(int64_t batch) = 0;
  virtual void act(const float* rtg, const float* obs, int64_t t, float* actions) = 0;
};

class Policy {
 public:
  // Loads <run_dir>/checkpoint.pt (or a checkpoint file); errors name the file.
  static Policy load(const std::string& run_or_checkpoint, const PolicyOptions& options = {});
  explicit Policy(Agent agent, const PolicyOptions& options = {});
  ~Policy();
  Policy(Policy&&) noexcept;
  Policy& operator=(Policy&&) noexcept;

  // Starts `batch` new episodes, each conditioned on target_return (raw, in the env's reward
  // units; NaN = the run's configured target).
  void reset(int64_t batch = 1, double target_return = NAN);
  // One step of every episode: batch × obs_dim raw observations → batch × act_dim actions. Throws
  // std::invalid_argument for a wrong size or a non-finite value, leaving the policy unchanged.
  std::vector<double> act(const std::vector<double>& observations);
  void act(const double* observations, double* actions);  // sizes as above, unchecked
  // The rewards (batch values) the env paid for the last actions. Episodes already over pass 0.
  void observe_reward(const std::vector<double>& rewards);
  void observe_reward(const double* rewards);
  void observe_reward(double reward);  // batch 1

  int64_t obs_dim() const { return obs_dim_; }
  int64_t act_dim() const { return act_dim_; }
  int64_t batch() const { return batch_; }
  int64_t timestep() const { return t_; }  // the step the next act() is for
  // The current return-to-go of episode i, raw (target − rewards observed).
  double return_to_go(int64_t i = 0) const;
  EvalMode mode() const { return mode_; }               // never kAuto
  PolicyEngine engine() const { return engine_kind_; }  // never kAuto
  const Agent& agent() const { return agent_; }

 private:
  void check_finite(const double* values, int64_t count, const char* what) const;

  Agent agent_;
  EvalMode mode_ = EvalMode::kAuto;
  PolicyEngine engine_kind_ = PolicyEngine::kAuto;
  std::unique_ptr<PolicyEngineImpl> engine_;
  int64_t obs_dim_ = 0, act_dim_ = 0, batch_ = 0, t_ = 0;
  std::vector<float> mean_, std_, rtg_, obs_, actions_;
};

// The engines behind Policy, for tests and benchmarks that need one directly.
std::unique_ptr<PolicyEngineImpl> make_torch_engine(const Agent& agent, EvalMode mode);
std::unique_ptr<PolicyEngineImpl> make_packed_engine(const Agent& agent, EvalMode mode);

}  // namespace minrnn::rl
