#include "kernels/cpu/adamw.h"

#include "kernels/cpu/simd.h"

namespace minrnn::core {

MINRNN_VECTOR_CLONES void adamw_range(float* p, const float* g, float* m, float* v, int64_t begin,
                                      int64_t end, const AdamWUpdate& update, float grad_scale) {
  const AdamWUpdate u = update;  // a local copy: the loop's stores cannot alias it
  for (int64_t i = begin; i < end; ++i) adamw_element(p[i], g[i] * grad_scale, m[i], v[i], u);
}

}  // namespace minrnn::core
