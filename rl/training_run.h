// One run in training: its directory taken over, its data, agent and optimizer, its logs, stepped
// one optimizer step at a time. rl::train drives one to its end; rl::train_pack drives several in
// turn (rl/trainer.h), so a pack trains each run exactly as it would be trained alone.
#pragma once
#include <torch/torch.h>

#include <memory>
#include <string>

#include "rl/trainer.h"

namespace minrnn::data {
struct Dataset;
}

namespace minrnn::rl {

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
  // (the last checkpoint stays intact).
  void step();
  // The final evaluation and done.json when the run reached max_steps here; what it did.
  TrainResult finish();

  const TrainConfig& config() const;
  const std::string& run_dir() const;

 private:
  struct State;
  std::unique_ptr<State> s_;
};

}  // namespace minrnn::rl
