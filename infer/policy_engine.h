// What computes a Policy's actions (infer/policy.h), behind its torch-free interface: the engine
// interface, its two engines, and the evaluation mode a run resolves to. For Policy itself, and for
// tests and benchmarks that need an engine directly.
#pragma once
#include <cstdint>
#include <memory>

#include "infer/policy.h"
#include "rl/agent.h"

namespace minrnn::rl {

// The concrete mode (never kAuto) for `agent`; std::invalid_argument for streaming on a backbone
// without a step mode.
EvalMode resolve_eval_mode(EvalMode requested, const Agent& agent);
// The concrete engine (never kAuto): auto is packed where the model is on the CPU, else torch.
PolicyEngine resolve_policy_engine(PolicyEngine requested, const Agent& agent);

// The engine interface (infer/policy.cpp: torch; infer/packed_policy.cpp: packed). Inputs are
// already conditioned: scaled returns-to-go (B), normalized observations (B, obs_dim); all B
// episodes are at timestep t. Writes actions (B, act_dim). The engine remembers its own actions as
// the next step's action tokens.
class PolicyEngineImpl {
 public:
  virtual ~PolicyEngineImpl() = default;
  virtual void reset(int64_t batch) = 0;  // all or none: a failed allocation changes nothing
  virtual void act(const float* rtg, const float* obs, int64_t t, float* actions) = 0;
};

std::unique_ptr<PolicyEngineImpl> make_torch_engine(const Agent& agent, EvalMode mode);
// threads: those its products split over (kernels/cpu/workers.h), the calling thread's among
// them; 1 = the calling thread alone.
std::unique_ptr<PolicyEngineImpl> make_packed_engine(const Agent& agent, EvalMode mode,
                                                     int threads);

}  // namespace minrnn::rl
