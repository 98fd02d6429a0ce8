#include "ops/step_end.h"

#include <stdexcept>

#include "kernels/math/adamw_math.h"
#ifdef MINRNN_WITH_CUDA
#include "ops/pointwise_cuda.h"
#endif

namespace minrnn::core {

namespace {

// ‖all gradients‖₂ as LibTorch's clip_grad_norm_ computes it (each tensor's norm, then theirs).
float global_grad_norm(const std::vector<torch::Tensor>& grads) {
  if (grads.empty()) return 0.0f;
  const std::vector<torch::Tensor> norms = torch::_foreach_norm(grads, 2);
  return (norms.size() == 1 ? norms[0] : torch::stack(norms).norm(2)).item<float>();
}

// One run's step end on the CPU: its tensors as end_step's for one run.
void end_run_step(const StepEndTensors& t, double clip) {
  float* scalars = t.scalars.data_ptr<float>();
  int64_t* verdict = t.verdict.data_ptr<int64_t>();
  const float loss = *t.loss.data_ptr<float>();
  const float norm = clip > 0 ? global_grad_norm(t.grads) : 0.0f;
  const StepEnd end = end_of_step(loss, norm, static_cast<float>(clip), scalars[kApplyScalar]);
  scalars[kGradScaleScalar] = end.grad_scale;
  scalars[kApplyScalar] = end.apply;
  if (end.record) {
    verdict[kFirstBadStep] = *t.step.data_ptr<int64_t>();
    verdict[kBadWhat] = end.record;
  }
  *t.loss_kept.data_ptr<float>() = loss;
  *t.norm_kept.data_ptr<float>() = norm;
}

}  // namespace

void end_step(const StepEndTensors& t, double clip) {
  for (const torch::Tensor* x :
       {&t.loss, &t.step, &t.scalars, &t.verdict, &t.loss_kept, &t.norm_kept}) {
    if (!x->is_contiguous() || x->device() != t.loss.device()) {
      throw std::invalid_argument("end_step: every tensor contiguous, on the loss's device");
    }
  }
  for (const torch::Tensor& g : t.grads) {
    if (!g.is_contiguous() || g.device() != t.loss.device() || g.scalar_type() != torch::kFloat) {
      throw std::invalid_argument(
          "end_step: every gradient contiguous float32, on the loss's "
          "device");
    }
  }
  const int64_t runs = t.loss.dim() == 1 ? t.loss.size(0) : 1;  // a pack's: one loss a run
#ifdef MINRNN_WITH_CUDA
  if (t.loss.is_cuda()) {
    end_step_cuda(t, static_cast<float>(clip), runs);
    return;
  }
#endif
  if (t.loss.dim() == 0) {  // one run's
    end_run_step(t, clip);
    return;
  }
  for (int64_t r = 0; r < runs; ++r) {
    StepEndTensors run{t.loss[r],    t.grads,        t.step[r],     t.scalars[r],
                       t.verdict[r], t.loss_kept[r], t.norm_kept[r]};
    for (torch::Tensor& g : run.grads) g = g[r];
    end_run_step(run, clip);
  }
}

}  // namespace minrnn::core
