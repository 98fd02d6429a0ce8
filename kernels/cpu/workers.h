// Threads that share one caller's large matrix products: one episode's window re-encoding (a few
// dozen rows times a 1 MB weight at embed 256) left every core but one idle, where a BLAS had
// split it. A product's column strips are independent (each element's sum is formed whole by one
// thread, kernels/cpu/float_loops.h), so splitting them changes no bit of the result.
//
// The products sit three calls under the layer code (a Dense inside a residual MLP inside a
// layer), which has no business knowing about threads: the engine that owns an io::Workers (the
// one pool, io/workers.h) makes it the calling thread's for the length of a step (WorkersScope),
// and gemm_ab asks current_workers(). Without a scope a product runs on the calling thread alone,
// as it always did.
#pragma once
#include "io/workers.h"

namespace minrnn::core::cpu {

// The Workers the calling thread's products split over; nullptr (alone) outside a WorkersScope.
io::Workers* current_workers();

// Makes `workers` (nullptr: none) the calling thread's for the scope's life, restoring the one
// before after.
class WorkersScope {
 public:
  explicit WorkersScope(io::Workers* workers);
  ~WorkersScope();
  WorkersScope(const WorkersScope&) = delete;
  WorkersScope& operator=(const WorkersScope&) = delete;

 private:
  io::Workers* previous_;
};

}  // namespace minrnn::core::cpu
