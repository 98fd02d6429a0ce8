// How a stacked pack's products on CUDA are chosen, as the environment says (io/env_switch.h):
// cuBLASLt's tuned ones or LibTorch's bmm, how widely the tuned ones search, and whether a weight
// gradient's product sums its bias's. Read at each product; built without CUDA too, so that the
// switches' refusals are tested everywhere.
#pragma once

namespace minrnn::core {

// Whether a stacked pack's products on CUDA (float32) are cuBLASLt's with each shape's algorithm
// timed on its first call (ops/tuned_gemm_cuda.h; `tuned`, unset: the default) or LibTorch's bmm
// (`cublas`), as MINRNN_STACKED_GEMM says. Side by side on an H200 (2026-11-28 06:56, stacked
// packs of 32): tuned 2 908.1 / 2 346.6 run-steps/s (minGRU / Transformer) in fp32, 5 330.7 /
// 4 271.2 in TF32; cublas 2 743.7 / 2 211.0 and 5 019.6 / 3 945.9.
bool stacked_products_tuned();
// Whether the tuned products' first call of a shape times cuBLASLt's heuristic's candidates, their
// split-K variants and each (algorithm, tile) it accepts (`wide`, unset: the default), or the
// heuristic's candidates alone (`heuristic`: the search an H200 measured on 2026-11-28 06:56), as
// MINRNN_STACKED_GEMM_SEARCH says: the two side by side in one GPU call, and the way back should
// a configuration the heuristic would not offer misbehave on some GPU. A choice is kept per search.
bool tuned_products_search_wide();
// Whether a stacked weight's gradient on the tuned products may sum its bias's gradient in its
// own pass (tuned_bmm_and_sums, where that times faster; `product`, unset: the default) or the
// bias's gradient is always this project's column sums apart (`apart`), as
// MINRNN_STACKED_BIAS_GRAD says (read at each product): the two side by side in one GPU call, and
// the way back should cuBLASLt's bias-gradient epilogue misbehave on some GPU.
bool stacked_bias_grads_in_products();

}  // namespace minrnn::core
