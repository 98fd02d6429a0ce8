// The hashed dropout-add (core/dropout.h) as a phase program (core/scan_grid.h): one thread per
// element, one phase, so the CUDA kernel (dropout_kernels.cu) and the host emulator's tests run
// the same body. out[i] = (x[i] +) keep(i) · y[i] · scale, the CPU pass's arithmetic in its order:
// the product and the sum rounded separately (no FMA), so GPU and CPU give the same bits.
#pragma once
#include "core/dropout_math.h"
#include "core/scan_grid.h"

namespace minrnn::core::grid {

template <typename T>
MINRNN_DROPOUT_INLINE T mul_rounded(T a, T b) {
#if defined(__CUDA_ARCH__)
  if constexpr (sizeof(T) == 4)
    return __fmul_rn(a, b);
  else
    return __dmul_rn(a, b);
#else
  return a * b;
#endif
}
template <typename T>
MINRNN_DROPOUT_INLINE T add_rounded(T a, T b) {
#if defined(__CUDA_ARCH__)
  if constexpr (sizeof(T) == 4)
    return __fadd_rn(a, b);
  else
    return __dadd_rn(a, b);
#else
  return a + b;
#endif
}

template <typename T, typename Mem>
struct DropoutAdd {
  static constexpr int kThreads = 256;
  static constexpr int kPhases = 1;
  struct Regs : Exchange<float> {};
  struct Shared {};
  int64_t n;
  uint64_t seed;
  int64_t threshold;  // dropped where the draw is below: p·2³²
  T scale;            // 1 / (1 − p)
  bool residual;      // with x; else out = keep · y · scale
  typename Mem::template In<T> x, y;
  typename Mem::template Out<T> out;

  MINRNN_HOST_DEVICE int64_t blocks() const { return (n + kThreads - 1) / kThreads; }
  MINRNN_HOST_DEVICE int64_t rounds() const { return 1; }
  static constexpr MINRNN_HOST_DEVICE Step step(int) { return {Boundary::kNone, 0}; }
  MINRNN_HOST_DEVICE void phase(int, int64_t, const Thread& th, Regs&, Shared&) const {
    const int64_t i = th.block * kThreads + th.index;
    if (i >= n) return;
    const T scaled = mul_rounded(static_cast<T>(y[i]), scale);
    const T v = dropout_math::draw(seed, i) >= threshold ? scaled : T(0);
    out[i] = residual ? add_rounded(static_cast<T>(x[i]), v) : v;
  }
};

}  // namespace minrnn::core::grid
