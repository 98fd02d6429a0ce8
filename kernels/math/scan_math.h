// Element math of the scan kernels, shared by the CPU kernels (scan_cpu.cpp) and the CUDA kernels
// (kernels/cuda/scan.cu) so both compute the same thing. Plain C++: no torch, no CUDA headers.
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
//   MinLstmCoefficients minLSTM's normalised gates a_t = f/(f+i), σ(u_t) = i/(f+i), f = σ(p_t),
//                       i = σ(k_t), computed on the fly from the projection's p and k.
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
enum class CoefficientForm : int64_t {
  kDirect,           // (a, b)
  kGated,            // (u, c), vanilla cell: cand = identity
  kGatedPositive,    // (u, c), log-space cell: cand = g
  kMinLstm,          // (p|k, c): first holds p with k D columns further on (the gate projection's
                     // layout), vanilla cell
  kMinLstmPositive,  // (p|k, c), log-space cell
};

// Offset of channel c's t = 0 entry in a source's inputs with row stride `stride`
// (kernels/cuda/phase_program.h's channel_base is the stride = D case, for the state arrays).
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
// inputs are read — a plain pointer, or the host emulator's bounds-checked one
// (kernels/cuda/phase_program.h).
//
// Every source offers read(i), its raw inputs at i (a Raw: all it reads, so a kernel can read a
// chunk of steps at once and keep them in registers); coefficients(raw, a, b), the forward's a_t
// and b_t from them; gate(raw) = a_t; and backward_from(i, raw, g, h_prev, ...), writing its two
// input gradients at i and returning a_t. Only read touches memory. load(i, a, b) and
// backward(i, ...) compose them for the loops that walk one step at a time.
template <typename T, typename A, typename In = const T*>
struct DirectCoefficients {
  In a;
  In b;
  int64_t stride;  // row stride of a and b (and of the gradients written)

  // The backward needs a only, but b is read too (its callers may pass a in its place).
  struct Raw {
    A a, b;
  };
  MINRNN_HOST_DEVICE Raw read(int64_t i) const {
    return {static_cast<A>(a[i]), static_cast<A>(b[i])};
  }
  MINRNN_HOST_DEVICE void coefficients(const Raw& raw, A& a_i, A& b_i) const {
    a_i = raw.a;
    b_i = raw.b;
  }
  MINRNN_HOST_DEVICE void load(int64_t i, A& a_i, A& b_i) const { coefficients(read(i), a_i, b_i); }
  MINRNN_HOST_DEVICE A gate(const Raw& raw) const { return raw.a; }
  // Writes da_t = g·h_{t−1} and db_t = g.
  template <typename Out>
  MINRNN_HOST_DEVICE A backward_from(int64_t i, const Raw& raw, A g, A h_prev, Out da,
                                     Out db) const {
    da[i] = static_cast<T>(g * h_prev);
    db[i] = static_cast<T>(g);
    return raw.a;
  }
  template <typename Out>
  MINRNN_HOST_DEVICE A backward(int64_t i, A g, A h_prev, Out da, Out db) const {
    return backward_from(i, read(i), g, h_prev, da, db);
  }
};

// kPositive is a template parameter so the CPU loops see no branch and vectorise.
template <typename T, typename A, bool kPositive, typename In = const T*>
struct GatedCoefficients {
  static constexpr bool positive = kPositive;
  In u;  // gate logit
  In c;  // candidate pre-activation
  int64_t stride;

  struct Raw {
    A u, c;
  };
  MINRNN_HOST_DEVICE Raw read(int64_t i) const {
    return {static_cast<A>(u[i]), static_cast<A>(c[i])};
  }
  MINRNN_HOST_DEVICE void coefficients(const Raw& raw, A& a_i, A& b_i) const {
    A s_pos, s_neg;
    sigmoid_pair(raw.u, s_pos, s_neg);
    a_i = s_neg;
    b_i = s_pos * candidate(raw.c, positive);
  }
  MINRNN_HOST_DEVICE void load(int64_t i, A& a_i, A& b_i) const { coefficients(read(i), a_i, b_i); }
  MINRNN_HOST_DEVICE A gate(const Raw& raw) const {
    A s_pos, s_neg;
    sigmoid_pair(raw.u, s_pos, s_neg);  // the a_t backward_from returns, to the last bit
    return s_neg;
  }
  // da/du = −σ(u)σ(−u), db/du = σ(u)σ(−u)·cand(c), db/dc = σ(u)·cand'(c):
  //   du = g·σ(u)σ(−u)·(cand(c) − h_{t−1}),   dc = g·σ(u)·cand'(c).
  template <typename Out>
  MINRNN_HOST_DEVICE A backward_from(int64_t i, const Raw& raw, A g, A h_prev, Out du,
                                     Out dc) const {
    A s_pos, s_neg;
    sigmoid_pair(raw.u, s_pos, s_neg);
    A cand, cand_grad;
    candidate_with_grad(raw.c, positive, cand, cand_grad);
    du[i] = static_cast<T>(g * s_pos * s_neg * (cand - h_prev));
    dc[i] = static_cast<T>(g * s_pos * cand_grad);
    return s_neg;
  }
  template <typename Out>
  MINRNN_HOST_DEVICE A backward(int64_t i, A g, A h_prev, Out du, Out dc) const {
    return backward_from(i, read(i), g, h_prev, du, dc);
  }
};

// minLSTM's normalised gates (App. B.2.2) without a log: with f = σ(p), i = σ(k),
//     a = f/(f+i) = P_k/(P_k + P_p),   i/(f+i) = P_p/(P_k + P_p),   P_x = 1 + e^{−x},
// every P scaled by e^{−m}, m = max(0, −p, −k), so no term overflows, one term is exactly 1 and
// the sum is ≥ 1: saturated gates never give 0/0. Three exps and one division, where the log
// form u = log i − log f (= softplus(−p) − softplus(−k)) then σ(±u) took three exps, two logs and
// four divisions. Also the backward's factors: σ(−p) = e_p/P_p, σ(−k) = e_k/P_k.
template <typename A>
struct LstmGates {
  A e_p, e_k;  // e^{−p−m}, e^{−k−m}
  A P_p, P_k;  // e^{−m} + e_p, e^{−m} + e_k
  A r;         // 1 / (P_p + P_k)

  MINRNN_HOST_DEVICE A forget() const { return P_k * r; }  // a_t = f/(f+i) = σ(−u)
  MINRNN_HOST_DEVICE A input() const { return P_p * r; }   // i/(f+i) = σ(u)
};
template <typename A>
MINRNN_HOST_DEVICE LstmGates<A> lstm_gates(A p, A k) {
  const A np = -p, nk = -k;
  A m = np > nk ? np : nk;
  m = m > A(0) ? m : A(0);
  const A e_0 = exp_of(-m), e_p = exp_of(np - m), e_k = exp_of(nk - m);
  const A P_p = e_0 + e_p, P_k = e_0 + e_k;
  return {e_p, e_k, P_p, P_k, A(1) / (P_p + P_k)};
}

// minLSTM read straight from its gate projection: p (forget logit) at pk[i], k (input logit) at
// pk[i + pair], candidate at c[i]; the gates are lstm_gates(p, k). Backward, with
// du = g·σ(u)σ(−u)·(cand(c) − h_{t−1}) as in GatedCoefficients and u = log σ(k) − log σ(p):
//     dp = −du·σ(−p) = −g·(cand − h_{t−1})·P_k·e_p·r²,
//     dk =  du·σ(−k) =  g·(cand − h_{t−1})·P_p·e_k·r².
template <typename T, typename A, bool kPositive, typename In = const T*>
struct MinLstmCoefficients {
  In pk;
  In c;
  int64_t stride;
  int64_t pair;  // columns from p to k: D

  struct Raw {
    A p, k, c;
  };
  MINRNN_HOST_DEVICE Raw read(int64_t i) const {
    return {static_cast<A>(pk[i]), static_cast<A>(pk[i + pair]), static_cast<A>(c[i])};
  }
  MINRNN_HOST_DEVICE void coefficients(const Raw& raw, A& a_i, A& b_i) const {
    const LstmGates<A> l = lstm_gates(raw.p, raw.k);
    a_i = l.forget();
    b_i = l.input() * candidate(raw.c, kPositive);
  }
  MINRNN_HOST_DEVICE void load(int64_t i, A& a_i, A& b_i) const { coefficients(read(i), a_i, b_i); }
  MINRNN_HOST_DEVICE A gate(const Raw& raw) const { return lstm_gates(raw.p, raw.k).forget(); }
  template <typename Out>
  MINRNN_HOST_DEVICE A backward_from(int64_t i, const Raw& raw, A g, A h_prev, Out dpk,
                                     Out dc) const {
    const LstmGates<A> l = lstm_gates(raw.p, raw.k);
    A cand, cand_grad;
    candidate_with_grad(raw.c, kPositive, cand, cand_grad);
    const A q = g * (cand - h_prev) * l.r * l.r;
    dpk[i] = static_cast<T>(-q * l.P_k * l.e_p);
    dpk[i + pair] = static_cast<T>(q * l.P_p * l.e_k);
    dc[i] = static_cast<T>(g * l.input() * cand_grad);
    return l.forget();
  }
  template <typename Out>
  MINRNN_HOST_DEVICE A backward(int64_t i, A g, A h_prev, Out dpk, Out dc) const {
    return backward_from(i, read(i), g, h_prev, dpk, dc);
  }
};

// Calls body(coef) with the coefficient source `source` names over the two input arrays (a, b),
// (u, c) or (p|k, c), each entry `stride` from the next; D: channels (p to k for minLSTM). Host
// code: kernels and CPU loops are instantiated once per source through it.
template <typename T, typename A, typename In = const T*, typename Body>
void with_coefficients(CoefficientForm source, In first, In second, int64_t stride, int64_t D,
                       Body&& body) {
  switch (source) {
    case CoefficientForm::kDirect:
      body(DirectCoefficients<T, A, In>{first, second, stride});
      break;
    case CoefficientForm::kGatedPositive:
      body(GatedCoefficients<T, A, true, In>{first, second, stride});
      break;
    case CoefficientForm::kGated:
      body(GatedCoefficients<T, A, false, In>{first, second, stride});
      break;
    case CoefficientForm::kMinLstmPositive:
      body(MinLstmCoefficients<T, A, true, In>{first, second, stride, D});
      break;
    case CoefficientForm::kMinLstm:
      body(MinLstmCoefficients<T, A, false, In>{first, second, stride, D});
      break;
  }
}

}  // namespace scan_math
}  // namespace minrnn::core
