// A residual block's join as one op: sum = x + dropout(y) (ops/dropout.h's hashed dropout, so sum
// has add_dropout's bits) and normed = LayerNorm(sum) over the last dimension, with the norm's γ
// and β (kernels/math/residual_norm_math.h). A pre-norm block ends in this pair twice — its first
// half's sum normed for its second half, its output normed for the next block (or the stack's
// last norm) — and fused, each pair is one CUDA launch forward and two backward, where the
// dropout-add and LibTorch's LayerNorm took two and ~5, each a gap in a replayed training step.
// Float32, contiguous, on the CPU or CUDA, rows of at most 256 channels; anything else runs
// add_dropout and LibTorch's layer_norm.
#pragma once
#include <torch/torch.h>

#include "ops/token_selection.h"

namespace minrnn::core {

struct ResidualNorm {
  torch::Tensor sum;     // x + dropout(y): the residual stream going on
  torch::Tensor normed;  // its LayerNorm
};

// x, y of one shape (…, D) — x undefined: no residual, sum = dropout(y), fused_dropout's bits (a
// backbone's input dropout joined to its first norm); gamma, beta (D); the dropout as
// add_dropout's (p, training). With
// token selections, x and y (B, T, D) are read at the tokens each selects (the top block's state
// tokens), as x_read.apply(x) and y_read.apply(y) would, without copying them out: the join is
// (B, T', D) and their gradients come back whole, zero where nothing was read. A pack's runs
// stacked (ops/run_axis.h): gamma, beta (P, D), dim 0 of x and y the runs' rows.
ResidualNorm add_dropout_norm(const torch::Tensor& x, const torch::Tensor& y, double p,
                              bool training, const torch::Tensor& gamma, const torch::Tensor& beta,
                              double eps, const TokenSelection& x_read = {},
                              const TokenSelection& y_read = {});
// The same with a LayerNorm module's γ, β and eps.
ResidualNorm add_dropout_norm(const torch::Tensor& x, const torch::Tensor& y, double p,
                              bool training, const torch::nn::LayerNorm& norm,
                              const TokenSelection& x_read = {}, const TokenSelection& y_read = {});

// LayerNorm(x) alone, by the same kernels: on the CPU its γ and β gradients sum over a fixed split
// of rows, where LibTorch's layer_norm backward splits them by the thread count (a seeded HGRN run
// trained apart on 1 and 2 threads, 2026-11-29). Rows over 256 channels take LibTorch's.
torch::Tensor layer_norm(const torch::Tensor& x, const torch::nn::LayerNorm& norm);

}  // namespace minrnn::core
