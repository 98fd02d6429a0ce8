// The inference path of HgrnStack (models/hgrn.h): per layer
//   x += out_proj(LN(σ(g) ⊙ [Re h, Im h])),  h_t = λ e^{iθ} h_{t−1} + (1 − λ) c_t;
//   x += w3(w1(LN(x)) ⊙ SiLU(w2(LN(x))))
// with each projection one product over all chunk tokens and the complex recurrence in order.
#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "infer/pack.h"
#include "infer/packed_backbone.h"
#include "models/hgrn.h"

namespace minrnn::core {
namespace {

using cpu::Dense;
using cpu::Norm;
using cpu::reserve;

// One token of the complex recurrence over d channels: h ← λ e^{iθ} h + (1 − λ) SiLU(c), out ←
// σ(g) ⊙ [Re h, Im h]. Branch-free per channel so each clone vectorizes; no two arrays overlap.
MINRNN_VECTOR_CLONES
void hgrn_token(const float* __restrict p, int64_t d, const float* __restrict gamma,
                const float* __restrict cos_theta, const float* __restrict sin_theta,
                float* __restrict hr, float* __restrict hi, float* __restrict out) {
  using cpu::sigmoid;
  for (int64_t j = 0; j < d; ++j) {  // p = [μ, c_re, c_im, g_re, g_im]
    const float g = gamma[j];
    float s_pos, s_neg;  // σ(μ), σ(−μ)
    cpu::sigmoid_pair(p[j], s_pos, s_neg);
    const float lambda = g + (1 - g) * s_pos;
    const float keep = (1 - g) * s_neg;  // 1 − λ, precise as μ → 1
    const float a_re = lambda * cos_theta[j], a_im = lambda * sin_theta[j];
    const float c_re = p[d + j] * sigmoid(p[d + j]);
    const float c_im = p[2 * d + j] * sigmoid(p[2 * d + j]);
    const float re = a_re * hr[j] - a_im * hi[j] + keep * c_re;
    const float im = a_re * hi[j] + a_im * hr[j] + keep * c_im;
    hr[j] = re;
    hi[j] = im;
    out[j] = sigmoid(p[3 * d + j]) * re;
    out[d + j] = sigmoid(p[4 * d + j]) * im;
  }
}

struct Layer {
  Norm norm_mix, norm_out2d, norm_glu;
  Dense in_proj, out_proj, w1, w2, w3;
  std::vector<float> gamma, cos_theta, sin_theta;  // (d)
  std::vector<float> h;                            // (B, 2d): [Re h, Im h]
};

class PackedHgrnStack final : public PackedBackbone {
 public:
  explicit PackedHgrnStack(const HgrnStack& stack) {
    // γ as HgrnStack::step computes it, once: it does not depend on the tokens.
    const torch::Tensor gamma = stack.lower_bounds().detach().to(torch::kCPU, torch::kFloat32);
    for (size_t i = 0; i < stack.blocks().size(); ++i) {
      const HgrnBlockImpl& block = *stack.blocks()[i];
      const HgruImpl& hgru = *block.hgru;
      Layer l;
      l.norm_mix = cpu::pack_norm(*block.norm_mix);
      l.in_proj = cpu::pack_dense(*hgru.in_proj);
      l.norm_out2d = cpu::pack_norm(*hgru.norm);
      l.out_proj = cpu::pack_dense(*hgru.out_proj);
      l.norm_glu = cpu::pack_norm(*block.norm_glu);
      l.w1 = cpu::pack_dense(*block.glu->w1);
      l.w2 = cpu::pack_dense(*block.glu->w2);
      l.w3 = cpu::pack_dense(*block.glu->w3);
      l.gamma = cpu::to_vector(gamma[static_cast<int64_t>(i)]);
      auto theta = hgru.theta.detach().to(torch::kCPU, torch::kFloat32);
      l.cos_theta = cpu::to_vector(torch::cos(theta));
      l.sin_theta = cpu::to_vector(torch::sin(theta));
      width_ = hgru.width();
      layers_.push_back(std::move(l));
    }
    d_ = layers_.front().norm_mix.dim;
    norm_out_ = cpu::pack_norm(*stack.norm_out());
    for (auto& l : layers_) state_.push_back({&l.h, 2 * width_});
    reset(1);
  }

  bool streaming() const override { return true; }

  void run(float* x, int64_t n, float* y, bool last_only) override {
    const int64_t B = batch_, D = d_, d = width_;
    int64_t rows = B * n;
    for (size_t i = 0; i < layers_.size(); ++i) {
      Layer& l = layers_[i];
      float* normed = reserve(normed_, rows * D);
      cpu::layer_norm(l.norm_mix, x, rows, normed);
      float* pre = reserve(pre_, rows * 5 * d);
      cpu::dense(l.in_proj, normed, rows, pre);
      float* gated = reserve(gated_, rows * 2 * d);
      scan(l, pre, n, gated);
      if (last_only && i + 1 == layers_.size() && n > 1) {
        cpu::keep_last_rows(x, B, n, D);
        cpu::keep_last_rows(gated, B, n, 2 * d);
        rows = B;
      }
      cpu::layer_norm(l.norm_out2d, gated, rows, gated);
      cpu::dense(l.out_proj, gated, rows, x, /*accumulate=*/true);
      glu(l, x, rows);
    }
    cpu::layer_norm(norm_out_, x, rows, y);
  }

 private:
  // The complex recurrence over each sequence's n tokens; writes σ(g) ⊙ [Re h_t, Im h_t] per token.
  void scan(Layer& l, const float* pre, int64_t n, float* gated) const {
    const int64_t d = width_;
    for (int64_t b = 0; b < batch_; ++b) {
      float* hr = l.h.data() + b * 2 * d;
      float* hi = hr + d;
      for (int64_t t = 0; t < n; ++t) {
        hgrn_token(pre + (b * n + t) * 5 * d, d, l.gamma.data(), l.cos_theta.data(),
                   l.sin_theta.data(), hr, hi, gated + (b * n + t) * 2 * d);
      }
    }
  }

  // x += w3(w1(LN(x)) ⊙ SiLU(w2(LN(x)))).
  void glu(const Layer& l, float* x, int64_t rows) {
    const int64_t hidden = l.w1.out;
    float* normed = reserve(normed_, rows * d_);
    cpu::layer_norm(l.norm_glu, x, rows, normed);
    float* a = reserve(glu_a_, rows * hidden);
    float* b = reserve(glu_b_, rows * hidden);
    cpu::dense(l.w1, normed, rows, a);
    cpu::dense(l.w2, normed, rows, b);
    cpu::silu(b, rows * hidden);
    for (int64_t i = 0; i < rows * hidden; ++i) a[i] *= b[i];
    cpu::dense(l.w3, a, rows, x, /*accumulate=*/true);
  }

  std::vector<Layer> layers_;
  Norm norm_out_;
  int64_t width_ = 0;
  std::vector<float> normed_, pre_, gated_, glu_a_, glu_b_;
};

}  // namespace

std::unique_ptr<PackedBackbone> make_packed_hgrn(const HgrnStack& stack) {
  return std::make_unique<PackedHgrnStack>(stack);
}

}  // namespace minrnn::core
