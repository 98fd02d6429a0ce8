// The inference path of TransformerStack (models/transformer.h) for a whole window at a time:
//   x += proj(causal_attention(qkv(LN(x))));   x += MLP(LN(x))
// A decision agent reads only the newest state token, so with last_only the top layer computes
// keys and values for the window but the query, attention row, projection and MLP for that one
// token. Why no KV cache across env steps: once the window slides, every token's layer-2 input
// changes (it attended to a token that has left), so only layer 1's keys would survive — see
// docs/agent.md.
#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "infer/pack.h"
#include "infer/packed_backbone.h"
#include "models/transformer.h"

namespace minrnn::core {
namespace {

using cpu::Dense;
using cpu::Norm;
using cpu::reserve;

struct Layer {
  Norm norm_attn;
  Dense q, kv, proj;  // the attention's qkv projection as its query rows and key/value rows
  cpu::ResidualMlp mlp;
};

class PackedTransformerStack final : public PackedBackbone {
 public:
  explicit PackedTransformerStack(const TransformerStack& stack) : heads_(stack.n_heads()) {
    for (const auto& block : stack.blocks()) {
      Layer l;
      l.norm_attn = cpu::pack_norm(*block.norm_attn);
      const int64_t D = block.norm_attn->options.normalized_shape()[0];
      l.q = cpu::pack_dense_rows(*block.attn->qkv, 0, D);
      l.kv = cpu::pack_dense_rows(*block.attn->qkv, D, 2 * D);
      l.proj = cpu::pack_dense(*block.attn->proj);
      l.mlp = cpu::pack_mlp(*block.norm_mlp, *block.mlp);
      layers_.push_back(std::move(l));
    }
    d_ = layers_.front().norm_attn.dim;
    norm_out_ = cpu::pack_norm(*stack.norm_out());
  }

  bool streaming() const override { return false; }

  void run(float* x, int64_t n, float* y, bool last_only) override {
    const int64_t B = batch_, D = d_;
    const int64_t rows = B * n;
    for (size_t i = 0; i < layers_.size(); ++i) {
      const Layer& l = layers_[i];
      const bool top_last = last_only && i + 1 == layers_.size();
      float* normed = reserve(normed_, rows * D);
      cpu::layer_norm(l.norm_attn, x, rows, normed);
      // (B, n, 3D) rows of [q, k, v]: keys and values for every token, queries only for those
      // whose output is read (the top layer's last token when last_only).
      float* qkv = reserve(qkv_, rows * 3 * D);
      cpu::dense(l.kv, normed, rows, qkv + D, false, D, 3 * D);
      const int64_t first_query = top_last ? n - 1 : 0;
      if (top_last) {
        cpu::dense(l.q, normed + (n - 1) * D, B, qkv + (n - 1) * 3 * D, false, n * D, n * 3 * D);
      } else {
        cpu::dense(l.q, normed, rows, qkv, false, D, 3 * D);
      }
      float* att = reserve(att_, rows * D);  // (B, n − first_query, D)
      attention(qkv, n, first_query, att);
      const int64_t out_rows = B * (n - first_query);
      if (top_last) cpu::keep_last_rows(x, B, n, D);
      cpu::dense(l.proj, att, out_rows, x, /*accumulate=*/true);
      cpu::residual_mlp(l.mlp, x, out_rows, scratch_);
      if (top_last) {
        cpu::layer_norm(norm_out_, x, B, y);
        return;
      }
    }
    cpu::layer_norm(norm_out_, x, rows, y);
  }

 private:
  // Causal softmax(Q Kᵀ / √d_h) V per sequence and head, for queries first_query .. n − 1.
  void attention(const float* qkv, int64_t n, int64_t first_query, float* att) {
    const int64_t D = d_, dh = D / heads_, nq = n - first_query, ld = 3 * D;
    const float scale = 1.0f / std::sqrt(float(dh));
    float* scores = reserve(scores_, nq * n + dh * n);
    float* keys_t = scores + nq * n;  // (dh, n): Kᵀ as the product's B
    for (int64_t b = 0; b < batch_; ++b) {
      const float* base = qkv + b * n * ld;
      for (int64_t h = 0; h < heads_; ++h) {
        const float* q = base + first_query * ld + h * dh;
        const float* v = base + 2 * D + h * dh;
        cpu::transpose(n, dh, base + D + h * dh, ld, keys_t);
        cpu::gemm_ab(nq, n, dh, q, ld, keys_t, n, 0.0f, scores, n);
        for (int64_t r = 0; r < nq; ++r) {
          float* s = scores + r * n;
          const int64_t visible = first_query + r + 1;  // keys 0 .. t
          float m = -std::numeric_limits<float>::infinity();
          for (int64_t j = 0; j < visible; ++j) m = std::max(m, s[j] * scale);
          float sum = 0;
          for (int64_t j = 0; j < visible; ++j) sum += (s[j] = cpu::cpu_expf(s[j] * scale - m));
          const float inv = 1.0f / sum;
          for (int64_t j = 0; j < visible; ++j) s[j] *= inv;
          std::fill(s + visible, s + n, 0.0f);
        }
        cpu::gemm_ab(nq, dh, n, scores, n, v, ld, 0.0f, att + b * nq * D + h * dh, D);
      }
    }
  }

  std::vector<Layer> layers_;
  Norm norm_out_;
  int64_t heads_ = 1;
  std::vector<float> normed_, qkv_, att_, scores_, scratch_;
};

}  // namespace

std::unique_ptr<PackedBackbone> make_packed_transformer(const TransformerStack& stack) {
  return std::make_unique<PackedTransformerStack>(stack);
}

}  // namespace minrnn::core
