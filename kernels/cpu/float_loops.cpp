#include "kernels/cpu/float_loops.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "kernels/cpu/workers.h"

namespace minrnn::core::cpu {

void residual_mlp(const ResidualMlp& m, float* x, int64_t rows, std::vector<float>& scratch) {
  float* normed = reserve(scratch, rows * (m.up.in + m.up.out));
  float* hidden = normed + rows * m.up.in;
  layer_norm(m.norm, x, rows, normed);
  dense(m.up, normed, rows, hidden);
  gelu(hidden, rows * m.up.out);
  dense(m.down, hidden, rows, x, /*accumulate=*/true);
}

void keep_last_rows(float* x, int64_t batch, int64_t n, int64_t width) {
  // Row b's source (b·n + n − 1) is never a destination of an earlier b, so ascending order is
  // safe.
  for (int64_t b = 0; b < batch; ++b) {
    if (b != b * n + n - 1) std::copy_n(x + (b * n + n - 1) * width, width, x + b * width);
  }
}

// Many rows (a window, a batch of episodes) take B a strip of columns at a time, every row block
// over it before the next, so the strip stays in cache where the whole of B (1 MB at embed 256)
// would be read again for every 4 rows. The strips are whole 32-column blocks: each element's
// sum is the one gemm_rows_ab forms for it alone.
constexpr int64_t kStripColumns = 64;
// The multiply-adds below which a product stays on the calling thread: a 64-column strip of a few
// dozen rows is tens of microseconds of work, of the order of waking another thread for it.
constexpr int64_t kSplitMultiplyAdds = int64_t{1} << 20;

void gemm_ab(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b,
             int64_t ldb, float beta, float* c, int64_t ldc) {
  auto strip = [&](int64_t s) {
    const int64_t j = s * kStripColumns, width = std::min(kStripColumns, n - j);
    for (int64_t r = 0; r < m; r += kSmallRows) {
      gemm_rows_ab(std::min(kSmallRows, m - r), width, k, a + r * lda, lda, b + j, ldb, beta,
                   c + r * ldc + j, ldc);
    }
  };
  const int64_t strips = (n + kStripColumns - 1) / kStripColumns;
  io::Workers* workers = current_workers();
  if (workers && strips > 1 && m * n * k >= kSplitMultiplyAdds) {
    workers->for_each(strips, strip);
  } else {
    for (int64_t s = 0; s < strips; ++s) strip(s);
  }
}

void transpose(int64_t rows, int64_t cols, const float* x, int64_t ldx, float* y) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) y[c * rows + r] = x[r * ldx + c];
}

namespace {

// M rows × J columns of C, accumulated over all k: on AVX2, M·J/8 ymm accumulators (J = 32 keeps
// 4 rows within the 16 registers; 64 spills, and 16 GCC unrolls completely into scalar code). The
// bounds are compile-time constants, or the accumulators leave the registers.
template <int M, int J>
MINRNN_VECTOR_CLONES void rows_block(int64_t k, const float* a, int64_t lda, const float* b,
                                     int64_t ldb, float beta, float* c, int64_t ldc) {
  float acc[M][J];
  for (int i = 0; i < M; ++i)
    for (int q = 0; q < J; ++q) acc[i][q] = beta == 0 ? 0.0f : c[i * ldc + q];
  for (int64_t p = 0; p < k; ++p) {
    const float* w = b + p * ldb;
    for (int i = 0; i < M; ++i) {
      const float x = a[i * lda + p];
      for (int q = 0; q < J; ++q) acc[i][q] += x * w[q];
    }
  }
  for (int i = 0; i < M; ++i)
    for (int q = 0; q < J; ++q) c[i * ldc + q] = acc[i][q];
}

// The last n % 32 columns (an action head's 3 or 6; attention's scores past the last 32 keys, all
// of them in a window under 32 tokens): one row at a time, no blocking. Whether a column is a
// block's or the tail's follows from n alone, so a row's bits still do not depend on m.
MINRNN_VECTOR_CLONES void rows_tail(int64_t m, int64_t width, int64_t k, const float* a,
                                    int64_t lda, const float* b, int64_t ldb, float beta, float* c,
                                    int64_t ldc) {
  for (int64_t i = 0; i < m; ++i) {
    float* ci = c + i * ldc;
    for (int64_t q = 0; q < width; ++q) ci[q] = beta == 0 ? 0.0f : ci[q];
    for (int64_t p = 0; p < k; ++p) {
      const float x = a[i * lda + p];
      for (int64_t q = 0; q < width; ++q) ci[q] += x * b[p * ldb + q];
    }
  }
}

template <int M>
void rows_kernel(int64_t n, int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb,
                 float beta, float* c, int64_t ldc) {
  constexpr int J = 32;
  int64_t j = 0;
  for (; j + J <= n; j += J) rows_block<M, J>(k, a, lda, b + j, ldb, beta, c + j, ldc);
  if (j < n) rows_tail(M, n - j, k, a, lda, b + j, ldb, beta, c + j, ldc);
}

}  // namespace

void gemm_rows_ab(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b,
                  int64_t ldb, float beta, float* c, int64_t ldc) {
  switch (m) {
    case 0:
      return;
    case 1:
      return rows_kernel<1>(n, k, a, lda, b, ldb, beta, c, ldc);
    case 2:
      return rows_kernel<2>(n, k, a, lda, b, ldb, beta, c, ldc);
    case 3:
      return rows_kernel<3>(n, k, a, lda, b, ldb, beta, c, ldc);
    case 4:
      return rows_kernel<4>(n, k, a, lda, b, ldb, beta, c, ldc);
  }
  throw std::invalid_argument("gemm_rows_ab: at most " + std::to_string(kSmallRows) + " rows");
}

void dense(const Dense& d, const float* x, int64_t rows, float* y, bool accumulate, int64_t ldx,
           int64_t ldy) {
  if (ldx == 0) ldx = d.in;
  if (ldy == 0) ldy = d.out;
  if (!d.bias.empty()) {  // the bias first, then one product with beta = 1
    for (int64_t r = 0; r < rows; ++r) {
      float* row = y + r * ldy;
      if (accumulate) {
        add(row, d.bias.data(), d.out);
      } else {
        std::copy(d.bias.begin(), d.bias.end(), row);
      }
    }
    accumulate = true;
  }
  gemm_ab(rows, d.out, d.in, x, ldx, d.weight_t.data(), d.out, accumulate ? 1.0f : 0.0f, y, ldy);
}

namespace {

// Σ x[i] and Σ (x[i] − c)² in 16 interleaved partial sums, which GCC vectorizes (one running sum
// it may not reorder without -ffast-math, and leaves scalar).
MINRNN_INLINE void sums(const float* x, int64_t n, float c, float* sum, float* squares) {
  float s[16] = {}, q[16] = {};
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    for (int k = 0; k < 16; ++k) {
      s[k] += x[i + k];
      q[k] += (x[i + k] - c) * (x[i + k] - c);
    }
  }
  float total = 0, total_sq = 0;
  for (; i < n; ++i) {
    total += x[i];
    total_sq += (x[i] - c) * (x[i] - c);
  }
  for (int k = 0; k < 16; ++k) {
    total += s[k];
    total_sq += q[k];
  }
  *sum = total;
  *squares = total_sq;
}

}  // namespace

MINRNN_VECTOR_CLONES
void layer_norm(const Norm& n, const float* x, int64_t rows, float* y) {
  const int64_t D = n.dim;
  const float* w = n.weight.data();
  const float* b = n.bias.data();
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * D;
    float* yr = y + r * D;
    // Two passes (mean, then squares about it), as torch: one-pass E[x²] − mean² loses digits.
    float total, unused;
    sums(xr, D, 0.0f, &total, &unused);
    const float mean = total / float(D);
    float dev, var;
    sums(xr, D, mean, &dev, &var);
    const float inv = 1.0f / std::sqrt(var / float(D) + n.eps);
    for (int64_t i = 0; i < D; ++i) yr[i] = (xr[i] - mean) * inv * w[i] + b[i];
  }
}

MINRNN_INLINE float gelu_of(float x) {
  return 0.5f * x * (1.0f + erf_approx(x * 0.70710678118654752f));
}

MINRNN_VECTOR_CLONES
void gelu(float* x, int64_t count) {
  for (int64_t i = 0; i < count; ++i) x[i] = gelu_of(x[i]);
}

// gelu(v) = v·Φ(v), gelu'(v) = Φ(v) + v·φ(v).
MINRNN_VECTOR_CLONES
void bias_gelu_with_grad(float* x, const float* bias, float* y, int64_t rows, int64_t width) {
  for (int64_t r = 0; r < rows; ++r) {
    float* xr = x + r * width;
    float* yr = y + r * width;
    for (int64_t i = 0; i < width; ++i) {
      const float v = xr[i] + bias[i];
      const float cdf = 0.5f * (1.0f + erf_approx(v * 0.70710678118654752f));
      const float pdf = 0.39894228040143268f * cpu_expf(-0.5f * v * v);
      yr[i] = v * cdf;
      xr[i] = cdf + v * pdf;
    }
  }
}

MINRNN_VECTOR_CLONES
void gelu_backward(const float* grad_of_gelu, float* g, int64_t rows, int64_t width,
                   float* column_sums) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* dr = grad_of_gelu + r * width;
    float* gr = g + r * width;
    for (int64_t i = 0; i < width; ++i) gr[i] *= dr[i];
    if (column_sums) {
      for (int64_t i = 0; i < width; ++i) column_sums[i] += gr[i];
    }
  }
}

MINRNN_VECTOR_CLONES
void silu(float* x, int64_t count) {
  for (int64_t i = 0; i < count; ++i) x[i] = x[i] * sigmoid(x[i]);
}

void tanh_inplace(float* x, int64_t count) {
  for (int64_t i = 0; i < count; ++i) x[i] = tanh_approx(x[i]);
}

MINRNN_VECTOR_CLONES
void add(float* y, const float* x, int64_t count) {
  for (int64_t i = 0; i < count; ++i) y[i] += x[i];
}

}  // namespace minrnn::core::cpu
