// The arithmetic of the inference path (infer/packed_backbone.h): plain row-major float buffers, no
// autograd, no tensors, no allocation. Matrix products are our own loops (gemm_rows_ab), not a
// BLAS: a row's result is then the same bits whatever rows share its product, so an episode
// returns what it returns alone beside any other episodes, on any thread count (an MKL sgemm picks
// its kernel by the product's shape: an episode batched with others took other bits, and
// HalfCheetah turned them into returns hundreds apart). They also ran faster than MKL's sgemm at a
// policy step's shapes (docs/benchmarks.md). The element-wise passes (LayerNorm, GELU, gates) are
// loops compiled for AVX2 and a baseline, chosen at load time. docs/agent.md, "Packed policy
// inference", says why this and not Eigen or torch ops.
#pragma once
#include "kernels/cpu/simd.h"
#include "kernels/math/scan_math.h"

#include <cstdint>
#include <cstring>
#include <vector>

namespace minrnn::core::cpu {

// y = x · Wᵀ + b for a linear layer's weights, copied out once, transposed (infer/pack.h): a policy
// step multiplies a few rows by each matrix, and with Wᵀ (in, out) row-major each weight is read
// once for all rows in contiguous vectors (gemm_rows_ab), no horizontal sums.
struct Dense {
  int64_t in = 0, out = 0;
  std::vector<float> weight_t;  // (in, out) row-major: torch's (out, in) transposed
  std::vector<float> bias;      // (out); empty = none
};

struct Norm {  // LayerNorm over the last `dim` values of a row
  int64_t dim = 0;
  float eps = 1e-5f;
  std::vector<float> weight, bias;
};

// y (rows, out) with row stride ldy = x (rows, in) with row stride ldx · Wᵀ + b. accumulate:
// y += instead of y = (the residual add fused into the product).
void dense(const Dense& d, const float* x, int64_t rows, float* y, bool accumulate = false,
           int64_t ldx = 0, int64_t ldy = 0);  // 0 = packed (in, out)

// C (m, n) = A (m, k) · B (k, n) (+ C when beta is 1), row-major, leading dimensions given: Dense
// and attention's products, in blocks of kSmallRows rows (gemm_rows_ab). Under a WorkersScope
// (kernels/cpu/workers.h) its column strips may run on several threads at once: C must not
// overlap A or B.
void gemm_ab(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b,
             int64_t ldb, float beta, float* c, int64_t ldc);
// The few-rows kernel: per block of 32 columns, every row's accumulators stay in registers while
// B streams past once; each row's sums in the same order for any m.
inline constexpr int64_t kSmallRows = 4;
void gemm_rows_ab(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b,
                  int64_t ldb, float beta, float* c, int64_t ldc);
// y (cols, rows) = xᵀ for x (rows, cols) with row stride ldx: attention's keys as gemm_ab's B.
void transpose(int64_t rows, int64_t cols, const float* x, int64_t ldx, float* y);

void layer_norm(const Norm& n, const float* x, int64_t rows, float* y);  // y may be x
void gelu(float* x, int64_t count);  // exact (erf) GELU, as torch::nn::GELU's default
// Over rows × width, in one pass: v = x + bias (per column), y = gelu(v), x ← gelu'(v). The
// derivative is kept instead of v because the backward needs nothing else: made here, it shares
// the erf the forward computes anyway, and the backward is one multiply (gelu_backward).
void bias_gelu_with_grad(float* x, const float* bias, float* y, int64_t rows, int64_t width);
// The backward of y = gelu(v) in place over rows × width, given gelu'(v) from bias_gelu_with_grad:
// g ← g ⊙ gelu'(v); with column_sums non-null also adds each column's sum of the new g to
// column_sums[width] (a bias's gradient).
void gelu_backward(const float* grad_of_gelu, float* g, int64_t rows, int64_t width,
                   float* column_sums);
void silu(float* x, int64_t count);  // x · σ(x)
void tanh_inplace(float* x, int64_t count);
void add(float* y, const float* x, int64_t count);  // y += x

// The position-wise half of a pre-LN block: x += down(GELU(up(LN(x)))), over `rows` rows of x.
struct ResidualMlp {
  Norm norm;
  Dense up, down;
};
void residual_mlp(const ResidualMlp& m, float* x, int64_t rows, std::vector<float>& scratch);

// Moves row n − 1 of each of `batch` groups of n rows (width values each) to row b: (B, n, W) →
// (B, W) in place, for layers that only need each sequence's last token.
void keep_last_rows(float* x, int64_t batch, int64_t n, int64_t width);

// Element-wise math that vectorizes: glibc's expf/erff/tanhf are a call per element, which stops
// GCC's vectorizer. Always inlined (MINRNN_INLINE, kernels/cpu/simd.h) so each
// AVX-512/AVX2/baseline clone (MINRNN_VECTOR_CLONES) gets its own vector code; clamps are written
// as selects (std::min/max keep a branch here).

// e^x: the scan kernels' inline Cephes expf (kernels/math/scan_math.h), within 2 ulp, 0 below
// −87.3.
using scan_math::cpu_expf;

// σ(x) from exp(−|x|), and σ(±u) from one exp: the scan kernels' own (kernels/math/scan_math.h).
using scan_math::sigmoid;
using scan_math::sigmoid_pair;

// erf in float with |error| < 2e-7 on all of ℝ: Eigen's rational approximation on [−4, 4] (erf is
// ±1 in float beyond).
MINRNN_INLINE float erf_approx(float x) {
  x = x < -4.0f ? -4.0f : x;
  x = x > 4.0f ? 4.0f : x;
  const float x2 = x * x;
  float p = -2.72614225801306e-10f;
  p = p * x2 + 2.77068142495902e-08f;
  p = p * x2 - 2.10102402082508e-06f;
  p = p * x2 - 5.69250639462346e-05f;
  p = p * x2 - 7.34990630326855e-04f;
  p = p * x2 - 2.95459980854025e-03f;
  p = p * x2 - 1.60960333262415e-02f;
  float q = -1.45660718464996e-05f;
  q = q * x2 - 2.13374055278905e-04f;
  q = q * x2 - 1.68282697438203e-03f;
  q = q * x2 - 7.37332916720468e-03f;
  q = q * x2 - 1.42647390514189e-02f;
  return x * p / q;
}

// tanh x = 1 − 2 / (e^{2x} + 1); saturates to ±1 without overflow (cpu_expf saturates).
MINRNN_INLINE float tanh_approx(float x) {
  return 1.0f - 2.0f / (cpu_expf(2.0f * x) + 1.0f);
}

// Grows `buf` to at least n values (never shrinks, so steady-state calls allocate nothing).
inline float* reserve(std::vector<float>& buf, int64_t n) {
  if (static_cast<int64_t>(buf.size()) < n) buf.resize(static_cast<size_t>(n));
  return buf.data();
}

}  // namespace minrnn::core::cpu
