// A Linear layer's product as one autograd op: on the CPU its forward and input gradient run on
// the kernel of ops/gemm_cpu.h (the weight gradient by LibTorch); on CUDA the products are
// LibTorch's (a stacked pack's: cuBLASLt's, tuned, ops/tuned_gemm_cuda.h) and the bias gradient
// is this project's column sum (kernels/cuda/pointwise_programs.h, ColumnSums), where LibTorch's
// takes a memset and a reduction ~4× its time. The minRNN gate
// projection and the Transformer's projections. Elsewhere (float64 or widths not a multiple of
// 16 on the CPU, AVX-512, no bias on CUDA) it is torch::linear itself.
#pragma once
#include <torch/torch.h>

#include "ops/tuned_gemm_switches.h"  // which products a stacked pack takes on CUDA

namespace minrnn::core {

// x (…, in) · wᵀ + b, w (out, in), b (out) or undefined. A pack's runs stacked (ops/run_axis.h):
// w (P, out, in), b (P, out), x's dim 0 the runs' rows one after the other.
torch::Tensor affine(const torch::Tensor& x, const torch::Tensor& w, const torch::Tensor& b);

// A Linear's bias gradient from its output's gradient rows (rows, out): their column sums, by the
// column-sum kernel on CUDA, LibTorch's sum elsewhere.
torch::Tensor bias_grad(const torch::Tensor& dy_rows);

// A Linear's products on rows, as the ops' autograd functions take them (this one's, the MLP's,
// the Transformer's top projection): one run's rows (n, in) with w (out, in), or a pack's stacked
// runs' (runs, n, in) with w (runs, out, in), one batched product for all of them
// (ops/run_axis.h).
// x (…, in) as rows: (n, in), or (runs, n, in) for a stacked w (a view where it can be).
torch::Tensor rows_of(const torch::Tensor& x, const torch::Tensor& w);
torch::Tensor rows_product(const torch::Tensor& rows, const torch::Tensor& w,
                           const torch::Tensor& b);  // rows·wᵀ + b
// How a stacked product adds its bias on LibTorch's path (the CPU's, and CUDA's under
// MINRNN_STACKED_GEMM=cublas; the tuned products add it in cuBLASLt's epilogue), as
// MINRNN_STACKED_BIAS says (read at each product; a value other than add or gemm is refused by
// name): `add` (unset: the default) takes the product alone (bmm, β = 0) and adds the bias in one
// broadcast pass after it; `gemm` has the batched product start from it — baddbmm, which first
// copies each run's bias into every row of the output (LibTorch's direct_copy: 9 launches of a
// stacked minGRU round, 0.33 ms on an H200) for cuBLAS to read back with β = 1. Side by side on an
// H200 (2026-11-28 06:36, stacked packs of 32): add 2 742.0 / 2 207.6 run-steps/s (minGRU /
// Transformer), gemm 2 724.2 / 2 194.2.
bool stacked_bias_after_product();
torch::Tensor rows_input_grad(const torch::Tensor& dy, const torch::Tensor& w);      // dy·w
torch::Tensor rows_weight_grad(const torch::Tensor& dy, const torch::Tensor& rows);  // dyᵀ·rows
torch::Tensor rows_bias_grad(const torch::Tensor& dy);  // column sums, each run's of its rows
// {dyᵀ·rows where `weight`, dy's column sums where `bias`} (undefined where not asked): a
// weight's and its bias's gradients; a stacked pack's tuned products take both in one pass where
// that times faster (tuned_bmm_and_sums). `dy` by rows, as the sums read it (a column sum's order,
// and its bits); `dy_products` the same values as the products read them (rows_for_products: by
// columns for a head of a few outputs, else dy itself).
std::vector<torch::Tensor> rows_param_grads(const torch::Tensor& dy,
                                            const torch::Tensor& dy_products,
                                            const torch::Tensor& rows, bool weight, bool bias);

}  // namespace minrnn::core
