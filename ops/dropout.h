// Dropout whose mask is a hash of (seed, element index) instead of a stored tensor of draws.
//
// LibTorch's CPU dropout draws its Bernoulli mask one element at a time from the locked mt19937
// generator (~40 ns an element on the development machine): the 7 dropouts of a 3-layer minGRU
// agent's training step (3.4 M elements) cost more than all its matrix products. Here each step
// draws one 64-bit seed from the default CPU generator (so torch::manual_seed and a checkpoint's
// generator state still decide every mask) and element i is kept when the high 32 bits of
// splitmix64(seed + (i + 1)·γ) are ≥ p·2³²: independent Bernoulli(1 − p) draws, computed in
// parallel, regenerated in the backward instead of saved.
//
// CPU and CUDA float32/float64 tensors run one fused pass (on CUDA the phase program of
// kernels/cuda/pointwise_programs.h, the CPU pass's arithmetic: the same bits); other devices and
// dtypes run the same hash in torch ops (dropout_mask_reference), which the tests compare the
// passes with.
#pragma once
#include <torch/torch.h>

#include <cstdint>

#include "kernels/math/dropout_math.h"

namespace minrnn::core {

// dropout(y): y ⊙ mask / (1 − p) when training and p > 0, else y itself.
torch::Tensor fused_dropout(const torch::Tensor& y, double p, bool training);
// x + dropout(y) in one pass (the residual connection of every block); x and y of one shape.
torch::Tensor add_dropout(const torch::Tensor& x, const torch::Tensor& y, double p, bool training);

// The same with the seed given (no draw from the generator): what the functions above run.
// `seed_base` (optional, an int64 scalar on y's device) is added to the seed when the pass runs.
torch::Tensor add_dropout_seeded(const torch::Tensor& x, const torch::Tensor& y, double p,
                                 uint64_t seed, const torch::Tensor& seed_base = {});

// The seeds of one training step's dropouts. Outside a scope, each dropout call draws its seed
// from the default CPU generator. Inside one (rl/train_step.h opens one per step), call k takes
// base + k·2³²·γ: the k-th run of 2³² draws of one splitmix64 stream, so no two calls of the step
// share a seed. (An element's draw hashes its index into its call's 32-bit key, so two calls' masks
// are one 2³² sequence at offsets apart: element i of one shares its draw with element i + δ of
// another, δ as random as the keys, never the same neuron but with chance 2⁻³²; harmless below
// tensors of ~2³² elements.) With `base` a tensor (one int64 on the device), the base is read when each pass
// runs: a CUDA graph captured once draws new masks on every replay from the base the host writes
// before it. One scope per thread at a time; scopes nest.
//
// A pack's runs stacked as one model (ops/run_axis.h) hold one base each: `device_base` of P
// int64s. A pass over all of them adds each run's base in its kernel (next_runs_dropout); else
// they run a run at a time, each under its run's scope (DropoutSeeds(pack, r)), so run r's calls
// take the seeds they take alone. A lone run's dropout under the P bases is refused.
class DropoutSeeds {
 public:
  explicit DropoutSeeds(uint64_t base);
  explicit DropoutSeeds(torch::Tensor device_base);
  // Run `run` of a pack's scope: its base, and the pack's call count going on (continue_after).
  DropoutSeeds(const DropoutSeeds& pack, int64_t run);
  ~DropoutSeeds();
  DropoutSeeds(const DropoutSeeds&) = delete;
  DropoutSeeds& operator=(const DropoutSeeds&) = delete;

  // The innermost scope of this thread, or null.
  static DropoutSeeds* current();
  // The next call's seed: the full seed (a host base), or the offset added to the device base.
  uint64_t next();
  const torch::Tensor& device_base() const { return device_base_; }
  // How many runs' bases the scope holds: 1 but for a pack's.
  int64_t runs() const { return device_base_.defined() ? device_base_.numel() : 1; }
  // Calls taken so far; a pack's scope goes on after its runs' scopes took `calls` in all.
  uint64_t calls() const { return calls_; }
  void continue_after(uint64_t calls) { calls_ = calls; }

 private:
  uint64_t base_ = 0;
  torch::Tensor device_base_;
  uint64_t calls_ = 0;
  DropoutSeeds* outer_;
};
// The next dropout call as a pass fused into another op takes it (ops/residual_norm.h,
// ops/attention_probs.h), as add_dropout's would run: the threshold p·2³² and scale 1/(1 − p), and
// the call's seed (the scope's next, or one drawn from the generator). On CUDA with a device base
// the seed is the offset the kernel adds the base's value to (a replayed graph's step), and `base`
// that base; else the full seed and no base. Off (not training, or p = 0): threshold 0, scale 1,
// and no seed taken. A plain value: an autograd function takes it as an argument, not as an
// input, and keeps it for its backward.
struct PassDropout {
  HashedDropout dropout;
  torch::Tensor base;
  const uint64_t* base_pointer() const;                    // for the kernel: null without a base
  void save(torch::autograd::AutogradContext* ctx) const;  // as saved_data's dropout_* keys
  static PassDropout saved(torch::autograd::AutogradContext* ctx);
};
PassDropout next_pass_dropout(double p, bool training, const torch::Device& device);
// The same for one pass over all of a pack's stacked runs (ops/run_axis.h) on CUDA, whose kernel
// adds each run's own base: under a pack's scope with its bases on `device` (else, training with
// p > 0, refused).
PassDropout next_runs_dropout(double p, bool training, const torch::Device& device);
// Whether next_runs_dropout can give `runs` runs their own seeds on `device`.
bool runs_dropout_ready(double p, bool training, const torch::Device& device, int64_t runs);

// The keep-mask (bool, y's shape) for a seed, by torch ops on y's device.
torch::Tensor dropout_mask_reference(const torch::Tensor& y, double p, uint64_t seed);

}  // namespace minrnn::core
