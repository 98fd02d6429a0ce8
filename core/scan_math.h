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
//   MinLstmCoefficients the same with u = softplus(−p_t) − softplus(−k_t) computed on the fly too.
// Each source loads (a_t, b_t) at one element and, in the backward pass, turns the total gradient
// g_t = dL/dh_t and h_{t−1} into the gradients of its own inputs and returns a_t (the kernel
// carries a_t·g_t back to step t−1).
//
// A source's inputs (and the input gradients it writes) need not be (B,T,D) arrays of their own:
// `stride` is the distance between consecutive (batch row, step) entries, D for a contiguous
// tensor, G·D for column blocks of the gate projection's (B,T,G·D) output, which the scan then
// reads, and whose gradient it writes, in place (input_base: where a channel's entries start).
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
  kDirect,           // (a, b)
  kGated,            // (u, c), vanilla cell: cand = identity
  kGatedPositive,    // (u, c), log-space cell: cand = g
  kMinLstm,          // (p|k, c): first holds p with k D columns further on (the gate projection's
                     // layout), vanilla cell
  kMinLstmPositive,  // (p|k, c), log-space cell
};

// Offset of channel c's t = 0 entry in a source's inputs with row stride `stride` (scan_grid.h's
// channel_base is the stride = D case, for the state arrays).
MINRNN_HOST_DEVICE int64_t input_base(int64_t channel, int64_t L, int64_t D, int64_t stride) {
  return (channel / D) * L * stride + channel % D;
}

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

#if !defined(__CUDA_ARCH__)
// ln x for normal x > 0 within 2 ulp (Cephes' logf: exponent and mantissa split by bits), inline
// for the same reason as cpu_expf.
inline float log_approx(float x) {
  int32_t bits;
  __builtin_memcpy(&bits, &x, sizeof bits);
  float e = static_cast<float>(((bits >> 23) & 0xff) - 126);  // x = m · 2^e, m ∈ [½, 1)
  bits = (bits & 0x807fffff) | 0x3f000000;
  float m;
  __builtin_memcpy(&m, &bits, sizeof m);
  const bool low = m < 0.707106781186547524f;
  e = low ? e - 1.0f : e;
  m = low ? m + m - 1.0f : m - 1.0f;
  const float z = m * m;
  float y = 7.0376836292e-2f;
  y = y * m - 1.1514610310e-1f;
  y = y * m + 1.1676998740e-1f;
  y = y * m - 1.2420140846e-1f;
  y = y * m + 1.4249322787e-1f;
  y = y * m - 1.6668057665e-1f;
  y = y * m + 2.0000714765e-1f;
  y = y * m - 2.4999993993e-1f;
  y = y * m + 3.3333331174e-1f;
  y = y * m * z - 2.12194440e-4f * e - 0.5f * z;
  return m + y + 0.693359375f * e;
}
#endif

// log1p(t) for t ∈ [0, 1]; on the CPU ln(u)·t / (u − 1), u = 1 + t (Goldberg), exact where u
// rounds to 1.
MINRNN_HOST_DEVICE float log1p_of(float t) {
#if defined(__CUDA_ARCH__)
  return log1pf(t);
#else
  const float u = 1.0f + t;
  return u == 1.0f ? t : log_approx(u) * t / (u - 1.0f);
#endif
}
MINRNN_HOST_DEVICE double log1p_of(double t) {
  return log1p(t);
}

// torch's softplus (β = 1, threshold 20) from e = exp(−|x|): max(x, 0) + log1p(e), x past 20.
template <typename A>
MINRNN_HOST_DEVICE A softplus_from(A x, A e) {
  return x > A(20) ? x : (x > A(0) ? x : A(0)) + log1p_of(e);
}
// Its derivative as torch's softplus_backward takes it: 1 past the threshold, σ(x) below.
template <typename A>
MINRNN_HOST_DEVICE A softplus_grad_from(A x, A e) {
  return x > A(20) ? A(1) : (x >= A(0) ? A(1) : e) / (A(1) + e);
}
template <typename A>
MINRNN_HOST_DEVICE A softplus(A x) {
  return softplus_from(x, exp_of(x >= A(0) ? -x : x));
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
// cand(c) and cand′(c) from one σ(c), for the backward.
template <typename A>
MINRNN_HOST_DEVICE void candidate_with_grad(A c, bool positive, A& cand, A& grad) {
  if (!positive) {
    cand = c;
    grad = A(1);
    return;
  }
  const A s = sigmoid(c);
  cand = c >= A(0) ? c + A(0.5) : s;
  grad = c >= A(0) ? A(1) : s * (A(1) - s);
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
  int64_t stride;  // row stride of a and b (and of the gradients written)

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
  int64_t stride;

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
    A cand, cand_grad;
    candidate_with_grad(c_i, positive, cand, cand_grad);
    du[i] = static_cast<T>(g * s_pos * s_neg * (cand - h_prev));
    dc[i] = static_cast<T>(g * s_pos * cand_grad);
    return s_neg;
  }
  template <typename Out>
  MINRNN_HOST_DEVICE A backward(int64_t i, A g, A h_prev, Out du, Out dc) const {
    A u_i, c_i;
    read(i, u_i, c_i);
    return backward_from(i, u_i, c_i, g, h_prev, du, dc);
  }
};

// minLSTM read straight from its gate projection: p (forget logit) at pk[i], k (input logit) at
// pk[i + pair], candidate at c[i]; u = softplus(−p) − softplus(−k) (= log i − log f,
// core/minrnn.cpp) and then exactly GatedCoefficients. Backward: ∂u/∂p = −softplus'(−p), ∂u/∂k =
// softplus'(−k); each of p, k takes one exp(−|·|) for its softplus and its derivative.
template <typename T, typename A, bool kPositive, typename In = const T*>
struct MinLstmCoefficients {
  In pk;
  In c;
  int64_t stride;
  int64_t pair;  // columns from p to k: D

  // −p, −k and their exp(−|·|).
  struct Logits {
    A np, nk, ep, ek;
  };
  MINRNN_HOST_DEVICE Logits logits(int64_t i) const {
    const A np = -static_cast<A>(pk[i]), nk = -static_cast<A>(pk[i + pair]);
    return {np, nk, exp_of(np >= A(0) ? -np : np), exp_of(nk >= A(0) ? -nk : nk)};
  }
  MINRNN_HOST_DEVICE static A logit(const Logits& l) {
    return softplus_from(l.np, l.ep) - softplus_from(l.nk, l.ek);
  }
  MINRNN_HOST_DEVICE void load(int64_t i, A& a_i, A& b_i) const {
    A s_pos, s_neg;
    sigmoid_pair(logit(logits(i)), s_pos, s_neg);
    a_i = s_neg;
    b_i = s_pos * candidate(static_cast<A>(c[i]), kPositive);
  }
  MINRNN_HOST_DEVICE void read(int64_t i, A& x1, A& x2) const {
    x1 = logit(logits(i));
    x2 = static_cast<A>(c[i]);
  }
  MINRNN_HOST_DEVICE A gate(A u_i, A) const {
    A s_pos, s_neg;
    sigmoid_pair(u_i, s_pos, s_neg);
    return s_neg;
  }
  // GatedCoefficients' du and dc, du then carried on to p and k.
  template <typename Out>
  MINRNN_HOST_DEVICE A backward_with(int64_t i, const Logits& l, A u_i, A c_i, A g, A h_prev,
                                     Out dpk, Out dc) const {
    A s_pos, s_neg, cand, cand_grad;
    sigmoid_pair(u_i, s_pos, s_neg);
    candidate_with_grad(c_i, kPositive, cand, cand_grad);
    const A du = g * s_pos * s_neg * (cand - h_prev);
    dpk[i] = static_cast<T>(-du * softplus_grad_from(l.np, l.ep));
    dpk[i + pair] = static_cast<T>(du * softplus_grad_from(l.nk, l.ek));
    dc[i] = static_cast<T>(g * s_pos * cand_grad);
    return s_neg;
  }
  // The tiled kernels' second phase: u and c kept from read(), p and k read again.
  template <typename Out>
  MINRNN_HOST_DEVICE A backward_from(int64_t i, A u_i, A c_i, A g, A h_prev, Out dpk,
                                     Out dc) const {
    return backward_with(i, logits(i), u_i, c_i, g, h_prev, dpk, dc);
  }
  template <typename Out>
  MINRNN_HOST_DEVICE A backward(int64_t i, A g, A h_prev, Out dpk, Out dc) const {
    const Logits l = logits(i);
    return backward_with(i, l, logit(l), static_cast<A>(c[i]), g, h_prev, dpk, dc);
  }
};

// Calls body(coef) with the coefficient source `source` names over the two input arrays (a, b),
// (u, c) or (p|k, c), each entry `stride` from the next; D: channels (p to k for minLSTM). Host
// code: kernels and CPU loops are instantiated once per source through it.
template <typename T, typename A, typename In = const T*, typename Body>
void with_coefficients(ScanSource source, In first, In second, int64_t stride, int64_t D,
                       Body&& body) {
  switch (source) {
    case ScanSource::kDirect:
      body(DirectCoefficients<T, A, In>{first, second, stride});
      break;
    case ScanSource::kGatedPositive:
      body(GatedCoefficients<T, A, true, In>{first, second, stride});
      break;
    case ScanSource::kGated:
      body(GatedCoefficients<T, A, false, In>{first, second, stride});
      break;
    case ScanSource::kMinLstmPositive:
      body(MinLstmCoefficients<T, A, true, In>{first, second, stride, D});
      break;
    case ScanSource::kMinLstm:
      body(MinLstmCoefficients<T, A, false, In>{first, second, stride, D});
      break;
  }
}

}  // namespace scan_math
}  // namespace minrnn::core
