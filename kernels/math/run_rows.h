// A pack's runs stacked as one model (ops/run_axis.h), as a kernel sees them: the rows of every
// run one after the other, `per_run` each (0: the rows of one lone run). Each run's parameters
// are its row of a stacked array, its dropout seed its own base, and its elements counted from
// its first row, so a run's values and masks are those it gets alone.
#pragma once
#include <cstdint>

#include "kernels/math/divider.h"
#include "kernels/math/dropout_math.h"

namespace minrnn::core {

// A row's run by a Divider (a multiply-high and a shift) where the row is in its range: a join's
// threads divided a row by per_run three times, a 64-bit division ~20 instructions each, in
// kernels that wait on issuing instructions rather than on memory.
struct RunRows {
  int64_t per_run = 0;
  Divider by_run;
  RunRows(int64_t rows_per_run = 0)  // NOLINT: {rows_per_run} reads as what it is
      : per_run(rows_per_run),
        by_run(Divider::fits(1, rows_per_run) ? Divider::of(rows_per_run) : Divider{}) {}
  MINRNN_SHARED_INLINE int64_t run(int64_t row) const {
    if (per_run <= 0) return 0;
    const bool fast = row < Divider::kLimit && per_run < Divider::kLimit;
    return fast ? by_run.quotient(static_cast<uint32_t>(row)) : row / per_run;
  }
  // The row's index among its run's rows (`run` its run, where the caller has it already).
  MINRNN_SHARED_INLINE int64_t local(int64_t row, int64_t run) const { return row - run * per_run; }
  MINRNN_SHARED_INLINE int64_t local(int64_t row) const { return local(row, run(row)); }
  // The run's dropout: its base (one a run, `seed_base` their array, or null) added.
  MINRNN_SHARED_INLINE HashedDropout dropout_of(const HashedDropout& d, const uint64_t* seed_base,
                                                int64_t run) const {
    return d.with_base(seed_base ? seed_base + run : nullptr);
  }
};

}  // namespace minrnn::core
