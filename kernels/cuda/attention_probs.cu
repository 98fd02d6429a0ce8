// Causal attention's probability kernels: the phase programs of attention_probs_programs.h under
// kernels/cuda/launch.cuh's phase loop. Built with --fmad=false (kernels/CMakeLists.txt): the
// dropout's product rounds as fused_dropout's does.
#include "kernels/cuda/attention_probs.h"
#include "kernels/cuda/attention_probs_programs.h"
#include "kernels/cuda/launch.cuh"

namespace minrnn::core::kernels {

using grid::DeviceMemory;

namespace {

template <int PerLane>
cudaError_t forward_of(const AttentionProbsArgs& a, cudaStream_t stream) {
  const grid::AttentionProbsForward<DeviceMemory, PerLane> k{
      {a.rows, a.width}, a.dropout, a.seed_base, a.queries,        a.scale,
      a.scores,          a.probs,   a.out,       {a.rows_per_run}, a.pitch};
  return launch(k, stream);
}

template <int PerLane>
cudaError_t backward_of(const AttentionProbsGradArgs& a, cudaStream_t stream) {
  const grid::AttentionProbsBackward<DeviceMemory, PerLane> k{
      {a.rows, a.width}, a.dropout,     a.seed_base,      a.scale, a.probs,
      a.out_grad,        a.scores_grad, {a.rows_per_run}, a.pitch};
  return launch(k, stream);
}

}  // namespace

// Rows of up to 64 keys (DT's context of 20: 60 tokens) take the programs' 2-keys-a-lane form.
cudaError_t attention_probs_forward(const AttentionProbsArgs& a, cudaStream_t stream) {
  return grid::with_lanes_for<2>(
      a.width, [&](auto lanes) { return forward_of<decltype(lanes)::value>(a, stream); });
}

cudaError_t attention_probs_backward(const AttentionProbsGradArgs& a, cudaStream_t stream) {
  return grid::with_lanes_for<2>(
      a.width, [&](auto lanes) { return backward_of<decltype(lanes)::value>(a, stream); });
}

}  // namespace minrnn::core::kernels
