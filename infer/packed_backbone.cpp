#include "infer/packed_backbone.h"

#include <stdexcept>

#include "models/hgrn.h"
#include "models/minrnn_stack.h"
#include "models/transformer.h"

namespace minrnn::core {

void PackedBackbone::reset(int64_t batch) {
  if (batch < 1) throw std::invalid_argument("PackedBackbone::reset: batch must be >= 1");
  batch_ = batch;
  reset_state();
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
