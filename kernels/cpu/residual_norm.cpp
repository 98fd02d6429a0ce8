#include "kernels/cpu/residual_norm.h"

#include <cmath>

#include "kernels/cpu/simd.h"

namespace minrnn::core {
namespace {

// Σ v over n values with 16 running sums, added pairwise at the end: a fixed order the compiler
// can keep in one vector register (a single running sum cannot be vectorized without reordering).
MINRNN_INLINE float row_sum(const float* v, int64_t n) {
  float acc[16] = {};
  int64_t d = 0;
  for (; d + 16 <= n; d += 16) {
    for (int l = 0; l < 16; ++l) acc[l] += v[d + l];
  }
  for (int l = 0; d < n; ++d, ++l) acc[l] += v[d];
  for (int width = 8; width >= 1; width /= 2) {
    for (int l = 0; l < width; ++l) acc[l] += acc[l + width];
  }
  return acc[0];
}

}  // namespace

MINRNN_VECTOR_CLONES void residual_norm_forward_rows(const JoinRows& r, int64_t D, int64_t first,
                                                     int64_t end, const HashedDropout& dropout,
                                                     float eps, const float* x, const float* y,
                                                     const float* gamma, const float* beta,
                                                     float* sum, float* normed, float* moments,
                                                     float* scratch) {
  const DropoutDraws drop = dropout.draws();  // a local: in registers across the stores
  // Nothing dropped (p = 0, or evaluation): the hash, which the branch-free loops draw for every
  // element, is left out; the values are those every element kept gives.
  const bool hashed = drop.threshold != 0;
  for (int64_t row = first; row < end; ++row) {
    const int64_t at = row * D;
    const float* ys = y + r.y(row) * D;
    const float* xs = x ? x + r.x(row) * D : nullptr;
    if (xs && hashed) {
      for (int64_t d = 0; d < D; ++d) sum[at + d] = drop.sum(xs[d], ys[d], at + d);
    } else if (xs) {
      for (int64_t d = 0; d < D; ++d) sum[at + d] = xs[d] + ys[d] * drop.scale;
    } else if (hashed) {
      for (int64_t d = 0; d < D; ++d) sum[at + d] = drop.dropped(ys[d], at + d);
    } else {
      for (int64_t d = 0; d < D; ++d) sum[at + d] = ys[d] * drop.scale;
    }
    const float mean = row_sum(sum + at, D) / static_cast<float>(D);
    for (int64_t d = 0; d < D; ++d) scratch[d] = (sum[at + d] - mean) * (sum[at + d] - mean);
    const float rstd = 1.0f / std::sqrt(row_sum(scratch, D) / static_cast<float>(D) + eps);
    for (int64_t d = 0; d < D; ++d) {
      normed[at + d] = (sum[at + d] - mean) * rstd * gamma[d] + beta[d];
    }
    moments[2 * row] = mean;
    moments[2 * row + 1] = rstd;
  }
}

// One simple loop a quantity, so each vectorizes.
MINRNN_VECTOR_CLONES void residual_norm_backward_rows(
    const JoinRows& r, int64_t D, int64_t first, int64_t end, const HashedDropout& dropout,
    const float* sum, const float* moments, const float* gamma, const float* sum_grad,
    const float* normed_grad, float* __restrict x_grad, float* __restrict y_grad,
    float* __restrict gamma_partial, float* __restrict beta_partial, float* __restrict scratch) {
  const DropoutDraws drop = dropout.draws();  // a local: in registers across the stores
  float* __restrict xhat = scratch;
  float* __restrict dn = scratch + D;
  float* __restrict dn_xhat = scratch + 2 * D;
  float* __restrict sum_scratch = scratch + 3 * D;  // the sum's gradient where no x takes it
  for (int64_t row = first; row < end; ++row) {
    const int64_t at = row * D;
    const float mean = moments[2 * row], rstd = moments[2 * row + 1];
    const float* g = normed_grad + at;
    for (int64_t d = 0; d < D; ++d) xhat[d] = (sum[at + d] - mean) * rstd;
    for (int64_t d = 0; d < D; ++d) dn[d] = g[d] * gamma[d];
    for (int64_t d = 0; d < D; ++d) dn_xhat[d] = dn[d] * xhat[d];
    for (int64_t d = 0; d < D; ++d) gamma_partial[d] += g[d] * xhat[d];
    for (int64_t d = 0; d < D; ++d) beta_partial[d] += g[d];
    const float dn_mean = row_sum(dn, D) / static_cast<float>(D);
    const float dn_xhat_mean = row_sum(dn_xhat, D) / static_cast<float>(D);
    float* dx = x_grad ? x_grad + r.x(row) * D : sum_scratch;
    float* dy = y_grad + r.y(row) * D;
    for (int64_t d = 0; d < D; ++d) {
      dx[d] = norm_input_grad(dn[d], xhat[d], dn_mean, dn_xhat_mean, rstd);
    }
    if (sum_grad) {
      for (int64_t d = 0; d < D; ++d) dx[d] += sum_grad[at + d];
    }
    if (drop.threshold != 0) {
      for (int64_t d = 0; d < D; ++d) dy[d] = drop.y_grad(dx[d], at + d);
    } else {  // nothing dropped: no hash (as in the forward)
      for (int64_t d = 0; d < D; ++d) dy[d] = dx[d] * drop.scale;
    }
  }
}

}  // namespace minrnn::core
