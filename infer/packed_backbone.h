// The inference path of a trained backbone: its weights packed once into plain buffers, its
// recurrent state and every scratch buffer owned here and reused, each layer a few matrix products
// (kernels/cpu/float_loops.h) over all new tokens at once with the gate math, LayerNorm, GELU and
// residual adds done in place. No autograd, no tensors, no allocation once the buffers have grown.
//
// Tokens arrive in chunks: n new tokens of each of B sequences, x (B, n, D) row-major. Within a
// layer the input projections of a chunk do not depend on the recurrence, so one product covers
// all B·n tokens and only the element-wise scan walks them in order. A decision agent's step is a
// chunk of three tokens (a_{t−1}, R_t, s_t) — one pass over the weights per env step instead of
// three — and a window re-encoding is one chunk of up to 3K − 1 tokens from a zero state.
//
// Not thread-safe: one PackedBackbone per thread. Results match the LibTorch modules in float32 to
// rounding (tests/infer/packed_backbone_test.cpp).
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "models/sequence_model.h"

namespace minrnn::core {

class PackedBackbone {
 public:
  PackedBackbone() = default;
  PackedBackbone(const PackedBackbone&) = delete;  // state_ points into the packing's own buffers
  PackedBackbone& operator=(const PackedBackbone&) = delete;
  virtual ~PackedBackbone() = default;
  int64_t d_model() const { return d_; }
  int64_t batch() const { return batch_; }
  // Whether state carries across run() calls; false for attention (each run is a whole window).
  virtual bool streaming() const = 0;
  // A fresh (zero) state for `batch` ≥ 1 sequences. All or none: a batch whose state cannot be
  // allocated (std::bad_alloc) leaves the state as it was.
  void reset(int64_t batch);
  // Runs n ≥ 1 new tokens of each sequence, x (batch, n, D), advancing the state. Writes y (batch,
  // n, D), or with last_only y (batch, D): each sequence's last token only, which lets the top
  // layer skip work for the others. x is used as scratch (overwritten).
  virtual void run(float* x, int64_t n, float* y, bool last_only) = 0;

 protected:
  // The recurrent state, registered by the packing constructor (none for attention, which keeps
  // nothing between windows): each buffer holds per_sequence values for each of batch_ sequences.
  struct StateBuffer {
    std::vector<float>* values;
    int64_t per_sequence;
  };
  std::vector<StateBuffer> state_;
  int64_t d_ = 0, batch_ = 1;  // d_: set by the packing constructor
};

// Packs a trained MinRnnStack, HgrnStack or TransformerStack (float32 copies of its weights; the
// module may be on any device and is not referenced afterwards). std::invalid_argument for any
// other SequenceModel.
std::unique_ptr<PackedBackbone> pack_backbone(const SequenceModel& model);

}  // namespace minrnn::core
