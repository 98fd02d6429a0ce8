// A stacked pack's batched products (ops/affine.h) by cuBLASLt, each shape's algorithm chosen by
// timing: LibTorch's bmm takes cuBLAS's heuristic pick, and on a stacked minGRU round of an H200
// (2026-11-28) its products ran at ~40 TFLOP/s on average, the gate projections' forward on 64×64
// tiles at ~24, each biased one after a copy of its bias into the output. Tuned, a stacked pack
// of 32 ran 6 % faster (docs/benchmarks.md). Built only with CUDA (cmake/Targets.cmake).
//
// A shape's first call outside a CUDA graph capture asks cuBLASLt for its candidate algorithms
// (its heuristic's first 16 and, unless MINRNN_STACKED_GEMM_SEARCH=heuristic
// (ops/tuned_gemm_switches.h), split-K variants of the first three and the (algorithm, tile)
// configurations it accepts beyond them) and times them briefly, in that order, while
// 600 times LibTorch's product lasts (each of them, where under 300 are as fast as it); the six
// fastest, each checked against LibTorch's product first (one that strays by more than rounding is
// refused), are then timed fully beside LibTorch's own path (bmm, then the bias added or a's sums
// taken apart), on the call's operands with nothing else on the device, and the fastest is kept:
// never slower than the bmm it replaces, as far as timing tells, and never a wrong algorithm. The
// choice holds for the process and is kept in the GPU's choices file (ops/tuned_choice_file.h),
// which later processes read before timing anything: a resumed pack and a sweep's other processes
// run the algorithms the first one chose, the same bits. A call inside a capture whose shape has no
// choice yet takes LibTorch's path and keeps nothing.
#pragma once
#include <torch/torch.h>

#include <functional>
#include <string>
#include <vector>

namespace minrnn::core {

// a (P, m, k) · b (P, k, n) (+ bias (P, n) broadcast over each run's rows), (P, m, n)
// contiguous: CUDA float32 tensors on one device, each operand a row-major matrix per run or the
// transpose of one (others are copied contiguous first). TF32 where LibTorch's CUDA matmuls are
// (core::set_cuda_matmul_precision).
torch::Tensor tuned_bmm(const torch::Tensor& a, const torch::Tensor& b, const torch::Tensor& bias);

// {a · b, a's sums over k (P, m)}: a stacked weight's gradient dyᵀ · rows (a = dyᵀ) and its
// bias's, dy's column sums. The product's own pass sums a where cuBLASLt's bias-gradient
// epilogue times faster than the path apart — LibTorch's bmm, then this project's column sums
// (ColumnSums, which a stacked minGRU round on an H200 spent ~0.16 ms of its 11 on, 2026-11-28
// 06:58, over rows the product reads anyway) — chosen, checked and kept as tuned_bmm's are.
std::pair<torch::Tensor, torch::Tensor> tuned_bmm_and_sums(const torch::Tensor& a,
                                                           const torch::Tensor& b);

// Each of cuBLASLt's candidates for the same product (with a's sums where `sums_of_a`, then no
// bias), untimed, one after another: `each(product, sums)` reads a candidate's outputs (sums
// undefined without) before the next overwrites them. For the tests, which check every candidate
// a shape may be given; cuBLASLt lists them once (a few thousand host-side checks). Returns how
// many ran: one cuBLASLt refuses to run is passed over, as the timing passes it over.
using CandidateOutputs =
    std::function<void(const torch::Tensor& product, const torch::Tensor& sums)>;
int each_cublaslt_candidate(const torch::Tensor& a, const torch::Tensor& b,
                            const torch::Tensor& bias, bool sums_of_a,
                            const CandidateOutputs& each);

// What the process chose so far, one line a shape (its size, cuBLAS's ops, the choice and its µs
// beside LibTorch's and cuBLASLt's first candidate's): for the benches' entries.
std::vector<std::string> tuned_gemm_choices();

}  // namespace minrnn::core
