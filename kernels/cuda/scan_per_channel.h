// The one-thread-per-channel scan kernels as phase programs (kernels/cuda/phase_program.h): thread
// c of the grid owns channel c of the B·D channels and walks time, neighbouring threads on
// neighbouring channels (coalesced along D). One phase, no shared memory, no synchronisation.
// Fastest when B·D alone fills the GPU or T is short; long sequences over few channels go to
// scan_tiled.h.
//
// A thread walks time in chunks of kSimpleChunk steps (walk_steps): it reads all of a chunk's
// inputs before it writes any output. A step at a time, every step waited a full memory latency
// (the reads of step t + 1 cannot be issued ahead of step t's writes, which may alias them), and at
// a training step's sizes (8 192 channels, 60 steps) the backward took ~72 µs on an H200; a chunk
// waits once.
#pragma once
#include "kernels/cuda/phase_program.h"

namespace minrnn::core::grid {

constexpr int kSimpleThreads = 128;
// Steps whose reads a thread has in flight at once: 16 made the float backward kernels spill
// registers (cuobjdump --dump-resource-usage, sm_90), 8 does not.
constexpr int kSimpleChunk = 8;

// What every simple kernel shares: its grid, one phase, nothing between phases.
template <typename A>
struct SimpleGrid {
  static constexpr int kThreads = kSimpleThreads;
  static constexpr int kPhases = 1;
  struct Regs : Exchange<A> {};
  struct Shared {};
  int64_t B, L, D;

  MINRNN_HOST_DEVICE int64_t blocks() const { return (B * D + kThreads - 1) / kThreads; }
  MINRNN_HOST_DEVICE int64_t rounds() const { return 1; }
  static constexpr MINRNN_HOST_DEVICE Step step(int) { return {Boundary::kNone, 0}; }
  MINRNN_HOST_DEVICE int64_t channel(const Thread& th) const {
    return th.block * kThreads + th.index;
  }
};

// A channel's L steps, t = 0 … L − 1 (or L − 1 … 0, kReverse), kSimpleChunk at a time
// (walk_in_chunks): read(t) for every step of a chunk, then use(t, what read(t) gave) in turn.
template <bool kReverse, typename Read, typename Use>
MINRNN_HOST_DEVICE void walk_steps(int64_t L, Read read, Use use) {
  const auto t = [L](int64_t n) { return kReverse ? L - 1 - n : n; };
  walk_in_chunks<kSimpleChunk>(
      L, [&](int64_t n) { return read(t(n)); },
      [&](int64_t n, decltype(read(int64_t(0))) x) { use(t(n), x); });
}

template <typename T, typename A, typename Coef, typename Mem>
struct SimpleForward : SimpleGrid<A> {
  Coef coef;
  typename Mem::template In<T> h0;
  typename Mem::template Out<T> h, h_last;

  MINRNN_HOST_DEVICE void phase(int, int64_t, const Thread& th, typename SimpleForward::Regs&,
                                typename SimpleForward::Shared&) const {
    const int64_t L = this->L, D = this->D, c = this->channel(th);
    if (c >= this->B * D) return;
    const int64_t base = channel_base(c, L, D), in = input_base(c, L, D, coef.stride);
    A state = static_cast<A>(h0[c]);
    walk_steps<false>(
        L, [&](int64_t t) { return coef.read(in + t * coef.stride); },
        [&](int64_t t, typename Coef::Raw raw) {
          A a_t, b_t;
          coef.coefficients(raw, a_t, b_t);
          state = a_t * state + b_t;
          h[base + t * D] = static_cast<T>(state);
        });
    h_last[c] = static_cast<T>(state);
  }
};

// Reverse scan with the gates shifted by one step: g_t = grad_h_t + a_{t+1} g_{t+1}.
template <typename T, typename A, typename Coef, typename Mem>
struct SimpleBackward : SimpleGrid<A> {
  Coef coef;
  typename Mem::template In<T> h, h0, grad_h, grad_last;
  typename Mem::template Out<T> d_first, d_second, dh0;

  MINRNN_HOST_DEVICE void phase(int, int64_t, const Thread& th, typename SimpleBackward::Regs&,
                                typename SimpleBackward::Shared&) const {
    const int64_t L = this->L, D = this->D, c = this->channel(th);
    if (c >= this->B * D) return;
    const int64_t base = channel_base(c, L, D), in = input_base(c, L, D, coef.stride);
    struct Loaded {
      typename Coef::Raw raw;
      A grad, h_prev;
    };
    A carry = static_cast<A>(grad_last[c]);
    walk_steps<true>(
        L,
        [&](int64_t t) {
          const int64_t i = base + t * D;
          return Loaded{coef.read(in + t * coef.stride), static_cast<A>(grad_h[i]),
                        t > 0 ? static_cast<A>(h[i - D]) : static_cast<A>(h0[c])};
        },
        [&](int64_t t, Loaded x) {
          const A g = x.grad + carry;
          carry =
              coef.backward_from(in + t * coef.stride, x.raw, g, x.h_prev, d_first, d_second) * g;
        });
    dh0[c] = static_cast<T>(carry);
  }
};

// Complex recurrence h_t = a_t h_{t−1} + b_t on (re, im) planes, accumulated in A; the backward
// carries conj(a_{t+1}) g_{t+1} and writes ∇b_t = g_t, ∇a_t = g_t conj(h_{t−1}) (see
// scan_complex.cpp).
template <typename P>
struct Planes {
  P re, im;
};

template <typename T, typename A, typename Mem>
struct ComplexForward : SimpleGrid<A> {
  using In = Planes<typename Mem::template In<T>>;
  using Out = Planes<typename Mem::template Out<T>>;
  In a, b, h0;
  Out h, h_last;

  MINRNN_HOST_DEVICE void phase(int, int64_t, const Thread& th, typename ComplexForward::Regs&,
                                typename ComplexForward::Shared&) const {
    const int64_t L = this->L, D = this->D, c = this->channel(th);
    if (c >= this->B * D) return;
    const int64_t base = channel_base(c, L, D);
    A hr = static_cast<A>(h0.re[c]), hi = static_cast<A>(h0.im[c]);
    struct Loaded {
      A ar, ai, br, bi;
    };
    walk_steps<false>(
        L,
        [&](int64_t t) {
          const int64_t i = base + t * D;
          return Loaded{static_cast<A>(a.re[i]), static_cast<A>(a.im[i]), static_cast<A>(b.re[i]),
                        static_cast<A>(b.im[i])};
        },
        [&](int64_t t, Loaded x) {
          const int64_t i = base + t * D;
          const A next_re = x.ar * hr - x.ai * hi + x.br;
          hi = x.ar * hi + x.ai * hr + x.bi;
          hr = next_re;
          h.re[i] = static_cast<T>(hr);
          h.im[i] = static_cast<T>(hi);
        });
    h_last.re[c] = static_cast<T>(hr);
    h_last.im[c] = static_cast<T>(hi);
  }
};

template <typename T, typename A, typename Mem>
struct ComplexBackward : SimpleGrid<A> {
  using In = Planes<typename Mem::template In<T>>;
  using Out = Planes<typename Mem::template Out<T>>;
  In a, h, h0, grad_h, grad_last;
  Out da, db, dh0;

  MINRNN_HOST_DEVICE void phase(int, int64_t, const Thread& th, typename ComplexBackward::Regs&,
                                typename ComplexBackward::Shared&) const {
    const int64_t L = this->L, D = this->D, c = this->channel(th);
    if (c >= this->B * D) return;
    const int64_t base = channel_base(c, L, D);
    A cr = static_cast<A>(grad_last.re[c]), ci = static_cast<A>(grad_last.im[c]);
    struct Loaded {
      A grad_re, grad_im, prev_re, prev_im, ar, ai;
    };
    walk_steps<true>(
        L,
        [&](int64_t t) {
          const int64_t i = base + t * D;
          return Loaded{static_cast<A>(grad_h.re[i]),
                        static_cast<A>(grad_h.im[i]),
                        static_cast<A>(t > 0 ? h.re[i - D] : h0.re[c]),
                        static_cast<A>(t > 0 ? h.im[i - D] : h0.im[c]),
                        static_cast<A>(a.re[i]),
                        static_cast<A>(a.im[i])};
        },
        [&](int64_t t, Loaded x) {
          const int64_t i = base + t * D;
          const A gr = x.grad_re + cr, gi = x.grad_im + ci;
          db.re[i] = static_cast<T>(gr);
          db.im[i] = static_cast<T>(gi);
          da.re[i] = static_cast<T>(gr * x.prev_re + gi * x.prev_im);
          da.im[i] = static_cast<T>(gi * x.prev_re - gr * x.prev_im);
          cr = x.ar * gr + x.ai * gi;
          ci = x.ar * gi - x.ai * gr;
        });
    dh0.re[c] = static_cast<T>(cr);
    dh0.im[c] = static_cast<T>(ci);
  }
};

}  // namespace minrnn::core::grid
