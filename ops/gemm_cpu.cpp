#include "ops/gemm_cpu.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>

#include "io/env_switch.h"
#include "kernels/cpu/gemm_tiles.h"
#include "ops/parallel_tasks.h"

#if defined(__x86_64__) && defined(__GNUC__)
#define MINRNN_GEMM_X86 1
#endif

namespace minrnn::core {
namespace {

#ifdef MINRNN_GEMM_X86

using cpu::kGemmPanel;

// B's panels, packed over the threads: a weight of ≤ 64 K values on one (a parallel region would
// cost more than the copy).
void pack_panels(const float* b, int64_t depth, int64_t n, int64_t sd, int64_t sj, float* out) {
  const int64_t panels_per_task =
      std::max<int64_t>(1, 65536 / std::max<int64_t>(1, depth * kGemmPanel));
  parallel_ranges(n / kGemmPanel, panels_per_task, [&](int64_t p0, int64_t p1) {
    cpu::pack_gemm_panels(b, depth, sd, sj, p0, p1, out);
  });
}

// c (m, n) = [bias +] a (m, depth) · B, B packed by pack_panels; blocks of rows are the tasks.
void gemm_packed(int64_t m, int64_t n, int64_t depth, const float* a, const float* panels,
                 const float* bias, float* c) {
  parallel_ranges(m, cpu::kGemmBlockRows, [&](int64_t r0, int64_t r1) {
    cpu::gemm_packed_rows(r0, r1, n, depth, a, panels, bias, c);
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
  return cpu::gemm_tiles_supported();
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
         x.size(-1) == w.size(1) && w.size(0) % kGemmPanel == 0 && w.size(1) % kGemmPanel == 0;
#else
  (void)x, (void)w;
  return false;
#endif
}

torch::Tensor gemm_cpu_linear(const torch::Tensor& x, const torch::Tensor& w,
                              const torch::Tensor& bias) {
#ifdef MINRNN_GEMM_X86
  const int64_t n = w.size(0), k = w.size(-1);
  if (!gemm_cpu_enabled() || !takes(x) || !takes(w) || x.size(1) != k || n % kGemmPanel != 0 ||
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
  if (!gemm_cpu_enabled() || !takes(dy) || !takes(w) || dy.size(1) != n || k % kGemmPanel != 0) {
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
