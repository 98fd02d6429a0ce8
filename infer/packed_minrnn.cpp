// The inference path of MinRnnStack (models/minrnn_stack.h): per layer
//   x += [down](scan(gates(conv?(LN(x)))));   x += MLP(LN(x))
// with the gates of all chunk tokens in one product and the recurrence walking them in order.
#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "infer/pack.h"
#include "infer/packed_backbone.h"
#include "models/minrnn_stack.h"

namespace minrnn::core {
namespace {

using cpu::Dense;
using cpu::Norm;
using cpu::reserve;

// One token of the recurrence over H channels, h ← a h + b and out ← h, with (a, b) loaded by the
// scan kernels' own coefficient source (kernels/math/scan_math.h: minGRU's GatedCoefficients,
// minLSTM's MinLstmCoefficients) over the token's gate projection p = [k | c] or [p | k | c], so
// inference and training compute the same gates. Branch-free per channel so each clone vectorizes
// (the cell and form are template arguments: a load under a run-time condition cannot be hoisted).
template <bool kLstm, bool kLogSpace>
MINRNN_VECTOR_CLONES void cell_token(const float* p, int64_t H, float* h, float* out) {
  using Lstm = scan_math::MinLstmCoefficients<float, float, kLogSpace>;
  using Gru = scan_math::GatedCoefficients<float, float, kLogSpace>;
  const auto coef = [&] {
    if constexpr (kLstm) {
      return Lstm{p, p + 2 * H, H, H};
    } else {
      return Gru{p, p + H, H};
    }
  }();
  for (int64_t c = 0; c < H; ++c) {
    float a, b;
    coef.load(c, a, b);
    h[c] = a * h[c] + b;
    out[c] = h[c];
  }
}

using CellToken = void (*)(const float* p, int64_t H, float* h, float* out);
CellToken cell_token_for(bool lstm, bool log_space) {
  if (lstm) return log_space ? cell_token<true, true> : cell_token<true, false>;
  return log_space ? cell_token<false, true> : cell_token<false, false>;
}

struct Layer {
  Norm norm_rnn;
  bool conv = false;
  int64_t kernel = 0;
  std::vector<float> conv_weight, conv_bias;  // (D, kernel), (D)
  Dense gates;                                // D → G·H
  Dense down;                                 // H → D; empty when H == D
  cpu::ResidualMlp mlp;
  // State, per sequence: h (B, H) and the conv's last kernel − 1 inputs (B, kernel − 1, D).
  std::vector<float> h, history;
};

class PackedMinRnnStack final : public PackedBackbone {
 public:
  explicit PackedMinRnnStack(const MinRnnStack& stack) {
    for (const auto& block : stack.blocks()) {
      const MinRnnImpl& rnn = *block->rnn;
      Layer l;
      l.norm_rnn = cpu::pack_norm(*block->norm_rnn);
      if (block->conv) {
        l.conv = true;
        l.kernel = block->conv->kernel();
        l.conv_weight = cpu::to_vector(block->conv->weight);
        l.conv_bias = cpu::to_vector(block->conv->bias);
      }
      l.gates = cpu::pack_dense(*rnn.gates);
      if (rnn.down) l.down = cpu::pack_dense(*rnn.down);
      l.mlp = cpu::pack_mlp(*block->norm_mlp, *block->mlp);
      layers_.push_back(std::move(l));
      cell_ = rnn.options().cell;
      log_space_ = rnn.options().log_space;
      hidden_ = rnn.hidden_size();
    }
    d_ = layers_.front().norm_rnn.dim;
    norm_out_ = cpu::pack_norm(*stack.norm_out());
    for (auto& l : layers_) {
      state_.push_back({&l.h, hidden_});
      if (l.conv) state_.push_back({&l.history, (l.kernel - 1) * d_});
    }
    reset(1);
  }

  bool streaming() const override { return true; }

  void run(float* x, int64_t n, float* y, bool last_only) override {
    const int64_t B = batch_, D = d_, H = hidden_;
    const int64_t G = cell_ == CellKind::kMinGRU ? 2 : 3;
    int64_t rows = B * n;
    for (size_t i = 0; i < layers_.size(); ++i) {
      Layer& l = layers_[i];
      float* normed = reserve(normed_, rows * D);
      cpu::layer_norm(l.norm_rnn, x, rows, normed);
      if (l.conv) causal_conv(l, normed, n);
      float* pre = reserve(pre_, rows * G * H);
      cpu::dense(l.gates, normed, rows, pre);
      float* hseq = reserve(hseq_, rows * H);
      scan(pre, n, l.h.data(), hseq);
      // Above the top layer's recurrence only the last token of each sequence is read.
      if (last_only && i + 1 == layers_.size() && n > 1) {
        cpu::keep_last_rows(x, B, n, D);
        cpu::keep_last_rows(hseq, B, n, H);
        rows = B;
      }
      if (!l.down.weight_t.empty()) {
        cpu::dense(l.down, hseq, rows, x, /*accumulate=*/true);
      } else {
        cpu::add(x, hseq, rows * D);
      }
      cpu::residual_mlp(l.mlp, x, rows, scratch_);
    }
    cpu::layer_norm(norm_out_, x, rows, y);
  }

 private:
  // normed (B, n, D) ← depthwise causal conv over [history; normed]; history ← its last k − 1 rows.
  void causal_conv(Layer& l, float* normed, int64_t n) {
    const int64_t D = d_, k = l.kernel, P = k - 1 + n;
    float* padded = reserve(conv_, P * D);
    for (int64_t b = 0; b < batch_; ++b) {
      float* hist = l.history.data() + b * (k - 1) * D;
      float* xb = normed + b * n * D;
      std::copy_n(hist, (k - 1) * D, padded);
      std::copy_n(xb, n * D, padded + (k - 1) * D);
      for (int64_t t = 0; t < n; ++t) {
        float* out = xb + t * D;
        for (int64_t c = 0; c < D; ++c) {
          float s = l.conv_bias[c];
          for (int64_t j = 0; j < k; ++j) s += l.conv_weight[c * k + j] * padded[(t + j) * D + c];
          out[c] = s;
        }
      }
      std::copy_n(padded + n * D, (k - 1) * D, hist);
    }
  }

  // h_t over the n tokens of each sequence, in order, writing every h_t to hseq.
  void scan(const float* pre, int64_t n, float* h, float* hseq) const {
    const int64_t H = hidden_;
    const bool lstm = cell_ != CellKind::kMinGRU;
    const int64_t G = lstm ? 3 : 2;
    const CellToken token = cell_token_for(lstm, log_space_);
    for (int64_t b = 0; b < batch_; ++b) {
      for (int64_t t = 0; t < n; ++t) {
        token(pre + (b * n + t) * G * H, H, h + b * H, hseq + (b * n + t) * H);
      }
    }
  }

  std::vector<Layer> layers_;
  Norm norm_out_;
  CellKind cell_ = CellKind::kMinGRU;
  bool log_space_ = true;
  int64_t hidden_ = 0;
  std::vector<float> normed_, pre_, hseq_, conv_, scratch_;
};

}  // namespace

std::unique_ptr<PackedBackbone> make_packed_minrnn(const MinRnnStack& stack) {
  return std::make_unique<PackedMinRnnStack>(stack);
}

}  // namespace minrnn::core
