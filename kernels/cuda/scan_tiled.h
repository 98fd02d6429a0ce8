// The tiled scan kernels for long sequences, as phase programs (kernels/cuda/phase_program.h).
//
// A block of 256 threads owns C neighbouring channels (C = 8 or 32) and walks T in tiles of
// kTile = (256 / C) · kSteps steps. Thread (slot s, channel j) of the block, j = index % C,
// s = index / C, holds kSteps consecutive steps of the tile in registers:
//   load      read a_t, b_t of its steps (each element once; the C threads of one slot read C
//             neighbouring channels of one time row, a coalesced segment), scan them from a zero
//             state: h_t = local_t + prod_t · x with x the state entering the chunk, and the
//             chunk's summary x → A x + B;
//   warp scan the 32 / C slots of a warp combine their summaries in registers with shuffles
//             (Hillis–Steele, log2(32 / C) steps), then one more shuffle gives each slot the
//             composition of the slots before it in its warp;
//   carry     the warps' totals go through shared memory; one thread per channel chains them from
//             the state carried over from the previous tile (h0 for the first) and leaves each
//             warp's start state and the next tile's carry in shared memory;
//   store     each thread turns its start state into its h_t and writes each once.
// The backward is the same program on the reverse recurrence g_t = grad_h_t + a_{t+1} g_{t+1}:
// tiles from the last, slots mapped to chunks from the end of the tile, so the carry still flows
// from lower to higher slots and the same shuffles apply.
#pragma once
#include "kernels/cuda/phase_program.h"

namespace minrnn::core::grid {

constexpr int kTiledThreads = 256;
constexpr int kTiledSteps = 8;  // steps a thread keeps in registers per tile

constexpr int log2_of(int n) {
  return n <= 1 ? 0 : 1 + log2_of(n / 2);
}

// Geometry, shared memory and the phases both directions share; C = channels per block.
template <typename A, typename Mem, int C>
struct TiledGrid {
  static_assert(C > 0 && C <= kWarpSize && kWarpSize % C == 0, "C must divide the warp");
  static constexpr int kThreads = kTiledThreads;
  static constexpr int kSteps = kTiledSteps;
  static constexpr int kSlots = kThreads / C;          // chunks of a tile
  static constexpr int kWarpSlots = kWarpSize / C;     // chunks of a tile one warp holds
  static constexpr int kWarps = kThreads / kWarpSize;  // = the warps' totals chained per channel
  static constexpr int kScanSteps = log2_of(kWarpSlots);
  static constexpr int64_t kTile = int64_t(kSlots) * kSteps;
  // Phases of one round (= one tile); the warp-scan steps are 1 .. kScanSteps.
  static constexpr int kLoad = 0;
  static constexpr int kWarpTotal = kScanSteps + 1;
  static constexpr int kCarry = kScanSteps + 2;
  static constexpr int kStore = kScanSteps + 3;
  static constexpr int kPhases = kScanSteps + 4;

  struct Regs : Exchange<A> {
    Pair<A> sum;   // the summary of this chunk, then of the chunks up to it in its warp
    Pair<A> excl;  // the composition of the chunks before it in its warp
  };
  struct Shared {
    typename Mem::template Array<A, kWarps * C> total_a, total_b, start;
    typename Mem::template Array<A, C> carry;
  };

  int64_t B, L, D;

  MINRNN_HOST_DEVICE int64_t blocks() const { return (B * D + C - 1) / C; }
  MINRNN_HOST_DEVICE int64_t rounds() const { return (L + kTile - 1) / kTile; }
  // After the load and each scan step a shuffle (distance C, 2C, 4C, … slots of C lanes), then
  // one of C for the exclusive prefix; barriers around the shared-memory carry.
  static constexpr MINRNN_HOST_DEVICE Step step(int p) {
    return p >= kWarpTotal   ? Step{Boundary::kBarrier, 0}
           : kScanSteps == 0 ? Step{Boundary::kNone, 0}
           : p == kScanSteps ? Step{Boundary::kShuffleUp, C}
                             : Step{Boundary::kShuffleUp, C << p};
  }

  struct Lane {
    int j, slot, slot_in_warp, warp;
    int64_t channel;
    bool valid;
  };
  MINRNN_HOST_DEVICE Lane lane(const Thread& th) const {
    const int j = th.index % C, slot = th.index / C;
    const int64_t channel = th.block * C + j;
    return {j, slot, slot % kWarpSlots, th.index / kWarpSize, channel, channel < B * D};
  }

  // x → later(earlier(x)).
  static MINRNN_HOST_DEVICE Pair<A> compose(const Pair<A>& earlier, const Pair<A>& later) {
    return {later.a * earlier.a, later.a * earlier.b + later.b};
  }

  // Scan step p (1 .. kScanSteps): regs.in holds the summary 2^(p−1) slots back.
  MINRNN_HOST_DEVICE void scan_step(int p, const Lane& ln, Regs& r) const {
    if (ln.slot_in_warp >= (1 << (p - 1))) r.sum = compose(r.in, r.sum);
    r.out = r.sum;
  }

  MINRNN_HOST_DEVICE void warp_total(const Lane& ln, Regs& r, Shared& sh) const {
    r.excl = ln.slot_in_warp > 0 ? r.in : Pair<A>{A(1), A(0)};
    if (ln.slot_in_warp == kWarpSlots - 1) {
      sh.total_a[ln.warp * C + ln.j] = r.sum.a;
      sh.total_b[ln.warp * C + ln.j] = r.sum.b;
    }
  }

  // One thread per channel: the state entering each warp's chunks, and the tile's outgoing state
  // (the next tile's carry; on the last tile, the result `last`).
  template <typename T, typename In, typename Out>
  MINRNN_HOST_DEVICE void carry(const Thread& th, int64_t round, Shared& sh, In first,
                                Out last) const {
    if (th.index >= C) return;
    const Lane ln = lane(th);
    A x = round > 0 ? A(sh.carry[ln.j]) : ln.valid ? static_cast<A>(first[ln.channel]) : A(0);
    for (int w = 0; w < kWarps; ++w) {
      sh.start[w * C + ln.j] = x;
      x = A(sh.total_a[w * C + ln.j]) * x + A(sh.total_b[w * C + ln.j]);
    }
    sh.carry[ln.j] = x;
    if (round == rounds() - 1 && ln.valid) last[ln.channel] = static_cast<T>(x);
  }

  // The state entering this thread's chunk.
  MINRNN_HOST_DEVICE A chunk_start(const Lane& ln, const Regs& r, Shared& sh) const {
    const A x = sh.start[ln.warp * C + ln.j];
    return r.excl.a * x + r.excl.b;
  }
};

template <typename T, typename A, typename Coef, typename Mem, int C>
struct TiledForward : TiledGrid<A, Mem, C> {
  using G = TiledGrid<A, Mem, C>;
  struct Regs : G::Regs {
    A prod[G::kSteps], local[G::kSteps];  // h_t = local_t + prod_t · (state entering the chunk)
  };
  Coef coef;
  typename Mem::template In<T> h0;
  typename Mem::template Out<T> h, h_last;

  MINRNN_HOST_DEVICE void phase(int p, int64_t round, const Thread& th, Regs& r,
                                typename G::Shared& sh) const {
    const typename G::Lane ln = this->lane(th);
    const int64_t L = this->L, D = this->D, base = channel_base(ln.channel, L, D);
    const int64_t in = input_base(ln.channel, L, D, coef.stride);
    const int64_t t0 = round * G::kTile + int64_t(ln.slot) * G::kSteps;
    if (p == G::kLoad) {
      A prod = A(1), local = A(0);
      MINRNN_UNROLL
      for (int k = 0; k < G::kSteps; ++k) {
        A a_t = A(1), b_t = A(0);  // past the end: the identity
        if (ln.valid && t0 + k < L) coef.load(in + (t0 + k) * coef.stride, a_t, b_t);
        prod = a_t * prod;
        local = a_t * local + b_t;
        r.prod[k] = prod;
        r.local[k] = local;
      }
      r.sum = {prod, local};
      r.out = r.sum;
    } else if (p < G::kWarpTotal) {
      this->scan_step(p, ln, r);
    } else if (p == G::kWarpTotal) {
      this->warp_total(ln, r, sh);
    } else if (p == G::kCarry) {
      this->template carry<T>(th, round, sh, h0, h_last);
    } else {
      const A x = this->chunk_start(ln, r, sh);
      MINRNN_UNROLL
      for (int k = 0; k < G::kSteps; ++k) {
        if (ln.valid && t0 + k < L)
          h[base + (t0 + k) * D] = static_cast<T>(r.local[k] + r.prod[k] * x);
      }
    }
  }
};

// g_t = grad_h_t + x_t with x_t = a_{t+1} g_{t+1} the carry from the step after (grad_last after
// the last step); within a chunk g_t = local_t + prod_t · x, x the carry entering at its end.
template <typename T, typename A, typename Coef, typename Mem, int C>
struct TiledBackward : TiledGrid<A, Mem, C> {
  using G = TiledGrid<A, Mem, C>;
  struct Regs : G::Regs {
    A prod[G::kSteps], local[G::kSteps];
    typename Coef::Raw raw[G::kSteps];  // the source's inputs, read once in the load phase
  };
  Coef coef;
  typename Mem::template In<T> h, h0, grad_h, grad_last;
  typename Mem::template Out<T> d_first, d_second, dh0;

  MINRNN_HOST_DEVICE void phase(int p, int64_t round, const Thread& th, Regs& r,
                                typename G::Shared& sh) const {
    const typename G::Lane ln = this->lane(th);
    const int64_t L = this->L, D = this->D, base = channel_base(ln.channel, L, D);
    const int64_t in = input_base(ln.channel, L, D, coef.stride);
    const int64_t tile = this->rounds() - 1 - round;  // tiles from the last
    const int64_t t0 = tile * G::kTile + int64_t(G::kSlots - 1 - ln.slot) * G::kSteps;
    if (p == G::kLoad) {
      A prod = A(1), carry = A(0);
      MINRNN_UNROLL
      for (int k = G::kSteps - 1; k >= 0; --k) {
        typename Coef::Raw raw{};
        A a_t = A(1), grad = A(0);  // past the end: the identity
        if (ln.valid && t0 + k < L) {
          raw = coef.read(in + (t0 + k) * coef.stride);
          a_t = coef.gate(raw);
          grad = static_cast<A>(grad_h[base + (t0 + k) * D]);
        }
        r.raw[k] = raw;
        r.prod[k] = prod;
        r.local[k] = grad + carry;
        carry = a_t * r.local[k];
        prod = a_t * prod;
      }
      r.sum = {prod, carry};
      r.out = r.sum;
    } else if (p < G::kWarpTotal) {
      this->scan_step(p, ln, r);
    } else if (p == G::kWarpTotal) {
      this->warp_total(ln, r, sh);
    } else if (p == G::kCarry) {
      this->template carry<T>(th, round, sh, grad_last, dh0);
    } else {
      const A x = this->chunk_start(ln, r, sh);
      MINRNN_UNROLL
      for (int k = 0; k < G::kSteps; ++k) {
        const int64_t t = t0 + k;
        if (!ln.valid || t >= L) continue;
        const int64_t i = base + t * D;
        const A h_prev = t > 0 ? static_cast<A>(h[i - D]) : static_cast<A>(h0[ln.channel]);
        coef.backward_from(in + t * coef.stride, r.raw[k], r.local[k] + r.prod[k] * x, h_prev,
                           d_first, d_second);
      }
    }
  }
};

}  // namespace minrnn::core::grid
