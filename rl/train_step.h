// One optimizer step of an agent that reads nothing back from the device, so that on CUDA it is
// captured once as a CUDA graph and replayed: a step then costs one copy of its inputs and one
// graph launch instead of hundreds of kernel launches and a host sync (docs/benchmarks.md).
//
// The step: masked MSE of the predicted actions, the backward, the global gradient norm and its
// clip, AdamW at DT's warm-up learning rate. Its host values — the batch, the AdamW update of this
// step (learning rate, bias corrections) and the base of its dropout seeds (ops/dropout.h) — are
// copied into buffers that stay at one address on the device; the loss, the norm, the clip's scale
// and whether the step is finite are computed there. The same operations run eagerly on the CPU,
// for the first steps on CUDA (warm-up: allocations and lazy initialisation happen outside the
// capture) and wherever capture fails (said once, with the reason).
//
// A step whose loss or gradient norm is not finite changes no weight, and neither does any step
// after it: failure() names it, and the weights stay those of the last finite step.
#pragma once
#include <torch/torch.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ops/cuda_graph.h"
#include "ops/fused_adamw.h"
#include "rl/agent.h"
#include "rl/progress_log.h"

namespace minrnn::data {
struct SequenceBatch;
}

namespace minrnn::rl {

// DT's loss: the mean squared error of the predicted actions (B,K,act) over the steps whose mask
// (B,K) is 1, the padding left out. A pack's stacked runs (ops/run_axis.h): each run's own,
// (runs).
torch::Tensor masked_action_loss(const torch::Tensor& predicted, const torch::Tensor& actions,
                                 const torch::Tensor& mask, int64_t runs = 1);

// How the steps run on a device: captured in a CUDA graph (CUDA only), or eagerly.
enum class StepMode { kGraph, kEager };

class TrainStep {
 public:
  // For `agent` (its model on `device`) and its optimizer, which must outlive this; `mode`
  // kGraph where the device is not CUDA runs eagerly. On CUDA it sets LibTorch's matmul precision,
  // process-wide, to the agent's config's (core::set_cuda_matmul_precision).
  TrainStep(Agent& agent, core::FusedAdamW& optimizer, const torch::Device& device, StepMode mode);
  // The step of a pack's runs stacked as one model (ops/run_axis.h; rl/stacked_pack.h): agent.model
  // stacked over the runs, `optimizer` over its stacked parameters, agent.config the batch and
  // context every run shares; `runs` the runs' own configs (their return scales; one grad_clip).
  TrainStep(Agent& agent, core::FusedAdamW& optimizer, const torch::Device& device, StepMode mode,
            const std::vector<const TrainConfig*>& runs);
  ~TrainStep();
  TrainStep(const TrainStep&) = delete;
  TrainStep& operator=(const TrainStep&) = delete;

  // Whether the step queues its weight gradients on a side stream beside its backward
  // (ops/side_work.h; on CUDA): core::side_work_on() until set, before the first step (a captured
  // graph keeps what it was captured with).
  void set_side_work(bool on);
  bool side_work() const;

  // Queues step agent.step + 1 on `batch` at learning rate `lr`, its dropout masks from
  // `dropout_base`; agent.step counts it.
  void run(const data::SequenceBatch& batch, double lr, uint64_t dropout_base);
  // What one of a pack's runs brings to a step.
  struct RunInputs {
    const data::SequenceBatch* batch;
    int64_t step;  // the run's number for it (its first: 1)
    uint64_t dropout_base;
    double lr;
    core::AdamWUpdate update;  // the run's AdamW update at this step and learning rate
  };
  // Queues one step of each of a pack's runs, in the order of the runs. Counts nothing: the pack
  // counts each run's steps.
  void run_pack(const std::vector<RunInputs>& runs);
  // The last step's loss and gradient norm of a run (a pack's: its index; a sync on CUDA).
  StepStats last_stats(int64_t run = 0);
  // "" while every step of the run was finite, else which step was not and why (a sync on CUDA).
  std::string failure(int64_t run = 0);
  // What runs: "cuda graph", "eager", or "eager (capture failed: …)".
  const std::string& description() const;
  // What a replay launches (zeros while the step runs eagerly).
  core::CapturedNodes graph_nodes() const;

 private:
  struct State;
  std::unique_ptr<State> s_;
};

}  // namespace minrnn::rl
