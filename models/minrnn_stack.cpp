#include "models/minrnn_stack.h"

#include <stdexcept>

#include "ops/mlp.h"

namespace minrnn::core {
namespace {

// x + dropout(y) at the tokens `read` selects (of both), and its norm by `norm`, in one op.
ResidualNorm join(ResidualBlockImpl& b, const torch::Tensor& x, const torch::Tensor& y,
                  const torch::nn::LayerNorm& norm, const TokenSelection& read = {}) {
  return add_dropout_norm(x, y, b.dropout->options.p(), b.dropout->is_training(), norm, read, read);
}

// The block's two residual halves after its minRNN, at the tokens `read` selects, the output
// normed by `next`.
ResidualNorm residuals(ResidualBlockImpl& b, const torch::Tensor& x, const torch::Tensor& rnn_out,
                       const torch::nn::LayerNorm& next, const TokenSelection& read = {}) {
  const ResidualNorm half = join(b, x, rnn_out, b.norm_mlp, read);
  return join(b, half.sum, mlp_forward(b.mlp, half.normed), next);
}

}  // namespace

CausalConv1dImpl::CausalConv1dImpl(int64_t channels, int64_t kernel)
    : channels_(channels), kernel_(kernel) {
  if (kernel < 1) throw std::invalid_argument("CausalConv1d: kernel must be >= 1");
  // PyTorch's Conv1d default init: U(−1/√fan_in, 1/√fan_in), fan_in = kernel for a depthwise conv.
  const double bound = 1.0 / std::sqrt(static_cast<double>(kernel));
  weight = register_parameter("weight", torch::empty({channels, kernel}).uniform_(-bound, bound));
  bias = register_parameter("bias", torch::empty({channels}).uniform_(-bound, bound));
}

torch::Tensor CausalConv1dImpl::forward(const torch::Tensor& x, torch::Tensor* history) {
  const int64_t B = x.size(0);
  torch::Tensor past = history && history->defined()
                           ? *history
                           : torch::zeros({B, kernel_ - 1, channels_}, x.options());
  torch::Tensor padded = torch::cat({past, x}, 1);  // (B, k−1+T, C)
  if (history) *history = padded.slice(1, padded.size(1) - (kernel_ - 1)).detach();
  torch::Tensor y = torch::nn::functional::conv1d(
      padded.transpose(1, 2), weight.unsqueeze(1),
      torch::nn::functional::Conv1dFuncOptions().bias(bias).groups(channels_));  // depthwise
  return y.transpose(1, 2);
}

ResidualBlockImpl::ResidualBlockImpl(const BlockOptions& o) {
  norm_rnn =
      register_module("norm_rnn", torch::nn::LayerNorm(torch::nn::LayerNormOptions({o.d_model})));
  if (o.conv) conv = register_module("conv", CausalConv1d(o.d_model, o.conv_kernel));
  MinRnnOptions rnn_options;
  rnn_options.cell = o.cell;
  rnn_options.input_size = o.d_model;
  rnn_options.expansion = o.expansion;
  rnn_options.output_size = o.d_model;
  rnn_options.log_space = o.log_space;
  rnn_options.scan = o.scan;
  rnn = register_module("rnn", MinRnn(rnn_options));
  norm_mlp =
      register_module("norm_mlp", torch::nn::LayerNorm(torch::nn::LayerNormOptions({o.d_model})));
  mlp = register_module(
      "mlp", torch::nn::Sequential(torch::nn::Linear(o.d_model, o.mlp_ratio * o.d_model),
                                   torch::nn::GELU(),
                                   torch::nn::Linear(o.mlp_ratio * o.d_model, o.d_model)));
  dropout = register_module("dropout", torch::nn::Dropout(o.dropout));
}

ResidualNorm ResidualBlockImpl::forward(const torch::Tensor& x, const torch::Tensor& x_normed,
                                        const torch::nn::LayerNorm& next, LayerState* state,
                                        const TokenSelection& read) {
  torch::Tensor y = x_normed;
  if (conv) y = conv(y, state ? &state->conv : nullptr);
  torch::Tensor h0 = state ? state->h : torch::Tensor();
  y = rnn(y, h0, state ? &state->h : nullptr);
  return residuals(*this, x, y, next, read);
}

ResidualNorm ResidualBlockImpl::step(const torch::Tensor& x_t, const torch::Tensor& x_normed,
                                     const torch::nn::LayerNorm& next, LayerState& state) {
  torch::Tensor y = x_normed;
  if (conv) y = conv(y.unsqueeze(1), &state.conv).squeeze(1);
  return residuals(*this, x_t, rnn->step(y, state.h), next);
}

MinRnnStack::MinRnnStack(const BlockOptions& options, int64_t n_layers) {
  if (n_layers < 1) throw std::invalid_argument("MinRnnStack: n_layers must be >= 1");
  for (int64_t i = 0; i < n_layers; ++i) {
    blocks_.push_back(register_module("block" + std::to_string(i), ResidualBlock(options)));
  }
  norm_out_ = register_module("norm_out",
                              torch::nn::LayerNorm(torch::nn::LayerNormOptions({options.d_model})));
}

void MinRnnStack::check_state(const SequenceState& state) const {
  if (state.size() != blocks_.size()) {
    throw std::invalid_argument("MinRnnStack: state has " + std::to_string(state.size()) +
                                " layers, the model " + std::to_string(blocks_.size()));
  }
}

ResidualNorm MinRnnStack::input_join(const torch::Tensor& x,
                                     const InputDropout& input_dropout) const {
  return add_dropout_norm({}, x, input_dropout.p, input_dropout.training, blocks_[0]->norm_rnn);
}

// Block i's output comes normed by block i + 1's norm_rnn (the last's by norm_out): its input.
const torch::nn::LayerNorm& MinRnnStack::norm_after(size_t i) const {
  return i + 1 < blocks_.size() ? blocks_[i + 1]->norm_rnn : norm_out_;
}

torch::Tensor MinRnnStack::forward(const torch::Tensor& x, SequenceState* state,
                                   const TokenSelection& read, const InputDropout& input_dropout) {
  if (state) check_state(*state);
  ResidualNorm y = input_join(x, input_dropout);
  for (size_t i = 0; i < blocks_.size(); ++i) {
    const bool top = i + 1 == blocks_.size();
    y = blocks_[i]->forward(y.sum, y.normed, norm_after(i), state ? &(*state)[i] : nullptr,
                            top ? read : TokenSelection{});
  }
  return y.normed;
}

torch::Tensor MinRnnStack::step(const torch::Tensor& x_t, SequenceState& state,
                                const InputDropout& input_dropout) {
  check_state(state);
  ResidualNorm y = input_join(x_t, input_dropout);
  for (size_t i = 0; i < blocks_.size(); ++i) {
    y = blocks_[i]->step(y.sum, y.normed, norm_after(i), state[i]);
  }
  return y.normed;
}

}  // namespace minrnn::core
