// n / d for a divisor fixed before a pass, by one multiply-high, an add and a shift (Granlund and
// Montgomery's method, as LibTorch's IntDivider): a 64-bit division is a ~70-instruction routine
// on a GPU, and an element-wise pass that finds its row and run by dividing did more integer
// arithmetic than floating-point. Exact for 0 ≤ n < 2³¹ (the sum of the high product and n stays
// below 2³²) and 1 ≤ d < 2³¹; `fits` says whether a pass's indices are in range, and a pass over
// more elements divides as before.
#pragma once
#include <cstdint>

#include "kernels/math/shared_inline.h"

namespace minrnn::core {

struct Divider {
  static constexpr int64_t kLimit = int64_t{1} << 31;  // numerators and divisors below this
  uint32_t divisor = 1, multiplier = 1, shift = 0;

  // d in [1, 2³¹): shift = ⌈log₂ d⌉, multiplier = ⌊2³² (2^shift − d) / d⌋ + 1.
  static Divider of(int64_t d) {
    Divider v;
    v.divisor = static_cast<uint32_t>(d);
    while ((int64_t{1} << v.shift) < d) ++v.shift;
    const uint64_t span = (uint64_t{1} << v.shift) - static_cast<uint64_t>(d);
    v.multiplier = static_cast<uint32_t>((span << 32) / static_cast<uint64_t>(d) + 1);
    return v;
  }
  // Whether n in [0, count) may be divided by this (and the divisor was in range).
  static bool fits(int64_t count, int64_t d) { return count <= kLimit && d >= 1 && d < kLimit; }
  MINRNN_SHARED_INLINE uint32_t quotient(uint32_t n) const {
    const auto high = static_cast<uint32_t>((static_cast<uint64_t>(n) * multiplier) >> 32);
    return (high + n) >> shift;
  }
};

}  // namespace minrnn::core
