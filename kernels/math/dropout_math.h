// The hashed dropout's draw (ops/dropout.h), one definition for the CPU pass, the CUDA kernel
// (kernels/cuda/pointwise_programs.h) and their tests: element i is kept when the high 32 bits of
// splitmix64(seed + (i + 1)·γ) are ≥ the threshold p·2³².
#pragma once
#include <cstdint>

#include "kernels/math/shared_inline.h"

namespace minrnn::core::dropout_math {

constexpr uint64_t kGamma = 0x9E3779B97F4A7C15ull;  // splitmix64's increment
constexpr uint64_t kMul1 = 0xBF58476D1CE4E5B9ull, kMul2 = 0x94D049BB133111EBull;

MINRNN_SHARED_INLINE uint64_t mix(uint64_t z) {
  z = (z ^ (z >> 30)) * kMul1;
  z = (z ^ (z >> 27)) * kMul2;
  return z ^ (z >> 31);
}

// Element i's draw in [0, 2³²), as a signed 64-bit integer (AVX2 compares no unsigned ones).
MINRNN_SHARED_INLINE int64_t draw(uint64_t seed, int64_t i) {
  return static_cast<int64_t>(mix(seed + static_cast<uint64_t>(i + 1) * kGamma) >> 32);
}

}  // namespace minrnn::core::dropout_math

namespace minrnn::core {

// The dropout of a fused pass (a residual join, attention's probabilities); threshold 0 and
// scale 1 when it is off (evaluation, p = 0).
struct HashedDropout {
  uint64_t seed;      // the full seed (a base read from device memory already added)
  int64_t threshold;  // dropped where the draw is below: p·2³²
  float scale;        // 1 / (1 − p)

  // This dropout where its seed is an offset to *seed_base (a replayed graph's step, read from
  // device memory when the pass runs); itself where seed_base is null.
  MINRNN_SHARED_INLINE HashedDropout with_base(const uint64_t* seed_base) const {
    HashedDropout d = *this;
    if (seed_base) d.seed += *seed_base;
    return d;
  }
  // Branch-free (no short-circuit), so the CPU loops vectorize: the draw is made either way.
  MINRNN_SHARED_INLINE bool kept(int64_t i) const {
    return (threshold == 0) | (dropout_math::draw(seed, i) >= threshold);
  }
  // keep · y · scale: fused_dropout's bits (a join without a residual).
  MINRNN_SHARED_INLINE float dropped(float y, int64_t i) const {
    const float scaled = y * scale;
    return kept(i) ? scaled : 0.0f;
  }
  // x + keep · y · scale, the product and the sum rounded on their own (add_dropout's order).
  MINRNN_SHARED_INLINE float sum(float x, float y, int64_t i) const { return x + dropped(y, i); }
  // ∂/∂y of sum times g.
  MINRNN_SHARED_INLINE float y_grad(float g, int64_t i) const { return kept(i) ? g * scale : 0.0f; }
};

}  // namespace minrnn::core
