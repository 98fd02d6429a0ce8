#include "eval/training_evaluation.h"

#include "eval/rollout.h"
#include "eval/stats.h"
#include "io/progress_line.h"
#include "ops/device.h"
#include "rl/stop_request.h"
#include "rl/trainer.h"

namespace minrnn::eval {

rl::Evaluate evaluate_during_training(const std::string& run_dir) {
  return [run_dir](int64_t step, rl::Agent& agent, rl::EvaluationProgress& progress) {
    RolloutOptions ro;
    ro.episodes = static_cast<int>(agent.config.eval_episodes);
    ro.target_return = agent.config.target_return;
    ro.seed = rl::training_eval_seed(agent.config.seed);
    // On CUDA the evaluation has a thread of its own beside the training (rl/run_evaluations.h),
    // and a pack's runs evaluate at the same steps: one rollout thread each leaves the cores to
    // the others and to the thread that queues the GPU's work.
    if (core::names_cuda(agent.config.device)) ro.threads = 1;
    ro.should_stop = [] { return rl::stop_requested(); };  // Slurm's grace period is short
    ro.on_step = [&progress](int64_t steps, int64_t most, int ended) {
      progress.record(steps, most, ended);
    };
    const RolloutResult r = rollout(agent, ro);
    rl::append_eval_row(run_dir,
                        {step, r.mean_return, r.std_return, r.mean_normalized, r.std_normalized});
    const size_t n = r.returns.size();
    io::ProgressLine::on_stderr().message(
        "eval " + run_dir + " @ step " + std::to_string(step) + ": return " +
        mean_std_text(r.mean_return, r.std_return, n) + ", normalized " +
        mean_std_text(r.mean_normalized, r.std_normalized, n));
  };
}

}  // namespace minrnn::eval
