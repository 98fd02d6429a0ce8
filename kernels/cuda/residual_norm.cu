// A residual join's CUDA kernels: the phase programs of residual_norm_programs.h under
// kernels/cuda/launch.cuh's phase loop. Built with --fmad=false (kernels/CMakeLists.txt): the sum
// rounds as add_dropout's does, to the same bits.
#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/residual_norm.h"
#include "kernels/cuda/residual_norm_programs.h"

namespace minrnn::core::kernels {

using grid::DeviceMemory;

int64_t residual_norm_partial_rows(int64_t rows) {
  return grid::RowGrid{rows, 0}.blocks();
}

int64_t residual_norm_block_rows() {
  return grid::RowGrid::kWarps;
}

namespace {

template <int PerLane, bool FullRows>
cudaError_t forward_of(const ResidualNormArgs& a, cudaStream_t stream) {
  const grid::ResidualNormForward<DeviceMemory, PerLane, FullRows> k{{a.rows, a.width},
                                                                     a.dropout,
                                                                     a.seed_base,
                                                                     a.eps,
                                                                     a.x_rows,
                                                                     a.y_rows,
                                                                     a.x != nullptr,
                                                                     a.x,
                                                                     a.y,
                                                                     a.gamma,
                                                                     a.beta,
                                                                     a.sum,
                                                                     a.normed,
                                                                     a.moments,
                                                                     {a.rows_per_run}};
  return launch(k, stream);
}

template <int PerLane, bool FullRows>
cudaError_t backward_of(const ResidualNormGradArgs& a, cudaStream_t stream) {
  const int64_t partials = residual_norm_partial_rows(a.rows);
  const grid::ResidualNormBackward<DeviceMemory, PerLane, FullRows> rows{
      {a.rows, a.width},
      a.dropout,
      a.seed_base,
      a.x_rows,
      a.y_rows,
      a.sum,
      a.moments,
      a.gamma,
      a.sum_grad,
      a.normed_grad,
      a.sum_grad != nullptr,
      a.x_grad != nullptr,
      a.x_grad,
      a.y_grad,
      a.partials,
      a.partials + partials * a.width,
      {a.rows_per_run}};
  return launch(rows, stream);
}

}  // namespace

// Rows of up to 128 channels (DT's) take the programs' 4-channels-a-lane form, rows of exactly
// 128 (or 256) its full form.
cudaError_t residual_norm_forward(const ResidualNormArgs& a, cudaStream_t stream) {
  return grid::with_row_form<4>(a.width, [&](auto lanes, auto full) {
    return forward_of<decltype(lanes)::value, decltype(full)::value>(a, stream);
  });
}

cudaError_t residual_norm_backward(const ResidualNormGradArgs& a, cudaStream_t stream) {
  return grid::with_row_form<4>(a.width, [&](auto lanes, auto full) {
    return backward_of<decltype(lanes)::value, decltype(full)::value>(a, stream);
  });
}

cudaError_t norm_param_grads(const ResidualNormGradArgs& a, cudaStream_t stream) {
  const int64_t partials = residual_norm_partial_rows(a.rows);
  const grid::NormParamGrads<DeviceMemory> params{{},
                                                  partials,
                                                  a.width,
                                                  a.partials,
                                                  a.partials + partials * a.width,
                                                  a.gamma_grad,
                                                  a.beta_grad,
                                                  a.rows_per_run > 0 ? a.rows / a.rows_per_run : 1};
  return launch(params, stream);
}

}  // namespace minrnn::core::kernels
