#include "ops/step_end.h"

#include <stdexcept>

#include "kernels/math/adamw_math.h"
#ifdef MINRNN_WITH_CUDA
#include "ops/pointwise_cuda.h"
#endif

namespace minrnn::core {

void end_step(const StepEndTensors& t, double clip) {
  for (const torch::Tensor* x :
       {&t.loss, &t.norm, &t.step, &t.scalars, &t.verdict, &t.loss_kept, &t.norm_kept}) {
    if (!x->is_contiguous() || x->device() != t.loss.device()) {
      throw std::invalid_argument("end_step: every tensor contiguous, on the loss's device");
    }
  }
#ifdef MINRNN_WITH_CUDA
  if (t.loss.is_cuda()) {
    end_step_cuda(t, static_cast<float>(clip));
    return;
  }
#endif
  float* scalars = t.scalars.data_ptr<float>();
  int64_t* verdict = t.verdict.data_ptr<int64_t>();
  const float loss = *t.loss.data_ptr<float>(), norm = *t.norm.data_ptr<float>();
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

}  // namespace minrnn::core
