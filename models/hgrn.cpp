#include "models/hgrn.h"

#include <cmath>
#include <sstream>
#include <stdexcept>

#include "ops/dropout.h"
#include "ops/residual_norm.h"
#include "ops/scan.h"

namespace minrnn::core {
namespace {

int64_t rounded(double ratio, int64_t d, const char* what) {
  const auto n = static_cast<int64_t>(std::llround(ratio * static_cast<double>(d)));
  if (n < 1) {
    throw std::invalid_argument(std::string("HGRN: ") + what +
                                " · d_model must round to >= 1, got " + std::to_string(ratio) +
                                " · " + std::to_string(d));
  }
  return n;
}

}  // namespace

HgruImpl::HgruImpl(const HgrnOptions& o)
    : options_(o), d_(rounded(o.expansion, o.d_model, "expansion")) {
  if (o.d_model < 1) throw std::invalid_argument("HGRN: d_model must be >= 1");
  in_proj = register_module("in_proj", torch::nn::Linear(o.d_model, 5 * d_));
  // RoPE's frequency ladder θ_j = 10000^(−j/d): a spread of rotation speeds, from one radian per
  // step to almost none; learnt from there.
  theta = register_parameter(
      "theta", torch::pow(10000.0, -torch::arange(d_, torch::kDouble) / d_).to(torch::kFloat));
  norm = register_module("norm", torch::nn::LayerNorm(torch::nn::LayerNormOptions({2 * d_})));
  out_proj = register_module("out_proj", torch::nn::Linear(2 * d_, o.d_model));
}

HgruImpl::Coefficients HgruImpl::coefficients(const torch::Tensor& x, const torch::Tensor& gamma) {
  if (!gamma.defined() || gamma.dim() != 1 || gamma.size(0) != d_) {
    throw std::invalid_argument("Hgru: expected gamma of shape (" + std::to_string(d_) + "), got " +
                                (gamma.defined() ? shape_of(gamma) : "undefined"));
  }
  auto parts = in_proj->forward(x).split_with_sizes({d_, d_, d_, 2 * d_}, -1);
  const torch::Tensor& mu_logit = parts[0];
  torch::Tensor lambda = gamma + (1 - gamma) * torch::sigmoid(mu_logit);
  // 1 − λ = (1 − γ)(1 − μ), written with σ(−·) so it keeps precision as μ → 1.
  torch::Tensor keep_out = (1 - gamma) * torch::sigmoid(-mu_logit);
  return {lambda * torch::cos(theta), lambda * torch::sin(theta), keep_out * torch::silu(parts[1]),
          keep_out * torch::silu(parts[2]), torch::sigmoid(parts[3])};
}

torch::Tensor HgruImpl::output(const torch::Tensor& gate, const torch::Tensor& h_re,
                               const torch::Tensor& h_im) {
  return out_proj(layer_norm(gate * torch::cat({h_re, h_im}, -1), norm));
}

torch::Tensor HgruImpl::forward(const torch::Tensor& x, const torch::Tensor& gamma,
                                const torch::Tensor& h0, torch::Tensor* h_last) {
  if (x.dim() != 3 || x.size(2) != options_.d_model) {
    throw std::invalid_argument("Hgru: expected x of shape (B, T, " +
                                std::to_string(options_.d_model) + "), got " + shape_of(x));
  }
  if (h0.defined() && (h0.dim() != 2 || h0.size(0) != x.size(0) || h0.size(1) != 2 * d_)) {
    throw std::invalid_argument("Hgru: expected h0 of shape (B, 2d) = (" +
                                std::to_string(x.size(0)) + ", " + std::to_string(2 * d_) +
                                "), got " + shape_of(h0));
  }
  Coefficients c = coefficients(x, gamma);
  torch::Tensor h0_re, h0_im;
  if (h0.defined()) {
    h0_re = h0.slice(1, 0, d_);
    h0_im = h0.slice(1, d_);
  }
  ComplexScanResult r =
      options_.sequential_scan
          ? linear_scan_complex_sequential(c.a_re, c.a_im, c.b_re, c.b_im, h0_re, h0_im)
          : linear_scan_complex(c.a_re, c.a_im, c.b_re, c.b_im, h0_re, h0_im);
  if (h_last) *h_last = torch::cat({r.h_last_re, r.h_last_im}, -1);
  return output(c.gate, r.h_re, r.h_im);
}

torch::Tensor HgruImpl::step(const torch::Tensor& x_t, const torch::Tensor& gamma,
                             torch::Tensor& h) {
  if (x_t.dim() != 2 || x_t.size(1) != options_.d_model) {
    throw std::invalid_argument("Hgru::step: expected x_t of shape (B, " +
                                std::to_string(options_.d_model) + "), got " + shape_of(x_t));
  }
  if (!h.defined()) h = torch::zeros({x_t.size(0), 2 * d_}, x_t.options());
  if (h.dim() != 2 || h.size(0) != x_t.size(0) || h.size(1) != 2 * d_) {
    throw std::invalid_argument("Hgru::step: expected state h of shape (B, 2d) = (" +
                                std::to_string(x_t.size(0)) + ", " + std::to_string(2 * d_) +
                                "), got " + shape_of(h));
  }
  Coefficients c = coefficients(x_t, gamma);
  torch::Tensor hr = h.slice(1, 0, d_), hi = h.slice(1, d_);
  torch::Tensor next_re = c.a_re * hr - c.a_im * hi + c.b_re;
  torch::Tensor next_im = c.a_re * hi + c.a_im * hr + c.b_im;
  h = torch::cat({next_re, next_im}, -1);
  return output(c.gate, next_re, next_im);
}

GluImpl::GluImpl(int64_t d_model, int64_t hidden) {
  w1 = register_module("w1", torch::nn::Linear(d_model, hidden));
  w2 = register_module("w2", torch::nn::Linear(d_model, hidden));
  w3 = register_module("w3", torch::nn::Linear(hidden, d_model));
}

torch::Tensor GluImpl::forward(const torch::Tensor& x) {
  return w3(w1(x) * torch::silu(w2(x)));
}

namespace {

// The block's two residual halves after its HGRU; each dropout and residual add is one pass
// (ops/dropout.h).
torch::Tensor residuals(HgrnBlockImpl& b, const torch::Tensor& mixed, const torch::Tensor& x) {
  const double p = b.dropout->options.p();
  const bool training = b.dropout->is_training();
  torch::Tensor out = add_dropout(x, mixed, p, training);
  return add_dropout(out, b.glu(layer_norm(out, b.norm_glu)), p, training);
}

}  // namespace

HgrnBlockImpl::HgrnBlockImpl(const HgrnOptions& o) {
  auto ln = [&] { return torch::nn::LayerNorm(torch::nn::LayerNormOptions({o.d_model})); };
  norm_mix = register_module("norm_mix", ln());
  hgru = register_module("hgru", Hgru(o));
  norm_glu = register_module("norm_glu", ln());
  glu = register_module("glu", Glu(o.d_model, rounded(o.glu_ratio, o.d_model, "glu_ratio")));
  dropout = register_module("dropout", torch::nn::Dropout(o.dropout));
}

torch::Tensor HgrnBlockImpl::forward(const torch::Tensor& x, const torch::Tensor& gamma,
                                     LayerState* state, const TokenSelection& read) {
  torch::Tensor h0 = state ? state->h : torch::Tensor();
  torch::Tensor mixed = hgru(layer_norm(x, norm_mix), gamma, h0, state ? &state->h : nullptr);
  return residuals(*this, read.apply(mixed), read.apply(x));
}

torch::Tensor HgrnBlockImpl::step(const torch::Tensor& x_t, const torch::Tensor& gamma,
                                  LayerState& state) {
  return residuals(*this, hgru->step(layer_norm(x_t, norm_mix), gamma, state.h), x_t);
}

HgrnStack::HgrnStack(const HgrnOptions& options, int64_t n_layers) : options_(options) {
  if (n_layers < 1) {
    throw std::invalid_argument("HgrnStack: n_layers must be >= 1, got " +
                                std::to_string(n_layers));
  }
  if (options.dropout < 0 || options.dropout >= 1) {
    throw std::invalid_argument("HgrnStack: dropout must be in [0, 1), got " +
                                std::to_string(options.dropout));
  }
  for (int64_t i = 0; i < n_layers; ++i) {
    blocks_.push_back(register_module("block" + std::to_string(i), HgrnBlock(options)));
  }
  // Γ = 0: P uniform, so γ^k = (k − 1)/H at the start (the official code's init, up to a constant).
  bound_logits =
      register_parameter("bound_logits", torch::zeros({n_layers, blocks_[0]->hgru->width()}));
  norm_out_ = register_module("norm_out",
                              torch::nn::LayerNorm(torch::nn::LayerNormOptions({options.d_model})));
}

HgrnStack::HgrnStack(int64_t d_model, int64_t n_layers, double dropout, double expansion)
    : HgrnStack(
          [&] {
            HgrnOptions o;
            o.d_model = d_model;
            o.dropout = dropout;
            o.expansion = expansion;
            return o;
          }(),
          n_layers) {}

torch::Tensor HgrnStack::lower_bounds() const {
  // The paper's [Cumsum(P)]_k = Σ_{i≤k} P_i − P_1: the first layer may forget freely, and the top
  // bound is 1 − P_1 < 1 so every layer can still forget.
  torch::Tensor cum = torch::cumsum(torch::softmax(bound_logits, 0), 0);
  return cum - cum.slice(0, 0, 1);
}

void HgrnStack::check_input(const char* who, const torch::Tensor& x, int64_t dims) const {
  if (!x.defined() || x.dim() != dims || x.size(-1) != options_.d_model) {
    throw std::invalid_argument(std::string("HgrnStack::") + who + ": expected x of shape " +
                                (dims == 3 ? "(B, T, " : "(B, ") +
                                std::to_string(options_.d_model) + "), got " +
                                (x.defined() ? shape_of(x) : "undefined"));
  }
}

void HgrnStack::check_state(const SequenceState& state) const {
  if (state.size() != blocks_.size()) {
    throw std::invalid_argument("HgrnStack: state has " + std::to_string(state.size()) +
                                " layers, the model " + std::to_string(blocks_.size()));
  }
}

torch::Tensor HgrnStack::forward(const torch::Tensor& x, SequenceState* state,
                                 const TokenSelection& read, const InputDropout& input_dropout) {
  check_input("forward", x, 3);
  if (state) check_state(*state);
  torch::Tensor gamma = lower_bounds().to(x.dtype());
  torch::Tensor y = fused_dropout(x, input_dropout.p, input_dropout.training);
  for (size_t i = 0; i < blocks_.size(); ++i) {
    const bool top = i + 1 == blocks_.size();
    y = blocks_[i](y, gamma[static_cast<int64_t>(i)], state ? &(*state)[i] : nullptr,
                   top ? read : TokenSelection{});
  }
  return layer_norm(y, norm_out_);
}

torch::Tensor HgrnStack::step(const torch::Tensor& x_t, SequenceState& state,
                              const InputDropout& input_dropout) {
  check_input("step", x_t, 2);
  check_state(state);
  torch::Tensor gamma = lower_bounds().to(x_t.dtype());
  torch::Tensor y = fused_dropout(x_t, input_dropout.p, input_dropout.training);
  for (size_t i = 0; i < blocks_.size(); ++i) {
    y = blocks_[i]->step(y, gamma[static_cast<int64_t>(i)], state[i]);
  }
  return layer_norm(y, norm_out_);
}

}  // namespace minrnn::core
