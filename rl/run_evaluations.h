// A run's evaluations during training, each of the agent as it is at its step. In line, training
// waits while one runs. Overlapped, one runs on a thread of its own on a CPU copy of the weights
// while training goes on: what a run on a GPU does, whose steps need no more of the CPU than the
// thread that queues them, so a pack's rollouts no longer stall its training (rl::train_pack).
//
// Either way the evaluation appends its row to evals.csv (the callback, rl::append_eval_row) and
// then the run's TensorBoard events get it. A resume redoes an evaluation whose row a kill left
// unwritten only at the checkpoint's own step, so the trainer lets no later checkpoint be written
// while one is in flight (wait()).
//
// While training waits for one (in line, or wait() on one still in flight), the progress line shows
// how far it has got.
#pragma once
#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <optional>

#include "rl/agent.h"
#include "rl/evaluation_progress.h"
#include "rl/stop_request.h"

namespace minrnn::rl {

class ProgressLog;

class RunEvaluations {
 public:
  // `evaluate` may be empty (no evaluations); `log` must outlive this.
  RunEvaluations(Evaluate evaluate, bool overlapped, ProgressLog& log);
  ~RunEvaluations();  // waits for the one in flight, its error dropped
  RunEvaluations(const RunEvaluations&) = delete;
  RunEvaluations& operator=(const RunEvaluations&) = delete;

  bool any() const { return static_cast<bool>(evaluate_); }
  bool overlapped() const { return overlapped_; }
  // Evaluates `agent` (its model in eval() after this) at agent.step: in line, or on its own
  // thread once the one before has finished.
  void start(Agent& agent);
  // The evaluation in flight, if any, finished; rethrows what it threw.
  void wait();
  // wait() if the one in flight has finished already; never blocks.
  void collect_finished();
  // The step of the first evaluation a stop request cut short (rl::StopRequested), or -1. Its row
  // is not written: the resume redoes it, if no checkpoint after its step was written.
  int64_t stopped_at() const { return stopped_at_; }

 private:
  // Shows the progress of the evaluation at `step` until `result` is ready.
  void show_until_ready(const std::future<void>& result, int64_t step,
                        const EvaluationProgress& progress);
  void done(int64_t step, std::future<void>& result);
  void stopped(int64_t step);

  Evaluate evaluate_;
  bool overlapped_;
  ProgressLog& log_;
  struct InFlight {
    int64_t step = 0;
    std::future<void> result;
    std::shared_ptr<EvaluationProgress> progress;
  };
  std::optional<InFlight> in_flight_;
  int64_t stopped_at_ = -1;
};

}  // namespace minrnn::rl
