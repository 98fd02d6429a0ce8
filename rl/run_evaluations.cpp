#include "rl/run_evaluations.h"

#include <chrono>
#include <memory>

#include "rl/progress_log.h"

namespace minrnn::rl {

RunEvaluations::RunEvaluations(Evaluate evaluate, bool overlapped, ProgressLog& log)
    : evaluate_(std::move(evaluate)), overlapped_(overlapped), log_(log) {}

RunEvaluations::~RunEvaluations() {
  if (in_flight_ && in_flight_->result.valid()) in_flight_->result.wait();
}

void RunEvaluations::start(Agent& agent) {
  agent.model->eval();
  if (!evaluate_) return;
  if (!overlapped_) {
    const auto start = std::chrono::steady_clock::now();
    try {
      evaluate_(agent.step, agent);
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
  in_flight_ = InFlight{agent.step, std::async(std::launch::async, [evaluate = evaluate_, copy] {
                          evaluate(copy->step, *copy);
                        })};
}

void RunEvaluations::wait() {
  if (!in_flight_) return;
  in_flight_->result.wait();
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
