#include "infer/packed_backbone.h"

#include <stdexcept>

#include "models/hgrn.h"
#include "models/minrnn_stack.h"
#include "models/transformer.h"

namespace minrnn::core {

void PackedBackbone::reset(int64_t batch) {
  if (batch < 1) throw std::invalid_argument("PackedBackbone::reset: batch must be >= 1");
  // The buffers that must grow are allocated before any is touched; the others are zeroed in
  // place, allocating nothing (a window re-encoding resets every env step).
  std::vector<std::vector<float>> grown;
  for (size_t i = 0; i < state_.size(); ++i) {
    const size_t n = static_cast<size_t>(batch * state_[i].per_sequence);
    if (state_[i].values->capacity() >= n) continue;
    grown.resize(state_.size());
    grown[i].assign(n, 0.0f);
  }
  for (size_t i = 0; i < state_.size(); ++i) {
    if (!grown.empty() && !grown[i].empty()) {
      state_[i].values->swap(grown[i]);
    } else {
      state_[i].values->assign(static_cast<size_t>(batch * state_[i].per_sequence), 0.0f);
    }
  }
  batch_ = batch;
}

// One file per backbone (infer/packed_minrnn.cpp, infer/packed_hgrn.cpp,
// infer/packed_transformer.cpp).
std::unique_ptr<PackedBackbone> make_packed_minrnn(const MinRnnStack& stack);
std::unique_ptr<PackedBackbone> make_packed_hgrn(const HgrnStack& stack);
std::unique_ptr<PackedBackbone> make_packed_transformer(const TransformerStack& stack);

std::unique_ptr<PackedBackbone> pack_backbone(const SequenceModel& model) {
  if (auto* m = dynamic_cast<const MinRnnStack*>(&model)) return make_packed_minrnn(*m);
  if (auto* h = dynamic_cast<const HgrnStack*>(&model)) return make_packed_hgrn(*h);
  if (auto* t = dynamic_cast<const TransformerStack*>(&model)) return make_packed_transformer(*t);
  throw std::invalid_argument("pack_backbone: no inference path for backbone module '" +
                              model.name() + "'");
}

}  // namespace minrnn::core
