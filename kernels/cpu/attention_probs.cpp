#include "kernels/cpu/attention_probs.h"

#include <algorithm>
#include <limits>

#include "kernels/cpu/simd.h"
#include "kernels/math/scan_math.h"  // cpu_expf

namespace minrnn::core {

// Every loop but the max and the sums vectorizes in the AVX2 / AVX-512 clones (cpu_expf, the
// dropout's branch-free draw).
MINRNN_VECTOR_CLONES void attention_probs_forward_rows(const float* scores, int64_t T,
                                                       int64_t pitch, const QueryRows& queries,
                                                       float scale, int64_t first, int64_t end,
                                                       const HashedDropout& dropout, float* probs,
                                                       float* out) {
  const DropoutDraws drop = dropout.draws();  // a local: in registers across the stores
  for (int64_t row = first; row < end; ++row) {
    const float* s = scores + row * pitch;
    float *p = probs + row * pitch, *o = out + row * pitch;
    const int64_t seen = std::min(queries.position(row) + 1, T);
    float largest = -std::numeric_limits<float>::infinity();
    for (int64_t k = 0; k < seen; ++k) largest = std::max(largest, s[k] * scale);
    for (int64_t k = 0; k < seen; ++k) p[k] = scan_math::cpu_expf(s[k] * scale - largest);
    float sum = 0.0f;
    for (int64_t k = 0; k < seen; ++k) sum += p[k];
    for (int64_t k = 0; k < seen; ++k) p[k] = p[k] / sum;
    for (int64_t k = seen; k < T; ++k) p[k] = 0.0f;
    for (int64_t k = 0; k < T; ++k) o[k] = drop.dropped(p[k], row * T + k);
  }
}

MINRNN_VECTOR_CLONES void attention_probs_backward_rows(const float* probs, const float* out_grad,
                                                        int64_t T, int64_t pitch, float scale,
                                                        int64_t first, int64_t end,
                                                        const HashedDropout& dropout,
                                                        float* scores_grad) {
  const DropoutDraws drop = dropout.draws();
  for (int64_t row = first; row < end; ++row) {
    const float *p = probs + row * pitch, *g = out_grad + row * pitch;
    float* d = scores_grad + row * pitch;
    for (int64_t k = 0; k < T; ++k) d[k] = drop.y_grad(g[k], row * T + k);  // g through it
    float dot = 0.0f;
    for (int64_t k = 0; k < T; ++k) dot += d[k] * p[k];
    for (int64_t k = 0; k < T; ++k) d[k] = softmax_score_grad(p[k], d[k], dot, scale);
  }
}

}  // namespace minrnn::core
