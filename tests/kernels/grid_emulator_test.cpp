// The grid emulator itself: small kernels with one fault each must be reported, their correct
// twins must not, and a shuffle must deliver what __shfl_up_sync (__shfl_xor_sync) delivers.
#include "tests/kernels/grid_emulator.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace grid = minrnn::core::grid;
namespace emu = minrnn::testing::emu;

namespace {

// Two phases over one block of 64 threads: thread t writes shared[t], then (after `between`)
// reads shared[read_shift(t)] and writes it to out[write_index(t)].
struct TwoPhase {
  static constexpr int kThreads = 64, kPhases = 2;
  struct Regs : grid::Exchange<float> {};
  struct Shared {
    emu::Array<float, kThreads> s;
  };
  grid::Boundary between = grid::Boundary::kBarrier;
  int read_shift = 1;    // phase 1 reads shared[t + read_shift]
  int write_stride = 1;  // and writes out[t · write_stride] (0: every thread out[0])
  bool write_shared = true;
  emu::In<float> in{nullptr};
  emu::Out<float> out{nullptr};

  int64_t blocks() const { return 1; }
  int64_t rounds() const { return 1; }
  grid::Step step(int p) const { return {p == 0 ? between : grid::Boundary::kBarrier, 3}; }
  void phase(int p, int64_t, const grid::Thread& th, Regs& r, Shared& sh) const {
    const int t = th.index;
    if (p == 0) {
      if (write_shared) sh.s[t] = in[t];
      r.out = {float(t), 0.0f};
    } else {
      const float v = sh.s[(t + read_shift) % kThreads];
      out[int64_t(t) * write_stride] = v + 0 * r.in.a;
    }
  }
};

TwoPhase kernel(grid::Boundary between, int read_shift, int write_stride) {
  TwoPhase k;
  k.between = between;
  k.read_shift = read_shift;
  k.write_stride = write_stride;
  return k;
}

struct Outcome {
  emu::Log log;
  std::vector<float> out;
};
Outcome launch(TwoPhase k, int64_t out_size = TwoPhase::kThreads,
               int64_t in_size = TwoPhase::kThreads) {
  std::vector<float> values(in_size);
  for (int64_t i = 0; i < in_size; ++i) values[i] = float(i);
  emu::Buffer<float> in("in", values), out("out", out_size);
  k.in = in.in();
  k.out = out.out();
  Outcome r;
  emu::run(k, r.log);
  out.check_written(r.log);
  r.out = out.data();
  return r;
}

}  // namespace

TEST(GridEmulator, CorrectKernelPasses) {
  Outcome r = launch(kernel(grid::Boundary::kBarrier, 1, 1));
  EXPECT_TRUE(r.log.ok()) << r.log.summary();
  for (int t = 0; t < 64; ++t) EXPECT_EQ(r.out[t], float((t + 1) % 64));
}

TEST(GridEmulator, FlagsAMissingBarrier) {
  // Thread t reads what thread t + 1 wrote with nothing between: a race on the GPU. Run in order
  // on the CPU it even gives the wrong value for the last thread only; the tracking sees all 63.
  Outcome r = launch(kernel(grid::Boundary::kNone, 1, 1));
  ASSERT_FALSE(r.log.ok());
  EXPECT_NE(r.log.summary().find("same barrier interval"), std::string::npos) << r.log.summary();
  // Reading one's own element needs no barrier.
  EXPECT_TRUE(launch(kernel(grid::Boundary::kNone, 0, 1)).log.ok());
}

TEST(GridEmulator, FlagsDoubleAndMissingWrites) {
  Outcome r = launch(kernel(grid::Boundary::kBarrier, 0, 0));  // every thread writes out[0]
  ASSERT_FALSE(r.log.ok());
  EXPECT_NE(r.log.summary().find("out[0] written twice"), std::string::npos) << r.log.summary();
  EXPECT_NE(r.log.summary().find("63 element(s) never written"), std::string::npos)
      << r.log.summary();
}

TEST(GridEmulator, FlagsOutOfBoundsAndUninitialisedShared) {
  Outcome oob = launch(kernel(grid::Boundary::kBarrier, 0, 2), 100);  // out[2t] past 100
  EXPECT_NE(oob.log.summary().find("written out of bounds"), std::string::npos)
      << oob.log.summary();
  Outcome short_in = launch(kernel(grid::Boundary::kBarrier, 0, 1), 64, 10);
  EXPECT_NE(short_in.log.summary().find("in[10] read out of bounds"), std::string::npos)
      << short_in.log.summary();
  TwoPhase unwritten = kernel(grid::Boundary::kBarrier, 0, 1);
  unwritten.write_shared = false;
  EXPECT_NE(launch(unwritten).log.summary().find("read before any thread wrote it"),
            std::string::npos);
}

TEST(GridEmulator, ShuffleUpDeliversWhatShflUpSyncDelivers) {
  // __shfl_up_sync(mask, v, 3): lane l gets lane l − 3's value, lanes 0..2 keep their own; warps
  // (lanes 0..31, 32..63) do not mix.
  struct Probe : TwoPhase {
    void phase(int p, int64_t, const grid::Thread& th, Regs& r, Shared&) const {
      if (p == 0) r.out = {float(th.index), 0.0f};
      if (p == 1) out[th.index] = r.in.a;
    }
  };
  Probe k;
  k.between = grid::Boundary::kShuffleUp;
  emu::Buffer<float> in("in", std::vector<float>(64)), out("out", 64);
  k.in = in.in();
  k.out = out.out();
  emu::Log log;
  emu::run(k, log);
  ASSERT_TRUE(log.ok()) << log.summary();
  for (int t = 0; t < 64; ++t) {
    const int lane = t % 32;
    EXPECT_EQ(out.data()[t], float(lane >= 3 ? t - 3 : t)) << "thread " << t;
  }
}

// A row's butterfly (RowGrid::xor_level, add_received): lane l receives lane l ^ delta's value, and
// every lane of each warp ends with the sum `halve` leaves in lane 0, bit for bit.
struct Butterfly {
  static constexpr int kThreads = 64, kLevels = grid::RowGrid::kLevels, kPhases = kLevels + 1;
  struct Regs : grid::Exchange<float> {};
  struct Shared {};
  emu::In<float> in{nullptr};
  emu::Out<float> out{nullptr};
  int64_t blocks() const { return 1; }
  int64_t rounds() const { return 1; }
  grid::Step step(int p) const {
    return p < kLevels ? grid::RowGrid::xor_level(p + 1) : grid::Step{grid::Boundary::kNone, 0};
  }
  void phase(int p, int64_t, const grid::Thread& th, Regs& r, Shared&) const {
    if (p == 0) {
      r.out = {in[th.index], -in[th.index]};
      return;
    }
    grid::RowGrid::add_received(r);
    if (p == kLevels) out[th.index] = r.out.a;
  }
};

TEST(GridEmulator, AButterflyOfShflXorSyncIsTheHalvingsTotalInEveryLane) {
  std::vector<float> values(Butterfly::kThreads);
  for (int t = 0; t < Butterfly::kThreads; ++t)
    values[t] = std::ldexp(1.0f + 0.37f * t, t % 23 - 11);
  emu::Buffer<float> in("in", values), out("out", Butterfly::kThreads);
  Butterfly k;
  k.in = in.in();
  k.out = out.out();
  emu::Log log;
  emu::run(k, log);
  out.check_written(log);
  ASSERT_TRUE(log.ok()) << log.summary();
  for (int w = 0; w < 2; ++w) {
    std::vector<float> a(values.begin() + 32 * w, values.begin() + 32 * (w + 1));
    for (int half = 16; half >= 1; half /= 2) {
      for (int l = 0; l < half; ++l) a[l] = a[l] + a[l + half];
    }
    for (int l = 0; l < 32; ++l) EXPECT_EQ(out.data()[32 * w + l], a[0]) << "thread " << 32 * w + l;
  }
}
