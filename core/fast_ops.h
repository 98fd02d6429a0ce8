// The arithmetic of the inference path (core/fast_backbone.h): plain row-major float buffers, no
// autograd, no tensors, no allocation. Matrix products go to the BLAS that LibTorch itself links
// (MKL's sgemm_ in PyPI's wheels: runtime CPU dispatch, AVX2/AVX-512), called directly so a
// 3 × 128 · 128 × 512 product costs what it computes and not a dispatcher round trip; a plain loop
// stands in where LibTorch exports no sgemm_ (or MINRNN_NO_BLAS is set). The element-wise passes
// (LayerNorm, GELU, gates) are loops compiled for AVX2 and a baseline, chosen at load time.
// docs/agent.md, "Fast policy inference", says why this and not Eigen or torch ops.
#pragma once
#include <torch/torch.h>

#include <cstdint>
#include <vector>

namespace minrnn::core::fast {

// y = x · Wᵀ + b for a torch::nn::Linear's weights, copied out once, transposed: a policy step
// multiplies a few rows by each matrix, and with Wᵀ (in, out) row-major each weight is read once
// for all rows in contiguous vectors (gemm_rows_ab), no horizontal sums.
struct Dense {
  int64_t in = 0, out = 0;
  std::vector<float> weight_t;  // (in, out) row-major: torch's (out, in) transposed
  std::vector<float> bias;      // (out); empty = none
};
Dense pack_dense(const torch::nn::LinearImpl& linear);
// Output rows [row0, row0 + count) of `linear`: one part of a fused projection.
Dense pack_dense_rows(const torch::nn::LinearImpl& linear, int64_t row0, int64_t count);

struct Norm {  // LayerNorm over the last `dim` values of a row
  int64_t dim = 0;
  float eps = 1e-5f;
  std::vector<float> weight, bias;
};
Norm pack_norm(const torch::nn::LayerNormImpl& norm);

// Copies a float tensor (any device, contiguous or not) into a vector.
std::vector<float> to_vector(const torch::Tensor& t);

// y (rows, out) with row stride ldy = x (rows, in) with row stride ldx · Wᵀ + b. accumulate:
// y += instead of y = (the residual add fused into the product).
void dense(const Dense& d, const float* x, int64_t rows, float* y, bool accumulate = false,
           int64_t ldx = 0, int64_t ldy = 0);  // 0 = packed (in, out)

// C (m, n) = A (m, k) · Bᵀ (B is (n, k)), row-major, leading dimensions given; beta 0 or 1. The
// BLAS when there is one. gemm_reference is the loop: the fallback, and the tests' reference.
void gemm_abt(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b,
              int64_t ldb, float beta, float* c, int64_t ldc);
void gemm_abt_reference(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda,
                        const float* b, int64_t ldb, float beta, float* c, int64_t ldc);
// C (m, n) = A (m, k) · B (k, n) (+ C when beta is 1), row-major: attention's probabilities ·
// values, and Dense. Few rows (m ≤ kSmallRows) go to gemm_rows_ab, more to the BLAS.
void gemm_ab(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b,
             int64_t ldb, float beta, float* c, int64_t ldc);
// The few-rows kernel: per block of 64 (then 16) columns, every row's accumulators stay in
// registers while B streams past once. MKL's sgemm is 2–3× slower at these shapes (it packs).
inline constexpr int64_t kSmallRows = 4;
void gemm_rows_ab(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b,
                  int64_t ldb, float beta, float* c, int64_t ldc);
bool have_blas();  // whether gemm_abt goes to LibTorch's BLAS

void layer_norm(const Norm& n, const float* x, int64_t rows, float* y);  // y may be x
void gelu(float* x, int64_t count);  // exact (erf) GELU, as torch::nn::GELU's default
void silu(float* x, int64_t count);  // x · σ(x)
void tanh_inplace(float* x, int64_t count);
void add(float* y, const float* x, int64_t count);  // y += x

// The position-wise half of a pre-LN block: x += down(GELU(up(LN(x)))), over `rows` rows of x.
struct ResidualMlp {
  Norm norm;
  Dense up, down;
};
ResidualMlp pack_mlp(const torch::nn::LayerNormImpl& norm, const torch::nn::SequentialImpl& mlp);
void residual_mlp(const ResidualMlp& m, float* x, int64_t rows, std::vector<float>& scratch);

// Moves row n − 1 of each of `batch` groups of n rows (width values each) to row b: (B, n, W) →
// (B, W) in place, for layers that only need each sequence's last token.
void keep_last_rows(float* x, int64_t batch, int64_t n, int64_t width);

// erf in float with |error| < 2e-7 on all of ℝ: a rational approximation that vectorizes (glibc's
// erff is a call per element). Exposed for its test.
float erf_approx(float x);

// Grows `buf` to at least n values (never shrinks, so steady-state calls allocate nothing).
inline float* reserve(std::vector<float>& buf, int64_t n) {
  if (static_cast<int64_t>(buf.size()) < n) buf.resize(static_cast<size_t>(n));
  return buf.data();
}

}  // namespace minrnn::core::fast
