// The one-thread-per-channel scan kernels as phase programs (kernels/cuda/phase_program.h): thread
// c of the grid owns channel c of the B·D channels and walks time, neighbouring threads on
// neighbouring channels (coalesced along D). One phase, no shared memory, no synchronisation.
// Fastest when B·D alone fills the GPU or T is short; long sequences over few channels go to
// scan_tiled.h.
//
// A thread walks time in chunks of kSimpleChunk steps: it reads all of a chunk's inputs before it
// writes any output. A step at a time, every step waited a full memory latency (the reads of step
// t + 1 cannot be issued ahead of step t's writes, which may alias them), and at a training
// step's sizes (8 192 channels, 60 steps) the backward took ~72 µs on an H200; a chunk waits once.
#pragma once
#include "kernels/cuda/phase_program.h"

namespace minrnn::core::grid {

constexpr int kSimpleThreads = 128;
constexpr int kSimpleChunk = 16;  // steps whose reads a thread has in flight at once

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
    for (int64_t t0 = 0; t0 < L; t0 += kSimpleChunk) {
      A a_t[kSimpleChunk], b_t[kSimpleChunk];
      MINRNN_UNROLL for (int k = 0; k < kSimpleChunk; ++k) {
        if (t0 + k < L) coef.load(in + (t0 + k) * coef.stride, a_t[k], b_t[k]);
      }
      MINRNN_UNROLL for (int k = 0; k < kSimpleChunk; ++k) {
        if (t0 + k >= L) break;
        state = a_t[k] * state + b_t[k];
        h[base + (t0 + k) * D] = static_cast<T>(state);
      }
    }
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
    A carry = static_cast<A>(grad_last[c]);
    // Chunks from the last step back; k = 0 is a chunk's latest step.
    for (int64_t t1 = L - 1; t1 >= 0; t1 -= kSimpleChunk) {
      typename Coef::Raw raw[kSimpleChunk];
      A grad[kSimpleChunk], h_prev[kSimpleChunk];
      MINRNN_UNROLL for (int k = 0; k < kSimpleChunk; ++k) {
        const int64_t t = t1 - k, i = base + t * D;
        if (t < 0) break;
        raw[k] = coef.read(in + t * coef.stride);
        grad[k] = static_cast<A>(grad_h[i]);
        h_prev[k] = t > 0 ? static_cast<A>(h[i - D]) : static_cast<A>(h0[c]);
      }
      MINRNN_UNROLL for (int k = 0; k < kSimpleChunk; ++k) {
        const int64_t t = t1 - k;
        if (t < 0) break;
        const A g = grad[k] + carry;
        carry =
            coef.backward_from(in + t * coef.stride, raw[k], g, h_prev[k], d_first, d_second) * g;
      }
    }
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
    for (int64_t t = 0; t < L; ++t) {
      const int64_t i = base + t * D;
      const A ar = static_cast<A>(a.re[i]), ai = static_cast<A>(a.im[i]);
      const A next_re = ar * hr - ai * hi + static_cast<A>(b.re[i]);
      hi = ar * hi + ai * hr + static_cast<A>(b.im[i]);
      hr = next_re;
      h.re[i] = static_cast<T>(hr);
      h.im[i] = static_cast<T>(hi);
    }
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
    for (int64_t t = L - 1; t >= 0; --t) {
      const int64_t i = base + t * D;
      const A gr = static_cast<A>(grad_h.re[i]) + cr, gi = static_cast<A>(grad_h.im[i]) + ci;
      const A pr = static_cast<A>(t > 0 ? h.re[i - D] : h0.re[c]);
      const A pi = static_cast<A>(t > 0 ? h.im[i - D] : h0.im[c]);
      db.re[i] = static_cast<T>(gr);
      db.im[i] = static_cast<T>(gi);
      da.re[i] = static_cast<T>(gr * pr + gi * pi);
      da.im[i] = static_cast<T>(gi * pr - gr * pi);
      const A ar = static_cast<A>(a.re[i]), ai = static_cast<A>(a.im[i]);
      cr = ar * gr + ai * gi;
      ci = ar * gi - ai * gr;
    }
    dh0.re[c] = static_cast<T>(cr);
    dh0.im[c] = static_cast<T>(ci);
  }
};

}  // namespace minrnn::core::grid
