#include "kernels/cpu/dropout.h"

#include "kernels/cpu/simd.h"
#include "kernels/math/dropout_math.h"

namespace minrnn::core {
namespace {

// Built per ISA (kernels/cpu/simd.h). Written so the AVX2 clone vectorizes too (it ran scalar: 4%
// of a training step on an AVX2 machine): y[i] is scaled whatever the mask and then selected (the
// file is built without trapping-math so GCC may; AVX2 has no masked ops to do it otherwise), and
// the draw and the threshold, both in [0, 2³²], are compared as signed 64-bit integers (AVX2 has no
// unsigned one).
template <typename T, bool kResidual>
MINRNN_VECTOR_CLONES void masked_range(const T* x, const T* y, T* out, int64_t begin, int64_t end,
                                       uint64_t seed, int64_t threshold, T scale) {
  const uint32_t key = dropout_math::key_of(seed);  // the seed mixed once, not an element at a time
  for (int64_t i = begin; i < end; ++i) {
    const int64_t draw = dropout_math::keyed_draw(key, i);
    const T scaled = y[i] * scale;
    const T v = draw >= threshold ? scaled : T(0);
    out[i] = kResidual ? x[i] + v : v;
  }
}

template <typename T>
void dropout_range_of(const T* x, const T* y, T* out, int64_t begin, int64_t end, uint64_t seed,
                      int64_t threshold, T scale) {
  if (x) {
    masked_range<T, true>(x, y, out, begin, end, seed, threshold, scale);
  } else {
    masked_range<T, false>(x, y, out, begin, end, seed, threshold, scale);
  }
}

}  // namespace

void dropout_range(const float* x, const float* y, float* out, int64_t begin, int64_t end,
                   uint64_t seed, int64_t threshold, float scale) {
  dropout_range_of(x, y, out, begin, end, seed, threshold, scale);
}
void dropout_range(const double* x, const double* y, double* out, int64_t begin, int64_t end,
                   uint64_t seed, int64_t threshold, double scale) {
  dropout_range_of(x, y, out, begin, end, seed, threshold, scale);
}

}  // namespace minrnn::core
