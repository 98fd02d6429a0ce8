// A pack's runs of one shape trained as one model (ops/run_axis.h; docs/core.md, "A pack as one
// model"): their parameters stacked along a leading axis of P, their batches one after the other,
// one training step (rl/train_step.h, a CUDA graph on CUDA) for all of them, each run with its own
// batch, return scale, learning rate, dropout seeds, loss, gradient norm and clip scale (by the
// grad_clip they share), AdamW update and step count, and a non-finite step stopping its own run
// alone. Each run ends with the weights it gets alone.
//
// The runs' agents and optimizers stay theirs (what checkpoints, evaluations and resumes read):
// the pack takes them in when it is made and gives a run's back with write_back. On CUDA the pack
// works on a stream of its own; the host waits for the device where the runs' tensors change
// hands (its making, write_back), so each run's own stream reads them whole.
#pragma once
#include <torch/torch.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ops/cuda_graph.h"
#include "ops/fused_adamw.h"
#include "rl/agent.h"
#include "rl/train_step.h"

namespace minrnn::data {
struct SequenceBatch;
}

namespace minrnn::rl {

// "" where runs of these configs and models can train as one stacked pack, else why not: the
// first run that differs from the first and in what, or a backbone or option stacking lacks.
std::string why_not_stacked(const std::vector<const Agent*>& runs);
// "" where a model of these options has stacked ops, else why not (its backbone, conv).
std::string stack_refusal(const DecisionModelOptions& model);
// Everything two runs must share to be stacked (their devices aside), as one string: runs whose
// shapes are equal stack where why_not_stacked takes their backbone. For a sweep, which groups
// such runs into one process before it plans them (sweep.h, group_packs).
std::string stack_shape(const DecisionModelOptions& model, const TrainConfig& config);

class StackedPack {
 public:
  // agents[r] and optimizers[r] (FusedAdamW over agents[r]'s parameters, one group): run r's,
  // resumed to wherever it stands (runs may stand at different steps), its model on `device`.
  // Throws with why_not_stacked's reason.
  StackedPack(const std::vector<Agent*>& agents, const std::vector<core::FusedAdamW*>& optimizers,
              const torch::Device& device, StepMode mode);
  ~StackedPack();
  StackedPack(const StackedPack&) = delete;
  StackedPack& operator=(const StackedPack&) = delete;

  int64_t runs() const { return static_cast<int64_t>(agents_.size()); }
  // Queues a step of every run: run r's agents[r]->step + 1 on batches[r] at lrs[r], its dropout
  // masks from dropout_bases[r]. Each agent and optimizer counts it; the weights and moments wait
  // for write_back.
  void run(const std::vector<const data::SequenceBatch*>& batches, const std::vector<double>& lrs,
           const std::vector<uint64_t>& dropout_bases);
  StepStats last_stats(int64_t run);  // a sync on CUDA
  std::string failure(int64_t run);   // "" while every step of the run was finite
  // Run r's weights and AdamW moments copied into its agent and optimizer: before they are saved
  // or evaluated.
  void write_back(int64_t run);
  const std::string& description() const { return step_->description(); }
  // Whether its step queues the weight gradients beside the backward (rl::side_work_for).
  bool side_work() const { return step_->side_work(); }
  core::CapturedNodes graph_nodes() const { return step_->graph_nodes(); }

 private:
  core::WorkStream stream_;
  std::vector<Agent*> agents_;
  std::vector<core::FusedAdamW*> optimizers_;
  Agent stacked_;
  std::unique_ptr<core::FusedAdamW> optimizer_;
  std::unique_ptr<TrainStep> step_;
};

}  // namespace minrnn::rl
