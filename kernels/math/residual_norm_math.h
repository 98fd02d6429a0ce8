// A residual block's join (ops/residual_norm.h): sum = x + dropout(y) (or, with no x, dropout(y)),
// then the LayerNorm of each
// row of sum, normed = (sum − mean) · rstd · γ + β; and the backward's per-element formulas.
// Shared by the CPU loops (kernels/cpu/residual_norm.cpp) and the CUDA kernels
// (kernels/cuda/residual_norm_programs.h). The dropout is ops/dropout.h's hashed one, element i of
// the flat (rows, D) array, so `sum` has add_dropout's bits.
#pragma once
#include <cstdint>

#include "kernels/math/dropout_math.h"

namespace minrnn::core {

// The input row an output row reads: output rows come `out_per_batch` a batch, read from batches
// of `in_per_batch` input rows at first, first + stride, … (a token selection, the top block's);
// identity(rows) reads row r itself.
struct RowMap {
  int64_t out_per_batch, in_per_batch, first, stride;
  static MINRNN_SHARED_INLINE RowMap identity(int64_t rows) { return {rows, rows, 0, 1}; }
  // Whether row r reads row r (every row of a block but the top's selection): a kernel's threads
  // then skip the division, ~20 instructions in a join that waits on issuing them.
  MINRNN_SHARED_INLINE bool reads_itself() const {
    return first == 0 && stride == 1 && in_per_batch == out_per_batch;
  }
  MINRNN_SHARED_INLINE int64_t operator()(int64_t r) const {
    if (reads_itself()) return r;
    return (r / out_per_batch) * in_per_batch + first + (r % out_per_batch) * stride;
  }
};

// A join's rows: `rows` outputs, output r reading row x(r) of x and y(r) of y.
struct JoinRows {
  int64_t rows;
  RowMap x, y;
};

// A row's statistics: mean and 1/√(var + eps), var the biased variance (LayerNorm's).
struct RowMoments {
  float mean, rstd;
};

// ∂/∂sum of the LayerNorm's output, for one element: rstd · (dn − mean(dn) − x̂ · mean(dn · x̂)),
// dn = the normed output's gradient times γ, x̂ = (sum − mean) · rstd; `dn_mean` and `dn_xhat_mean`
// the row's means.
MINRNN_SHARED_INLINE float norm_input_grad(float dn, float xhat, float dn_mean, float dn_xhat_mean,
                                           float rstd) {
  return rstd * (dn - dn_mean - xhat * dn_xhat_mean);
}

}  // namespace minrnn::core
