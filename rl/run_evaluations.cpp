#include "rl/run_evaluations.h"

#include <chrono>
#include <memory>
#include <thread>

#include "io/progress_line.h"
#include "rl/progress_log.h"

namespace minrnn::rl {

RunEvaluations::RunEvaluations(Evaluate evaluate, bool overlapped, ProgressLog& log)
    : evaluate_(std::move(evaluate)), overlapped_(overlapped), log_(log) {}

RunEvaluations::~RunEvaluations() {
  if (in_flight_ && in_flight_->result.valid()) in_flight_->result.wait();
}

namespace {

// A thread that shows an evaluation's progress until the evaluation on the thread that made it
// ends (the scope's end, an exception's included).
class ProgressShower {
 public:
  template <typename Show>
  explicit ProgressShower(Show show) : thread_(std::move(show), ended_.get_future()) {}
  ~ProgressShower() {
    ended_.set_value();
    thread_.join();
  }

 private:
  std::promise<void> ended_;
  std::thread thread_;
};

}  // namespace

void RunEvaluations::show_until_ready(const std::future<void>& result, int64_t step,
                                      const EvaluationProgress& progress) {
  const auto period = io::ProgressLine::on_stderr().period();
  while (result.wait_for(period) != std::future_status::ready)
    log_.evaluating(step, progress.text());
}

void RunEvaluations::start(Agent& agent) {
  agent.model->eval();
  if (!evaluate_) return;
  auto progress =
      std::make_shared<EvaluationProgress>(static_cast<int>(agent.config.eval_episodes));
  if (!overlapped_) {
    const auto start = std::chrono::steady_clock::now();
    try {
      // The evaluation stays on this thread: LibTorch's thread settings are per thread.
      ProgressShower shower([this, step = agent.step, progress](std::future<void> ended) {
        show_until_ready(ended, step, *progress);
      });
      evaluate_(agent.step, agent, *progress);
    } catch (const StopRequested&) {
      stopped(agent.step);
      return;
    }
    log_.evaluated(agent.step,
                   std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    return;
  }
  wait();
  // The copy (in eval() as the agent now is) shares no tensor with the agent, whose weights the
  // next steps change meanwhile.
  auto copy = std::make_shared<Agent>(cpu_copy(agent));
  in_flight_ = InFlight{
      agent.step,
      std::async(std::launch::async, [evaluate = evaluate_, copy,
                                      progress] { evaluate(copy->step, *copy, *progress); }),
      progress};
}

void RunEvaluations::wait() {
  if (!in_flight_) return;
  show_until_ready(in_flight_->result, in_flight_->step, *in_flight_->progress);
  done(in_flight_->step, in_flight_->result);
}

void RunEvaluations::collect_finished() {
  if (!in_flight_) return;
  if (in_flight_->result.wait_for(std::chrono::seconds(0)) != std::future_status::ready) return;
  done(in_flight_->step, in_flight_->result);
}

void RunEvaluations::done(int64_t step, std::future<void>& result) {
  std::future<void> finished = std::move(result);
  in_flight_.reset();
  try {
    finished.get();  // its error, as an evaluation in line would have thrown it
  } catch (const StopRequested&) {
    stopped(step);
    return;
  }
  log_.evaluated(step);
}

void RunEvaluations::stopped(int64_t step) {
  if (stopped_at_ < 0) stopped_at_ = step;
}

}  // namespace minrnn::rl
