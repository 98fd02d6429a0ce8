// HGRN (Qin, Yang, Zhong 2023, "Hierarchically Gated Recurrent Neural Network", §3): a stack of
// pre-norm residual blocks, each an HGRU token mixer and a GLU channel mixer:
//   x = x + Dropout(HGRU_k(LN(x)));   x = x + Dropout(GLU(LN(x)))
// HGRU (§3.2, eqs. 2–3), per layer k with lower bound γ^k ∈ [0, 1)^d:
//   μ_t = σ(x W_μ + b_μ),  λ_t = γ^k + (1 − γ^k) ⊙ μ_t
//   c_t = SiLU(x W_cr + b_cr) + i SiLU(x W_ci + b_ci)
//   h_t = λ_t ⊙ exp(iθ) ⊙ h_{t−1} + (1 − λ_t) ⊙ c_t          (θ learnable, data-independent)
//   o_t = LayerNorm(σ(x W_g + b_g) ⊙ [Re h_t, Im h_t]) W_o + b_o
// Bounds: P = softmax(Γ, dim 0) over a (layers × d) parameter, γ^k = Σ_{i≤k} P_i − P_1, so γ^1 = 0
// and the bounds rise with depth without reaching 1. See docs/hgrn.md.
#pragma once
#include <torch/torch.h>

#include "models/sequence_model.h"

namespace minrnn::core {

struct HgrnOptions {
  int64_t d_model = 128;
  double expansion = 1.0;        // complex width d = round(expansion · d_model)
  double glu_ratio = 8.0 / 3.0;  // GLU hidden = round(glu_ratio · d_model): a 4× MLP's params
  double dropout = 0.1;          // on both residual branches
  bool sequential_scan = false;  // linear_scan_complex_sequential instead of the fast kernel
};

// The HGRU token mixer of one layer. Its lower bound comes from the stack (it depends on depth).
class HgruImpl : public torch::nn::Module {
 public:
  explicit HgruImpl(const HgrnOptions& options);
  // x (B,T,d_model), gamma (d): this layer's lower bound. h0: (B, 2d) = [Re, Im] or undefined
  // (zeros); the final state goes to *h_last when given. Returns (B,T,d_model).
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& gamma,
                        const torch::Tensor& h0 = {}, torch::Tensor* h_last = nullptr);
  // One token x_t (B,d_model); h (B,2d) or undefined (zeros) is replaced by h_t. O(1) per token.
  torch::Tensor step(const torch::Tensor& x_t, const torch::Tensor& gamma, torch::Tensor& h);

  int64_t width() const { return d_; }

  torch::nn::Linear in_proj{nullptr};   // d_model → [μ, c_re, c_im, g_re, g_im], 5d
  torch::Tensor theta;                  // (d) rotation angles
  torch::nn::LayerNorm norm{nullptr};   // over [Re h, Im h] gated, 2d
  torch::nn::Linear out_proj{nullptr};  // 2d → d_model

 private:
  struct Coefficients {
    torch::Tensor a_re, a_im, b_re, b_im, gate;  // h_t = a ⊙ h_{t−1} + b; gate (…, 2d)
  };
  Coefficients coefficients(const torch::Tensor& x, const torch::Tensor& gamma);
  torch::Tensor output(const torch::Tensor& gate, const torch::Tensor& h_re,
                       const torch::Tensor& h_im);

  HgrnOptions options_;
  int64_t d_ = 0;
};
TORCH_MODULE(Hgru);

// GLU channel mixer (Shazeer 2020, as HGRN uses it): (x W_1 ⊙ SiLU(x W_2)) W_3.
class GluImpl : public torch::nn::Module {
 public:
  GluImpl(int64_t d_model, int64_t hidden);
  torch::Tensor forward(const torch::Tensor& x);
  torch::nn::Linear w1{nullptr}, w2{nullptr}, w3{nullptr};
};
TORCH_MODULE(Glu);

class HgrnBlockImpl : public torch::nn::Module {
 public:
  explicit HgrnBlockImpl(const HgrnOptions& options);
  // (B,T,D) → (B,T',D): the recurrence runs over all T tokens, what follows it over `read`'s.
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& gamma,
                        LayerState* state = nullptr, const TokenSelection& read = {});
  torch::Tensor step(const torch::Tensor& x_t, const torch::Tensor& gamma,
                     LayerState& state);  // (B,D)

  torch::nn::LayerNorm norm_mix{nullptr}, norm_glu{nullptr};
  Hgru hgru{nullptr};
  Glu glu{nullptr};
  torch::nn::Dropout dropout{nullptr};
};
TORCH_MODULE(HgrnBlock);

// N HGRN blocks, the shared lower-bound parameter Γ and a final LayerNorm.
// State per layer: LayerState::h = [Re h, Im h] (B, 2d); LayerState::conv unused.
class HgrnStack : public SequenceModel {
 public:
  HgrnStack(const HgrnOptions& options, int64_t n_layers);
  // The factory form the decision agent uses for every backbone.
  HgrnStack(int64_t d_model, int64_t n_layers, double dropout, double expansion = 1.0);

  torch::Tensor forward(const torch::Tensor& x, SequenceState* state = nullptr,
                        const TokenSelection& read = {},
                        const InputDropout& input_dropout = {}) override;
  torch::Tensor step(const torch::Tensor& x_t, SequenceState& state,
                     const InputDropout& input_dropout = {}) override;
  SequenceState initial_state() const override { return SequenceState(blocks_.size()); }
  bool streaming() const override { return true; }

  // γ (layers × d): row k is layer k's lower bound; row 0 is zero, rows non-decreasing, all < 1.
  torch::Tensor lower_bounds() const;
  int64_t n_layers() const { return static_cast<int64_t>(blocks_.size()); }
  const std::vector<HgrnBlock>& blocks() const { return blocks_; }
  const torch::nn::LayerNorm& norm_out() const { return norm_out_; }

  torch::Tensor bound_logits;  // Γ (layers × d)

 private:
  void check_input(const char* who, const torch::Tensor& x, int64_t dims) const;
  void check_state(const SequenceState& state) const;
  HgrnOptions options_;
  std::vector<HgrnBlock> blocks_;
  torch::nn::LayerNorm norm_out_{nullptr};
};

}  // namespace minrnn::core
