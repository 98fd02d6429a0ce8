#include "ops/gemm_cpu.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>

#include "io/env_switch.h"
#include "ops/parallel_tasks.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define MINRNN_GEMM_X86 1
#define MINRNN_AVX2_FMA __attribute__((target("avx2,fma")))
#endif

namespace minrnn::core {
namespace {

constexpr int64_t kTileRows = 6, kPanel = 16;  // 12 accumulators of 8 floats: 6 rows × 16 columns
constexpr int64_t kBlockRows = 96;             // rows per task: their 6 × k tiles stay in L1/L2
constexpr int64_t kBlockDepth = 256;           // the reduction in pieces whose panels fit in L2

#ifdef MINRNN_GEMM_X86

// Packs B (depth, n), element (d, j) at b[d · sd + j · sj], into n/16 panels of (depth, 16)
// row-major, one after another: the kernel then reads 16 columns of one step d as two
// contiguous vectors.
// A weight of ≤ 64 K values packs on one thread: a parallel region would cost more than the copy.
void pack_panels(const float* b, int64_t depth, int64_t n, int64_t sd, int64_t sj, float* out) {
  const int64_t panels_per_task =
      std::max<int64_t>(1, 65536 / std::max<int64_t>(1, depth * kPanel));
  parallel_ranges(n / kPanel, panels_per_task, [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p) {
      float* panel = out + p * depth * kPanel;
      for (int64_t d = 0; d < depth; ++d) {
        for (int64_t jj = 0; jj < kPanel; ++jj) {
          panel[d * kPanel + jj] = b[d * sd + (p * kPanel + jj) * sj];
        }
      }
    }
  });
}

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

// c (m, n) = [bias +] a (m, depth) · B, B packed by pack_panels. Blocks of rows are the tasks;
// within one, each 16-column panel sweeps the block's row tiles, a depth piece at a time.
void gemm_packed(int64_t m, int64_t n, int64_t depth, const float* a, const float* panels,
                 const float* bias, float* c) {
  parallel_ranges(m, kBlockRows, [&](int64_t r0, int64_t r1) {
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
  });
}

bool cpu_float(const torch::Tensor& t) {
  return t.device().is_cpu() && t.scalar_type() == torch::kFloat;
}
bool takes(const torch::Tensor& t) {
  return cpu_float(t) && t.dim() == 2 && t.is_contiguous();
}

#endif  // MINRNN_GEMM_X86

}  // namespace

namespace {
std::atomic<GemmCpuChoice> g_choice{GemmCpuChoice::kDefault};
}  // namespace

bool gemm_cpu_supported() {
#ifdef MINRNN_GEMM_X86
  static const bool supported = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return supported;
#else
  return false;
#endif
}

void choose_gemm_cpu(GemmCpuChoice choice) {
  g_choice = choice;
}

bool gemm_cpu_enabled() {
  const GemmCpuChoice choice = g_choice;
  if (choice != GemmCpuChoice::kDefault)
    return choice == GemmCpuChoice::kOn && gemm_cpu_supported();
#ifdef MINRNN_GEMM_X86
  static const bool enabled = [] {
    if (io::env_switch("MINRNN_NO_GEMM_CPU", false, "0", "1",
                       "1 (LibTorch's GEMM on the CPU) or 0 (the AVX2 tiles where they serve)"))
      return false;
    return gemm_cpu_supported() && !__builtin_cpu_supports("avx512f");
  }();
  return enabled;
#else
  return false;
#endif
}

bool gemm_cpu_fits_linear(const torch::Tensor& x, const torch::Tensor& w) {
#ifdef MINRNN_GEMM_X86
  return gemm_cpu_enabled() && cpu_float(x) && cpu_float(w) && w.dim() == 2 && x.dim() >= 1 &&
         x.size(-1) == w.size(1) && w.size(0) % kPanel == 0 && w.size(1) % kPanel == 0;
#else
  (void)x, (void)w;
  return false;
#endif
}

torch::Tensor gemm_cpu_linear(const torch::Tensor& x, const torch::Tensor& w,
                              const torch::Tensor& bias) {
#ifdef MINRNN_GEMM_X86
  const int64_t n = w.size(0), k = w.size(-1);
  if (!gemm_cpu_enabled() || !takes(x) || !takes(w) || x.size(1) != k || n % kPanel != 0 ||
      (bias.defined() && !(cpu_float(bias) && bias.is_contiguous() && bias.numel() == n))) {
    return {};
  }
  torch::Tensor panels = torch::empty({n * k}, x.options());
  pack_panels(w.data_ptr<float>(), k, n, /*sd=*/1, /*sj=*/k, panels.data_ptr<float>());  // wᵀ
  torch::Tensor y = torch::empty({x.size(0), n}, x.options());
  gemm_packed(x.size(0), n, k, x.data_ptr<float>(), panels.data_ptr<float>(),
              bias.defined() ? bias.data_ptr<float>() : nullptr, y.data_ptr<float>());
  return y;
#else
  (void)x, (void)w, (void)bias;
  return {};
#endif
}

torch::Tensor gemm_cpu_input_grad(const torch::Tensor& dy, const torch::Tensor& w) {
#ifdef MINRNN_GEMM_X86
  const int64_t n = w.size(0), k = w.size(-1);
  if (!gemm_cpu_enabled() || !takes(dy) || !takes(w) || dy.size(1) != n || k % kPanel != 0) {
    return {};
  }
  torch::Tensor panels = torch::empty({n * k}, dy.options());
  pack_panels(w.data_ptr<float>(), n, k, /*sd=*/k, /*sj=*/1, panels.data_ptr<float>());  // w
  torch::Tensor dx = torch::empty({dy.size(0), k}, dy.options());
  gemm_packed(dy.size(0), k, n, dy.data_ptr<float>(), panels.data_ptr<float>(), nullptr,
              dx.data_ptr<float>());
  return dx;
#else
  (void)dy, (void)w;
  return {};
#endif
}

torch::Tensor linear_rows(const torch::Tensor& x, const torch::Tensor& w,
                          const torch::Tensor& bias) {
  if (torch::Tensor y = gemm_cpu_linear(x, w, bias); y.defined()) return y;
  return bias.defined() ? torch::addmm(bias, x, w.t()) : x.mm(w.t());
}

torch::Tensor input_grad_rows(const torch::Tensor& dy, const torch::Tensor& w) {
  if (torch::Tensor dx = gemm_cpu_input_grad(dy, w); dx.defined()) return dx;
  return dy.mm(w);
}

}  // namespace minrnn::core
