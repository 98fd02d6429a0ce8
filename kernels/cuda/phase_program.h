// The scan kernels as *phase programs*, so one body runs both on a GPU and in the host emulator
// (tests/kernels/grid_emulator.h). Plain C++ (no CUDA headers): nvcc and the host compiler both
// compile it.
//
// A kernel K is a struct (its launch arguments) with
//   kThreads, kPhases                    threads per block; phases per round
//   blocks(), rounds()                   the grid size and how many times the phase list repeats
//   step(p)                              what separates phase p from the next (below)
//   Regs                                 one thread's registers kept across phases
//   Shared                               the block's shared memory
//   phase(p, round, thread, regs, shared) the code of phase p: straight-line code between two
//                                        synchronisation points, never itself synchronising.
// The control flow between synchronisation points is the same for every thread of a block (no
// thread returns early: a thread past the end only skips its loads and stores), which is what
// makes __syncthreads and full-warp shuffles legal and what lets the emulator run a phase as
// "every thread, one after the other".
//
// The GPU runs (kernels/cuda/scan.cu)   for round: for p: phase(p); cross(step(p))
// the emulator runs the same loop with every thread of a block inside each phase, checking that
// no element is written twice or read while another thread writes it within one barrier interval.
#pragma once
#include <cstdint>
#include <type_traits>

#include "kernels/math/scan_math.h"  // MINRNN_HOST_DEVICE

// Loops over a thread's registers: unrolled on the GPU so the arrays stay in registers.
#if defined(__CUDACC__)
#define MINRNN_UNROLL _Pragma("unroll")
#else
#define MINRNN_UNROLL
#endif

namespace minrnn::core::grid {

constexpr int kWarpSize = 32;

struct Thread {
  int64_t block;
  int index;  // threadIdx.x
};

// How many of a program's blocks each SM must be able to hold at once: __launch_bounds__'s second
// argument, which caps the registers a thread may take to allow it. 1 unless the program sets
// kMinBlocksPerSm (one whose usual grid fits the GPU in one wave only at that many).
template <typename K, typename = void>
struct MinBlocksPerSm {
  static constexpr int value = 0;
};
template <typename K>
struct MinBlocksPerSm<K, std::void_t<decltype(K::kMinBlocksPerSm)>> {
  static constexpr int value = K::kMinBlocksPerSm;
};

// What separates two phases.
enum class Boundary : int {
  kNone,        // nothing: the next phase may read only this thread's own registers and writes
  kBarrier,     // __syncthreads(): shared-memory writes before it are visible to the block after it
  kShuffleUp,   // regs.in = __shfl_up_sync(all lanes, regs.out, delta): lane l receives lane
                // l − delta's regs.out (its own where l < delta). Not a memory barrier.
  kShuffleXor,  // regs.in = __shfl_xor_sync(all lanes, regs.out, delta): lane l receives lane
                // l ^ delta's regs.out. Not a memory barrier.
};
struct Step {
  Boundary boundary;
  int delta;  // kShuffleUp only
};

// Two values a lane passes to another through a shuffle: the (A, B) of an affine map x → A x + B,
// the summary of a chunk of the scan.
template <typename A>
struct Pair {
  A a, b;
};
// Every kernel's Regs derive from this: what the framework shuffles.
template <typename A>
struct Exchange {
  Pair<A> out, in;
};

// The GPU's memory: plain pointers and arrays. The emulator's memory
// (tests/kernels/grid_emulator.h) has the same shape with every access checked.
struct DeviceMemory {
  template <typename T>
  using In = const T*;
  template <typename T>
  using Out = T*;
  template <typename T, int N>
  struct Array {
    T v[N];
    MINRNN_HOST_DEVICE T& operator[](int i) { return v[i]; }
  };
};

// The view of an array from element n on (a row's start): its elements then indexed by a small
// offset, which the compiler folds into the read's address (the emulator's views:
// tests/kernels/grid_emulator.h).
template <typename T>
MINRNN_HOST_DEVICE T* advanced(T* p, int64_t n) {
  return p + n;
}

// A barrier after every phase but the last: the step() of programs whose phases hand results to
// each other through shared memory.
constexpr MINRNN_HOST_DEVICE Step barrier_after_each(int p, int phases) {
  return {p + 1 < phases ? Boundary::kBarrier : Boundary::kNone, 0};
}

// n = 0 … count − 1, kChunk at a time: read(n) for every n of a chunk, then use(n, what read(n)
// gave) for each in turn, so a chunk's reads are in flight at once (a plain loop of reads and
// uses waits a memory latency every few steps: the compiler unrolls it little, and cannot move a
// read above a write that may alias it). The reads are predicated, not broken out of, and should
// do no arithmetic: arithmetic placed between two reads waits on the first, and the reads behind
// it wait too.
template <int kChunk, typename Read, typename Use>
MINRNN_HOST_DEVICE void walk_in_chunks(int64_t count, Read read, Use use) {
  for (int64_t first = 0; first < count; first += kChunk) {
    decltype(read(int64_t(0))) loaded[kChunk] = {};  // (past count: never used)
    MINRNN_UNROLL for (int k = 0; k < kChunk; ++k) {
      if (first + k < count) loaded[k] = read(first + k);
    }
    MINRNN_UNROLL for (int k = 0; k < kChunk; ++k) {
      if (first + k >= count) break;
      use(first + k, loaded[k]);
    }
  }
}

// sum + term(i) for i = first, first + stride, … below end, added in that order (walk_in_chunks).
// Sum: a float, or a struct of them with its own + (several sums walked together wait together).
template <int kChunk, typename Sum, typename Term>
MINRNN_HOST_DEVICE Sum ordered_sum(Sum sum, int64_t first, int64_t end, int64_t stride, Term term) {
  const int64_t count = end > first ? (end - first + stride - 1) / stride : 0;
  walk_in_chunks<kChunk>(
      count, [=](int64_t n) { return term(first + n * stride); },
      [&](int64_t, Sum v) { sum = sum + v; });
  return sum;
}

// The grid of a sum over many terms for each of many entries, in a fixed order: a block takes
// kLanes entries (a warp wide: neighbouring entries, coalesced loads) and kSlices slices of their
// terms; each thread sums its slice, then the slices halve across barriers (phases 1 … kLevels,
// `halve`) and slice 0 holds the totals for the last phase to write. Programs derive from it and
// give blocks() and phase().
struct SlicedSums {
  static constexpr int kLanes = kWarpSize, kSlices = 16, kLevels = 4;  // 2^kLevels slices
  static constexpr int kThreads = kLanes * kSlices;
  static constexpr int kPhases = kLevels + 2;
  MINRNN_HOST_DEVICE int64_t rounds() const { return 1; }
  static constexpr MINRNN_HOST_DEVICE Step step(int p) { return barrier_after_each(p, kPhases); }
  static MINRNN_HOST_DEVICE int lane(const Thread& th) { return th.index % kLanes; }
  static MINRNN_HOST_DEVICE int slice(const Thread& th) { return th.index / kLanes; }
  // Level 1 … kLevels: slice s < half adds slice s + half, entry by entry, in V.
  template <typename V = float, typename Array>
  static MINRNN_HOST_DEVICE void halve(Array& a, const Thread& th, int level) {
    const int half = kSlices >> level;
    if (slice(th) < half) {
      a[th.index] = static_cast<V>(a[th.index]) + static_cast<V>(a[th.index + half * kLanes]);
    }
  }
};

// The rows of a (rows, D) array, a warp each, 8 a block, PerLane channels a lane: D ≤ 32 · PerLane.
// FullRows: D is exactly 32 · PerLane (the launcher checks), so no channel is past a row's end.
template <int PerLane, bool FullRows = false>
struct RowGridOf {
  static constexpr int kLanes = kWarpSize, kWarps = 8, kThreads = kLanes * kWarps;
  static constexpr int kPerLane = PerLane, kMaxWidth = kLanes * kPerLane, kLevels = 5;  // 2^5 lanes
  int64_t rows, width;
  // The width a channel is checked against, in 32-bit arithmetic: a constant for full rows, where
  // the compiler then drops every check and a row's accesses share one address (a join's forward
  // issued 613 instructions a thread for 4 channels, and waited on issuing them more than on
  // memory: docs/benchmarks.md, 2026-11-28).
  MINRNN_HOST_DEVICE int row_width() const {
    return FullRows ? kMaxWidth : static_cast<int>(width);
  }
  MINRNN_HOST_DEVICE int64_t blocks() const { return (rows + kWarps - 1) / kWarps; }
  MINRNN_HOST_DEVICE int64_t rounds() const { return 1; }
  MINRNN_HOST_DEVICE int64_t row(const Thread& th) const {
    return th.block * kWarps + th.index / kLanes;
  }
  // Channel c of the lane whether or not the row has it (below width: it has): an offset from
  // the row's start affine in c, so a row's reads share one address and differ by immediates.
  static MINRNN_HOST_DEVICE int lane_channel(const Thread& th, int c) {
    return th.index % kLanes + c * kLanes;
  }
  // Channel c of the lane, or −1 past the row's end.
  MINRNN_HOST_DEVICE int64_t channel(const Thread& th, int c) const {
    const int64_t d = lane_channel(th, c);
    return d < width ? d : -1;
  }
  // One halving of the lanes' values in `a` (level 1 … kLevels): lane l < half joins lane
  // l + half's value into its own, by `join`.
  template <typename Array, typename Join>
  MINRNN_HOST_DEVICE static void halve_by(Array& a, const Thread& th, int level, Join join) {
    const int lane = th.index % kLanes, half = kLanes >> level;
    if (lane < half) a[th.index] = join(static_cast<float>(a[th.index]), a[th.index + half]);
  }
  template <typename Array>
  MINRNN_HOST_DEVICE static void halve(Array& a, const Thread& th, int level) {
    halve_by(a, th, level, [](float mine, float other) { return mine + other; });
  }
  template <typename Array>
  MINRNN_HOST_DEVICE static void halve_max(Array& a, const Thread& th, int level) {
    halve_by(a, th, level, [](float mine, float other) { return mine > other ? mine : other; });
  }
  template <typename Array>
  MINRNN_HOST_DEVICE static float row_total(Array& a, const Thread& th) {
    return a[th.index - th.index % kLanes];
  }
  // A row's lanes summed in registers, with no barrier: a butterfly whose level 1 … kLevels is the
  // boundary xor_level(level) (lane l receives lane l ^ (kLanes >> level)'s regs.out) followed by
  // add_received. Lane l < half adds as `halve` does, its partner adds the same two values the
  // other way round (a + b = b + a, bit for bit): every lane ends with `halve`'s row total.
  static constexpr MINRNN_HOST_DEVICE Step xor_level(int level) {
    return {Boundary::kShuffleXor, kLanes >> level};
  }
  template <typename R>
  MINRNN_HOST_DEVICE static void add_received(R& r) {
    r.out.a = r.out.a + r.in.a;
    r.out.b = r.out.b + r.in.b;
  }
};
// Rows of up to 256 channels. A program that keeps a row's channels in registers across its phases
// may take RowGridOf<4> where rows are at most 128 wide: half the registers, more blocks an SM.
using RowGrid = RowGridOf<8>;

// A row program's launcher for rows of `width`: f(lanes, full) with lanes
// std::integral_constant<int, Narrow> where the rows fit RowGridOf<Narrow>, else RowGrid's
// channels a lane, and full std::true_type where the rows are exactly that form's kMaxWidth.
template <int Narrow, typename F>
auto with_row_form(int64_t width, F&& f) {
  using Few = std::integral_constant<int, Narrow>;
  using Many = std::integral_constant<int, RowGrid::kPerLane>;
  if (width == RowGridOf<Narrow>::kMaxWidth) return f(Few{}, std::true_type{});
  if (width < RowGridOf<Narrow>::kMaxWidth) return f(Few{}, std::false_type{});
  if (width == RowGrid::kMaxWidth) return f(Many{}, std::true_type{});
  return f(Many{}, std::false_type{});
}
// The same for a program with no full form: f(lanes).
template <int Narrow, typename F>
auto with_lanes_for(int64_t width, F&& f) {
  return with_row_form<Narrow>(width, [&](auto lanes, auto) { return f(lanes); });
}

// The members of RowGridOf<PerLane, FullRows> that a program templated on them names (a dependent
// base's names are not found otherwise). Variadic: the grid's name holds a comma.
#define MINRNN_ROW_GRID_NAMES(...) \
  using __VA_ARGS__::kLanes;       \
  using __VA_ARGS__::kWarps;       \
  using __VA_ARGS__::kThreads;     \
  using __VA_ARGS__::kPerLane;     \
  using __VA_ARGS__::kMaxWidth;    \
  using __VA_ARGS__::kLevels;      \
  using __VA_ARGS__::rows;         \
  using __VA_ARGS__::width;        \
  using __VA_ARGS__::channel;      \
  using __VA_ARGS__::lane_channel; \
  using __VA_ARGS__::row_width;    \
  using __VA_ARGS__::xor_level;    \
  using __VA_ARGS__::add_received; \
  using __VA_ARGS__::halve;        \
  using __VA_ARGS__::halve_max;    \
  using __VA_ARGS__::row_total

// The flat channel index c ∈ [0, B·D) of a (B, T, D) tensor → offset of its t = 0 element. Channels
// adjacent in c are adjacent in memory (within a batch row), so threads on neighbouring channels
// make coalesced loads.
MINRNN_HOST_DEVICE int64_t channel_base(int64_t channel, int64_t L, int64_t D) {
  return (channel / D) * L * D + channel % D;
}

}  // namespace minrnn::core::grid
