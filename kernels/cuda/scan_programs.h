// Which scan kernel runs a shape, and the one place the kernels are put together from their
// arguments: the GPU launcher (kernels/cuda/scan.cu) and the host emulator's tests
// (tests/kernels/scan_emulated_test.cpp) both go through it, so the tests run what the GPU runs.
#pragma once
#include "kernels/cuda/scan_per_channel.h"
#include "kernels/cuda/scan_tiled.h"

namespace minrnn::core::grid {

enum class ScanKernel {
  kAuto,     // choose_scan_kernel
  kSimple,   // kernels/cuda/scan_per_channel.h: one thread per channel
  kTiled8,   // scan_tiled.h, 8 channels per block: 32 threads per channel
  kTiled32,  // scan_tiled.h, 32 channels per block: 8 threads per channel
};

inline const char* kernel_name(ScanKernel k) {
  switch (k) {
    case ScanKernel::kSimple:
      return "simple";
    case ScanKernel::kTiled8:
      return "tiled8";
    case ScanKernel::kTiled32:
      return "tiled32";
    default:
      return "auto";
  }
}

// The kernel kernel_name gives `name`, into *kernel; false for a name it gives none.
inline bool scan_kernel_named(const char* name, ScanKernel* kernel) {
  for (ScanKernel k :
       {ScanKernel::kAuto, ScanKernel::kSimple, ScanKernel::kTiled8, ScanKernel::kTiled32}) {
    const char* known = kernel_name(k);
    int i = 0;
    while (known[i] != '\0' && known[i] == name[i]) ++i;
    if (known[i] == '\0' && name[i] == '\0') {
      *kernel = k;
      return true;
    }
  }
  return false;
}

// The simple kernel moves the same bytes as the tiled ones with no barrier or shuffle, but keeps
// only B·D threads in flight, each with a chunk of steps' loads outstanding (kSimpleChunk; one
// step's before the fifteenth session, when these thresholds were measured): it wins when B·D alone
// fills the GPU (`resident_threads` = SMs × resident threads per SM), or when T is too short to
// fill two tiles. Otherwise the tiled kernel: tiled8 (32 threads per channel, more loads in
// flight) only while B·D is small; tiled32 (8 threads per channel, fewer warp-scan steps and a
// busier carry) once its threads fill an eighth of the slots. That threshold is measured, not
// derived: on an H200 tiled8 led at B·D ≤ 2 k, the two tied at 4 k, tiled32 led by 12–16% from
// 8 k up (docs/core.md, "Which kernel").
inline ScanKernel choose_scan_kernel(int64_t B, int64_t L, int64_t D, int64_t resident_threads) {
  const int64_t channels = B * D;
  if (L < 2 * TiledGrid<float, DeviceMemory, 32>::kTile || channels >= resident_threads) {
    return ScanKernel::kSimple;
  }
  return channels * 8 * 8 >= resident_threads ? ScanKernel::kTiled32 : ScanKernel::kTiled8;
}

// launch(kernel) with the forward kernel `kind` names (not kAuto); Mem: the memory of the caller.
template <typename T, typename A, typename Mem, typename Coef, typename In, typename Out,
          typename Launch>
void with_forward_kernel(ScanKernel kind, int64_t B, int64_t L, int64_t D, const Coef& coef, In h0,
                         Out h, Out h_last, Launch&& launch) {
  switch (L > 0 ? kind : ScanKernel::kSimple) {  // no tile to carry h0 to h_last through
    case ScanKernel::kTiled8:
      launch(TiledForward<T, A, Coef, Mem, 8>{{B, L, D}, coef, h0, h, h_last});
      break;
    case ScanKernel::kTiled32:
      launch(TiledForward<T, A, Coef, Mem, 32>{{B, L, D}, coef, h0, h, h_last});
      break;
    default:
      launch(SimpleForward<T, A, Coef, Mem>{{B, L, D}, coef, h0, h, h_last});
  }
}

template <typename T, typename A, typename Mem, typename Coef, typename In, typename Out,
          typename Launch>
void with_backward_kernel(ScanKernel kind, int64_t B, int64_t L, int64_t D, const Coef& coef, In h,
                          In h0, In grad_h, In grad_last, Out d_first, Out d_second, Out dh0,
                          Launch&& launch) {
  switch (L > 0 ? kind : ScanKernel::kSimple) {
    case ScanKernel::kTiled8:
      launch(TiledBackward<T, A, Coef, Mem, 8>{
          {B, L, D}, coef, h, h0, grad_h, grad_last, d_first, d_second, dh0});
      break;
    case ScanKernel::kTiled32:
      launch(TiledBackward<T, A, Coef, Mem, 32>{
          {B, L, D}, coef, h, h0, grad_h, grad_last, d_first, d_second, dh0});
      break;
    default:
      launch(SimpleBackward<T, A, Coef, Mem>{
          {B, L, D}, coef, h, h0, grad_h, grad_last, d_first, d_second, dh0});
  }
}

}  // namespace minrnn::core::grid
