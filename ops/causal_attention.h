// Causal self-attention on projected tokens, as one op whose gradient comes back in the
// projection's own layout.
//
// The Transformer's q, k and v are column blocks of one projection's output (B, T, 3D). Taken
// apart as LibTorch views (a reshape, a permute, unbind), their gradients come back through a
// stack and a contiguous copy: two launches a layer that write the (B, T, 3D) gradient twice, and
// on the top layer the keys' and values' stack too. Here each head's products read q, k and v
// where the projection wrote them (batched GEMMs over strided views, leading dimension 3D) and the
// backward writes dq, dk and dv straight into the projection's gradient. Between the products, the
// probabilities are ops/attention_probs.h's passes (its seed, mask and bits). Float32 where those
// passes run; anything else runs the same in LibTorch ops.
#pragma once
#include <torch/torch.h>

#include <cstdint>

#include "ops/token_selection.h"

namespace minrnn::core {

// For each of `heads` heads of width D / heads: dropout(softmax(q kᵀ / √(D / heads))) v over the
// keys at or before each query, the heads' outputs side by side: (B, Tq, D), the queries at the
// tokens `read` selects of the T.
//   queries undefined: projected is (B, T, 3D), [q | k | v] of every token; the selected tokens'
//                      q are read from it.
//   queries defined:   (B, Tq, D), the selected tokens' q; projected is (B, T, 2D), [k | v].
// `p` is the probabilities' dropout, drawn as causal_attention_probs draws it. Under a pack's
// dropout scope (ops/run_axis.h) dim 0 holds the runs' rows, each run's probabilities dropped out
// with its own seeds.
torch::Tensor causal_attention(const torch::Tensor& projected, const torch::Tensor& queries,
                               int64_t heads, const TokenSelection& read, double p, bool training);

// The projection of a layer whose `read` tokens alone ask queries (the Transformer's top layer):
// from x (B, T, in) and the layer's one projection, w (3D, in) and b (3D) with [q | k | v] rows,
// the selected tokens' q (B, Tq, D) and every token's k and v (B, T, 2D) — causal_attention's
// inputs with the queries apart. One op, so that w, b and x each get their gradient written
// whole: two Linears on narrowed weights and on a view of x cost a fill, a copy and an add for
// each narrow and for the view. A pack's runs stacked: w (P, 3D, in), b (P, 3D).
struct SelectedQueries {
  torch::Tensor queries, keys_values;
};
SelectedQueries project_selected_queries(const torch::Tensor& x, const torch::Tensor& w,
                                         const torch::Tensor& b, const TokenSelection& read);

}  // namespace minrnn::core
