// A tanh head's CUDA kernels: the phase programs of tanh_head_programs.h under
// kernels/cuda/launch.cuh's phase loop.
#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/tanh_head.h"
#include "kernels/cuda/tanh_head_programs.h"

namespace minrnn::core::kernels {

using grid::DeviceMemory;

int64_t tanh_head_max_outputs() {
  return grid::kMaxHeadOutputs;
}
int64_t tanh_head_max_width() {
  return grid::RowGrid::kMaxWidth;
}
int64_t tanh_head_max_terms() {
  return grid::kMaxHeadTerms;
}
int64_t tanh_head_block_rows() {
  return grid::RowGrid::kWarps;
}
int64_t tanh_head_partial_rows(int64_t rows) {
  return grid::RowGrid{rows, 0}.blocks();
}

// Rows of up to 128 channels (DT's) take the programs' 4-channels-a-lane form, rows of exactly
// 128 (or 256) its full form.
cudaError_t tanh_head_forward(const TanhHeadArgs& a, float* y, cudaStream_t stream) {
  return grid::with_row_form<4>(a.width, [&](auto lanes, auto full) {
    const grid::TanhHeadForward<DeviceMemory, decltype(lanes)::value, decltype(full)::value> k{
        {a.rows, a.width}, a.outputs, a.x, a.weight, a.bias, y, {a.rows_per_run}};
    return launch(k, stream);
  });
}

cudaError_t tanh_head_backward(const TanhHeadArgs& a, const float* y, const float* y_grad,
                               float* x_grad, float* partials, cudaStream_t stream) {
  return grid::with_row_form<4>(a.width, [&](auto lanes, auto full) {
    const grid::TanhHeadBackward<DeviceMemory, decltype(lanes)::value, decltype(full)::value> k{
        {a.rows, a.width}, a.outputs, a.x, a.weight, y, y_grad, x_grad, partials, {a.rows_per_run}};
    return launch(k, stream);
  });
}

}  // namespace minrnn::core::kernels
