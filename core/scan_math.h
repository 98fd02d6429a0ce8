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

MINRNN_HOST_DEVICE float exp_of(float x) {
  return expf(x);
}
MINRNN_HOST_DEVICE double exp_of(double x) {
  return exp(x);
}

template <typename A>
MINRNN_HOST_DEVICE A sigmoid(A x) {
  return A(1) / (A(1) + exp_of(-x));
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
  return c >= A(0) ? c + A(0.5) : sigmoid(c);
}
template <typename A>
MINRNN_HOST_DEVICE A candidate_grad(A c, bool positive) {
  if (!positive || c >= A(0)) return A(1);
  const A s = sigmoid(c);
  return s * (A(1) - s);
}

// T: storage type; A: accumulation type (float for float/bf16/half, double for double).
template <typename T, typename A>
struct DirectCoefficients {
  const T* a;
  const T* b;

  MINRNN_HOST_DEVICE void load(int64_t i, A& a_i, A& b_i) const {
    a_i = static_cast<A>(a[i]);
    b_i = static_cast<A>(b[i]);
  }
  // Writes da_t = g·h_{t−1} and db_t = g.
  MINRNN_HOST_DEVICE A backward(int64_t i, A g, A h_prev, T* da, T* db) const {
    da[i] = static_cast<T>(g * h_prev);
    db[i] = static_cast<T>(g);
    return static_cast<A>(a[i]);
  }
};

template <typename T, typename A>
struct GatedCoefficients {
  const T* u;  // gate logit
  const T* c;  // candidate pre-activation
  bool positive;

  MINRNN_HOST_DEVICE void load(int64_t i, A& a_i, A& b_i) const {
    A s_pos, s_neg;
    sigmoid_pair(static_cast<A>(u[i]), s_pos, s_neg);
    a_i = s_neg;
    b_i = s_pos * candidate(static_cast<A>(c[i]), positive);
  }
  // da/du = −σ(u)σ(−u), db/du = σ(u)σ(−u)·cand(c), db/dc = σ(u)·cand'(c):
  //   du = g·σ(u)σ(−u)·(cand(c) − h_{t−1}),   dc = g·σ(u)·cand'(c).
  MINRNN_HOST_DEVICE A backward(int64_t i, A g, A h_prev, T* du, T* dc) const {
    const A u_i = static_cast<A>(u[i]), c_i = static_cast<A>(c[i]);
    A s_pos, s_neg;
    sigmoid_pair(u_i, s_pos, s_neg);
    du[i] = static_cast<T>(g * s_pos * s_neg * (candidate(c_i, positive) - h_prev));
    dc[i] = static_cast<T>(g * s_pos * candidate_grad(c_i, positive));
    return s_neg;
  }
};

// Calls body(coef) with the coefficient source `source` names over the two input arrays (a, b) or
// (u, c). Host code: kernels and CPU loops are instantiated once per source through it.
template <typename T, typename A, typename Body>
void with_coefficients(ScanSource source, const T* first, const T* second, Body&& body) {
  if (source == ScanSource::kDirect) {
    body(DirectCoefficients<T, A>{first, second});
  } else {
    body(GatedCoefficients<T, A>{first, second, source == ScanSource::kGatedPositive});
  }
}

}  // namespace scan_math
}  // namespace minrnn::core
