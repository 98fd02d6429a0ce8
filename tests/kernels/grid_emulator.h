// Runs a CUDA kernel written as a phase program (kernels/cuda/phase_program.h) on the CPU: every
// block, every thread, phase by phase, with the boundaries the GPU has between phases — a barrier,
// a warp shuffle (lanes of a warp exchange regs.out → regs.in exactly as __shfl_up_sync or
// __shfl_xor_sync does), or nothing. Every access is checked:
//   global outputs  an element written twice in one launch (by a wrong index, or two threads) or
//                   never written (check_written), an index out of bounds;
//   global inputs   an index out of bounds;
//   shared memory   an element written twice between two barriers, read before it was ever
//                   written, read or written by one thread while another writes it between two
//                   barriers (a missing __syncthreads), an index out of bounds.
// Threads of a phase run one after the other, so a race gives no wrong number here: the checks
// above are what catch it. Problems are collected in a Log, never thrown mid-phase.
#pragma once
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "kernels/cuda/phase_program.h"

namespace minrnn::testing::emu {

using core::grid::Boundary;

class Log {
 public:
  void add(const std::string& problem) {
    if (++count_ <= 10) text_ += "  " + problem + "\n";
    last_ = problem;
  }
  bool ok() const { return count_ == 0; }
  int64_t count() const { return count_; }
  std::string summary() const {
    return std::to_string(count_) + " problem(s); the first:\n" + text_ +
           (count_ > 10 ? "  ...\n  " + last_ + "\n" : "");
  }

 private:
  int64_t count_ = 0;
  std::string text_, last_;
};

// Where the emulator is; every checked access reads it.
struct Context {
  int64_t block = 0, round = 0;
  int thread = 0, phase = 0;
  uint64_t epoch = 1;  // + 1 at every barrier (and every block): "between two barriers"
  Log* log = nullptr;
  std::string where() const {
    std::ostringstream s;
    s << "block " << block << " thread " << thread << " round " << round << " phase " << phase;
    return s.str();
  }
};
inline Context*& current() {
  static thread_local Context* context = nullptr;
  return context;
}
inline void problem(const std::string& what) {
  Context* c = current();
  if (c && c->log) c->log->add(what + " (" + c->where() + ")");
}

template <typename T>
T poison() {
  if constexpr (std::numeric_limits<T>::has_quiet_NaN) return std::numeric_limits<T>::quiet_NaN();
  return T(-12345);
}

// A global-memory array: the kernel reads it through in(), writes it through out().
template <typename T>
class Buffer;

// `offset`: where a view into the buffer starts (a column block of a gate projection).
template <typename T>
struct In {
  const Buffer<T>* buf;
  int64_t offset = 0;
  T operator[](int64_t i) const { return buf->read(offset + i); }
};
template <typename T>
struct Out {
  Buffer<T>* buf;
  int64_t offset = 0;
  struct Ref {
    Buffer<T>* buf;
    int64_t i;
    Ref& operator=(T v) {
      buf->write(i, v);
      return *this;
    }
  };
  Ref operator[](int64_t i) const { return {buf, offset + i}; }
};

// The views from element n on (kernels/cuda/phase_program.h's advanced, for the emulator's memory).
template <typename T>
In<T> advanced(In<T> p, int64_t n) {
  return {p.buf, p.offset + n};
}
template <typename T>
Out<T> advanced(Out<T> p, int64_t n) {
  return {p.buf, p.offset + n};
}

template <typename T>
class Buffer {
 public:
  // An input with these values, or an output of n elements filled with a poison value.
  Buffer(std::string name, std::vector<T> values)
      : name_(std::move(name)), data_(std::move(values)), epoch_(data_.size(), 0) {}
  Buffer(std::string name, size_t n) : Buffer(std::move(name), std::vector<T>(n, poison<T>())) {}

  In<T> in(int64_t offset = 0) const { return {this, offset}; }
  Out<T> out(int64_t offset = 0) { return {this, offset}; }
  const std::vector<T>& data() const { return data_; }

  T read(int64_t i) const {
    if (i < 0 || i >= static_cast<int64_t>(data_.size())) {
      problem(name_ + "[" + std::to_string(i) + "] read out of bounds (size " +
              std::to_string(data_.size()) + ")");
      return T(0);
    }
    return data_[i];
  }
  void write(int64_t i, T v) {
    if (i < 0 || i >= static_cast<int64_t>(data_.size())) {
      problem(name_ + "[" + std::to_string(i) + "] written out of bounds (size " +
              std::to_string(data_.size()) + ")");
      return;
    }
    if (epoch_[i] != 0) {
      problem(name_ + "[" + std::to_string(i) + "] written twice" +
              (current() && epoch_[i] == current()->epoch ? " in one phase" : ""));
    }
    epoch_[i] = current() ? current()->epoch : 1;
    data_[i] = v;
  }
  // Every element written by the launch(es) since it was made.
  void check_written(Log& log) const {
    check_written(log, [](int64_t) { return true; });
  }
  // Every element where written(i), and no other (a layout's padding), written.
  template <typename Where>
  void check_written(Log& log, Where written) const {
    int64_t missing = 0, first = -1, stray = 0, first_stray = -1;
    for (size_t i = 0; i < data_.size(); ++i) {
      const int64_t at = static_cast<int64_t>(i);
      if (written(at) && epoch_[i] == 0 && missing++ == 0) first = at;
      if (!written(at) && epoch_[i] != 0 && stray++ == 0) first_stray = at;
    }
    if (missing > 0) {
      log.add(name_ + ": " + std::to_string(missing) + " element(s) never written, the first [" +
              std::to_string(first) + "]");
    }
    if (stray > 0) {
      log.add(name_ + ": " + std::to_string(stray) + " element(s) written outside the layout, " +
              "the first [" + std::to_string(first_stray) + "]");
    }
  }

 private:
  std::string name_;
  std::vector<T> data_;
  std::vector<uint64_t> epoch_;  // when each element was written; 0: never
};

// A __shared__ array of the emulated block, starting as poison.
template <typename T, int N>
class Array {
 public:
  Array() {
    for (int i = 0; i < N; ++i) v_[i] = poison<T>();
  }
  struct Ref {
    Array* a;
    int i;
    operator T() const { return a->read(i); }
    Ref& operator=(T x) {
      a->write(i, x);
      return *this;
    }
  };
  Ref operator[](int i) { return {this, i}; }

 private:
  static constexpr int kMany = -2;
  bool in_bounds(int i, const char* what) const {
    if (i >= 0 && i < N) return true;
    problem(std::string("shared[") + std::to_string(i) + "] " + what + " out of bounds (size " +
            std::to_string(N) + ")");
    return false;
  }
  T read(int i) {
    if (!in_bounds(i, "read")) return T(0);
    const Context& c = *current();
    if (write_epoch_[i] == 0) {
      problem("shared[" + std::to_string(i) + "] read before any thread wrote it");
    } else if (write_epoch_[i] == c.epoch && writer_[i] != c.thread) {
      problem("shared[" + std::to_string(i) + "] read while thread " + std::to_string(writer_[i]) +
              " writes it in the same barrier interval");
    }
    if (read_epoch_[i] != c.epoch) {
      read_epoch_[i] = c.epoch;
      reader_[i] = c.thread;
    } else if (reader_[i] != c.thread) {
      reader_[i] = kMany;
    }
    return v_[i];
  }
  void write(int i, T x) {
    if (!in_bounds(i, "written")) return;
    const Context& c = *current();
    if (write_epoch_[i] == c.epoch) {
      problem("shared[" + std::to_string(i) + "] written twice in one barrier interval (threads " +
              std::to_string(writer_[i]) + " and " + std::to_string(c.thread) + ")");
    } else if (read_epoch_[i] == c.epoch && reader_[i] != c.thread) {
      problem("shared[" + std::to_string(i) +
              "] written while another thread reads it in the same barrier interval");
    }
    write_epoch_[i] = c.epoch;
    writer_[i] = c.thread;
    v_[i] = x;
  }

  T v_[N];
  uint64_t write_epoch_[N] = {}, read_epoch_[N] = {};
  int writer_[N] = {}, reader_[N] = {};
};

// The Mem of kernels/cuda/phase_program.h for emulated kernels.
struct Memory {
  template <typename T>
  using In = emu::In<T>;
  template <typename T>
  using Out = emu::Out<T>;
  template <typename T, int N>
  using Array = emu::Array<T, N>;
};

// Runs kernel k over its whole grid; problems go to `log`.
template <typename K>
void run(const K& k, Log& log) {
  using core::grid::kWarpSize;
  static_assert(K::kThreads % kWarpSize == 0, "whole warps only");
  Context context;
  context.log = &log;
  Context* outer = current();
  current() = &context;
  std::vector<typename K::Regs> regs(K::kThreads);
  std::vector<decltype(regs[0].out)> sent(kWarpSize);
  for (int64_t block = 0; block < k.blocks(); ++block) {
    auto shared = std::make_unique<typename K::Shared>();
    regs.assign(K::kThreads, typename K::Regs{});
    ++context.epoch;
    context.block = block;
    for (int64_t round = 0; round < k.rounds(); ++round) {
      context.round = round;
      for (int p = 0; p < K::kPhases; ++p) {
        context.phase = p;
        for (int t = 0; t < K::kThreads; ++t) {
          context.thread = t;
          k.phase(p, round, core::grid::Thread{block, t}, regs[t], *shared);
        }
        const core::grid::Step step = k.step(p);
        if (step.boundary == Boundary::kBarrier) {
          ++context.epoch;
        } else if (step.boundary == Boundary::kShuffleUp ||
                   step.boundary == Boundary::kShuffleXor) {
          const bool up = step.boundary == Boundary::kShuffleUp;
          for (int w = 0; w < K::kThreads; w += kWarpSize) {
            for (int l = 0; l < kWarpSize; ++l) sent[l] = regs[w + l].out;
            for (int l = 0; l < kWarpSize; ++l) {
              const int from = up ? (l >= step.delta ? l - step.delta : l) : l ^ step.delta;
              regs[w + l].in = sent[from];
            }
          }
        }
      }
    }
  }
  current() = outer;
}

}  // namespace minrnn::testing::emu
