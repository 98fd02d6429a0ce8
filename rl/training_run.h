// One run in training: its directory taken over, its data, agent and optimizer, its logs, stepped
// one optimizer step at a time. rl::train drives one to its end; rl::train_pack drives several in
// turn (rl/trainer.h), so a pack trains each run exactly as it would be trained alone.
#pragma once
#include <torch/torch.h>

#include <memory>
#include <optional>
#include <string>

#include "rl/trainer.h"

namespace minrnn::data {
struct Dataset;
struct SequenceBatch;
}  // namespace minrnn::data
namespace minrnn::core {
class FusedAdamW;
}

namespace minrnn::rl {

class StackedPack;

// The dataset as training reads it (no infos, metadata or next observations), to share between
// the runs of a pack.
std::shared_ptr<const data::Dataset> load_training_data(const std::string& dataset);

class TrainingRun {
 public:
  // Takes over options.run_dir (rl/run_dir.h: refused, naming why, when it holds another run) once
  // `data` (the loaded dataset; nullptr: load config.dataset), its environment and the model are
  // known to load, and resumes the run's checkpoint. An evaluation a kill left undone runs first.
  TrainingRun(const TrainConfig& config, const TrainOptions& options,
              std::shared_ptr<const data::Dataset> data = nullptr);
  ~TrainingRun();
  TrainingRun(const TrainingRun&) = delete;
  TrainingRun& operator=(const TrainingRun&) = delete;

  // Nothing left to step: max_steps reached, a stop signal or options.stop_after taken.
  bool stepped_out() const;
  // One optimizer step with its logging, checkpoint and evaluation at their cadence; on a stop
  // signal, instead, the checkpoint of the last step. Throws on a non-finite loss or gradient
  // (the last checkpoint stays intact). prepare_step, the step itself, complete_step.
  void step();

  // A step in two halves around a stacked pack's step (rl/stacked_pack.h). The first: on a stop
  // signal the checkpoint of the last step and nothing to step; else the next step's inputs.
  struct StepInputs {
    const data::SequenceBatch* batch;  // the run's, until the next prepare_step
    double lr;
    uint64_t dropout_base;
  };
  std::optional<StepInputs> prepare_step();
  // The second, once the step ran: its logging, checkpoint and evaluation at their cadence.
  void complete_step();
  // The run's steps are a stacked pack's, as its run `seat`, until leave_pack: the pack's verdict
  // and statistics are the run's, and its weights are written back into the run before they are
  // saved or evaluated. The run's agent and optimizer are what the pack takes in.
  void join_pack(StackedPack& pack, int64_t seat);
  void leave_pack();  // the run's weights written back; its own steps from then on
  Agent& agent();
  core::FusedAdamW& optimizer();
  // The final evaluation and done.json when the run reached max_steps here; what it did.
  TrainResult finish();
  // The run failed (a step or its bookkeeping threw): TensorBoard's HParams session says so.
  void failed();

  const TrainConfig& config() const;
  const std::string& run_dir() const;

 private:
  // Called inside a catch of `e`: rethrows it, or for an allocation that failed, an error naming
  // the keys that size the batch.
  [[noreturn]] void throw_with_batch_shape(const std::exception& e) const;

  struct State;
  std::unique_ptr<State> s_;
};

}  // namespace minrnn::rl
