// The AVX2 + FMA tiles of the CPU GEMM (kernels/cpu/gemm_tiles.h).
#include "kernels/cpu/gemm_tiles.h"

#include <algorithm>
#include <stdexcept>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define MINRNN_GEMM_X86 1
#define MINRNN_AVX2_FMA __attribute__((target("avx2,fma")))
#endif

namespace minrnn::core::cpu {
namespace {

constexpr int64_t kTileRows = 6;  // 12 accumulators of 8 floats: 6 rows × kGemmPanel columns
constexpr int64_t kPanel = kGemmPanel;
constexpr int64_t kBlockDepth = 256;  // the reduction in pieces whose panels fit in L2

#ifdef MINRNN_GEMM_X86

enum class Start { kZero, kBias, kAccumulate };

// c (rows × 16, row stride ldc) = start + a (rows × depth, row stride lda) · panel (depth × 16).
// Twelve named accumulators, not an array: GCC spilled an array of __m256 to the stack on every
// step (half the speed).
template <int kRows, Start kStart>
MINRNN_AVX2_FMA void tile(int64_t depth, const float* a, int64_t lda, const float* panel,
                          const float* bias, float* c, int64_t ldc) {
  __m256 c00, c01, c10, c11, c20, c21, c30, c31, c40, c41, c50, c51;
  c00 = c01 = c10 = c11 = c20 = c21 = c30 = c31 = c40 = c41 = c50 = c51 = _mm256_setzero_ps();
#define MINRNN_START(r)                                  \
  if constexpr (kRows > r) {                             \
    if constexpr (kStart == Start::kBias) {              \
      c##r##0 = _mm256_loadu_ps(bias);                   \
      c##r##1 = _mm256_loadu_ps(bias + 8);               \
    } else if constexpr (kStart == Start::kAccumulate) { \
      c##r##0 = _mm256_loadu_ps(c + r * ldc);            \
      c##r##1 = _mm256_loadu_ps(c + r * ldc + 8);        \
    }                                                    \
  }
  MINRNN_START(0);
  MINRNN_START(1);
  MINRNN_START(2);
  MINRNN_START(3);
  MINRNN_START(4);
  MINRNN_START(5);
#undef MINRNN_START
  for (int64_t d = 0; d < depth; ++d) {
    const __m256 b0 = _mm256_loadu_ps(panel + d * kPanel);
    const __m256 b1 = _mm256_loadu_ps(panel + d * kPanel + 8);
#define MINRNN_STEP(r)                                      \
  if constexpr (kRows > r) {                                \
    const __m256 ar = _mm256_broadcast_ss(a + r * lda + d); \
    c##r##0 = _mm256_fmadd_ps(ar, b0, c##r##0);             \
    c##r##1 = _mm256_fmadd_ps(ar, b1, c##r##1);             \
  }
    MINRNN_STEP(0);
    MINRNN_STEP(1);
    MINRNN_STEP(2);
    MINRNN_STEP(3);
    MINRNN_STEP(4);
    MINRNN_STEP(5);
#undef MINRNN_STEP
  }
#define MINRNN_STORE(r)                         \
  if constexpr (kRows > r) {                    \
    _mm256_storeu_ps(c + r * ldc, c##r##0);     \
    _mm256_storeu_ps(c + r * ldc + 8, c##r##1); \
  }
  MINRNN_STORE(0);
  MINRNN_STORE(1);
  MINRNN_STORE(2);
  MINRNN_STORE(3);
  MINRNN_STORE(4);
  MINRNN_STORE(5);
#undef MINRNN_STORE
}

template <Start kStart>
void tile_of(int64_t rows, int64_t depth, const float* a, int64_t lda, const float* panel,
             const float* bias, float* c, int64_t ldc) {
  switch (rows) {
    case 6:
      return tile<6, kStart>(depth, a, lda, panel, bias, c, ldc);
    case 5:
      return tile<5, kStart>(depth, a, lda, panel, bias, c, ldc);
    case 4:
      return tile<4, kStart>(depth, a, lda, panel, bias, c, ldc);
    case 3:
      return tile<3, kStart>(depth, a, lda, panel, bias, c, ldc);
    case 2:
      return tile<2, kStart>(depth, a, lda, panel, bias, c, ldc);
    default:
      return tile<1, kStart>(depth, a, lda, panel, bias, c, ldc);
  }
}

#endif  // MINRNN_GEMM_X86

}  // namespace

bool gemm_tiles_supported() {
#ifdef MINRNN_GEMM_X86
  static const bool supported = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return supported;
#else
  return false;
#endif
}

void pack_gemm_panels(const float* b, int64_t depth, int64_t sd, int64_t sj, int64_t p0, int64_t p1,
                      float* out) {
  for (int64_t p = p0; p < p1; ++p) {
    float* panel = out + p * depth * kPanel;
    for (int64_t d = 0; d < depth; ++d) {
      for (int64_t jj = 0; jj < kPanel; ++jj)
        panel[d * kPanel + jj] = b[d * sd + (p * kPanel + jj) * sj];
    }
  }
}

void gemm_packed_rows(int64_t r0, int64_t r1, int64_t n, int64_t depth, const float* a,
                      const float* panels, const float* bias, float* c) {
#ifdef MINRNN_GEMM_X86
  // Each 16-column panel sweeps the block's row tiles, a depth piece at a time: the tiles' rows of
  // a stay in L1/L2 across the panels.
  for (int64_t d0 = 0; d0 < depth; d0 += kBlockDepth) {
    const int64_t dn = std::min(kBlockDepth, depth - d0);
    for (int64_t p = 0; p < n / kPanel; ++p) {
      const float* panel = panels + p * depth * kPanel + d0 * kPanel;
      for (int64_t r = r0; r < r1; r += kTileRows) {
        const int64_t rows = std::min(kTileRows, r1 - r);
        const float* ar = a + r * depth + d0;
        float* cr = c + r * n + p * kPanel;
        if (d0 > 0) {
          tile_of<Start::kAccumulate>(rows, dn, ar, depth, panel, nullptr, cr, n);
        } else if (bias) {
          tile_of<Start::kBias>(rows, dn, ar, depth, panel, bias + p * kPanel, cr, n);
        } else {
          tile_of<Start::kZero>(rows, dn, ar, depth, panel, nullptr, cr, n);
        }
      }
    }
  }
#else
  (void)r0, (void)r1, (void)n, (void)depth, (void)a, (void)panels, (void)bias, (void)c;
  throw std::logic_error("gemm_packed_rows: built without AVX2 tiles (gemm_tiles_supported)");
#endif
}

}  // namespace minrnn::core::cpu
