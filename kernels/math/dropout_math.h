// The hashed dropout's draw (ops/dropout.h), one definition for the CPU pass, the CUDA kernels
// (kernels/cuda/*_programs.h) and their tests: element i is kept when lowbias32(key + i·γ) ≥ the
// threshold p·2³², key the high 32 bits of splitmix64's finaliser of the seed. The seed is mixed
// once a pass (the compiler hoists it out of a pass's loop), each element in 32-bit arithmetic:
// splitmix64 an element cost three 64-bit products (~12 integer multiplies on a GPU), which made
// the CUDA joins wait on the hash rather than on memory.
#pragma once
#include <cstdint>

#include "kernels/math/shared_inline.h"

namespace minrnn::core::dropout_math {

constexpr uint64_t kMul1 = 0xBF58476D1CE4E5B9ull, kMul2 = 0x94D049BB133111EBull;  // splitmix64's
constexpr uint32_t kGamma = 0x9E3779B9u, kGammaHigh = 0x85EBCA6Bu;  // odd: i ↦ i·γ is one-to-one
constexpr uint32_t kBias1 = 0x7FEB352Du, kBias2 = 0x846CA68Bu;      // lowbias32's

MINRNN_SHARED_INLINE uint64_t mix(uint64_t z) {
  z = (z ^ (z >> 30)) * kMul1;
  z = (z ^ (z >> 27)) * kMul2;
  return z ^ (z >> 31);
}

// A 32-bit bijection with near-ideal avalanche (C. Wellons' lowbias32).
MINRNN_SHARED_INLINE uint32_t mix32(uint32_t x) {
  x = (x ^ (x >> 16)) * kBias1;
  x = (x ^ (x >> 15)) * kBias2;
  return x ^ (x >> 16);
}

// The seed's key: seeds a step apart (a run's successive passes) give unrelated keys.
MINRNN_SHARED_INLINE uint32_t key_of(uint64_t seed) {
  return static_cast<uint32_t>(mix(seed) >> 32);
}

// Element i's draw in [0, 2³²) under a seed's key, as a signed 64-bit integer (AVX2 compares no
// unsigned ones). i's high word joins through its own odd multiplier: no two elements of a pass
// share an input.
MINRNN_SHARED_INLINE int64_t keyed_draw(uint32_t key, int64_t i) {
  const uint64_t u = static_cast<uint64_t>(i);
  const uint32_t x =
      key + static_cast<uint32_t>(u) * kGamma + static_cast<uint32_t>(u >> 32) * kGammaHigh;
  return static_cast<int64_t>(mix32(x));
}
MINRNN_SHARED_INLINE int64_t draw(uint64_t seed, int64_t i) {
  return keyed_draw(key_of(seed), i);
}

}  // namespace minrnn::core::dropout_math

namespace minrnn::core {

// A fused pass's dropout with its seed's key made (HashedDropout::draws): what each element asks.
struct DropoutDraws {
  uint32_t key;
  int64_t threshold;  // dropped where the draw is below: p·2³²
  float scale;        // 1 / (1 − p)
  // Branch-free (no short-circuit), so the CPU loops vectorize: the draw is made either way.
  MINRNN_SHARED_INLINE bool kept(int64_t i) const {
    return (threshold == 0) | (dropout_math::keyed_draw(key, i) >= threshold);
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
  // The seed mixed into its key once, before a pass's elements (a kernel's branches would each
  // mix it again).
  MINRNN_SHARED_INLINE DropoutDraws draws() const {
    return {dropout_math::key_of(seed), threshold, scale};
  }
};

}  // namespace minrnn::core
