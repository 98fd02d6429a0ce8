// Element math of the scan kernels, shared by the CPU kernels (scan_cpu.cpp) and the CUDA kernels
// (scan_kernels.cu) so both compute the same thing. Plain C++: no torch, no CUDA headers.
//
// A scan kernel walks h_t = a_t ⊙ h_{t−1} + b_t over t for each channel. Where a_t and b_t come
// from is a "coefficient source":
//   DirectCoefficients  a_t, b_t given as tensors (linear_scan);
//   GatedCoefficients   the minGRU/minLSTM gates computed on the fly from the gate logit u_t and
//   the
//                       candidate pre-activation c_t (gated_scan):
//                           a_t = σ(−u_t),   b_t = σ(u_t) · cand(c_t),
//                       cand = identity (vanilla cell) or g(c) = c + ½ (c ≥ 0), σ(c) (c < 0) for
//                       the log-space cell — so no (B,T,D) gate tensors are ever materialised.
// Each source loads (a_t, b_t) at one element and, in the backward pass, turns the total gradient
// g_t = dL/dh_t and h_{t−1} into the gradients of its own inputs and returns a_t (the kernel
// carries a_t·g_t back to step t−1).
#pragma once
#include <math.h>

#include <cstdint>

#if defined(__CUDACC__)
#define MINRNN_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define MINRNN_HOST_DEVICE inline
#endif

namespace minrnn::core {

// Which coefficient source a scan call uses (its two input tensors are (a, b) or (u, c)).
enum class ScanSource : int64_t {
  kDirect,         // (a, b)
  kGated,          // (u, c), vanilla cell: cand = identity
  kGatedPositive,  // (u, c), log-space cell: cand = g
};

namespace scan_math {

#if !defined(__CUDA_ARCH__)
// expf for the CPU kernels, inline and branch-free so their D loops vectorise (a call into libm
// stops GCC's vectoriser; with it the gated scan's backward was 13% of a minGRU training step):
// Cephes' expf — exp(x) = 2ⁿ·exp(r), |r| ≤ ½ ln 2, a degree-7 polynomial — within 2 ulp of expf;
// 0 below −87.3 (where expf is denormal), ≤ 2¹²⁷ above.
inline float cpu_expf(float x) {
  float xc = x < -87.33654f ? -87.33654f : x;  // ternaries, not fminf: those are libm calls
  xc = xc > 88.0f ? 88.0f : xc;
  // n = round(xc / ln 2) by the 1.5·2²³ trick: its low mantissa bits then hold n.
  const float shifted = xc * 1.44269504088896341f + 12582912.0f;
  const float n = shifted - 12582912.0f;
  int32_t n_bits;
  __builtin_memcpy(&n_bits, &shifted, sizeof n_bits);
  // Unsigned: the same bits, and defined for every input (a NaN's bits make n negative, and a
  // left shift of a negative int is undefined; UBSan found it).
  const uint32_t scale_bits = (static_cast<uint32_t>(n_bits) - 0x4B400000u + 127u) << 23;
  float scale;
  __builtin_memcpy(&scale, &scale_bits, sizeof scale);
  const float r = xc - n * 0.693359375f + n * 2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  const float y = (p * r * r + r + 1.0f) * scale;
  return x < -87.33654f ? 0.0f : y;
}
#endif

MINRNN_HOST_DEVICE float exp_of(float x) {
#if defined(__CUDA_ARCH__)
  return expf(x);
#else
  return cpu_expf(x);
#endif
}
MINRNN_HOST_DEVICE double exp_of(double x) {
  return exp(x);
}

// σ(x) from exp(−|x|) ∈ (0, 1]: never overflows, and accurate on both sides.
template <typename A>
MINRNN_HOST_DEVICE A sigmoid(A x) {
  const A e = exp_of(x >= A(0) ? -x : x);
  return (x >= A(0) ? A(1) : e) / (A(1) + e);
}

// σ(u) and σ(−u) from one exp, each accurate even where the other rounds to 1.
template <typename A>
MINRNN_HOST_DEVICE void sigmoid_pair(A u, A& s_pos, A& s_neg) {
  const A e = exp_of(u >= A(0) ? -u : u);  // exp(−|u|) ∈ (0, 1]
  const A big = A(1) / (A(1) + e), small = e * big;
  s_pos = u >= A(0) ? big : small;
  s_neg = u >= A(0) ? small : big;
}

// cand(c) and its derivative: identity, or the log-space cell's positive g.
template <typename A>
MINRNN_HOST_DEVICE A candidate(A c, bool positive) {
  if (!positive) return c;
  // Both sides computed, then selected: a branch (or a division GCC may not speculate) would stop
  // the CPU loops vectorising.
  const A s = sigmoid(c);
  return c >= A(0) ? c + A(0.5) : s;
}
template <typename A>
MINRNN_HOST_DEVICE A candidate_grad(A c, bool positive) {
  if (!positive) return A(1);
  const A s = sigmoid(c);
  return c >= A(0) ? A(1) : s * (A(1) - s);
}

// T: storage type; A: accumulation type (float for float/bf16/half, double for double). In: how the
// inputs are read — a plain pointer, or the host emulator's bounds-checked one (scan_grid.h).
//
// Every source offers: load(i, a, b) for the forward; for the backward read(i, x1, x2) (its raw
// inputs at i, all it needs, so the tiled kernel keeps them in registers and reads each once),
// gate(x1, x2) = a_t, and backward_from(...) writing its two input gradients at i. backward(...)
// composes them for the one-pass kernels.
template <typename T, typename A, typename In = const T*>
struct DirectCoefficients {
  In a;
  In b;

  MINRNN_HOST_DEVICE void load(int64_t i, A& a_i, A& b_i) const {
    a_i = static_cast<A>(a[i]);
    b_i = static_cast<A>(b[i]);
  }
  // The backward needs a only (b is not read: callers may pass a in its place).
  MINRNN_HOST_DEVICE void read(int64_t i, A& x1, A& x2) const {
    x1 = static_cast<A>(a[i]);
    x2 = A(0);
  }
  MINRNN_HOST_DEVICE A gate(A x1, A) const { return x1; }
  // Writes da_t = g·h_{t−1} and db_t = g.
  template <typename Out>
  MINRNN_HOST_DEVICE void backward_from(int64_t i, A, A, A g, A h_prev, Out da, Out db) const {
    da[i] = static_cast<T>(g * h_prev);
    db[i] = static_cast<T>(g);
  }
  template <typename Out>
  MINRNN_HOST_DEVICE A backward(int64_t i, A g, A h_prev, Out da, Out db) const {
    A x1, x2;
    read(i, x1, x2);
    backward_from(i, x1, x2, g, h_prev, da, db);
    return x1;
  }
};

// kPositive is a template parameter so the CPU loops see no branch and vectorise.
template <typename T, typename A, bool kPositive, typename In = const T*>
struct GatedCoefficients {
  static constexpr bool positive = kPositive;
  In u;  // gate logit
  In c;  // candidate pre-activation

  MINRNN_HOST_DEVICE void load(int64_t i, A& a_i, A& b_i) const {
    A s_pos, s_neg;
    sigmoid_pair(static_cast<A>(u[i]), s_pos, s_neg);
    a_i = s_neg;
    b_i = s_pos * candidate(static_cast<A>(c[i]), positive);
  }
  MINRNN_HOST_DEVICE void read(int64_t i, A& x1, A& x2) const {
    x1 = static_cast<A>(u[i]);
    x2 = static_cast<A>(c[i]);
  }
  MINRNN_HOST_DEVICE A gate(A u_i, A) const {
    A s_pos, s_neg;
    sigmoid_pair(u_i, s_pos, s_neg);  // the a_t backward_from returns, to the last bit
    return s_neg;
  }
  // da/du = −σ(u)σ(−u), db/du = σ(u)σ(−u)·cand(c), db/dc = σ(u)·cand'(c):
  //   du = g·σ(u)σ(−u)·(cand(c) − h_{t−1}),   dc = g·σ(u)·cand'(c).
  template <typename Out>
  MINRNN_HOST_DEVICE A backward_from(int64_t i, A u_i, A c_i, A g, A h_prev, Out du, Out dc) const {
    A s_pos, s_neg;
    sigmoid_pair(u_i, s_pos, s_neg);
    du[i] = static_cast<T>(g * s_pos * s_neg * (candidate(c_i, positive) - h_prev));
    dc[i] = static_cast<T>(g * s_pos * candidate_grad(c_i, positive));
    return s_neg;
  }
  template <typename Out>
  MINRNN_HOST_DEVICE A backward(int64_t i, A g, A h_prev, Out du, Out dc) const {
    A u_i, c_i;
    read(i, u_i, c_i);
    return backward_from(i, u_i, c_i, g, h_prev, du, dc);
  }
};

// Calls body(coef) with the coefficient source `source` names over the two input arrays (a, b) or
// (u, c). Host code: kernels and CPU loops are instantiated once per source through it.
template <typename T, typename A, typename In = const T*, typename Body>
void with_coefficients(ScanSource source, In first, In second, Body&& body) {
  if (source == ScanSource::kDirect) {
    body(DirectCoefficients<T, A, In>{first, second});
  } else if (source == ScanSource::kGatedPositive) {
    body(GatedCoefficients<T, A, true, In>{first, second});
  } else {
    body(GatedCoefficients<T, A, false, In>{first, second});
  }
}

}  // namespace scan_math
}  // namespace minrnn::core
