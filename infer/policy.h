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
// The calls go in this order each step: act, then observe_reward with what the env paid for it
// (act twice without a reward between conditions the second step on an unchanged return-to-go).
// Past the run's max_ep_len the timestep embedding stays at its last row.
//
// Threads: a Policy is not thread-safe; use one per thread (each holds its own state and scratch:
// they share nothing, and give the same actions as one Policy would). load() may run on several
// threads at once. PolicyOptions::threads is the policy's own for the packed engine, process-wide
// for the torch engine.
//
// Errors: std::invalid_argument for what the caller passed (a path that is not there, a run dir
// without checkpoint.pt, a device that is not here, a size, a value no float holds, a batch out of
// range); std::runtime_error for a checkpoint that cannot be read (corrupt, truncated, of
// another format, unreadable), naming the file; std::logic_error for a Policy used after it was
// moved from (it may only be assigned to or destroyed; its inline size getters, obs_dim() to
// engine(), return what they held, unchecked);
// std::out_of_range for return_to_go(i) past the batch; std::bad_alloc where memory runs out. A
// call refused with one of the first three, and a reset() that runs out of memory, leave the policy
// as it was. load() reads the file once in a forked child
// process first (io/isolated.h), so a corrupt file cannot crash the caller: a process with
// real-time threads or a seccomp filter should load its policies before those start.
//
// Two engines compute the same function (tests/infer/policy_test.cpp holds them to 1e-5):
//   packed the packed CPU inference path (infer/packed_backbone.h): no autograd, no allocation per
//          step, one pass over the weights per env step. The default on CPU.
//   torch  the LibTorch modules' own step / forward: any device (the default off CPU), and the
//          reference the packed engine is tested against. `fast`, the packed engine's
//          name until 2026-11-27, is still read as `packed`.
#pragma once
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

// No LibTorch header here (nor below): a program around a policy compiles in a second and is
// insulated from torch's headers; it links the libraries (minrnn::infer, README).
namespace minrnn::rl {

struct Agent;            // rl/agent.h: the trained run (its model, config, normalization)
class PolicyEngineImpl;  // infer/policy_engine.h: the packed and the torch engine

// How the history reaches the model.
enum class EvalMode {
  kAuto,       // the project default for the backbone: kRecurrentDefault, or window (Transformer)
  kStreaming,  // recurrent backbones only: O(1) per step, state carried from the episode start
  kWindow,     // re-encode the last K (= config context_len) steps from a zero state, as DT does
};
// What kAuto means for recurrent (streaming-capable) backbones. Chosen by measurement:
// docs/agent.md, "Streaming vs sliding-window evaluation".
inline constexpr EvalMode kRecurrentDefault = EvalMode::kStreaming;
// What kAuto is for a backbone: kWindow for "transformer" (attention has no step mode),
// kRecurrentDefault for the recurrent ones. A policy's mode and `sweep --estimate`'s rates both
// follow it.
inline EvalMode default_eval_mode(const std::string& backbone) {
  return backbone == "transformer" ? EvalMode::kWindow : kRecurrentDefault;
}
const char* eval_mode_name(EvalMode mode);          // "auto" | "streaming" | "window"
EvalMode parse_eval_mode(const std::string& name);  // std::invalid_argument listing the names

enum class PolicyEngine { kAuto, kPacked, kTorch };
const char* policy_engine_name(PolicyEngine engine);        // "auto" | "packed" | "torch"
PolicyEngine parse_policy_engine(const std::string& name);  // std::invalid_argument otherwise

struct PolicyOptions {
  EvalMode mode = EvalMode::kAuto;
  PolicyEngine engine = PolicyEngine::kAuto;  // auto: packed when the model is on the CPU
  // Where load() puts the model: "cpu", "cuda", "cuda:N", or "auto" (the first usable GPU, else
  // the CPU); a CUDA device that is not usable here is refused before the file is read.
  std::string device = "cpu";
  // > 0: the CPU threads the policy's math may use. The packed engine's own, this policy's alone:
  // its larger products (a window's re-encoding; many episodes) split their columns over them
  // (at most the machine's hardware threads), the calling thread's among them, with the same bits
  // as on one; 0 or 1: the calling thread alone. The torch engine's: LibTorch's, set for the whole
  // process when the policy is made; 0 leaves that as it is. A control loop at batch 1 in streaming
  // mode wants 1: its products are too small to split.
  int threads = 0;
  static constexpr int kMaxThreads = 4096;
};

class Policy {
 public:
  // Loads <run_dir>/checkpoint.pt (or a checkpoint file); errors name the file (or the device).
  // The checkpoint holds all the policy needs (the model, its config, the data's normalization,
  // the env): the run dir's config.yaml is not read. A loaded policy is reset: one episode at the
  // run's target return, ready for act().
  static Policy load(const std::string& run_or_checkpoint, const PolicyOptions& options = {});
  explicit Policy(Agent agent, const PolicyOptions& options = {});
  ~Policy();
  Policy(Policy&&) noexcept;
  Policy& operator=(Policy&&) noexcept;

  // Starts `batch` new episodes (at most kMaxBatch), each conditioned on target_return (raw, in
  // the env's reward units; NaN = the run's configured target). Throws std::invalid_argument for
  // a batch out of range or a target whose value divided by the return scale no float holds,
  // leaving the policy unchanged.
  static constexpr int64_t kMaxBatch = int64_t{1} << 20;
  void reset(int64_t batch = 1, double target_return = NAN);
  // One step of every episode: batch × obs_dim raw observations → batch × act_dim actions. Throws
  // std::invalid_argument for a wrong size, a value no float holds (inf, nan, 1e39) or one more
  // than 1e15 of the training data's standard deviations from its mean (the model's arithmetic
  // would overflow into NaN actions), leaving the policy unchanged.
  std::vector<double> act(const std::vector<double>& observations);  // allocates its result
  // The same, into a buffer of the caller's: the buffers' lengths (batch × obs_dim, batch ×
  // act_dim) are the caller's to get right, the values are checked as above. The packed engine
  // allocates nothing here once its buffers have grown.
  void act(const double* observations, double* actions);
  // The rewards (batch values) the env paid for the last actions. Episodes already over pass 0,
  // and go on being stepped with the others: any finite observation will do for them (their
  // last, or zeros; a NaN is refused for the whole batch), and what they act on changes none of
  // the other episodes' actions.
  // Throws std::invalid_argument, changing nothing, for a reward that is not finite or that takes
  // a return-to-go out of float's range.
  void observe_reward(const std::vector<double>& rewards);
  void observe_reward(const double* rewards);
  void observe_reward(double reward);  // batch 1

  int64_t obs_dim() const { return obs_dim_; }
  int64_t act_dim() const { return act_dim_; }
  int64_t batch() const { return batch_; }
  int64_t timestep() const { return t_; }  // the step the next act() is for
  // The current return-to-go of episode i, raw (target − rewards observed).
  double return_to_go(int64_t i = 0) const;
  // The environment the run was trained for, as envs::make_env takes it ("hopper", "hopper-v5",
  // or a Gymnasium env_spec), and an episode's return as a D4RL normalized score (0 random, 100
  // expert, by the run's reference scores).
  const std::string& env() const;
  double normalized(double episode_return) const;
  // The run's facts a control loop may want, without rl/agent.h (and so without LibTorch's
  // headers): its backbone ("mingru", "minlstm", "hgrn", "transformer"), the window a step sees in
  // window mode (config context_len), the step its checkpoint was saved at, and the target return
  // reset() conditions on by default (raw).
  const std::string& backbone() const;
  int64_t context_len() const;
  int64_t train_step() const;
  double target_return() const;
  EvalMode mode() const { return mode_; }               // never kAuto
  PolicyEngine engine() const { return engine_kind_; }  // never kAuto
  // Include rl/agent.h (and link minrnn::rl, which brings LibTorch's headers) to read it.
  const Agent& agent() const;

 private:
  void check_usable(const char* call) const;  // std::logic_error once moved from

  std::unique_ptr<Agent> agent_;
  EvalMode mode_ = EvalMode::kAuto;
  PolicyEngine engine_kind_ = PolicyEngine::kAuto;
  std::unique_ptr<PolicyEngineImpl> engine_;
  int64_t obs_dim_ = 0, act_dim_ = 0, batch_ = 0, t_ = 0;
  double return_scale_ = 1.0;
  std::vector<float> mean_, std_, rtg_, obs_, actions_;
};

}  // namespace minrnn::rl
